// ULT-local storage and polling (scheduler/sched.hpp): keys and their destructors,
// wait_until() with and without a poll function, progress functions. Runs once per VP count in
// {1, 2, 4}.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"
#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;
namespace sched = mpc::sched;

class UltLocalTest : public runtime_fixture {};

INSTANTIATE_TEST_SUITE_P(Vps, UltLocalTest, ::testing::Values(1, 2, 4), vps_name);

// ---- ULT-local keys -------------------------------------------------------------------------

std::mutex g_dtor_mutex;
std::vector<void*> g_dtor_values;
std::atomic<int> g_dtor_vp_bad{0};

void record_dtor(void* v) noexcept {
    if (sched::self() == nullptr) {
        g_dtor_vp_bad.fetch_add(1);  // destructors run in the exiting ULT
    }
    std::lock_guard<std::mutex> g(g_dtor_mutex);
    g_dtor_values.push_back(v);
}

TEST_P(UltLocalTest, KeysArePerUltAndDestructorsRunAtExit) {
    g_dtor_values.clear();
    auto k = sched::key_create(&record_dtor);
    ASSERT_TRUE(k.ok()) << k.error();
    auto k2 = sched::key_create();  // no destructor
    ASSERT_TRUE(k2.ok()) << k2.error();
    EXPECT_NE(*k, *k2);

    constexpr int n = 8;
    std::array<int, n> slots{};
    std::atomic<int> wrong{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail(
            [&, i]() noexcept {
                if (sched::get_specific(*k) != nullptr) {
                    wrong.fetch_add(1);  // starts unset
                }
                if (!sched::set_specific(*k, &slots[static_cast<std::size_t>(i)]).ok() ||
                    !sched::set_specific(*k2, &slots[static_cast<std::size_t>(n - 1 - i)]).ok()) {
                    wrong.fetch_add(1);
                }
                for (int r = 0; r < 10; ++r) {
                    sched::yield();
                    if (sched::get_specific(*k) != &slots[static_cast<std::size_t>(i)] ||
                        sched::get_specific(*k2) != &slots[static_cast<std::size_t>(n - 1 - i)]) {
                        wrong.fetch_add(1);
                    }
                    if (r == 5 && !sched::move_to((i + 1) % vps()).ok()) {
                        wrong.fetch_add(1);
                    }
                }
            },
            on_vp(i % vps())));
    }
    // One ULT that never sets the key: no destructor call for it; one that sets then clears.
    us.push_back(spawn_or_fail([&]() noexcept { sched::yield(); }));
    us.push_back(spawn_or_fail([&]() noexcept {
        (void)sched::set_specific(*k, &slots[0]);
        (void)sched::set_specific(*k, nullptr);
    }));
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(g_dtor_vp_bad.load(), 0);
    std::vector<void*> expect;
    for (int i = 0; i < n; ++i) {
        expect.push_back(&slots[static_cast<std::size_t>(i)]);
    }
    {
        std::lock_guard<std::mutex> g(g_dtor_mutex);
        std::vector<void*> got = g_dtor_values;
        std::sort(got.begin(), got.end());
        std::sort(expect.begin(), expect.end());
        EXPECT_EQ(got, expect) << "the destructor must run once per non-null value, with that value";
    }
    EXPECT_EQ(sched::get_specific(*k), nullptr) << "the primary ULT never set the key";
    // The primary has its own values too.
    int mine = 0;
    ASSERT_TRUE(sched::set_specific(*k2, &mine).ok());
    EXPECT_EQ(sched::get_specific(*k2), &mine);
    EXPECT_TRUE(sched::key_delete(*k).ok());
    EXPECT_TRUE(sched::key_delete(*k2).ok());
}

TEST_P(UltLocalTest, KeyErrors) {
    int x = 0;
    EXPECT_EQ(sched::set_specific(-1, &x).code(), errc::invalid_argument);
    EXPECT_EQ(sched::set_specific(256, &x).code(), errc::invalid_argument);
    EXPECT_EQ(sched::set_specific(1 << 20, &x).code(), errc::invalid_argument);
    EXPECT_EQ(sched::get_specific(-1), nullptr);
    EXPECT_EQ(sched::get_specific(100000), nullptr);
    EXPECT_EQ(sched::key_delete(-1).code(), errc::invalid_argument);
    EXPECT_EQ(sched::key_delete(256).code(), errc::invalid_argument);

    auto k = sched::key_create();
    ASSERT_TRUE(k.ok());
    ASSERT_TRUE(sched::set_specific(*k, &x).ok());
    ASSERT_TRUE(sched::key_delete(*k).ok());
    EXPECT_EQ(sched::key_delete(*k).code(), errc::invalid_argument) << "deleting a key twice";
    EXPECT_FALSE(sched::set_specific(*k, &x).ok()) << "setting a deleted key";
    EXPECT_EQ(sched::get_specific(*k), nullptr) << "a deleted key reads as null";

    // A key created later (possibly reusing the number) starts unset.
    auto k2 = sched::key_create();
    ASSERT_TRUE(k2.ok());
    EXPECT_EQ(sched::get_specific(*k2), nullptr);
    EXPECT_TRUE(sched::key_delete(*k2).ok());
}

TEST_P(UltLocalTest, KeyLimit) {
    std::vector<sched::key> keys;
    status last;
    for (int i = 0; i < 300; ++i) {
        auto k = sched::key_create();
        if (!k.ok()) {
            last = k.error();
            break;
        }
        keys.push_back(*k);
    }
    EXPECT_FALSE(last.ok()) << "more than 256 keys were created";
    EXPECT_GE(keys.size(), 1u);
    EXPECT_LE(keys.size(), 256u);
    std::set<sched::key> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), keys.size());
    for (sched::key k : keys) {
        EXPECT_TRUE(sched::key_delete(k).ok());
    }
    auto again = sched::key_create();
    EXPECT_TRUE(again.ok()) << "keys must be reusable after key_delete";
    if (again.ok()) {
        EXPECT_TRUE(sched::key_delete(*again).ok());
    }
}

// ---- wait_until and progress ----------------------------------------------------------------

TEST_P(UltLocalTest, WaitUntilConditionSetByAnotherVp) {
    std::atomic<bool> flag{false};
    std::atomic<bool> flag2{false};
    const int other = vps() - 1;
    sched::ult* setter = spawn_or_fail(
        [&]() noexcept {
            sched::sleep_for(5ms);
            flag = true;
            sched::wait_until([&] { return flag2.load(); });  // waits on its own VP too
        },
        on_vp(other));
    const std::uint64_t polls0 = sum_stats(&sched::vp_stats::polls);
    sched::wait_until([&] { return flag.load(); });
    EXPECT_TRUE(flag.load());
    flag2 = true;
    join_or_fail(setter);
    EXPECT_GT(sum_stats(&sched::vp_stats::polls), polls0);
}

struct poll_state {
    std::atomic<int> calls{0};
    std::atomic<bool> done{false};
    int k = 0;
};

int count_poll(void* p) noexcept {
    auto* s = static_cast<poll_state*>(p);
    if (s->calls.fetch_add(1) + 1 >= s->k) {
        s->done = true;
    }
    return 1;
}

bool poll_done(void* p) noexcept { return static_cast<poll_state*>(p)->done.load(); }

TEST_P(UltLocalTest, WaitUntilWithPollFunction) {
    poll_state s;
    s.k = 25;
    sched::wait_until(&poll_done, &s, &count_poll, &s);
    EXPECT_TRUE(s.done.load());
    EXPECT_GE(s.calls.load(), 25);

    // Several ULTs on every VP, each with its own poll state.
    constexpr int n = 12;
    std::vector<std::unique_ptr<poll_state>> states;
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        states.push_back(std::make_unique<poll_state>());
        states.back()->k = 3 + i;
        poll_state* ps = states.back().get();
        us.push_back(spawn_or_fail([ps]() noexcept { sched::wait_until(&poll_done, ps, &count_poll, ps); }, on_vp(i % vps())));
    }
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
    for (int i = 0; i < n; ++i) {
        EXPECT_TRUE(states[static_cast<std::size_t>(i)]->done.load());
        EXPECT_GE(states[static_cast<std::size_t>(i)]->calls.load(), 3 + i);
    }
    // A condition that is already true returns at once.
    poll_state ready;
    ready.done = true;
    ready.k = 1000;
    sched::wait_until(&poll_done, &ready, &count_poll, &ready);
    EXPECT_TRUE(ready.done.load());
}

struct progress_counter {
    std::atomic<long> calls{0};
    std::atomic<unsigned> vp_mask{0};
    std::atomic<int> wrong_arg{0};
    progress_counter* self = this;
};

int count_progress(void* p) noexcept {
    auto* c = static_cast<progress_counter*>(p);
    if (c->self != c) {
        return 0;  // not a progress_counter: someone passed the wrong argument
    }
    c->calls.fetch_add(1);
    int v = sched::current_vp();
    if (v >= 0 && v < 32) {
        c->vp_mask.fetch_or(1u << v);
    }
    return 0;
}

struct other_arg {
    std::atomic<long> calls{0};
    std::atomic<int> wrong{0};
    std::uint64_t magic = 0x5eed5eed5eedULL;
};

int other_progress(void* p) noexcept {
    auto* o = static_cast<other_arg*>(p);
    if (o->magic != 0x5eed5eed5eedULL) {
        return 0;
    }
    o->calls.fetch_add(1);
    return 0;
}

TEST_P(UltLocalTest, ProgressFunctionsAreCalled) {
    progress_counter c;
    auto h = sched::register_progress(&count_progress, &c);
    ASSERT_TRUE(h.ok()) << h.error();
    // Called between ULTs that wait in wait_until().
    sched::wait_until([&] { return c.calls.load() >= 10; });
    EXPECT_GE(c.calls.load(), 10);
    EXPECT_NE(c.vp_mask.load() & 1u, 0u);
    if (vps() >= 2) {
        // And by idle VPs (woken so that they look again).
        give_up_after limit(20s);
        while ((c.vp_mask.load() & ~1u) == 0 && !limit.expired()) {
            sched::notify_all_vps();
            sched::sleep_for(1ms);
        }
        EXPECT_NE(c.vp_mask.load() & ~1u, 0u) << "no idle VP called the progress function";
    }
    EXPECT_TRUE(sched::unregister_progress(*h).ok());
    EXPECT_EQ(sched::unregister_progress(*h).code(), errc::invalid_argument) << "unregistering twice";
}

TEST_P(UltLocalTest, EachProgressFunctionGetsItsOwnArgument) {
    progress_counter a;
    other_arg b;
    auto ha = sched::register_progress(&count_progress, &a);
    ASSERT_TRUE(ha.ok());
    auto hb = sched::register_progress(&other_progress, &b);
    ASSERT_TRUE(hb.ok());
    EXPECT_NE(*ha, *hb);
    give_up_after limit(20s);
    sched::wait_until([&] { return (a.calls.load() >= 5 && b.calls.load() >= 5) || limit.expired(); });
    EXPECT_GE(a.calls.load(), 5) << "first progress function not called with its own argument";
    EXPECT_GE(b.calls.load(), 5) << "second progress function not called with its own argument";
    EXPECT_TRUE(sched::unregister_progress(*hb).ok());
    EXPECT_TRUE(sched::unregister_progress(*ha).ok());
}

TEST_P(UltLocalTest, ProgressRegistrationErrors) {
    auto null_fn = sched::register_progress(nullptr, nullptr);
    ASSERT_FALSE(null_fn.ok());
    EXPECT_EQ(null_fn.error().code(), errc::invalid_argument);
    EXPECT_EQ(sched::unregister_progress(-1).code(), errc::invalid_argument);
    EXPECT_EQ(sched::unregister_progress(16).code(), errc::invalid_argument);
    EXPECT_EQ(sched::unregister_progress(12345).code(), errc::invalid_argument);

    std::vector<int> handles;
    progress_counter c;
    status last;
    for (int i = 0; i < 20; ++i) {
        auto h = sched::register_progress(&count_progress, &c);
        if (!h.ok()) {
            last = h.error();
            break;
        }
        handles.push_back(*h);
    }
    EXPECT_FALSE(last.ok()) << "more than 16 progress functions were registered";
    EXPECT_LE(handles.size(), 16u);
    EXPECT_GE(handles.size(), 1u);
    std::set<int> unique(handles.begin(), handles.end());
    EXPECT_EQ(unique.size(), handles.size());
    for (int h : handles) {
        EXPECT_TRUE(sched::unregister_progress(h).ok());
    }
    auto again = sched::register_progress(&count_progress, &c);
    ASSERT_TRUE(again.ok()) << "slots must be reusable";
    EXPECT_TRUE(sched::unregister_progress(*again).ok());
}

// ---- set_wait_reason (no observable effect outside deadlock reports: must be harmless) -------

TEST_P(UltLocalTest, WaitReasonIsHarmless) {
    sched::set_wait_reason("testing");
    sched::yield();
    std::thread t([] { sched::set_wait_reason("from a thread"); });
    t.join();
    SUCCEED();
}

}  // namespace
