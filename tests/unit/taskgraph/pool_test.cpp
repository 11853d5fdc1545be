// Recycled task records (taskgraph/pool.hpp) and the small inline lists (small_list.hpp):
// records come back to the VP that made them, whichever thread or VP frees them, so the number
// of mapped records stays at the peak of live ones; a double free is refused.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "scheduler/sched.hpp"
#include "taskgraph/pool.hpp"
#include "taskgraph/small_list.hpp"
#include "taskgraph/tg.hpp"

namespace {

using namespace mpc;
using tg::detail::record_pool;

struct rec {
    long a = 7;
    char pad[200] = {};
};

TEST(RecordPool, ReusesRecordsOnAPlainThread) {
    static record_pool pool(sizeof(rec));
    std::vector<rec*> live;
    for (int i = 0; i < 100; ++i) {
        live.push_back(tg::detail::pool_new<rec>(pool));
        ASSERT_NE(live.back(), nullptr);
        EXPECT_EQ(live.back()->a, 7);
        live.back()->a = i;
    }
    std::set<rec*> distinct(live.begin(), live.end());
    EXPECT_EQ(distinct.size(), live.size()) << "two live records share storage";
    const std::size_t peak = pool.mapped();
    EXPECT_GE(peak, 100u);
    for (int round = 0; round < 50; ++round) {
        for (rec* r : live) {
            tg::detail::pool_delete(pool, r);
        }
        for (rec*& r : live) {
            r = tg::detail::pool_new<rec>(pool);
            ASSERT_NE(r, nullptr);
            EXPECT_EQ(r->a, 7) << "a recycled record is constructed again";
        }
    }
    EXPECT_EQ(pool.mapped(), peak) << "recycled records must be reused, not mapped again";
    for (rec* r : live) {
        tg::detail::pool_delete(pool, r);
    }
}

TEST(RecordPool, RecordsFreedOnOtherThreadsGoBackToTheirMaker) {
    static record_pool pool(sizeof(rec));
    constexpr int n = 64;
    std::vector<rec*> live(n);
    std::size_t peak = 0;
    for (int round = 0; round < 40; ++round) {
        for (rec*& r : live) {
            r = tg::detail::pool_new<rec>(pool);
            ASSERT_NE(r, nullptr);
        }
        if (round == 0) {
            peak = pool.mapped();
        }
        // Freed by another thread (the remote path).
        std::thread t([&] {
            for (rec* r : live) {
                tg::detail::pool_delete(pool, r);
            }
        });
        t.join();
    }
    EXPECT_EQ(pool.mapped(), peak);
}

// Made on VP 0, freed on VP 1 (as a task made by the program and ended by a worker), and the
// other way round, concurrently: each side keeps reusing its own records.
TEST(RecordPool, CrossVpRecycling) {
    static record_pool pool(sizeof(rec));
    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    constexpr int n = 256;
    constexpr int rounds = 200;
    std::atomic<rec*> mailbox[2][n] = {};
    std::atomic<int> failures{0};
    auto body = [&](int me) {
        const int other = 1 - me;
        for (int round = 0; round < rounds; ++round) {
            for (int i = 0; i < n; ++i) {
                rec* r = tg::detail::pool_new<rec>(pool);
                if (r == nullptr || r->a != 7) {
                    failures.fetch_add(1);
                    return;
                }
                r->a = me;
                // Hand it to the other VP, which frees it.
                while (mailbox[other][i].load(std::memory_order_acquire) != nullptr) {
                    sched::yield();
                }
                mailbox[other][i].store(r, std::memory_order_release);
                rec* mine = nullptr;
                while ((mine = mailbox[me][i].exchange(nullptr, std::memory_order_acq_rel)) == nullptr) {
                    sched::yield();
                }
                if (mine->a != other) {
                    failures.fetch_add(1);
                }
                tg::detail::pool_delete(pool, mine);
            }
        }
    };
    sched::attr a0;
    a0.vp = 0;
    a0.pinned = true;
    sched::attr a1;
    a1.vp = 1;
    a1.pinned = true;
    sched::ult* u0 = *sched::spawn([&] { body(0); }, a0);
    sched::ult* u1 = *sched::spawn([&] { body(1); }, a1);
    ASSERT_TRUE(sched::join(u0).ok());
    ASSERT_TRUE(sched::join(u1).ok());
    ASSERT_TRUE(sched::finalize().ok());
    EXPECT_EQ(failures.load(), 0);
    // At most a few records live per VP at once: 2 x 200 x 256 allocations fit in a chunk or two
    // per VP (each chunk holds 64 KiB of records).
    EXPECT_LE(pool.mapped(), 4 * (64 * 1024 / (sizeof(rec) + 16) + 1));
}

TEST(RecordPoolDeathTest, DoubleFreeIsRefused) {
    static record_pool pool(sizeof(rec));
    rec* r = tg::detail::pool_new<rec>(pool);
    ASSERT_NE(r, nullptr);
    r->~rec();
    pool.put(r);
    EXPECT_DEATH(pool.put(r), "freed twice");
}

#if defined(__SANITIZE_ADDRESS__)
// A record given back is poisoned: reading a task after its end is still reported.
TEST(RecordPoolDeathTest, UseAfterPutIsReportedUnderAsan) {
    static record_pool pool(sizeof(rec));
    rec* r = tg::detail::pool_new<rec>(pool);
    ASSERT_NE(r, nullptr);
    tg::detail::pool_delete(pool, r);
    EXPECT_DEATH(
        {
            volatile long x = r->a;
            (void)x;
        },
        "use-after-poison");
}
#endif

TEST(SmallList, InlineThenHeapKeepsOrder) {
    tg::detail::small_list<int, 2> l;
    EXPECT_EQ(l.size(), 0u);
    EXPECT_EQ(l.begin(), l.end());
    for (int i = 0; i < 100; ++i) {
        ASSERT_TRUE(l.push_back(i * 3));
        ASSERT_EQ(l.size(), static_cast<std::size_t>(i + 1));
    }
    int i = 0;
    for (int v : l) {
        EXPECT_EQ(v, i * 3);
        ++i;
    }
    EXPECT_EQ(i, 100);
    EXPECT_EQ(l[57], 171);
}

// Task records through the runtime: many rounds of tasks with successors reuse the records.
TEST(RecordPool, TasksReuseRecords) {
    tg::config c;
    c.ncpus = 2;
    c.config_over_env = true;
    ASSERT_TRUE(tg::init(c).ok());
    long x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    tg::codelet cl;
    cl.name = "incr";
    cl.cpu_funcs[0] = [](void** b, void*) { ++*reinterpret_cast<long*>(static_cast<tg::variable_interface*>(b[0])->ptr); };
    cl.nbuffers = 1;
    cl.modes[0] = tg::access_rw;
    std::size_t after_first = 0;
    for (int round = 0; round < 30; ++round) {
        for (int i = 0; i < 200; ++i) {
            tg::task* t = *tg::task_create();
            tg::task_desc d;
            d.cl = &cl;
            d.handles = &h;
            d.nbuffers = 1;
            ASSERT_TRUE(tg::submit(t, d).ok());
            tg::task_release(t);
        }
        ASSERT_TRUE(tg::wait_for_all().ok());
        if (round == 0) {
            after_first = tg::detail::task_pool().mapped();
        }
    }
    EXPECT_EQ(x, 30 * 200);
    // Without recycling, 6000 more records would be mapped. A task's record goes back just after
    // its completion is counted, so a round may start with a few still on their way: allow
    // one more chunk's worth, no more.
    EXPECT_LT(tg::detail::task_pool().mapped(), after_first + 400) << "task records are not recycled";
    ASSERT_TRUE(tg::unregister(h).ok());
    ASSERT_TRUE(tg::shutdown().ok());
}

}  // namespace
