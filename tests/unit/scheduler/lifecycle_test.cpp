// The runtime's life cycle (scheduler/sched.hpp): init and finalize, repeated, refused, with
// options and MPC_* variables, and the calls made before init().
#include <gtest/gtest.h>
#include <mpc.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/stack.hpp"
#include "scheduler/sync.hpp"
#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;
namespace sched = mpc::sched;

class LifecycleTest : public runtime_fixture {};

INSTANTIATE_TEST_SUITE_P(Vps, LifecycleTest, ::testing::Values(1, 2, 4), vps_name);

void add_seven(void* p) noexcept { *static_cast<int*>(p) += 7; }

// ---- the runtime's own life cycle -----------------------------------------------------------

TEST_P(LifecycleTest, InitTwiceIsAnError) {
    EXPECT_TRUE(sched::initialized());
    sched::options o;
    o.nr_vps = 1;
    EXPECT_EQ(sched::init(o).code(), errc::already_initialized);
    EXPECT_EQ(sched::nr_vps(), vps()) << "a refused init() must not change the runtime";
}

TEST_P(LifecycleTest, FinalizeOnlyFromThePrimaryUlt) {
    status from_ult;
    sched::ult* u = spawn_or_fail([&]() noexcept { from_ult = sched::finalize(); }, on_vp(vps() - 1));
    join_or_fail(u);
    EXPECT_FALSE(from_ult.ok());
    status from_thread;
    std::thread t([&] { from_thread = sched::finalize(); });
    t.join();
    EXPECT_FALSE(from_thread.ok());
    EXPECT_TRUE(sched::initialized());
}

TEST_P(LifecycleTest, FinalizeWaitsForRunningUlts) {
    std::atomic<int> finished{0};
    for (int i = 0; i < 20; ++i) {
        sched::attr a;
        a.detached = true;
        auto r = sched::spawn(
            [&finished, i]() noexcept {
                sched::sleep_for(std::chrono::milliseconds(i % 5));
                sched::yield();
                finished.fetch_add(1);
            },
            a);
        ASSERT_TRUE(r.ok());
    }
    ASSERT_TRUE(sched::finalize().ok());
    EXPECT_EQ(finished.load(), 20);
    EXPECT_FALSE(sched::initialized());
}

TEST(Lifecycle, CallsBeforeInit) {
    ASSERT_FALSE(sched::initialized());
    EXPECT_EQ(sched::nr_vps(), 0);
    EXPECT_EQ(sched::current_vp(), -1);
    EXPECT_EQ(sched::self(), nullptr);
    EXPECT_EQ(MPC_Vp_count(), 0);
    auto r = sched::spawn([]() noexcept {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), errc::not_initialized);
    auto r2 = sched::spawn(&add_seven, nullptr);
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.error().code(), errc::not_initialized);
    EXPECT_EQ(sched::finalize().code(), errc::not_initialized);
    EXPECT_EQ(sched::move_to(0).code(), errc::not_initialized);
    EXPECT_EQ(MPC_Move_to_vp(0), MPC_ERR_NOT_INIT);
    EXPECT_EQ(sched::rebalance(), 0);
    sched::yield();  // nothing to do, must return
    sched::vp_stats s = sched::stats(0);
    EXPECT_EQ(s.switches, 0u);
    EXPECT_EQ(sched::vp_place(0).pu, -1);
}

TEST(Lifecycle, InitFinalizeSeveralTimes) {
    const std::size_t stacks0 = live_stacks();
    cpu_set_t aff0;
    CPU_ZERO(&aff0);
    ASSERT_EQ(sched_getaffinity(0, sizeof aff0, &aff0), 0);
    for (int vps : {1, 3, 2, 1, 4}) {
        sched::options o;
        o.nr_vps = vps;
        status st = sched::init(o);
        ASSERT_TRUE(st.ok()) << st;
        EXPECT_TRUE(sched::initialized());
        EXPECT_EQ(sched::nr_vps(), vps);
        std::atomic<int> ran{0};
        std::vector<sched::ult*> us;
        for (int i = 0; i < 10 * vps; ++i) {
            us.push_back(spawn_or_fail(
                [&ran]() noexcept {
                    sched::yield();
                    ran.fetch_add(1);
                },
                on_vp(i % vps, false)));
        }
        for (sched::ult* u : us) {
            join_or_fail(u);
        }
        EXPECT_EQ(ran.load(), 10 * vps);
        ASSERT_TRUE(sched::finalize().ok());
        EXPECT_FALSE(sched::initialized());
        EXPECT_EQ(sched::nr_vps(), 0);
        EXPECT_EQ(sched::current_vp(), -1) << "the caller is a plain thread again";
        EXPECT_EQ(sched::self(), nullptr);
        cpu_set_t aff;
        CPU_ZERO(&aff);
        ASSERT_EQ(sched_getaffinity(0, sizeof aff, &aff), 0);
        EXPECT_TRUE(CPU_EQUAL(&aff, &aff0)) << "finalize() must give the caller its CPU affinity back";
    }
    EXPECT_EQ(live_stacks(), stacks0);
}

TEST(Lifecycle, ManyMoreVpsThanCores) {
    sched::options o;
    o.nr_vps = 16;
    ASSERT_TRUE(sched::init(o).ok());
    std::atomic<int> ran{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < 160; ++i) {
        us.push_back(spawn_or_fail(
            [&ran, i]() noexcept {
                sched::yield();
                if (sched::current_vp() == i % 16) {
                    ran.fetch_add(1);
                }
            },
            on_vp(i % 16)));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(ran.load(), 160);
    ASSERT_TRUE(sched::finalize().ok());
    o.nr_vps = sched::max_vps + 1;
    EXPECT_EQ(sched::init(o).code(), errc::invalid_argument);
    EXPECT_FALSE(sched::initialized());
}

TEST(Lifecycle, BindingCanBeDisabled) {
    for (int way = 0; way < 2; ++way) {
        std::optional<env_guard> g;
        sched::options o;
        o.nr_vps = 2;
        if (way == 0) {
            g.emplace("MPC_SCHED_BIND", "0");
        } else {
            o.bind = false;
        }
        ASSERT_TRUE(sched::init(o).ok());
        cpu_set_t process;
        CPU_ZERO(&process);
        ASSERT_EQ(sched_getaffinity(0, sizeof process, &process), 0);  // the primary, on VP 0
        for (int v = 0; v < 2; ++v) {
            int cpus_allowed = cpus_allowed_on_vp(v);
            EXPECT_EQ(cpus_allowed, CPU_COUNT(&process)) << (way == 0 ? "MPC_SCHED_BIND=0" : "options.bind = false")
                                                         << ": VP " << v << " was pinned";
        }
        ASSERT_TRUE(sched::finalize().ok());
    }
}

TEST(Lifecycle, StackCacheCanBeDisabled) {
    env_guard g("MPC_SCHED_STACK_CACHE", "0");
    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    const std::size_t base = live_stacks();
    std::vector<sched::ult*> us;
    for (int i = 0; i < 10; ++i) {
        us.push_back(spawn_or_fail([]() noexcept { sched::yield(); }, on_vp(i % 2)));
    }
    EXPECT_EQ(live_stacks(), base + 10);
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(live_stacks(), base) << "with MPC_SCHED_STACK_CACHE=0 no finished stack may be kept";
    ASSERT_TRUE(sched::finalize().ok());
}

// Under the slices' allocator (MPI jobs), a ULT of no task (a non-blocking collective's job)
// gets its stack from the default allocator: a finished one must stay in its VP's cache and serve
// the next such ULT, not be unmapped and mapped again (an mmap, a munmap and a TLB shootdown per
// MPI_Iallreduce made them 100x slower).
TEST(Lifecycle, StackCacheServesStacksOfNoTaskUnderTheSlicesAllocator) {
    const std::size_t before_init = live_stacks();
    sched::options o;
    o.nr_vps = 1;
    ASSERT_TRUE(sched::init(o).ok());
    sched::set_stack_allocator(&sched::slice_stack_allocator());
    std::uintptr_t first = 0;
    std::uintptr_t second = 0;
    const std::size_t base = live_stacks();
    join_or_fail(spawn_or_fail([&first]() noexcept {
        int x = 0;
        first = reinterpret_cast<std::uintptr_t>(&x);
    }));
    EXPECT_EQ(live_stacks(), base + 1) << "the finished stack is kept in the VP's cache";
    join_or_fail(spawn_or_fail([&second]() noexcept {
        int x = 0;
        second = reinterpret_cast<std::uintptr_t>(&x);
    }));
    EXPECT_EQ(live_stacks(), base + 1) << "the second ULT took the cached stack: no new mapping";
    EXPECT_EQ(first, second) << "both ran on the same stack";
    sched::set_stack_allocator(nullptr);
    ASSERT_TRUE(sched::finalize().ok());
    EXPECT_EQ(live_stacks(), before_init) << "finalize releases the cached stack";
}

TEST(Lifecycle, VpsFromEnvironment) {
    env_guard g("MPC_VPS", "3");
    ASSERT_TRUE(sched::init({}).ok());
    EXPECT_EQ(sched::nr_vps(), 3);
    EXPECT_EQ(MPC_Vp_count(), 3);
    ASSERT_TRUE(sched::finalize().ok());
    // options.nr_vps wins over the environment.
    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    EXPECT_EQ(sched::nr_vps(), 2);
    ASSERT_TRUE(sched::finalize().ok());
}

TEST(Lifecycle, DefaultVpsIsOnePerCore) {
    env_guard g("MPC_VPS", nullptr);
    ASSERT_TRUE(topo::load().ok());
    ASSERT_TRUE(sched::init({}).ok());
    EXPECT_EQ(sched::nr_vps(), topo::info().allowed_cores);
    ASSERT_TRUE(sched::finalize().ok());
}

TEST(Lifecycle, MalformedEnvironmentFailsInit) {
    struct {
        const char* var;
        const char* value;
    } bad[] = {{"MPC_VPS", "three"}, {"MPC_VPS", "-2"},          {"MPC_BIND", "bogus"},
               {"MPC_STACK_SIZE", "1x"}, {"MPC_STACK_SIZE", "1k"}, {"MPC_SCHED_STEAL", "maybe"},
               {"MPC_SCHED_SPIN_US", "fast"}, {"MPC_SCHED_DEADLOCK_TIMEOUT", "-1"}};
    for (const auto& b : bad) {
        env_guard g(b.var, b.value);
        status st = sched::init({});
        EXPECT_EQ(st.code(), errc::invalid_argument) << b.var << "=" << b.value << ": " << st;
        EXPECT_FALSE(sched::initialized()) << b.var << "=" << b.value;
        if (sched::initialized()) {
            (void)sched::finalize();
        }
    }
    // Nothing was left half-initialized: a good init works.
    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    ASSERT_TRUE(sched::finalize().ok());
}

TEST(Lifecycle, BadOptionsFailInit) {
    sched::options o;
    o.nr_vps = -3;
    EXPECT_EQ(sched::init(o).code(), errc::invalid_argument);
    EXPECT_FALSE(sched::initialized());
    sched::options small;
    small.nr_vps = 1;
    small.stack_size = 100;
    EXPECT_EQ(sched::init(small).code(), errc::invalid_argument);
    EXPECT_FALSE(sched::initialized());
}

TEST(Lifecycle, StackSizeFromEnvironmentAndOptions) {
    {
        env_guard g("MPC_STACK_SIZE", "256k");
        sched::options o;
        o.nr_vps = 1;
        ASSERT_TRUE(sched::init(o).ok());
        EXPECT_EQ(sched::default_stack_size(), 256u * 1024);
        ASSERT_TRUE(sched::finalize().ok());
        o.stack_size = 128 * 1024;  // options win
        ASSERT_TRUE(sched::init(o).ok());
        EXPECT_EQ(sched::default_stack_size(), 128u * 1024);
        ASSERT_TRUE(sched::finalize().ok());
    }
    env_guard g("MPC_STACK_SIZE", nullptr);
    sched::options o;
    o.nr_vps = 1;
    ASSERT_TRUE(sched::init(o).ok());
    EXPECT_EQ(sched::default_stack_size(), 1024u * 1024) << "documented default: 1 MiB";
    ASSERT_TRUE(sched::finalize().ok());
}

TEST(Lifecycle, StealingCanBeDisabled) {
    env_guard g("MPC_SCHED_STEAL", "0");
    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    const std::uint64_t steals0 = sum_stats(&sched::vp_stats::steals);
    std::atomic<int> elsewhere{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < 8; ++i) {
        sched::attr a;
        a.vp = 0;
        a.stealable = true;
        us.push_back(spawn_or_fail(
            [&]() noexcept {
                for (int k = 0; k < 2000; ++k) {
                    if (sched::current_vp() != 0) {
                        elsewhere.fetch_add(1);
                    }
                    sched::yield();
                }
            },
            a));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(elsewhere.load(), 0);
    EXPECT_EQ(sum_stats(&sched::vp_stats::steals) - steals0, 0u);
    ASSERT_TRUE(sched::finalize().ok());
}

}  // namespace
