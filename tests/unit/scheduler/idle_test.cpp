// An idle process uses ~0% CPU once the VPs have backed off: the VPs sleep on their futex
// instead of spinning, whether they wait for a timer, a wake-up from a plain thread, or a
// polling condition. The bound is generous (a fifth of the wall time of one core, for two VPs)
// so that a busy machine cannot make it fail; a spinning VP would use 100% of a core.

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"

namespace {

double cpu_seconds() {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

class IdleTest : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(mpc::sched::init({.nr_vps = 2}).ok()); }
    void TearDown() override { ASSERT_TRUE(mpc::sched::finalize().ok()); }
};

constexpr auto idle_period = std::chrono::milliseconds(1000);
constexpr double max_cpu_fraction = 0.2;

TEST_F(IdleTest, SleepingUltLeavesTheCpuIdle) {
    double c0 = cpu_seconds();
    mpc::sched::sleep_for(idle_period);
    double used = cpu_seconds() - c0;
    EXPECT_LT(used, max_cpu_fraction * 1.0) << "VPs kept the CPU busy while every ULT slept";
    EXPECT_GT(mpc::sched::stats(1).sleeps + mpc::sched::stats(0).sleeps, 0u);
}

TEST_F(IdleTest, UltBlockedOnAPlainThreadLeavesTheCpuIdle) {
    mpc::sched::semaphore sem;
    std::atomic<bool> released{false};
    double c0 = cpu_seconds();
    std::thread t([&] {
        std::this_thread::sleep_for(idle_period);
        released = true;
        sem.release();
    });
    sem.acquire();  // every VP is idle with no deadline until the thread releases us
    double used = cpu_seconds() - c0;
    t.join();
    EXPECT_TRUE(released.load());
    EXPECT_LT(used, max_cpu_fraction * 1.0);
}

TEST_F(IdleTest, PollingWaitBacksOff) {
    std::atomic<bool> flag{false};
    std::atomic<int> polls{0};
    double c0 = cpu_seconds();
    std::thread t([&] {
        std::this_thread::sleep_for(idle_period);
        flag = true;
    });
    mpc::sched::wait_until(
        [](void* f) { return static_cast<std::atomic<bool>*>(f)->load(); }, &flag,
        [](void* p) noexcept {
            static_cast<std::atomic<int>*>(p)->fetch_add(1);
            return 0;
        },
        &polls);
    double used = cpu_seconds() - c0;
    t.join();
    EXPECT_TRUE(flag.load());
    // The poll function keeps being called (back-off up to 1 ms), but the CPU stays mostly idle.
    EXPECT_GT(polls.load(), 10);
    EXPECT_LT(used, max_cpu_fraction * 1.0);
}

}  // namespace
