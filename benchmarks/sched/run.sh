# benchmarks/run sched: the ULT engine (scheduler/) against Boost.Fiber, kernel threads and
# physical bounds. Figures: same-VP switch (yield), create+join, wake-up ping-pong on one VP
# and across two VPs. Invoked by benchmarks/run; see benchmarks/lib.sh.
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
bench_need_packages libboost-fiber-dev libbenchmark-dev
bench_build sched_bench_mpc sched_bench_boost_fiber sched_bench_pthread sched_bench_limit

args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
bench_say "benchmarks: sched on $(bench_machine)"
bench_busy_check
bench_exec mpc "$(bench_binary sched_bench_mpc)" "${args[@]}"
bench_exec boost.fiber "$(bench_binary sched_bench_boost_fiber)" "${args[@]}"
bench_exec pthread "$(bench_binary sched_bench_pthread)" "${args[@]}"
bench_exec limit "$(bench_binary sched_bench_limit)" "${args[@]}"
bench_report sched
