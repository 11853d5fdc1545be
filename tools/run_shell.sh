#!/bin/sh
# run_shell.sh COMMAND: test helper, a "#!" script that mpc_run accepts as a program (it does not
# check scripts); runs COMMAND with sh -c, so tests can inspect the environment mpc_run sets.
exec /bin/sh -c "$1"
