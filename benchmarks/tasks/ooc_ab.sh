#!/bin/bash
# A/B of benchmarks/tasks/ooc.c: the programs benchmarks/tasks/ooc.sh built in BUILD/ooc, run
# with an older libmpc.so (the directory OLD_LIB, swapped in with LD_LIBRARY_PATH: "old"), with
# the build's ("new"), the build's without helper threads (MPC_SCHED_IO_THREADS=0: "new-io0")
# and Debian's StarPU, alternated in each round, on the unistd, unistd_o_direct and "slow"
# (5 ms per call) disks. Prints ooc's ROW lines (field 9: MiB/s).
#
#   benchmarks/tasks/ooc_ab.sh BUILD OLD_LIB [ROUNDS]
set -u
build=$1 old=$2 rounds=${3:-5}
sw=$(mktemp -d /var/tmp/ab-XXXX)
for ((r = 0; r < rounds; r++)); do
  for disk in unistd unistd_o_direct slow; do
    for v in old new new-io0 starpu; do
      rm -rf "$sw"/*; mkdir -p "$sw/d"
      e=(STARPU_NCPU=2 STARPU_SILENT=1 STARPU_LIMIT_CPU_MEM=64)
      if [[ $disk == slow ]]; then e+=(OOC_DISK_DIR=$sw/d OOC_DISK_DELAY_US=5000); else e+=(STARPU_DISK_SWAP=$sw/d STARPU_DISK_SWAP_BACKEND=$disk STARPU_DISK_SWAP_SIZE=2048); fi
      exe=$build/ooc/mpc
      case $v in old) e+=(LD_LIBRARY_PATH=$old);; new-io0) e+=(MPC_SCHED_IO_THREADS=0);; starpu) exe=$build/ooc/starpu;; esac
      env "${e[@]}" "$exe" "$v-$disk" 32 8 3 8 2>/dev/null | grep ^ROW
    done
  done
done
rm -rf "$sw"
