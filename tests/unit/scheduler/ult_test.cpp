// User-level threads (scheduler/sched.hpp): spawn, join, detach and their errors, stacks and
// their allocators, yield, sleep, identity and statistics.
//
// Tests run inside runtime_fixture, once per VP count in {1, 2, 4} (4 VPs on a 2-core machine is
// deliberate oversubscription). Each ctest test is its own process. Placement (move_to,
// rebalance, stealing) is in placement_test.cpp, keys and polling in ult_local_test.cpp, the
// runtime's life cycle in lifecycle_test.cpp.
#include <gtest/gtest.h>
#include <mpc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "scheduler/sched.hpp"
#include "scheduler/stack.hpp"
#include "scheduler/sync.hpp"
#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;
namespace sched = mpc::sched;

class UltTest : public runtime_fixture {};

INSTANTIATE_TEST_SUITE_P(Vps, UltTest, ::testing::Values(1, 2, 4), vps_name);

// ---- spawn / join / detach ------------------------------------------------------------------

void add_seven(void* p) noexcept { *static_cast<int*>(p) += 7; }

TEST_P(UltTest, SpawnJoinFunctionPointer) {
    int value = 35;
    auto r = sched::spawn(&add_seven, &value);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_NE(*r, nullptr);
    EXPECT_TRUE(sched::join(*r).ok());
    EXPECT_EQ(value, 42);
}

TEST_P(UltTest, SpawnLambdaCapturesByValue) {
    std::array<int, 64> big{};
    for (int i = 0; i < 64; ++i) {
        big[static_cast<std::size_t>(i)] = i * i;
    }
    auto owned = std::make_unique<int>(99);  // move-only capture
    auto shared = std::make_shared<int>(5);  // copy: the closure's copy must be destroyed
    std::string text = "captured by value";
    long sum = -1;
    std::string seen;
    int from_unique = 0;
    sched::ult* u = spawn_or_fail([big, p = std::move(owned), shared, text, &sum, &seen, &from_unique]() noexcept {
        long s = 0;
        for (int v : big) {
            s += v;
        }
        sum = s;
        seen = text;
        from_unique = *p + *shared;
    });
    big.fill(0);  // the ULT has its own copy
    text = "changed";
    join_or_fail(u);
    long expect = 0;
    for (int i = 0; i < 64; ++i) {
        expect += i * i;
    }
    EXPECT_EQ(sum, expect);
    EXPECT_EQ(seen, "captured by value");
    EXPECT_EQ(from_unique, 104);
    EXPECT_EQ(shared.use_count(), 1) << "the closure (and its captures) must be destroyed when the ULT ends";
}

TEST_P(UltTest, ManyUltsJoinedInReverseOrder) {
    constexpr int n = 300;
    std::vector<int> slot(n, -1);
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&slot, i]() noexcept {
            sched::yield();
            slot[static_cast<std::size_t>(i)] = i;
        }));
    }
    for (int i = n - 1; i >= 0; --i) {
        join_or_fail(us[static_cast<std::size_t>(i)]);
        EXPECT_EQ(slot[static_cast<std::size_t>(i)], i);
    }
}

TEST_P(UltTest, SpawnOnEveryVp) {
    for (int v = 0; v < vps(); ++v) {
        int seen_current = -2;
        int seen_vp_of = -2;
        sched::ult* u = spawn_or_fail(
            [&]() noexcept {
                seen_current = sched::current_vp();
                seen_vp_of = sched::vp_of(sched::self());
            },
            on_vp(v));
        join_or_fail(u);
        EXPECT_EQ(seen_current, v);
        EXPECT_EQ(seen_vp_of, v);
    }
}

TEST_P(UltTest, DetachedByAttribute) {
    constexpr int n = 50;
    std::atomic<int> done{0};
    for (int i = 0; i < n; ++i) {
        sched::attr a;
        a.detached = true;
        a.vp = i % vps();
        auto r = sched::spawn(
            [&done]() noexcept {
                sched::yield();
                done.fetch_add(1);
            },
            a);
        ASSERT_TRUE(r.ok()) << r.error();
    }
    sched::wait_until([&] { return done.load() == n; });
    EXPECT_EQ(done.load(), n);
    // TearDown's finalize() waits for them to end; its leak check verifies their stacks went back.
}

TEST_P(UltTest, DetachAfterSpawn) {
    constexpr int n = 40;
    std::atomic<int> done{0};
    sched::semaphore gate(0);
    // Detached while blocked.
    for (int i = 0; i < n; ++i) {
        sched::ult* u = spawn_or_fail([&]() noexcept {
            gate.acquire();
            done.fetch_add(1);
        });
        ASSERT_NE(u, nullptr);
        EXPECT_TRUE(sched::detach(u).ok());
    }
    gate.release(n);
    sched::wait_until([&] { return done.load() == n; });
    // Detached after they have (most likely) ended.
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&]() noexcept { done.fetch_add(1); }, on_vp(i % vps())));
    }
    sched::wait_until([&] { return done.load() == 2 * n; });
    for (int i = 0; i < 10; ++i) {
        sched::yield();
    }
    for (sched::ult* u : us) {
        EXPECT_TRUE(sched::detach(u).ok());
    }
    EXPECT_EQ(done.load(), 2 * n);
}

TEST_P(UltTest, DetachAndJoinErrors) {
    EXPECT_EQ(sched::detach(nullptr).code(), errc::invalid_argument);
    EXPECT_EQ(sched::detach(sched::self()).code(), errc::invalid_argument) << "detaching the primary ULT";

    sched::semaphore gate(0);
    std::atomic<int> finished{0};
    sched::attr a;
    a.detached = true;
    auto r = sched::spawn(
        [&]() noexcept {
            gate.acquire();
            finished.fetch_add(1);
        },
        a);
    ASSERT_TRUE(r.ok()) << r.error();
    status st = sched::join(*r);  // still blocked on the gate, so the handle is valid
    EXPECT_FALSE(st.ok()) << "joining a detached ULT must fail";
    EXPECT_TRUE(st.code() == errc::invalid_argument || st.code() == errc::busy) << st;
    EXPECT_FALSE(sched::detach(*r).ok()) << "detaching twice must fail";

    sched::ult* u = spawn_or_fail([&]() noexcept {
        gate.acquire();
        finished.fetch_add(1);
    });
    ASSERT_NE(u, nullptr);
    ASSERT_TRUE(sched::detach(u).ok());
    st = sched::join(u);
    EXPECT_FALSE(st.ok()) << "joining a ULT detached after spawn must fail";
    gate.release(2);
    sched::wait_until([&] { return finished.load() == 2; });  // they use `gate`: keep it alive
}

TEST_P(UltTest, JoinErrors) {
    status st = sched::join(nullptr);
    EXPECT_EQ(st.code(), errc::invalid_argument) << st;

    st = sched::join(sched::self());  // the primary joining itself
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(st.code() == errc::invalid_argument || st.code() == errc::busy) << st;

    status inner_self;
    status inner_primary;
    sched::ult* primary = sched::self();
    sched::ult* u = spawn_or_fail([&]() noexcept {
        inner_self = sched::join(sched::self());
        inner_primary = sched::join(primary);
    });
    join_or_fail(u);
    EXPECT_FALSE(inner_self.ok()) << "a ULT joined itself";
    EXPECT_TRUE(inner_self.code() == errc::invalid_argument || inner_self.code() == errc::busy) << inner_self;
    EXPECT_FALSE(inner_primary.ok()) << "a ULT joined the primary ULT";
}

TEST_P(UltTest, JoinTwiceIsAnError) {
    // The ULT ends before the first join (same VP, FIFO): the first join only collects it.
    std::atomic<bool> ran{false};
    sched::ult* u = spawn_or_fail([&ran]() noexcept { ran = true; }, on_vp(0));
    ASSERT_NE(u, nullptr);
    for (int i = 0; i < 10; ++i) {
        sched::yield();
    }
    ASSERT_TRUE(ran.load());
    ASSERT_TRUE(sched::join(u).ok());
    status st = sched::join(u);
    EXPECT_FALSE(st.ok()) << "a second join() of the same ULT succeeded";
    EXPECT_TRUE(st.code() == errc::invalid_argument || st.code() == errc::busy) << st;
}

TEST_P(UltTest, JoinFromPlainThreadIsRefused) {
    sched::semaphore gate(0);
    sched::ult* u = spawn_or_fail([&gate]() noexcept { gate.acquire(); });
    ASSERT_NE(u, nullptr);
    status from_thread;
    std::thread t([&] { from_thread = sched::join(u); });
    t.join();
    EXPECT_EQ(from_thread.code(), errc::not_in_ult) << from_thread;
    gate.release();
    join_or_fail(u);  // still joinable
}

TEST_P(UltTest, SpawnRejectsBadArguments) {
    auto r1 = sched::spawn(static_cast<sched::ult_fn>(nullptr), nullptr);
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().code(), errc::invalid_argument);

    for (int bad_vp : {vps(), vps() + 7, -2}) {
        sched::attr a;
        a.vp = bad_vp;
        auto r = sched::spawn([]() noexcept {}, a);
        ASSERT_FALSE(r.ok()) << "vp " << bad_vp;
        EXPECT_EQ(r.error().code(), errc::invalid_argument) << "vp " << bad_vp;
    }
    sched::attr tiny;
    tiny.stack_size = 512;  // too small for anything
    auto r2 = sched::spawn([]() noexcept {}, tiny);
    EXPECT_FALSE(r2.ok());

    sched::attr huge;
    huge.stack_size = std::size_t{1} << 60;  // cannot be mapped
    auto r3 = sched::spawn([]() noexcept {}, huge);
    ASSERT_FALSE(r3.ok());
    EXPECT_TRUE(r3.error().code() == errc::no_memory || r3.error().code() == errc::system) << r3.error();
}

/// A stack allocator that fails on demand and counts what it hands out and gets back.
class test_allocator final : public sched::stack_allocator {
public:
    result<sched::stack_region> allocate(std::size_t size, int owner) noexcept override {
        if (fail.load()) {
            failures.fetch_add(1);
            return status(errc::no_memory, "injected stack allocation failure");
        }
        auto r = sched::default_stack_allocator().allocate(size, owner);
        if (r.ok()) {
            allocated.fetch_add(1);
            last_size.store(r->size);
        }
        return r;
    }
    void release(const sched::stack_region& s) noexcept override {
        released.fetch_add(1);
        sched::default_stack_allocator().release(s);
    }
    const char* name() const noexcept override { return "test"; }

    std::atomic<bool> fail{false};
    std::atomic<int> failures{0}, allocated{0}, released{0};
    std::atomic<std::size_t> last_size{0};
};

TEST_P(UltTest, StackAllocationFailureIsReported) {
    test_allocator ta;
    ta.fail = true;
    sched::set_stack_allocator(&ta);
    EXPECT_EQ(&sched::current_stack_allocator(), &ta);
    sched::attr a;
    a.stack_size = 96 * 1024;  // not the default size: no cached stack may be used
    int ran = 0;
    auto r = sched::spawn([&ran]() noexcept { ++ran; }, a);
    sched::set_stack_allocator(nullptr);
    EXPECT_EQ(&sched::current_stack_allocator(), &sched::default_stack_allocator());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), errc::no_memory) << r.error();
    EXPECT_EQ(ta.failures.load(), 1);
    // The runtime is unharmed: the next spawn works.
    sched::ult* u = spawn_or_fail([&ran]() noexcept { ++ran; }, a);
    join_or_fail(u);
    EXPECT_EQ(ran, 1);
}

TEST_P(UltTest, StacksGoBackToTheAllocatorThatMadeThem) {
    test_allocator ta;
    sched::set_stack_allocator(&ta);
    constexpr int n = 10;
    sched::attr a;
    a.stack_size = 80 * 1024;
    std::vector<sched::ult*> us;
    sched::semaphore gate(0);
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&gate]() noexcept { gate.acquire(); }, a));
    }
    sched::set_stack_allocator(nullptr);  // switched back before they end
    gate.release(n);
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(ta.allocated.load(), n);
    EXPECT_EQ(ta.released.load(), n);
    EXPECT_GE(ta.last_size.load(), a.stack_size);
}

TEST_P(UltTest, SpawnFromPlainThread) {
    std::atomic<int> ran_on{-2};
    sched::ult* u = nullptr;
    status spawned;
    std::thread t([&] {
        sched::attr a;
        a.vp = vps() - 1;
        auto r = sched::spawn([&ran_on]() noexcept { ran_on = sched::current_vp(); }, a);
        spawned = r.ok() ? status{} : r.error();
        if (r.ok()) {
            u = *r;
        }
    });
    t.join();
    ASSERT_TRUE(spawned.ok()) << spawned;
    join_or_fail(u);
    EXPECT_EQ(ran_on.load(), vps() - 1);
}

/// Each ULT spawns `fanout` children (down to `depth` levels) and joins them.
void spawn_tree(int depth, int fanout, std::atomic<int>* count) noexcept {
    count->fetch_add(1);
    if (depth == 0) {
        sched::yield();
        return;
    }
    std::vector<sched::ult*> kids;
    for (int i = 0; i < fanout; ++i) {
        auto r = sched::spawn([=]() noexcept { spawn_tree(depth - 1, fanout, count); });
        if (r.ok()) {
            kids.push_back(*r);
        }
    }
    for (sched::ult* k : kids) {
        if (!sched::join(k).ok()) {
            count->fetch_add(1000000);  // poison the total
        }
    }
}

TEST_P(UltTest, NestedSpawnAndJoinAcrossVps) {
    std::atomic<int> count{0};
    sched::ult* root = spawn_or_fail([&count]() noexcept { spawn_tree(4, 4, &count); });
    join_or_fail(root);
    EXPECT_EQ(count.load(), 1 + 4 + 16 + 64 + 256);
    expect_only_primary_homed();
}

std::atomic<int> g_exit_dtor_calls{0};
void count_exit_dtor(void*) noexcept { g_exit_dtor_calls.fetch_add(1); }

[[gnu::noinline]] void leave_early(std::atomic<int>* reached) noexcept {
    reached->fetch_add(1);
    sched::exit();
}

TEST_P(UltTest, ExitEndsTheUlt) {
    g_exit_dtor_calls = 0;
    auto k = sched::key_create(&count_exit_dtor);
    ASSERT_TRUE(k.ok());
    std::atomic<int> reached{0};
    std::atomic<int> after{0};
    int dummy = 0;
    std::vector<sched::ult*> us;
    for (int i = 0; i < 4; ++i) {
        us.push_back(spawn_or_fail(
            [&]() noexcept {
                (void)sched::set_specific(*k, &dummy);
                sched::yield();
                leave_early(&reached);
                after.fetch_add(1);  // never reached
            },
            on_vp(i % vps())));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(reached.load(), 4);
    EXPECT_EQ(after.load(), 0) << "code after exit() ran";
    EXPECT_EQ(g_exit_dtor_calls.load(), 4) << "key destructors must run when a ULT calls exit()";
    EXPECT_TRUE(sched::key_delete(*k).ok());
}

TEST_P(UltTest, MinimumStackSize) {
    sched::attr ok;
    ok.stack_size = sched::min_stack_size;
    int ran = 0;
    sched::ult* u = spawn_or_fail([&ran]() noexcept { ran = 1; }, ok);
    join_or_fail(u);
    EXPECT_EQ(ran, 1);
    sched::attr small;
    small.stack_size = sched::min_stack_size - 1;
    auto r = sched::spawn([]() noexcept {}, small);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
}

TEST_P(UltTest, GuardlessStacksPastTheGuardBudget) {
    const sched::stack_stats before = sched::default_stack_stats();
    sched::set_guard_budget(0);
    constexpr int n = 6;
    sched::semaphore gate(0);
    std::atomic<int> ok_runs{0};
    std::vector<sched::ult*> us;
    sched::attr a;
    a.stack_size = 64 * 1024;  // not the default size: never taken from a VP's cache
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail(
            [&, i]() noexcept {
                std::array<int, 512> local{};  // 2 KiB on the stack, checked across a park
                local.fill(i);
                gate.acquire();
                sched::yield();
                if (std::all_of(local.begin(), local.end(), [i](int x) { return x == i; })) {
                    ok_runs.fetch_add(1);
                }
            },
            a));
    }
    const sched::stack_stats during = sched::default_stack_stats();
    sched::set_guard_budget(before.guard_budget);
    EXPECT_EQ(sched::default_stack_stats().guard_budget, before.guard_budget);
    EXPECT_GE(during.unguarded_live, before.unguarded_live + n) << "budget 0 must give canary-only stacks";
    EXPECT_LE(during.guarded_live, before.guarded_live);
    gate.release(n);
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(ok_runs.load(), n);
}

// ---- yield / sleep --------------------------------------------------------------------------

TEST_P(UltTest, YieldIsFifoOnOneVp) {
    constexpr int rounds = 50;
    std::string order;
    auto body = [&order](char c) {
        return [&order, c]() noexcept {
            for (int i = 0; i < rounds; ++i) {
                order.push_back(c);
                sched::yield();
            }
        };
    };
    sched::ult* a = spawn_or_fail(body('a'), on_vp(0));
    sched::ult* b = spawn_or_fail(body('b'), on_vp(0));
    sched::ult* c = spawn_or_fail(body('c'), on_vp(0));
    join_or_fail(a);
    join_or_fail(b);
    join_or_fail(c);
    ASSERT_EQ(order.size(), 3u * rounds);
    std::string expect;
    for (int i = 0; i < rounds; ++i) {
        expect += "abc";
    }
    EXPECT_EQ(order, expect) << "ULTs on one VP must run round-robin in spawn order";
}

TEST_P(UltTest, YieldOutsideUltDoesNothing) {
    std::thread t([] {
        sched::yield();
        MPC_Yield();
    });
    t.join();
    SUCCEED();
}

TEST_P(UltTest, SleepForWaitsAtLeastTheRequestedTime) {
    const std::uint64_t sleeps0 = sum_stats(&sched::vp_stats::sleeps);
    for (auto d : {1ms, 20ms}) {
        auto t0 = std::chrono::steady_clock::now();
        sched::sleep_for(d);
        EXPECT_GE(std::chrono::steady_clock::now() - t0, d);
    }
    // Many sleepers at once, on every VP, with different durations.
    constexpr int n = 64;
    std::vector<std::chrono::nanoseconds> slept(n);
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&slept, i]() noexcept {
            auto want = std::chrono::milliseconds(1 + (i * 7) % 30);
            auto t0 = std::chrono::steady_clock::now();
            sched::sleep_for(want);
            slept[static_cast<std::size_t>(i)] = std::chrono::steady_clock::now() - t0;
        }));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    for (int i = 0; i < n; ++i) {
        EXPECT_GE(slept[static_cast<std::size_t>(i)], std::chrono::milliseconds(1 + (i * 7) % 30)) << "ULT " << i;
    }
    auto t0 = std::chrono::steady_clock::now();
    sched::sleep_for(0ns);
    sched::sleep_for(-5ms);  // negative: returns
    EXPECT_GE(std::chrono::steady_clock::now(), t0);
    EXPECT_GT(sum_stats(&sched::vp_stats::sleeps), sleeps0) << "VPs with only sleeping ULTs must sleep too";
}

TEST_P(UltTest, SleepingUltDoesNotBlockItsVp) {
    std::atomic<bool> asleep{false};
    std::atomic<bool> awake{false};
    long spins_while_asleep = 0;
    sched::ult* sleeper = spawn_or_fail(
        [&]() noexcept {
            asleep = true;
            sched::sleep_for(30ms);
            awake = true;
        },
        on_vp(0));
    sched::ult* spinner = spawn_or_fail(
        [&]() noexcept {
            while (!awake.load()) {
                if (asleep.load()) {
                    ++spins_while_asleep;
                }
                sched::yield();
            }
        },
        on_vp(0));
    join_or_fail(sleeper);
    join_or_fail(spinner);
    EXPECT_GT(spins_while_asleep, 0) << "sleep_for blocked the whole VP";
}

// ---- identity -------------------------------------------------------------------------------

TEST_P(UltTest, SelfIdName) {
    sched::ult* primary = sched::self();
    ASSERT_NE(primary, nullptr) << "the caller of init() is the primary ULT";
    EXPECT_EQ(sched::vp_of(primary), 0);
    EXPECT_EQ(sched::current_vp(), 0);

    char label[32] = "worker-one";
    sched::attr a;
    a.name = label;
    sched::semaphore ready(0);
    sched::semaphore go(0);
    sched::ult* seen_self = nullptr;
    std::uint64_t seen_id = 0;
    std::string seen_name;
    std::string seen_name_after;
    auto r = sched::spawn(
        [&]() noexcept {
            seen_self = sched::self();
            seen_id = sched::id(sched::self());
            seen_name = sched::name(sched::self());
            ready.release();
            go.acquire();
            seen_name_after = sched::name(sched::self());
        },
        a);
    ASSERT_TRUE(r.ok()) << r.error();
    sched::ult* u = *r;
    std::strcpy(label, "overwritten");  // the name was copied at spawn
    ready.acquire();
    EXPECT_EQ(seen_self, u);
    EXPECT_EQ(seen_id, sched::id(u));
    EXPECT_NE(sched::id(u), sched::id(primary));
    EXPECT_EQ(seen_name, "worker-one");
    EXPECT_STREQ(sched::name(u), "worker-one");
    sched::set_name(u, "renamed");
    EXPECT_STREQ(sched::name(u), "renamed");
    go.release();
    join_or_fail(u);
    EXPECT_EQ(seen_name_after, "renamed");

    // Names are truncated to 31 characters.
    const std::string longname(40, 'x');
    sched::set_name(primary, longname.c_str());
    EXPECT_EQ(std::string(sched::name(primary)), longname.substr(0, 31));
    sched::set_name(primary, "main");

    // Outside the runtime's threads.
    sched::ult* thread_self = primary;
    int thread_vp = 0;
    std::thread t([&] {
        thread_self = sched::self();
        thread_vp = sched::current_vp();
    });
    t.join();
    EXPECT_EQ(thread_self, nullptr);
    EXPECT_EQ(thread_vp, -1);
}

TEST_P(UltTest, IdsAreUnique) {
    constexpr int n = 200;
    std::vector<std::uint64_t> ids(n, 0);
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&ids, i]() noexcept { ids[static_cast<std::size_t>(i)] = sched::id(sched::self()); }));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    ids.push_back(sched::id(sched::self()));
    std::set<std::uint64_t> unique(ids.begin(), ids.end());
    EXPECT_EQ(unique.size(), ids.size());
}

// ---- statistics -----------------------------------------------------------------------------

TEST_P(UltTest, StatsCountersIncrease) {
    const std::uint64_t spawned0 = sum_stats(&sched::vp_stats::spawned);
    const std::uint64_t switches0 = sum_stats(&sched::vp_stats::switches);
    constexpr int n = 20;
    constexpr int yields = 10;
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([]() noexcept {
            for (int k = 0; k < yields; ++k) {
                sched::yield();
            }
        }));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(sum_stats(&sched::vp_stats::spawned) - spawned0, static_cast<std::uint64_t>(n));
    EXPECT_GE(sum_stats(&sched::vp_stats::switches) - switches0, static_cast<std::uint64_t>(n));
    // Out-of-range VPs read as zero.
    sched::vp_stats none = sched::stats(vps());
    EXPECT_EQ(none.switches, 0u);
    EXPECT_EQ(none.homed, 0);
}

TEST_P(UltTest, RemoteWakeupsAreCounted) {
    // With two VPs or more the waiter lives on VP 1 and is woken from VP 0: a remote wake-up.
    // With one VP the same wake-up stays local and must not be counted as remote.
    const int waiter_vp = vps() >= 2 ? 1 : 0;
    const std::uint64_t before = sum_stats(&sched::vp_stats::remote_wakeups);
    sched::semaphore s(0);
    sched::ult* waiter = spawn_or_fail([&s]() noexcept { s.acquire(); }, on_vp(waiter_vp));
    sched::wait_until([&] { return sched::stats(waiter_vp).homed >= 1; });
    for (int i = 0; i < 5; ++i) {
        sched::yield();
    }
    s.release();  // from the primary ULT on VP 0
    join_or_fail(waiter);
    if (waiter_vp == 1) {
        EXPECT_GE(sum_stats(&sched::vp_stats::remote_wakeups) - before, 1u);
    } else {
        EXPECT_EQ(sum_stats(&sched::vp_stats::remote_wakeups) - before, 0u);
    }
}

}  // namespace
