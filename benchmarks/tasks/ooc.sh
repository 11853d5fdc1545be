#!/bin/bash
# Out-of-core streaming (benchmarks/tasks/ooc.c): NH vectors of MIB MiB under a memory limit
# that holds a quarter of them, with a swap disk; MiB/s of the vectors' data through read-write
# tasks, from the same source built against MPC and against Debian's StarPU 1.3 (skipped
# without libstarpu-dev). Disks: the unistd backend (through the page cache), unistd_o_direct
# (O_DIRECT, around it), and "slow" (the program's own unistd disk with every read and write
# 5 ms late: a device with latency). MPC runs as built and with MPC_SCHED_IO_THREADS=4 (its
# disk calls on helper threads, the caller's ULT parked).
#
#   benchmarks/tasks/ooc.sh BUILD_DIR [ROUNDS] [WORKERS...]
#
# The runtimes alternate inside each round (default 3 rounds, 2 workers); printed: one line per
# run (ROW ooc LABEL NH MIB PASSES REPS seconds MiB/s), then the median MiB/s per label.
set -euo pipefail
build=$(cd "${1:?usage: ooc.sh BUILD_DIR [ROUNDS] [WORKERS...]}" && pwd)
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
workers=("$@")
((${#workers[@]} > 0)) || workers=(2)
src=$(dirname "${BASH_SOURCE[0]}")/ooc.c
out=$build/ooc
mkdir -p "$out"
pc=$build/taskgraph/pkgconfig-build
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
gcc -O2 -Wall -Wextra $(PKG_CONFIG_PATH=$pc pkg-config --cflags starpu-1.3) -o "$out/mpc" "$src" \
    $(PKG_CONFIG_PATH=$pc pkg-config --libs starpu-1.3) -Wl,-rpath,"$build" >&2
impls=(mpc mpc-io4)
if pkg-config --exists starpu-1.3 2>/dev/null; then
    # shellcheck disable=SC2046
    gcc -O2 $(pkg-config --cflags starpu-1.3) -o "$out/starpu" "$src" $(pkg-config --libs starpu-1.3) >&2
    impls+=(starpu)
fi
nh=32 mib=8 passes=3 reps=8 limit=64
swap=$(mktemp -d /var/tmp/mpc-ooc-XXXXXX)
trap 'rm -rf "$swap"' EXIT
rows=$out/rows.txt
: >"$rows"
for ((r = 0; r < rounds; r++)); do
    for w in "${workers[@]}"; do
        for disk in unistd unistd_o_direct slow; do
            for impl in "${impls[@]}"; do
                rm -rf "${swap:?}"/* && mkdir -p "$swap/d"
                env=(STARPU_NCPU="$w" STARPU_SILENT=1 STARPU_LIMIT_CPU_MEM=$limit)
                if [[ $disk == slow ]]; then
                    env+=(OOC_DISK_DIR="$swap/d" OOC_DISK_DELAY_US=5000)
                else
                    env+=(STARPU_DISK_SWAP="$swap/d" STARPU_DISK_SWAP_BACKEND=$disk STARPU_DISK_SWAP_SIZE=2048)
                fi
                exe=$out/${impl%%-*}
                [[ $impl == mpc-io4 ]] && env+=(MPC_SCHED_IO_THREADS=4)
                env "${env[@]}" "$exe" "$impl-$disk-w$w" $nh $mib $passes $reps 2>/dev/null | grep '^ROW' | tee -a "$rows"
            done
        done
    done
done
echo "median MiB/s over $rounds round(s) ($nh vectors of $mib MiB, limit $limit MiB, $passes passes, $reps adds per task):"
awk -F'\t' '{v[$3] = v[$3] " " $9} END {for (k in v) print k, v[k]}' "$rows" | sort | while read -r label vals; do
    # shellcheck disable=SC2086
    printf '%-28s %8.1f   (%s)\n' "$label" "$(printf '%s\n' $vals | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" "$vals"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
