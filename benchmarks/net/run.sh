# benchmarks/run net: MPI point-to-point between two processes of this machine, from one source
# (benchmarks/p2p/p2p.c: ping-pong half round trip; windows of 64 messages and a reply),
# compiled unchanged with mpc_cc (run as `mpc_run -n 2 -p 2`: one rank per process, each process
# on its own core, messages over the UCX module), Debian's Open MPI and Debian's MPICH (2
# processes over shared memory). The row "mpc, ucx transport only" is net::ucx_transport alone
# (benchmarks/net/ucx_pingpong.cpp, no MPI layer): the floor under ours.
#
# Environment: BENCH_NET_ONLY="mpc ucx openmpi mpich" (a subset) runs only those.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=size
BENCH_VALUE_FMT=auto

out=$BENCH_BUILD_DIR/net
only=" ${BENCH_NET_ONLY:-mpc ucx openmpi mpich} "
wanted() { [[ $only == *" $1 "* ]]; }
bench_need_packages openmpi-bin libopenmpi-dev mpich libmpich-dev gcc libucx-dev
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
limit_s=$((BENCH_QUICK == 1 ? 60 : 600))

ucx_exe=""
if wanted ucx && bench_try_build net_ucx_pingpong; then
    ucx_exe=$(bench_binary net_ucx_pingpong)
fi
ompi_exe=""
mpich_exe=""
mpc_exe=""
src=$BENCH_ROOT/benchmarks/p2p
if wanted mpc && bench_mpc_ready && bench_compile net mpc "$BENCH_MPC_CC" "$src/p2p.c" "$out/p2p_mpc"; then
    mpc_exe=$out/p2p_mpc
fi
if wanted openmpi; then
    bench_compile net openmpi mpicc.openmpi "$src/p2p.c" "$out/p2p_openmpi" && ompi_exe=$out/p2p_openmpi
fi
if wanted mpich; then
    bench_compile net mpich mpicc.mpich "$src/p2p.c" "$out/p2p_mpich" && mpich_exe=$out/p2p_mpich
fi

# Open MPI over its shared-memory BTL (as in benchmarks/p2p); both peers bind their 2 processes
# to one core each, as ucx_pingpong pins its two.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
pa=(--modes latency,bandwidth "${args[@]}")

bench_say "benchmarks: net on $(bench_machine)"
bench_say "benchmarks: UCX $(dpkg-query -W -f='${Version}' libucx0 2>/dev/null); $(mpirun.openmpi --version 2>/dev/null | head -n 1)"
bench_busy_check
[[ -n $mpc_exe ]] && bench_exec net-mpc "$(command -v timeout)" -k 5 "$limit_s" "$BENCH_MPC_RUN" -n 2 -p 2 \
    "$mpc_exe" --impl mpc --variant "2 processes" "${pa[@]}"
[[ -n $ucx_exe ]] && bench_exec net-ucx "$(command -v timeout)" -k 5 "$limit_s" "$ucx_exe" "${args[@]}"
[[ -n $ompi_exe ]] && bench_exec net-openmpi "$(command -v timeout)" -k 5 "$limit_s" mpirun.openmpi \
    --allow-run-as-root -np 2 "$ompi_exe" --impl openmpi "${pa[@]}"
[[ -n $mpich_exe ]] && bench_exec net-mpich "$(command -v timeout)" -k 5 "$limit_s" mpirun.mpich -np 2 \
    -bind-to core "$mpich_exe" --impl mpich "${pa[@]}"
bench_report net
