// Scheduling policies written by the application (struct starpu_sched_policy in
// starpu_conf::sched_policy; taskgraph/starpu_sched.cpp): a policy without pop_task that places
// every task with starpu_push_local_task, a push_task that fails, the runtime's own tasks
// (reductions) under such a policy, the policy winning over STARPU_SCHED, misuse (no
// push_task, bad context ids, bad local pushes), the context seen under a built-in policy, and
// the task lists.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "taskgraph/tg.hpp"
#include "starpu_fixture.hpp"

namespace {

int start_with(starpu_sched_policy* p, int ncpus) { return mpc::test::start_with_policy(p, ncpus); }

// ---- a policy without pop_task: round robin over the workers' local queues; pinned tasks ----

std::atomic<int> g_rr{0};
std::atomic<int> g_wrong_worker{0};

int rr_push(starpu_task* t) {
    int w = g_rr.fetch_add(1) % static_cast<int>(starpu_worker_get_count());
    t->workerid = static_cast<unsigned>(w);  // remembered for the check (not a pinning request)
    return starpu_push_local_task(w, t, 0);
}

void where_am_i(void**, void* arg) {
    auto* t = static_cast<starpu_task*>(arg);
    if (starpu_worker_get_id() != static_cast<int>(t->workerid)) {
        g_wrong_worker.fetch_add(1);
    }
}

std::atomic<int> g_notified{0};
std::atomic<int> g_notified_wrong{0};

// Pinned tasks skip push_task; the policy hears of them through push_task_notify.
void rr_notify(starpu_task* t, int worker, int perf_worker, unsigned ctx) {
    g_notified.fetch_add(1);
    if (worker != static_cast<int>(t->workerid) || perf_worker != worker || ctx != 0) {
        g_notified_wrong.fetch_add(1);
    }
}

TEST(UserPolicy, LocalQueuesWithoutPopTask) {
    starpu_sched_policy p{};
    p.push_task = rr_push;
    p.push_task_notify = rr_notify;
    p.policy_name = "round-robin";
    ASSERT_EQ(start_with(&p, 2), 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = where_am_i;
    cl.nbuffers = 0;
    for (int i = 0; i < 100; ++i) {
        starpu_task* t = starpu_task_create();
        t->cl = &cl;
        t->cl_arg = t;
        t->detach = 0;
        t->destroy = 0;
        ASSERT_EQ(starpu_task_submit(t), 0);
        ASSERT_EQ(starpu_task_wait(t), 0);
        starpu_task_destroy(t);
    }
    const int pushed = g_rr.load();
    for (int i = 0; i < 20; ++i) {  // pinned: no push_task, a push_task_notify each
        starpu_task* t = starpu_task_create();
        t->cl = &cl;
        t->cl_arg = t;
        t->execute_on_a_specific_worker = 1;
        t->workerid = static_cast<unsigned>(i % 2);
        t->detach = 0;
        t->destroy = 0;
        ASSERT_EQ(starpu_task_submit(t), 0);
        ASSERT_EQ(starpu_task_wait(t), 0);
        starpu_task_destroy(t);
    }
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_wrong_worker.load(), 0) << "a task ran on another worker than the one its local queue belongs to";
    EXPECT_GE(pushed, 100);
    EXPECT_EQ(g_rr.load(), pushed) << "pinned tasks must not go through push_task";
    EXPECT_EQ(g_notified.load(), 20);
    EXPECT_EQ(g_notified_wrong.load(), 0);
    starpu_shutdown();
}

// ---- push_task failing, reductions, STARPU_SCHED overridden --------------------------------

struct queue_policy {
    std::mutex lock;
    starpu_task_list list{};
    int refused = 0;
};
queue_policy g_q;

int refuse_every_other(starpu_task* t) {
    std::lock_guard<std::mutex> g(g_q.lock);
    if (++g_q.refused % 2 == 0) {
        return -ENODEV;  // not queued: the runtime says so and runs the task anyway
    }
    starpu_task_list_push_back(&g_q.list, t);
    return 0;
}

starpu_task* q_pop(unsigned) {
    std::lock_guard<std::mutex> g(g_q.lock);
    return starpu_task_list_pop_front(&g_q.list);
}

starpu_codelet make_cl(void (*fn)(void**, void*), std::initializer_list<starpu_data_access_mode> modes) {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = fn;
    cl.nbuffers = static_cast<int>(modes.size());
    int i = 0;
    for (starpu_data_access_mode m : modes) {
        cl.modes[i++] = m;
    }
    return cl;
}

void add_one(void** b, void*) { ++*reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[0])); }
void redux_add(void** b, void*) {
    *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[0])) += *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[1]));
}
void redux_zero(void** b, void*) { *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[0])) = 0; }

/// Registers *x and inserts n tasks incrementing it (RW chain); returns the handle.
starpu_data_handle_t increments(long* x, int n) {
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(x), sizeof *x);
    static starpu_codelet inc = make_cl(add_one, {STARPU_RW});
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(starpu_task_insert(&inc, STARPU_RW, h, 0), 0);
    }
    return h;
}

TEST(UserPolicy, RefusedPushesAndRuntimeTasksStillRun) {
    ASSERT_EQ(setenv("STARPU_SCHED", "no-such-policy", 1), 0);  // the policy given wins over it
    starpu_task_list_init(&g_q.list);
    starpu_sched_policy p{};
    p.push_task = refuse_every_other;
    p.pop_task = q_pop;
    p.policy_name = "refusing";
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 2;
    conf.sched_policy = &p;  // no precedence flag: the environment would win over a name
    ASSERT_EQ(starpu_init(&conf), 0);
    ASSERT_EQ(unsetenv("STARPU_SCHED"), 0);
    long counter = 0;
    starpu_data_handle_t h = increments(&counter, 50);
    // A reduction: the runtime's own init/fold tasks have no starpu_task and skip the policy.
    starpu_codelet init = make_cl(redux_zero, {STARPU_W});
    starpu_codelet red = make_cl(redux_add, {STARPU_RW, STARPU_R});
    starpu_data_set_reduction_methods(h, &red, &init);
    starpu_codelet contribute = make_cl(add_one, {STARPU_REDUX});
    for (int i = 0; i < 40; ++i) {
        ASSERT_EQ(starpu_task_insert(&contribute, STARPU_REDUX, h, 0), 0);
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    starpu_data_unregister(h);
    EXPECT_EQ(counter, 90);
    EXPECT_GE(g_q.refused, 90);
    EXPECT_TRUE(starpu_task_list_empty(&g_q.list));
    starpu_shutdown();
}

// ---- waking: whom the policy wakes, else everyone ------------------------------------------

std::atomic<int> g_ran_on[2];
bool g_wake_one = false;  ///< push_task wakes worker 1 (else nobody)

int queue_and_maybe_wake(starpu_task* t) {
    {
        std::lock_guard<std::mutex> g(g_q.lock);
        starpu_task_list_push_back(&g_q.list, t);
    }
    if (g_wake_one) {
        starpu_wake_worker_relax_light(1);
    }
    return 0;
}

starpu_task* pop_for_one(unsigned ctx) {  // with g_wake_one only worker 1 serves the queue
    return g_wake_one && starpu_worker_get_id() != 1 ? nullptr : q_pop(ctx);
}

void count_worker(void**, void*) { g_ran_on[starpu_worker_get_id()].fetch_add(1); }

/// 100 tasks submitted 50 µs apart (the workers go to sleep in between), under a policy that
/// wakes worker 1 (which alone pops) or nobody: every task runs, on worker 1 in the first case.
void run_sparse(bool wake_one) {
    g_wake_one = wake_one;
    g_ran_on[0] = 0;
    g_ran_on[1] = 0;
    starpu_task_list_init(&g_q.list);
    starpu_sched_policy p{};
    p.push_task = queue_and_maybe_wake;
    p.pop_task = pop_for_one;
    p.policy_name = wake_one ? "wakes-worker-1" : "wakes-nobody";
    ASSERT_EQ(mpc::test::start_with_policy(&p, 2), 0);
    static starpu_codelet cl = make_cl(count_worker, {});
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
        for (double t0 = starpu_timing_now(); starpu_timing_now() - t0 < 50;) {
        }
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    starpu_shutdown();
    EXPECT_EQ(g_ran_on[0] + g_ran_on[1], 100);
    if (wake_one) {
        EXPECT_EQ(g_ran_on[1], 100);
    }
}

TEST(UserPolicy, TheWorkerThePolicyWakesTakesTheTask) { run_sparse(true); }
TEST(UserPolicy, APolicyThatWakesNobodyStillHasItsTasksRun) { run_sparse(false); }

// ---- misuse ----------------------------------------------------------------------------------

TEST(UserPolicy, PolicyWithoutPushTaskIsRefused) {
    starpu_sched_policy p{};
    p.pop_task = q_pop;
    p.policy_name = "no-push";
    EXPECT_EQ(start_with(&p, 1), -EINVAL);
    EXPECT_FALSE(starpu_is_initialized());
}

TEST(UserPolicy, ContextAndLocalPushMisuse) {
    ASSERT_EQ(start_with(nullptr, 2), 0);  // a built-in policy
    EXPECT_EQ(starpu_sched_ctx_get_sched_policy(0), nullptr);
    EXPECT_EQ(starpu_sched_ctx_get_context(), unsigned{STARPU_NMAX_SCHED_CTXS}) << "none set: StarPU's answer";
    EXPECT_EQ(starpu_sched_ctx_get_policy_data(3), nullptr);
    EXPECT_EQ(starpu_sched_ctx_get_worker_collection(1), nullptr);
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(0), 2u);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(1, 0), 1u);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(2, 0), 0u);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(0, 1), 0u);
    starpu_worker_collection* c = starpu_sched_ctx_get_worker_collection(0);
    ASSERT_NE(c, nullptr);
    starpu_sched_ctx_iterator it;
    c->init_iterator(c, &it);
    std::vector<int> ids;
    while (c->has_next(c, &it)) {
        ids.push_back(c->get_next(c, &it));
    }
    EXPECT_EQ(ids, (std::vector<int>{0, 1}));
    EXPECT_EQ(c->add(c, 5), -1) << "the context's workers are fixed";
    int* list = nullptr;
    ASSERT_EQ(starpu_sched_ctx_get_workers_list(0, &list), 2u);
    EXPECT_EQ(list[0], 0);
    EXPECT_EQ(list[1], 1);
    std::free(list);

    starpu_task* t = starpu_task_create();
    EXPECT_EQ(starpu_push_local_task(0, t, 0), -EINVAL) << "a task never submitted";
    EXPECT_EQ(starpu_push_local_task(0, nullptr, 0), -EINVAL);
    t->destroy = 0;  // never submitted: destroyed by hand (StarPU refuses destroy = detach = 1)
    starpu_task_destroy(t);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) {};
    starpu_task* ok = starpu_task_create();
    ok->cl = &cl;
    EXPECT_EQ(starpu_worker_can_execute_task(0, ok, 0), 1);
    EXPECT_EQ(starpu_worker_can_execute_task(7, ok, 0), 0);
    unsigned mask = 9;
    EXPECT_EQ(starpu_worker_can_execute_task_impl(1, ok, &mask), 1);
    EXPECT_EQ(mask, 1u);
    ok->destroy = 0;
    starpu_task_destroy(ok);
    EXPECT_EQ(starpu_wake_worker_relax_light(99), 0);
    starpu_shutdown();
}

TEST(UserPolicy, PredefinedPoliciesSelectTheBuiltins) {
    starpu_sched_policy** all = starpu_sched_get_predefined_policies();
    ASSERT_NE(all, nullptr);
    int n = 0;
    starpu_sched_policy* ws = nullptr;
    for (; all[n] != nullptr; ++n) {
        ASSERT_NE(all[n]->policy_name, nullptr);
        EXPECT_NE(all[n]->policy_description, nullptr);
        if (std::string(all[n]->policy_name) == "ws") {
            ws = all[n];
        }
    }
    EXPECT_EQ(n, 13);
    ASSERT_NE(ws, nullptr);
    ASSERT_EQ(start_with(ws, 2), 0);
    EXPECT_EQ(starpu_sched_ctx_get_sched_policy(0), nullptr) << "a built-in policy, not an application's";
    EXPECT_STREQ(mpc::tg::policy_name(), "ws");
    long x = 0;
    starpu_data_unregister(increments(&x, 10));
    EXPECT_EQ(x, 10);
    starpu_shutdown();
}

// ---- task lists ------------------------------------------------------------------------------

TEST(TaskList, PushPopEraseMove) {
    starpu_task a{}, b{}, c{}, d{};
    starpu_task_list l;
    starpu_task_list_init(&l);
    EXPECT_TRUE(starpu_task_list_empty(&l));
    EXPECT_EQ(starpu_task_list_pop_back(&l), nullptr);
    EXPECT_EQ(starpu_task_list_pop_front(&l), nullptr);
    starpu_task_list_push_back(&l, &b);
    starpu_task_list_push_front(&l, &a);
    starpu_task_list_push_back(&l, &c);  // a b c
    EXPECT_EQ(starpu_task_list_front(&l), &a);
    EXPECT_EQ(starpu_task_list_back(&l), &c);
    std::vector<starpu_task*> seen;
    for (starpu_task* t = starpu_task_list_begin(&l); t != starpu_task_list_end(&l); t = starpu_task_list_next(t)) {
        seen.push_back(t);
    }
    EXPECT_EQ(seen, (std::vector<starpu_task*>{&a, &b, &c}));
    EXPECT_TRUE(starpu_task_list_ismember(&l, &b));
    EXPECT_FALSE(starpu_task_list_ismember(&l, &d));
    starpu_task_list_erase(&l, &b);  // a c
    EXPECT_FALSE(starpu_task_list_ismember(&l, &b));
    EXPECT_EQ(a.next, &c);
    EXPECT_EQ(c.prev, &a);
    starpu_task_list m;
    starpu_task_list_init(&m);
    starpu_task_list_move(&m, &l);
    EXPECT_TRUE(starpu_task_list_empty(&l));
    EXPECT_EQ(starpu_task_list_pop_back(&m), &c);
    EXPECT_EQ(starpu_task_list_pop_back(&m), &a);
    EXPECT_TRUE(starpu_task_list_empty(&m));
    EXPECT_EQ(starpu_task_list_back(&m), nullptr);
}

}  // namespace
