// The task-graph core (taskgraph/) beyond dependencies: waiting, callbacks, priorities, many
// tasks, workers as ULTs on the engine's VPs, acquisition, unregistration, configuration and
// misuse giving clear errors.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "../env_guard.hpp"
#include "tg_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;

using Runtime = tg_fixture;

// Callbacks run once per task, after the task and before task_wait returns; wait_for_all also
// waits for tasks that callbacks submit while it waits.
TEST_P(Runtime, CallbacksAndWaitForAll) {
    constexpr int n = 2000;
    std::atomic<int> ran{0};
    std::atomic<int> callbacks{0};
    std::atomic<int> callback_before_task{0};
    std::atomic<int> from_callbacks{0};
    tg::codelet cl = probe_codelet(0);
    probe child{[&](void**) { from_callbacks.fetch_add(1); }};
    // One record per task: its body marks it, its callback checks the mark.
    struct per_task {
        std::atomic<int> done{0};
        probe body;
        std::atomic<int>* callbacks;
        std::atomic<int>* before;
        tg::codelet* cl;
        probe* child;
    };
    std::vector<per_task> recs(n);
    auto cb = [](void* a) {
        auto* r = static_cast<per_task*>(a);
        if (r->done.load() != 1) {
            r->before->fetch_add(1);  // a callback may only follow its task
        }
        if (r->callbacks->fetch_add(1) % 100 == 0) {  // a callback may submit tasks
            tg::task* t = *tg::task_create();
            tg::task_desc d;
            d.cl = r->cl;
            d.cl_arg = r->child;
            EXPECT_TRUE(tg::submit(t, d).ok());
            tg::task_release(t);
        }
    };
    tg::task* last = nullptr;
    for (int i = 0; i < n; ++i) {
        per_task& r = recs[i];
        r.body.body = [&r, &ran](void**) {
            r.done.fetch_add(1);
            ran.fetch_add(1);
        };
        r.callbacks = &callbacks;
        r.before = &callback_before_task;
        r.cl = &cl;
        r.child = &child;
        tg::task* t = *tg::task_create();
        tg::task_desc d;
        d.cl = &cl;
        d.cl_arg = &r.body;
        d.callback = cb;
        d.callback_arg = &r;
        ASSERT_TRUE(tg::submit(t, d).ok());
        if (i == n - 1) {
            last = t;
        } else {
            tg::task_release(t);
        }
    }
    ASSERT_TRUE(tg::task_wait(last).ok());
    EXPECT_TRUE(tg::task_finished(last));
    EXPECT_GE(callbacks.load(), 1);
    tg::task_release(last);
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(ran.load(), n);
    EXPECT_EQ(callbacks.load(), n);
    EXPECT_EQ(from_callbacks.load(), n / 100);
    EXPECT_EQ(callback_before_task.load(), 0);
    EXPECT_EQ(tg::tasks_in_flight(), 0);
}

// Workers are ULTs of the engine, one per VP, each on its own VP; current_worker() is -1 outside.
TEST_P(Runtime, WorkersAreUltsOnTheVps) {
    EXPECT_EQ(tg::worker_count(), workers());
    EXPECT_EQ(sched::nr_vps(), workers());
    EXPECT_EQ(tg::current_worker(), -1);
    std::set<int> vps;
    for (int w = 0; w < workers(); ++w) {
        vps.insert(tg::worker_vp(w));
    }
    EXPECT_EQ(static_cast<int>(vps.size()), workers());
    std::atomic<int> bad{0};
    std::atomic<int> seen_mask{0};
    probe p{[&](void**) {
        int w = tg::current_worker();
        if (w < 0 || w >= tg::worker_count() || sched::self() == nullptr || sched::current_vp() != tg::worker_vp(w)) {
            bad.fetch_add(1);
        } else {
            seen_mask.fetch_or(1 << w);
        }
        sched::sleep_for(100us);  // long enough that every worker takes some
    }};
    tg::codelet cl = probe_codelet(0);
    for (int i = 0; i < 200; ++i) {
        tg::task_release(submit_probe(cl, &p, {}, {}));
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(seen_mask.load(), (1 << workers()) - 1) << "every worker should have run tasks";
}

// 100,000 small independent tasks plus a 20,000-task chain on one handle.
TEST_P(Runtime, ManyTasks) {
    constexpr int nindep = 100000;
    constexpr int nchain = 20000;
    std::atomic<long> sum{0};
    probe indep{[&](void**) { sum.fetch_add(1, std::memory_order_relaxed); }};
    long counter = 0;
    probe chain{[&](void** b) {
        auto* v = reinterpret_cast<long*>(static_cast<tg::variable_interface*>(b[0])->ptr);
        ++*v;
    }};
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &counter, sizeof counter).ok());
    tg::codelet cl0 = probe_codelet(0);
    tg::codelet cl1 = probe_codelet(1);
    for (int i = 0; i < nindep; ++i) {
        tg::task_release(submit_probe(cl0, &indep, {}, {}));
        if (i % 5 == 0) {
            tg::task_release(submit_probe(cl1, &chain, {h}, {tg::access_rw}));
        }
    }
    ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
    EXPECT_EQ(counter, nchain);
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(sum.load(), nindep);
    ASSERT_TRUE(tg::unregister(h).ok());
}

// acquire() waits for earlier writers; tasks submitted after it wait for release().
TEST_P(Runtime, AcquireAndRelease) {
    int x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    tg::codelet cl = probe_codelet(1);
    probe set5{[&](void** b) {
        sched::sleep_for(5ms);
        *reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr) = 5;
    }};
    std::atomic<int> later_saw{-1};
    probe later{[&](void** b) { later_saw.store(*reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr)); }};
    tg::task_release(submit_probe(cl, &set5, {h}, {tg::access_write}));
    ASSERT_TRUE(tg::acquire(h, tg::access_rw).ok());
    EXPECT_EQ(x, 5) << "acquire returned before the earlier writer ended";
    tg::task* t = submit_probe(cl, &later, {h}, {tg::access_read});
    sched::sleep_for(20ms);
    EXPECT_FALSE(tg::task_finished(t)) << "a reader ran while the application held the data in RW";
    x = 7;
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::task_wait(t).ok());
    EXPECT_EQ(later_saw.load(), 7);
    tg::task_release(t);
    EXPECT_EQ(tg::release(h).code(), errc::invalid_argument) << "a release without acquire must be refused";
    ASSERT_TRUE(tg::unregister(h).ok());
}

// unregister() waits for the tasks still using the handle; refuses while the application holds
// it acquired, and from inside a task.
TEST_P(Runtime, UnregisterSemantics) {
    int x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    tg::codelet cl = probe_codelet(1);
    probe slow{[&](void** b) {
        sched::sleep_for(10ms);
        *reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr) = 42;
    }};
    tg::task_release(submit_probe(cl, &slow, {h}, {tg::access_write}));
    ASSERT_TRUE(tg::unregister(h).ok());
    EXPECT_EQ(x, 42) << "unregister returned before the task using the handle ended";

    // Sequential consistency off: unregister still waits for the tasks (they use the memory).
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    tg::set_sequential_consistency(h, false);
    x = 0;
    tg::task_release(submit_probe(cl, &slow, {h}, {tg::access_write}));
    ASSERT_TRUE(tg::unregister(h).ok());
    EXPECT_EQ(x, 42);

    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
    status st = tg::unregister(h);
    EXPECT_EQ(st.code(), errc::busy) << "unregistering an acquired handle must be refused";
    ASSERT_TRUE(tg::release(h).ok());

    std::atomic<int> inner{-1};
    probe unreg_inside{[&](void** b) {
        (void)b;
        inner.store(static_cast<int>(tg::unregister(h).code()));
    }};
    tg::task_release(submit_probe(cl, &unreg_inside, {h}, {tg::access_read}));
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(inner.load(), static_cast<int>(errc::busy)) << "unregister from inside a task must be refused";
    ASSERT_TRUE(tg::unregister(h).ok());
}

// unregister_submit() returns at once; the handle goes when its last task ends, and its memory
// is the application's again then.
TEST_P(Runtime, UnregisterSubmit) {
    int x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    tg::codelet cl = probe_codelet(1);
    std::atomic<int> go{0};
    probe slow{[&](void** b) {
        while (go.load() == 0) {
            sched::sleep_for(100us);
        }
        ++*reinterpret_cast<int*>(static_cast<tg::variable_interface*>(b[0])->ptr);
    }};
    for (int i = 0; i < 5; ++i) {
        tg::task_release(submit_probe(cl, &slow, {h}, {tg::access_rw}));
    }
    ASSERT_TRUE(tg::unregister_submit(h).ok());  // must not wait for the held-back tasks
    EXPECT_EQ(x, 0);
    go.store(1);
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(x, 5);
    // Unused: freed at once (a second registration works; ASan checks the frees).
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    ASSERT_TRUE(tg::unregister_submit(h).ok());
}

// wait_for_n_submitted() returns once at most n tasks are left, before they all end.
TEST_P(Runtime, WaitForNSubmitted) {
    tg::codelet cl = probe_codelet(0);
    std::atomic<int> release_upto{0};
    std::atomic<int> started{0};
    probe p{[&](void**) {
        int me = started.fetch_add(1);
        while (me >= release_upto.load()) {
            sched::sleep_for(50us);
        }
    }};
    for (int i = 0; i < 10; ++i) {
        tg::task_release(submit_probe(cl, &p, {}, {}));
    }
    EXPECT_EQ(tg::tasks_in_flight(), 10);
    release_upto.store(6);
    ASSERT_TRUE(tg::wait_for_n_submitted(4).ok());
    EXPECT_EQ(tg::tasks_in_flight(), 4) << "tasks 6..9 are held back, 0..5 have ended";
    release_upto.store(10);
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(tg::tasks_in_flight(), 0);
}

// Misuse gives an error at submission and leaves the runtime working.
TEST_P(Runtime, MisuseIsReported) {
    int x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    std::atomic<int> ran{0};
    probe p{[&](void**) { ran.fetch_add(1); }};
    tg::codelet two = probe_codelet(2, "takes_two");
    tg::data* hs[2] = {h, nullptr};
    tg::access_mode ms[2] = {tg::access_read, tg::access_read};

    tg::task* t = *tg::task_create();
    tg::task_desc d;
    d.cl = &two;
    d.handles = hs;
    d.modes = ms;
    d.cl_arg = &p;
    d.nbuffers = 1;  // the codelet takes two
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument);
    d.nbuffers = 2;  // second handle null
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument);
    hs[1] = h;
    tg::access_mode bad[2] = {tg::access_read, tg::access_none};
    d.modes = bad;
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument);
    tg::codelet nocpu = probe_codelet(2);
    nocpu.where = 1u << 3;  // CUDA only
    d.cl = &nocpu;
    d.modes = ms;
    EXPECT_EQ(tg::submit(t, d).code(), errc::unsupported);
    // Fixed, the same task is accepted; submitting it again is not.
    d.cl = &two;
    ASSERT_TRUE(tg::submit(t, d).ok());
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument);
    ASSERT_TRUE(tg::task_wait(t).ok());
    tg::task_release(t);
    EXPECT_EQ(ran.load(), 1);

    // Blocking calls from a task are refused rather than deadlocking.
    std::atomic<int> codes{0};
    probe blocker{[&](void**) {
        codes.fetch_add(tg::wait_for_all().code() == errc::busy ? 1 : 0);
        codes.fetch_add(tg::acquire(h, tg::access_read).code() == errc::busy ? 1 : 0);
    }};
    tg::codelet zero = probe_codelet(0);
    tg::task* b = submit_probe(zero, &blocker, {}, {});
    ASSERT_TRUE(tg::task_wait(b).ok());
    tg::task_release(b);
    EXPECT_EQ(codes.load(), 2);
    ASSERT_TRUE(tg::unregister(h).ok());
}

// A plain thread (not a ULT) submits and waits: it sleeps on a futex, the workers run.
TEST_P(Runtime, PlainThreadWaits) {
    std::atomic<int> ran{0};
    probe p{[&](void**) {
        sched::sleep_for(1ms);
        ran.fetch_add(1);
    }};
    tg::codelet cl = probe_codelet(0);
    std::thread th([&] {
        EXPECT_EQ(sched::self(), nullptr);
        tg::task* t = submit_probe(cl, &p, {}, {});
        EXPECT_TRUE(tg::task_wait(t).ok());
        EXPECT_EQ(ran.load(), 1);
        tg::task_release(t);
        for (int i = 0; i < 50; ++i) {
            tg::task_release(submit_probe(cl, &p, {}, {}));
        }
        EXPECT_TRUE(tg::wait_for_all().ok());
        EXPECT_EQ(ran.load(), 51);
    });
    // The main flow is VP 0's primary ULT: it must not block its VP while the thread waits.
    while (ran.load() < 51) {
        sched::sleep_for(1ms);
    }
    th.join();
}

INSTANTIATE_TEST_SUITE_P(Workers, Runtime,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::ValuesIn(all_policies)),
                         param_name);

// Priorities: with one worker on the program's own VP, nothing runs until the program waits, so
// the order is entirely the policy's: prio runs the highest priority first (FIFO among equals),
// eager runs in submission order.
std::vector<int> run_order(const char* policy) {
    tg::config c;
    c.ncpus = 1;
    c.sched = policy;
    c.config_over_env = true;
    EXPECT_TRUE(tg::init(c).ok());
    constexpr int prios[] = {0, 3, -2, 5, 3, -5, 1, 5, 0, 2};
    std::vector<int> order;
    std::vector<probe> ps(std::size(prios));
    tg::codelet cl = probe_codelet(0);
    for (std::size_t i = 0; i < std::size(prios); ++i) {
        ps[i].body = [&order, i](void**) { order.push_back(static_cast<int>(i)); };
        tg::task_release(submit_probe(cl, &ps[i], {}, {}, prios[i]));
    }
    EXPECT_TRUE(tg::wait_for_all().ok());
    EXPECT_TRUE(tg::shutdown().ok());
    return order;
}

TEST(Priorities, PrioPolicyRunsHighestFirst) {
    env_guard vps("MPC_VPS", "1");
    // priorities 0 3 -2 5 3 -5 1 5 0 2 at positions 0..9
    EXPECT_EQ(run_order("prio"), (std::vector<int>{3, 7, 1, 4, 9, 6, 0, 8, 2, 5}));
}

TEST(Priorities, EagerPolicyIsFifo) {
    env_guard vps("MPC_VPS", "1");
    EXPECT_EQ(run_order("eager"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

// Configuration: STARPU_NCPU, MPC_TG_NCPU (wins), the policy by name, refusals.
TEST(Config, WorkerCountAndPolicyFromEnvironment) {
    {
        env_guard a("STARPU_NCPU", "3");
        env_guard b("STARPU_SCHED", "prio");
        ASSERT_TRUE(tg::init().ok());
        EXPECT_EQ(tg::worker_count(), 3);
        EXPECT_STREQ(tg::policy_name(), "prio");
        EXPECT_EQ(sched::nr_vps(), 3) << "the engine started by init gets one VP per worker";
        ASSERT_TRUE(tg::shutdown().ok());
    }
    {
        env_guard a("STARPU_NCPU", "3");
        env_guard b("MPC_TG_NCPU", "2");
        ASSERT_TRUE(tg::init().ok());
        EXPECT_EQ(tg::worker_count(), 2);
        EXPECT_STREQ(tg::policy_name(), "eager");
        ASSERT_TRUE(tg::shutdown().ok());
    }
    {
        env_guard a("STARPU_SCHED", "no-such-policy");
        EXPECT_EQ(tg::init().code(), errc::invalid_argument);
        EXPECT_FALSE(tg::running());
    }
    {
        env_guard a("STARPU_NCPU", "0");
        EXPECT_EQ(tg::init().code(), errc::unsupported);
        EXPECT_FALSE(sched::initialized());
    }
    {
        env_guard a("STARPU_NCPU", "many");
        EXPECT_EQ(tg::init().code(), errc::invalid_argument);
    }
}

// init() nests; the engine stays up until the last shutdown(), and a running engine is reused
// (and left running).
TEST(Config, NestedInitAndRunningEngine) {
    tg::config c;
    c.ncpus = 2;
    c.config_over_env = true;
    ASSERT_TRUE(tg::init(c).ok());
    ASSERT_TRUE(tg::init(c).ok());
    ASSERT_TRUE(tg::shutdown().ok());
    EXPECT_TRUE(tg::running());
    ASSERT_TRUE(tg::shutdown().ok());
    EXPECT_FALSE(tg::running());
    EXPECT_FALSE(sched::initialized());
    EXPECT_EQ(tg::shutdown().code(), errc::not_initialized);

    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    ASSERT_TRUE(tg::init(c).ok());
    std::atomic<int> ran{0};
    probe p{[&](void**) { ran.fetch_add(1); }};
    tg::codelet cl = probe_codelet(0);
    tg::task* t = submit_probe(cl, &p, {}, {});
    ASSERT_TRUE(tg::task_wait(t).ok());
    tg::task_release(t);
    ASSERT_TRUE(tg::shutdown().ok());
    EXPECT_TRUE(sched::initialized()) << "the runtime must not stop an engine it did not start";
    EXPECT_EQ(ran.load(), 1);
    ASSERT_TRUE(sched::finalize().ok());
}

// Several ULTs (as the ranks of a process do) each init, use and shut down the runtime at their
// own pace, so that one's init comes while another's shutdown waits for its tasks: the start
// must wait for the stop to end (refs nest; a runtime is never started twice at once).
TEST(Config, InitShutdownFromSeveralUlts) {
    sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(sched::init(o).ok());
    constexpr int nults = 3;
    constexpr int rounds = 8;
    std::atomic<int> ok{0};
    std::vector<sched::ult*> us;
    for (int u = 0; u < nults; ++u) {
        us.push_back(*sched::spawn([&ok, u] {
            sched::sleep_for(std::chrono::microseconds(150 * u));
            for (int round = 0; round < rounds; ++round) {
                tg::config c;
                c.ncpus = 2;
                c.config_over_env = true;
                if (!tg::init(c).ok()) {
                    return;
                }
                std::atomic<int> ran{0};
                probe p{[&](void**) {
                    sched::sleep_for(std::chrono::microseconds(50));
                    ran.fetch_add(1);
                }};
                tg::codelet cl = probe_codelet(0);
                for (int i = 0; i < 8; ++i) {
                    tg::task_release(submit_probe(cl, &p, {}, {}));
                }
                // Shut down with the tasks in flight: the last shutdown waits for them.
                bool down = tg::shutdown().ok();
                while (ran.load() < 8) {  // another ULT's runtime may still run them
                    sched::sleep_for(std::chrono::microseconds(20));
                }
                ok.fetch_add(down ? 1 : 0);
            }
        }));
    }
    for (sched::ult* u : us) {
        ASSERT_TRUE(sched::join(u).ok());
    }
    EXPECT_EQ(ok.load(), nults * rounds);
    EXPECT_FALSE(tg::running());
    ASSERT_TRUE(sched::finalize().ok());
}

}  // namespace
