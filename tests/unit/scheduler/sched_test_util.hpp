// Helpers shared by the scheduler tests: status printing, a spawn that reports failures, a
// fixture that runs each test inside a fresh runtime with N VPs and fails on leaked stacks.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "lib/status.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/stack.hpp"
#include "tests/unit/env_guard.hpp"

namespace mpc {
inline std::ostream& operator<<(std::ostream& os, errc e) { return os << to_string(e); }
inline std::ostream& operator<<(std::ostream& os, const status& s) {
    os << to_string(s.code());
    if (!s.ok()) {
        os << " (" << s.reason();
        if (s.sys_errno() != 0) {
            os << ", errno " << s.sys_errno();
        }
        os << ")";
    }
    return os;
}
}  // namespace mpc

namespace mpc::test {

/// Spawns a callable, failing the test (and returning nullptr) when spawn fails.
template <class F>
sched::ult* spawn_or_fail(F&& f, const sched::attr& a = {}) {
    auto r = sched::spawn(std::forward<F>(f), a);
    EXPECT_TRUE(r.ok()) << "spawn failed: " << r.error();
    return r.ok() ? *r : nullptr;
}

/// Joins, failing the test when join fails. Ignores nullptr (a failed spawn already failed).
inline void join_or_fail(sched::ult* u) {
    if (u != nullptr) {
        status st = sched::join(u);
        EXPECT_TRUE(st.ok()) << "join failed: " << st;
    }
}

inline sched::attr on_vp(int vp, bool pinned = true) {
    sched::attr a;
    a.vp = vp;
    a.pinned = pinned;
    return a;
}

/// Stacks of the default allocator alive now.
inline std::size_t live_stacks() {
    sched::stack_stats s = sched::default_stack_stats();
    return s.guarded_live + s.unguarded_live;
}

/// Sum of one counter over every VP.
template <class Field>
std::uint64_t sum_stats(Field f) {
    std::uint64_t total = 0;
    for (int v = 0; v < sched::nr_vps(); ++v) {
        total += static_cast<std::uint64_t>(sched::stats(v).*f);
    }
    return total;
}

/// Lets a plain thread run on every CPU. A std::thread started from a ULT inherits the pinning
/// of that ULT's VP; a thread that busy-waits on the VP's own core would then delay the VP.
/// How many CPUs a ULT running on VP `vp` may use (sched_getaffinity of its kernel thread).
inline int cpus_allowed_on_vp(int vp) {
    int cpus_allowed = -1;
    sched::ult* u = spawn_or_fail(
        [&cpus_allowed]() noexcept {
            cpu_set_t set;
            CPU_ZERO(&set);
            if (sched_getaffinity(0, sizeof set, &set) == 0) {
                cpus_allowed = CPU_COUNT(&set);
            }
        },
        on_vp(vp));
    join_or_fail(u);
    return cpus_allowed;
}

inline void unpin_this_thread() {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        CPU_SET(c, &all);
    }
    (void)sched_setaffinity(0, sizeof all, &all);
}

/// Loop bound for "spin until something happens" loops: a test fails (it never hangs) when
/// the thing does not happen in a generous time. Never used to assert on durations.
class give_up_after {
public:
    explicit give_up_after(std::chrono::seconds s) : end_(std::chrono::steady_clock::now() + s) {}
    bool expired() const { return std::chrono::steady_clock::now() > end_; }

private:
    std::chrono::steady_clock::time_point end_;
};

/// Runs each test in a fresh runtime with GetParam() VPs; checks that every ULT stack went back
/// to the allocator once the runtime is finalized.
class runtime_fixture : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        stacks_before_ = live_stacks();
        sched::options o;
        o.nr_vps = GetParam();
        status st = sched::init(o);
        ASSERT_TRUE(st.ok()) << "init(" << GetParam() << " VPs): " << st;
        ASSERT_EQ(sched::nr_vps(), GetParam());
    }
    void TearDown() override {
        if (sched::initialized()) {
            status st = sched::finalize();
            EXPECT_TRUE(st.ok()) << "finalize: " << st;
        }
        EXPECT_FALSE(sched::initialized());
        EXPECT_EQ(live_stacks(), stacks_before_) << "ULT stacks leaked past finalize()";
    }
    int vps() const { return GetParam(); }
    /// Once every other ULT has been joined, only the primary ULT is homed (on VP 0).
    void expect_only_primary_homed() const {
        EXPECT_EQ(sched::stats(0).homed, 1) << "VP 0";
        for (int v = 1; v < vps(); ++v) {
            EXPECT_EQ(sched::stats(v).homed, 0) << "VP " << v;
        }
    }

private:
    std::size_t stacks_before_ = 0;
};

inline std::string vps_name(const ::testing::TestParamInfo<int>& info) {
    return std::to_string(info.param) + "vps";
}

}  // namespace mpc::test
