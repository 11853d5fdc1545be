/// \file
/// Scheduler benchmark, Boost.Fiber peer: the same figures as mpc_bench.cpp.
///
///  - yield: two fibers on one thread, boost::this_fiber::yield();
///  - create_join: boost::fibers::fiber(noop).join(), default stack allocator (and the pooled
///    one, as a second row);
///  - wakeup, one thread: two fibers ping-pong through boost::fibers::mutex + condition_variable;
///  - wakeup, two threads: each thread (pinned to its own core) runs one side of the ping-pong on
///    its main fiber; the fibers never migrate, and notify_one() from the other thread goes
///    through the scheduler's remote ready queue. Two schedulers: Boost's default round_robin,
///    whose idle thread sleeps on a std::condition_variable, and `spin` (round_robin whose idle
///    thread keeps polling instead of sleeping), the fairer match for a spinning VP.
#include <boost/fiber/all.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/harness.hpp"

namespace fibers = boost::fibers;
using mpc_bench::config;
using mpc_bench::now_ns;

namespace {

constexpr std::uint64_t warmup_rounds = 64;

/// round_robin whose idle dispatcher polls its remote ready queue instead of sleeping.
class spin_round_robin final : public fibers::algo::round_robin {
public:
    void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {}
    void notify() noexcept override {}
};

// ---- yield -------------------------------------------------------------------------------------

double yield_run(std::uint64_t iters) {
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    int done = 0;
    auto body = [&] {
        if (t0 == 0) {
            t0 = now_ns();
        }
        for (std::uint64_t i = 0; i < iters; ++i) {
            boost::this_fiber::yield();
        }
        if (++done == 2) {
            t1 = now_ns();
        }
    };
    fibers::fiber a(body);
    fibers::fiber b(body);
    a.join();
    b.join();
    return static_cast<double>(t1 - t0);
}

// ---- create+join -------------------------------------------------------------------------------

double create_join_run(std::uint64_t iters) {
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < iters; ++i) {
        fibers::fiber f([] {});
        f.join();
    }
    return static_cast<double>(now_ns() - t0);
}

double create_join_pooled_run(std::uint64_t iters) {
    static fibers::pooled_fixedsize_stack pool;  // keeps its stacks across runs
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < iters; ++i) {
        fibers::fiber f(std::allocator_arg, pool, [] {});
        f.join();
    }
    return static_cast<double>(now_ns() - t0);
}

// ---- wake-up ping-pong -------------------------------------------------------------------------

struct cv_shared {
    std::uint64_t iters = 0;
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    fibers::mutex m;
    fibers::condition_variable cv;
    int turn = 0;  // 1: pong's turn, 0: ping's turn; guarded by m
};

void cv_ping(cv_shared& sh) {
    std::unique_lock<fibers::mutex> lk(sh.m);
    for (std::uint64_t i = 0; i < warmup_rounds + sh.iters; ++i) {
        if (i == warmup_rounds) {
            sh.t0 = now_ns();
        }
        sh.turn = 1;
        sh.cv.notify_one();
        sh.cv.wait(lk, [&] { return sh.turn == 0; });
    }
    sh.t1 = now_ns();
}

void cv_pong(cv_shared& sh) {
    std::unique_lock<fibers::mutex> lk(sh.m);
    for (std::uint64_t i = 0; i < warmup_rounds + sh.iters; ++i) {
        sh.cv.wait(lk, [&] { return sh.turn == 1; });
        sh.turn = 0;
        sh.cv.notify_one();
    }
}

double wakeup_one_thread_run(std::uint64_t iters) {
    cv_shared sh;
    sh.iters = iters;
    fibers::fiber a([&] { cv_ping(sh); });
    fibers::fiber b([&] { cv_pong(sh); });
    a.join();
    b.join();
    return static_cast<double>(sh.t1 - sh.t0);
}

/// Each side on the main fiber of its own thread, pinned to its own core.
template <class Algo>
double wakeup_two_threads_run(std::uint64_t iters) {
    auto sh = std::make_unique<cv_shared>();
    sh->iters = iters;
    const auto [c0, c1] = mpc_bench::two_cores();
    std::thread pong([&, c = c1] {
        mpc_bench::pin_to_cpu(c);
        fibers::use_scheduling_algorithm<Algo>();
        cv_pong(*sh);
    });
    std::thread ping([&, c = c0] {
        mpc_bench::pin_to_cpu(c);
        fibers::use_scheduling_algorithm<Algo>();
        cv_ping(*sh);
    });
    ping.join();
    pong.join();
    return static_cast<double>(sh->t1 - sh->t0);
}

template <class Body>
void bench(const config& c, const char* metric, int vps, Body&& body, double ops_per_iter, const std::string& extra,
           const char* what) {
    if (mpc_bench::selected(c, metric)) {
        mpc_bench::emit(metric, vps, "boost.fiber", mpc_bench::measure(c, body, ops_per_iter), "ns", extra, what);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const config c = mpc_bench::parse_args(argc, argv);
    const auto [c0, c1] = mpc_bench::two_cores();
    mpc_bench::pin_to_cpu(c0);  // the one-thread figures run on the main thread
    bench(c, "yield", 1, &yield_run, 2.0, "", "this_fiber::yield, 2 fibers on 1 thread, per switch");
    bench(c, "create_join", 1, &create_join_run, 1.0, "\"stack\": \"default\"",
          "fiber(noop).join(), default fixedsize_stack (malloc)");
    bench(c, "create_join", 1, &create_join_pooled_run, 1.0, "\"stack\": \"pooled\"",
          "fiber(noop).join(), pooled_fixedsize_stack");
    bench(c, "wakeup", 1, &wakeup_one_thread_run, 2.0, "\"primitive\": \"condvar\"",
          "fibers::mutex+condition_variable ping-pong, 2 fibers on 1 thread");
    if (c0 != c1) {
        bench(c, "wakeup", 2, &wakeup_two_threads_run<fibers::algo::round_robin>, 2.0,
              "\"primitive\": \"condvar\", \"scheduler\": \"round_robin\"",
              "fibers::mutex+condition_variable, 1 fiber on each of 2 pinned threads, round_robin (idle sleeps)");
        bench(c, "wakeup", 2, &wakeup_two_threads_run<spin_round_robin>, 2.0,
              "\"primitive\": \"condvar\", \"scheduler\": \"spin\"",
              "fibers::mutex+condition_variable, 1 fiber on each of 2 pinned threads, idle dispatcher spins");
    } else {
        std::fprintf(stderr, "boost.fiber: only one CPU allowed; skipping the two-thread figures\n");
    }
    return 0;
}
