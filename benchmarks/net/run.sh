# benchmarks/run net: MPI point-to-point between two processes of this machine, from one source
# (benchmarks/p2p/p2p.c: ping-pong half round trip; windows of 64 messages and a reply),
# compiled unchanged with mpc_cc (run as `mpc_run -n 2 -p 2`: one rank per process, each process
# on its own core, messages over the shared-memory transport, network/shm.cpp; UCX where that
# is not available), Debian's Open MPI and Debian's MPICH (2
# processes over shared memory). The row "mpc, ucx transport only" is net::ucx_transport alone
# (benchmarks/net/ucx_pingpong.cpp, no MPI layer): the floor under ours.
#
# Two nodes over TCP (as root, where network namespaces can be made): the same program with its
# two processes on two simulated nodes (scripts/sim_nodes.sh: two network namespaces joined by a
# veth pair, a host name each), every implementation over TCP through the veth: ours and MPICH
# (ch4:ucx) with UCX_TLS=tcp, Open MPI with its TCP BTL; the peers launched as on a cluster (their
# mpirun on node 0, an rsh agent that enters node 1 for the remote daemon). Each simulated node
# has half of the CPUs (sim_nodes.sh); Open MPI runs with --bind-to none there, since its default
# binding puts each node's process on the machine's core 0, the same core for both nodes (4 ms
# per message: scheduler ticks). Rows "2 nodes, TCP".
#
# Environment: BENCH_NET_ONLY="mpc ucx openmpi mpich nodes" (a subset) runs only those ("nodes":
# the two-node rows of the implementations named).
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=size
BENCH_VALUE_FMT=auto

out=$BENCH_BUILD_DIR/net
only=" ${BENCH_NET_ONLY:-mpc ucx openmpi mpich nodes} "
BENCH_RATIO_KEYS=variant  # "vs mpc" within each variant: 2 processes, 2 nodes
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
    --allow-run-as-root -np 2 "$ompi_exe" --impl openmpi --variant "2 processes" "${pa[@]}"
[[ -n $mpich_exe ]] && bench_exec net-mpich "$(command -v timeout)" -k 5 "$limit_s" mpirun.mpich -np 2 \
    -bind-to core "$mpich_exe" --impl mpich --variant "2 processes" "${pa[@]}"

# ---- two nodes over TCP ----------------------------------------------------------------------
sim=$BENCH_ROOT/scripts/sim_nodes.sh
nodes=mpcbn$$
if wanted nodes; then
    if why=$(sh "$sim" up "$nodes"); then
        trap 'sh "$sim" down "$nodes"' EXIT
        # The peers' remote launch: "ssh HOST COMMAND" becomes "enter node HOST's namespaces, run it".
        agent=$out/sim_agent.sh
        printf '#!/bin/sh\nexec sh %q agent %q "$@"\n' "$sim" "$nodes" >"$agent"
        chmod +x "$agent"
        na=(--variant "2 nodes, TCP" "${pa[@]}")
        unset OMPI_MCA_btl
        [[ -n $mpc_exe ]] && UCX_TLS=tcp bench_exec net-nodes-mpc "$(command -v timeout)" -k 5 "$limit_s" \
            "$BENCH_MPC_RUN" -n 2 -p 2 --wrap "sh $sim wrap $nodes" "$mpc_exe" --impl mpc "${na[@]}"
        [[ -n $ompi_exe ]] && bench_exec net-nodes-openmpi "$(command -v timeout)" -k 5 "$limit_s" \
            sh "$sim" run "$nodes" 0 mpirun.openmpi --allow-run-as-root --bind-to none --mca plm_rsh_agent "$agent" \
            --mca pml ob1 --mca btl self,tcp --host 10.213.0.1,10.213.0.2 -np 2 "$ompi_exe" --impl openmpi "${na[@]}"
        [[ -n $mpich_exe ]] && bench_exec net-nodes-mpich "$(command -v timeout)" -k 5 "$limit_s" \
            sh "$sim" run "$nodes" 0 mpirun.mpich -genv UCX_TLS tcp -launcher ssh -launcher-exec "$agent" \
            -localhost 10.213.0.1 -hosts 10.213.0.1:1,10.213.0.2:1 -np 2 "$mpich_exe" --impl mpich "${na[@]}"
    else
        bench_say "== two nodes over TCP: skipped: $why"
    fi
fi
bench_report net
