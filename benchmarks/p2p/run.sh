# benchmarks/run p2p: MPI point-to-point (ping-pong latency, bandwidth, bi-directional
# bandwidth, multi-pair message rate) from one source, benchmarks/p2p/p2p.c, compiled unchanged
# with MPC's mpc_cc, Debian's Open MPI (mpicc.openmpi) and Debian's MPICH (mpicc.mpich), plus
# the physical limits (limit.c: single-thread memcpy bandwidth, core-to-core hand-off latency).
# Invoked by benchmarks/run; see benchmarks/lib.sh. Ours runs 2 (and 4) ranks as threads of one
# process (mpc_run -n); the peers run 2 (and 4) processes over shared memory on this machine.
# After the table it prints the targets of issue 3 with the figures they were judged on.
#
# Environment: BENCH_P2P_ONLY="mpc openmpi mpich limit" (a subset) runs only those.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=size
BENCH_VALUE_FMT=auto
BENCH_RATIO_KEYS=ranks

src=$BENCH_ROOT/benchmarks/p2p
out=$BENCH_BUILD_DIR/p2p
only=" ${BENCH_P2P_ONLY:-mpc openmpi mpich limit} "
wanted() { [[ $only == *" $1 "* ]]; }

bench_need_packages openmpi-bin libopenmpi-dev mpich libmpich-dev gcc
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
# A run that hangs (a deadlock in an MPI layer) is killed after this many seconds.
limit_s=$((BENCH_QUICK == 1 ? 60 : 600))


# ---- ours: libmpc, mpc_run and the start-up code from build-bench, then mpc_cc -------------
mpc_exe=""
mpc_run=$BENCH_MPC_RUN
if wanted mpc && bench_mpc_ready && bench_compile p2p mpc "$BENCH_MPC_CC" "$src/p2p.c" "$out/p2p_mpc"; then
    mpc_exe=$out/p2p_mpc
fi

# ---- the peers ---------------------------------------------------------------------------
ompi_exe=""
mpich_exe=""
limit_exe=""
if wanted openmpi; then
    bench_compile p2p openmpi mpicc.openmpi "$src/p2p.c" "$out/p2p_openmpi" && ompi_exe=$out/p2p_openmpi
fi
if wanted mpich; then
    bench_compile p2p mpich mpicc.mpich "$src/p2p.c" "$out/p2p_mpich" && mpich_exe=$out/p2p_mpich
fi
if wanted limit; then
    if gcc -O2 -pthread -o "$out/limit" "$src/limit.c" >"$BENCH_BUILD_DIR/bench-logs/p2p-build-limit.log" 2>&1; then
        limit_exe=$out/limit
    else
        bench_say "!! limit: gcc limit.c failed"
        tail -n 15 "$BENCH_BUILD_DIR/bench-logs/p2p-build-limit.log" >&2
        BENCH_FAILED=1
    fi
fi

# Open MPI: the ob1 engine over the shared-memory BTL (vader; single copy through CMA for large
# messages, its default), no network BTL probing. mpirun binds 2 ranks to one core each.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
# Hydra (MPICH) does not bind by default; bind 2 ranks to one core each like the others.
# 4 ranks on a 2-core machine: 2 busy-polling processes per core (see RESULTS.md).
ncores=$(nproc)

# run_impl IMPL RANKS MODES
run_impl() {
    local impl=$1 n=$2 modes=$3 label="p2p-$1-$2ranks"
    local pa=(--impl "$impl" --modes "$modes" "${args[@]}")
    case $impl in
    mpc)
        [[ -n $mpc_exe ]] || return 0
        bench_exec "$label" "$(command -v timeout)" -k 5 "$limit_s" "$mpc_run" -n "$n" "$mpc_exe" "${pa[@]}"
        ;;
    mpc1vp)  # both ranks on one VP (one core): a ULT switch instead of a cross-core wake-up
        [[ -n $mpc_exe ]] || return 0
        bench_exec "$label" "$(command -v timeout)" -k 5 "$limit_s" "$mpc_run" -c 1 -n "$n" "$mpc_exe" \
            --impl mpc --variant "1 VP" --modes "$modes" "${args[@]}"
        ;;
    openmpi)
        [[ -n $ompi_exe ]] || return 0
        bench_exec "$label" "$(command -v timeout)" -k 5 "$limit_s" mpirun.openmpi --allow-run-as-root \
            --oversubscribe -np "$n" "$ompi_exe" "${pa[@]}"
        ;;
    mpich)
        [[ -n $mpich_exe ]] || return 0
        local bind=()
        [[ $n -le $ncores ]] && bind=(-bind-to core)
        bench_exec "$label" "$(command -v timeout)" -k 5 "$limit_s" mpirun.mpich -np "$n" "${bind[@]}" \
            "$mpich_exe" "${pa[@]}"
        ;;
    esac
}

bench_say "benchmarks: p2p on $(bench_machine)"
mpich_version=$(mpichversion 2>/dev/null | sed -n 's/^MPICH \(Version\|Device\):[[:space:]]*//p' | tr '\n' ' ')
bench_say "benchmarks: $(mpirun.openmpi --version 2>/dev/null | head -n 1); MPICH ${mpich_version% }"
# On a VM the host moves the virtual CPUs around: the core-to-core hand-off (and with it every
# small-message latency) can change several times within a run. Probed before and after.
handoff_probe() {
    [[ -n $limit_exe ]] || return 0
    "$limit_exe" --handoff --quick 2>/dev/null | awk -F'\t' '$1 == "ROW" { printf "%.3f", $5 }'
}
bench_busy_check
handoff_before=$(handoff_probe)
run_impl mpc 2 latency,bandwidth,bibw,msgrate
run_impl mpc1vp 2 latency,bandwidth
for impl in openmpi mpich; do
    run_impl "$impl" 2 latency,bandwidth,bibw,msgrate
done
[[ -n $limit_exe ]] && bench_exec p2p-limit "$limit_exe" "${args[@]}"
for impl in mpc openmpi mpich; do
    run_impl "$impl" 4 msgrate
done

handoff_after=$(handoff_probe)

status=0
bench_report p2p || status=$?
if [[ -n $handoff_before && -n $handoff_after ]]; then
    printf '\n(core-to-core hand-off: %s us before the run, %s us after it%s)\n' "$handoff_before" "$handoff_after" \
        "$(awk -v a="$handoff_before" -v b="$handoff_after" 'BEGIN { if (a > 2 * b || b > 2 * a)
            printf "; they differ: the host moved the virtual CPUs, small-message latencies mix both states" }')"
fi

# The targets of issue 3, from the same figures.
printf '%s\n' "$BENCH_ROWS" | awk -F'\t' '
    $1 == "ROW" && $2 != "msgrate" {  # key: metric, size, impl, extra keys ("" for most)
        v[$2, $3, $4, $9] = $5; sizes[$3] = 1
    }
    function get(metric, size, impl, extra) {
        return (metric SUBSEP size SUBSEP impl SUBSEP extra) in v ? v[metric, size, impl, extra] : ""
    }
    function peer_best(metric, size, lower,   a, b) {
        a = get(metric, size, "openmpi", "")
        b = get(metric, size, "mpich", "")
        if (a == "") return b
        if (b == "") return a
        return lower ? (a + 0 < b + 0 ? a : b) : (a + 0 > b + 0 ? a : b)
    }
    function row(target, figure, ok) {
        printf "| %s | %s | %s |\n", target, figure, ok
    }
    function verdict(c) { return c ? "**yes**" : "no" }
    END {
        printf "\nTargets (issue 3):\n\n| target | figure | met? |\n|---|---|---|\n"
        p = peer_best("latency", 0, 1)
        l = get("latency", 0, "limit", "\"copy\": \"atomic hand-off\"")
        for (t = 1; t <= 2; t++) {
            m = get("latency", 0, "mpc", t == 1 ? "" : "\"variant\": \"1 VP\"")
            name = "0-byte latency <= 0.5x best of Open MPI, MPICH" (t == 1 ? " (ranks on 2 cores)" : " (both ranks on 1 VP)")
            if (m == "" || p == "") row(name, "missing figures", "n/a")
            else row(name, sprintf("mpc %.3f us vs %.3f us (%.2fx)%s", m, p, m / p,
                                   l == "" ? "" : sprintf("; core-to-core hand-off %.3f us", l)), verdict(m <= 0.5 * p))
        }
        n = 0
        for (s in sizes) if (s + 0 >= 1048576) list[++n] = s + 0
        for (i = 2; i <= n; i++) { t = list[i]; j = i; while (j > 1 && list[j-1] > t) { list[j] = list[j-1]; j-- } list[j] = t }
        for (i = 1; i <= n; i++) {
            s = list[i]
            m = get("bandwidth", s, "mpc", "")
            p = peer_best("bandwidth", s, 0)
            l = get("bandwidth", s, "limit", "\"copy\": \"warm\"")
            name = sprintf("bandwidth %d MiB >= 1.5x best peer", s / 1048576)
            if (m == "" || p == "") row(name, "missing figures", "n/a")
            else row(name, sprintf("mpc %.0f MB/s vs %.0f MB/s (%.2fx)", m, p, m / p), verdict(m >= 1.5 * p))
            name = sprintf("bandwidth %d MiB >= 80%% of warm memcpy", s / 1048576)
            if (m == "" || l == "") row(name, "missing figures", "n/a")
            else row(name, sprintf("mpc %.0f MB/s vs memcpy %.0f MB/s (%.0f%%)", m, l, 100 * m / l), verdict(m >= 0.8 * l))
        }
    }'
exit "$status"
