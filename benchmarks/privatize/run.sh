# benchmarks/run privatize: what privatization of globals costs (issue 5). The same sources
# built privatized (mpc_cc's default: each rank maps its own copy of the program) and with
# mpc_cc -fno-mpc-privatize (one copy shared by the ranks), both run with build-bench's mpc_run:
#   - per access (access.c, 1 rank): global array reads, a call across files that updates a
#     global, a static local, a _Thread_local variable;
#   - start-up (empty.c: MPI_Init + MPI_Finalize): wall time of `mpc_run -n N --stack-size 64k`
#     and the process's peak RSS, for N = 1, 64 and 1000 ranks (--quick: 1 and 64), and the
#     memory per rank, (RSS(N) - RSS(1)) / (N - 1).
# Invoked by benchmarks/run; see benchmarks/lib.sh. --quick takes about 10 s.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=ranks
BENCH_VALUE_FMT=auto
BENCH_RATIO_KEYS=""

src=$BENCH_ROOT/benchmarks/privatize
out=$BENCH_BUILD_DIR/privatize
mkdir -p "$out"
bench_build mpc mpc_run mpc_image mpc_start
mpc_cc=$BENCH_BUILD_DIR/tools/mpc_cc
mpc_run=$BENCH_BUILD_DIR/tools/mpc_run
log=$BENCH_BUILD_DIR/bench-logs/privatize-build.log
: >"$log"
for v in privatized shared; do
    flag=""
    [[ $v == shared ]] && flag=-fno-mpc-privatize
    # shellcheck disable=SC2086
    "$mpc_cc" -O2 $flag -o "$out/access_$v" "$src/access.c" "$src/access_ext.c" >>"$log" 2>&1 &&
        "$mpc_cc" -O2 $flag -o "$out/empty_$v" "$src/empty.c" >>"$log" 2>&1 ||
        { tail -n 20 "$log" >&2; bench_die "building the $v programs failed (log: $log)"; }
done

quick_arg=()
[[ $BENCH_QUICK -eq 1 ]] && quick_arg=(--quick)
for v in privatized shared; do
    bench_exec "privatize-access-$v" "$mpc_run" -n 1 "$out/access_$v" "$v" "${quick_arg[@]}"
done

# Start-up: median wall time and peak RSS over the repetitions.
reps=5
counts=(1 64 1000)
if [[ $BENCH_QUICK -eq 1 ]]; then
    reps=2
    counts=(1 64)
fi
median() { grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
minimum() { grep -v '^$' | sort -g | head -n 1; }
maximum() { grep -v '^$' | sort -g | tail -n 1; }
declare -A rss_of
for v in privatized shared; do
    for n in "${counts[@]}"; do
        times=""
        rsss=""
        for ((r = 0; r < reps; ++r)); do
            t0=$(date +%s%N)
            if ! rss=$(/usr/bin/time -f '%M' "$mpc_run" -n "$n" --stack-size 64k "$out/empty_$v" 2>&1 >/dev/null | tail -n 1); then
                bench_say "!! mpc_run -n $n empty_$v failed: $rss"
                BENCH_FAILED=1
                continue 2
            fi
            t1=$(date +%s%N)
            times+="$(((t1 - t0) / 1000))"$'\n'
            rsss+="$rss"$'\n'
        done
        tm=$(median <<<"$times")
        rm_=$(median <<<"$rsss")
        rss_of[$v,$n]=$rm_
        BENCH_ROWS+=$(printf 'ROW\tstartup\t%d\tmpc\t%s\tms\t%s\t%s\t"variant": "%s"\twall time of mpc_run -n %d --stack-size 64k of MPI_Init + MPI_Finalize' \
            "$n" "$(awk -v x="$tm" 'BEGIN { print x / 1000 }')" "$(minimum <<<"$times" | awk '{ print $1 / 1000 }')" \
            "$(maximum <<<"$times" | awk '{ print $1 / 1000 }')" "$v" "$n")$'\n'
        BENCH_ROWS+=$(printf 'ROW\tpeak_rss\t%d\tmpc\t%s\tMiB\t%s\t%s\t"variant": "%s"\tpeak RSS of the process (ru_maxrss)' \
            "$n" "$(awk -v x="$rm_" 'BEGIN { print x / 1024 }')" "$(minimum <<<"$rsss" | awk '{ print $1 / 1024 }')" \
            "$(maximum <<<"$rsss" | awk '{ print $1 / 1024 }')" "$v")$'\n'
        if [[ $n -gt 1 && -n ${rss_of[$v,1]:-} ]]; then
            per=$(awk -v a="$rm_" -v b="${rss_of[$v,1]}" -v n="$n" 'BEGIN { print (a - b) / (n - 1) }')
            BENCH_ROWS+=$(printf 'ROW\trss_per_rank\t%d\tmpc\t%s\tKiB\t%s\t%s\t"variant": "%s"\t(peak RSS with N ranks - with 1) / (N - 1)' \
                "$n" "$per" "$per" "$per" "$v")$'\n'
        fi
    done
done
bench_report privatize
