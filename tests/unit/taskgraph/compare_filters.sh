#!/bin/sh
# The standard filters' parts (sizes and offsets) of MPC against Debian's StarPU 1.3:
# filters_compare.c built and run with both prints the same lines (or PROGRAM.c: ops_compare.c
# for the built-in interfaces' ops tables).
# Usage: compare_filters.sh SRC_DIR SCRATCH_DIR MPC_PKGCONFIG_DIR MPC_LIB_DIR [PROGRAM]
# Exit 77 (skip) when libstarpu-dev is not installed.
set -eu
src=$1 scratch=$2 mpc_pc=$3 mpc_lib=$4 prog=${5:-filters_compare}
cc=${CC:-cc}
if ! pkg-config --exists starpu-1.3 2>/dev/null; then
  echo "SKIP: Debian's StarPU is not installed (apt-get install libstarpu-dev)"
  exit 77
fi
rm -rf "$scratch" && mkdir -p "$scratch"
# shellcheck disable=SC2046
"$cc" -o "$scratch/mpc" "$src/$prog.c" $(PKG_CONFIG_PATH=$mpc_pc pkg-config --cflags --libs starpu-1.3)
# shellcheck disable=SC2046
"$cc" -o "$scratch/starpu" "$src/$prog.c" $(pkg-config --cflags --libs starpu-1.3)
LD_LIBRARY_PATH=$mpc_lib STARPU_NCPU=1 "$scratch/mpc" >"$scratch/mpc.txt"
HOME=$scratch STARPU_HOME=$scratch STARPU_SILENT=1 STARPU_NCPU=1 STARPU_NOPENCL=0 "$scratch/starpu" >"$scratch/starpu.txt"
if ! diff "$scratch/starpu.txt" "$scratch/mpc.txt"; then
  echo "compare_filters: FAILED: the lines above differ (< StarPU, > MPC)"
  exit 1
fi
echo "compare_filters: $(wc -l <"$scratch/mpc.txt") parts identical: OK"
