#!/bin/sh
# Programs written against StarPU 1.3's documented scheduling API (by default user_sched.c, an
# application's policy; sched_tree.c and modular_dummy.c: trees of scheduling components) built
# unchanged with `pkg-config starpu-1.3` against MPC and against Debian's StarPU, and run with 1
# and 2 workers on both: each run must print its OK line ("PROGRAM: ... on N workers ...: OK").
# Usage: user_sched.sh SRC_DIR SCRATCH_DIR MPC_PKGCONFIG_DIR MPC_LIB_DIR [PROGRAM...]
# Exit 77 (skip) when Debian's StarPU is not installed, after checking MPC's side.
set -eu
src=$1 scratch=$2 mpc_pc=$3 mpc_lib=$4
shift 4
progs=user_sched
[ $# -eq 0 ] || progs=$*
cc=${CC:-cc}
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "user_sched.sh: FAILED: $*" >&2; exit 1; }
# run SIDE BINARY PROGRAM ENV...: runs it with 1 and 2 workers, checking the OK line.
run() {
  side=$1 bin=$2 prog=$3
  shift 3
  for n in 1 2; do
    out=$(env "$@" STARPU_NCPU=$n "$bin") || fail "$side, $prog, $n workers: exit $?: $out"
    echo "$out" | grep -q "$prog: .* on $n workers .*: OK" || fail "$side, $prog, $n workers printed: $out"
    echo "$side: $out"
  done
}
flags=$(PKG_CONFIG_PATH=$mpc_pc pkg-config --cflags --libs starpu-1.3) || fail "no starpu-1.3.pc in $mpc_pc"
for prog in $progs; do
  # shellcheck disable=SC2086  # flags are words
  "$cc" -std=gnu11 -Wall -Wextra -Werror -o "$scratch/mpc-$prog" "$src/$prog.c" $flags -lpthread ||
    fail "$prog.c does not build against MPC's starpu-1.3"
  run MPC "$scratch/mpc-$prog" "$prog" LD_LIBRARY_PATH="$mpc_lib"
done
if ! pkg-config --exists starpu-1.3 2>/dev/null; then
  echo "SKIP: Debian's StarPU is not installed (apt-get install libstarpu-dev); checked MPC's side only"
  exit 77
fi
for prog in $progs; do
  # shellcheck disable=SC2046
  "$cc" -std=gnu11 -Wall -Wextra -o "$scratch/starpu-$prog" "$src/$prog.c" $(pkg-config --cflags --libs starpu-1.3) -lpthread ||
    fail "$prog.c does not build against StarPU"
  # SCHED_TREE_NO_COMPOSED: StarPU 1.3.10's composed components of two or more pairs crash when a
  # child is connected (sched_tree.c checks only the one-pair recipe there).
  run StarPU "$scratch/starpu-$prog" "$prog" HOME="$scratch" STARPU_HOME="$scratch" STARPU_SILENT=1 STARPU_NOPENCL=0 \
    SCHED_TREE_NO_COMPOSED=1
done
echo "user_sched.sh: OK"
