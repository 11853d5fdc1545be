// ult_demo: thousands of user-level threads (ULTs) on a few virtual processors (VPs).
//
//   mpc_run -c 2 ./ult_demo [NR_ULTS]        (default 10000)
//
// Each ULT computes a little, yields, increments a counter shared by all of them under a
// sched::mutex, sleeps (its VP runs the others meanwhile), and every 100th one moves itself to
// the next VP with move_to(). Then all of them meet at one sched::barrier, so every ULT is alive
// at the same time, and the main flow (the primary ULT) joins them. The program prints the
// topology, where each VP runs, what each VP did, and "OK" when the counter, the barrier and the
// moves all check out; it exits 1 otherwise.
//
// The engine is configured from the environment (MPC_VPS, MPC_BIND, MPC_STACK_SIZE, ...),
// which mpc_run sets from its flags.

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"

namespace sched = mpc::sched;

namespace {

constexpr int increments_per_ult = 10;  // mutex-protected increments each ULT makes
constexpr int move_every = 100;         // every 100th ULT moves to the next VP

struct alignas(64) vp_counts {
    std::atomic<long> started{0};  // ULTs that began on this VP
    std::atomic<long> ended{0};    // ULTs that finished on this VP
};

struct demo {
    explicit demo(long n, int vps) : nr_ults(n), nr_vps(vps), per_vp(new vp_counts[vps]), meet(n) {}

    const long nr_ults;
    const int nr_vps;
    std::unique_ptr<vp_counts[]> per_vp;
    sched::mutex lock;
    std::uint64_t counter = 0;  // guarded by lock
    sched::barrier meet;
    std::atomic<long> leaders{0};  // ULTs for which arrive_and_wait() returned true
    std::atomic<long> moves{0};
    std::atomic<long> bad_moves{0};  // move_to() failed or landed elsewhere
    std::atomic<std::uint64_t> checksum{0};
};

/// A few microseconds of arithmetic that the compiler cannot drop.
std::uint64_t work(std::uint64_t seed) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (int i = 0; i < 2000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

void ult_body(demo& d, long i) noexcept {
    d.per_vp[sched::current_vp()].started.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t h = work(static_cast<std::uint64_t>(i));
    for (int r = 0; r < increments_per_ult; ++r) {
        d.lock.lock();
        ++d.counter;
        d.lock.unlock();
        if (r % 3 == 0) {
            sched::yield();
        }
    }
    sched::sleep_for(std::chrono::microseconds(100 + 50 * (i % 10)));
    if (i % move_every == 0 && d.nr_vps > 1) {
        const int target = (sched::current_vp() + 1) % d.nr_vps;
        if (!sched::move_to(target).ok() || sched::current_vp() != target) {
            d.bad_moves.fetch_add(1, std::memory_order_relaxed);
        }
        d.moves.fetch_add(1, std::memory_order_relaxed);
    }
    if (d.meet.arrive_and_wait()) {
        d.leaders.fetch_add(1, std::memory_order_relaxed);
    }
    h ^= work(h);
    d.checksum.fetch_xor(h, std::memory_order_relaxed);
    d.per_vp[sched::current_vp()].ended.fetch_add(1, std::memory_order_relaxed);
}

void print_error(const char* what, const mpc::status& st) {
    std::fprintf(stderr, "ult_demo: %s failed: %s%s%s\n", what, st.reason(), st.sys_errno() ? ": " : "",
                 st.sys_errno() ? std::strerror(st.sys_errno()) : "");
}

/// Spawns every ULT and joins them all; false on an engine error (already reported).
bool run(demo& d) {
    std::vector<sched::ult*> ults;
    ults.reserve(static_cast<std::size_t>(d.nr_ults));
    for (long i = 0; i < d.nr_ults; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "demo %ld", i);
        sched::attr a;
        a.name = name;
        a.stealable = (i % 2) == 1;  // half of them may be taken by an idle VP
        auto u = sched::spawn([&d, i]() noexcept { ult_body(d, i); }, a);
        if (!u) {
            // The others wait at a barrier sized for all of them: they can never finish.
            print_error("spawn", u.error());
            std::fflush(nullptr);
            std::_Exit(1);
        }
        ults.push_back(*u);
    }
    bool ok = true;
    for (sched::ult* u : ults) {
        mpc::status st = sched::join(u);
        if (!st) {
            print_error("join", st);
            ok = false;
        }
    }
    return ok;
}

void print_summary(const demo& d, double elapsed_s) {
    std::printf("topology: %s\n", mpc::topo::describe().c_str());
    std::printf("%d VPs, default stack %zu KiB, %ld ULTs\n\n", d.nr_vps, sched::default_stack_size() / 1024, d.nr_ults);
    std::printf("  VP   PU  core  NUMA  started  ended   switches  remote-wakeups  steals  sleeps\n");
    std::uint64_t total_switches = 0;
    for (int v = 0; v < d.nr_vps; ++v) {
        const mpc::topo::place p = sched::vp_place(v);
        const sched::vp_stats s = sched::stats(v);
        total_switches += s.switches;
        std::printf("  %-3d %4d %5d %5d %8ld %6ld %10" PRIu64 " %15" PRIu64 " %7" PRIu64 " %7" PRIu64 "%s\n", v, p.pu,
                    p.core, p.numa, d.per_vp[v].started.load(), d.per_vp[v].ended.load(), s.switches, s.remote_wakeups,
                    s.steals, s.sleeps, p.shared ? "  (shares its PU)" : "");
    }
    std::printf("\ntotal switches: %" PRIu64 "\n", total_switches);
    std::printf("moves between VPs: %ld\n", d.moves.load());
    std::printf("counter: %" PRIu64 " (expected %ld)\n", d.counter, d.nr_ults * static_cast<long>(increments_per_ult));
    std::printf("elapsed: %.1f ms\n", elapsed_s * 1e3);
}

/// Every ULT ran and ended, the counter is exact, the barrier had one leader, the moves landed.
bool verify(const demo& d) {
    long started = 0;
    long ended = 0;
    for (int v = 0; v < d.nr_vps; ++v) {
        started += d.per_vp[v].started.load();
        ended += d.per_vp[v].ended.load();
    }
    const char* problem = nullptr;
    if (d.counter != static_cast<std::uint64_t>(d.nr_ults) * increments_per_ult) {
        problem = "the shared counter is wrong (lost or duplicated increments)";
    } else if (started != d.nr_ults || ended != d.nr_ults) {
        problem = "not every ULT ran exactly once";
    } else if (d.leaders.load() != 1) {
        problem = "the barrier did not elect exactly one last arrival";
    } else if (d.bad_moves.load() != 0) {
        problem = "a move_to() failed or did not land on its VP";
    }
    if (problem != nullptr) {
        std::printf("FAILED: %s\n", problem);
        return false;
    }
    return true;
}

long parse_args(int argc, char** argv) {
    if (argc > 2 || (argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0))) {
        std::fprintf(argc > 2 ? stderr : stdout, "usage: %s [NR_ULTS]   (default 10000; run it through mpc_run)\n",
                     argv[0]);
        std::exit(argc > 2 ? 2 : 0);
    }
    if (argc < 2) {
        return 10000;
    }
    char* end = nullptr;
    const long n = std::strtol(argv[1], &end, 10);
    if (*argv[1] == '\0' || *end != '\0' || n < 1 || n > 10'000'000) {
        std::fprintf(stderr, "ult_demo: NR_ULTS must be an integer between 1 and 10000000, got '%s'\n", argv[1]);
        std::exit(2);
    }
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    const long nr_ults = parse_args(argc, argv);
    mpc::status st = sched::init();
    if (!st) {
        print_error("mpc::sched::init", st);
        return 1;
    }
    bool ok = false;
    {
        demo d(nr_ults, sched::nr_vps());
        const auto t0 = std::chrono::steady_clock::now();
        ok = run(d);
        const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
        print_summary(d, elapsed.count());
        ok = verify(d) && ok;
    }
    st = sched::finalize();
    if (!st) {
        print_error("mpc::sched::finalize", st);
        ok = false;
    }
    std::printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
