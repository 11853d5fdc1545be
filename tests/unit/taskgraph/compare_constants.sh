#!/bin/sh
# MPC's StarPU constants (access modes, task_insert keys, where bits, interface ids, perf-model
# types, limits) and interface layouts against Debian's StarPU 1.3: starpu_constants.c built
# with both prints the same lines. Usage: compare_constants.sh SRC_DIR SCRATCH_DIR
# Exit 77 (skip) when libstarpu-dev is not installed.
set -eu
src=$1 scratch=$2
cc=${CC:-cc}
if ! pkg-config --exists starpu-1.3 2>/dev/null; then
  echo "SKIP: Debian's StarPU is not installed (apt-get install libstarpu-dev)"
  exit 77
fi
rm -rf "$scratch" && mkdir -p "$scratch"
"$cc" -o "$scratch/mpc" "$src/starpu_constants.c" -I"$src/../../../include/starpu/1.3"
# shellcheck disable=SC2046
"$cc" -o "$scratch/starpu" "$src/starpu_constants.c" $(pkg-config --cflags starpu-1.3)
"$scratch/mpc" >"$scratch/mpc.txt"
"$scratch/starpu" >"$scratch/starpu.txt"
if ! diff "$scratch/starpu.txt" "$scratch/mpc.txt"; then
  echo "compare_constants: FAILED: the lines above differ (< StarPU, > MPC)"
  exit 1
fi
echo "compare_constants: $(wc -l <"$scratch/mpc.txt") values identical: OK"
