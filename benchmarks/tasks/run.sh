# benchmarks/run tasks: the task-graph runtime (taskgraph/) against Debian's StarPU 1.3, from
# one StarPU program, benchmarks/tasks/tasks.c, built with pkg-config starpu-1.3 against MPC's
# starpu-1.3.pc and against StarPU's. Figures: the cost of an empty task (independent tasks,
# and a read-write chain), and a tiled Cholesky factorisation with OpenBLAS (GFlop/s), under
# several policies (STARPU_SCHED) and worker counts (STARPU_NCPU); the task-size efficiency
# (tasks computing for L = 1 .. 256 µs on 2 workers, grain90 = the smallest L reaching 90%, against
# the elapsed time and against the CPU time used) under each policy, in rounds (medians over the
# rounds); then the data-buffer
# figures of benchmarks/tasks/scratch_redux.sh (tasks with a STARPU_SCRATCH buffer, STARPU_REDUX
# phases: MPC as built, with its scratch cache and reduction tree off, with only the tree off,
# and StarPU). Invoked by benchmarks/run; see benchmarks/lib.sh.
#
# Then the dense factorisations: examples/taskgraph/{cholesky,lu,qr}_blas.c (OpenBLAS and
# LAPACKE tile kernels, single-threaded OpenBLAS in the tasks) built against both, on all the
# CPUs, each runtime at its best tile size (scanned), against OpenBLAS's own LAPACK on the whole
# matrix (benchmarks/tasks/dense_ref.c, as many OpenBLAS threads as workers), and cblas_dgemm's
# rate with that thread count and with one thread ("% of dgemm" in the rows' descriptions: of
# the workers' summed single-core DGEMM rate, workers x the one-thread figure).
#
# Environment: BENCH_TASKS_SCHEDS="eager dmda ws" (policies; empty: no per-policy rows),
# BENCH_TASKS_WORKERS="1 2" (also the scratch/redux rows'); BENCH_TASKS_GRAIN_SCHEDS (the
# policies of the --grain rows; default: BENCH_TASKS_SCHEDS'), BENCH_TASKS_GRAIN_ROUNDS=5 (2 with
# --quick);
# BENCH_TASKS_SCRATCH="scratch4k scratch1m redux4k redux1m" (scratch/redux figures; empty: none),
# BENCH_TASKS_SCRATCH_ROUNDS=3 (1 with --quick), BENCH_TASKS_SCRATCH_SCHED=eager;
# BENCH_TASKS_DENSE="cholesky:4096 cholesky:8192 lu:4096 qr:4096" (factorisation:order; empty:
# none), BENCH_TASKS_DENSE_NB="320 384 448 512" (tile sizes scanned), BENCH_TASKS_DENSE_SCHED=dmda,
# BENCH_TASKS_DENSE_REPS=3 (timed runs at the best tile size, MPC and StarPU alternating).
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=workers
BENCH_VALUE_FMT=auto
BENCH_RATIO_KEYS=sched

src=$BENCH_ROOT/benchmarks/tasks/tasks.c
out=$BENCH_BUILD_DIR/tasks
scheds=${BENCH_TASKS_SCHEDS-eager dmda ws}
workers=${BENCH_TASKS_WORKERS:-1 $(nproc)}
[[ $workers == "1 1" ]] && workers=1

bench_need_packages libstarpu-dev libopenblas-dev liblapacke-dev gcc pkg-config
bench_build mpc
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

# tasks_build LABEL PKG_CONFIG_PATH OUTPUT [SOURCE [LIBS...]]: the same source (tasks.c by
# default) against one starpu-1.3.pc.
tasks_build() {
    local label=$1 pcpath=$2 exe=$3 src=${4:-$src} log flags libs
    log=$BENCH_BUILD_DIR/bench-logs/tasks-build-$label-${exe##*/}.log
    shift 3
    (($# > 0)) && shift
    flags=$(PKG_CONFIG_PATH=$pcpath pkg-config --cflags starpu-1.3) &&
        libs=$(PKG_CONFIG_PATH=$pcpath pkg-config --libs starpu-1.3) || {
        bench_say "!! $label: pkg-config starpu-1.3 failed"
        BENCH_FAILED=1
        return 1
    }
    local blas=() libdir
    if [[ -f /usr/include/x86_64-linux-gnu/cblas.h || -f /usr/include/cblas.h ]] &&
        echo 'int main(void){return 0;}' | gcc -x c - -lopenblas -o /dev/null 2>/dev/null; then
        blas=(-DTASKS_HAVE_CBLAS -lopenblas)
    fi
    libdir=$(PKG_CONFIG_PATH=$pcpath pkg-config --variable=libdir starpu-1.3)
    # shellcheck disable=SC2086  # pkg-config's output is a list of flags
    if gcc -O2 $flags -o "$exe" "$src" $libs "${blas[@]}" "$@" -lm -Wl,-rpath,"$libdir" >"$log" 2>&1; then
        return 0
    fi
    bench_say "!! $label: building tasks.c failed; last lines of $log:"
    tail -n 15 "$log" >&2
    BENCH_FAILED=1
    return 1
}

mpc_exe="" starpu_exe=""
tasks_build mpc "$BENCH_BUILD_DIR/taskgraph/pkgconfig-build" "$out/tasks_mpc" && mpc_exe=$out/tasks_mpc
tasks_build starpu "" "$out/tasks_starpu" && starpu_exe=$out/tasks_starpu

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
bench_say "benchmarks: tasks on $(bench_machine)"
bench_busy_check
# Tile kernels run sequentially inside tasks; models and StarPU's files stay in the build tree.
export OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1 STARPU_HOME=$out/starpu-home MPC_TG_PERFMODEL_DIR=$out/mpc-models
for s in $scheds; do
    for w in $workers; do
        export STARPU_SCHED=$s STARPU_NCPU=$w
        bench_exec "tasks-mpc-$s-$w" "$mpc_exe" --impl mpc --cholesky "${args[@]}"
        bench_exec "tasks-starpu-$s-$w" "$starpu_exe" --impl starpu --cholesky "${args[@]}"
    done
done
# ---- task size: the --grain rows ---------------------------------------------------------------
# The task-size efficiency on 2 workers (the brief of issue 8), whatever the machine's count.
# Near 90% the efficiency is a plateau (84-92% from 8 to 32 µs in the quiet runs of 2026-11-23),
# so one run's grain90 moves by 4x with the noise: BENCH_TASKS_GRAIN_ROUNDS rounds (5; 2 with
# --quick), each running every policy, ours and StarPU one after the other (which one first
# alternates by round); a row gives, per task length, the median over the rounds of each run's
# median of 3 (min .. max: over the rounds); grain90 is derived from those medians, its min .. max
# and description give the rounds' own grain90s.
grain_scheds=${BENCH_TASKS_GRAIN_SCHEDS-$scheds}
grain_rounds=${BENCH_TASKS_GRAIN_ROUNDS:-5}
[[ $BENCH_QUICK -eq 1 ]] && grain_rounds=${BENCH_TASKS_GRAIN_ROUNDS:-2}
grain_raw=""
for ((round = 1; round <= grain_rounds; round++)); do
    order="mpc starpu"
    ((round % 2 == 0)) && order="starpu mpc"
    for s in $grain_scheds; do
        export STARPU_SCHED=$s STARPU_NCPU=2
        bench_say "== grain round $round/$grain_rounds, $s ($order; $(uptime | sed 's/.*load/load/'))"
        for impl in $order; do
            gexe=$mpc_exe
            [[ $impl == starpu ]] && gexe=$starpu_exe
            [[ -n $gexe ]] || continue
            glog=$BENCH_BUILD_DIR/bench-logs/tasks-grain-$impl-$s-$round.log
            if ! gout=$("$gexe" --impl "$impl" --grain "${args[@]}" 2>"$glog"); then
                bench_say "!! tasks --grain ($impl, $s, round $round) failed; last lines of $glog:"
                tail -n 15 "$glog" >&2
                BENCH_FAILED=1
            fi
            grain_raw+=$(grep -E '^ROW	' <<<"$gout" | sed "s/^/$round	/" || true)
            grain_raw+=$'\n'
        done
    done
done
BENCH_ROWS+=$(awk -F'\t' -v rounds="$grain_rounds" '
    function median(list,   v, m, i, j, t) {  # of a space-separated list of numbers
        m = split(list, v, " ")
        for (i = 2; i <= m; i++) {
            t = v[i] + 0
            for (j = i - 1; j >= 1 && v[j] + 0 > t; j--) v[j + 1] = v[j]
            v[j + 1] = t
        }
        lo = v[1]; hi = v[m]
        return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
    }
    $2 != "ROW" { next }
    $3 ~ /^grain_(cpu_)?[0-9]+us$/ {
        k = $3 "\t" $4 "\t" $5 "\t" $10
        if (!(k in vals)) { order[++nk] = k; unit[k] = $7; what[k] = $11 }
        vals[k] = vals[k] " " $6
        next
    }
    $3 ~ /^grain90(_cpu)?$/ { g = $3 "\t" $4 "\t" $5 "\t" $10; per[g] = per[g] " " ($6 + 0) }
    END {
        for (i = 1; i <= nk; i++) {
            k = order[i]; split(k, f, "\t")
            m = median(vals[k]); c = split(vals[k], tmp, " ")
            printf "ROW\t%s\t%s\t%s\t%.4f\t%s\t%.4f\t%.4f\t%s\t%s (median of %d rounds)\n", f[1], f[2], f[3], m, unit[k], lo, hi, f[4], what[k], c
            # grain90 from the medians: the first length (in the programs order, 1 .. 256) that reaches 90%.
            l = f[1]; gsub(/[^0-9]/, "", l); g = (f[1] ~ /cpu/ ? "grain90_cpu" : "grain90") "\t" f[2] "\t" f[3] "\t" f[4]
            if (!(g in g90)) { g90[g] = 0; gorder[++ng] = g }
            if (g90[g] == 0 && m >= 90) g90[g] = l
        }
        for (i = 1; i <= ng; i++) {
            g = gorder[i]; split(g, f, "\t")
            n = split(per[g], v, " "); lo = 0; hi = 0; nn = 0
            for (j = 1; j <= n; j++) {  # 0 (none up to 256 us) counts as the largest
                if (v[j] == 0) { nn++; continue }
                if (lo == 0 || v[j] < lo) lo = v[j]
                if (v[j] > hi) hi = v[j]
            }
            if (nn > 0) hi = 0
            printf "ROW\t%s\t%s\t%s\t%d\tus\t%d\t%d\t%s\tsmallest task length L (1, 2, 4 .. 256 us) whose median %s efficiency over %d rounds reaches 90%% (0: none); the rounds: %s\n", \
                f[1], f[2], f[3], g90[g], lo, hi, f[4], f[1] ~ /cpu/ ? "CPU-time" : "elapsed-time", n, substr(per[g], 2)
        }
    }' <<<"$grain_raw")
BENCH_ROWS+=$'\n'

# ---- scratch buffers and redux phases (benchmarks/tasks/scratch_redux.sh) --------------------
# Each figure run by scratch_redux.sh in rounds, MPC (as built, with its scratch cache and redux
# tree off, with only the tree off) and StarPU alternating; a row gives the minimum over the
# rounds of each run's minimum over 7 chunks (the max: the worst round's).
scratch=${BENCH_TASKS_SCRATCH-scratch4k scratch1m redux4k redux1m}
scratch_rounds=${BENCH_TASKS_SCRATCH_ROUNDS:-3}
[[ $BENCH_QUICK -eq 1 ]] && scratch_rounds=1
export STARPU_SCHED=${BENCH_TASKS_SCRATCH_SCHED:-eager}
for m in $scratch; do
    bench_say "== scratch/redux $m ($STARPU_SCHED, workers $workers, $scratch_rounds rounds; $(uptime | sed 's/.*load/load/'))"
    log=$BENCH_BUILD_DIR/bench-logs/tasks-scratch-$m.log
    # shellcheck disable=SC2086  # the worker counts are words
    if ! raw=$(SR_RAW=1 SR_METRIC=$m "$BENCH_ROOT/benchmarks/tasks/scratch_redux.sh" "$BENCH_BUILD_DIR" "$scratch_rounds" $workers 2>"$log"); then
        bench_say "!! scratch_redux.sh $m failed; last lines of $log:"
        tail -n 15 "$log" >&2
        BENCH_FAILED=1
    fi
    BENCH_ROWS+=$(awk -F'\t' -v s="$STARPU_SCHED" '
        BEGIN {
            how["mpc"] = "as built"; how["starpu"] = "StarPU 1.3"
            how["mpc-nocache"] = "MPC_TG_SCRATCH_CACHE=0 MPC_TG_REDUX_TREE=0"; how["mpc-notree"] = "MPC_TG_REDUX_TREE=0"
        }
        $1 == "ROW" {
            k = $2 "\t" $3 "\t" $4
            if (!(k in lo) || $5 < lo[k]) lo[k] = $5
            if (!(k in hi) || $5 > hi[k]) hi[k] = $5
        }
        END {
            for (k in lo) {
                split(k, f, "\t")
                unit = f[1] ~ /^redux/ ? "us/phase" : "us/task"
                d = f[1] ~ /^redux/ ? "redux phases (4 tasks per worker) into a " : "tasks with one STARPU_SCRATCH vector of "
                d = d (f[1] ~ /4k$/ ? "4 KiB" : "1 MiB") (f[1] ~ /^redux/ ? " vector" : "") ", min over rounds"
                printf "ROW\t%s\t%s\t%s\t%.4f\t%s\t%.4f\t%.4f\t\"sched\": \"%s\"\t%s (%s)\n", f[1], f[2], f[3], lo[k], unit, lo[k], hi[k], s, d, how[f[3]]
            }
        }' <<<"$raw" | sort -t$'\t' -k2,2 -k3,3n -k4,4)
    BENCH_ROWS+=$'\n'
done

# ---- dense factorisations -------------------------------------------------------------------
dense=${BENCH_TASKS_DENSE-cholesky:4096 cholesky:8192 lu:4096 qr:4096}
dense_nbs=${BENCH_TASKS_DENSE_NB:-320 384 448 512}
dense_reps=${BENCH_TASKS_DENSE_REPS:-3}
if [[ $BENCH_QUICK -eq 1 ]]; then
    dense=${BENCH_TASKS_DENSE-cholesky:2048 lu:2048 qr:2048} dense_nbs=${BENCH_TASKS_DENSE_NB:-320 512} dense_reps=1
fi
dense_w=$(nproc)
export STARPU_SCHED=${BENCH_TASKS_DENSE_SCHED:-dmda} STARPU_NCPU=$dense_w
ref_exe=$out/dense_ref
if ! gcc -O2 -o "$ref_exe" "$BENCH_ROOT/benchmarks/tasks/dense_ref.c" -llapacke -lopenblas >"$BENCH_BUILD_DIR/bench-logs/tasks-build-ref.log" 2>&1; then
    bench_say "!! building dense_ref.c failed; last lines of $BENCH_BUILD_DIR/bench-logs/tasks-build-ref.log:"
    tail -n 15 "$BENCH_BUILD_DIR/bench-logs/tasks-build-ref.log" >&2
    BENCH_FAILED=1 ref_exe=""
fi
declare -A dense_exe=()
for what in $(tr ' ' '\n' <<<"$dense" | cut -d: -f1 | sort -u); do
    for impl in mpc starpu; do
        pc=$BENCH_BUILD_DIR/taskgraph/pkgconfig-build
        [[ $impl == starpu ]] && pc=""
        tasks_build "$impl" "$pc" "$out/${what}_blas_$impl" "$BENCH_ROOT/examples/taskgraph/${what}_blas.c" -llapacke -lopenblas &&
            dense_exe[$what-$impl]=$out/${what}_blas_$impl
    done
done

# dense_gflops EXE N NB: one factorisation; prints its GFlop/s (empty, and a message, on failure).
dense_gflops() {
    local o
    if o=$(OPENBLAS_NUM_THREADS=1 "$1" "$2" "$3" 2>&1) && [[ $o == *": OK ("* ]]; then
        sed -n 's/.*, \([0-9.]*\) GFlop\/s).*/\1/p' <<<"$o" | tail -n 1
    else
        bench_say "!! $(basename "$1") $2 $3 failed: $o"
        BENCH_FAILED=1
    fi
}

# dense_row METRIC IMPL WHAT VALUES...: a ROW of the median, min and max of VALUES.
dense_row() {
    local metric=$1 impl=$2 what=$3
    shift 3
    printf '%s\n' "$@" | sort -g | awk -v m="$metric" -v i="$impl" -v w="$dense_w" -v s="$STARPU_SCHED" -v d="$what" \
        '{ v[NR] = $1 } END { if (NR > 0) printf "ROW\t%s\t%s\t%s\t%.4f\tGFlop/s\t%.4f\t%.4f\t\"sched\": \"%s\"\t%s\n", m, w, i, v[int((NR + 1) / 2)], v[1], v[NR], s, d }'
}

declare -A dgemm=()
for item in $dense; do
    what=${item%%:*} n=${item#*:}
    bench_say "== dense $what n=$n ($(uptime | sed 's/.*load/load/'))"
    if [[ -n $ref_exe && -z ${dgemm[$n]-} ]]; then
        log=$BENCH_BUILD_DIR/bench-logs/tasks-dgemm-$n.log
        r=$("$ref_exe" --what dgemm --n "$n" --threads "$dense_w" --reps "$dense_reps" 2>"$log") || BENCH_FAILED=1
        BENCH_ROWS+=$r$'\n'
        # The "% of dgemm" base: the workers' summed single-core rate (issue 8's definition;
        # also steadier than the multithreaded figure when other processes load the machine).
        r=$("$ref_exe" --what dgemm --n "$n" --threads 1 --reps "$dense_reps" 2>>"$log") || BENCH_FAILED=1
        dgemm[$n]=$(awk -F'\t' -v w="$dense_w" '{ print w * $5 }' <<<"$r")
        BENCH_ROWS+=$r$'\n'
    fi
    # The tile size: one calibration run and one timed run per size and runtime, alternating.
    declare -A best=() bestv=()
    for nb in $dense_nbs; do
        for impl in mpc starpu; do
            exe=${dense_exe[$what-$impl]-}
            [[ -n $exe ]] || continue
            dense_gflops "$exe" "$n" "$nb" >/dev/null
            v=$(dense_gflops "$exe" "$n" "$nb")
            bench_say "   $impl nb=$nb: ${v:-failed} GFlop/s"
            if [[ -n $v ]] && awk -v a="$v" -v b="${bestv[$impl]:-0}" 'BEGIN { exit !(a > b) }'; then
                best[$impl]=$nb bestv[$impl]=$v
            fi
        done
    done
    declare -A vals=()
    for ((r = 0; r < dense_reps; r++)); do
        for impl in mpc starpu; do
            [[ -n ${best[$impl]-} ]] && vals[$impl]+="$(dense_gflops "${dense_exe[$what-$impl]}" "$n" "${best[$impl]}") "
        done
    done
    for impl in mpc starpu; do
        [[ -n ${best[$impl]-} ]] || continue
        # shellcheck disable=SC2086  # the values are words
        row=$(dense_row "$what-$n" "$impl" "tiled, tiles of ${best[$impl]} (best of $dense_nbs)" ${vals[$impl]})
        if [[ -n ${dgemm[$n]-} ]]; then
            row+=$(awk -F'\t' -v g="${dgemm[$n]}" '{ printf ", %.0f%% of dgemm", 100 * $5 / g }' <<<"$row")
        fi
        BENCH_ROWS+=$row$'\n'
    done
    unset best bestv vals
    if [[ -n $ref_exe ]]; then
        r=$("$ref_exe" --what "$what" --n "$n" --threads "$dense_w" --reps "$dense_reps" 2>>"$BENCH_BUILD_DIR/bench-logs/tasks-ref.log") ||
            BENCH_FAILED=1
        [[ -n ${dgemm[$n]-} ]] && r+=$(awk -F'\t' -v g="${dgemm[$n]}" '{ printf ", %.0f%% of dgemm", 100 * $5 / g }' <<<"$r")
        BENCH_ROWS+=$r$'\n'
    fi
done
bench_report tasks
