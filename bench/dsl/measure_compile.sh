#!/bin/sh
# Compile time and peak memory of generated DSL graphs (bench/dsl/gen_graph.py).
# usage: measure_compile.sh SOURCE_ROOT "SIZES" "SHAPES" "COMPILERS" REPEATS [decl|full]
#   e.g. measure_compile.sh . "128 512" "chain dag" "g++ nvcc" 2
# Prints one markdown row per run:
#   compiler | shape | what | nodes | wall s | user+sys s | peak MiB
set -eu
root=$1; sizes=$2; shapes=$3; compilers=$4; repeats=$5; what=${6:-full}
. "$(dirname "$0")/compile_timing.sh"
cuda=$(sh "$root/scripts/cuda-root.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for compiler in $compilers; do
  for shape in $shapes; do
    for nodes in $sizes; do
      if [ "$compiler" = nvcc ]; then
        src="$work/graph.cu"
        set -- nvcc -std=c++20 -O2 -gencode=arch=compute_90,code=sm_90 --expt-relaxed-constexpr \
          -I"$root/include" -I"$root/dsl" -c "$src" -o "$work/graph.o"
      else
        src="$work/graph.cpp"
        set -- g++ -std=c++20 -O2 -I"$root/include" -I"$root/dsl" -I"$cuda/include" -c "$src" -o "$work/graph.o"
      fi
      python3 "$root/bench/dsl/gen_graph.py" "$shape" "$nodes" "$src" 7 "$what"
      run=1
      while [ "$run" -le "$repeats" ]; do
        time_compile "$@"
        echo "| $compiler | $shape | $what | $nodes | $seconds | $cpu | $mib |"
        run=$((run + 1))
      done
    done
  done
done
