# benchmarks/run alloc: standard multi-threaded allocator workloads (larson, xmalloc-test's
# producer/consumer, Hoard's threadtest and cache-scratch, a realloc growth chain), plain C
# programs in benchmarks/alloc/ built once with gcc and run against glibc's malloc and, through
# LD_PRELOAD, Debian's jemalloc, tcmalloc (gperftools' tcmalloc_minimal) and mimalloc, and
# ours (build-bench/allocator/libmpc_malloc.so, preloaded the same way, when it is built).
# Each workload runs with 1 and 2 threads (and 16 when the machine has at least 16 CPUs).
# Figures: throughput and the peak RSS of the process. Invoked by benchmarks/run; see
# benchmarks/lib.sh. After the table it prints the targets of issue 4 with the figures they
# were judged on.
#
# Each program checks which malloc is active (a symbol only that allocator exports, and the
# library malloc() resolves to) and refuses to run when it is not the one the script preloaded.
# The workloads run as plain threads; each keeps its thread body a `void* worker(void*)` over
# a struct and starts threads in one place (bench_run_workers, common.c).
#
# The tasks variant (rows "mpc", variant "tasks"): the same sources built with
# -DBENCH_MPC_TASKS and linked with build-bench's libmpc.so (the program links it, nothing is
# preloaded), so that bench_run_workers() runs each worker as an MPC task (MPC_Task_create: a
# user-level thread with a heap in an address slice of its own) instead of a pthread. Each
# worker gets a VP of its own (MPC_VPS = workers, worker i on VP i): a task that blocks in the
# kernel blocks its VP, and xmalloc's workers block on pthread condition variables. xmalloc at
# 2 threads has 4 workers, so 4 VPs share the 2 cores, as its 4 pthreads do. These rows run at
# 1 and 2 threads (BENCH_ALLOC_TASK_THREADS) and are left out of the targets below.
# --quick takes about 25 s, a full run (5 rounds) about 3.5 minutes on a 2-core machine.
#
# Environment: BENCH_ALLOC_ONLY="glibc jemalloc tcmalloc mimalloc mpc mpc-tasks" (a subset) runs
# only those; BENCH_ALLOC_THREADS="1 2" sets the thread counts, BENCH_ALLOC_TASK_THREADS="1 2"
# those of the tasks variant (among BENCH_ALLOC_THREADS); BENCH_ALLOC_WORKLOADS="larson ..."
# the workloads; BENCH_ALLOC_ROUNDS=R (default 5, 1 with --quick) the rounds.
#
# Rounds: the host of a virtual machine moves its virtual CPUs between a fast and a slow state
# within minutes (RESULTS.md, "Scripted runs at the end of the session"), so allocators run one
# after the other can be judged in different states. Each workload and thread count therefore
# runs R rounds; a round runs every allocator once, in an order rotated from round to round,
# each as the median of ceil(11 / R) runs (at least 3). The table shows, per allocator, the
# median over the rounds (min .. max over all runs); the targets are judged on the ratios of
# each round (ours against glibc, against the best peer OF THAT ROUND, RSS against mimalloc's of
# that round), their median over the rounds, with the range printed beside it.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=threads
BENCH_VALUE_FMT=auto

src=$BENCH_ROOT/benchmarks/alloc
out=$BENCH_BUILD_DIR/alloc
only=" ${BENCH_ALLOC_ONLY:-glibc jemalloc tcmalloc mimalloc mpc mpc-tasks} "
wanted() { [[ $only == *" $1 "* ]]; }
read -r -a workloads <<<"${BENCH_ALLOC_WORKLOADS:-larson xmalloc threadtest cache_scratch realloc_chain}"
default_threads="1 2"
[[ $(nproc) -ge 16 ]] && default_threads="1 2 16"
read -r -a thread_counts <<<"${BENCH_ALLOC_THREADS:-$default_threads}"
task_threads=" ${BENCH_ALLOC_TASK_THREADS:-1 2} "

bench_need_packages libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 gcc
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
rounds=${BENCH_ALLOC_ROUNDS:-$((BENCH_QUICK == 1 ? 1 : 5))}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_ALLOC_ROUNDS must be a positive integer (got '$rounds')"
if [[ $rounds -gt 1 ]]; then
    reps=$(((11 + rounds - 1) / rounds))
    [[ $BENCH_QUICK -eq 1 ]] && reps=$(((3 + rounds - 1) / rounds))
    args+=(--reps "$((reps < 3 ? 3 : reps))")
fi
# A run that hangs or crawls (an allocator gone wrong) is killed after this many seconds.
limit_s=$((BENCH_QUICK == 1 ? 30 : 120))
cflags=(-std=c11 -O2 -pthread -Wall -Wextra)

# ---- the workloads -----------------------------------------------------------------------
built=()
for w in "${workloads[@]}"; do
    log=$BENCH_BUILD_DIR/bench-logs/alloc-build-$w.log
    if [[ ! -f $src/$w.c ]]; then
        bench_say "!! $w: no such workload ($src/$w.c)"
        BENCH_FAILED=1
    elif gcc "${cflags[@]}" -o "$out/$w" "$src/$w.c" "$src/common.c" >"$log" 2>&1; then
        built+=("$w")
    else
        bench_say "!! $w: gcc ${cflags[*]} $w.c common.c failed; last lines of $log:"
        tail -n 15 "$log" >&2
        BENCH_FAILED=1
    fi
done
[[ ${#built[@]} -gt 0 ]] || bench_die "no workload was built"

# On a VM the host moves the virtual CPUs around, and the threads' scaling moves with it (see the
# p2p section of RESULTS.md): the core-to-core hand-off of p2p's limit.c (built here, into
# build-bench/alloc) is probed before each workload and after the run.
limit_exe=""
if gcc -O2 -pthread -o "$out/limit" "$BENCH_ROOT/benchmarks/p2p/limit.c" \
    >"$BENCH_BUILD_DIR/bench-logs/alloc-build-limit.log" 2>&1; then
    limit_exe=$out/limit
else
    bench_say "benchmarks: p2p/limit.c did not build; no hand-off probe (log: $BENCH_BUILD_DIR/bench-logs/alloc-build-limit.log)"
fi
handoff_probe() {
    [[ -n $limit_exe ]] || return 0
    "$limit_exe" --handoff --quick 2>/dev/null | awk -F'\t' '$1 == "ROW" { printf "%.3f", $5 }'
}

# ---- the allocators: the library each one preloads (glibc: none) --------------------------
# so_of PACKAGE NAME: the path of the shared object NAME that PACKAGE installed.
so_of() {
    dpkg -L "$1" 2>/dev/null | grep -E "/$2\$" | head -n 1
}
declare -A preload=([glibc]="")
declare -A skipped=()
impls=()
add_peer() {  # add_peer IMPL PACKAGE SONAME
    wanted "$1" || return 0
    local so
    so=$(so_of "$2" "$3")
    if [[ -n $so && -f $so ]]; then
        preload[$1]=$so
        impls+=("$1")
    else
        skipped[$1]="$3 not found in package $2"
        bench_say "!! $1: $3 not found (dpkg -L $2); no $1 figures"
        BENCH_FAILED=1
    fi
}
wanted glibc && impls+=(glibc)
add_peer jemalloc libjemalloc2 'libjemalloc\.so\.2'
add_peer tcmalloc libtcmalloc-minimal4 'libtcmalloc_minimal\.so\.4'
add_peer mimalloc libmimalloc2.0 'libmimalloc\.so\.2'

# Ours: built here when the allocator layer defines the target (a build.ninja from before the
# target was added is configured again); run when the library exists.
mpc_so=$BENCH_BUILD_DIR/allocator/libmpc_malloc.so
if wanted mpc; then
    mpc_why=""
    if grep -qw mpc_malloc "$BENCH_ROOT/allocator/CMakeLists.txt" 2>/dev/null; then
        if [[ -f $BENCH_BUILD_DIR/build.ninja ]] &&
            ! ninja -C "$BENCH_BUILD_DIR" -t query mpc_malloc >/dev/null 2>&1; then
            BENCH_RECONFIGURE=1
        fi
        if ! bench_try_build mpc_malloc; then
            mpc_why="building libmpc_malloc.so failed"
            bench_say "!! mpc: $mpc_why (see above); no mpc figures"
            BENCH_FAILED=1
        fi
    fi
    if [[ -z $mpc_why && -f $mpc_so ]]; then
        preload[mpc]=$mpc_so
        impls+=(mpc)
    else
        skipped[mpc]=${mpc_why:-"libmpc_malloc.so not built yet (issue 4)"}
        bench_say "benchmarks: mpc skipped: ${skipped[mpc]} ($mpc_so)"
    fi
else
    skipped[mpc]="left out (BENCH_ALLOC_ONLY)"
fi

# The tasks variant: libmpc built here, each workload built again against it.
tasks_built=()
if wanted mpc-tasks; then
    tasks_why=""
    if ! bench_try_build mpc; then
        tasks_why="building libmpc.so failed"
        bench_say "!! mpc-tasks: $tasks_why (see above); no tasks figures"
        BENCH_FAILED=1
    elif [[ ! -f $BENCH_BUILD_DIR/libmpc.so ]]; then
        tasks_why="no $BENCH_BUILD_DIR/libmpc.so"
        bench_say "!! mpc-tasks: $tasks_why; no tasks figures"
        BENCH_FAILED=1
    else
        for w in "${built[@]}"; do
            log=$BENCH_BUILD_DIR/bench-logs/alloc-build-$w-tasks.log
            if gcc "${cflags[@]}" -DBENCH_MPC_TASKS -I"$BENCH_ROOT/include" -o "$out/$w-tasks" "$src/$w.c" \
                "$src/common.c" -L"$BENCH_BUILD_DIR" -lmpc -Wl,-rpath,"$BENCH_BUILD_DIR" >"$log" 2>&1; then
                tasks_built+=("$w")
            else
                bench_say "!! $w-tasks: gcc -DBENCH_MPC_TASKS $w.c common.c -lmpc failed; last lines of $log:"
                tail -n 15 "$log" >&2
                BENCH_FAILED=1
            fi
        done
    fi
fi
tasks_wanted() { [[ " ${tasks_built[*]} " == *" $1 "* && $task_threads == *" $2 "* ]]; }

[[ ${#impls[@]} -gt 0 || ${#tasks_built[@]} -gt 0 ]] || bench_die "no allocator to run"

version_of() {  # the Debian version of a package, or "?"
    dpkg-query -W -f='${Version}' "$1" 2>/dev/null || printf '?'
}
bench_say "benchmarks: alloc on $(bench_machine)"
bench_say "benchmarks: glibc $(version_of libc6), jemalloc $(version_of libjemalloc2)," \
    "tcmalloc_minimal $(version_of libtcmalloc-minimal4), mimalloc $(version_of libmimalloc2.0)"

# run_one IMPL WORKLOAD THREADS ROUND: its rows go to ROUND_ROWS, tagged with the round.
ROUND_ROWS=""
run_one() {
    local impl=$1 w=$2 t=$3 r=$4 env_args=(-u LD_PRELOAD) kept=$BENCH_ROWS
    [[ -n ${preload[$impl]} ]] && env_args=("LD_PRELOAD=${preload[$impl]}")
    BENCH_ROWS=""
    bench_exec "alloc-$w-$impl-${t}t-r$r" "$(command -v timeout)" -k 5 "$limit_s" env "${env_args[@]}" "$out/$w" \
        --threads "$t" --impl "$impl" --expect "$impl" "${args[@]}"
    ROUND_ROWS+=$(awk -v r="$r" '/^ROW	/ { print r "\t" $0 }' <<<"$BENCH_ROWS")
    ROUND_ROWS+=$'\n'
    BENCH_ROWS=$kept
}

# run_tasks WORKLOAD THREADS: the tasks variant (libmpc linked, not preloaded).
run_tasks() {
    local w=$1 t=$2
    bench_exec "alloc-$w-mpc-tasks-${t}t" "$(command -v timeout)" -k 5 "$limit_s" env -u LD_PRELOAD -u MPC_VPS \
        "$out/$w-tasks" --threads "$t" --impl mpc --variant tasks --expect mpc "${args[@]}"
}

bench_busy_check
handoffs=()
for w in "${built[@]}"; do
    h=$(handoff_probe)
    [[ -n $h ]] && handoffs+=("$h") && bench_say "benchmarks: core-to-core hand-off $h us before $w"
    for t in "${thread_counts[@]}"; do
        n=${#impls[@]}
        for ((r = 1; r <= rounds; r++)); do
            for ((i = 0; i < n; i++)); do  # round r starts at the (r-1)-th allocator
                run_one "${impls[$(((i + r - 1) % n))]}" "$w" "$t" "$r"
            done
        done
        if tasks_wanted "$w" "$t"; then
            run_tasks "$w" "$t"
        fi
    done
done

handoff_after=$(handoff_probe)
[[ -n $handoff_after ]] && handoffs+=("$handoff_after")

# One row per allocator for the table: the median over the rounds of each round's median; min and
# max over every run of every round.
BENCH_ROWS+=$(printf '%s\n' "$ROUND_ROWS" | awk -F'\t' -v R="$rounds" '
    $2 == "ROW" {
        k = $3 SUBSEP $4 SUBSEP $5 SUBSEP $10
        if (!(k in cnt)) { order[++nk] = k; unit[k] = $7; mn[k] = $8; mx[k] = $9; what[k] = $11
                           m[k] = $3; th[k] = $4; im[k] = $5; ex[k] = $10 }
        v[k, ++cnt[k]] = $6
        if ($8 + 0 < mn[k] + 0) mn[k] = $8
        if ($9 + 0 > mx[k] + 0) mx[k] = $9
    }
    END {
        for (i = 1; i <= nk; i++) {
            k = order[i]; c = cnt[k]
            for (a = 1; a <= c; a++) s[a] = v[k, a]
            for (a = 2; a <= c; a++) { x = s[a]; for (b = a - 1; b >= 1 && s[b] + 0 > x + 0; b--) s[b + 1] = s[b]; s[b + 1] = x }
            med = c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
            printf "ROW\t%s\t%s\t%s\t%.4f\t%s\t%s\t%s\t%s\t%s%s\n", m[k], th[k], im[k], med, unit[k], mn[k], mx[k], ex[k],
                what[k], (R > 1 ? sprintf("; median of %d rounds", c) : "")
        }
    }')
BENCH_ROWS+=$'\n'

status=0
bench_report alloc || status=$?
if [[ ${#handoffs[@]} -gt 0 ]]; then
    printf '\n(core-to-core hand-off before each workload and after the run: %s us%s)\n' "${handoffs[*]}" \
        "$(printf '%s\n' "${handoffs[@]}" | sort -g | sed -n '1p;$p' | tr '\n' ' ' | awk '{ if ($2 > 2 * $1)
            printf "; they differ: the host moved the virtual CPUs during the run, 2-thread figures mix both states" }')"
fi

# The targets of issue 4, judged round by round: for each workload, thread count and round, ours
# against glibc (2x, with more than one thread), against the best of jemalloc, tcmalloc and
# mimalloc in that round (within 10%), and its peak RSS against mimalloc's (+10% at most); the
# verdict is on the median of the rounds' ratios, the range beside it. Where ours misses 2x glibc
# while glibc itself runs t threads at t times its one-thread rate (median of the rounds' ratios
# >= 0.9: cache_scratch, whose work is fixed and which glibc runs without false sharing), 2x
# glibc would need twice the cores: that cell says so and judges instead whether ours scales as
# well (>= 0.9 of t times its own one-thread rate of the round), the ratio to glibc beside it.
printf '%s\n' "$ROUND_ROWS" | awk -F'\t' -v skip="${skipped[mpc]:-}" -v wl="${built[*]}" -v tl="${thread_counts[*]}" \
    -v R="$rounds" '
    $2 == "ROW" && $10 == "" { v[$3, $4, $5, $1] = $6; unit[$3] = $7 }  # rows without a variant
    function get(metric, t, impl, r) { return (metric SUBSEP t SUBSEP impl SUBSEP r) in v ? v[metric, t, impl, r] : "" }
    function verdict(c) { return c ? "**yes**" : "no" }
    function num(x) { return sprintf(x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : "%.2f", x) }
    function missing(bar) { return "not measured (bar: " bar ")" }
    function add(name, x) { q[name, ++qn[name]] = x }
    function med(name,   c, a, b, x, s) {  # median of list name; lo/hi set as side effects
        c = qn[name]
        for (a = 1; a <= c; a++) s[a] = q[name, a]
        for (a = 2; a <= c; a++) { x = s[a]; for (b = a - 1; b >= 1 && s[b] + 0 > x + 0; b--) s[b + 1] = s[b]; s[b + 1] = x }
        lo = s[1]; hi = s[c]
        return c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
    }
    function judged(name, bar, ge,   m) {
        m = med(name)
        return verdict(ge ? m >= bar : m <= bar) sprintf(qn[name] > 1 ? ": %.2fx (%.2f-%.2fx in %d rounds)" : ": %.2fx",
            m, lo, hi, qn[name])
    }
    END {
        nw = split(wl, ws, " "); nt = split(tl, ts, " ")
        printf "\nTargets (issue 4)%s%s:\n\n", skip == "" ? "" : "; mpc not measured: " skip,
            (R > 1 ? "; each ratio is taken within one round, the verdict on their median" : "")
        printf "| workload | threads | throughput >= 2x glibc | throughput >= 90%% of best of jemalloc/tcmalloc/mimalloc | peak RSS <= mimalloc + 10%% |\n"
        printf "|---|---:|---|---|---|\n"
        split("jemalloc tcmalloc mimalloc", ps, " ")
        for (i = 1; i <= nw; i++) {
            w = ws[i]; rw = w "_rss"
            for (j = 1; j <= nt; j++) {
                t = ts[j]; delete qn; delete q; delete won; bests = 0; seen_g = seen_b = seen_m = seen_mi = 0
                for (r = 1; r <= R; r++) {
                    m = get(w, t, "mpc", r); g = get(w, t, "glibc", r)
                    mr = get(rw, t, "mpc", r); mi = get(rw, t, "mimalloc", r)
                    best = ""; bname = ""
                    for (k = 1; k <= 3; k++) {
                        p = get(w, t, ps[k], r)
                        if (p != "" && (best == "" || p + 0 > best + 0)) { best = p; bname = ps[k] }
                    }
                    if (m != "" && g != "" && g > 0) add("g", m / g)
                    # scaling against the one-thread rate of the same allocator in the round
                    g1 = get(w, 1, "glibc", r); m1 = get(w, 1, "mpc", r)
                    if (t + 0 > 1 && g != "" && g1 != "" && g1 > 0) add("gs", g / (t * g1))
                    if (t + 0 > 1 && m != "" && m1 != "" && m1 > 0) add("ms", m / (t * m1))
                    if (m != "" && best != "" && best > 0) { add("b", m / best); won[bname]++; bests++ }
                    if (mr != "" && mi != "" && mi > 0) add("r", mr / mi)
                    seen_g = seen_g || g != ""; seen_b = seen_b || best != ""; seen_m = seen_m || m != ""
                    seen_mi = seen_mi || mi != ""
                }
                if (t + 0 < 2) c1 = "- (one thread)"
                else if (qn["g"] > 0 && med("g") < 2 && qn["gs"] > 0 && qn["ms"] > 0 && med("gs") >= 0.9) {
                    # glibc already runs t threads at t times its one-thread rate: twice that
                    # would take twice the cores. Judged instead: ours scales as well (90%).
                    gs = med("gs"); gr = judged("g", 2, 1); sub(/^[^:]*: /, "", gr)
                    c1 = sprintf("n/a: glibc scales ideally (%.2f of %d x its 1-thread rate; ours/glibc %s); ours at ideal scaling: %s",
                                 gs, t, gr, judged("ms", 0.9, 1))
                } else if (qn["g"] > 0) c1 = judged("g", 2, 1)
                else c1 = !seen_g ? "no glibc figure" : missing("2x glibc")
                if (qn["b"] > 0) {
                    who = ""
                    for (k = 1; k <= 3; k++) if (won[ps[k]] > 0) who = who (who == "" ? "" : ", ") ps[k] (R > 1 ? " x" won[ps[k]] : "")
                    c2 = judged("b", 0.9, 1) " (best: " who ")"
                } else c2 = !seen_b ? "no peer figure" : missing("90% of the best peer")
                if (qn["r"] > 0) c3 = judged("r", 1.1, 0)
                else c3 = !seen_mi ? "no mimalloc figure" : missing("mimalloc + 10%")
                printf "| %s | %s | %s | %s | %s |\n", w, t, c1, c2, c3
            }
        }
    }'
exit "$status"
