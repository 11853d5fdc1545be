#!/bin/sh
# check.sh CASE MPC_RUN LAUNCHER_PROC RUN_SHELL
# The launcher tests (ctest label "launcher", tests/launcher/CMakeLists.txt): runs mpc_run in one
# way per CASE and checks its exit status, what the processes printed and mpc_run's stderr.
#   LAUNCHER_PROC  tests/launcher/launcher_proc.cpp: one process of an `mpc_run -p` job
#   RUN_SHELL      tools/run_shell.sh: a "#!" script running its argument with sh -c
# Prints what it saw, then "FAIL: ..." and exits 1 at the first difference.
case_name=$1
run=$2
proc=$3
shell=$4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
err=$tmp/err

fail() {
  echo "FAIL: $*"
  exit 1
}

# go ARGS...: runs mpc_run ARGS..., stdout and stderr into $out and $err, status into $st.
go() {
  "$run" "$@" >"$out" 2>"$err"
  st=$?
  echo "mpc_run $* -> exit status $st"
  echo "stdout:"; cat "$out"
  echo "stderr:"; cat "$err"
}

# go_bg ARGS...: go, with mpc_run as a background job so that its pid is known ($pid).
go_bg() {
  "$run" "$@" >"$out" 2>"$err" &
  pid=$!
  wait $pid
  st=$?
  echo "mpc_run $* (pid $pid) -> exit status $st"
  echo "stdout:"; cat "$out"
  echo "stderr:"; cat "$err"
}

expect_status() {
  [ "$st" -eq "$1" ] || fail "exit status $st, expected $1"
}

# expect_lines LINE...: stdout, sorted, is exactly these lines.
expect_lines() {
  printf '%s\n' "$@" >"$tmp/want"
  sort "$out" >"$tmp/got"
  cmp -s "$tmp/want" "$tmp/got" || fail "stdout differs from the expected lines (sorted): $(cat "$tmp/want")"
}

expect_no_stderr() {
  [ ! -s "$err" ] || fail "expected nothing on stderr"
}

# expect_one_message REGEX: mpc_run wrote exactly one line of its own ("mpc_run: ...") on
# stderr, matching REGEX (grep -E, anchored).
expect_one_message() {
  n=$(grep -c '^mpc_run: ' "$err")
  [ "$n" -eq 1 ] || fail "expected exactly one 'mpc_run: ' line on stderr, got $n"
  grep -Eq "^mpc_run: $1\$" "$err" || fail "the mpc_run line does not match 'mpc_run: $1'"
}

case $case_name in
  procs3)  # 3 processes of one rank each, every one connected to the launcher
    go -n 3 -p3 "$proc"
    expect_status 0
    expect_lines "process 0 of 3: ranks 0-0 of 3, bootstrap local" \
                 "process 1 of 3: ranks 1-1 of 3, bootstrap local" \
                 "process 2 of 3: ranks 2-2 of 3, bootstrap local"
    expect_no_stderr ;;
  uneven)  # 10 ranks over 4 processes: 3 3 2 2, each process sees MPC_NRANKS=10
    go -n 10 --procs=4 "$proc"
    expect_status 0
    expect_lines "process 0 of 4: ranks 0-2 of 10, bootstrap local" \
                 "process 1 of 4: ranks 3-5 of 10, bootstrap local" \
                 "process 2 of 4: ranks 6-7 of 10, bootstrap local" \
                 "process 3 of 4: ranks 8-9 of 10, bootstrap local"
    expect_no_stderr ;;
  nranks_env)  # N from MPC_NRANKS in the environment (no -n): still the total of the job
    MPC_NRANKS=5 go --procs 2 "$proc"
    expect_status 0
    expect_lines "process 0 of 2: ranks 0-2 of 5, bootstrap local" \
                 "process 1 of 2: ranks 3-4 of 5, bootstrap local"
    expect_no_stderr ;;
  script)  # a "#!" script between mpc_run and the program: the socket survives both execs
    LAUNCHER_PROC=$proc go -n 4 -p 2 "$shell" 'exec "$LAUNCHER_PROC"'
    expect_status 0
    expect_lines "process 0 of 2: ranks 0-1 of 4, bootstrap local" \
                 "process 1 of 2: ranks 2-3 of 4, bootstrap local"
    expect_no_stderr ;;
  exit_status)  # process 1 exits 3 without finalizing: the job ends with 3 and one line
    go -n 4 -p 3 "$proc" --exit 1 3
    expect_status 3
    expect_one_message 'process 1 \(rank 2\) pid [0-9]+ exited with status 3: ending the job' ;;
  signal)  # process 2 is killed by SIGKILL: 128 + 9
    go -n 6 -p 3 "$proc" --kill 2
    expect_status 137
    expect_one_message 'process 2 \(ranks 4-5\) pid [0-9]+ was killed by signal 9 \(Killed\): ending the job' ;;
  abort)  # process 0 aborts the job with code 7
    go -n 2 -p 2 "$proc" --abort 0 7
    expect_status 7
    expect_one_message 'process 0 \(rank 0\) pid [0-9]+ called MPI_Abort\(7\): launcher_proc was asked to abort: ending the job' ;;
  wrap)  # --wrap runs each process through a command; the bootstrap socket survives it
    LAUNCHER_PROC=$proc go -n 4 -p 2 --wrap "env MPC_TEST_WRAPPED=yes" "$shell" \
      'echo "$MPC_PROC_INDEX $MPC_TEST_WRAPPED"; exec "$LAUNCHER_PROC"'
    expect_status 0
    expect_lines "0 yes" "1 yes" "process 0 of 2: ranks 0-1 of 4, bootstrap local" \
                 "process 1 of 2: ranks 2-3 of 4, bootstrap local"
    expect_no_stderr
    go -n 5 -p 2 --wrap "env  -u MPC_TEST_UNSET " "$proc"
    expect_status 0
    expect_lines "process 0 of 2: ranks 0-2 of 5, bootstrap local" \
                 "process 1 of 2: ranks 3-4 of 5, bootstrap local"
    expect_no_stderr
    go -n 2 --wrap=env\ MPC_TEST_WRAPPED=one "$shell" 'echo "$MPC_TEST_WRAPPED"'  # one process
    expect_status 0
    expect_lines "one"
    go -n 2 -p 2 --wrap /nonexistent/tool "$proc"
    expect_status 127 ;;
  yield)  # more processes than cores: mpc_run sets MPC_SCHED_YIELD=1 (unless the user set it)
    many=$(( $(nproc) + 1 ))
    LAUNCHER_PROC=$proc go -n $many -p $many "$shell" 'echo "${MPC_SCHED_YIELD-unset}"; exec "$LAUNCHER_PROC" >/dev/null'
    expect_status 0
    [ "$(sort -u "$out")" = "1" ] || fail "with $many processes each should see MPC_SCHED_YIELD=1"
    LAUNCHER_PROC=$proc MPC_SCHED_YIELD=0 go -n $many -p $many "$shell" 'echo "$MPC_SCHED_YIELD"; exec "$LAUNCHER_PROC" >/dev/null'
    expect_status 0
    [ "$(sort -u "$out")" = "0" ] || fail "the user's MPC_SCHED_YIELD=0 was not kept"
    LAUNCHER_PROC=$proc go -n 2 -p 2 "$shell" 'echo "${MPC_SCHED_YIELD-unset}"; exec "$LAUNCHER_PROC" >/dev/null'
    expect_status 0
    [ "$(sort -u "$out")" = "unset" ] || fail "2 processes on $(nproc) CPUs should not yield" ;;
  verbose)  # -v names the processes and their ranks
    go -v -n 10 -p 4 "$proc"
    expect_status 0
    grep -Fqx "mpc_run: 4 processes (ranks 0-2, 3-5, 6-7, 8-9), each: exec $proc" "$err" ||
      fail "-v does not describe the 4 processes"
    [ "$(wc -l <"$out")" -eq 4 ] || fail "expected 4 lines on stdout" ;;
  single)  # -p 1 is the plain exec of before: no launcher process, no bootstrap variables
    go_bg -n 2 -p 1 "$shell" 'echo "$$ ${MPC_BOOTSTRAP_FD-unset} ${MPC_PROC_INDEX-unset} $MPC_NRANKS"'
    expect_status 0
    expect_lines "$pid unset unset 2"
    expect_no_stderr ;;
  pmix)  # under a PMIx server mpc_run execs the program, whatever -p and -N say
    PMIX_RANK=0 SLURM_JOB_ID= go_bg -n 4 -p 2 -N 2 "$shell" 'echo "$$ ${MPC_BOOTSTRAP_FD-unset} $MPC_NRANKS"'
    expect_status 0
    expect_lines "$pid unset 4"
    expect_no_stderr ;;
  srun)  # -N in a Slurm allocation: mpc_run re-executes itself through srun (a fake one here)
    mkdir "$tmp/bin"
    printf '#!/bin/sh\necho "srun $*"\n' >"$tmp/bin/srun"
    chmod +x "$tmp/bin/srun"
    self=$(readlink -f "$run")
    SLURM_JOB_ID=42 PATH="$tmp/bin:$PATH" go -N 2 -n 4 -c 1 "$proc" a b
    expect_status 0
    expect_lines "srun --mpi=pmix -N 2 -n 2 $self -n 4 -c 1 $proc a b"
    SLURM_JOB_ID=42 PATH="$tmp/bin:$PATH" go -n 5 --nodes=2 -p 5 -- "$proc"
    expect_status 0
    expect_lines "srun --mpi=pmix -N 2 -n 5 --overcommit $self -n 5 -p 5 -- $proc" ;;
  *)
    fail "unknown case '$case_name'" ;;
esac
echo "PASS"
