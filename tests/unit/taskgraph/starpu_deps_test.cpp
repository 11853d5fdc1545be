// StarPU 1.3.10's task-dependency features through the C API: a tag carried by several tasks
// (done when the first ends), a task submitted again starting its tag over (with its tag
// dependencies re-armed), starpu_tag_get_task, end dependencies (STARPU_TASK_END_DEP,
// STARPU_TASK_END_DEPS_ARRAY, starpu_task_end_dep_add/release), prologue callbacks,
// STARPU_HANDLES_SEQUENTIAL_CONSISTENCY, and the worker restrictions (can_execute,
// STARPU_TASK_WORKERIDS, STARPU_EXECUTE_WHERE) under every policy name.
//
// "Has not run yet" checks pause the test's flow with sched::sleep_for, which lets its VP run
// the workers: what they show is a dependency that holds, not an idle worker.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "scheduler/sched.hpp"
#include "starpu_fixture.hpp"

namespace {

/// Pauses the caller, letting its VP run other work (a worker ULT, the test's flow).
void pause_us(int us) { mpc::sched::sleep_for(std::chrono::microseconds(us)); }

using StarpuDeps = mpc::test::starpu_two_workers;

std::atomic<int> g_clock{0};

/// The codelet's argument: an int stamped with the clock when the task runs (after a pause).
void stamp(void** /*buffers*/, void* arg) {
    pause_us(2000);
    static_cast<std::atomic<int>*>(arg)->store(g_clock.fetch_add(1) + 1);
}

/// Runs until *arg is 0.
void hold(void** /*buffers*/, void* arg) {
    while (static_cast<std::atomic<int>*>(arg)->load() != 0) {
        pause_us(200);
    }
}

starpu_codelet make_cl(starpu_cpu_func_t f) {
    starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = f;
    cl.nbuffers = 0;
    cl.name = "deps";
    return cl;
}

// Several tasks carry one tag: its dependents run once the first of them has ended, while the
// others still run (StarPU's tag_example4), and starpu_tag_get_task names the last carrier.
TEST_F(StarpuDeps, TagCarriedBySeveralTasksIsDoneAtTheFirstEnd) {
    starpu_codelet held = make_cl(&hold), quick = make_cl(&stamp);
    const starpu_tag_t shared = 0x5000, after = 0x5001;
    std::atomic<int> blocker{1}, first{0}, dependent{0};
    starpu_task* a = starpu_task_create();
    a->cl = &held;
    a->cl_arg = &blocker;
    a->use_tag = 1;
    a->tag_id = shared;
    ASSERT_EQ(starpu_task_submit(a), 0);
    starpu_task* b = starpu_task_create();
    b->cl = &quick;
    b->cl_arg = &first;
    b->use_tag = 1;
    b->tag_id = shared;
    b->detach = 0;
    b->destroy = 0;
    ASSERT_EQ(starpu_task_submit(b), 0);
    EXPECT_EQ(starpu_tag_get_task(shared), b);
    starpu_tag_declare_deps(after, 1, shared);
    ASSERT_EQ(starpu_task_insert(&quick, STARPU_CL_ARGS_NFREE, &dependent, sizeof dependent, STARPU_TAG, after, 0), 0);
    ASSERT_EQ(starpu_tag_wait(after), 0) << "the tag waits for its first carrier only";
    EXPECT_GT(dependent.load(), first.load());
    EXPECT_GT(first.load(), 0);
    EXPECT_EQ(starpu_task_finished(a), 0) << "the other carrier still runs";
    blocker.store(0);
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    starpu_task_destroy(b);
    EXPECT_EQ(starpu_tag_get_task(0x5999), nullptr);
    starpu_tag_remove(shared);
    starpu_tag_remove(after);
}

// The same two tasks (detached, not destroyed) submitted round after round without
// starpu_tag_restart (StarPU's tag_restartable): each round's second task waits for that
// round's first task, even when it is submitted first.
TEST_F(StarpuDeps, ResubmittedTasksReuseTheirTags) {
    starpu_codelet cl = make_cl(&stamp);
    const starpu_tag_t ta = 0x6000, tb = 0x6001;
    std::atomic<int> sa{0}, sb{0};
    starpu_task* a = starpu_task_create();
    starpu_task* b = starpu_task_create();
    for (starpu_task* t : {a, b}) {
        t->cl = &cl;
        t->use_tag = 1;
        t->destroy = 0;
    }
    a->cl_arg = &sa;
    a->tag_id = ta;
    b->cl_arg = &sb;
    b->tag_id = tb;
    starpu_tag_declare_deps(tb, 1, ta);
    for (int round = 0; round < 4; ++round) {
        SCOPED_TRACE(round);
        std::atomic<int> gate{1};
        starpu_codelet held = make_cl(&hold);
        // a waits for an application tag, so b (submitted first) must wait for this round's a.
        starpu_tag_t app = 0x6100 + static_cast<starpu_tag_t>(round);
        starpu_task* blocker = starpu_task_create();
        blocker->cl = &held;
        blocker->cl_arg = &gate;
        blocker->use_tag = 1;
        blocker->tag_id = app;
        ASSERT_EQ(starpu_task_submit(blocker), 0);
        ASSERT_EQ(starpu_task_submit(b), 0);
        starpu_task_declare_deps(a, 1, blocker);
        ASSERT_EQ(starpu_task_submit(a), 0);
        pause_us(10000);
        EXPECT_EQ(starpu_task_finished(b), 0) << "b ran before this round's a";
        gate.store(0);
        ASSERT_EQ(starpu_tag_wait(tb), 0);
        EXPECT_GT(sb.load(), sa.load());
        starpu_tag_remove(app);
    }
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    starpu_task_destroy(a);
    starpu_task_destroy(b);
    starpu_tag_remove(ta);
    starpu_tag_remove(tb);
}

// starpu_task_end_dep_add: the task has run, but its dependents, its waiters and its callback
// wait for starpu_task_end_dep_release.
TEST_F(StarpuDeps, EndDependencyHoldsTheTaskEnd) {
    starpu_codelet cl = make_cl(&stamp);
    std::atomic<int> ran{0}, next{0};
    static std::atomic<int> called;
    called = 0;
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->cl_arg = &ran;
    t->detach = 0;
    t->destroy = 0;
    t->callback_func = [](void*) { called.store(1); };
    starpu_task_end_dep_add(t, 1);
    starpu_task* u = starpu_task_create();
    u->cl = &cl;
    u->cl_arg = &next;
    starpu_task_declare_deps(u, 1, t);
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_submit(u), 0);
    while (ran.load() == 0) {
        pause_us(500);
    }
    pause_us(10000);
    EXPECT_EQ(next.load(), 0) << "a dependent ran before the end dependency was released";
    EXPECT_EQ(called.load(), 0) << "the callback ran before the end dependency was released";
    EXPECT_EQ(starpu_task_finished(t), 0);
    starpu_task_end_dep_release(t);
    ASSERT_EQ(starpu_task_wait(t), 0);
    EXPECT_EQ(called.load(), 1);
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_GT(next.load(), ran.load());
    starpu_task_destroy(t);
}

std::atomic<starpu_task*> g_self{nullptr};
std::atomic<int> g_ended{0};
void remember_self(void** /*buffers*/, void* /*arg*/) { g_self.store(starpu_task_get_current()); }

// STARPU_TASK_END_DEPS_ARRAY: the inserted task's end waits for the array's task; so does a
// task given it through starpu_task_declare_end_deps. STARPU_TASK_END_DEP: the inserted task's
// end waits for one release.
TEST_F(StarpuDeps, EndDependenciesThroughInsert) {
    starpu_codelet held = make_cl(&hold);
    std::atomic<int> gate{1};
    starpu_task* later[2];
    for (starpu_task*& t : later) {
        t = starpu_task_create();
        t->cl = &held;
        t->cl_arg = &gate;
        t->detach = 0;
        t->destroy = 0;
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    starpu_codelet quick = make_cl(&remember_self);
    starpu_task* first = starpu_task_create();
    first->cl = &quick;
    first->detach = 0;
    first->destroy = 0;
    starpu_task_declare_end_deps(first, 1, later[0]);
    ASSERT_EQ(starpu_task_submit(first), 0);
    g_ended = 0;
    ASSERT_EQ(starpu_task_insert(&quick, STARPU_TASK_END_DEPS_ARRAY, 1u, &later[1], STARPU_CALLBACK,
                                 +[](void*) { g_ended.fetch_add(1); }, 0),
              0);
    pause_us(10000);
    EXPECT_EQ(starpu_task_finished(first), 0) << "ended before its end dependency";
    EXPECT_EQ(g_ended.load(), 0) << "ended before its end dependency";
    gate.store(0);
    ASSERT_EQ(starpu_task_wait(first), 0);
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ended.load(), 1);
    for (starpu_task* t : later) {
        ASSERT_EQ(starpu_task_wait(t), 0);
        starpu_task_destroy(t);
    }
    starpu_task_destroy(first);

    g_self = nullptr;
    ASSERT_EQ(starpu_task_insert(&quick, STARPU_TASK_END_DEP, 1, STARPU_CALLBACK, +[](void*) { g_ended.fetch_add(1); },
                                 0),
              0);
    while (g_self.load() == nullptr) {
        pause_us(500);
    }
    pause_us(10000);
    EXPECT_EQ(g_ended.load(), 1) << "ended before starpu_task_end_dep_release";
    starpu_task_end_dep_release(g_self.load());
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ended.load(), 2);
}

std::atomic<int> g_prologue{0}, g_pop{0};
void prologue(void* arg) { g_prologue.store(*static_cast<int*>(arg)); }
void pop_prologue(void* arg) { g_pop.store(static_cast<int>(reinterpret_cast<std::uintptr_t>(arg))); }
void check_prologues(void** /*buffers*/, void* /*arg*/) {
    EXPECT_EQ(g_prologue.load(), 7) << "the prologue had not run before the codelet";
    EXPECT_EQ(g_pop.load(), 5) << "the pop prologue had not run before the codelet";
}

// Prologue callbacks run before the codelet; their _ARG variants free the argument with the
// task (checked by the leak-checking builds).
TEST_F(StarpuDeps, PrologueCallbacks) {
    starpu_codelet cl = make_cl(&check_prologues);
    for (int i = 0; i < 2; ++i) {
        g_prologue = 0;
        g_pop = 0;
        int* arg = static_cast<int*>(std::malloc(sizeof(int)));
        *arg = 7;
        ASSERT_EQ(starpu_task_insert(&cl, STARPU_PROLOGUE_CALLBACK, &prologue, STARPU_PROLOGUE_CALLBACK_ARG, arg,
                                     STARPU_PROLOGUE_CALLBACK_POP, &pop_prologue,
                                     STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE, reinterpret_cast<void*>(5),
                                     STARPU_TASK_SYNCHRONOUS, 1, 0),
                  0);
        EXPECT_EQ(g_pop.load(), 5);
    }
}

void add_one(void** buffers, void* /*arg*/) {
    pause_us(3000);
    auto* v = reinterpret_cast<int*>(STARPU_VARIABLE_GET_PTR(buffers[0]));
    *v += 1;
}

// STARPU_HANDLES_SEQUENTIAL_CONSISTENCY: a task taking no inferred dependency on its second
// buffer does not wait for an earlier writer of that buffer (held back by a tag); with the
// flag set it does.
TEST_F(StarpuDeps, HandlesSequentialConsistencyPerBuffer) {
    int x = 0, y = 0;
    starpu_data_handle_t hx, hy;
    starpu_variable_data_register(&hx, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
    starpu_variable_data_register(&hy, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&y), sizeof y);
    starpu_codelet inc;
    starpu_codelet_init(&inc);
    inc.cpu_funcs[0] = &add_one;
    inc.nbuffers = 1;
    inc.modes[0] = STARPU_RW;
    const starpu_tag_t app = 0x7000, writer = 0x7001;
    starpu_tag_declare_deps(writer, 1, app);
    ASSERT_EQ(starpu_task_insert(&inc, STARPU_RW, hy, STARPU_TAG, writer, 0), 0);  // waits for app
    starpu_codelet two;
    starpu_codelet_init(&two);
    two.cpu_funcs[0] = &add_one;
    two.nbuffers = 2;
    two.modes[0] = STARPU_RW;
    two.modes[1] = STARPU_R;
    unsigned char seq[2] = {1, 0};
    ASSERT_EQ(starpu_task_insert(&two, STARPU_RW, hx, STARPU_R, hy, STARPU_HANDLES_SEQUENTIAL_CONSISTENCY, seq, 0), 0);
    ASSERT_EQ(starpu_data_acquire(hx, STARPU_R), 0) << "waits for the task, which must not wait for y's writer";
    EXPECT_EQ(x, 1);
    EXPECT_EQ(y, 0) << "y's writer ran before its tag was notified";
    starpu_data_release(hx);
    unsigned char seq_on[2] = {1, 1};
    ASSERT_EQ(starpu_task_insert(&two, STARPU_RW, hx, STARPU_R, hy, STARPU_HANDLES_SEQUENTIAL_CONSISTENCY, seq_on, 0),
              0);
    pause_us(10000);
    EXPECT_EQ(x, 1) << "a task with the flag set did not wait for y's writer";
    starpu_tag_notify_from_apps(app);
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(x, 2);
    EXPECT_EQ(y, 1);
    starpu_data_unregister(hx);
    starpu_data_unregister(hy);
    starpu_tag_remove(app);
    starpu_tag_remove(writer);
}

starpu_codelet g_inc_cl;
void spawn_on_own_handle(void** buffers, void* /*arg*/) {
    auto* v = reinterpret_cast<int*>(STARPU_VARIABLE_GET_PTR(buffers[0]));
    starpu_task* self = starpu_task_get_current();
    pause_us(5000);  // the application calls starpu_data_unregister meanwhile
    EXPECT_EQ(starpu_task_insert(&g_inc_cl, STARPU_RW, self->handles[0], 0), 0);
    *v *= 10;
}

// A task may submit work on its own handle while the application's starpu_data_unregister
// waits for it (StarPU's sequential_consistency example): the unregistration waits for that
// work too.
TEST_F(StarpuDeps, TaskSubmitsOnAHandleBeingUnregistered) {
    int x = 1;
    starpu_data_handle_t hx;
    starpu_variable_data_register(&hx, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
    starpu_codelet_init(&g_inc_cl);
    g_inc_cl.cpu_funcs[0] = &add_one;
    g_inc_cl.nbuffers = 1;
    g_inc_cl.modes[0] = STARPU_RW;
    starpu_codelet spawn;
    starpu_codelet_init(&spawn);
    spawn.cpu_funcs[0] = &spawn_on_own_handle;
    spawn.nbuffers = 1;
    spawn.modes[0] = STARPU_RW;
    ASSERT_EQ(starpu_task_insert(&spawn, STARPU_RW, hx, 0), 0);
    starpu_data_unregister(hx);
    EXPECT_EQ(x, 11) << "unregister returned before the subtask ran";
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
}

std::atomic<int> g_on[2];
void count_worker(void** /*buffers*/, void* /*arg*/) {
    int w = starpu_worker_get_id();
    if (w >= 0 && w < 2) {
        g_on[w].fetch_add(1);
    }
}
int only_worker_1(unsigned workerid, struct starpu_task* /*task*/, unsigned /*nimpl*/) { return workerid == 1 ? 1 : 0; }
int nobody(unsigned /*workerid*/, struct starpu_task* /*task*/, unsigned /*nimpl*/) { return 0; }

// can_execute, STARPU_TASK_WORKERIDS and STARPU_EXECUTE_WHERE under every policy name: a worker
// that cannot execute a task never gets it; a task nobody can run gets -ENODEV.
TEST(StarpuDepsPolicies, WorkerRestrictionsUnderEveryPolicy) {
    for (const char* name : {"eager", "prio", "random", "ws", "lws", "dm", "dmda", "dmdas", "heteroprio", "peager", "pheft",
                             "modular-eager", "modular-prio"}) {
        SCOPED_TRACE(name);
        starpu_conf conf;
        starpu_conf_init(&conf);
        conf.ncpus = 2;
        conf.precedence_over_environment_variables = 1;
        conf.sched_policy_name = name;
        ASSERT_EQ(starpu_init(&conf), 0);
        starpu_codelet cl;
        starpu_codelet_init(&cl);
        cl.cpu_funcs[0] = &count_worker;
        cl.can_execute = &only_worker_1;
        g_on[0] = 0;
        g_on[1] = 0;
        for (int i = 0; i < 40; ++i) {
            ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
        }
        ASSERT_EQ(starpu_task_wait_for_all(), 0);
        EXPECT_EQ(g_on[0].load(), 0) << "worker 0 ran a task its can_execute refuses";
        EXPECT_EQ(g_on[1].load(), 40);
        starpu_task probe_task = STARPU_TASK_INITIALIZER;
        probe_task.cl = &cl;
        EXPECT_EQ(starpu_worker_can_execute_task(0, &probe_task, 0), 0);
        EXPECT_EQ(starpu_worker_can_execute_task(1, &probe_task, 0), 1);

        starpu_codelet any;
        starpu_codelet_init(&any);
        any.cpu_funcs[0] = &count_worker;
        uint32_t only0 = 1u;
        for (int i = 0; i < 40; ++i) {
            ASSERT_EQ(starpu_task_insert(&any, STARPU_TASK_WORKERIDS, 1u, &only0, 0), 0);
        }
        ASSERT_EQ(starpu_task_wait_for_all(), 0);
        EXPECT_EQ(g_on[0].load(), 40) << "tasks restricted to worker 0 ran elsewhere";
        EXPECT_EQ(g_on[1].load(), 40);

        cl.can_execute = &nobody;
        EXPECT_EQ(starpu_task_insert(&cl, 0), -ENODEV);
        EXPECT_EQ(starpu_task_insert(&any, STARPU_EXECUTE_WHERE, static_cast<unsigned long long>(STARPU_CUDA), 0),
                  -ENODEV);
        EXPECT_EQ(starpu_task_insert(&any, STARPU_EXECUTE_WHERE, static_cast<unsigned long long>(STARPU_CPU), 0), 0);
        ASSERT_EQ(starpu_task_wait_for_all(), 0);
        starpu_shutdown();
    }
}

}  // namespace
