#!/bin/sh
# slurm_guard.sh CMD ARGS...
# Runs CMD for a test labelled "slurm" when a Slurm controller answers and a node is up;
# otherwise prints why and exits 77, which ctest reports as skipped (SKIP_RETURN_CODE 77).
# scripts/slurm-up.sh (root) starts a one-node Slurm on localhost; CI does that first.
state=$(sinfo -h -o %T 2>/dev/null | tr '\n' ' ')
case $state in
*idle* | *mix* | *alloc*) exec "$@" ;;
esac
echo "slurm_guard: skipped: no Slurm node is up (sinfo: '${state% }'); run scripts/slurm-up.sh as root" >&2
exit 77
