// Scheduling contexts (starpu_sched_ctx_*): a task submitted to a context runs on that context's
// workers only, under the context's own policy; members can change while tasks wait (they are
// moved to the new policy); finished_submit hands the members to the inheritor; the thread's
// context (set_context) directs submissions and waits; misuse gets an error or a message.
#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "scheduler/sched.hpp"
#include "starpu_fixture.hpp"

namespace {

using StarpuSchedCtx = mpc::test::starpu_two_workers;

constexpr int max_w = 8;
std::atomic<int> g_ran_on[max_w];
std::atomic<int> g_ran{0};

void reset_counts() {
    for (auto& r : g_ran_on) {
        r.store(0);
    }
    g_ran.store(0);
}

void count_worker(void** /*buffers*/, void* /*arg*/) {
    const int w = starpu_worker_get_id();
    if (w >= 0 && w < max_w) {
        g_ran_on[w].fetch_add(1);
    }
    g_ran.fetch_add(1);
}

starpu_codelet g_count_cl = [] {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = count_worker;
    cl.nbuffers = 0;
    cl.name = "count_worker";
    return cl;
}();

// Holds its worker until g_release is set (yielding: the program's ULT may share its VP).
std::atomic<bool> g_release{false};
std::atomic<int> g_holding{0};
void hold(void** /*buffers*/, void* /*arg*/) {
    g_holding.fetch_add(1);
    while (!g_release.load()) {
        mpc::sched::yield();
    }
}
starpu_codelet g_hold_cl = [] {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = hold;
    cl.nbuffers = 0;
    cl.name = "hold";
    return cl;
}();

/// Submits a task holding worker w (pinned to it, in context 0) and waits until it runs.
void hold_worker(int w) {
    g_release.store(false);
    const int before = g_holding.load();
    ASSERT_EQ(starpu_task_insert(&g_hold_cl, STARPU_EXECUTE_ON_WORKER, w, 0), 0);
    while (g_holding.load() == before) {
        mpc::sched::yield();
    }
}

void submit_counted(unsigned ctx, int n) {
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(starpu_task_insert(&g_count_cl, STARPU_SCHED_CTX, ctx, 0), 0);
    }
}

class PolicyInContext : public mpc::test::starpu_two_workers, public ::testing::WithParamInterface<const char*> {};

TEST_P(PolicyInContext, TasksRunOnTheContextsWorkersOnly) {
    reset_counts();
    int one = 1;
    const unsigned ctx = starpu_sched_ctx_create(&one, 1, "w1", STARPU_SCHED_CTX_POLICY_NAME, GetParam(), 0);
    ASSERT_GE(ctx, 1u);
    ASSERT_LT(ctx, unsigned{STARPU_NMAX_SCHED_CTXS});
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(ctx), 1u);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(1, ctx), 1u);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(0, ctx), 0u);
    for (int i = 0; i < 200; ++i) {
        starpu_task* t = starpu_task_create();
        t->cl = &g_count_cl;
        ASSERT_EQ(starpu_task_submit_to_ctx(t, ctx), 0);
        EXPECT_EQ(t->sched_ctx, ctx);
    }
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran.load(), 200);
    EXPECT_EQ(g_ran_on[0].load(), 0) << "worker 0 is not in the context";
    EXPECT_EQ(g_ran_on[1].load(), 200);
    // Context 0 still has both workers: its tasks may run anywhere, and all of them run.
    reset_counts();
    submit_counted(0, 100);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran.load(), 100);
    starpu_sched_ctx_delete(ctx);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(1, ctx), 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyInContext,
                         ::testing::Values("eager", "prio", "random", "ws", "lws", "dm", "dmda", "dmdas", "heteroprio",
                                           "modular-eager"));

TEST_F(StarpuSchedCtx, TasksWaitingInAContextMoveWithItsWorkers) {
    reset_counts();
    hold_worker(1);  // worker 1 is busy: the context's tasks wait in its policy
    int one = 1;
    const unsigned ctx = starpu_sched_ctx_create(&one, 1, "moving", STARPU_SCHED_CTX_POLICY_NAME, "dmda", 0);
    submit_counted(ctx, 50);
    EXPECT_EQ(g_ran.load(), 0);
    int zero = 0;
    starpu_sched_ctx_add_workers(&zero, 1, ctx);
    starpu_sched_ctx_remove_workers(&one, 1, ctx);
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(ctx), 1u);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(0, ctx), 1u);
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran_on[0].load(), 50) << "the tasks queued for worker 1 went to worker 0";
    EXPECT_EQ(g_ran_on[1].load(), 0);
    g_release.store(true);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    starpu_sched_ctx_delete(ctx);
}

TEST_F(StarpuSchedCtx, AnEmptyContextKeepsItsTasksUntilItGetsWorkers) {
    reset_counts();
    const unsigned ctx = starpu_sched_ctx_create(nullptr, 0, "empty", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(ctx), 0u);
    submit_counted(ctx, 10);
    for (int i = 0; i < 100; ++i) {
        mpc::sched::yield();
    }
    EXPECT_EQ(g_ran.load(), 0) << "no worker may run them";
    int both[2] = {0, 1};
    starpu_sched_ctx_add_workers(both, 2, ctx);
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran.load(), 10);
    starpu_sched_ctx_delete(ctx);
}

TEST_F(StarpuSchedCtx, ContextWithoutPolicyRunsItsTasksOnItsFirstWorker) {
    reset_counts();
    int ids[2] = {1, 0};
    const unsigned ctx = starpu_sched_ctx_create(ids, 2, "master", 0);
    EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(ctx, nullptr), 0u);
    submit_counted(ctx, 30);
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran_on[1].load(), 30) << "worker 1 is the master";
    starpu_sched_ctx_delete(ctx);
}

TEST_F(StarpuSchedCtx, FinishedSubmitHandsTheWorkersToTheInheritor) {
    reset_counts();
    int zero = 0;
    int one = 1;
    const unsigned a = starpu_sched_ctx_create(&zero, 1, "a", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    const unsigned b = starpu_sched_ctx_create(&one, 1, "b", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    starpu_sched_ctx_set_inheritor(b, a);
    EXPECT_EQ(starpu_sched_ctx_get_inheritor(b), a);
    EXPECT_EQ(starpu_sched_ctx_get_inheritor(a), unsigned{STARPU_NMAX_SCHED_CTXS});
    static std::atomic<int> closed{0};
    static std::atomic<unsigned> closed_id{0};
    closed.store(0);
    starpu_sched_ctx_register_close_callback(
        b,
        [](unsigned id, void* arg) {
            closed_id.store(id);
            closed.fetch_add(*static_cast<int*>(arg));
        },
        &one);
    submit_counted(b, 20);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(1, a), 0u) << "not before b is done";
    starpu_sched_ctx_finished_submit(b);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran_on[1].load(), 20);
    EXPECT_EQ(closed.load(), 1);
    EXPECT_EQ(closed_id.load(), b);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(1, a), 1u) << "b's worker joined a";
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(a), 2u);
    EXPECT_EQ(starpu_sched_ctx_get_nshared_workers(a, b), 1u);
    EXPECT_EQ(starpu_sched_ctx_overlapping_ctxs_on_worker(1), 1u);
    unsigned* list = nullptr;
    const unsigned n = starpu_worker_get_sched_ctx_list(1, &list);
    std::vector<unsigned> got(list, list + n);
    std::free(list);
    EXPECT_EQ(got, (std::vector<unsigned>{0, std::min(a, b), std::max(a, b)}));
    // Tasks of a now run on both workers; deleting b leaves a as it is.
    starpu_sched_ctx_delete(b);
    reset_counts();
    submit_counted(a, 40);
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(a), 0);
    EXPECT_EQ(g_ran.load(), 40);
    starpu_sched_ctx_delete(a);
}

TEST_F(StarpuSchedCtx, DeleteWaitsForTheTasksAndGivesTheWorkersToTheInheritor) {
    reset_counts();
    int zero = 0;
    int one = 1;
    const unsigned a = starpu_sched_ctx_create(&zero, 1, "a", STARPU_SCHED_CTX_POLICY_NAME, "prio", 0);
    const unsigned b = starpu_sched_ctx_create(&one, 1, "b", STARPU_SCHED_CTX_POLICY_NAME, "ws", 0);
    starpu_sched_ctx_set_inheritor(b, a);
    submit_counted(b, 25);
    starpu_sched_ctx_delete(b);  // waits for b's 25 tasks
    EXPECT_EQ(g_ran.load(), 25);
    EXPECT_EQ(starpu_sched_ctx_contains_worker(1, a), 1u);
    // A deleted context takes no task.
    starpu_task* t = starpu_task_create();
    t->cl = &g_count_cl;
    t->sched_ctx = b;
    EXPECT_EQ(starpu_task_submit(t), -EINVAL);
    t->destroy = 0;
    starpu_task_destroy(t);
    starpu_sched_ctx_delete(a);
}

TEST_F(StarpuSchedCtx, TheThreadsContextDirectsSubmissionsAndWaits) {
    reset_counts();
    EXPECT_EQ(starpu_sched_ctx_get_context(), unsigned{STARPU_NMAX_SCHED_CTXS});
    int one = 1;
    int zero = 0;
    const unsigned mine = starpu_sched_ctx_create(&one, 1, "mine", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    const unsigned other = starpu_sched_ctx_create(&zero, 1, "other", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    // A task of the other context holds worker 0: waiting in "mine" must not wait for it.
    g_release.store(false);
    const int before = g_holding.load();
    ASSERT_EQ(starpu_task_insert(&g_hold_cl, STARPU_SCHED_CTX, other, 0), 0);
    starpu_sched_ctx_set_context(const_cast<unsigned*>(&mine));
    EXPECT_EQ(starpu_sched_ctx_get_context(), mine);
    for (int i = 0; i < 30; ++i) {
        ASSERT_EQ(starpu_task_insert(&g_count_cl, 0), 0);  // no context named: the thread's
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);  // the thread's context only
    EXPECT_EQ(g_ran_on[1].load(), 30);
    EXPECT_EQ(g_ran_on[0].load(), 0);
    while (g_holding.load() == before) {
        mpc::sched::yield();
    }
    EXPECT_FALSE(g_release.load()) << "the other context's task still runs";
    ASSERT_EQ(starpu_task_wait_for_n_submitted_in_ctx(other, 1), 0);
    starpu_sched_ctx_set_context(nullptr);
    EXPECT_EQ(starpu_sched_ctx_get_context(), unsigned{STARPU_NMAX_SCHED_CTXS});
    g_release.store(true);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);  // every context
    starpu_sched_ctx_delete(mine);
    starpu_sched_ctx_delete(other);
}

TEST_F(StarpuSchedCtx, PrioritiesUserDataAndPolicyData) {
    int v = 7;
    const unsigned c1 = starpu_sched_ctx_create(nullptr, -1, "c1", STARPU_SCHED_CTX_POLICY_NAME, "prio", 0);
    const unsigned c2 = starpu_sched_ctx_create(nullptr, -1, "c2", STARPU_SCHED_CTX_POLICY_NAME, "prio",
                                                STARPU_SCHED_CTX_POLICY_MIN_PRIO, -12, STARPU_SCHED_CTX_POLICY_MAX_PRIO,
                                                32, STARPU_SCHED_CTX_USER_DATA, &v, STARPU_SCHED_CTX_HIERARCHY_LEVEL, 2u, 0);
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(c1), 2u) << "NULL, -1: every worker";
    EXPECT_EQ(starpu_sched_ctx_get_min_priority(c1), starpu_sched_get_min_priority());
    EXPECT_EQ(starpu_sched_ctx_min_priority_is_set(c1), 0);
    EXPECT_EQ(starpu_sched_ctx_get_min_priority(c2), -12);
    EXPECT_EQ(starpu_sched_ctx_get_max_priority(c2), 32);
    EXPECT_EQ(starpu_sched_ctx_max_priority_is_set(c2), 1);
    EXPECT_EQ(starpu_sched_ctx_get_user_data(c2), &v);
    EXPECT_EQ(starpu_sched_ctx_get_hierarchy_level(c2), 2u);
    EXPECT_EQ(starpu_sched_ctx_set_max_priority(c1, 9), 0);
    EXPECT_EQ(starpu_sched_ctx_get_max_priority(c1), 9);
    starpu_sched_ctx_set_context(const_cast<unsigned*>(&c2));
    EXPECT_EQ(starpu_sched_get_min_priority(), -12) << "the thread's context's range";
    starpu_sched_ctx_set_context(nullptr);
    EXPECT_EQ(starpu_sched_ctx_get_policy_data(c1), nullptr);
    starpu_sched_ctx_set_policy_data(c1, &v);
    EXPECT_EQ(starpu_sched_ctx_get_policy_data(c1), &v);
    EXPECT_EQ(starpu_sched_ctx_get_policy_data(c2), nullptr);
    starpu_worker_collection* coll = starpu_sched_ctx_get_worker_collection(c1);
    ASSERT_NE(coll, nullptr);
    EXPECT_EQ(coll->nworkers, 2u);
    int* cpus = nullptr;
    int ncpus = 0;
    starpu_sched_ctx_get_available_cpuids(c1, &cpus, &ncpus);
    ASSERT_EQ(ncpus, 2) << "the program is no worker: every member's CPU";
    EXPECT_EQ(cpus[0], starpu_worker_get_bindid(0));
    std::free(cpus);
    starpu_sched_ctx_delete(c1);
    starpu_sched_ctx_delete(c2);
}

// ---- an application's policy in a context --------------------------------------------------

struct app_state {
    std::atomic<unsigned> init_ctx{0};
    std::atomic<int> added{0};
    std::atomic<int> removed{0};
    std::atomic<int> wrong_ctx{0};
    std::atomic<int> popped_by_outsider{0};
    starpu_pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    starpu_task_list list{};
};
app_state g_app;

void app_init(unsigned ctx) {
    g_app.init_ctx.store(ctx);
    starpu_task_list_init(&g_app.list);
}
std::atomic<int> g_app_seen{0};
void app_add(unsigned ctx, int* ids, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
        g_app.added.fetch_add(1 << (4 * ids[i]));
    }
    // A hook asking about its own context while its members change (StarPU's policies do).
    int* list = nullptr;
    g_app_seen.store(static_cast<int>(starpu_sched_ctx_get_workers_list(ctx, &list)));
    std::free(list);
    (void)starpu_sched_ctx_get_nworkers(ctx);
}
void app_remove(unsigned /*ctx*/, int* ids, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
        g_app.removed.fetch_add(1 << (4 * ids[i]));
    }
}
int app_push(starpu_task* t) {
    if (t->sched_ctx != g_app.init_ctx.load()) {
        g_app.wrong_ctx.fetch_add(1);
    }
    starpu_pthread_mutex_lock(&g_app.m);
    starpu_task_list_push_back(&g_app.list, t);
    starpu_pthread_mutex_unlock(&g_app.m);
    return 0;
}
starpu_task* app_pop(unsigned ctx) {
    if (starpu_sched_ctx_contains_worker(starpu_worker_get_id(), ctx) == 0) {
        g_app.popped_by_outsider.fetch_add(1);
    }
    starpu_pthread_mutex_lock(&g_app.m);
    starpu_task* t = starpu_task_list_pop_front(&g_app.list);
    starpu_pthread_mutex_unlock(&g_app.m);
    return t;
}

TEST_F(StarpuSchedCtx, AnApplicationsPolicyServesItsContext) {
    reset_counts();
    starpu_sched_policy p{};
    p.init_sched = app_init;
    p.add_workers = app_add;
    p.remove_workers = app_remove;
    p.push_task = app_push;
    p.pop_task = app_pop;
    p.policy_name = "app";
    g_app.added.store(0);
    g_app.removed.store(0);
    int one = 1;
    const unsigned ctx = starpu_sched_ctx_create(&one, 1, "app", STARPU_SCHED_CTX_POLICY_STRUCT, &p, 0);
    EXPECT_EQ(g_app.init_ctx.load(), ctx);
    EXPECT_EQ(g_app.added.load(), 1 << 4) << "add_workers with worker 1";
    EXPECT_EQ(starpu_sched_ctx_get_sched_policy(ctx), &p);
    EXPECT_EQ(starpu_sched_ctx_get_sched_policy(0), nullptr);
    submit_counted(ctx, 40);
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran_on[1].load(), 40);
    EXPECT_EQ(g_app.wrong_ctx.load(), 0);
    EXPECT_EQ(g_app.popped_by_outsider.load(), 0);
    int zero = 0;
    starpu_sched_ctx_add_workers(&zero, 1, ctx);
    EXPECT_EQ(g_app.added.load(), (1 << 4) + 1) << "add_workers with worker 0";
    EXPECT_EQ(g_app_seen.load(), 2) << "the hook saw the context's new members";
    starpu_sched_ctx_remove_workers(&one, 1, ctx);
    EXPECT_EQ(g_app.removed.load(), 1 << 4);
    reset_counts();
    submit_counted(ctx, 40);
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran_on[0].load(), 40);
    EXPECT_EQ(g_app.popped_by_outsider.load(), 0);
    starpu_sched_ctx_delete(ctx);
}

// ---- misuse ---------------------------------------------------------------------------------

TEST_F(StarpuSchedCtx, MisuseIsRefused) {
    starpu_task* t = starpu_task_create();
    t->cl = &g_count_cl;
    EXPECT_EQ(starpu_task_submit_to_ctx(t, 5), -EINVAL) << "no context 5";
    EXPECT_EQ(starpu_task_submit_to_ctx(t, STARPU_NMAX_SCHED_CTXS + 3), -EINVAL);
    t->destroy = 0;
    starpu_task_destroy(t);
    EXPECT_EQ(starpu_task_wait_for_all_in_ctx(7), -EINVAL);
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(7), 0u);
    EXPECT_EQ(starpu_sched_ctx_get_worker_collection(7), nullptr);
    starpu_sched_ctx_delete(0);  // logged, nothing done
    int zero = 0;
    starpu_sched_ctx_remove_workers(&zero, 1, 0);  // logged: context 0's workers are fixed
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(0), 2u);
    // Worker ids that are no worker are left out.
    int ids[3] = {0, 42, -1};
    const unsigned c = starpu_sched_ctx_create(ids, 3, "bad ids", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    EXPECT_EQ(starpu_sched_ctx_get_nworkers(c), 1u);
    // An unknown policy name: the default policy, with a warning.
    const unsigned d = starpu_sched_ctx_create(nullptr, -1, "unknown", STARPU_SCHED_CTX_POLICY_NAME, "no-such", 0);
    EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(d, nullptr), 1u);
    starpu_sched_ctx_delete(c);
    starpu_sched_ctx_delete(d);
}

using StarpuSchedCtxDeath = StarpuSchedCtx;

TEST_F(StarpuSchedCtxDeath, TooManyContextsEndTheProgramWithAMessage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            for (int i = 0; i < STARPU_NMAX_SCHED_CTXS; ++i) {
                starpu_sched_ctx_create(nullptr, -1, "many", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
            }
        },
        "starpu_sched_ctx_create.*too many scheduling contexts");
}

TEST_F(StarpuSchedCtxDeath, AnUnknownCreateArgumentEndsTheProgramWithAMessage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(starpu_sched_ctx_create(nullptr, -1, "bad", 12345, 0), "unrecognized argument");
}

}  // namespace

namespace {

// Members change again and again while a ULT of the program submits to the context and the
// workers run its tasks: no task is lost or run twice, whatever policy the context has.
class ChangingMembers : public mpc::test::starpu_two_workers, public ::testing::WithParamInterface<const char*> {};

struct feeder_arg {
    unsigned ctx;
    int n;
    std::atomic<bool> done{false};
};

TEST_P(ChangingMembers, NoTaskIsLostWhileTheMembersChange) {
    reset_counts();
    int both[2] = {0, 1};
    const unsigned ctx = starpu_sched_ctx_create(both, 2, "changing", STARPU_SCHED_CTX_POLICY_NAME, GetParam(), 0);
    feeder_arg fa;
    fa.ctx = ctx;
    fa.n = 3000;
    mpc::result<mpc::sched::ult*> feeder = mpc::sched::spawn(
        [](void* p) {
            auto* a = static_cast<feeder_arg*>(p);
            for (int i = 0; i < a->n; ++i) {
                if (starpu_task_insert(&g_count_cl, STARPU_SCHED_CTX, a->ctx, 0) != 0) {
                    break;
                }
                if (i % 64 == 0) {
                    mpc::sched::yield();
                }
            }
            a->done.store(true);
        },
        &fa);
    ASSERT_TRUE(feeder.ok());
    int changes = 0;
    while (!fa.done.load() || changes < 40) {
        const int w = changes % 2;
        starpu_sched_ctx_remove_workers(&both[w], 1, ctx);  // the other one stays
        mpc::sched::yield();
        starpu_sched_ctx_add_workers(&both[w], 1, ctx);
        ++changes;
        mpc::sched::yield();
    }
    ASSERT_TRUE(mpc::sched::join(*feeder).ok());
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran.load(), fa.n) << changes << " changes of members";
    EXPECT_EQ(g_ran_on[0].load() + g_ran_on[1].load(), fa.n);
    starpu_sched_ctx_delete(ctx);
}

INSTANTIATE_TEST_SUITE_P(Policies, ChangingMembers, ::testing::Values("eager", "ws", "dmda", "heteroprio", "random"));

}  // namespace

namespace {

std::atomic<int> g_awake_ranks{0};
std::atomic<unsigned> g_awake_ctx{0};
void awake_fn(void** /*buffers*/, void* /*arg*/) {
    const int r = starpu_sched_ctx_get_worker_rank(g_awake_ctx.load());
    if (r >= 0 && r < 8) {
        g_awake_ranks.fetch_add(1 << (4 * r));
    }
    count_worker(nullptr, nullptr);
}

TEST_F(StarpuSchedCtx, AwakeWorkersEachRunEveryTaskOfAContextWithoutPolicy) {
    reset_counts();
    g_awake_ranks = 0;
    int both[2] = {0, 1};
    const unsigned ctx = starpu_sched_ctx_create(both, 2, "awake", STARPU_SCHED_CTX_AWAKE_WORKERS, 0);
    g_awake_ctx = ctx;
    unsigned awake = 0;
    EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(ctx, &awake), 0u);
    EXPECT_EQ(awake, 1u);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = awake_fn;
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, STARPU_SCHED_CTX, ctx, 0), 0);
    }
    ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
    EXPECT_EQ(g_ran.load(), 20) << "each of the two workers ran each task";
    EXPECT_EQ(g_ran_on[0].load(), 10);
    EXPECT_EQ(g_ran_on[1].load(), 10);
    EXPECT_EQ(g_awake_ranks.load(), 10 + (10 << 4)) << "ranks 0 and 1, ten times each";
    EXPECT_EQ(starpu_sched_ctx_get_worker_rank(ctx), -1) << "the program is no member";
    starpu_sched_ctx_delete(ctx);
}

}  // namespace
