// Blocking primitives (scheduler/sync.hpp) under contention, across VPs, and woken from plain
// threads. Parameterised over 2 and 4 VPs (4 oversubscribes a 2-core machine on purpose).
#include "scheduler/sync.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;
namespace sched = mpc::sched;

class SyncTest : public runtime_fixture {};

INSTANTIATE_TEST_SUITE_P(Vps, SyncTest, ::testing::Values(2, 4), vps_name);

void join_all(const std::vector<sched::ult*>& us) {
    for (sched::ult* u : us) {
        join_or_fail(u);
    }
}

// ---- mutex ----------------------------------------------------------------------------------

TEST_P(SyncTest, MutexMutualExclusion) {
    constexpr int ults = 1000;
    constexpr int iters = 20;
    sched::mutex m;
    long counter = 0;  // deliberately not atomic: the mutex protects it
    bool inside = false;
    std::atomic<int> overlaps{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < ults; ++i) {
        us.push_back(spawn_or_fail([&, i]() noexcept {
            for (int k = 0; k < iters; ++k) {
                m.lock();
                if (inside) {
                    overlaps.fetch_add(1);
                }
                inside = true;
                long c = counter;
                if ((k + i) % 3 == 0) {
                    sched::yield();  // keep the lock across a switch
                }
                counter = c + 1;
                inside = false;
                m.unlock();
                if (k % 4 == 0) {
                    sched::yield();
                }
            }
        }));
    }
    join_all(us);
    EXPECT_EQ(overlaps.load(), 0);
    EXPECT_EQ(counter, static_cast<long>(ults) * iters);
    EXPECT_TRUE(m.try_lock()) << "the mutex must be free at the end";
    m.unlock();
}

TEST_P(SyncTest, MutexTryLock) {
    sched::mutex m;
    ASSERT_TRUE(m.try_lock());
    bool other_got_it = true;
    sched::ult* u = spawn_or_fail([&]() noexcept { other_got_it = m.try_lock(); }, on_vp(vps() - 1));
    join_or_fail(u);
    EXPECT_FALSE(other_got_it);
    EXPECT_FALSE(m.try_lock()) << "try_lock is not recursive";
    m.unlock();
    u = spawn_or_fail(
        [&]() noexcept {
            other_got_it = m.try_lock();
            if (other_got_it) {
                m.unlock();
            }
        },
        on_vp(vps() - 1));
    join_or_fail(u);
    EXPECT_TRUE(other_got_it);
}

TEST_P(SyncTest, MutexHandsOffToWaitersInFifoOrder) {
    // Waiters queue up in a known order on VP 0; the mutex is handed to them in that order.
    sched::mutex m;
    m.lock();
    constexpr int n = 20;
    std::vector<int> order;
    std::atomic<int> queued{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail(
            [&, i]() noexcept {
                queued.fetch_add(1);
                m.lock();
                order.push_back(i);
                m.unlock();
            },
            on_vp(0)));
        // Let it run up to its lock() before the next one starts (same VP, FIFO).
        sched::wait_until([&] { return queued.load() == i + 1; });
        sched::yield();
    }
    m.unlock();
    join_all(us);
    ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
    }
}

// ---- condition_variable ---------------------------------------------------------------------

TEST_P(SyncTest, ConditionVariableBoundedBuffer) {
    constexpr int producers = 500;
    constexpr int consumers = 500;
    constexpr int per_producer = 10;
    constexpr int total = producers * per_producer;
    constexpr std::size_t capacity = 8;
    sched::mutex m;
    sched::condition_variable not_full;
    sched::condition_variable not_empty;
    std::deque<int> buffer;
    int produced = 0;
    int consumed = 0;
    std::atomic<int> overfull{0};
    std::vector<std::atomic<int>> seen(total);
    for (auto& s : seen) {
        s.store(0);
    }
    std::vector<sched::ult*> us;
    for (int p = 0; p < producers; ++p) {
        us.push_back(spawn_or_fail([&, p]() noexcept {
            for (int i = 0; i < per_producer; ++i) {
                m.lock();
                not_full.wait(m, [&] { return buffer.size() < capacity; });
                buffer.push_back(p * per_producer + i);
                if (buffer.size() > capacity) {
                    overfull.fetch_add(1);
                }
                ++produced;
                m.unlock();
                not_empty.notify_one();
            }
        }));
    }
    // Consumers take items until `total` were taken overall (each takes per_producer items).
    for (int c = 0; c < consumers; ++c) {
        us.push_back(spawn_or_fail([&]() noexcept {
            for (int i = 0; i < per_producer; ++i) {
                m.lock();
                not_empty.wait(m, [&] { return !buffer.empty(); });
                int item = buffer.front();
                buffer.pop_front();
                ++consumed;
                m.unlock();
                not_full.notify_one();
                if (item >= 0 && item < total) {
                    seen[static_cast<std::size_t>(item)].fetch_add(1);
                }
            }
        }));
    }
    join_all(us);
    EXPECT_EQ(overfull.load(), 0);
    EXPECT_EQ(produced, total);
    EXPECT_EQ(consumed, total);
    EXPECT_TRUE(buffer.empty());
    int wrong = 0;
    for (auto& s : seen) {
        wrong += s.load() != 1;
    }
    EXPECT_EQ(wrong, 0) << "items consumed zero or several times";
}

TEST_P(SyncTest, ConditionVariableNotifyAll) {
    constexpr int n = 200;
    sched::mutex m;
    sched::condition_variable cv;
    bool go = false;
    int waiting = 0;
    std::atomic<int> released{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&]() noexcept {
            m.lock();
            ++waiting;
            cv.wait(m, [&] { return go; });
            m.unlock();
            released.fetch_add(1);
        }));
    }
    // Once the count reads n under the mutex, all n are parked in cv.wait (they hold the mutex
    // from the increment until wait releases it).
    for (;;) {
        m.lock();
        if (waiting == n) {
            break;
        }
        m.unlock();
        sched::yield();
    }
    EXPECT_EQ(released.load(), 0);
    go = true;
    m.unlock();
    cv.notify_all();
    join_all(us);
    EXPECT_EQ(released.load(), n);
}

TEST_P(SyncTest, ConditionVariableNotifyOneWakesOne) {
    constexpr int n = 10;
    sched::mutex m;
    sched::condition_variable cv;
    int tickets = 0;
    int waiting = 0;
    std::atomic<int> woke{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&]() noexcept {
            m.lock();
            ++waiting;
            cv.wait(m, [&] { return tickets > 0; });
            --tickets;
            m.unlock();
            woke.fetch_add(1);
        }));
    }
    for (;;) {
        m.lock();
        if (waiting == n) {
            m.unlock();
            break;
        }
        m.unlock();
        sched::yield();
    }
    for (int i = 1; i <= n; ++i) {
        m.lock();
        ++tickets;
        m.unlock();
        cv.notify_one();
        sched::wait_until([&] { return woke.load() == i; });
        EXPECT_EQ(woke.load(), i);
    }
    join_all(us);
    EXPECT_EQ(tickets, 0);
    cv.notify_one();  // nobody waits: harmless
    cv.notify_all();
}

// ---- barrier --------------------------------------------------------------------------------

TEST_P(SyncTest, BarrierManyUltsManyRounds) {
    constexpr int n = 1000;
    constexpr int rounds = 20;
    sched::barrier b(n);
    std::vector<std::atomic<int>> arrived(rounds);
    std::vector<std::atomic<int>> leaders(rounds);
    for (int r = 0; r < rounds; ++r) {
        arrived[static_cast<std::size_t>(r)] = 0;
        leaders[static_cast<std::size_t>(r)] = 0;
    }
    std::atomic<int> early{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&, i]() noexcept {
            for (int r = 0; r < rounds; ++r) {
                arrived[static_cast<std::size_t>(r)].fetch_add(1);
                if ((i + r) % 7 == 0) {
                    sched::yield();
                }
                if (b.arrive_and_wait()) {
                    leaders[static_cast<std::size_t>(r)].fetch_add(1);
                }
                if (arrived[static_cast<std::size_t>(r)].load() != n) {
                    early.fetch_add(1);  // left the barrier before everyone arrived
                }
            }
        }));
    }
    join_all(us);
    EXPECT_EQ(early.load(), 0);
    for (int r = 0; r < rounds; ++r) {
        EXPECT_EQ(arrived[static_cast<std::size_t>(r)].load(), n) << "round " << r;
        EXPECT_EQ(leaders[static_cast<std::size_t>(r)].load(), 1) << "round " << r << ": exactly one true";
    }
}

TEST_P(SyncTest, BarrierOfOne) {
    sched::barrier b(1);
    for (int i = 0; i < 5; ++i) {
        EXPECT_TRUE(b.arrive_and_wait());
    }
}

// ---- semaphore ------------------------------------------------------------------------------

TEST_P(SyncTest, SemaphoreLimitsConcurrency) {
    constexpr std::size_t permits = 3;
    constexpr int n = 300;
    sched::semaphore s(permits);
    std::atomic<int> current{0};
    std::atomic<int> max_seen{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&]() noexcept {
            for (int k = 0; k < 3; ++k) {
                s.acquire();
                int c = current.fetch_add(1) + 1;
                int m = max_seen.load();
                while (c > m && !max_seen.compare_exchange_weak(m, c)) {
                }
                sched::yield();
                sched::yield();
                current.fetch_sub(1);
                s.release();
            }
        }));
    }
    join_all(us);
    EXPECT_LE(max_seen.load(), static_cast<int>(permits));
    EXPECT_GE(max_seen.load(), 1);
    EXPECT_EQ(current.load(), 0);
    EXPECT_EQ(s.value(), permits) << "every permit must be back";
}

TEST_P(SyncTest, SemaphoreTryAcquireAndValue) {
    sched::semaphore s(2);
    EXPECT_EQ(s.value(), 2u);
    EXPECT_TRUE(s.try_acquire());
    EXPECT_TRUE(s.try_acquire());
    EXPECT_FALSE(s.try_acquire());
    EXPECT_EQ(s.value(), 0u);
    s.release(5);
    EXPECT_EQ(s.value(), 5u);
    for (int i = 0; i < 5; ++i) {
        s.acquire();  // does not block
    }
    EXPECT_EQ(s.value(), 0u);
    s.release(0);
    EXPECT_EQ(s.value(), 0u);
}

TEST_P(SyncTest, SemaphoreSignalsAcrossVps) {
    sched::semaphore ready(0);
    sched::semaphore done(0);
    int payload = 0;
    int seen = -1;
    int waiter_vp = -1;
    sched::ult* waiter = spawn_or_fail(
        [&]() noexcept {
            ready.acquire();
            seen = payload;
            waiter_vp = sched::current_vp();
            done.release();
        },
        on_vp(0));
    sched::ult* signaller = spawn_or_fail(
        [&]() noexcept {
            payload = 4242;
            ready.release();
            done.acquire();
        },
        on_vp(vps() - 1));
    join_or_fail(waiter);
    join_or_fail(signaller);
    EXPECT_EQ(seen, 4242);
    EXPECT_EQ(waiter_vp, 0);
    EXPECT_EQ(ready.value(), 0u);
    EXPECT_EQ(done.value(), 0u);
}

TEST_P(SyncTest, SemaphoreReleaseManyWakesMany) {
    constexpr int n = 100;
    sched::semaphore s(0);
    std::atomic<int> through{0};
    std::vector<sched::ult*> us;
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail([&]() noexcept {
            s.acquire();
            through.fetch_add(1);
        }));
    }
    s.release(n / 2);
    sched::wait_until([&] { return through.load() == n / 2; });
    for (int i = 0; i < 10; ++i) {
        sched::yield();
    }
    EXPECT_EQ(through.load(), n / 2) << "release(k) let more than k ULTs through";
    s.release(n / 2 + 3);
    join_all(us);
    EXPECT_EQ(through.load(), n);
    EXPECT_EQ(s.value(), 3u);
}

TEST_P(SyncTest, SemaphoreMayBeReusedAsSoonAsTheWaiterReturns) {
    // A common completion pattern: the waiter owns the semaphore and ends its life as soon as
    // acquire() returns. release() must not touch it after handing the unit over.
    constexpr int rounds = 60000;
    struct alignas(64) slot {
        unsigned char bytes[sizeof(sched::semaphore)];
    };
    std::atomic<int> corrupted{0};
    std::atomic<sched::semaphore*> handoff{nullptr};
    std::atomic<int> released_round{-1};
    sched::ult* waiter = spawn_or_fail(
        [&]() noexcept {
            slot storage;
            for (int r = 0; r < rounds; ++r) {
                auto* s = new (storage.bytes) sched::semaphore(0);
                handoff.store(s);
                s->acquire();
                // The semaphore is dead now: the memory gets another use at once.
                s->~semaphore();
                std::memset(storage.bytes, 0xA5, sizeof storage.bytes);
                while (released_round.load() != r) {  // the releaser has returned from release()
                    sched::yield();
                }
                for (unsigned char c : storage.bytes) {
                    if (c != 0xA5) {
                        corrupted.fetch_add(1);
                        break;
                    }
                }
            }
        },
        on_vp(0));
    sched::ult* releaser = spawn_or_fail(
        [&]() noexcept {
            for (int r = 0; r < rounds; ++r) {
                sched::semaphore* s = nullptr;
                while ((s = handoff.exchange(nullptr)) == nullptr) {
                    sched::yield();
                }
                for (int spin = 0; spin < 200; ++spin) {  // most of the time, let the waiter park first
                    cpu_relax();
                }
                s->release();
                released_round.store(r);
            }
        },
        on_vp(vps() - 1));
    join_or_fail(waiter);
    join_or_fail(releaser);
    EXPECT_EQ(corrupted.load(), 0) << "semaphore::release() wrote to the semaphore after waking its waiter";
}

// ---- wait_queue used directly ---------------------------------------------------------------

TEST_P(SyncTest, WaitQueueFifoAndNotify) {
    constexpr int n = 16;
    spinlock lk;
    sched::wait_queue wq;
    int queued = 0;
    std::vector<sched::ult*> by_ticket(n, nullptr);
    std::atomic<int> woken{0};
    std::vector<sched::ult*> us;
    EXPECT_TRUE(wq.empty());
    for (int i = 0; i < n; ++i) {
        us.push_back(spawn_or_fail(
            [&, i]() noexcept {
                lk.lock();
                by_ticket[static_cast<std::size_t>(queued++)] = sched::self();
                wq.wait(lk);  // releases lk once parked, does not re-acquire it
                woken.fetch_add(1);
            },
            on_vp(i % vps())));
    }
    for (;;) {
        lk.lock();
        if (queued == n) {
            break;  // keep lk: everyone is in the queue and switched out
        }
        lk.unlock();
        sched::yield();
    }
    EXPECT_FALSE(wq.empty());
    // pop_locked hands out waiters oldest first.
    sched::ult* first = wq.pop_locked();
    sched::ult* second = wq.pop_locked();
    EXPECT_EQ(first, by_ticket[0]);
    EXPECT_EQ(second, by_ticket[1]);
    EXPECT_TRUE(wq.notify_one_locked());  // ticket 2
    lk.unlock();
    sched::wake(first);
    sched::wake(second);
    sched::wait_until([&] { return woken.load() == 3; });
    EXPECT_EQ(woken.load(), 3);
    lk.lock();
    EXPECT_EQ(wq.notify_all_locked(), static_cast<std::size_t>(n - 3));
    EXPECT_TRUE(wq.empty());
    EXPECT_FALSE(wq.notify_one_locked());
    EXPECT_EQ(wq.notify_all_locked(), 0u);
    EXPECT_EQ(wq.pop_locked(), nullptr);
    lk.unlock();
    join_all(us);
    EXPECT_EQ(woken.load(), n);
}

// ---- wake-ups from plain threads ------------------------------------------------------------

TEST_P(SyncTest, MutexUnlockFromPlainThreadWakesUlt) {
    sched::mutex m;
    std::atomic<bool> thread_has_lock{false};
    std::atomic<bool> ult_about_to_lock{false};
    std::atomic<bool> ult_got_lock{false};
    std::thread t([&] {
        unpin_this_thread();
        while (!m.try_lock()) {
        }
        thread_has_lock = true;
        while (!ult_about_to_lock.load()) {
        }
        std::this_thread::sleep_for(5ms);  // most likely parked by now (either way is correct)
        m.unlock();
    });
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            ult_about_to_lock = true;
            m.lock();
            ult_got_lock = true;
            m.unlock();
        },
        on_vp(vps() - 1));
    sched::wait_until([&] { return thread_has_lock.load(); });
    join_or_fail(u);
    t.join();
    EXPECT_TRUE(ult_got_lock.load());
}

TEST_P(SyncTest, SemaphoreReleaseFromPlainThreadWakesUlt) {
    constexpr int rounds = 200;
    sched::semaphore to_ult(0);
    std::atomic<int> got{0};
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            for (int i = 0; i < rounds; ++i) {
                to_ult.acquire();
                got.fetch_add(1);
            }
        },
        on_vp(vps() - 1));
    std::thread t([&] {
        unpin_this_thread();
        for (int i = 0; i < rounds; ++i) {
            if (i % 16 == 0) {
                std::this_thread::sleep_for(200us);  // let the VP go to sleep sometimes
            }
            to_ult.release();
            while (got.load() != i + 1) {
                std::this_thread::yield();
            }
        }
    });
    join_or_fail(u);
    t.join();
    EXPECT_EQ(got.load(), rounds);
}

TEST_P(SyncTest, ConditionVariableNotifyFromPlainThreadWakesUlt) {
    sched::mutex m;
    sched::condition_variable cv;
    bool flag = false;
    std::atomic<bool> waiting{false};
    std::atomic<bool> done{false};
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            m.lock();
            waiting = true;
            cv.wait(m, [&] { return flag; });
            m.unlock();
            done = true;
        },
        on_vp(vps() - 1));
    std::thread t([&] {
        unpin_this_thread();
        while (!waiting.load()) {
        }
        std::this_thread::sleep_for(5ms);
        while (!m.try_lock()) {  // a plain thread may not block on a sched::mutex
            std::this_thread::yield();
        }
        flag = true;
        m.unlock();
        cv.notify_one();
    });
    join_or_fail(u);
    t.join();
    EXPECT_TRUE(done.load());
}

/// Wakes a ULT from a plain thread many times at varying delays, so that some wake-ups land
/// while its VP is on its way to sleep. A wake-up still not seen after a long time (seconds,
/// where microseconds are normal) is lost: the test then counts it, rescues the ULT with
/// notify_all_vps() and stops early, so that it fails instead of hanging.
void plain_thread_wakeups(bool stealable, int vps, int rounds, int max_delay_us) {
    sched::semaphore s(0);
    std::atomic<int> got{0};
    sched::attr a;
    a.vp = vps - 1;
    a.stealable = stealable;
    a.pinned = !stealable;
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            for (int i = 0; i < rounds; ++i) {
                s.acquire();
                got.store(i + 1);
            }
        },
        a);
    int lost = 0;
    std::thread t([&] {
        unpin_this_thread();
        std::minstd_rand rng(12345);
        for (int i = 0; i < rounds; ++i) {
            auto until = std::chrono::steady_clock::now() +
                         std::chrono::microseconds(rng() % static_cast<unsigned>(max_delay_us + 1));
            while (std::chrono::steady_clock::now() < until) {
            }
            s.release();
            give_up_after limit(std::chrono::seconds(2));
            while (got.load() != i + 1 && !limit.expired()) {
                std::this_thread::yield();
            }
            if (got.load() != i + 1) {
                ++lost;
                s.release(static_cast<std::size_t>(rounds - i - 1));  // let the ULT finish
                while (got.load() != rounds) {
                    sched::notify_all_vps();
                    std::this_thread::sleep_for(1ms);
                }
                break;
            }
        }
    });
    join_or_fail(u);
    t.join();
    EXPECT_EQ(got.load(), rounds);
    EXPECT_EQ(lost, 0) << "a wake-up from a plain thread was lost: the ULT stayed parked on its sleeping VP "
                          "until notify_all_vps()";
}

TEST_P(SyncTest, NoLostWakeupsFromPlainThread) { plain_thread_wakeups(false, vps(), 4000, 120); }

TEST_P(SyncTest, NoLostWakeupsFromPlainThreadStealable) { plain_thread_wakeups(true, vps(), 4000, 120); }

TEST(SyncOneVp, NoLostWakeupsFromPlainThread) {
    env_guard spin("MPC_SCHED_SPIN_US", "0");  // the VP goes to sleep as soon as it is idle
    sched::options o;
    o.nr_vps = 1;
    ASSERT_TRUE(sched::init(o).ok());
    plain_thread_wakeups(false, 1, 20000, 10);
    ASSERT_TRUE(sched::finalize().ok());
}

TEST(SyncOneVp, NoLostWakeupsFromPlainThreadStealable) {
    env_guard spin("MPC_SCHED_SPIN_US", "0");
    sched::options o;
    o.nr_vps = 1;
    ASSERT_TRUE(sched::init(o).ok());
    plain_thread_wakeups(true, 1, 20000, 10);
    ASSERT_TRUE(sched::finalize().ok());
}

// ---- ping-pong ------------------------------------------------------------------------------

TEST_P(SyncTest, PingPongAcrossVpsLosesNoWakeup) {
    constexpr int rounds = 100000;
    sched::semaphore ping(0);
    sched::semaphore pong(0);
    long a_count = 0;
    long b_count = 0;
    std::atomic<int> order_errors{0};
    sched::ult* a = spawn_or_fail(
        [&]() noexcept {
            for (int i = 0; i < rounds; ++i) {
                ++a_count;
                ping.release();
                pong.acquire();
                if (b_count != a_count) {
                    order_errors.fetch_add(1);
                }
            }
        },
        on_vp(0));
    sched::ult* b = spawn_or_fail(
        [&]() noexcept {
            for (int i = 0; i < rounds; ++i) {
                ping.acquire();
                ++b_count;
                if (b_count != a_count) {
                    order_errors.fetch_add(1);
                }
                pong.release();
            }
        },
        on_vp(vps() - 1));
    join_or_fail(a);
    join_or_fail(b);
    EXPECT_EQ(a_count, rounds);
    EXPECT_EQ(b_count, rounds);
    EXPECT_EQ(order_errors.load(), 0);
    EXPECT_EQ(ping.value(), 0u);
    EXPECT_EQ(pong.value(), 0u);
}

TEST_P(SyncTest, PingPongWithMutexAndConditionVariable) {
    constexpr int rounds = 20000;
    sched::mutex m;
    sched::condition_variable cv;
    int turn = 0;  // 0: a plays, 1: b plays
    long hits = 0;
    auto player = [&](int me) {
        return [&, me]() noexcept {
            for (int i = 0; i < rounds; ++i) {
                m.lock();
                cv.wait(m, [&] { return turn == me; });
                ++hits;
                turn = 1 - me;
                m.unlock();
                cv.notify_one();
            }
        };
    };
    sched::ult* a = spawn_or_fail(player(0), on_vp(0));
    sched::ult* b = spawn_or_fail(player(1), on_vp(vps() - 1));
    join_or_fail(a);
    join_or_fail(b);
    EXPECT_EQ(hits, 2L * rounds);
}

// ---- park_publish / spin_until: lock-free one-shot events --------------------------------------

/// An event as MPI requests use it: 0 pending, 1 done, else the address of the parked waiter.
struct one_shot {
    std::atomic<std::uintptr_t> state{0};
    long payload = 0;  // written by the signaller before `done`, read by the waiter after

    void signal(long v) noexcept {
        payload = v;
        std::uintptr_t old = state.exchange(1, std::memory_order_acq_rel);  // last access
        if (old > 1) {
            sched::wake(reinterpret_cast<sched::ult*>(old));
        }
    }
    long wait(bool spin) noexcept {
        auto done = [](void* self) noexcept {
            return static_cast<one_shot*>(self)->state.load(std::memory_order_acquire) == 1;
        };
        if (!(spin && sched::spin_until(done, this, 20'000)) && !done(this)) {
            sched::park_publish(
                [](void* self, sched::ult* me) noexcept {
                    std::uintptr_t expect = 0;
                    return static_cast<one_shot*>(self)->state.compare_exchange_strong(
                        expect, reinterpret_cast<std::uintptr_t>(me), std::memory_order_acq_rel);
                },
                this, "one_shot");
        }
        EXPECT_EQ(state.load(std::memory_order_acquire), 1u) << "resumed before the event";
        return payload;
    }
};

TEST_P(SyncTest, ParkPublishOneShotEventsAcrossVps) {
    // Pairs of ULTs on different VPs: the waiter puts a fresh event on its stack, hands it to
    // its signaller through a slot, and waits (parking or spinning); the event dies when wait
    // returns, so a signaller touching it late, or a lost or early wake-up, shows (as a hang, a
    // wrong payload, or under TSan/ASan).
    constexpr int pairs = 8;
    constexpr int rounds = 3000;
    struct slot {
        std::atomic<one_shot*> ev{nullptr};
    };
    std::vector<slot> slots(pairs);
    std::atomic<long> wrong{0};
    std::vector<sched::ult*> us;
    for (int p = 0; p < pairs; ++p) {
        us.push_back(spawn_or_fail(
            [&, p]() noexcept {
                for (int i = 0; i < rounds; ++i) {
                    one_shot ev;
                    slots[p].ev.store(&ev, std::memory_order_release);
                    if (ev.wait(i % 2 == 0) != i) {
                        wrong.fetch_add(1);
                    }
                }
            },
            on_vp(p % vps())));
        us.push_back(spawn_or_fail(
            [&, p]() noexcept {
                for (int i = 0; i < rounds; ++i) {
                    one_shot* ev = nullptr;
                    while ((ev = slots[p].ev.exchange(nullptr, std::memory_order_acq_rel)) == nullptr) {
                        sched::yield();
                    }
                    if (i % 3 == 0) {
                        sched::yield();  // let the waiter park first
                    }
                    ev->signal(i);
                }
            },
            on_vp((p + 1) % vps())));
    }
    join_all(us);
    EXPECT_EQ(wrong.load(), 0);
}

TEST_P(SyncTest, SpinUntilStopsWhenOtherUltsAreReady) {
    // Alone on its VP a spinner sees a flag set from another VP; with a ready ULT on its own
    // VP it gives up at once (returns false) instead of delaying it.
    std::atomic<bool> flag{false};
    auto is_set = [](void* f) noexcept { return static_cast<std::atomic<bool>*>(f)->load(); };
    bool seen = false;
    sched::ult* spinner = spawn_or_fail([&]() noexcept { seen = sched::spin_until(is_set, &flag, 5'000'000'000ULL); },
                                        on_vp(0));
    sched::ult* setter = spawn_or_fail(
        [&]() noexcept {
            sched::sleep_for(2ms);
            flag.store(true);
        },
        on_vp(1));
    join_or_fail(spinner);
    join_or_fail(setter);
    EXPECT_TRUE(seen);

    std::atomic<bool> never{false};
    bool result = true;
    std::atomic<bool> other_ran{false};
    sched::ult* a = spawn_or_fail(
        [&]() noexcept {
            // `b` is ready on this VP: the spin must give way (not run for 5 s).
            auto t0 = std::chrono::steady_clock::now();
            result = sched::spin_until(is_set, &never, 5'000'000'000ULL);
            EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
        },
        on_vp(0));
    sched::ult* b = spawn_or_fail([&]() noexcept { other_ran.store(true); }, on_vp(0));
    join_or_fail(a);
    join_or_fail(b);
    EXPECT_FALSE(result);
    EXPECT_TRUE(other_ran.load());
    // From a plain thread: one check.
    auto t0 = std::chrono::steady_clock::now();
    bool plain = true;
    std::thread([&] { plain = sched::spin_until(is_set, &never, 5'000'000'000ULL); }).join();
    EXPECT_FALSE(plain);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

// ---- wait_list ------------------------------------------------------------------------------

/// A generation barrier on sched::wait_list, as the collectives' slots use it: each arrival
/// counts itself in; the last one moves the generation on and wakes the list; the others wait
/// for the generation to move. A lost wake-up leaves waiters parked: a watchdog thread then
/// counts it, rescues them (wake_all) so that the test fails instead of hanging.
struct gen_barrier {
    explicit gen_barrier(int members) : n(members) {}
    const int n;
    std::atomic<int> count{0};
    std::atomic<std::uint64_t> gen{0};
    sched::wait_list waiters;

    void arrive_and_wait() {
        const std::uint64_t g = gen.load(std::memory_order_acquire);
        if (count.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
            count.store(0, std::memory_order_relaxed);
            gen.store(g + 1, std::memory_order_release);
            waiters.wake_all();
            return;
        }
        struct probe {
            gen_barrier* b;
            std::uint64_t g;
        } pr{this, g};
        auto moved = [](void* p) noexcept {
            auto* q = static_cast<probe*>(p);
            return q->b->gen.load(std::memory_order_acquire) != q->g;
        };
        while (!moved(&pr)) {
            waiters.wait_unless(moved, &pr, "gen_barrier");
        }
    }
};

void wait_list_barrier(int vps, bool stealable, int ults, int rounds) {
    gen_barrier b(ults);
    std::atomic<int> finished{0};
    std::atomic<long> errors{0};
    std::vector<long> seen(static_cast<std::size_t>(ults), 0);
    std::vector<sched::ult*> us;
    for (int i = 0; i < ults; ++i) {
        sched::attr a = on_vp(i % vps, !stealable);
        a.stealable = stealable;
        us.push_back(spawn_or_fail(
            [&, i]() noexcept {
                for (int r = 0; r < rounds; ++r) {
                    __atomic_store_n(&seen[static_cast<std::size_t>(i)], r, __ATOMIC_RELAXED);
                    b.arrive_and_wait();
                    // Everybody has arrived at round r: nobody may still be before it.
                    for (int j = 0; j < ults; ++j) {
                        if (__atomic_load_n(&seen[static_cast<std::size_t>(j)], __ATOMIC_RELAXED) < r) {
                            errors.fetch_add(1);
                        }
                    }
                    if (r % 7 == 0) {
                        sched::yield();  // vary the order of arrival
                    }
                }
                finished.fetch_add(1);
            },
            a));
    }
    int rescues = 0;
    std::thread watchdog([&] {
        unpin_this_thread();
        std::uint64_t last = b.gen.load();
        auto still = std::chrono::steady_clock::now();
        while (finished.load() != ults) {
            std::this_thread::sleep_for(2ms);
            std::uint64_t g = b.gen.load();
            if (g != last) {
                last = g;
                still = std::chrono::steady_clock::now();
            } else if (std::chrono::steady_clock::now() - still > 3s && b.count.load() == 0) {
                ++rescues;  // every member arrived long ago, the generation moved on, some are parked
                b.waiters.wake_all();
                still = std::chrono::steady_clock::now();
            }
        }
    });
    join_all(us);
    watchdog.join();
    EXPECT_EQ(b.gen.load(), static_cast<std::uint64_t>(rounds));
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(rescues, 0) << "a waiter of the wait_list stayed parked after its wake-up";
}

TEST_P(SyncTest, WaitListBarrierLosesNoWakeup) { wait_list_barrier(vps(), false, 2 * vps() + 1, 20000); }

TEST_P(SyncTest, WaitListBarrierOfStealableUltsLosesNoWakeup) { wait_list_barrier(vps(), true, 2 * vps() + 1, 10000); }

TEST_P(SyncTest, WaitListReturnsAtOnceWhenTheConditionHolds) {
    sched::wait_list l;
    std::atomic<bool> flag{true};
    auto is_set = [](void* f) noexcept { return static_cast<std::atomic<bool>*>(f)->load(); };
    sched::ult* u = spawn_or_fail([&]() noexcept { l.wait_unless(is_set, &flag, "test"); }, on_vp(0));
    join_or_fail(u);
    EXPECT_EQ(l.wake_all(), 0u);  // it took itself off the list
}

TEST_P(SyncTest, WaitListWokenFromPlainThread) {
    sched::wait_list l;
    std::atomic<bool> flag{false};
    std::atomic<bool> done{false};
    auto is_set = [](void* f) noexcept { return static_cast<std::atomic<bool>*>(f)->load(); };
    sched::ult* u = spawn_or_fail(
        [&]() noexcept {
            while (!flag.load()) {
                l.wait_unless(is_set, &flag, "test");
            }
            done.store(true);
        },
        on_vp(vps() - 1));
    std::thread t([&] {
        unpin_this_thread();
        std::this_thread::sleep_for(20ms);  // the ULT has parked by now (or will see the flag)
        flag.store(true);
        l.wake_all();
    });
    join_or_fail(u);
    t.join();
    EXPECT_TRUE(done.load());
}

}  // namespace
