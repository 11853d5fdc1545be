# benchmarks/run hpcc: the HPC Challenge suite (HPCC 1.5.0, Debian's source package `hpcc`),
# a public MPI benchmark, compiled unchanged with mpc_cc and with Debian's MPICH (mpicc.mpich) and
# Open MPI (mpicc.openmpi), each linked with Debian's OpenBLAS, and run side by side: HPL, the
# StarDGEMM and StarSTREAM kernels on every rank at once, PTRANS, MPIRandomAccess, MPIFFT, and
# the b_eff ping-pong and ring latencies and bandwidths. Every implementation must report
# "Success=1" (HPCC's own residual and result checks); a run that does not is reported as
# failed and its figures are left out. Invoked by benchmarks/run; see benchmarks/lib.sh.
#
# Source: $BENCH_HPCC_TARBALL (hpcc_1.5.0.orig.tar.gz) when set, else the tarball in
# build-bench/hpcc/src, else `apt-get source --download-only hpcc` there (needs a deb-src line
# in /etc/apt/sources.list.d; the script says so when it is missing).
#
# Unchanged, except for Open MPI: HPL calls MPI_Address and MPI_Type_struct (removed by
# MPI-3.0) without declaring them. MPICH's and our libraries export them and the C compiler
# accepts the undeclared call (a warning); Open MPI's mpi.h turns those names into a
# compile-time error, which -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 lifts (its library has them).
#
# Ranks: 2 (HPL grid 1 x 2) and 4 (2 x 2); the peers' 4 processes share the 2 cores of this
# machine (Open MPI with mpi_yield_when_idle, MPICH busy-polling), ours are 4 user-level threads
# on 2 VPs. Rounds: BENCH_HPCC_ROUNDS (3; 1 with --quick), the implementations alternating
# within a round; the table gives the median over the rounds, min .. max beside it. HPL's N:
# BENCH_HPCC_N (3000; 1000 with --quick); the other tests size themselves from it.
# A full run takes about 3 minutes on a 2-core machine, --quick about 40 s.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=ranks
BENCH_VALUE_FMT=auto

bench_need_packages libopenblas-dev libopenmpi-dev openmpi-bin libmpich-dev mpich gcc make
out=$BENCH_BUILD_DIR/hpcc
mkdir -p "$out/src" "$BENCH_BUILD_DIR/bench-logs"
rounds=${BENCH_HPCC_ROUNDS:-$((BENCH_QUICK == 1 ? 1 : 3))}
hpl_n=${BENCH_HPCC_N:-$((BENCH_QUICK == 1 ? 1000 : 3000))}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_HPCC_ROUNDS must be a positive integer (got '$rounds')"
[[ $hpl_n =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_HPCC_N must be a positive integer (got '$hpl_n')"

# ---- the source -------------------------------------------------------------------------------
tarball=${BENCH_HPCC_TARBALL:-}
if [[ -z $tarball ]]; then
    tarball=$(find "$out/src" -maxdepth 1 -name 'hpcc_*.orig.tar.gz' | head -n 1)
fi
if [[ -z $tarball ]]; then
    bench_say "benchmarks: fetching HPCC's source (apt-get source --download-only hpcc)"
    (cd "$out/src" && apt-get source --download-only hpcc >"$BENCH_BUILD_DIR/bench-logs/hpcc-fetch.log" 2>&1) || true
    tarball=$(find "$out/src" -maxdepth 1 -name 'hpcc_*.orig.tar.gz' | head -n 1)
    [[ -n $tarball ]] || bench_die "no HPCC source: apt-get source hpcc needs a deb-src entry, e.g.
  sed 's/^Types: deb\$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >/etc/apt/sources.list.d/debian-src.sources && apt-get update
or set BENCH_HPCC_TARBALL to hpcc_1.5.0.orig.tar.gz (log: $BENCH_BUILD_DIR/bench-logs/hpcc-fetch.log)"
fi

# ---- builds: one source tree per implementation, HPL's make with a Make.<impl> of ours ---------
mpc_ok=0
bench_mpc_ready && mpc_ok=1
declare -A cc_of=([mpc]=$BENCH_MPC_CC [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
declare -A extra_of=([mpc]="" [mpich]="" [openmpi]="-DOMPI_OMIT_MPI1_COMPAT_DECLS=0")
impls=()
for impl in mpc mpich openmpi; do
    [[ $impl == mpc && $mpc_ok -eq 0 ]] && continue
    tree=$out/$impl
    log=$BENCH_BUILD_DIR/bench-logs/hpcc-build-$impl.log
    rm -rf "$tree"
    mkdir -p "$tree"
    tar xzf "$tarball" -C "$tree" --strip-components=1
    # HPL's make include: our compiler, OpenBLAS through its C interface, no MPI paths (the
    # wrappers know them); -fcommon for HPCC's tentative definitions (GCC 10+ defaults to
    # -fno-common).
    sed -e "s|^ARCH .*|ARCH         = $impl|" -e 's|^MPinc .*|MPinc        =|' -e 's|^MPlib .*|MPlib        =|' \
        -e 's|^LAlib .*|LAlib        = -lopenblas|' -e "s|^CC  .*|CC           = ${cc_of[$impl]}|" \
        -e "s|^LINKER .*|LINKER       = ${cc_of[$impl]}|" \
        -e "s|^CCFLAGS .*|CCFLAGS      = \$(HPL_DEFS) -O2 -fcommon ${extra_of[$impl]}|" \
        "$tree/hpl/setup/Make.Linux_PII_CBLAS" >"$tree/hpl/Make.$impl"
    if (cd "$tree" && make arch="$impl" -j"$(nproc)") >"$log" 2>&1 && [[ -x $tree/hpcc ]]; then
        impls+=("$impl")
    else
        bench_say "!! hpcc with $impl: the build failed; last lines of $log:"
        tail -n 15 "$log" >&2
        BENCH_FAILED=1
    fi
done
[[ ${#impls[@]} -gt 0 ]] || bench_die "HPCC built with no implementation"

# hpccinf.txt: HPCC's sample input with HPL's N and the process grid P x Q.
write_input() {  # DIR N P Q
    awk -v n="$2" -v p="$3" -v q="$4" '
        NR == 6 { print n "         Ns"; next }
        NR == 8 { print "128          NBs"; next }
        NR == 11 { print p "            Ps"; next }
        NR == 12 { print q "            Qs"; next }
        { print }' "$1/_hpccinf.txt" >"$1/hpccinf.txt"
}

# metric key in HPCC's summary -> our metric name, unit, description
metrics=(
    "HPL_Tflops|hpl|GFlop/s|HPL (LU with partial pivoting), N=$hpl_n, NB=128|1000"
    "StarDGEMM_Gflops|star_dgemm|GFlop/s|DGEMM on every rank at once, per rank|1"
    "StarSTREAM_Triad|star_stream_triad|GB/s|STREAM triad on every rank at once, per rank|1"
    "PTRANS_GBs|ptrans|GB/s|parallel matrix transpose (A = A^T + B)|1"
    "MPIRandomAccess_GUPs|mpi_random_access|GUP/s|random updates of a distributed table|1"
    "MPIFFT_Gflops|mpi_fft|GFlop/s|distributed 1-D complex FFT|1"
    "AvgPingPongLatency_usec|pingpong_latency|us|b_eff: mean ping-pong latency over rank pairs (8 B)|1"
    "AvgPingPongBandwidth_GBytes|pingpong_bandwidth|GB/s|b_eff: mean ping-pong bandwidth over rank pairs (2 MB)|1"
    "NaturallyOrderedRingLatency_usec|ring_latency_natural|us|b_eff: ring in rank order, latency (8 B)|1"
    "RandomlyOrderedRingLatency_usec|ring_latency_random|us|b_eff: rings in random orders, latency (8 B)|1"
    "NaturallyOrderedRingBandwidth_GBytes|ring_bandwidth_natural|GB/s|b_eff: ring in rank order, bandwidth per rank (2 MB)|1"
    "RandomlyOrderedRingBandwidth_GBytes|ring_bandwidth_random|GB/s|b_eff: rings in random orders, bandwidth per rank (2 MB)|1"
)

ncores=$(nproc)
failures=()
declare -A vals
run_one() {  # IMPL RANKS ROUND
    local impl=$1 n=$2 r=$3 tree=$out/$1 p q cmd
    p=1
    q=$n
    [[ $n -eq 4 ]] && p=2 && q=2
    write_input "$tree" "$hpl_n" "$p" "$q"
    rm -f "$tree/hpccoutf.txt"
    case $impl in
    mpc) cmd=("$BENCH_MPC_RUN" -n "$n" ./hpcc) ;;
    openmpi)
        cmd=(env OMPI_MCA_mpi_yield_when_idle=$((n > ncores ? 1 : 0)) mpirun.openmpi --allow-run-as-root
            --oversubscribe -np "$n" ./hpcc)
        ;;
    mpich)
        local bind=()
        [[ $n -le $ncores ]] && bind=(-bind-to core)
        cmd=(mpiexec.mpich -n "$n" "${bind[@]}" ./hpcc)
        ;;
    esac
    local log=$BENCH_BUILD_DIR/bench-logs/hpcc-$impl-n$n-r$r.log
    bench_say "== hpcc-$impl-n$n-r$r (${cmd[*]}; log: $log)"
    if ! (cd "$tree" && OPENBLAS_NUM_THREADS=1 timeout -k 10 600 "${cmd[@]}") >"$log" 2>&1; then
        failures+=("$impl, $n ranks, round $r: exit status not 0; last line of $log: $(tail -n 1 "$log")")
        return 0
    fi
    cp "$tree/hpccoutf.txt" "$BENCH_BUILD_DIR/bench-logs/hpccoutf-$impl-n$n-r$r.txt"
    if ! grep -q '^Success=1$' "$tree/hpccoutf.txt"; then
        failures+=("$impl, $n ranks, round $r: HPCC reports Success=0 (a failed check; see $BENCH_BUILD_DIR/bench-logs/hpccoutf-$impl-n$n-r$r.txt); figures left out")
        return 0
    fi
    local m key name scale v
    for m in "${metrics[@]}"; do
        IFS='|' read -r key name _ _ scale <<<"$m"
        v=$(sed -n "s/^$key=//p" "$tree/hpccoutf.txt" | head -n 1)
        [[ -n $v ]] && vals[$name,$n,$impl]+="$(awk -v v="$v" -v s="$scale" 'BEGIN { printf "%.6g", v * s }') "
    done
}

bench_say "benchmarks: hpcc on $(bench_machine); $(basename "$tarball"); HPL N=$hpl_n; $rounds round(s)"
for n in 2 4; do
    for ((r = 1; r <= rounds; ++r)); do
        k=$(((r - 1) % ${#impls[@]}))
        for ((i = 0; i < ${#impls[@]}; ++i)); do  # the order rotated from round to round
            run_one "${impls[$(((i + k) % ${#impls[@]}))]}" "$n" "$r"
        done
    done
done

for m in "${metrics[@]}"; do
    IFS='|' read -r _ name unit what _ <<<"$m"
    for n in 2 4; do
        for impl in "${impls[@]}"; do
            list=${vals[$name,$n,$impl]:-}
            [[ -n $list ]] || continue
            # median, min, max over the rounds
            read -r med lo hi < <(tr ' ' '\n' <<<"$list" | grep -v '^$' | sort -g |
                awk '{ v[NR] = $1 } END { printf "%s %s %s\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }')
            BENCH_ROWS+=$(printf 'ROW\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t%s' "$name" "$n" "$impl" "$med" "$unit" "$lo" "$hi" \
                "$what; median of $rounds round(s)")
            BENCH_ROWS+=$'\n'
        done
    done
done

bench_report hpcc || true
if [[ ${#failures[@]} -gt 0 ]]; then
    printf '\nFailed runs:\n'
    printf -- '- %s\n' "${failures[@]}"
    BENCH_FAILED=1
fi
exit "$BENCH_FAILED"
