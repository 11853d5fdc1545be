#!/bin/sh
# Two "nodes" on one machine (scripts/sim_nodes.sh: two network namespaces joined by a veth pair,
# one host name each): runs an MPI job with the first half of its processes on node 0 and the
# rest on node 1, UCX over TCP between them.
#
#   two_nodes.sh [--blocked] [--min-bytes B] [--no-lane L] [--lane L] MPC_RUN -n N -p P PROGRAM [ARGS...]
#
# UCX_TLS=tcp: UCX takes two namespaces of one kernel for one machine (same boot id), so it would
# pick its shared-memory transports between them, whose wake-up signals (abstract unix sockets)
# do not cross network namespaces; between real nodes only TCP (or a fabric) exists. Checks: the
# job's status is 0; every connection is a TCP one (UCX) or MPC's own shared memory, at least one
# is TCP, and shared memory joins only processes of one node (MPC_LOG_LEVEL=net:debug names them);
# the two veths carried at least B bytes (default 1).
#   --blocked   no packet crosses between the nodes (sim_nodes.sh block): the job must end
#               within seconds with status 2 and a line naming the process it cannot reach
#               (MPC_NET_CONNECT_TIMEOUT=3).
#   --no-lane L no TCP connection may carry UCX lane L (e.g. rma_bw: the test's UCX settings
#               must have taken effect)
#   --lane L    every TCP connection must carry UCX lane L
# Needs root; where namespaces cannot be created it prints why and exits 77 (ctest's
# SKIP_RETURN_CODE).
set -u
sim=$(cd "$(dirname "$0")/../../../scripts" && pwd)/sim_nodes.sh

blocked=0
min_bytes=1
no_lane=
lane=
while :; do
    case "${1:-}" in
        --blocked) blocked=1; shift ;;
        --min-bytes) min_bytes=$2; shift 2 ;;
        --no-lane) no_lane=$2; shift 2 ;;
        --lane) lane=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "usage: $0 [--blocked] [--min-bytes B] MPC_RUN ARGS..." >&2; exit 2; }
mpc_run=$1
shift

fail() {
    echo "FAIL: $*"
    exit 1
}

name=mpn$$  # unique to this run: tests run in parallel
out=$(mktemp)
cleanup() {
    sh "$sim" down "$name"
    rm -f "$out"
}
why=$(sh "$sim" up "$name")
case $? in
    0) ;;
    77) echo "SKIP: two simulated nodes need network namespaces: $why"; exit 77 ;;
    *) fail "cannot set up the simulated nodes: $why" ;;
esac
trap cleanup EXIT
trap 'exit 1' INT TERM
if [ $blocked -eq 1 ]; then
    sh "$sim" block "$name" || fail "cannot block the link"
    export MPC_NET_CONNECT_TIMEOUT=3
fi

export UCX_TLS=tcp
export MPC_LOG_LEVEL="${MPC_LOG_LEVEL:-warn},net:debug"
start=$(date +%s)
"$mpc_run" --wrap "sh $sim wrap $name" "$@" >"$out" 2>&1
status=$?
elapsed=$(( $(date +%s) - start ))
grep -v "debug net:" "$out"

if [ $blocked -eq 1 ]; then
    [ $status -eq 2 ] || fail "exit status $status, expected 2 (peers unreachable)"
    grep -q "cannot reach process [0-9]* (rank[^)]*, node mpcsim[01])" "$out" ||
        fail "no line naming the unreachable process"
    [ $elapsed -le 30 ] || fail "the job took $elapsed s to end"
    echo "OK: unreachable peers reported in $elapsed s, status 2"
    exit 0
fi
[ $status -eq 0 ] || fail "exit status $status"
conns=$(grep -c "debug net: connected to peer" "$out")
[ "$conns" -gt 0 ] || fail "no connection logged"
if grep "debug net: connected to peer" "$out" | grep -v "over tcp/" | grep -v "over shared memory" >/dev/null; then
    fail "a connection neither over TCP nor over shared memory: $(grep 'connected to peer' "$out" |
        grep -v 'over tcp/' | grep -v 'over shared memory' | head -1)"
fi
tcp=$(grep -c "debug net: connected to peer [0-9]* over tcp/" "$out")
[ "$tcp" -gt 0 ] || fail "no connection over TCP"
if [ -n "$no_lane" ] && grep "debug net: connected to peer [0-9]* over tcp/" "$out" | grep -q "[ (]$no_lane[ )#]"; then
    fail "a TCP connection carries lane $no_lane: $(grep 'over tcp/' "$out" | grep "$no_lane" | head -1)"
fi
if [ -n "$lane" ] && grep "debug net: connected to peer [0-9]* over tcp/" "$out" | grep -v "[ (]$lane[ )#]" >/dev/null; then
    fail "a TCP connection without lane $lane: $(grep 'over tcp/' "$out" | grep -v "$lane" | head -1)"
fi
procs=$(for a in "$@"; do [ "${prev:-}" = "-p" ] && echo "$a"; prev=$a; done)
shm=$(grep "debug net: connected to peer [0-9]* over shared memory" "$out" |
    sed 's/.*connected to peer \([0-9]*\) over shared memory (from process \([0-9]*\)).*/\1 \2/')
echo "$shm" | while read -r peer me; do
    [ -n "$peer" ] || continue
    [ $((peer * 2 / procs)) -eq $((me * 2 / procs)) ] ||
        { echo "FAIL: processes $me and $peer of different nodes connected over shared memory"; exit 1; }
done || exit 1
total=0
for n in 0 1; do
    sent=$(sh "$sim" tx "$name" $n)
    echo "node $n sent $sent bytes over its veth"
    total=$((total + sent))
done
[ "$total" -ge "$min_bytes" ] || fail "the nodes sent $total bytes to each other, expected at least $min_bytes"
echo "OK: $conns connections, $tcp over TCP, the others over shared memory inside a node"
