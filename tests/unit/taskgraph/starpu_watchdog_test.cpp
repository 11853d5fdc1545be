// StarPU's watchdog (STARPU_WATCHDOG_TIMEOUT / _CRASH / _DELAY, starpu_task_watchdog_set_hook),
// the worker sleep callbacks set at run time, starpu_task_set and the task_insert data helpers
// (starpu_task_insert_data_make_room / _process_arg / _process_array_arg /
// _process_mode_array_arg), each against what StarPU 1.3.10's documentation says.
#include <gtest/gtest.h>
#include <starpu.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace {

int start(int ncpus) {
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.sched_policy_name = "eager";
    conf.precedence_over_environment_variables = 1;
    return starpu_init(&conf);
}

void sleep_fn(void*[], void* arg) { usleep(static_cast<useconds_t>(reinterpret_cast<intptr_t>(arg))); }
starpu_codelet sleep_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = sleep_fn;
    c.nbuffers = 0;
    return c;
}();

std::atomic<int> g_barks{0};
void bark(void* arg) { g_barks.fetch_add(*static_cast<int*>(arg)); }

void submit_sleep(long us) {
    starpu_task* t = starpu_task_create();
    t->cl = &sleep_cl;
    t->cl_arg = reinterpret_cast<void*>(static_cast<intptr_t>(us));
    ASSERT_EQ(starpu_task_submit(t), 0);
}

}  // namespace

TEST(StarpuWatchdog, ATaskLongerThanTheTimeoutCallsTheHook) {
    setenv("STARPU_WATCHDOG_TIMEOUT", "100000", 1);  // 100 ms
    int one = 1;
    starpu_task_watchdog_set_hook(bark, &one);
    g_barks = 0;
    ASSERT_EQ(start(1), 0);
    unsetenv("STARPU_WATCHDOG_TIMEOUT");
    submit_sleep(700 * 1000);  // no task ends for 0.7 s: several periods
    starpu_task_wait_for_all();
    const int during = g_barks.load();
    EXPECT_GE(during, 2) << "each 100 ms period without an end reports";
    usleep(300 * 1000);  // nothing in flight: nothing to report
    EXPECT_EQ(g_barks.load(), during);
    starpu_shutdown();
    starpu_task_watchdog_set_hook(nullptr, nullptr);
}

TEST(StarpuWatchdog, TasksThatKeepEndingAreNotReported) {
    setenv("STARPU_WATCHDOG_TIMEOUT", "250000", 1);  // 50 times a task's length (a loaded host)
    int one = 1;
    starpu_task_watchdog_set_hook(bark, &one);
    g_barks = 0;
    ASSERT_EQ(start(2), 0);
    unsetenv("STARPU_WATCHDOG_TIMEOUT");
    for (int i = 0; i < 60; ++i) {
        submit_sleep(10 * 1000);  // 60 x 10 ms on 2 workers: one ends every 5 ms
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_barks.load(), 0);
    starpu_shutdown();
    starpu_task_watchdog_set_hook(nullptr, nullptr);
}

TEST(StarpuWatchdog, TheDelayPostponesTheFirstLook) {
    setenv("STARPU_WATCHDOG_TIMEOUT", "100000", 1);
    setenv("STARPU_WATCHDOG_DELAY", "2000000", 1);  // 2 s
    int one = 1;
    starpu_task_watchdog_set_hook(bark, &one);
    g_barks = 0;
    ASSERT_EQ(start(1), 0);
    unsetenv("STARPU_WATCHDOG_TIMEOUT");
    unsetenv("STARPU_WATCHDOG_DELAY");
    submit_sleep(500 * 1000);
    starpu_task_wait_for_all();
    EXPECT_EQ(g_barks.load(), 0) << "the watchdog had not started looking";
    starpu_shutdown();  // stops a watchdog still in its delay at once
    starpu_task_watchdog_set_hook(nullptr, nullptr);
}

TEST(StarpuWatchdog, AMalformedTimeoutIsRefused) {
    setenv("STARPU_WATCHDOG_TIMEOUT", "soon", 1);
    EXPECT_EQ(start(1), -EINVAL);
    unsetenv("STARPU_WATCHDOG_TIMEOUT");
    EXPECT_EQ(starpu_is_initialized(), 0);
}

TEST(StarpuWatchdogDeathTest, CrashEndsTheProgramWithTheReport) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            setenv("STARPU_WATCHDOG_TIMEOUT", "100000", 1);
            setenv("STARPU_WATCHDOG_CRASH", "1", 1);
            if (start(1) == 0) {
                starpu_tag_t never = 4242;
                starpu_task* t = starpu_task_create();  // waits for a tag nobody fires
                t->cl = &sleep_cl;
                t->cl_arg = nullptr;
                starpu_tag_declare_deps(17, 1, never);
                t->use_tag = 1;
                t->tag_id = 17;
                if (starpu_task_submit(t) == 0) {
                    starpu_task_wait_for_all();  // parks: the worker parks too (the same VP)
                }
            }
            std::exit(0);
        },
        "no task ended for 0.100 s.*1 in flight, 0 of them ready, 1 of 1 workers asleep");
}

// ---- starpu_task_set and the data helpers

namespace {
void add_fn(void* buffers[], void* arg) {
    int k = 0;
    starpu_codelet_unpack_args(arg, &k);
    for (int i = 0; i < static_cast<int>(STARPU_TASK_GET_NBUFFERS(starpu_task_get_current())); ++i) {
        *reinterpret_cast<int*>(STARPU_VARIABLE_GET_PTR(buffers[i])) += k + i;
    }
}
starpu_codelet var_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = add_fn;
    c.nbuffers = STARPU_VARIABLE_NBUFFERS;
    return c;
}();
starpu_codelet two_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = add_fn;
    c.nbuffers = 2;
    c.modes[0] = STARPU_RW;
    c.modes[1] = STARPU_RW;
    return c;
}();
}  // namespace

TEST(StarpuTaskSet, FillsAnExistingTaskWithoutSubmittingIt) {
    ASSERT_EQ(start(2), 0);
    int a = 1, b = 10;
    starpu_data_handle_t ha, hb;
    starpu_variable_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&a), sizeof a);
    starpu_variable_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&b), sizeof b);
    int k = 5;
    starpu_task* t = starpu_task_create();
    ASSERT_EQ(starpu_task_set(t, &two_cl, STARPU_RW, ha, STARPU_RW, hb, STARPU_VALUE, &k, sizeof k, STARPU_PRIORITY, 3, 0),
              0);
    EXPECT_EQ(t->cl, &two_cl);
    EXPECT_EQ(t->priority, 3);
    EXPECT_EQ(t->cl_arg_free, 1u) << "STARPU_VALUE makes cl_arg_free 1";
    EXPECT_EQ(STARPU_TASK_GET_HANDLE(t, 1), hb);
    EXPECT_EQ(starpu_task_nsubmitted(), 0) << "not submitted";
    ASSERT_EQ(starpu_task_submit(t), 0);
    starpu_task_wait_for_all();
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
    EXPECT_EQ(a, 6);
    EXPECT_EQ(b, 16);
    starpu_task* u = starpu_task_create();
    EXPECT_EQ(starpu_task_set(u, &two_cl, STARPU_RW, ha, 12345, 0), -EINVAL) << "an unknown key";
    u->destroy = 0;
    starpu_task_destroy(u);
    EXPECT_EQ(starpu_task_set(nullptr, &two_cl, 0), -EINVAL);
    starpu_shutdown();
}

TEST(StarpuTaskInsertData, HelpersBuildATaskOfManyBuffers) {
    ASSERT_EQ(start(2), 0);
    const int n = 3 * STARPU_NMAXBUFS;  // beyond the fixed arrays: dyn_handles and dyn_modes
    std::vector<int> v(n, 100);
    std::vector<starpu_data_handle_t> h(n);
    for (int i = 0; i < n; ++i) {
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&v[i]), sizeof(int));
    }
    starpu_task* t = starpu_task_create();
    t->cl = &var_cl;
    int allocated = 0, current = 0;
    starpu_task_insert_data_process_arg(&var_cl, t, &allocated, &current, STARPU_RW, h[0]);
    EXPECT_EQ(current, 1);
    EXPECT_EQ(t->dyn_handles, nullptr) << "one handle fits the fixed array";
    std::vector<starpu_data_handle_t> some(h.begin() + 1, h.begin() + STARPU_NMAXBUFS + 2);
    std::vector<starpu_data_descr> d;
    for (auto x : some) {
        d.push_back({x, STARPU_RW});
    }
    starpu_task_insert_data_process_mode_array_arg(&var_cl, t, &allocated, &current, static_cast<int>(d.size()), d.data());
    EXPECT_EQ(current, STARPU_NMAXBUFS + 2);
    EXPECT_NE(t->dyn_handles, nullptr) << "moved to dyn_handles past STARPU_NMAXBUFS";
    EXPECT_GE(allocated, current);
    EXPECT_EQ(STARPU_TASK_GET_HANDLE(t, 0), h[0]) << "the first handle moved along";
    for (int i = current; i < n; ++i) {
        starpu_task_insert_data_process_arg(&var_cl, t, &allocated, &current, STARPU_RW | STARPU_SSEND, h[i]);
    }
    EXPECT_EQ(current, n);
    EXPECT_EQ(t->nbuffers, n);
    ASSERT_NE(t->dyn_modes, nullptr) << "a variable count keeps the modes in the task";
    EXPECT_EQ(t->dyn_modes[n - 1], STARPU_RW) << "STARPU_SSEND is not part of the mode";
    int k = 1;
    starpu_codelet_pack_args(&t->cl_arg, &t->cl_arg_size, STARPU_VALUE, &k, sizeof k, 0);
    t->cl_arg_free = 1;
    ASSERT_EQ(starpu_task_submit(t), 0);
    starpu_task_wait_for_all();
    for (int i = 0; i < n; ++i) {
        starpu_data_unregister(h[i]);
    }
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(v[i], 100 + 1 + i) << "buffer " << i;
    }
    // An array with the codelet's modes (a fixed-count codelet).
    int a = 0, b = 0;
    starpu_data_handle_t ab[2];
    starpu_variable_data_register(&ab[0], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&a), sizeof a);
    starpu_variable_data_register(&ab[1], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&b), sizeof b);
    starpu_task* u = starpu_task_create();
    u->cl = &two_cl;
    allocated = current = 0;
    starpu_task_insert_data_process_array_arg(&two_cl, u, &allocated, &current, 2, ab);
    EXPECT_EQ(current, 2);
    k = 7;
    starpu_codelet_pack_args(&u->cl_arg, &u->cl_arg_size, STARPU_VALUE, &k, sizeof k, 0);
    u->cl_arg_free = 1;
    ASSERT_EQ(starpu_task_submit(u), 0);
    starpu_task_wait_for_all();
    starpu_data_unregister(ab[0]);
    starpu_data_unregister(ab[1]);
    EXPECT_EQ(a, 7);
    EXPECT_EQ(b, 8);
    starpu_shutdown();
}

TEST(StarpuTaskInsertDataDeathTest, AModeAgainstTheCodelets) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            start(1);
            int a = 0;
            starpu_data_handle_t h;
            starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&a), sizeof a);
            starpu_task* t = starpu_task_create();
            int allocated = 0;
            int current = 0;
            starpu_task_insert_data_process_arg(&two_cl, t, &allocated, &current, STARPU_R, h);
        },
        "codelet .* defines mode 3 for buffer 0, the call gives 1");
}

// ---- sleep callbacks set while running

namespace {
std::atomic<int> g_sleeps{0}, g_wakes{0};
void on_sleep(unsigned) { g_sleeps.fetch_add(1); }
void on_wake(unsigned) { g_wakes.fetch_add(1); }
}  // namespace

TEST(StarpuWorkerCallbacks, SetWhileRunningTheWorkersCallThemAroundTheirParks) {
    ASSERT_EQ(start(2), 0);
    starpu_worker_set_going_to_sleep_callback(on_sleep);
    starpu_worker_set_waking_up_callback(on_wake);
    for (int i = 0; i < 20; ++i) {
        submit_sleep(1000);
        starpu_task_wait_for_all();
        usleep(2000);  // the workers run out of work and park
    }
    EXPECT_GT(g_sleeps.load(), 0);
    EXPECT_GT(g_wakes.load(), 0);
    starpu_worker_set_going_to_sleep_callback(nullptr);
    starpu_worker_set_waking_up_callback(nullptr);
    const int s = g_sleeps.load();
    for (int i = 0; i < 5; ++i) {
        submit_sleep(1000);
        starpu_task_wait_for_all();
        usleep(2000);
    }
    starpu_shutdown();
    EXPECT_LE(g_sleeps.load(), s + 2) << "none once unset (a park already under way may still call)";
}

// ---- notify_ready_soon

namespace {
double cost_500(starpu_task*, unsigned) { return 500.0; }
starpu_perfmodel cost_model = [] {
    starpu_perfmodel m{};
    m.type = STARPU_COMMON;
    m.cost_function = cost_500;
    return m;
}();
starpu_codelet costed_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = sleep_fn;
    c.nbuffers = 0;
    c.model = &cost_model;
    return c;
}();
std::mutex g_soon_m;
std::vector<std::pair<starpu_task*, double>> g_soon;
void on_soon(void* data, starpu_task* t, double delay) {
    EXPECT_EQ(data, &g_soon);
    std::lock_guard<std::mutex> g(g_soon_m);
    g_soon.emplace_back(t, delay);
}
starpu_task* plain(starpu_codelet* cl, long us) {
    starpu_task* t = starpu_task_create();
    t->cl = cl;
    t->cl_arg = reinterpret_cast<void*>(static_cast<intptr_t>(us));
    t->detach = 0;
    return t;
}
}  // namespace

TEST(StarpuReadySoon, ATaskWhoseLastDependencyStartsIsAnnouncedWithItsDelay) {
    ASSERT_EQ(start(1), 0);
    starpu_task_notify_ready_soon_register(on_soon, &g_soon);
    starpu_pause();
    starpu_task* a = plain(&costed_cl, 1000);
    starpu_task* b = plain(&sleep_cl, 0);
    starpu_task* c = plain(&sleep_cl, 0);
    starpu_task* d = plain(&costed_cl, 0);
    starpu_task_declare_deps(b, 1, a);  // b: a only
    starpu_task_declare_deps(d, 1, b);  // d: after b
    starpu_task_declare_deps(c, 2, a, d);  // c: a and d (d is not done when a starts)
    for (starpu_task* t : {a, b, c, d}) {
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    starpu_resume();
    for (starpu_task* t : {a, b, c, d}) {
        ASSERT_EQ(starpu_task_wait(t), 0);
    }
    starpu_task_notify_ready_soon_register(nullptr, nullptr);
    std::lock_guard<std::mutex> g(g_soon_m);
    // a starts (500 µs predicted): b is announced; c still waits for d. d starts (also costed,
    // 500): c's last dependency, announced. b has no model: it announces nothing.
    ASSERT_EQ(g_soon.size(), 2u);
    EXPECT_EQ(g_soon[0].first, b);
    EXPECT_DOUBLE_EQ(g_soon[0].second, 500.0);
    EXPECT_EQ(g_soon[1].first, c);  // (compared as addresses: starpu_task_wait freed them, destroy being 1)
    starpu_shutdown();
}

// ---- context priorities

namespace {
std::vector<int> g_order;
void tag_fn(void*[], void* arg) {
    std::lock_guard<std::mutex> g(g_soon_m);
    g_order.push_back(static_cast<int>(reinterpret_cast<intptr_t>(arg)));
}
starpu_codelet tag_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = tag_fn;
    c.nbuffers = 0;
    return c;
}();
/// Runs 6 tasks in context 0 and 6 in ctx, submitted alternately while paused; their order.
std::vector<int> run_both(unsigned ctx) {
    g_order.clear();
    starpu_pause();
    for (int i = 0; i < 6; ++i) {
        for (unsigned c : {0u, ctx}) {
            starpu_task* t = starpu_task_create();
            t->cl = &tag_cl;
            t->cl_arg = reinterpret_cast<void*>(static_cast<intptr_t>(c));
            t->sched_ctx = c;
            EXPECT_EQ(starpu_task_submit(t), 0);
        }
    }
    starpu_resume();
    starpu_task_wait_for_all();
    return g_order;
}
}  // namespace

TEST(StarpuSchedCtxPriority, AWorkerServesItsHigherPriorityContextFirst) {
    ASSERT_EQ(start(1), 0);
    int w0 = 0;
    const unsigned ctx = starpu_sched_ctx_create(&w0, 1, "high", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    EXPECT_EQ(starpu_sched_ctx_get_priority(0, ctx), 0u) << "the default";
    std::vector<int> turns = run_both(ctx);
    ASSERT_EQ(turns.size(), 12u);
    int switches = 0;
    for (std::size_t i = 1; i < turns.size(); ++i) {
        switches += turns[i] != turns[i - 1] ? 1 : 0;
    }
    EXPECT_GE(switches, 4) << "equal priorities: the worker serves both in turn";
    starpu_sched_ctx_set_priority(&w0, 1, ctx, 5);
    EXPECT_EQ(starpu_sched_ctx_get_priority(0, ctx), 5u);
    std::vector<int> high = run_both(ctx);
    ASSERT_EQ(high.size(), 12u);
    for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(high[static_cast<std::size_t>(i)], static_cast<int>(ctx)) << "position " << i;
    }
    starpu_sched_ctx_set_priority(&w0, 1, 0, 9);  // context 0 above it now
    std::vector<int> low = run_both(ctx);
    for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(low[static_cast<std::size_t>(i)], 0) << "position " << i;
    }
    starpu_sched_ctx_set_priority(&w0, 1, 0, 0);
    starpu_sched_ctx_delete(ctx);
    const unsigned again = starpu_sched_ctx_create(&w0, 1, "again", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
    EXPECT_EQ(starpu_sched_ctx_get_priority(0, again), 0u) << "a new context starts at 0";
    starpu_sched_ctx_delete(again);
    starpu_shutdown();
}
