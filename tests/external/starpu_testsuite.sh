#!/usr/bin/env bash
# tests/external/starpu_testsuite.sh [BUILD]: StarPU 1.3.10's own test suite (tests/ of Debian's
# source package `starpu`: the programs its `make check` builds on a CPU-only machine), compiled
# unchanged with BUILD/tools/mpc_cc (default: build) and, when Debian's StarPU is installed
# (libstarpu-dev), with it too, from the same source and flags. Each program runs with
# STARPU_NCPU=2 under a timeout, as StarPU's loader runs it (exit 0: pass, 77: skipped).
# Prints one line per program that did not pass with ours, either expected (the list below,
# with the reason) or NEW, then the counts; exits 1 when a failure is NEW, else 0.
#
#   STARPU_TESTS="main/* datawizard/*"  shell patterns over the program names (default: all)
#   STARPU_TEST_TIMEOUT=60              seconds per run
#   STARPU_SRC_TARBALL=...              the source instead of `apt-get source --download-only`
#   STARPU_TEST_JOBS=2                  programs built and run at once
#
# The tests include two of StarPU's private headers, <common/config.h> (configure's output) and
# <common/utils.h>; the first is written here (the configure answers the tests look at), the
# second is used from the tarball's src/. A test that includes any other private header (core/,
# datawizard/, sched_policies/...) tests StarPU's internals, not its API, and is reported as such.
#
# Not part of ctest: the source comes from `apt-get source`, which needs a deb-src entry (see
# benchmarks/hpcc/run.sh for the line to add). The tests are StarPU's (LGPL), used from their
# tarball, never copied into this repository. Results: docs/taskgraph.md ("StarPU's test suite").
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
mpc_cc=$build/tools/mpc_cc
work=$build/starpu-testsuite
timeout_s=${STARPU_TEST_TIMEOUT:-60}
jobs=${STARPU_TEST_JOBS:-2}
[[ -x $mpc_cc ]] || { echo "no $mpc_cc (build the project first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read StarPU's Makefile.am" >&2; exit 2; }
mkdir -p "$work/src" "$work/bin" "$work/shim/common"

tarball=${STARPU_SRC_TARBALL:-$(find "$work/src" "$build/starpu-examples/src" -maxdepth 1 -name 'starpu_*.orig.tar.gz' 2>/dev/null | head -n 1)}
if [[ -z $tarball ]]; then
    (cd "$work/src" && apt-get source --download-only starpu >"$work/fetch.log" 2>&1)
    tarball=$(find "$work/src" -maxdepth 1 -name 'starpu_*.orig.tar.gz' | head -n 1)
    [[ -n $tarball ]] || { echo "no StarPU source: apt-get source starpu needs a deb-src entry (log: $work/fetch.log)" >&2; exit 2; }
fi
src=$work/tree
if [[ ! -f $src/tests/Makefile.am ]]; then
    rm -rf "$src" && mkdir -p "$src" && tar xzf "$tarball" -C "$src" --strip-components=1 || exit 2
fi
have_starpu=0
pkg-config --exists starpu-1.3 2>/dev/null && have_starpu=1

# configure's answers that the tests read (HAVE_*: the C library's; STARPU_QUICK_CHECK: the
# smaller sizes of `make check` as Debian's build runs it).
cat >"$work/shim/common/config.h" <<'H'
#ifndef MPC_STARPU_TESTSUITE_CONFIG_H
#define MPC_STARPU_TESTSUITE_CONFIG_H
#define HAVE_GETRLIMIT 1
#define HAVE_SETENV 1
#define HAVE_UNSETENV 1
#define HAVE_MKDTEMP 1
#define HAVE_POSIX_MEMALIGN 1
#define STARPU_QUICK_CHECK 1
#endif
H
# StarPU's libstarpu exports one helper of its src/common/utils.c that the disk tests call:
# _starpu_mkdtemp (mkdtemp where the C library has it, which glibc does). Given to our builds
# the same way, as a test-harness shim (not part of MPC's library or API).
cat >"$work/shim/common/utils_shim.c" <<'C'
#include <stdlib.h>
char *_starpu_mkdtemp(char *tmpl) { return mkdtemp(tmpl); }
C

# The programs of tests/Makefile.am's myPROGRAMS on a CPU-only, non-simgrid build, each with its
# C/C++ sources (CUDA and OpenCL ones left out, as configure leaves them out without a device).
python3 - "$src/tests/Makefile.am" >"$work/programs.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
off = {"STARPU_USE_CUDA", "STARPU_USE_OPENCL", "STARPU_SIMGRID", "STARPU_LONG_CHECK", "STARPU_HAVE_FC",
       "STARPU_SIMGRID_MC", "STARPU_USE_MPI_MASTER_SLAVE", "STARPU_HAVE_WINDOWS"}
stack, progs, sources = [], [], {}
def on(c):
    return (c[1:] in off) if c.startswith("!") else (c not in off)
for line in text.split("\n"):
    s = line.strip()
    if s.startswith("if "):
        stack.append(s[3:].strip()); continue
    if s == "else":
        c = stack.pop(); stack.append(c[1:] if c.startswith("!") else "!" + c); continue
    if s == "endif":
        stack.pop(); continue
    if not all(on(c) for c in stack):
        continue
    m = re.match(r"myPROGRAMS\s*\+?=\s*(.*)", s)
    if m:
        progs += m.group(1).split(); continue
    m = re.match(r"(\w+)_SOURCES\s*\+?=\s*(.*)", s)
    if m:
        sources.setdefault(m.group(1), []).extend(x for x in m.group(2).split() if x.endswith((".c", ".cpp")))
for p in progs:
    print(p + "|" + " ".join(sources.get(re.sub(r"\W", "_", p), [p + ".c"])))
PY

# Expected failures of ours: program pattern | reason. Everything else that fails is NEW.
expected='
helper/cusparse_init|cuSPARSE helpers need CUDA, which is not provided
'

run_one() {  # run_one FLAVOUR PROGRAM: prints ok, skip, timeout or rc=N
    local exe=$1 rc
    (cd "$(dirname "$exe")" && STARPU_NCPU=2 STARPU_SSILENT=1 STARPU_HOME="$work/home" \
        timeout "$timeout_s" "$exe" >"$exe.run.log" 2>&1 </dev/null) 2>/dev/null
    rc=$?
    case $rc in
    0) echo ok ;;
    77) echo skip ;;
    124) echo timeout ;;
    *) echo "rc=$rc" ;;
    esac
}

one() {  # one "PROGRAM|SOURCES": builds and runs both flavours, prints "PROGRAM|starpu|mpc|why"
    local name=${1%%|*} files=${1#*|} f srcs=() exe sp mp why cc
    for f in $files; do srcs+=("$src/tests/$f"); done
    exe=$work/bin/${name//\//__}
    local inc=(-I"$work/shim" -I"$src/src" -I"$src/tests" -I"$src/tests/$(dirname "$name")")
    cc=gcc
    [[ $files == *.cpp* ]] && cc=g++
    sp=n/a
    if [[ $have_starpu -eq 1 ]]; then
        # shellcheck disable=SC2046
        if $cc -O1 -w "${inc[@]}" $(pkg-config --cflags starpu-1.3) -o "$exe.starpu" "${srcs[@]}" \
            $(pkg-config --libs starpu-1.3) -lm >"$exe.starpu.build.log" 2>&1; then
            sp=$(run_one "$exe.starpu")
        else
            sp=build
        fi
    fi
    local mcc=$mpc_cc
    [[ $cc == g++ ]] && mcc=${mpc_cc%/*}/mpc_cxx
    why=
    local shim=()
    grep -q '_starpu_mkdtemp' "${srcs[@]}" && shim=("$work/shim/common/utils_shim.c")
    if "$mcc" -O1 -w "${inc[@]}" -o "$exe.mpc" "${srcs[@]}" "${shim[@]}" -lm >"$exe.mpc.build.log" 2>&1; then
        mp=$(run_one "$exe.mpc")
        [[ $mp == ok || $mp == skip ]] ||
            why=$(grep -m 1 -i 'error\|abort\|assert\|fatal\|fail' "$exe.mpc.run.log" | cut -c1-150)
    else
        mp=build
        # StarPU's private headers beyond common/{config,utils,thread}.h, or its private
        # symbols (_starpu_*), or its handles' private structure: the test is about internals.
        local priv='tree/src/\(core\|datawizard\|sched_policies\|drivers\|profiling\|common/\(barrier\|fxt\|list\|prio_list\|starpu_spinlock\|rbtree\|graph\)\)'
        if grep -q "$priv" "$exe.mpc.build.log"; then
            mp=internal
            why=$(grep -m 1 -o "$priv[^:]*" "$exe.mpc.build.log" | sed 's|.*tree/||')
        elif grep -q "undefined reference to \`_starpu_\|undefined type 'struct mpc_starpu_data\|undefined type .struct mpc_starpu_data" "$exe.mpc.build.log"; then
            mp=internal
            why=$(grep -m 1 -o "undefined reference to \`_starpu_[a-z_]*\|undefined type .struct mpc_starpu_data." "$exe.mpc.build.log")
        else
            why=$(grep -m 1 'error\|undefined reference' "$exe.mpc.build.log" | sed "s|$src/||" | cut -c1-150)
        fi
    fi
    # A program that includes those private headers and still fails (they may compile against
    # our headers, e.g. core/jobs.h) reads or calls StarPU's inside: internal as well.
    if [[ $mp != ok && $mp != skip && $mp != internal ]]; then
        local inc
        inc=$(grep -h -m 1 -o '#include *[<"]\(core\|datawizard\|sched_policies\|drivers\|profiling\)/[^>"]*' "${srcs[@]}" | head -n 1)
        if [[ -n $inc ]]; then
            mp=internal
            why="includes ${inc#*[<\"]}"
        fi
    fi
    echo "$name|$sp|$mp|$why"
}
export -f one run_one
export src work timeout_s have_starpu mpc_cc

patterns=${STARPU_TESTS:-*}
list=()
set -f  # the patterns are matched against program names, not expanded as file names
while IFS= read -r line; do
    name=${line%%|*}
    for p in $patterns; do
        # shellcheck disable=SC2053
        if [[ $name == $p ]]; then list+=("$line"); break; fi
    done
done <"$work/programs.txt"
set +f
mkdir -p "$work/home" "$work/bin"
printf '%s\n' "${list[@]}" | xargs -P "$jobs" -d '\n' -I{} bash -c 'one "$1"' _ {} >"$work/results.txt"
sort -o "$work/results.txt" "$work/results.txt"

EXPECTED=$expected python3 - "$work/results.txt" <<'PY'
import fnmatch, os, sys
known = [l.split("|", 1) for l in os.environ["EXPECTED"].splitlines() if "|" in l]
rows = [l.rstrip("\n").split("|", 3) for l in open(sys.argv[1]) if l.strip()]
new = passed = skipped = internal = expected = 0
print("%-58s %-9s %-9s %s" % ("program", "starpu", "mpc", "verdict"))
for name, sp, mp, why in rows:
    if mp == "ok":
        passed += 1; continue
    if mp == "skip":
        skipped += 1
        if sp in ("skip", "n/a"): continue
    if mp == "internal":
        internal += 1
        print("%-58s %-9s %-9s internal: %s" % (name, sp, mp, why)); continue
    reason = next((r for p, r in known if fnmatch.fnmatchcase(name, p)), None)
    if reason:
        expected += 1
        print("%-58s %-9s %-9s known: %s" % (name, sp, mp, reason))
    elif mp == "skip":
        print("%-58s %-9s %-9s skipped by ours only" % (name, sp, mp))
    else:
        new += 1
        print("%-58s %-9s %-9s NEW: %s" % (name, sp, mp, why))
print("%d programs: %d passed, %d skipped (exit 77), %d test StarPU's internals, %d known failures, %d NEW"
      % (len(rows), passed, skipped, internal, expected, new))
sys.exit(1 if new else 0)
PY
