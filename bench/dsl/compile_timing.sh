# Sourced by the compile measurements (measure_compile.sh,
# measure_hana_view.sh): runs one compile command under /usr/bin/time -v
# and sets $seconds (wall clock), $cpu (user + system seconds) and $mib
# (peak resident memory). Stops the script, showing time's report, when the
# compile fails. $work: a scratch folder.
time_compile() {
  /usr/bin/time -v "$@" 2> "$work/time.txt" > /dev/null || { head -30 "$work/time.txt"; exit 1; }
  seconds=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  user=$(sed -n 's/.*User time (seconds): //p' "$work/time.txt")
  sys=$(sed -n 's/.*System time (seconds): //p' "$work/time.txt")
  cpu=$(echo "$user + $sys" | bc)
  mib=$((kib / 1024))
}
