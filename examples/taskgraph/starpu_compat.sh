#!/bin/sh
# Source compatibility of MPC's StarPU 1.3 API: every example of this folder, unchanged, is
#  1. built with `pkg-config starpu-1.3` against MPC (the build tree's starpu-1.3.pc) and run;
#  2. built with mpc_cc (privatized, <starpu.h> through include/starpu.h) and run directly and
#     as 2 ranks of mpc_run, each rank calling starpu_init/starpu_shutdown on the shared runtime;
#  3. built against Debian's StarPU (libstarpu-dev) and run, the reference the sources follow.
# Usage: starpu_compat.sh SRC_DIR SCRATCH_DIR MPC_PKGCONFIG_DIR MPC_LIB_DIR MPC_CC MPC_RUN
# Exit 77 (skip) when Debian's StarPU is not installed, after checking MPC's side.
set -eu
src=$1 scratch=$2 mpc_pc=$3 mpc_lib=$4 mpc_cc=$5 mpc_run=$6
cc=${CC:-cc}
rm -rf "$scratch"
mkdir -p "$scratch/mpc" "$scratch/starpu"
fail() { echo "starpu_compat: FAILED: $*" >&2; exit 1; }
progs="vector_scal task_graph cholesky lu qr data_access"
# The BLAS variants (dense.h) when OpenBLAS and LAPACKE are installed, as CMake builds them.
if echo '#include <cblas.h>
#include <lapacke.h>
int main(void) { return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 0, 0, 0, 1) + (int)cblas_dnrm2(0, 0, 1); }' |
  "$cc" -x c - -o "$scratch/blas-probe" -llapacke -lopenblas 2>/dev/null; then
  progs="$progs cholesky_blas lu_blas qr_blas"
else
  echo "starpu_compat: OpenBLAS or LAPACKE missing (libopenblas-dev liblapacke-dev): the *_blas examples are not checked"
fi
libs() { case $1 in *_blas) echo "-llapacke -lopenblas -lm" ;; *) echo "-lm" ;; esac; }

for prog in $progs; do
  flags=$(PKG_CONFIG_PATH=$mpc_pc pkg-config --cflags --libs starpu-1.3) || fail "no starpu-1.3.pc in $mpc_pc"
  # shellcheck disable=SC2086,SC2046  # flags and libraries are words
  "$cc" -std=gnu11 -Wall -Wextra -Werror -o "$scratch/mpc/$prog" "$src/$prog.c" $flags $(libs "$prog") ||
    fail "$prog.c does not build against MPC's starpu-1.3"
  out=$(LD_LIBRARY_PATH=$mpc_lib STARPU_NCPU=2 "$scratch/mpc/$prog") || fail "$prog (MPC) exited with $?"
  echo "$out" | grep -q "$prog: .*: OK" || fail "$prog (MPC) printed: $out"
  echo "MPC:    $out"
  # shellcheck disable=SC2046  # libraries are words
  "$mpc_cc" -o "$scratch/mpc/$prog.mpc_cc" "$src/$prog.c" $(libs "$prog") || fail "$prog.c does not build with mpc_cc"
  out=$("$scratch/mpc/$prog.mpc_cc") || fail "$prog (mpc_cc) exited with $?"
  echo "$out" | grep -q "$prog: .*: OK" || fail "$prog (mpc_cc) printed: $out"
  out=$("$mpc_run" -n 2 -c 2 "$scratch/mpc/$prog.mpc_cc") || fail "$prog (mpc_cc, mpc_run -n 2) exited with $?"
  [ "$(echo "$out" | grep -c "$prog: .*: OK")" = 2 ] || fail "$prog (mpc_run -n 2) printed: $out"
  echo "mpc_cc, 2 ranks: OK"
done

if ! pkg-config --exists starpu-1.3 2>/dev/null; then
  echo "SKIP: Debian's StarPU is not installed (apt-get install libstarpu-dev); checked MPC's side only"
  exit 77
fi
for prog in $progs; do
  # shellcheck disable=SC2046
  "$cc" -std=gnu11 -Wall -Wextra -o "$scratch/starpu/$prog" "$src/$prog.c" $(pkg-config --cflags --libs starpu-1.3) $(libs "$prog") ||
    fail "$prog.c does not build against StarPU"
  # StarPU 1.3 reads ~/.starpu for its models and bus calibration: keep it in the scratch folder.
  out=$(HOME=$scratch STARPU_HOME=$scratch STARPU_SILENT=1 STARPU_NCPU=2 STARPU_NOPENCL=0 "$scratch/starpu/$prog") ||
    fail "$prog (StarPU) exited with $?"
  echo "$out" | grep -q "$prog: .*: OK" || fail "$prog (StarPU) printed: $out"
  echo "StarPU: $out"
done
echo "starpu_compat: OK"
