// A request's completion callback (completion_waiter::fn, mpi_compat/match.hpp), which the
// thread-less non-blocking collectives between processes use (coll/hier_nb.cpp): the completer
// runs it once when it was watched first; watch() after completion says so and nothing runs;
// with watch() and complete() racing in two threads, exactly one of the two sees the completion.
#include "mpi_compat/match.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

using mpc::mpi::completion_waiter;
using mpc::mpi::request;

struct counter {
    std::atomic<int> calls{0};
    completion_waiter* last = nullptr;
};

void count(completion_waiter* w) noexcept {
    auto* c = static_cast<counter*>(w->arg);
    c->last = w;
    c->calls.fetch_add(1, std::memory_order_relaxed);
}

TEST(RequestCallback, RunsOnceWhenWatchedFirst) {
    request r;
    counter c;
    completion_waiter w{nullptr, nullptr, &count, &c};
    ASSERT_TRUE(r.watch(&w));
    EXPECT_EQ(c.calls.load(), 0);
    r.complete();
    EXPECT_EQ(c.calls.load(), 1);
    EXPECT_EQ(c.last, &w);
    EXPECT_TRUE(r.is_done());
}

TEST(RequestCallback, WatchAfterCompletionFailsAndRunsNothing) {
    request r;
    counter c;
    completion_waiter w{nullptr, nullptr, &count, &c};
    r.complete();
    EXPECT_FALSE(r.watch(&w));
    request u;
    u.complete_unwatched();  // the send that left inside the call that started it
    EXPECT_FALSE(u.watch(&w));
    EXPECT_EQ(c.calls.load(), 0);
}

TEST(RequestCallback, UnwatchWithdrawsTheCallback) {
    request r;
    counter c;
    completion_waiter w{nullptr, nullptr, &count, &c};
    ASSERT_TRUE(r.watch(&w));
    ASSERT_TRUE(r.unwatch(&w));
    r.complete();
    EXPECT_EQ(c.calls.load(), 0);
}

TEST(RequestCallback, RacingCompleterAndWatcherSeeItExactlyOnce) {
    for (int i = 0; i < 2000; ++i) {
        request r;
        counter c;
        completion_waiter w{nullptr, nullptr, &count, &c};
        std::atomic<bool> go{false};
        std::thread completer([&] {
            while (!go.load(std::memory_order_acquire)) {
            }
            r.complete();
        });
        go.store(true, std::memory_order_release);
        const bool watched = r.watch(&w);
        completer.join();
        // watched: the completer ran the callback; not: the watcher counts the completion itself
        ASSERT_EQ(c.calls.load(), watched ? 1 : 0) << "iteration " << i;
        ASSERT_TRUE(r.is_done());
    }
}

}  // namespace
