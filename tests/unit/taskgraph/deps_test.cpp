// Dependencies of the task-graph core (taskgraph/): inferred from access modes in submission
// order for every pair of modes, switched off per handle and per task, declared explicitly,
// and a random graph checked against a sequential replay. Every test runs with 1 and 2 workers
// (one VP each) under the eager and prio policies.
//
// How a missing or extra dependency shows: task A is held back by an application acquisition
// of a second handle G (A reads G); B, submitted after A on handle X, must not run before A
// when their modes conflict, and must run while A is held back when they do not (R after R).
// The test thread waits with sched::sleep_for, which lets its VP run the workers, so "B has not
// run" after the pause is a fact about the dependencies, not about an idle VP.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "tg_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;

using Deps = tg_fixture;

constexpr tg::access_mode all_modes[] = {tg::access_read, tg::access_write, tg::access_rw};

bool conflict(tg::access_mode a, tg::access_mode b) { return ((a | b) & tg::access_write) != 0; }

struct held_pair {
    std::atomic<int> a_done{0};
    std::atomic<int> b_ran{0};
    std::atomic<int> b_saw_a_done{-1};
};

/// Runs the A/B experiment; `seq_handle` and `seq_task` switch inferred dependencies.
void run_pair(tg::access_mode ma, tg::access_mode mb, bool seq_handle, bool seq_task, bool expect_order) {
    SCOPED_TRACE(std::string("A ") + mode_name(ma) + ", then B " + mode_name(mb));
    int x = 0;
    int g = 0;
    tg::data* hx = nullptr;
    tg::data* hg = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    ASSERT_TRUE(tg::register_variable(&hg, &g, sizeof g).ok());
    tg::set_sequential_consistency(hx, seq_handle);
    ASSERT_TRUE(tg::acquire(hg, tg::access_write).ok());

    held_pair s;
    probe pa{[&](void**) {
        sched::sleep_for(2ms);  // give a wrongly unordered B time to start
        s.a_done.store(1);
    }};
    probe pb{[&](void**) {
        s.b_saw_a_done.store(s.a_done.load());
        s.b_ran.store(1);
    }};
    tg::codelet cla = probe_codelet(2, "A");
    tg::codelet clb = probe_codelet(1, "B");
    tg::task* a = submit_probe(cla, &pa, {hx, hg}, {ma, tg::access_read});
    tg::task* b = submit_probe(clb, &pb, {hx}, {mb}, tg::default_priority, seq_task);
    if (expect_order) {
        sched::sleep_for(30ms);
        EXPECT_EQ(s.b_ran.load(), 0) << "B ran while A, which it must follow, was held back";
    } else {
        ASSERT_TRUE(tg::task_wait(b).ok());  // would wait for ever if B were ordered after A
        EXPECT_EQ(s.b_saw_a_done.load(), 0);
    }
    ASSERT_TRUE(tg::release(hg).ok());
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(s.a_done.load(), 1);
    EXPECT_EQ(s.b_ran.load(), 1);
    if (expect_order) {
        EXPECT_EQ(s.b_saw_a_done.load(), 1) << "B started before A ended";
    }
    tg::task_release(a);
    tg::task_release(b);
    ASSERT_TRUE(tg::unregister(hx).ok());
    ASSERT_TRUE(tg::unregister(hg).ok());
}

TEST_P(Deps, EveryModePairInSubmissionOrder) {
    for (tg::access_mode ma : all_modes) {
        for (tg::access_mode mb : all_modes) {
            run_pair(ma, mb, true, true, conflict(ma, mb));
        }
    }
}

TEST_P(Deps, SequentialConsistencyOffPerHandle) {
    for (tg::access_mode ma : all_modes) {
        for (tg::access_mode mb : all_modes) {
            run_pair(ma, mb, false, true, false);
        }
    }
}

TEST_P(Deps, SequentialConsistencyOffPerTask) {
    run_pair(tg::access_rw, tg::access_rw, true, false, false);
    run_pair(tg::access_write, tg::access_read, true, false, false);
}

// A writer after several readers waits for all of them (not only the last one), and readers
// after a writer all see its value.
TEST_P(Deps, WriterWaitsForEveryReader) {
    int x = 1;
    tg::data* hx = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    constexpr int nreaders = 16;
    std::atomic<int> readers_done{0};
    std::atomic<int> bad_reads{0};
    int writer_saw = -1;
    probe reader{[&](void** b) {
        int v = *reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr);
        if (v != 1) {
            bad_reads.fetch_add(1);
        }
        sched::sleep_for(std::chrono::microseconds(200));
        readers_done.fetch_add(1);
    }};
    probe writer{[&](void** b) {
        writer_saw = readers_done.load();
        *reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr) = 2;
    }};
    tg::codelet cl = probe_codelet(1);
    std::vector<tg::task*> ts;
    for (int i = 0; i < nreaders; ++i) {
        ts.push_back(submit_probe(cl, &reader, {hx}, {tg::access_read}));
    }
    ts.push_back(submit_probe(cl, &writer, {hx}, {tg::access_write}));
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(writer_saw, nreaders);
    EXPECT_EQ(bad_reads.load(), 0);
    EXPECT_EQ(x, 2);
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    ASSERT_TRUE(tg::unregister(hx).ok());
}

// Explicit dependencies: declared before either task is submitted, submitted in reverse order;
// a dependency on a finished task is met at once.
TEST_P(Deps, ExplicitDependencies) {
    std::atomic<int> clock{0};
    int stamp[4] = {0, 0, 0, 0};
    probe p[4];
    for (int i = 0; i < 4; ++i) {
        p[i].body = [&, i](void**) {
            sched::sleep_for(std::chrono::microseconds(300));
            stamp[i] = clock.fetch_add(1) + 1;
        };
    }
    tg::codelet cl = probe_codelet(0);
    tg::task* t[4];
    for (auto& ti : t) {
        ti = *tg::task_create();
    }
    // 0 -> {1, 2} -> 3
    ASSERT_TRUE(tg::declare_deps(t[1], &t[0], 1).ok());
    ASSERT_TRUE(tg::declare_deps(t[2], &t[0], 1).ok());
    tg::task* mid[2] = {t[1], t[2]};
    ASSERT_TRUE(tg::declare_deps(t[3], mid, 2).ok());
    for (int i = 3; i >= 0; --i) {
        tg::task_desc d;
        d.cl = &cl;
        d.cl_arg = &p[i];
        ASSERT_TRUE(tg::submit(t[i], d).ok());
    }
    ASSERT_TRUE(tg::task_wait(t[3]).ok());
    EXPECT_LT(stamp[0], stamp[1]);
    EXPECT_LT(stamp[0], stamp[2]);
    EXPECT_LT(stamp[1], stamp[3]);
    EXPECT_LT(stamp[2], stamp[3]);
    EXPECT_GT(stamp[0], 0);

    // After the fact: t[3] is finished, a new task depending on it runs.
    tg::task* late = *tg::task_create();
    ASSERT_TRUE(tg::declare_deps(late, &t[3], 1).ok());
    std::atomic<int> ran{0};
    probe pl{[&](void**) { ran.store(1); }};
    tg::task_desc d;
    d.cl = &cl;
    d.cl_arg = &pl;
    ASSERT_TRUE(tg::submit(late, d).ok());
    ASSERT_TRUE(tg::task_wait(late).ok());
    EXPECT_EQ(ran.load(), 1);
    // Declaring after submission is refused.
    EXPECT_EQ(tg::declare_deps(late, &t[0], 1).code(), errc::invalid_argument);
    for (tg::task* ti : t) {
        tg::task_release(ti);
    }
    tg::task_release(late);
}

// A random sequence of reads and read-modify-writes on a few handles must give exactly the
// values a sequential replay gives: every reader records what it saw, every writer applies a
// non-commutative update.
TEST_P(Deps, RandomGraphMatchesSequentialReplay) {
    constexpr int nhandles = 6;
    constexpr int ntasks = 3000;
    std::vector<std::uint64_t> vals(nhandles, 1);
    std::vector<std::uint64_t> replay(nhandles, 1);
    std::vector<tg::data*> hs(nhandles);
    for (int i = 0; i < nhandles; ++i) {
        ASSERT_TRUE(tg::register_variable(&hs[i], &vals[i], sizeof vals[i]).ok());
    }
    struct op {
        int h1, h2;
        tg::access_mode m1, m2;
        std::uint64_t id;
        std::uint64_t seen = 0;     // what the task read from h1
        std::uint64_t expected = 0;  // what the replay read
        probe p;
    };
    std::mt19937 rng(1234);
    std::vector<op> ops(ntasks);
    tg::codelet cl = probe_codelet(2);
    std::vector<tg::task*> ts;
    for (int i = 0; i < ntasks; ++i) {
        op& o = ops[i];
        o.h1 = static_cast<int>(rng() % nhandles);
        o.h2 = static_cast<int>(rng() % nhandles);
        o.m1 = all_modes[rng() % 3];
        o.m2 = all_modes[rng() % 3];
        o.id = static_cast<std::uint64_t>(i) + 1;
        auto update = [](std::uint64_t v, std::uint64_t id) { return v * 6364136223846793005ULL + id; };
        // Sequential replay: read h1, then writes in buffer order.
        o.expected = replay[o.h1];
        if ((o.m1 & tg::access_write) != 0) {
            replay[o.h1] = update(replay[o.h1], o.id);
        }
        if ((o.m2 & tg::access_write) != 0) {
            replay[o.h2] = update(replay[o.h2], o.id * 7);
        }
        o.p.body = [&o, update](void** b) {
            auto* v1 = reinterpret_cast<std::uint64_t*>(static_cast<tg::variable_interface*>(b[0])->ptr);
            auto* v2 = reinterpret_cast<std::uint64_t*>(static_cast<tg::variable_interface*>(b[1])->ptr);
            o.seen = *v1;
            if ((o.m1 & tg::access_write) != 0) {
                *v1 = update(*v1, o.id);
            }
            if ((o.m2 & tg::access_write) != 0) {
                *v2 = update(*v2, o.id * 7);
            }
        };
        ts.push_back(submit_probe(cl, &o.p, {hs[o.h1], hs[o.h2]}, {o.m1, o.m2}));
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    int wrong = 0;
    for (const op& o : ops) {
        wrong += o.seen != o.expected ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0) << "tasks that read a value the sequential order does not give";
    EXPECT_EQ(vals, replay);
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    for (tg::data* h : hs) {
        ASSERT_TRUE(tg::unregister(h).ok());
    }
}

// Without sequential consistency, tasks run in any order but never in conflicting modes at
// once (as in StarPU): writers alone, readers together. Each kernel checks who else is inside.
TEST_P(Deps, WithoutSequentialConsistencyConflictsNeverOverlap) {
    int x = 0;
    tg::data* hx = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    tg::set_sequential_consistency(hx, false);
    std::atomic<int> writers{0};
    std::atomic<int> readers{0};
    std::atomic<int> overlaps{0};
    probe w{[&](void**) {
        if (writers.fetch_add(1) != 0 || readers.load() != 0) {
            overlaps.fetch_add(1);
        }
        sched::sleep_for(100us);
        writers.fetch_sub(1);
    }};
    probe r{[&](void**) {
        readers.fetch_add(1);
        if (writers.load() != 0) {
            overlaps.fetch_add(1);
        }
        sched::sleep_for(100us);
        readers.fetch_sub(1);
    }};
    tg::codelet cl = probe_codelet(1);
    for (int i = 0; i < 60; ++i) {
        bool write = i % 3 != 1;
        tg::task_release(submit_probe(cl, write ? &w : &r, {hx}, {write ? tg::access_rw : tg::access_read}));
    }
    // The application takes it too: no task may write while it reads.
    ASSERT_TRUE(tg::acquire(hx, tg::access_read).ok());
    readers.fetch_add(1);
    if (writers.load() != 0) {
        overlaps.fetch_add(1);
    }
    sched::sleep_for(1ms);
    readers.fetch_sub(1);
    ASSERT_TRUE(tg::release(hx).ok());
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(overlaps.load(), 0) << "conflicting accesses ran at the same time";
    ASSERT_TRUE(tg::unregister(hx).ok());
}

// Tasks that take two arbitrated handles in opposite buffer orders do not deadlock (handles
// are taken in address order, whatever the buffer order).
TEST_P(Deps, ArbitrationTakesHandlesInOneOrder) {
    int x = 0;
    int y = 0;
    tg::data* hx = nullptr;
    tg::data* hy = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    ASSERT_TRUE(tg::register_variable(&hy, &y, sizeof y).ok());
    tg::set_sequential_consistency(hx, false);
    tg::set_sequential_consistency(hy, false);
    probe p{[&](void** b) {
        ++*reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr);
        sched::yield();
        ++*reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[1])->ptr);
    }};
    tg::codelet cl = probe_codelet(2);
    for (int i = 0; i < 400; ++i) {
        if (i % 2 == 0) {
            tg::task_release(submit_probe(cl, &p, {hx, hy}, {tg::access_rw, tg::access_rw}));
        } else {
            tg::task_release(submit_probe(cl, &p, {hy, hx}, {tg::access_rw, tg::access_rw}));
        }
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(x, 400) << "lost updates: two writers ran at once";
    EXPECT_EQ(y, 400);
    ASSERT_TRUE(tg::unregister(hx).ok());
    ASSERT_TRUE(tg::unregister(hy).ok());
}

// Switching sequential consistency off keeps the order with what was submitted before.
TEST_P(Deps, SwitchingOffKeepsEarlierOrder) {
    int x = 0;
    int g = 0;
    tg::data* hx = nullptr;
    tg::data* hg = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    ASSERT_TRUE(tg::register_variable(&hg, &g, sizeof g).ok());
    ASSERT_TRUE(tg::acquire(hg, tg::access_write).ok());
    std::atomic<int> first_done{0};
    std::atomic<int> second_saw{-1};
    probe first{[&](void**) { first_done.store(1); }};
    probe second{[&](void**) { second_saw.store(first_done.load()); }};
    tg::codelet cl2 = probe_codelet(2);
    tg::codelet cl1 = probe_codelet(1);
    tg::task_release(submit_probe(cl2, &first, {hx, hg}, {tg::access_write, tg::access_read}));
    tg::set_sequential_consistency(hx, false);
    tg::task* t = submit_probe(cl1, &second, {hx}, {tg::access_write});
    sched::sleep_for(20ms);
    EXPECT_FALSE(tg::task_finished(t)) << "a task submitted after the switch overtook an earlier writer";
    ASSERT_TRUE(tg::release(hg).ok());
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(second_saw.load(), 1);
    tg::task_release(t);
    ASSERT_TRUE(tg::unregister(hx).ok());
    ASSERT_TRUE(tg::unregister(hg).ok());
}

// Tags: tag dependencies declared before the tasks, tasks submitted in reverse order, a tag
// notified by the application, tag_wait, a second carrier of a done tag, restart.
TEST_P(Deps, Tags) {
    const tg::tag_t base = 1000 + 100 * static_cast<tg::tag_t>(workers());
    std::atomic<int> clock{0};
    int stamp[3] = {0, 0, 0};
    probe p[3];
    for (int i = 0; i < 3; ++i) {
        p[i].body = [&, i](void**) {
            sched::sleep_for(std::chrono::microseconds(300));
            stamp[i] = clock.fetch_add(1) + 1;
        };
    }
    tg::tag_t t0 = base, t1 = base + 1, t2 = base + 2, gate_tag = base + 3, gated = base + 4;
    ASSERT_TRUE(tg::tag_declare_deps(t1, &t0, 1).ok());
    ASSERT_TRUE(tg::tag_declare_deps(t2, &t1, 1).ok());
    tg::codelet cl = probe_codelet(0);
    std::vector<tg::task*> ts;
    for (int i = 2; i >= 0; --i) {
        tg::task* t = *tg::task_create();
        tg::task_desc d;
        d.cl = &cl;
        d.cl_arg = &p[i];
        d.use_tag = true;
        d.tag = base + static_cast<tg::tag_t>(i);
        ASSERT_TRUE(tg::submit(t, d).ok());
        ts.push_back(t);
    }
    ASSERT_TRUE(tg::tag_wait(t2).ok());
    EXPECT_EQ(stamp[0], 1);
    EXPECT_EQ(stamp[1], 2);
    EXPECT_EQ(stamp[2], 3);

    // Another task carrying the done tag t0 leaves it done (StarPU): tag_wait does not wait
    // for it. After tag_restart, the next carrier is waited for.
    std::atomic<int> hold{1};
    probe ph{[&](void**) {
        while (hold.load() != 0) {
            sched::sleep_for(std::chrono::microseconds(200));
        }
    }};
    tg::task* again = *tg::task_create();
    tg::task_desc d;
    d.cl = &cl;
    d.cl_arg = &ph;
    d.use_tag = true;
    d.tag = t0;
    ASSERT_TRUE(tg::submit(again, d).ok());
    ASSERT_TRUE(tg::tag_wait(t0).ok()) << "the tag was done already";
    EXPECT_FALSE(tg::task_finished(again));
    hold.store(0);
    ASSERT_TRUE(tg::task_wait(again).ok());
    ts.push_back(again);
    ASSERT_TRUE(tg::tag_restart(t0).ok());
    std::atomic<int> after{0};
    probe pa{[&](void**) {
        sched::sleep_for(std::chrono::milliseconds(5));
        after.store(1);
    }};
    tg::task* third = *tg::task_create();
    d.cl_arg = &pa;
    ASSERT_TRUE(tg::submit(third, d).ok());
    ASSERT_TRUE(tg::tag_wait(t0).ok());
    EXPECT_EQ(after.load(), 1) << "tag_wait returned before the restarted tag's task ended";
    ts.push_back(third);

    // A task waiting for a tag the application notifies.
    ASSERT_TRUE(tg::tag_declare_deps(gated, &gate_tag, 1).ok());
    std::atomic<int> ran{0};
    probe pg{[&](void**) { ran.store(1); }};
    tg::task* g = *tg::task_create();
    d.cl_arg = &pg;
    d.tag = gated;
    ASSERT_TRUE(tg::submit(g, d).ok());
    ts.push_back(g);
    sched::sleep_for(20ms);
    EXPECT_EQ(ran.load(), 0) << "a task ran before the tag it waits for was notified";
    ASSERT_TRUE(tg::tag_notify(gate_tag).ok());
    EXPECT_TRUE(tg::tag_notify(gate_tag).ok()) << "notifying a done tag does nothing (StarPU)";
    ASSERT_TRUE(tg::tag_wait(gated).ok());
    EXPECT_EQ(ran.load(), 1);
    ASSERT_TRUE(tg::wait_for_all().ok());
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    for (tg::tag_t t = base; t <= gated; ++t) {
        tg::tag_remove(t);
    }
}

INSTANTIATE_TEST_SUITE_P(Workers, Deps,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::ValuesIn(all_policies)),
                         param_name);

}  // namespace
