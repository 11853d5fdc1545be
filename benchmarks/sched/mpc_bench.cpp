/// \file
/// Scheduler benchmark, MPC side: the same-VP switch (yield), ULT create+join, and the wake-up
/// ping-pong through sched::semaphore and sched::mutex + condition_variable, on one VP and
/// across two VPs. The peers measure the same things in boost_fiber_bench.cpp,
/// pthread_bench.cpp and limit_bench.cpp; benchmarks/sched/run.sh runs all of them.
///
/// Every measured run is timed inside the ULTs (after a warm-up handshake), so spawning,
/// joining and VP start-up stay outside the timed region.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/harness.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"

namespace sched = mpc::sched;
using mpc_bench::config;
using mpc_bench::now_ns;

namespace {

constexpr std::uint64_t warmup_rounds = 64;

bool check(const mpc::status& st, const char* what) {
    if (!st.ok()) {
        std::fprintf(stderr, "mpc: %s failed: %s\n", what, st.reason());
        return false;
    }
    return true;
}

/// Spawns fn(arg) on `vp`, or returns null after saying why.
sched::ult* spawn_on(sched::ult_fn fn, void* arg, int vp, const char* name) {
    sched::attr a;
    a.vp = vp;
    a.pinned = true;
    a.name = name;
    auto r = sched::spawn(fn, arg, a);
    if (!r) {
        std::fprintf(stderr, "mpc: spawn on VP %d failed: %s\n", vp, r.error().reason());
        return nullptr;
    }
    return *r;
}

/// Runs two ULTs (fa on VP va, fb on VP vb) to completion; returns what they timed, or -1.
template <class Shared>
double run_pair(Shared& sh, sched::ult_fn fa, int va, sched::ult_fn fb, int vb) {
    sched::ult* a = spawn_on(fa, &sh, va, "bench-a");
    if (a == nullptr) {
        return -1;
    }
    sched::ult* b = spawn_on(fb, &sh, vb, "bench-b");
    if (b == nullptr) {
        check(sched::join(a), "join");
        return -1;
    }
    const bool ok = check(sched::join(a), "join") && check(sched::join(b), "join");
    return ok ? static_cast<double>(sh.t1 - sh.t0) : -1.0;
}

// ---- yield: two ULTs on one VP yield to each other ---------------------------------------------

struct yield_shared {
    std::uint64_t iters = 0;
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    std::atomic<int> done{0};
};

void yield_body(void* p) {
    auto* sh = static_cast<yield_shared*>(p);
    if (sh->t0 == 0) {
        sh->t0 = now_ns();  // the first ULT to run starts the clock
    }
    for (std::uint64_t i = 0; i < sh->iters; ++i) {
        sched::yield();
    }
    if (sh->done.fetch_add(1) == 1) {
        sh->t1 = now_ns();
    }
}

double yield_run(std::uint64_t iters) {
    yield_shared sh;
    sh.iters = iters;
    return run_pair(sh, &yield_body, 0, &yield_body, 0);  // 2 * iters switches
}

// ---- create+join -------------------------------------------------------------------------------

void noop(void*) {}

double create_join_run(std::uint64_t iters) {
    sched::attr a;
    a.vp = sched::current_vp();
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < iters; ++i) {
        auto r = sched::spawn(&noop, nullptr, a);
        if (!r) {
            std::fprintf(stderr, "mpc: spawn failed: %s\n", r.error().reason());
            return -1;
        }
        if (!check(sched::join(*r), "join")) {
            return -1;
        }
    }
    return static_cast<double>(now_ns() - t0);
}

// ---- wake-up ping-pong through sched::semaphore ------------------------------------------------

struct sem_shared {
    std::uint64_t iters = 0;
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    sched::semaphore ping{0};
    sched::semaphore pong{0};
};

void sem_ping(void* p) {
    auto* sh = static_cast<sem_shared*>(p);
    for (std::uint64_t i = 0; i < warmup_rounds + sh->iters; ++i) {
        if (i == warmup_rounds) {
            sh->t0 = now_ns();
        }
        sh->ping.release();
        sh->pong.acquire();
    }
    sh->t1 = now_ns();
}

void sem_pong(void* p) {
    auto* sh = static_cast<sem_shared*>(p);
    for (std::uint64_t i = 0; i < warmup_rounds + sh->iters; ++i) {
        sh->ping.acquire();
        sh->pong.release();
    }
}

// ---- wake-up ping-pong through sched::mutex + condition_variable -------------------------------

struct cv_shared {
    std::uint64_t iters = 0;
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    sched::mutex m;
    sched::condition_variable cv;
    int turn = 0;  // 1: pong's turn, 0: ping's turn; guarded by m
};

void cv_ping(void* p) {
    auto* sh = static_cast<cv_shared*>(p);
    sh->m.lock();
    for (std::uint64_t i = 0; i < warmup_rounds + sh->iters; ++i) {
        if (i == warmup_rounds) {
            sh->t0 = now_ns();
        }
        sh->turn = 1;
        sh->cv.notify_one();
        while (sh->turn != 0) {
            sh->cv.wait(sh->m);
        }
    }
    sh->t1 = now_ns();
    sh->m.unlock();
}

void cv_pong(void* p) {
    auto* sh = static_cast<cv_shared*>(p);
    sh->m.lock();
    for (std::uint64_t i = 0; i < warmup_rounds + sh->iters; ++i) {
        while (sh->turn != 1) {
            sh->cv.wait(sh->m);
        }
        sh->turn = 0;
        sh->cv.notify_one();
    }
    sh->m.unlock();
}

template <class Shared>
double pingpong_run(std::uint64_t iters, sched::ult_fn ping, sched::ult_fn pong, int vp_pong) {
    Shared sh;
    sh.iters = iters;
    return run_pair(sh, ping, 0, pong, vp_pong);  // 2 * iters one-way wake-ups
}

// ---- driver ------------------------------------------------------------------------------------

sched::vp_stats sum_stats() {
    sched::vp_stats t;
    for (int v = 0; v < sched::nr_vps(); ++v) {
        const sched::vp_stats s = sched::stats(v);
        t.switches += s.switches;
        t.remote_wakeups += s.remote_wakeups;
        t.sleeps += s.sleeps;
        t.polls += s.polls;
    }
    return t;
}

/// Measures and prints one figure; also prints on stderr what the VPs did per operation.
template <class Body>
void bench(const config& c, const char* metric, int vps, Body&& body, double ops_per_iter, const std::string& extra,
           const char* what) {
    if (!mpc_bench::selected(c, metric)) {
        return;
    }
    const mpc_bench::sample s = mpc_bench::measure(c, body, ops_per_iter);
    mpc_bench::emit(metric, vps, "mpc", s, "ns", extra, what);
    if (s.ok) {  // one more run, to see what the VPs did per operation
        const sched::vp_stats before = sum_stats();
        const double t = body(s.iters);
        const sched::vp_stats after = sum_stats();
        const double ops = static_cast<double>(s.iters) * ops_per_iter;
        std::fprintf(stderr,
                     "    check run: %.2f ns/op; per op: %.3f switches, %.3f remote wake-ups, %.5f VP sleeps, "
                     "%.3f polls\n",
                     t / ops, static_cast<double>(after.switches - before.switches) / ops,
                     static_cast<double>(after.remote_wakeups - before.remote_wakeups) / ops,
                     static_cast<double>(after.sleeps - before.sleeps) / ops,
                     static_cast<double>(after.polls - before.polls) / ops);
    }
}

bool with_runtime(int nr_vps, const config& c, void (*fn)(const config&)) {
    sched::options o;
    o.nr_vps = nr_vps;
    if (!check(sched::init(o), "init")) {
        return false;
    }
    if (sched::nr_vps() != nr_vps) {
        std::fprintf(stderr, "mpc: asked for %d VPs, got %d\n", nr_vps, sched::nr_vps());
    }
    for (int v = 0; v < sched::nr_vps(); ++v) {
        const mpc::topo::place pl = sched::vp_place(v);
        std::fprintf(stderr, "mpc: VP %d on PU %d (core %d)%s\n", v, pl.pu, pl.core, pl.shared ? " shared" : "");
    }
    fn(c);
    return check(sched::finalize(), "finalize");
}

void one_vp(const config& c) {
    bench(c, "yield", 1, &yield_run, 2.0, "", "sched::yield, 2 ULTs on 1 VP, per switch");
    bench(c, "create_join", 1, &create_join_run, 1.0, "",
          "sched::spawn(noop) + sched::join on the same VP (default stack)");
    bench(
        c, "wakeup", 1,
        [](std::uint64_t n) { return pingpong_run<sem_shared>(n, &sem_ping, &sem_pong, 0); }, 2.0,
        "\"primitive\": \"semaphore\"", "sched::semaphore ping-pong, 2 ULTs on 1 VP, per one-way wake-up");
    bench(
        c, "wakeup", 1,
        [](std::uint64_t n) { return pingpong_run<cv_shared>(n, &cv_ping, &cv_pong, 0); }, 2.0,
        "\"primitive\": \"condvar\"", "sched::mutex+condition_variable ping-pong, 2 ULTs on 1 VP");
}

void two_vps(const config& c) {
    bench(
        c, "wakeup", 2,
        [](std::uint64_t n) { return pingpong_run<sem_shared>(n, &sem_ping, &sem_pong, 1); }, 2.0,
        "\"primitive\": \"semaphore\"", "sched::semaphore ping-pong, ULTs on VP 0 and VP 1, per one-way wake-up");
    bench(
        c, "wakeup", 2,
        [](std::uint64_t n) { return pingpong_run<cv_shared>(n, &cv_ping, &cv_pong, 1); }, 2.0,
        "\"primitive\": \"condvar\"", "sched::mutex+condition_variable ping-pong, ULTs on VP 0 and VP 1");
}

}  // namespace

int main(int argc, char** argv) {
    const config c = mpc_bench::parse_args(argc, argv);
    (void)mpc_bench::allowed_cpus();  // before init() pins this thread to VP 0's core
    bool ok = with_runtime(1, c, &one_vp);
    if (mpc_bench::allowed_cpus().size() < 2) {
        std::fprintf(stderr, "mpc: only one CPU allowed; skipping the two-VP figures\n");
    } else if (mpc_bench::selected(c, "wakeup")) {
        ok = with_runtime(2, c, &two_vps) && ok;
    }
    return ok ? 0 : 1;
}
