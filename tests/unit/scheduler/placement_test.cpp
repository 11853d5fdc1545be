// Placement of ULTs on VPs (scheduler/sched.hpp): move_to, where VPs run, rebalance() and
// work stealing. Runs once per VP count in {1, 2, 4}.
#include <gtest/gtest.h>
#include <mpc.h>
#include <sched.h>

#include <array>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "lib/spinlock.hpp"
#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"
#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;
namespace sched = mpc::sched;

class PlacementTest : public runtime_fixture {
protected:
    void check_work_stealing(bool after_idle);
};

INSTANTIATE_TEST_SUITE_P(Vps, PlacementTest, ::testing::Values(1, 2, 4), vps_name);

// ---- move_to --------------------------------------------------------------------------------

TEST_P(PlacementTest, MoveToKeepsTheStack) {
    int failures = 0;
    std::vector<int> visited;
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            std::array<unsigned, 256> local{};
            for (unsigned i = 0; i < local.size(); ++i) {
                local[i] = i * 2654435761u;
            }
            const void* where = &local;
            std::vector<int> path;
            for (int v = 1; v < vps(); ++v) {
                path.push_back(v);
            }
            path.push_back(0);
            path.push_back(vps() - 1);
            path.push_back(vps() - 1);  // moving to the VP one is on is a no-op
            for (int target : path) {
                if (!sched::move_to(target).ok()) {
                    ++failures;
                }
                visited.push_back(sched::current_vp());
                if (sched::vp_of(sched::self()) != target || sched::current_vp() != target) {
                    ++failures;
                }
                if (static_cast<const void*>(&local) != where) {
                    ++failures;
                }
                for (unsigned i = 0; i < local.size(); ++i) {
                    if (local[i] != i * 2654435761u) {
                        ++failures;
                        break;
                    }
                }
                sched::yield();
                if (sched::current_vp() != target) {  // pinned: stays where it was moved
                    ++failures;
                }
            }
        },
        on_vp(0));
    join_or_fail(u);
    EXPECT_EQ(failures, 0);
    std::vector<int> expect;
    for (int v = 1; v < vps(); ++v) {
        expect.push_back(v);
    }
    expect.push_back(0);
    expect.push_back(vps() - 1);
    expect.push_back(vps() - 1);
    EXPECT_EQ(visited, expect);
    expect_only_primary_homed();
}

TEST_P(PlacementTest, MoveToRejectsBadVps) {
    status bad_low;
    status bad_high;
    int vp_after = -2;
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            bad_low = sched::move_to(-1);
            bad_high = sched::move_to(vps());
            vp_after = sched::current_vp();
        },
        on_vp(vps() - 1));
    join_or_fail(u);
    EXPECT_EQ(bad_low.code(), errc::invalid_argument);
    EXPECT_EQ(bad_high.code(), errc::invalid_argument);
    EXPECT_EQ(vp_after, vps() - 1);
    status from_thread;
    std::thread t([&] { from_thread = sched::move_to(0); });
    t.join();
    EXPECT_EQ(from_thread.code(), errc::not_in_ult);
}

TEST_P(PlacementTest, CApi) {
    EXPECT_STREQ(MPC_Version(), "0.1.0");
    EXPECT_EQ(MPC_Vp_count(), vps());
    EXPECT_EQ(MPC_Vp_self(), 0);
    int in_ult_self = -2;
    int move_ok = -2;
    int move_bad = -2;
    int after_move = -2;
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            MPC_Yield();
            in_ult_self = MPC_Vp_self();
            move_ok = MPC_Move_to_vp(vps() - 1);
            after_move = MPC_Vp_self();
            move_bad = MPC_Move_to_vp(vps());
        },
        on_vp(0));
    join_or_fail(u);
    EXPECT_EQ(in_ult_self, 0);
    EXPECT_EQ(move_ok, MPC_SUCCESS);
    EXPECT_EQ(after_move, vps() - 1);
    EXPECT_EQ(move_bad, MPC_ERR_ARG);
    int thread_self = -2;
    int thread_move = -2;
    std::thread t([&] {
        thread_self = MPC_Vp_self();
        thread_move = MPC_Move_to_vp(0);
    });
    t.join();
    EXPECT_EQ(thread_self, -1);
    EXPECT_EQ(thread_move, MPC_ERR_NOT_IN_ULT);
}

TEST_P(PlacementTest, VpsRunWhereTheyArePlaced) {
    // Pinning is on by default: a ULT on VP v runs on vp_place(v).pu.
    for (int v = 0; v < vps(); ++v) {
        topo::place p = sched::vp_place(v);
        EXPECT_GE(p.pu, 0) << "VP " << v;
        int cpu = -2;
        sched::ult* u = spawn_or_fail([&cpu]() noexcept { cpu = sched_getcpu(); }, on_vp(v));
        join_or_fail(u);
        EXPECT_EQ(cpu, p.pu) << "VP " << v;
        EXPECT_EQ(p.shared, v >= topo::info().allowed_pus) << "VP " << v;
        int cpus_allowed = cpus_allowed_on_vp(v);
        EXPECT_EQ(cpus_allowed, 1) << "VP " << v << " is not pinned to one CPU";
    }
    EXPECT_EQ(sched::vp_place(-1).pu, -1);
    EXPECT_EQ(sched::vp_place(vps()).pu, -1);
}

TEST_P(PlacementTest, PrimaryUltMovesAndComesBack) {
    ASSERT_TRUE(sched::move_to(vps() - 1).ok());
    EXPECT_EQ(sched::current_vp(), vps() - 1);
    EXPECT_EQ(sched::vp_of(sched::self()), vps() - 1);
    // It can still spawn and join from there.
    sched::ult* u = spawn_or_fail([]() noexcept { sched::yield(); }, on_vp(0));
    join_or_fail(u);
    ASSERT_TRUE(sched::move_to(0).ok());
    EXPECT_EQ(sched::current_vp(), 0);
    EXPECT_EQ(sched::vp_of(sched::self()), 0);
    expect_only_primary_homed();
}

// ---- rebalance and stealing -----------------------------------------------------------------

TEST_P(PlacementTest, RebalanceSpreadsBlockedUlts) {
    constexpr int n = 100;
    std::atomic<int> started{0};
    sched::semaphore gate(0);
    std::vector<int> ran_on(n, -1);
    std::vector<int> ran_on_later(n, -1);
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        sched::attr a;
        a.vp = 0;  // all on VP 0, movable
        us.push_back(spawn_or_fail(
            [&, i]() noexcept {
                started.fetch_add(1);
                gate.acquire();
                ran_on[static_cast<std::size_t>(i)] = sched::current_vp();
                sched::yield();
                ran_on_later[static_cast<std::size_t>(i)] = sched::current_vp();
            },
            a));
    }
    sched::wait_until([&] { return started.load() == n; });
    EXPECT_GE(sched::stats(0).homed, n);
    for (int v = 1; v < vps(); ++v) {
        EXPECT_EQ(sched::stats(v).homed, 0) << "VP " << v;
    }
    const int moves = sched::rebalance();
    if (vps() == 1) {
        EXPECT_EQ(moves, 0);
    } else {
        EXPECT_GT(moves, 0);
        EXPECT_LE(moves, n);
    }
    gate.release(n);
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    int elsewhere = 0;
    std::set<int> used;
    for (int i = 0; i < n; ++i) {
        EXPECT_GE(ran_on[static_cast<std::size_t>(i)], 0);
        EXPECT_LT(ran_on[static_cast<std::size_t>(i)], vps());
        used.insert(ran_on_later[static_cast<std::size_t>(i)]);
        if (ran_on[static_cast<std::size_t>(i)] != 0 || ran_on_later[static_cast<std::size_t>(i)] != 0) {
            ++elsewhere;
        }
    }
    if (vps() == 1) {
        EXPECT_EQ(elsewhere, 0);
    } else {
        EXPECT_GT(elsewhere, 0) << "rebalance() moved nothing off VP 0";
        EXPECT_GT(used.size(), 1u);
    }
    expect_only_primary_homed();
}

TEST_P(PlacementTest, RebalanceLeavesPinnedUltsAlone) {
    constexpr int n = 40;
    std::atomic<int> started{0};
    sched::semaphore gate(0);
    std::atomic<int> moved{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail(
            [&]() noexcept {
                started.fetch_add(1);
                gate.acquire();
                for (int k = 0; k < 3; ++k) {
                    if (sched::current_vp() != 0) {
                        moved.fetch_add(1);
                    }
                    sched::yield();
                }
            },
            on_vp(0, /*pinned=*/true)));
    }
    sched::wait_until([&] { return started.load() == n; });
    (void)sched::rebalance();
    gate.release(n);
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(moved.load(), 0) << "pinned ULTs were moved";
}

/// Stealable ULTs spin-yield on VP 0; with two VPs or more, idle VPs must take some. When
/// `after_idle`, the other VPs have had time to go to sleep before the work appears.
void PlacementTest::check_work_stealing(bool after_idle) {
    if (after_idle) {
        sched::sleep_for(50ms);  // every other VP spins 50 us by default, then sleeps
    }
    constexpr int n = 16;
    std::atomic<bool> moved{false};
    std::atomic<int> bad_vp{0};
    std::vector<sched::ult*> us;
    const std::uint64_t steals_before = sum_stats(&sched::vp_stats::steals);
    for (int i = 0; i < n; ++i) {
        sched::attr a;
        a.vp = 0;
        a.stealable = true;
        us.push_back(spawn_or_fail(
            [&]() noexcept {
                give_up_after limit(10s);
                // Spin-yield until some ULT has been seen on another VP (or a generous limit;
                // with one VP, a bounded number of rounds).
                for (int k = 0; vps() == 1 ? k < 2000 : (!moved.load() && !limit.expired()); ++k) {
                    int v = sched::current_vp();
                    if (v < 0 || v >= vps()) {
                        bad_vp.fetch_add(1);
                    }
                    if (v != 0) {
                        moved = true;
                    }
                    sched::yield();
                }
            },
            a));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(bad_vp.load(), 0);
    const std::uint64_t steals = sum_stats(&sched::vp_stats::steals) - steals_before;
    if (vps() == 1) {
        EXPECT_FALSE(moved.load());
        EXPECT_EQ(steals, 0u);
    } else {
        EXPECT_TRUE(moved.load()) << "no stealable ULT ever ran on another VP";
        EXPECT_GT(steals, 0u);
    }
    expect_only_primary_homed();
}

TEST_P(PlacementTest, WorkStealing) { check_work_stealing(false); }

TEST_P(PlacementTest, WorkStealingWakesSleepingVps) { check_work_stealing(true); }

/// attr::offer: one stealable ULT queued on a VP whose current ULT computes without yielding
/// is taken by a VP that slept (without the offer, a single queued ULT wakes nobody). With one
/// VP it runs once the caller yields.
TEST_P(PlacementTest, OfferedUltWakesASleepingVpWhileItsVpComputes) {
    sched::sleep_for(50ms);  // every other VP spins 50 us by default, then sleeps
    std::atomic<int> ran_on{-1};
    sched::attr a;
    a.vp = sched::current_vp();
    a.stealable = true;
    a.offer = true;
    sched::ult* u = spawn_or_fail([&]() noexcept { ran_on.store(sched::current_vp(), std::memory_order_release); }, a);
    if (vps() > 1) {
        give_up_after limit(10s);
        while (ran_on.load(std::memory_order_acquire) < 0 && !limit.expired()) {
            cpu_relax();  // computes: never yields its VP
        }
        EXPECT_GE(ran_on.load(), 0) << "the offered ULT did not run while its VP computed";
        EXPECT_NE(ran_on.load(), a.vp);
    }
    join_or_fail(u);
    if (vps() == 1) {
        EXPECT_EQ(ran_on.load(), a.vp);
    }
    expect_only_primary_homed();
}

}  // namespace
