// Stress: 100,000 ULTs alive at once with 64 KiB stacks (label `slow`). Each keeps data on its
// stack across yields; all are held at a semaphore while the resident memory is measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "scheduler/sched.hpp"
#include "scheduler/stack.hpp"
#include "scheduler/sync.hpp"
#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
namespace sched = mpc::sched;

/// Resident set size in bytes, from /proc/self/statm.
std::size_t resident_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) {
        return 0;
    }
    unsigned long size = 0;
    unsigned long resident = 0;
    int got = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    return got == 2 ? resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

class ManyUlts : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(Vps, ManyUlts, ::testing::Values(1, 2, 4), vps_name);

TEST_P(ManyUlts, HundredThousandUltsWith64KStacks) {
#if defined(__SANITIZE_THREAD__)
    constexpr int n = 2000;  // ThreadSanitizer maps about 1 MiB of trace per fiber
#else
    constexpr int n = 100000;
#endif
    constexpr int yields = 10;
    constexpr int words = 24;
    const std::size_t stacks0 = live_stacks();

    sched::options o;
    o.nr_vps = GetParam();
    o.stack_size = 64 * 1024;
    ASSERT_TRUE(sched::init(o).ok());
    ASSERT_EQ(sched::default_stack_size(), 64u * 1024);

    std::atomic<int> started{0};
    std::atomic<int> finished{0};
    std::atomic<int> corrupted{0};
    std::atomic<int> wrong_vp{0};
    sched::semaphore gate(0);
    std::vector<sched::ult*> us;
    us.reserve(n);

    const std::size_t rss_before = resident_bytes();
    for (int i = 0; i < n; ++i) {
        auto r = sched::spawn([&, i]() noexcept {
            volatile unsigned local[words];
            for (int w = 0; w < words; ++w) {
                local[w] = static_cast<unsigned>(i) * 31u + static_cast<unsigned>(w);
            }
            started.fetch_add(1, std::memory_order_relaxed);
            gate.acquire();
            for (int y = 0; y < yields; ++y) {
                sched::yield();
                for (int w = 0; w < words; ++w) {
                    if (local[w] != static_cast<unsigned>(i) * 31u + static_cast<unsigned>(w)) {
                        corrupted.fetch_add(1, std::memory_order_relaxed);
                        break;
                    }
                }
                int v = sched::current_vp();
                if (v < 0 || v >= GetParam()) {
                    wrong_vp.fetch_add(1, std::memory_order_relaxed);
                }
            }
            finished.fetch_add(1, std::memory_order_relaxed);
        });
        ASSERT_TRUE(r.ok()) << "spawn " << i << ": " << r.error();
        us.push_back(*r);
    }
    // All alive and parked at the gate.
    sched::wait_until([&] { return started.load() == n; });
    const std::size_t rss_alive = resident_bytes();
    const sched::stack_stats ss = sched::default_stack_stats();
    const double per_ult = rss_alive > rss_before ? static_cast<double>(rss_alive - rss_before) / n : 0.0;
    std::printf("[ many_ults ] %d VPs: %d ULTs alive, RSS %.1f MiB -> %.1f MiB, %.0f bytes per ULT; "
                "stacks: %zu guarded, %zu canary-only (guard budget %zu)\n",
                GetParam(), n, rss_before / 1048576.0, rss_alive / 1048576.0, per_ult, ss.guarded_live,
                ss.unguarded_live, ss.guard_budget);
    RecordProperty("rss_bytes_per_ult", std::to_string(static_cast<long>(per_ult)));
    RecordProperty("guarded_stacks", std::to_string(ss.guarded_live));
    RecordProperty("unguarded_stacks", std::to_string(ss.unguarded_live));
    EXPECT_GT(ss.guarded_live, 0u) << "no stack got a guard page";
    if (static_cast<std::size_t>(n) > ss.guard_budget) {
        EXPECT_GT(ss.unguarded_live, 0u) << "more ULTs than the guard budget, yet no canary-only stack";
    }
    EXPECT_GE(ss.guarded_live + ss.unguarded_live, static_cast<std::size_t>(n));
    EXPECT_LE(ss.guarded_live, ss.guard_budget) << "more guarded stacks than the budget allows";
    EXPECT_EQ(finished.load(), 0);
    EXPECT_GT(rss_alive, rss_before);

    gate.release(n);
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(finished.load(), n);
    EXPECT_EQ(corrupted.load(), 0) << "stack contents changed across yields";
    EXPECT_EQ(wrong_vp.load(), 0);
    ASSERT_TRUE(sched::finalize().ok());
    EXPECT_EQ(live_stacks(), stacks0) << "stacks leaked";
}

}  // namespace
