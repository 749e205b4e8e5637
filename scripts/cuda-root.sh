#!/bin/sh
# Prints the CUDA toolkit's root directory. Asks nvcc itself (its TOP), so a
# wrapper script on PATH (say /usr/local/bin/nvcc exec'ing the real one) still
# leads to the toolkit's lib64/ and include/; falls back to CUDA_PATH,
# CUDA_HOME and /usr/local/cuda. Usage: cuda-root.sh [path-to-nvcc]
nvcc=${1:-nvcc}
top=$("$nvcc" --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -n 1)
for dir in "$top" "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
  if [ -n "$dir" ] && [ -d "$dir/include" ] && [ -f "$dir/include/cuda_runtime.h" ]; then
    (cd "$dir" && pwd -P)
    exit 0
  fi
done
echo "cuda-root.sh: no CUDA toolkit found (nvcc: $nvcc)" >&2
exit 1
