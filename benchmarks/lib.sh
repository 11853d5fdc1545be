# Shared helpers of the benchmark scripts (sourced by benchmarks/<name>/run.sh; not executable).
#
# A benchmark script:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#   bench_parse_args "$@"                  # --quick, --json FILE -> BENCH_QUICK, BENCH_JSON
#   bench_need_packages libfoo-dev ...     # Debian packages of the peers, installed if missing
#   bench_build target...                  # configures build-bench/ if needed, builds targets
#   bench_exec label cmd args...           # runs one program, collects its ROW lines
#   bench_report NAME                      # prints the table, writes --json
#
# Optional settings of a script, before bench_report (defaults keep sched's table):
#   BENCH_KEY=size           name of the ROW's second column in the table and the JSON (vps)
#   BENCH_VALUE_FMT=auto     values with 3-4 significant digits instead of "%.1f"
#   BENCH_RATIO_KEYS="ranks" extra JSON keys that also separate the "vs mpc" groups
#   bench_try_build target...  as bench_build, but returns 1 on failure instead of exiting
#
# Benchmark programs print one line per figure on stdout (see benchmarks/common/harness.hpp):
#   ROW <metric> <vps> <impl> <value> <unit> <min> <max> <extra json keys> <description>
# (tab-separated); everything else they print goes to a log file.

set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_BUILD_DIR=${MPC_BENCH_BUILD_DIR:-$BENCH_ROOT/build-bench}
BENCH_QUICK=0
BENCH_JSON=""
BENCH_FAILED=0
BENCH_ROWS=""
BENCH_RECONFIGURE=0
BENCH_KEY=vps
BENCH_VALUE_FMT=""
BENCH_RATIO_KEYS=""

bench_say() { printf '%s\n' "$*" >&2; }
bench_die() { printf 'benchmarks: %s\n' "$*" >&2; exit 1; }

bench_parse_args() {
    while [[ $# -gt 0 ]]; do
        case $1 in
        --quick) BENCH_QUICK=1 ;;
        --json)
            [[ $# -ge 2 ]] || { bench_say "--json needs a file name"; exit 2; }
            BENCH_JSON=$2
            shift
            ;;
        --json=*) BENCH_JSON=${1#--json=} ;;
        *) bench_say "unknown option '$1'"; exit 2 ;;
        esac
        shift
    done
    if [[ -n $BENCH_JSON && $BENCH_JSON != /* ]]; then
        BENCH_JSON=$PWD/$BENCH_JSON
    fi
}

# Installs the Debian packages that are not installed yet (dpkg -s decides).
bench_need_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    bench_say "benchmarks: installing ${missing[*]}"
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || bench_die "need root (or sudo) to install: ${missing[*]}"
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2 ||
        bench_die "apt-get install ${missing[*]} failed"
    BENCH_RECONFIGURE=1  # find_package results of a previous configure are stale now
}

# What the project itself needs to build (the top-level CMakeLists finds them).
BENCH_BUILD_PACKAGES=(cmake ninja-build g++ pkg-config libboost-context-dev libhwloc-dev libnuma-dev libucx-dev)

# Configures build-bench/ (Release, no tests, no examples) when needed and builds the targets.
bench_build() {
    bench_need_packages "${BENCH_BUILD_PACKAGES[@]}"
    if [[ $BENCH_RECONFIGURE -eq 1 || ! -f $BENCH_BUILD_DIR/build.ninja ]]; then
        bench_say "benchmarks: configuring $BENCH_BUILD_DIR"
        cmake -S "$BENCH_ROOT" -B "$BENCH_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DMPC_BUILD_TESTS=OFF -DMPC_BUILD_EXAMPLES=OFF -DMPC_BUILD_BENCHMARKS=ON >"$BENCH_BUILD_DIR.configure.log" 2>&1 ||
            { tail -n 30 "$BENCH_BUILD_DIR.configure.log" >&2; bench_die "configure failed (log: $BENCH_BUILD_DIR.configure.log)"; }
        grep -E '^-- benchmarks:' "$BENCH_BUILD_DIR.configure.log" >&2 || true
    fi
    local t available=()
    for t in "$@"; do  # a peer whose package was not found at configure time has no target
        if ninja -C "$BENCH_BUILD_DIR" -t query "$t" >/dev/null 2>&1; then
            available+=("$t")
        else
            bench_say "benchmarks: target $t is not configured (missing peer?); skipped"
        fi
    done
    [[ ${#available[@]} -gt 0 ]] || bench_die "nothing to build"
    bench_say "benchmarks: building ${available[*]}"
    cmake --build "$BENCH_BUILD_DIR" -j "$(nproc)" --target "${available[@]}" >&2 || bench_die "build failed"
    mkdir -p "$BENCH_BUILD_DIR/bench-logs"
}

# bench_try_build target...: bench_build in a subshell, so that a failure (configure, build)
# returns 1 and the script can go on with the peers.
bench_try_build() {
    (bench_build "$@")
}

# The MPI wrapper and launcher of build-bench (bench_mpc_ready builds them).
BENCH_MPC_CC=$BENCH_BUILD_DIR/tools/mpc_cc
BENCH_MPC_RUN=$BENCH_BUILD_DIR/tools/mpc_run

# bench_mpc_ready: builds what programs made with mpc_cc need (libmpc, mpc_run, the start-up
# code, the UCX module for mpc_run -p); returns 1 with the reason (and BENCH_FAILED=1) when
# $BENCH_MPC_CC or $BENCH_MPC_RUN cannot be used.
bench_mpc_ready() {
    if ! bench_try_build mpc mpc_run mpc_start mpc_image mpc_net_ucx; then
        bench_say "!! mpc: building libmpc / mpc_run / mpc_start failed (see above); no mpc figures"
    elif [[ ! -x $BENCH_MPC_CC ]]; then
        bench_say "!! mpc: $BENCH_MPC_CC was not generated (tools/CMakeLists.txt); no mpc figures"
    elif [[ ! -x $BENCH_MPC_RUN ]]; then
        bench_say "!! mpc: $BENCH_MPC_RUN was not built; no mpc figures"
    else
        return 0
    fi
    BENCH_FAILED=1
    return 1
}

# bench_compile NAME LABEL COMPILER SOURCE OUTPUT [flags...]: COMPILER -O2 flags... -o OUTPUT
# SOURCE, logged to bench-logs/NAME-build-LABEL.log; says why on failure (BENCH_FAILED=1).
bench_compile() {
    local name=$1 label=$2 cc=$3 src=$4 exe=$5
    shift 5
    local log=$BENCH_BUILD_DIR/bench-logs/$name-build-$label.log
    mkdir -p "$BENCH_BUILD_DIR/bench-logs"
    rm -f "$exe"
    if "$cc" -O2 "$@" -o "$exe" "$src" >"$log" 2>&1; then
        return 0
    fi
    bench_say "!! $label: $cc -O2 $* $(basename "$src") failed; last lines of $log:"
    tail -n 15 "$log" >&2
    BENCH_FAILED=1
    return 1
}

# Path of a built benchmark program, or empty when it was not built.
bench_binary() {
    local f
    f=$(find "$BENCH_BUILD_DIR/benchmarks" -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1)
    printf '%s' "$f"
}

# bench_exec LABEL PROGRAM [ARGS...]: runs PROGRAM, keeps its ROW lines, logs the rest.
bench_exec() {
    local label=$1 prog=$2
    shift 2
    local log=$BENCH_BUILD_DIR/bench-logs/$label.log out
    if [[ -z $prog || ! -x $prog ]]; then
        bench_say "== $label: not built, skipped"
        return 0
    fi
    bench_say "== $label ($(basename "$prog") $*; log: $log)"
    if out=$("$prog" "$@" 2>"$log"); then
        :
    else
        bench_say "!! $label exited with status $?; last lines of $log:"
        tail -n 15 "$log" >&2
        BENCH_FAILED=1
    fi
    BENCH_ROWS+=$(grep -E '^ROW	' <<<"$out" || true)
    BENCH_ROWS+=$'\n'
}

# bench_report NAME: one table (markdown) on stdout, and the JSON file when --json was given.
# The ratio column divides each figure by mpc's figure for the same metric and vps (the first
# mpc row of that group): for times, above 1 means slower than mpc.
bench_report() {
    local name=$1
    local rows
    rows=$(grep -E '^ROW	' <<<"$BENCH_ROWS" || true)
    [[ -n $rows ]] || bench_die "no figures were produced"
    bench_busy_note
    printf '%s\n' "$rows" | awk -F'\t' -v quick="$BENCH_QUICK" -v note="$BENCH_NOTE" -v key="$BENCH_KEY" \
        -v vfmt="$BENCH_VALUE_FMT" -v rkeys="$BENCH_RATIO_KEYS" '
        function variant(extra,   s) {
            s = extra; gsub(/"[a-z_]+": /, "", s); gsub(/"/, "", s); return s == "" ? "-" : s
        }
        function fmt(v,   a) {  # "auto": about 3 significant digits, never an exponent
            if (vfmt != "auto") { return sprintf("%.1f", v) }
            a = v < 0 ? -v : v
            return sprintf(a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 1 ? "%.2f" : a >= 0.01 ? "%.3f" : "%.5f", v)
        }
        function group(i,   k, j, nk, ks, m) {  # the "vs mpc" group of row i
            k = metric[i] SUBSEP vps[i]
            nk = split(rkeys, ks, " ")
            for (j = 1; j <= nk; j++) {
                m = ""
                if (match(extra[i], "\"" ks[j] "\": [^,]*")) { m = substr(extra[i], RSTART, RLENGTH) }
                k = k SUBSEP m
            }
            return k
        }
        {
            n++; metric[n] = $2; vps[n] = $3; impl[n] = $4; val[n] = $5; unit[n] = $6
            mn[n] = $7; mx[n] = $8; extra[n] = $9; what[n] = $10
            if (!($2 in morder)) { morder[$2] = ++nm }
            k = group(n)
            if ($4 == "mpc" && !(k in ref)) { ref[k] = $5 }
        }
        END {
            for (i = 1; i <= n; i++) { idx[i] = i }
            for (i = 2; i <= n; i++) {  # stable insertion sort on (metric order, vps)
                j = i; t = idx[i]
                while (j > 1 && (morder[metric[idx[j-1]]] > morder[metric[t]] ||
                        (morder[metric[idx[j-1]]] == morder[metric[t]] && vps[idx[j-1]] + 0 > vps[t] + 0))) {
                    idx[j] = idx[j-1]; j--
                }
                idx[j] = t
            }
            printf "| metric | %s | impl | variant | median | unit | vs mpc | min .. max | what |\n", key
            printf "|---|---:|---|---|---:|---|---:|---|---|\n"
            for (j = 1; j <= n; j++) {
                i = idx[j]; k = group(i)
                r = (k in ref && ref[k] > 0) ? sprintf("%.2fx", val[i] / ref[k]) : "n/a"
                printf "| %s | %s | %s | %s | %s | %s | %s | %s .. %s | %s |\n", metric[i], vps[i], impl[i],
                    variant(extra[i]), fmt(val[i]), unit[i], r, fmt(mn[i]), fmt(mx[i]), what[i]
            }
            if (quick) { printf "\n(--quick: fewer and shorter repetitions; figures are rougher)\n" }
            if (note != "") { printf "\n(%s)\n", note }
        }'
    if [[ -n $BENCH_JSON ]]; then
        printf '%s\n' "$rows" | awk -F'\t' -v name="$name" -v key="$BENCH_KEY" '
            BEGIN { printf "{\"benchmark\": \"%s\", \"rows\": [", name }
            {
                printf "%s\n  {\"metric\": \"%s\", \"%s\": %d, \"impl\": \"%s\", \"value\": %s, \"unit\": \"%s\"%s}",
                    (NR > 1 ? "," : ""), $2, key, $3, $4, $5, $6, ($9 == "" ? "" : ", " $9)
            }
            END { printf "\n]}\n" }' >"$BENCH_JSON"
        bench_say "benchmarks: wrote $BENCH_JSON"
    fi
    return "$BENCH_FAILED"
}

# CPU accounting, to tell whether other processes disturbed the run (on a machine with few
# cores they make the figures noisy). /proc/stat gives the whole machine's busy and total
# ticks; /proc/$$/stat (cutime + cstime) what our own benchmark programs used.
bench_cpu_ticks() {  # prints "busy total own"
    local a b c d e f g own
    read -r _ a b c d e f g _ </proc/stat
    own=$(awk '{ print $16 + $17 }' /proc/$$/stat)
    printf '%s %s %s' $((a + b + c + f + g)) $((a + b + c + d + e + f + g)) "$own"
}

# Before the programs run: says how busy the machine is now, and starts the accounting.
bench_busy_check() {
    local b0 t0 o0 b1 t1 o1
    read -r b0 t0 o0 <<<"$(bench_cpu_ticks)"
    sleep 0.5
    read -r b1 t1 o1 <<<"$(bench_cpu_ticks)"
    local busy=$((t1 > t0 ? 100 * (b1 - b0) / (t1 - t0) : 0))
    if [[ $busy -gt 10 ]]; then
        bench_say "benchmarks: WARNING: the machine is ${busy}% busy with other work; figures will be noisy"
    else
        bench_say "benchmarks: machine ${busy}% busy before start"
    fi
    BENCH_TICKS0="$b1 $t1 $o1"
}

# After the programs ran: the share of the machine's CPU time that other processes used.
bench_busy_note() {
    [[ -n $BENCH_TICKS0 ]] || return 0
    local b0 t0 o0 b1 t1 o1
    read -r b0 t0 o0 <<<"$BENCH_TICKS0"
    read -r b1 t1 o1 <<<"$(bench_cpu_ticks)"
    local other=$((t1 > t0 ? 100 * ((b1 - b0) - (o1 - o0)) / (t1 - t0) : 0))
    ((other < 0)) && other=0
    bench_say "benchmarks: other processes used ${other}% of the machine's CPU time during the run"
    if [[ $other -gt 5 ]]; then
        BENCH_NOTE="other processes used ${other}% of the machine's CPU time during the run: figures are noisy"
    fi
}
BENCH_NOTE=""
BENCH_TICKS0=""

# One line about the machine, for the reports.
bench_machine() {
    local model
    model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
    printf '%s, %s CPUs (%s), Linux %s' "${model:-unknown CPU}" "$(nproc)" \
        "$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor:[[:space:]]*/VM: /p' | head -n 1)" "$(uname -r)"
}
