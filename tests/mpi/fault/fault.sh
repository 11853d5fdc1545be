#!/bin/sh
# fault.sh MPC_RUN FAULT N P DEATH WAIT VICTIM
# One fault test (ctest label "fault", CMakeLists.txt here): runs `mpc_run -n N -p P FAULT DEATH
# WAIT VICTIM DIR` (fault.c: rank VICTIM ends its process in the way DEATH says while the other
# ranks wait for it in WAIT; DEATH=external: this script kills that process with SIGKILL once
# fault.c says it is ready) and checks that
#   - mpc_run ends within $FAULT_TIMEOUT seconds (default 30) with the status DEATH implies;
#   - stderr holds exactly one line of mpc_run, naming the victim's process, its ranks, its pid
#     and what happened, at most the victim's own line (the fault, MPI_Abort, ...), nothing else;
#     stdout is empty;
#   - every rank started (DIR/pid.<rank>) and no process of the job is left;
#   - none of the shared memory the processes mapped (DIR/shm.<rank>) is left: no file under
#     /dev/shm, no SysV segment (and no SysV segment created by a process of the job).
# FAULT_LAUNCH="srun --mpi=pmix ..." runs the job as `srun ... -n P mpc_run -n N FAULT ...`
# instead (label slurm): the PMIx server ends the step, srun reports the failure in its own
# words (its lines are not checked) and its status is the code of an exit through end_job
# (MPI_Abort, a rank returning without MPI_Finalize: PMIx_Abort), else 137 (the survivors are
# killed with SIGKILL).
# Prints what it saw, then "FAIL: ..." and exits 1 at the first difference.
run=$1
prog=$2
n=$3
p=$4
death=$5
wait_in=$6
victim=$7
limit=${FAULT_TIMEOUT:-30}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
out=$dir/out
err=$dir/err

fail() {
  echo "FAIL: $*"
  exit 1
}

# The victim's process and its ranks (net::layout: the first N mod P processes get one more).
base=$((n / p))
extra=$((n % p))
if [ "$victim" -lt $(((base + 1) * extra)) ]; then
  proc=$((victim / (base + 1)))
else
  proc=$((extra + (victim - (base + 1) * extra) / base))
fi
count=$base
[ "$proc" -lt "$extra" ] && count=$((base + 1))
first=$((proc * base + (proc < extra ? proc : extra)))
if [ "$count" -eq 1 ]; then
  ranks="rank $first"
else
  ranks="ranks $first-$((first + count - 1))"
fi

# What the job must end with: status, the reason in mpc_run's line, the victim's own line.
own=""
case $death in
  kill | external)
    want=137
    reason="was killed by signal 9 \\(Killed\\)" ;;
  segv)
    want=139
    reason="exited with status 139 after a fatal signal 11 \\(Segmentation fault\\) in a rank, reported above"
    own="mpc: fatal: ULT [0-9]+ \"rank $victim\" on VP [0-9]+: segmentation fault \\(address not mapped\\) at address 0x0" ;;
  exit0)
    want=1
    reason="exited without finalizing \\(MPI_Finalize was not called\\)" ;;
  exit3)
    want=3
    reason="exited with status 3" ;;
  return0)
    want=1
    reason="exited with status 1"
    own="mpc: rank $victim returned from main without calling MPI_Finalize: ending the job" ;;
  abort)
    want=5
    reason="exited with status 5"
    own="mpc: rank $victim called MPI_Abort\\(MPI_COMM_WORLD, 5\\): ending the job" ;;
  *) fail "unknown DEATH '$death'" ;;
esac

# $FAULT_LAUNCH (srun ...) runs mpc_run P times, each one process of the job.
if [ -n "$FAULT_LAUNCH" ]; then
  case $death in exit0 | exit3 | segv) want=137 ;; esac
  set -- $FAULT_LAUNCH -n "$p" "$run" -n "$n" "$prog" "$death" "$wait_in" "$victim" "$dir"
else
  set -- "$run" -n "$n" -p "$p" "$prog" "$death" "$wait_in" "$victim" "$dir"
fi
echo "timeout $limit $*"
timeout "$limit" "$@" >"$out" 2>"$err" &
job=$!
if [ "$death" = external ]; then
  # fault.c's victim writes DIR/ready once every rank is past start-up and waits.
  i=0
  while [ ! -s "$dir/ready" ] && kill -0 $job 2>/dev/null && [ $i -lt $((limit * 10)) ]; do
    sleep 0.1
    i=$((i + 1))
  done
  [ -s "$dir/ready" ] || { wait $job; cat "$out" "$err"; fail "the victim never said it was ready"; }
  victim_pid=$(cat "$dir/pid.$victim")
  echo "kill -KILL $victim_pid (the process of rank $victim)"
  kill -KILL "$victim_pid"
fi
wait $job
st=$?
echo "exit status $st"
echo "stdout:"; cat "$out"
echo "stderr:"; cat "$err"

[ "$st" -ne 124 ] || fail "the job did not end within $limit s"
[ "$st" -eq "$want" ] || fail "exit status $st, expected $want"
[ ! -s "$out" ] || fail "expected nothing on stdout"

# Every rank started and wrote its pid; P processes in all.
r=0
while [ $r -lt "$n" ]; do
  [ -s "$dir/pid.$r" ] || fail "rank $r did not write its pid (did it start?)"
  r=$((r + 1))
done
pids=$(cat "$dir"/pid.* | sort -u)
[ "$(echo "$pids" | wc -l)" -eq "$p" ] || fail "expected $p processes, the ranks wrote pids: $pids"
victim_pid=$(cat "$dir/pid.$victim")

# stderr: mpc_run's one line, the victim's own line if DEATH prints one, nothing else.
if [ -z "$FAULT_LAUNCH" ]; then
  lines=$(grep -c '^mpc_run: ' "$err")
  [ "$lines" -eq 1 ] || fail "expected exactly one 'mpc_run: ' line on stderr, got $lines"
  line="mpc_run: process $proc \\($ranks\\) pid $victim_pid $reason: ending the job"
  grep -Eqx "$line" "$err" || fail "the mpc_run line does not match '$line'"
  grep -Evx "$line" "$err" >"$dir/rest"
else
  grep -Ev '^(srun|slurmstepd)' "$err" >"$dir/rest"
fi
if [ -n "$own" ]; then
  lines=$(grep -Ecx "$own" "$dir/rest")
  [ "$lines" -eq 1 ] || fail "expected the victim's line '$own' once on stderr, got it $lines times"
  grep -Evx "$own" "$dir/rest" >"$dir/rest2"
  mv "$dir/rest2" "$dir/rest"
fi
[ ! -s "$dir/rest" ] || fail "unexpected lines on stderr: $(cat "$dir/rest")"

# No process of the job is left (a pid still there running this program).
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$prog"; then
    fail "process $pid of the job is still running"
  fi
done

# No shared memory left: what the processes had mapped, and SysV segments they created.
cat "$dir"/shm.* 2>/dev/null | sort -u >"$dir/shm"
if [ -z "$UCX_TLS" ] && ! grep -q . "$dir/shm"; then
  fail "no process listed any shared memory (the shared-memory transports not used?)"
fi
while read -r kind what; do
  case $kind in
    posix) [ ! -e "$what" ] || fail "$what is left after the job" ;;
    sysv) ! awk -v id="$what" 'NR > 1 && $2 == id { found = 1 } END { exit !found }' /proc/sysvipc/shm ||
            fail "SysV shared memory segment $what is left after the job" ;;
    memfd) ;;  # MPC's shm transport: no name anywhere, freed with the last mapping (every process is gone)
  esac
done <"$dir/shm"
for pid in $pids; do
  ! awk -v pid="$pid" 'NR > 1 && $5 == pid { found = 1 } END { exit !found }' /proc/sysvipc/shm ||
    fail "a SysV shared memory segment created by process $pid is left after the job"
done
if [ -z "$FAULT_LAUNCH" ]; then
  echo "ok: the job ended with status $st, one line naming process $proc ($ranks), nothing left"
else
  echo "ok: the job ended with status $st, nothing left"
fi
