# benchmarks/run tasks: the task-graph runtime (taskgraph/) against Debian's StarPU 1.3, from
# one StarPU program, benchmarks/tasks/tasks.c, built with pkg-config starpu-1.3 against MPC's
# starpu-1.3.pc and against StarPU's. Figures: the cost of an empty task (independent tasks,
# and a read-write chain), and a tiled Cholesky factorisation with OpenBLAS (GFlop/s), under
# several policies (STARPU_SCHED) and worker counts (STARPU_NCPU); the task-size efficiency
# (tasks spinning L = 1 .. 256 µs on 2 workers, grain90 = the smallest L reaching 90%, against
# the elapsed time and against the CPU time used) under each policy. Invoked by benchmarks/run;
# see benchmarks/lib.sh.
#
# Environment: BENCH_TASKS_SCHEDS="eager dmda ws" (policies), BENCH_TASKS_WORKERS="1 2".
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=workers
BENCH_VALUE_FMT=auto
BENCH_RATIO_KEYS=sched

src=$BENCH_ROOT/benchmarks/tasks/tasks.c
out=$BENCH_BUILD_DIR/tasks
scheds=${BENCH_TASKS_SCHEDS:-eager dmda ws}
workers=${BENCH_TASKS_WORKERS:-1 $(nproc)}
[[ $workers == "1 1" ]] && workers=1

bench_need_packages libstarpu-dev libopenblas-dev gcc pkg-config
bench_build mpc
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

# tasks_build LABEL PKG_CONFIG_PATH OUTPUT: the same source against one starpu-1.3.pc.
tasks_build() {
    local label=$1 pcpath=$2 exe=$3 log=$BENCH_BUILD_DIR/bench-logs/tasks-build-$1.log flags libs
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
    if gcc -O2 $flags -o "$exe" "$src" $libs "${blas[@]}" -lm -Wl,-rpath,"$libdir" >"$log" 2>&1; then
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
# The task-size efficiency on 2 workers (the brief of issue 8), whatever the machine's count.
for s in $scheds; do
    export STARPU_SCHED=$s STARPU_NCPU=2
    bench_exec "tasks-grain-mpc-$s" "$mpc_exe" --impl mpc --grain "${args[@]}"
    bench_exec "tasks-grain-starpu-$s" "$starpu_exe" --impl starpu --grain "${args[@]}"
done
bench_report tasks
