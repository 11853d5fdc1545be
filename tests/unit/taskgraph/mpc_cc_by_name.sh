#!/bin/sh
# StarPU programs that include StarPU's companion headers by name (<starpu_data_filters.h>,
# <starpu_sched_component.h>, ...) built with mpc_cc and mpc_cxx as they are, then run directly
# with 1 and 2 workers: each must print its OK line ("PROGRAM: ... OK"). PROGRAM.c is built
# with mpc_cc, and also with mpc_cxx (as C++) when named PROGRAM+cxx.
# Usage: mpc_cc_by_name.sh TOOLS_DIR SRC_DIR SCRATCH_DIR PROGRAM[+cxx]...
set -eu
tools=$1 src=$2 scratch=$3
shift 3
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "mpc_cc_by_name.sh: FAILED: $*" >&2; exit 1; }
for arg do
  prog=${arg%+cxx}
  wrappers=mpc_cc
  [ "$prog" = "$arg" ] || wrappers="mpc_cc mpc_cxx"
  for wrapper in $wrappers; do
    if [ "$wrapper" = mpc_cxx ]; then
      set -- -x c++  # the same source as C++ (mpc_cxx's include path)
    else
      set -- -std=gnu11
    fi
    "$tools/$wrapper" "$@" -Wall -Wextra -Werror -o "$scratch/$prog.$wrapper" "$src/$prog.c" ||
      fail "$prog.c does not build with $wrapper"
    for n in 1 2; do
      out=$(STARPU_NCPU=$n "$scratch/$prog.$wrapper") || fail "$prog ($wrapper), $n workers: exit $?: $out"
      echo "$out" | grep -q "^$prog: .*OK" || fail "$prog ($wrapper), $n workers printed: $out"
      echo "$wrapper, $n workers: $out"
    done
  done
done
echo "mpc_cc_by_name.sh: OK"
