#!/bin/sh
# Runs PROGRAM ARGS... as if each pair of processes of an `mpc_run -p P` job were a node of its
# own: MPC_NODE_NAME=node<MPC_PROC_INDEX / 2> (the comm_shared test).
MPC_NODE_NAME="node$(( ${MPC_PROC_INDEX:-0} / 2 ))"
export MPC_NODE_NAME
exec "$@"
