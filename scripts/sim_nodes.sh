#!/bin/sh
# Two simulated nodes on one machine: two network namespaces joined by a veth pair (10.213.0.1
# and 10.213.0.2), each process placed in one of them also gets its own host name (a UTS
# namespace: mpcsim0, mpcsim1), so MPI libraries see two hosts talking over TCP. Needs root.
#
#   sim_nodes.sh up NAME           creates NAME0 and NAME1 (NAME: at most 10 characters), waits
#                                  until the link is up; exit 77 with the reason on stdout when
#                                  namespaces cannot be created here
#   sim_nodes.sh down NAME         deletes them (and the veth pair)
#   sim_nodes.sh block NAME        each side's neighbour entry for the other points to a MAC
#                                  nobody has: no packet crosses any more
#   sim_nodes.sh run NAME NODE CMD...  runs CMD on node NODE (0 or 1), with SIM_NODE_DEV set to
#                                  that node's veth, on that node's half of the CPUs
#   sim_nodes.sh wrap NAME CMD...  for `mpc_run --wrap`: the first half of the processes
#                                  (MPC_PROC_INDEX < MPC_PROC_COUNT / 2) on node 0, the rest on 1
#   sim_nodes.sh tx NAME NODE      bytes node NODE sent over its veth so far
#   sim_nodes.sh agent NAME [-OPTS] HOST CMD...  an rsh/ssh agent for MPI launchers (Open MPI's
#                                  plm_rsh_agent, MPICH's -launcher-exec): runs the shell command
#                                  CMD on the node whose address is HOST (10.213.0.1 or .2)
set -u
cmd=${1:-}
name=${2:-}
[ -n "$cmd" ] && [ -n "$name" ] || { echo "usage: $0 up|down|block|run|wrap|tx NAME ..." >&2; exit 2; }
shift 2

# The CPUs of node N: its half of the allowed ones (both halves = all of them with one CPU), as
# if the nodes were machines of their own (peers that bind "to the first core of the node"
# would otherwise put both nodes' processes on one core).
node_cpus() {
    n=$(getconf _NPROCESSORS_ONLN)  # not nproc: a wrapped process may be bound to one CPU already
    if [ "$n" -lt 2 ]; then echo 0; return; fi
    half=$((n / 2))
    if [ "$1" -eq 0 ]; then echo "0-$((half - 1))"; else echo "$half-$((n - 1))"; fi
}

case $cmd in
    up)
        if [ "$(id -u)" -ne 0 ]; then echo "not root"; exit 77; fi
        for tool in ip unshare hostname; do
            command -v $tool >/dev/null 2>&1 || { echo "no '$tool' command"; exit 77; }
        done
        err=$(ip netns add "${name}0" 2>&1) || { echo "ip netns add: $err"; exit 77; }
        err=$(ip netns add "${name}1" 2>&1) || { ip netns del "${name}0"; echo "ip netns add: $err"; exit 77; }
        if ! err=$(ip link add "${name}v0" netns "${name}0" type veth peer name "${name}v1" netns "${name}1" 2>&1); then
            ip netns del "${name}0"
            ip netns del "${name}1"
            echo "veth pair: $err"
            exit 77
        fi
        for n in 0 1; do
            ip -n "$name$n" link set lo up &&
                ip -n "$name$n" addr add "10.213.0.$((n + 1))/24" dev "${name}v$n" &&
                ip -n "$name$n" link set "${name}v$n" up || exit 1
        done
        # UCX and the peers use only running interfaces: wait for the carrier on both ends.
        tries=0
        until ip -n "${name}0" link show "${name}v0" | grep -q "state UP" &&
            ip -n "${name}1" link show "${name}v1" | grep -q "state UP"; do
            tries=$((tries + 1))
            if [ $tries -gt 100 ]; then
                echo "the veth pair did not come up" >&2
                exit 1
            fi
            sleep 0.05
        done ;;
    down)
        ip netns del "${name}0" 2>/dev/null
        ip netns del "${name}1" 2>/dev/null  # deleting a namespace deletes its end of the veth pair
        true ;;
    block)
        ip -n "${name}0" neigh replace 10.213.0.2 lladdr 02:00:00:00:00:01 dev "${name}v0" nud permanent &&
            ip -n "${name}1" neigh replace 10.213.0.1 lladdr 02:00:00:00:00:01 dev "${name}v1" nud permanent ;;
    run|wrap)
        if [ "$cmd" = run ]; then
            node=$1
            shift
        else
            node=$(( ${MPC_PROC_INDEX:?not run by mpc_run -p} * 2 / ${MPC_PROC_COUNT:?} ))
        fi
        SIM_NODE_DEV=${name}v$node
        export SIM_NODE_DEV
        exec ip netns exec "$name$node" unshare --uts taskset -c "$(node_cpus $node)" \
            sh -c "hostname mpcsim$node && exec \"\$@\"" sh "$@" ;;
    agent)
        while [ "${1#-}" != "$1" ]; do shift; done  # ssh options (-x)
        case $1 in
            10.213.0.1|mpcsim0) node=0 ;;
            10.213.0.2|mpcsim1) node=1 ;;
            *) echo "$0 agent: unknown host '$1'" >&2; exit 255 ;;
        esac
        shift
        exec ip netns exec "$name$node" unshare --uts taskset -c "$(node_cpus $node)" \
            sh -c "hostname mpcsim$node && $*" ;;
    tx)
        ip netns exec "$name$1" cat "/sys/class/net/${name}v$1/statistics/tx_bytes" ;;
    *)
        echo "$0: unknown command '$cmd'" >&2
        exit 2 ;;
esac
