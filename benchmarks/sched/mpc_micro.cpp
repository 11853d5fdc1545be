/// \file
/// Google Benchmark micro costs of the ULT engine, on one VP (the headline comparison with the
/// peers is benchmarks/run sched; this program is for looking at single calls).
///
/// The benchmarks run in the primary ULT: main() calls sched::init() before handing control to
/// Google Benchmark, so every benchmark body may yield and block.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>

#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"

namespace sched = mpc::sched;

namespace {

sched::ult* spawn_here(sched::ult_fn fn, void* arg) {
    sched::attr a;
    a.vp = sched::current_vp();
    auto r = sched::spawn(fn, arg, a);
    return r ? *r : nullptr;
}

/// A partner ULT that yields until told to stop.
struct partner {
    std::atomic<bool> stop{false};
    static void run(void* p) {
        auto* self = static_cast<partner*>(p);
        while (!self->stop.load(std::memory_order_relaxed)) {
            sched::yield();
        }
    }
};

void yield_with_partner(benchmark::State& state) {
    partner p;
    sched::ult* u = spawn_here(&partner::run, &p);
    if (u == nullptr) {
        state.SkipWithError("spawn failed");
        return;
    }
    for (auto _ : state) {
        sched::yield();  // to the partner and back: two switches
    }
    p.stop.store(true);
    (void)sched::join(u);
    state.counters["per_switch"] =
        benchmark::Counter(2.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate |
                                                                              benchmark::Counter::kInvert);
}
BENCHMARK(yield_with_partner);

void yield_alone(benchmark::State& state) {
    for (auto _ : state) {
        sched::yield();  // nothing else is ready: the fast path
    }
}
BENCHMARK(yield_alone);

void noop(void*) {}

void spawn_join(benchmark::State& state) {
    for (auto _ : state) {
        sched::ult* u = spawn_here(&noop, nullptr);
        if (u == nullptr || !sched::join(u).ok()) {
            state.SkipWithError("spawn/join failed");
            return;
        }
    }
}
BENCHMARK(spawn_join);

void spawn_detached(benchmark::State& state) {
    sched::attr a;
    a.vp = sched::current_vp();
    a.detached = true;
    for (auto _ : state) {
        auto r = sched::spawn(&noop, nullptr, a);
        if (!r) {
            state.SkipWithError("spawn failed");
            return;
        }
        sched::yield();  // let it run and end
    }
}
BENCHMARK(spawn_detached);

void semaphore_uncontended(benchmark::State& state) {
    sched::semaphore s{0};
    for (auto _ : state) {
        s.release();
        s.acquire();
    }
}
BENCHMARK(semaphore_uncontended);

void mutex_uncontended(benchmark::State& state) {
    sched::mutex m;
    for (auto _ : state) {
        m.lock();
        m.unlock();
    }
}
BENCHMARK(mutex_uncontended);

void self_and_vp(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(sched::self());
        benchmark::DoNotOptimize(sched::current_vp());
    }
}
BENCHMARK(self_and_vp);

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 2;
    }
    sched::options o;
    o.nr_vps = 1;
    if (const mpc::status st = sched::init(o); !st.ok()) {
        std::fprintf(stderr, "sched::init: %s\n", st.reason());
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return sched::finalize().ok() ? 0 : 1;
}
