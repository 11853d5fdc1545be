#!/bin/bash
# The data-buffer figures of benchmarks/tasks/scratch_redux.c (scratch buffers of 4 KiB and
# 1 MiB, redux phases on 4 KiB and 1 MiB vectors): MPC as built, MPC with its per-worker buffer
# cache and reduction tree switched off (MPC_TG_SCRATCH_CACHE=0 MPC_TG_REDUX_TREE=0: the code
# before them), MPC with only the tree off (mpc-notree), and Debian's StarPU 1.3 (skipped
# without libstarpu-dev), from the same source.
#
#   [SR_METRIC=redux1m] [SR_RAW=1] benchmarks/tasks/scratch_redux.sh BUILD_DIR [ROUNDS] [WORKERS...]
#
# The four run in turn, ROUNDS times (default 5), each run giving the minimum over 7 chunks;
# printed: the minimum over the rounds per figure, then the load average. SR_RAW=1: instead,
# every run's line (ROW metric workers impl min median us), for benchmarks/tasks/run.sh, which
# runs this script as its scratch/redux row set. STARPU_SCHED is the caller's (unset: eager).
set -euo pipefail
build=$(cd "${1:?usage: scratch_redux.sh BUILD_DIR [ROUNDS] [WORKERS...]}" && pwd)
rounds=${2:-5}
shift $(($# < 2 ? $# : 2))
workers=("$@")
((${#workers[@]} > 0)) || workers=(1 2)
src=$(dirname "${BASH_SOURCE[0]}")/scratch_redux.c
out=$build/scratch_redux
mkdir -p "$out"
pc=$build/taskgraph/pkgconfig-build
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
gcc -O2 -Wall -Wextra $(PKG_CONFIG_PATH=$pc pkg-config --cflags starpu-1.3) -o "$out/mpc" "$src" \
    $(PKG_CONFIG_PATH=$pc pkg-config --libs starpu-1.3) -Wl,-rpath,"$build" >&2
impls=(mpc mpc-nocache mpc-notree)
metric=${SR_METRIC:-}
if pkg-config --exists starpu-1.3 2>/dev/null; then
    # shellcheck disable=SC2046
    gcc -O2 $(pkg-config --cflags starpu-1.3) -o "$out/starpu" "$src" $(pkg-config --libs starpu-1.3) >&2
    impls+=(starpu)
fi
rows=$out/rows.txt
: >"$rows"
for ((r = 0; r < rounds; r++)); do
    for w in "${workers[@]}"; do
        for impl in "${impls[@]}"; do
            # The tree only changes redux phases.
            [[ $impl == mpc-notree && -n $metric && $metric != *redux* ]] && continue
            case $impl in
            mpc) env STARPU_NCPU="$w" "$out/mpc" mpc 2000 "$metric" ;;
            mpc-nocache)
                env STARPU_NCPU="$w" MPC_TG_SCRATCH_CACHE=0 MPC_TG_REDUX_TREE=0 "$out/mpc" mpc-nocache 2000 "$metric"
                ;;
            mpc-notree) env STARPU_NCPU="$w" MPC_TG_REDUX_TREE=0 "$out/mpc" mpc-notree 2000 "$metric" ;;
            starpu) env STARPU_NCPU="$w" STARPU_SILENT=1 "$out/starpu" starpu 2000 "$metric" 2>/dev/null ;;
            esac | grep '^ROW' >>"$rows"
        done
    done
done
if [[ ${SR_RAW:-0} == 1 ]]; then
    cat "$rows"
    exit 0
fi
printf '%-10s %7s %-12s %12s\n' metric workers impl 'min us'
awk -F'\t' '{k=$2" "$3" "$4; if (!(k in m) || $5 < m[k]) m[k]=$5} END {for (k in m) print k, m[k]}' "$rows" |
    sort -k1,1 -k2n -k3 | awk '{printf "%-10s %7s %-12s %12.3f\n", $1, $2, $3, $4}'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
