#!/bin/sh
# pmix_launcher.sh MPC_RUN PROGRAM ARGS...: an MPC job started by another PMIx launcher than
# srun: Open MPI's mpirun (its PMIx server gives each process PMIX_RANK, and mpc_run then execs
# the program, which bootstraps through PMIx), 2 processes of `mpc_run -n 5` (3 + 2 ranks).
# PROGRAM prints one "... OK" line from rank 0: two such lines would mean two separate jobs of 5
# ranks. Exit 77 (skipped) with the reason when Open MPI's mpirun is not installed.
mpirun=$(command -v mpirun.openmpi) || { echo "SKIP: no mpirun.openmpi (Debian package openmpi-bin)"; exit 77; }
mpc_run=$1
shift
out=$("$mpirun" --allow-run-as-root --oversubscribe -np 2 "$mpc_run" -n 5 "$@" 2>&1)
status=$?
printf '%s\n' "$out"
[ $status -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
oks=$(printf '%s\n' "$out" | grep -c " OK")
[ "$oks" -eq 1 ] || { echo "FAIL: $oks 'OK' lines, expected 1 (one job of 5 ranks over 2 processes)"; exit 1; }
