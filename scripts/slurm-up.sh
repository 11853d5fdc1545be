#!/usr/bin/env bash
# Starts a throw-away single-node Slurm (slurmctld + slurmd on localhost, PMIx plugin) for the
# tests that run MPC jobs under `srun --mpi=pmix` (ctest label `slurm`). Root only; meant for CI
# machines and development boxes, never for a real cluster: authentication is off
# (auth/none). Installs slurm-wlm if missing (libpmix-dev comes with scripts/install-deps.sh:
# Slurm's PMIx plugin loads its unversioned libpmix.so). Idempotent: a running Slurm with an
# idle node is left alone. `scripts/slurm-up.sh stop` stops the daemons it started.
# Recipe: ../shared/notes/slurm-pmix.md (tested with Slurm 22.05.8 and OpenPMIx 4.2.2).
set -euo pipefail

pidfiles=(/var/run/slurmd.pid /var/run/slurmctld.pid)

stop() {
  for pf in "${pidfiles[@]}"; do  # slurmd first; by pid file, never by name
    [[ -s $pf ]] || continue
    pid=$(cat "$pf")
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  done
}

if [[ ${1:-} == stop ]]; then
  stop
  exit 0
fi
if ((EUID != 0)); then
  echo "slurm-up: must run as root (it writes /etc/slurm and starts the daemons)" >&2
  exit 1
fi
idle() { [[ "$(sinfo -h -n localhost -o %T 2>/dev/null || true)" == idle ]]; }
if command -v sinfo >/dev/null && idle; then
  echo "slurm-up: Slurm is running, node localhost idle"
  exit 0
fi
if ! command -v slurmd >/dev/null || [[ ! -e /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends slurm-wlm libpmix-dev >/dev/null ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends slurm-wlm libpmix-dev >/dev/null; }
fi
stop
# The real CPUs/sockets/cores/memory from slurmd -C, renamed to localhost.
nodeline=$(slurmd -C | head -n1 | sed 's/^NodeName=[^ ]*/NodeName=localhost NodeAddr=127.0.0.1/')
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
rm -rf /var/spool/slurmctld/* /var/spool/slurmd/*
cat >/etc/slurm/slurm.conf <<CONF
ClusterName=mpcci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MailProg=/usr/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/var/run/slurmctld.pid
SlurmdPidFile=/var/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
$nodeline State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
/usr/sbin/slurmctld
/usr/sbin/slurmd
for _ in $(seq 60); do
  idle && break
  sleep 1
done
if ! idle; then
  echo "slurm-up: the node did not become idle; the daemons' logs:" >&2
  sinfo -N -o '%N %T %E' >&2 || true
  tail -n 30 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
  exit 1
fi
echo "slurm-up: Slurm is running, node localhost idle ($(srun --mpi=list 2>&1 | tr '\n' ' '))"
