# benchmarks/run net: between two processes of this machine. Until MPC's MPI engine routes
# messages between processes (issue 7), ours is the UCX transport alone (benchmarks/net/
# ucx_pingpong.cpp: net::ucx_transport, no MPI layer; rows "mpc", variant "ucx transport only"),
# the floor under MPC's point-to-point between processes; the peers are Debian's Open MPI and
# MPICH running benchmarks/p2p/p2p.c with 2 processes, as in `benchmarks/run p2p`. The two
# programs measure the same things (ping-pong half round trip; windows of 64 messages and a
# reply) but are not the same source: compare them as a floor, not as a verdict. When the
# engine routes through the transport, ours becomes p2p.c built with mpc_cc under mpc_run -p 2.
#
# Environment: BENCH_NET_ONLY="mpc openmpi mpich" (a subset) runs only those.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=size
BENCH_VALUE_FMT=auto

out=$BENCH_BUILD_DIR/net
only=" ${BENCH_NET_ONLY:-mpc openmpi mpich} "
wanted() { [[ $only == *" $1 "* ]]; }
bench_need_packages openmpi-bin libopenmpi-dev mpich libmpich-dev gcc libucx-dev
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
limit_s=$((BENCH_QUICK == 1 ? 60 : 600))

ucx_exe=""
if wanted mpc && bench_try_build net_ucx_pingpong; then
    ucx_exe=$(bench_binary net_ucx_pingpong)
fi
ompi_exe=""
mpich_exe=""
src=$BENCH_ROOT/benchmarks/p2p
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
[[ -n $ucx_exe ]] && bench_exec net-mpc "$(command -v timeout)" -k 5 "$limit_s" "$ucx_exe" "${args[@]}"
[[ -n $ompi_exe ]] && bench_exec net-openmpi "$(command -v timeout)" -k 5 "$limit_s" mpirun.openmpi \
    --allow-run-as-root -np 2 "$ompi_exe" --impl openmpi "${pa[@]}"
[[ -n $mpich_exe ]] && bench_exec net-mpich "$(command -v timeout)" -k 5 "$limit_s" mpirun.mpich -np 2 \
    -bind-to core "$mpich_exe" --impl mpich "${pa[@]}"
bench_report net
