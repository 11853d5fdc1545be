/// \file
/// Scheduler benchmark, pthread peer (kernel threads): the same figures as mpc_bench.cpp.
///
///  - yield: sched_yield() between two threads pinned on ONE core (a kernel context switch per
///    yield when the scheduler honours it; the share of yields that really switched is printed
///    on stderr);
///  - create_join: pthread_create(noop) + pthread_join, default attributes;
///  - wakeup: pthread_mutex + pthread_cond ping-pong between two threads, both pinned on one
///    core (vps 1) and pinned on two different cores (vps 2).
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "common/harness.hpp"

using mpc_bench::config;
using mpc_bench::now_ns;

namespace {

constexpr std::uint64_t warmup_rounds = 64;

/// Both threads wait here until the other has started (yielding: they may share a core).
void rendezvous(std::atomic<int>& arrived) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) {
        sched_yield();
    }
}

// ---- yield -------------------------------------------------------------------------------------

double last_switch_share = 0;  // share of sched_yield calls that let the other thread run

double yield_run(std::uint64_t iters) {
    const int cpu = mpc_bench::two_cores().first;
    std::atomic<int> arrived{0};
    std::atomic<int> last{-1};
    std::atomic<std::uint64_t> t0{0};
    std::atomic<std::uint64_t> t1{0};
    std::atomic<std::uint64_t> switched{0};
    std::atomic<int> done{0};
    auto body = [&](int me) {
        mpc_bench::pin_to_cpu(cpu);
        rendezvous(arrived);
        std::uint64_t expected = 0;
        t0.compare_exchange_strong(expected, now_ns());
        std::uint64_t sw = 0;
        for (std::uint64_t i = 0; i < iters; ++i) {
            sched_yield();
            if (last.load(std::memory_order_relaxed) != me) {
                ++sw;
                last.store(me, std::memory_order_relaxed);
            }
        }
        switched.fetch_add(sw);
        if (done.fetch_add(1) == 1) {
            t1.store(now_ns());
        }
    };
    std::thread a(body, 0);
    std::thread b(body, 1);
    a.join();
    b.join();
    last_switch_share = static_cast<double>(switched.load()) / (2.0 * static_cast<double>(iters));
    return static_cast<double>(t1.load() - t0.load());
}

// ---- create+join -------------------------------------------------------------------------------

void* noop(void*) { return nullptr; }

double create_join_run(std::uint64_t iters) {
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < iters; ++i) {
        pthread_t t;
        if (pthread_create(&t, nullptr, &noop, nullptr) != 0 || pthread_join(t, nullptr) != 0) {
            std::fprintf(stderr, "pthread: create/join failed\n");
            return -1;
        }
    }
    return static_cast<double>(now_ns() - t0);
}

// ---- wake-up ping-pong -------------------------------------------------------------------------

struct cv_shared {
    std::uint64_t iters = 0;
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int turn = 0;  // 1: pong's turn, 0: ping's turn; guarded by m
};

void cv_ping(cv_shared& sh) {
    pthread_mutex_lock(&sh.m);
    for (std::uint64_t i = 0; i < warmup_rounds + sh.iters; ++i) {
        if (i == warmup_rounds) {
            sh.t0 = now_ns();
        }
        sh.turn = 1;
        pthread_cond_signal(&sh.cv);
        while (sh.turn != 0) {
            pthread_cond_wait(&sh.cv, &sh.m);
        }
    }
    sh.t1 = now_ns();
    pthread_mutex_unlock(&sh.m);
}

void cv_pong(cv_shared& sh) {
    pthread_mutex_lock(&sh.m);
    for (std::uint64_t i = 0; i < warmup_rounds + sh.iters; ++i) {
        while (sh.turn != 1) {
            pthread_cond_wait(&sh.cv, &sh.m);
        }
        sh.turn = 0;
        pthread_cond_signal(&sh.cv);
    }
    pthread_mutex_unlock(&sh.m);
}

double wakeup_run(std::uint64_t iters, int cpu_ping, int cpu_pong) {
    cv_shared sh;
    sh.iters = iters;
    std::thread pong([&] {
        mpc_bench::pin_to_cpu(cpu_pong);
        cv_pong(sh);
    });
    std::thread ping([&] {
        mpc_bench::pin_to_cpu(cpu_ping);
        cv_ping(sh);
    });
    ping.join();
    pong.join();
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.m);
    return static_cast<double>(sh.t1 - sh.t0);
}

template <class Body>
void bench(const config& c, const char* metric, int vps, Body&& body, double ops_per_iter, const std::string& extra,
           const char* what) {
    if (mpc_bench::selected(c, metric)) {
        mpc_bench::emit(metric, vps, "pthread", mpc_bench::measure(c, body, ops_per_iter), "ns", extra, what);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const config c = mpc_bench::parse_args(argc, argv);
    const auto [c0, c1] = mpc_bench::two_cores();
    mpc_bench::pin_to_cpu(c0);  // created threads inherit it
    bench(c, "yield", 1, &yield_run, 2.0, "\"primitive\": \"sched_yield\"",
          "sched_yield, 2 kernel threads pinned on 1 core, per yield");
    if (mpc_bench::selected(c, "yield")) {
        std::fprintf(stderr, "    last run: %.1f%% of sched_yield calls switched to the other thread\n",
                     100.0 * last_switch_share);
    }
    bench(c, "create_join", 1, &create_join_run, 1.0, "", "pthread_create(noop) + pthread_join, default attributes");
    bench(
        c, "wakeup", 1, [&](std::uint64_t n) { return wakeup_run(n, c0, c0); }, 2.0, "\"primitive\": \"condvar\"",
        "pthread mutex+cond ping-pong, 2 threads pinned on 1 core");
    if (c0 != c1) {
        bench(
            c, "wakeup", 2, [&, a = c0, b = c1](std::uint64_t n) { return wakeup_run(n, a, b); }, 2.0,
            "\"primitive\": \"condvar\"", "pthread mutex+cond ping-pong, 2 threads pinned on 2 cores");
    } else {
        std::fprintf(stderr, "pthread: only one CPU allowed; skipping the two-core figure\n");
    }
    return 0;
}
