# benchmarks/run coll: MPI collectives (issue 6): Barrier, Bcast and Allreduce of 8 B, 64 KiB
# and 8 MiB, Alltoall and Allgather of 8 B and 64 KiB per rank, Ibarrier, Ibcast and Iallreduce
# (call + Wait; 8 B and 64 KiB) and the overlap of Iallreduce with computation (coll.c's
# "overlap" figures), at 2, 8 and 64 ranks, from one
# source, benchmarks/coll/coll.c, compiled unchanged with MPC's mpc_cc, Debian's Open MPI
# (mpicc.openmpi) and Debian's MPICH (mpicc.mpich). Invoked by benchmarks/run; see
# benchmarks/lib.sh. Ours runs N ranks as threads of one process (mpc_run -n N, one VP per
# core); the peers run N processes over shared memory on this machine: with more ranks than
# cores (8 and 64 ranks on 2 cores) they are oversubscribed (Open MPI is told to yield when
# idle, mpi_yield_when_idle=1, its own default when it notices oversubscription; MPICH ch4:ucx
# has no such setting and busy-polls, so its processes wait for the kernel's time slices).
# After the table it prints the targets of issue 6 with the figures they are judged on.
#
# Each figure: the median of 5 runs of at least 50 ms (fewer, at least 3, when a call takes
# seconds), after a warm-up (see coll.c). The full run takes about 5 minutes, most of them
# MPICH at 64 ranks. --quick: 3 runs of at least 5 ms (1 when a call takes seconds), and above
# 8 ranks only Barrier, Bcast and Allreduce (the targets' operations); about 1 minute.
# Every figure is validated (each rank checks the result of its last call).
#
# Environment: BENCH_COLL_ONLY="mpc openmpi mpich" (a subset) runs only those;
# BENCH_COLL_RANKS="2 8 64" (a subset, or other counts) the rank counts.
# A run that hangs is killed after 120 s (ours) or 480 s (peers) (--quick: 60 s and 240 s)
# and reported after the table, with runs that failed or produced wrong results.
# shellcheck shell=bash source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=size
BENCH_VALUE_FMT=auto
BENCH_RATIO_KEYS=ranks

src=$BENCH_ROOT/benchmarks/coll
out=$BENCH_BUILD_DIR/coll
only=" ${BENCH_COLL_ONLY:-mpc openmpi mpich} "
wanted() { [[ $only == *" $1 "* ]]; }
read -r -a rank_counts <<<"${BENCH_COLL_RANKS:-2 8 64}"

bench_need_packages openmpi-bin libopenmpi-dev mpich libmpich-dev gcc
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
# A run that hangs (a deadlock in an MPI layer) is killed after this many seconds. The peers
# get more: MPICH at 64 ranks on 2 cores takes minutes (seconds per large call).
limit_mpc=$((BENCH_QUICK == 1 ? 60 : 120))
limit_peer=$((BENCH_QUICK == 1 ? 240 : 480))


# ---- ours: libmpc, mpc_run and the start-up code from build-bench, then mpc_cc -------------
mpc_exe=""
mpc_run=$BENCH_MPC_RUN
if wanted mpc && bench_mpc_ready && bench_compile coll mpc "$BENCH_MPC_CC" "$src/coll.c" "$out/coll_mpc"; then
    mpc_exe=$out/coll_mpc
fi

# ---- the peers ---------------------------------------------------------------------------
ompi_exe=""
mpich_exe=""
if wanted openmpi; then
    bench_compile coll openmpi mpicc.openmpi "$src/coll.c" "$out/coll_openmpi" && ompi_exe=$out/coll_openmpi
fi
if wanted mpich; then
    bench_compile coll mpich mpicc.mpich "$src/coll.c" "$out/coll_mpich" && mpich_exe=$out/coll_mpich
fi

# Open MPI: the ob1 engine over the shared-memory BTL (vader), no network BTL probing, and
# its collectives' default component (tuned). mpirun binds 2 ranks one per core and leaves
# more ranks than cores unbound; with more ranks than cores they yield when idle
# (mpi_yield_when_idle=1; without it a barrier of 8 ranks takes about 0.1 s here).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
# Hydra (MPICH) does not bind by default; bind ranks one per core when they fit, like the
# others. MPICH's MPIR_CVAR_POLLS_BEFORE_YIELD does not reach ch4:ucx's polling loop (no
# change measured), so its oversubscribed ranks busy-poll.
ncores=$(nproc)

# run_impl IMPL RANKS: one program run, every operation and size.
failures=()
run_impl() {
    local impl=$1 n=$2 label="coll-$1-$2ranks"
    local pa=(--impl "$impl" "${args[@]}") limit=$limit_peer cmd=()
    # --quick above 8 ranks: only the operations of the targets (MPICH takes seconds per call).
    [[ $BENCH_QUICK -eq 1 && $n -gt 8 ]] && pa+=(--ops "barrier,bcast,allreduce")
    case $impl in
    mpc)
        [[ -n $mpc_exe ]] || return 0
        limit=$limit_mpc
        cmd=("$mpc_run" -n "$n" "$mpc_exe")
        ;;
    openmpi)
        [[ -n $ompi_exe ]] || return 0
        cmd=(env OMPI_MCA_mpi_yield_when_idle=$((n > ncores ? 1 : 0)) mpirun.openmpi --allow-run-as-root
            --oversubscribe -np "$n" "$ompi_exe")
        ;;
    mpich)
        [[ -n $mpich_exe ]] || return 0
        local bind=()
        [[ $n -le $ncores ]] && bind=(-bind-to core)
        cmd=(mpiexec.mpich -n "$n" "${bind[@]}" "$mpich_exe")
        ;;
    esac
    local log=$BENCH_BUILD_DIR/bench-logs/$label.log t0 t1 failed_before=$BENCH_FAILED
    t0=$(date +%s)
    BENCH_FAILED=0
    # timeout --verbose writes ".../timeout: sending signal ..." into the log when it fires.
    bench_exec "$label" "$(command -v timeout)" --verbose -k 10 "$limit" "${cmd[@]}" "${pa[@]}"
    t1=$(date +%s)
    bench_say "   ($label took $((t1 - t0)) s)"
    if grep -q 'timeout: sending signal' "$log"; then
        bench_say "!! $label: killed after $limit s (hung?); its figures so far are kept"
        failures+=("$label: killed after $limit s (timeout); the figures it printed before are kept; log $log")
    elif grep -q 'WRONG RESULT' "$log"; then
        failures+=("$label: wrong results, figures left out: $(grep -m 1 'WRONG RESULT' "$log")")
    elif [[ $BENCH_FAILED -ne 0 ]]; then
        failures+=("$label: failed (exit status not 0), last line of its log: $(tail -n 1 "$log")")
    fi
    BENCH_FAILED=$((BENCH_FAILED | failed_before))
}

bench_say "benchmarks: coll on $(bench_machine)"
mpich_version=$(mpichversion 2>/dev/null | sed -n 's/^MPICH \(Version\|Device\):[[:space:]]*//p' | tr '\n' ' ')
bench_say "benchmarks: $(mpirun.openmpi --version 2>/dev/null | head -n 1); MPICH ${mpich_version% }"
bench_busy_check
start_s=$(date +%s)
for n in "${rank_counts[@]}"; do
    for impl in mpc openmpi mpich; do
        wanted "$impl" && run_impl "$impl" "$n"
    done
done
bench_say "benchmarks: the programs ran for $(($(date +%s) - start_s)) s"

status=0
bench_report coll || status=$?
if [[ ${#failures[@]} -gt 0 ]]; then
    printf '\nFailed runs:\n'
    printf -- '- %s\n' "${failures[@]}"
fi

# The targets of issue 6, from the same figures, at each rank count.
printf '%s\n' "$BENCH_ROWS" | awk -F'\t' -v counts="${rank_counts[*]}" '
    $1 == "ROW" {  # key: metric, size, impl, ranks
        r = $9; sub(/.*"ranks": /, "", r); sub(/[^0-9].*/, "", r)
        v[$2, $3, $4, r] = $5
    }
    function get(metric, size, impl, ranks) {
        return (metric SUBSEP size SUBSEP impl SUBSEP ranks) in v ? v[metric, size, impl, ranks] : ""
    }
    function peer_best(metric, size, ranks, lower,   a, b) {  # prints the name of the peer too
        a = get(metric, size, "openmpi", ranks)
        b = get(metric, size, "mpich", ranks)
        if (a == "" && b == "") { best_name = ""; return "" }
        if (b == "" || (a != "" && (lower ? a + 0 <= b + 0 : a + 0 >= b + 0))) { best_name = "Open MPI"; return a }
        best_name = "MPICH"; return b
    }
    function num(x) { return x >= 100 ? sprintf("%.0f", x) : x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x) }
    function verdict(c) { return c ? "**met**" : "not met" }
    function latency_target(name, metric, size, ranks,   m, p) {
        m = get(metric, size, "mpc", ranks)
        p = peer_best(metric, size, ranks, 1)
        if (m == "" || p == "") { printf "| %s | %d | missing figures | n/a |\n", name, ranks; return }
        printf "| %s | %d | mpc %s us vs %s %s us: %.2fx | %s |\n", name, ranks, num(m), best_name, num(p),
            (m > 0 ? p / m : 0), verdict(m > 0 && p / m >= 3)
    }
    function bw_target(name, metric, size, ranks,   m, p) {
        m = get(metric, size, "mpc", ranks)
        p = peer_best(metric, size, ranks, 0)
        if (m == "" || p == "") { printf "| %s | %d | missing figures | n/a |\n", name, ranks; return }
        printf "| %s | %d | mpc %.0f MB/s vs %s %.0f MB/s: %.2fx | %s |\n", name, ranks, m, best_name, p,
            (p > 0 ? m / p : 0), verdict(p > 0 && m / p >= 1)
    }
    END {
        nc = split(counts, rc, " ")
        printf "\nTargets (issue 6; best peer = the better of Open MPI and MPICH at the same rank count):\n\n"
        printf "| target | ranks | figure | met? |\n|---|---:|---|---|\n"
        for (i = 1; i <= nc; i++) latency_target("Barrier latency: best peer / mpc >= 3", "barrier", 0, rc[i])
        for (i = 1; i <= nc; i++) latency_target("Allreduce 8 B latency: best peer / mpc >= 3", "allreduce", 8, rc[i])
        for (i = 1; i <= nc; i++) bw_target("Allreduce 8 MiB bandwidth: mpc / best peer >= 1", "allreduce_bw", 8388608, rc[i])
        for (i = 1; i <= nc; i++) bw_target("Bcast 8 MiB bandwidth: mpc / best peer >= 1", "bcast_bw", 8388608, rc[i])
    }'
exit "$status"
