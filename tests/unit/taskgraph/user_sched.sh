#!/bin/sh
# An application's scheduling policy (user_sched.c, StarPU 1.3's documented API) built
# unchanged with `pkg-config starpu-1.3` against MPC and against Debian's StarPU, and run with 1
# and 2 workers on both: each run must print its OK line.
# Usage: user_sched.sh SRC_DIR SCRATCH_DIR MPC_PKGCONFIG_DIR MPC_LIB_DIR
# Exit 77 (skip) when Debian's StarPU is not installed, after checking MPC's side.
set -eu
src=$1 scratch=$2 mpc_pc=$3 mpc_lib=$4
cc=${CC:-cc}
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "user_sched.sh: FAILED: $*" >&2; exit 1; }
flags=$(PKG_CONFIG_PATH=$mpc_pc pkg-config --cflags --libs starpu-1.3) || fail "no starpu-1.3.pc in $mpc_pc"
# shellcheck disable=SC2086  # flags are words
"$cc" -std=gnu11 -Wall -Wextra -Werror -o "$scratch/mpc" "$src/user_sched.c" $flags -lpthread ||
  fail "user_sched.c does not build against MPC's starpu-1.3"
for n in 1 2; do
  out=$(LD_LIBRARY_PATH=$mpc_lib STARPU_NCPU=$n "$scratch/mpc") || fail "MPC, $n workers: exit $?: $out"
  echo "$out" | grep -q "user_sched: .* on $n workers .*: OK" || fail "MPC, $n workers printed: $out"
  echo "MPC:    $out"
done
if ! pkg-config --exists starpu-1.3 2>/dev/null; then
  echo "SKIP: Debian's StarPU is not installed (apt-get install libstarpu-dev); checked MPC's side only"
  exit 77
fi
# shellcheck disable=SC2046
"$cc" -std=gnu11 -Wall -Wextra -o "$scratch/starpu" "$src/user_sched.c" $(pkg-config --cflags --libs starpu-1.3) -lpthread ||
  fail "user_sched.c does not build against StarPU"
for n in 1 2; do
  out=$(HOME=$scratch STARPU_HOME=$scratch STARPU_SILENT=1 STARPU_NCPU=$n STARPU_NOPENCL=0 "$scratch/starpu") ||
    fail "StarPU, $n workers: exit $?: $out"
  echo "$out" | grep -q "user_sched: .* on $n workers .*: OK" || fail "StarPU, $n workers printed: $out"
  echo "StarPU: $out"
done
echo "user_sched.sh: OK"
