// sched::blocking_call(): a call that blocks in the kernel runs on a helper thread while the
// calling ULT parks, so that the ULTs sharing its VP keep running; the call's effects are
// visible when it returns; outside a ULT and with MPC_SCHED_IO_THREADS=0 it runs on the
// caller's thread; a long call is not reported as a deadlock.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"
#include "tests/unit/env_guard.hpp"
#include "tests/unit/scheduler/sched_test_util.hpp"

namespace {

using namespace std::chrono_literals;
namespace sched = mpc::sched;

struct wait_for_flag {
    std::atomic<bool>* flag;
    bool seen = false;
    int vp = -2;  ///< current_vp() inside the call
};

/// Blocks its kernel thread (no yield) until *flag, for at most 20 s.
void block_until_flag(void* p) noexcept {
    auto* w = static_cast<wait_for_flag*>(p);
    w->vp = sched::current_vp();
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (!w->flag->load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(1ms);
    }
    w->seen = w->flag->load(std::memory_order_acquire);
}

class BlockingCall : public ::testing::Test {
protected:
    void start(int vps) { ASSERT_TRUE(sched::init({.nr_vps = vps}).ok()); }
    void TearDown() override {
        if (sched::initialized()) {
            ASSERT_TRUE(sched::finalize().ok());
        }
    }
};

// One VP: the flag is set by a ULT of the same VP, which runs only if the call left the VP.
TEST_F(BlockingCall, OtherUltsOfTheVpRunMeanwhile) {
    start(1);
    std::atomic<bool> flag{false};
    wait_for_flag w{&flag};
    sched::ult* setter = mpc::test::spawn_or_fail([&] { flag.store(true, std::memory_order_release); });
    sched::blocking_call(&block_until_flag, &w, "test: waiting for the flag");
    EXPECT_TRUE(w.seen) << "the VP did not run its other ULT while the call blocked";
    EXPECT_EQ(w.vp, -1) << "the call ran on a VP";
    mpc::test::join_or_fail(setter);
}

// Many ULTs on two VPs, many calls each: every call runs once, off the VPs, and its write is
// seen by its caller.
TEST_F(BlockingCall, ManyCallsFromManyUlts) {
    start(2);
    constexpr int nults = 48, ncalls = 50;
    std::vector<int> done(nults, 0);
    std::atomic<int> on_vp{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < nults; ++i) {
        us.push_back(mpc::test::spawn_or_fail([&, i] {
            for (int c = 0; c < ncalls; ++c) {
                struct arg {
                    int* slot;
                    std::atomic<int>* on_vp;
                } a{&done[i], &on_vp};
                sched::blocking_call(
                    [](void* p) noexcept {
                        auto* x = static_cast<arg*>(p);
                        if (sched::current_vp() != -1) {
                            x->on_vp->fetch_add(1);
                        }
                        if (*x->slot % 7 == 0) {
                            ::usleep(100);  // some calls really block
                        }
                        ++*x->slot;
                    },
                    &a, "test: counting");
            }
        }));
    }
    for (sched::ult* u : us) {
        mpc::test::join_or_fail(u);
    }
    for (int i = 0; i < nults; ++i) {
        EXPECT_EQ(done[i], ncalls) << "ULT " << i;
    }
    EXPECT_EQ(on_vp.load(), 0);
}

// A plain thread, even while the runtime runs: the call runs on that thread.
TEST_F(BlockingCall, PlainThreadRunsItInline) {
    start(1);
    std::thread::id ran_on;
    std::thread t([&] {
        sched::blocking_call([](void* p) noexcept { *static_cast<std::thread::id*>(p) = std::this_thread::get_id(); },
                             &ran_on, "test");
        EXPECT_EQ(ran_on, std::this_thread::get_id());
    });
    t.join();
}

// MPC_SCHED_IO_THREADS=0: the call runs on the caller's VP.
TEST_F(BlockingCall, NoHelpersRunsItOnTheVp) {
    mpc::test::env_guard g("MPC_SCHED_IO_THREADS", "0");
    start(1);
    std::atomic<bool> flag{true};
    wait_for_flag w{&flag};
    sched::blocking_call(&block_until_flag, &w, "test");
    EXPECT_EQ(w.vp, 0);
}

// blocking_start(): the job runs on a helper while the caller goes on; it tells its own end
// (here through a wait_list), and many may be out at once.
TEST_F(BlockingCall, StartedJobsRunOffTheVpsWhileTheCallerGoesOn) {
    start(1);
    struct out {
        std::atomic<bool>* go;
        std::atomic<int> done{0};
        std::atomic<int> on_vp{0};
        sched::wait_list ended;
    } o;
    std::atomic<bool> go{false};
    o.go = &go;
    constexpr int njobs = 16;
    for (int i = 0; i < njobs; ++i) {
        ASSERT_TRUE(sched::blocking_start(
            [](void* p) noexcept {
                auto* x = static_cast<out*>(p);
                x->on_vp.fetch_add(sched::current_vp() != -1 ? 1 : 0);
                const auto until = std::chrono::steady_clock::now() + 20s;
                while (!x->go->load() && std::chrono::steady_clock::now() < until) {
                    std::this_thread::sleep_for(1ms);  // waits for the caller, which must go on
                }
                x->done.fetch_add(1, std::memory_order_release);
                x->ended.wake_all();
            },
            &o));
    }
    EXPECT_LT(o.done.load(), njobs) << "the caller went on before the jobs ended";
    go.store(true);
    while (o.done.load(std::memory_order_acquire) < njobs) {
        o.ended.wait_unless([](void* p) noexcept { return static_cast<out*>(p)->done.load() == njobs; }, &o, "test");
    }
    EXPECT_EQ(o.on_vp.load(), 0);
}

TEST_F(BlockingCall, NoHelpersMeansNothingStarted) {
    mpc::test::env_guard g("MPC_SCHED_IO_THREADS", "0");
    start(1);
    EXPECT_FALSE(sched::blocking_start([](void*) noexcept {}, nullptr));
}

TEST_F(BlockingCall, BadHelperCountIsRefused) {
    mpc::test::env_guard g("MPC_SCHED_IO_THREADS", "-1");
    EXPECT_FALSE(sched::init({.nr_vps = 1}).ok());
}

// Every VP idle for longer than the deadlock timeout while the only ULT waits for a call: not
// a deadlock (the check would end the process with a report).
TEST_F(BlockingCall, LongCallIsNotADeadlock) {
    mpc::test::env_guard g("MPC_SCHED_DEADLOCK_TIMEOUT", "1");
    start(2);
    sched::blocking_call([](void*) noexcept { std::this_thread::sleep_for(2500ms); }, nullptr, "test: a slow disk");
    SUCCEED();
}

}  // namespace
