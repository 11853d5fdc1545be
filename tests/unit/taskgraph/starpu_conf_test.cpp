// starpu_conf's fields beyond the policy and the worker count (taskgraph/starpu_core.cpp over
// config in taskgraph/runtime.cpp): reserve_ncpus, explicit worker bindings (and the refused
// ones), calibrate against STARPU_CALIBRATE, the global context's priorities, the
// asynchronous-copy flags, the worker callbacks, drivers not to launch; starpu_pause and
// starpu_resume (nested, unmatched, at shutdown), starpu_wait_initialized, starpu_display_stats.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "scheduler/sched.hpp"
#include "starpu_fixture.hpp"
#include "taskgraph/perfmodel.hpp"

namespace {

using StarPU = mpc::test::starpu_two_workers;

/// Removes the variables the tests set, before and after each test.
class StarPUConf : public ::testing::Test {
protected:
    static void clear_env() {
        for (const char* v : {"STARPU_NCPU", "STARPU_RESERVE_NCPU", "STARPU_WORKERS_CPUID", "STARPU_CALIBRATE",
                              "MPC_TG_CALIBRATE", "STARPU_MIN_PRIO", "STARPU_MAX_PRIO", "STARPU_DISABLE_ASYNCHRONOUS_COPY"}) {
            unsetenv(v);
        }
    }
    void SetUp() override { clear_env(); }
    void TearDown() override {
        clear_env();
        EXPECT_FALSE(starpu_is_initialized());
    }
    /// A configuration with ncpus workers that wins over the environment when `wins`.
    static starpu_conf conf_of(int ncpus, bool wins = true) {
        starpu_conf c;
        starpu_conf_init(&c);
        c.ncpus = ncpus;
        c.precedence_over_environment_variables = wins ? 1 : 0;
        return c;
    }
};

// ---- reserve_ncpus ---------------------------------------------------------------------------

TEST_F(StarPUConf, ReserveNcpusLeavesTheFirstVPs) {
    starpu_conf c = conf_of(2);
    c.reserve_ncpus = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(mpc::sched::nr_vps(), 2) << "one VP per CPU, the reserved one included";
    ASSERT_EQ(starpu_worker_get_count(), 1u);
    EXPECT_EQ(starpu_worker_get_bindid(0), 1) << "the worker takes the last VP; VP 0 is left to the program";
    starpu_shutdown();

    c.reserve_ncpus = 2;
    EXPECT_EQ(starpu_init(&c), -ENODEV) << "every CPU reserved: no worker";
    c.ncpus = -1;
    c.reserve_ncpus = 0;
    ASSERT_EQ(starpu_init(&c), 0);
    const unsigned all = starpu_worker_get_count();
    starpu_shutdown();
    if (all > 1) {
        c.reserve_ncpus = 1;
        ASSERT_EQ(starpu_init(&c), 0);
        EXPECT_EQ(starpu_worker_get_count(), all - 1) << "one fewer than the default";
        starpu_shutdown();
    }
}

TEST_F(StarPUConf, ReserveNcpusFromTheEnvironment) {
    setenv("STARPU_RESERVE_NCPU", "1", 1);
    starpu_conf c = conf_of(2, false);
    EXPECT_EQ(c.reserve_ncpus, 1) << "starpu_conf_init reads STARPU_RESERVE_NCPU";
    c.reserve_ncpus = 0;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_count(), 1u) << "the variable wins";
    starpu_shutdown();
    c.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_count(), 2u) << "the configuration wins";
    starpu_shutdown();
}

// ---- explicit bindings -----------------------------------------------------------------------

std::atomic<int> g_ran_on_vp{-1};
void record_vp(void*[], void*) { g_ran_on_vp.store(mpc::sched::current_vp()); }

/// The VP a task pinned to worker w runs on.
int vp_running(unsigned w) {
    static starpu_codelet cl = [] {
        starpu_codelet c{};
        c.cpu_funcs[0] = record_vp;
        c.nbuffers = 0;
        return c;
    }();
    g_ran_on_vp.store(-1);
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_EXECUTE_ON_WORKER, static_cast<int>(w), 0), 0);
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    return g_ran_on_vp.load();
}

TEST_F(StarPUConf, ExplicitBindidsPlaceTheWorkers) {
    starpu_conf c = conf_of(2);
    c.use_explicit_workers_bindid = 1;
    c.workers_bindid[0] = 1;
    c.workers_bindid[1] = 0;
    ASSERT_EQ(starpu_init(&c), 0);
    ASSERT_EQ(starpu_worker_get_count(), 2u);
    EXPECT_EQ(starpu_worker_get_bindid(0), 1);
    EXPECT_EQ(starpu_worker_get_bindid(1), 0);
    EXPECT_EQ(vp_running(0), 1) << "worker 0 runs on VP 1";
    EXPECT_EQ(vp_running(1), 0);
    starpu_shutdown();

    c.workers_bindid[0] = 1;
    c.workers_bindid[1] = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_bindid(0), 1);
    EXPECT_EQ(starpu_worker_get_bindid(1), 1) << "two workers may share a CPU";
    EXPECT_EQ(vp_running(1), 1);
    starpu_shutdown();

    c.use_explicit_workers_bindid = 0;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_bindid(0), 0) << "without the flag the list is ignored";
    EXPECT_EQ(starpu_worker_get_bindid(1), 1);
    starpu_shutdown();
}

TEST_F(StarPUConf, BindidOnAMissingCpuIsRefused) {
    starpu_conf c = conf_of(2);
    c.use_explicit_workers_bindid = 1;
    c.workers_bindid[0] = 0;
    c.workers_bindid[1] = 100000;  // more PUs than any machine here
    EXPECT_EQ(starpu_init(&c), -EINVAL);
    EXPECT_FALSE(mpc::sched::initialized()) << "nothing left running";

    // With the engine already running, its VPs are the CPUs.
    mpc::sched::options o;
    o.nr_vps = 2;
    ASSERT_TRUE(mpc::sched::init(o).ok());
    c.workers_bindid[1] = 2;
    EXPECT_EQ(starpu_init(&c), -EINVAL) << "VP 2 does not exist";
    c.workers_bindid[1] = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_bindid(1), 1);
    starpu_shutdown();
    ASSERT_TRUE(mpc::sched::finalize().ok());
}

TEST_F(StarPUConf, WorkersCpuidVariable) {
    setenv("STARPU_WORKERS_CPUID", "1", 1);  // a list shorter than the workers is used cyclically
    starpu_conf c = conf_of(2, false);
    c.use_explicit_workers_bindid = 1;
    c.workers_bindid[0] = 0;
    c.workers_bindid[1] = 0;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_bindid(0), 1) << "the variable wins";
    EXPECT_EQ(starpu_worker_get_bindid(1), 1);
    starpu_shutdown();
    c.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_bindid(1), 0) << "the configuration's list wins";
    starpu_shutdown();
    setenv("STARPU_WORKERS_CPUID", "1-0 x", 1);
    c.precedence_over_environment_variables = 0;
    EXPECT_EQ(starpu_init(&c), -EINVAL) << "a malformed list";
    setenv("STARPU_WORKERS_CPUID", "0-1", 1);
    c.workers_bindid[0] = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_worker_get_bindid(0), 0) << "a range";
    EXPECT_EQ(starpu_worker_get_bindid(1), 1);
    starpu_shutdown();
}

// ---- calibrate -------------------------------------------------------------------------------

TEST_F(StarPUConf, CalibrateFromConfAndEnvironment) {
    starpu_conf c = conf_of(1, false);
    EXPECT_EQ(c.calibrate, 0) << "StarPU's default";
    c.calibrate = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(mpc::tg::model_calibrate_level(), 1) << "no variable: the configuration's";
    starpu_shutdown();

    setenv("STARPU_CALIBRATE", "2", 1);
    EXPECT_EQ(conf_of(1).calibrate, 2) << "starpu_conf_init reads STARPU_CALIBRATE";
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(mpc::tg::model_calibrate_level(), 2) << "the variable wins";
    starpu_shutdown();
    c.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(mpc::tg::model_calibrate_level(), 1) << "the configuration wins";
    starpu_shutdown();
    c.calibrate = -1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(mpc::tg::model_calibrate_level(), 2) << "-1: not set, the variable's";
    starpu_shutdown();
    unsetenv("STARPU_CALIBRATE");
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(mpc::tg::model_calibrate_level(), 0) << "-1 and no variable: 0";
    starpu_shutdown();
}

// ---- priorities, copies, drivers ---------------------------------------------------------------

TEST_F(StarPUConf, GlobalContextPriorities) {
    starpu_conf c = conf_of(1);
    EXPECT_EQ(c.global_sched_ctx_min_priority, -1);
    EXPECT_EQ(c.global_sched_ctx_max_priority, -1);
    c.global_sched_ctx_min_priority = -2;
    c.global_sched_ctx_max_priority = 3;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_sched_get_min_priority(), -2);
    EXPECT_EQ(starpu_sched_get_max_priority(), 3);
    EXPECT_EQ(starpu_sched_ctx_get_min_priority(0), -2);
    EXPECT_EQ(starpu_sched_ctx_get_max_priority(0), 3);
    starpu_shutdown();

    c.global_sched_ctx_min_priority = -1;  // not set: the policy's
    c.global_sched_ctx_max_priority = 9;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_sched_get_min_priority(), STARPU_MIN_PRIO);
    EXPECT_EQ(starpu_sched_get_max_priority(), 9);
    starpu_shutdown();

    setenv("STARPU_MIN_PRIO", "1", 1);
    setenv("STARPU_MAX_PRIO", "4", 1);
    c = conf_of(1);
    EXPECT_EQ(c.global_sched_ctx_min_priority, 1) << "starpu_conf_init reads STARPU_MIN_PRIO";
    EXPECT_EQ(c.global_sched_ctx_max_priority, 4);
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_sched_get_min_priority(), 1);
    EXPECT_EQ(starpu_sched_get_max_priority(), 4);
    starpu_shutdown();

    unsetenv("STARPU_MIN_PRIO");
    unsetenv("STARPU_MAX_PRIO");
    ASSERT_EQ(starpu_init(nullptr), 0);
    EXPECT_EQ(starpu_sched_get_min_priority(), STARPU_MIN_PRIO) << "a later start without them";
    EXPECT_EQ(starpu_sched_get_max_priority(), STARPU_MAX_PRIO);
    starpu_shutdown();
}

TEST_F(StarPUConf, AsynchronousCopyFlags) {
    starpu_conf c = conf_of(1, false);
    c.disable_asynchronous_copy = 1;
    c.disable_asynchronous_opencl_copy = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_asynchronous_copy_disabled(), 1);
    EXPECT_EQ(starpu_asynchronous_cuda_copy_disabled(), 0);
    EXPECT_EQ(starpu_asynchronous_opencl_copy_disabled(), 1);
    EXPECT_EQ(starpu_asynchronous_mic_copy_disabled(), 0);
    EXPECT_EQ(starpu_asynchronous_mpi_ms_copy_disabled(), 0);
    starpu_shutdown();
    EXPECT_EQ(starpu_asynchronous_copy_disabled(), 1) << "kept after shutdown, as StarPU does";

    setenv("STARPU_DISABLE_ASYNCHRONOUS_COPY", "0", 1);
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_asynchronous_copy_disabled(), 0) << "the variable wins";
    starpu_shutdown();
    c.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&c), 0);
    EXPECT_EQ(starpu_asynchronous_copy_disabled(), 1) << "the configuration wins";
    starpu_shutdown();
}

TEST_F(StarPUConf, DriversNotLaunchedAreRefused) {
    starpu_conf c = conf_of(1);
    c.n_not_launched_drivers = 1;
    EXPECT_EQ(starpu_init(&c), -EINVAL) << "starpu_driver_run is not implemented";
    EXPECT_FALSE(mpc::sched::initialized());
    c.n_not_launched_drivers = 0;
    c.ncuda = 0;
    c.use_explicit_workers_cuda_gpuid = 1;
    c.workers_cuda_gpuid[0] = 3;
    c.single_combined_worker = 1;
    c.bus_calibrate = 1;
    c.catch_signals = 0;
    ASSERT_EQ(starpu_init(&c), 0) << "fields without effect here are accepted";
    EXPECT_EQ(starpu_mic_worker_get_count(), 0u);
    EXPECT_EQ(starpu_mic_device_get_count(), 0u);
    EXPECT_EQ(starpu_mpi_ms_worker_get_count(), 0u);
    starpu_shutdown();
}

// ---- worker callbacks ------------------------------------------------------------------------

std::atomic<int> g_sleeps{0};
std::atomic<int> g_wakes{0};
std::atomic<int> g_wrong_worker{0};
void going_to_sleep(unsigned w) {
    g_sleeps.fetch_add(1);
    if (starpu_worker_get_id() != static_cast<int>(w)) {
        g_wrong_worker.fetch_add(1);
    }
}
void waking_up(unsigned w) {
    g_wakes.fetch_add(1);
    if (starpu_worker_get_id() != static_cast<int>(w)) {
        g_wrong_worker.fetch_add(1);
    }
}

TEST_F(StarPUConf, WorkerSleepAndWakeCallbacks) {
    starpu_conf c = conf_of(2);
    c.callback_worker_going_to_sleep = going_to_sleep;
    c.callback_worker_waking_up = waking_up;
    ASSERT_EQ(starpu_init(&c), 0);
    while (g_sleeps.load() < 2) {  // both workers park once they find nothing to do
        mpc::sched::yield();           // (VP 0's worker runs while the program yields)
    }
    const int wakes = g_wakes.load();
    static starpu_codelet cl = [] {
        starpu_codelet k{};
        k.cpu_funcs[0] = [](void**, void*) {};
        k.nbuffers = 0;
        return k;
    }();
    ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_GT(g_wakes.load(), wakes) << "a task wakes a sleeping worker";
    starpu_shutdown();
    EXPECT_EQ(g_sleeps.load(), g_wakes.load()) << "each sleep ends with a wake-up (the last at shutdown)";
    EXPECT_EQ(g_wrong_worker.load(), 0) << "called by the worker itself";
}

// ---- pause and resume ------------------------------------------------------------------------

std::atomic<int> g_ran{0};
std::atomic<bool> g_release{false};
std::atomic<bool> g_started{false};
void count_kernel(void*[], void*) { g_ran.fetch_add(1); }
void blocking_kernel(void*[], void*) {
    g_started.store(true);
    while (!g_release.load()) {
        std::this_thread::yield();
    }
    g_ran.fetch_add(1);
}
starpu_codelet count_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = count_kernel;
    c.nbuffers = 0;
    return c;
}();
starpu_codelet blocking_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = blocking_kernel;
    c.nbuffers = 0;
    return c;
}();

/// 50 ms in which every worker could have started a task: the program yields its VP (0) to
/// the worker there rather than blocking it.
void settle() { mpc::sched::sleep_for(std::chrono::milliseconds(50)); }

TEST_F(StarPU, PauseHoldsNewTasksUntilResume) {
    g_ran.store(0);
    starpu_pause();
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(starpu_task_insert(&count_cl, 0), 0) << "submission goes on while paused";
    }
    settle();
    EXPECT_EQ(g_ran.load(), 0) << "no task started while paused";
    starpu_resume();
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran.load(), 4);
}

TEST_F(StarPU, PausesNest) {
    g_ran.store(0);
    starpu_pause();
    starpu_pause();
    ASSERT_EQ(starpu_task_insert(&count_cl, 0), 0);
    starpu_resume();
    settle();
    EXPECT_EQ(g_ran.load(), 0) << "one pause is still in force";
    starpu_resume();
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran.load(), 1);

    starpu_resume();  // unmatched: ignored, not a credit for the next pause
    starpu_pause();
    ASSERT_EQ(starpu_task_insert(&count_cl, 0), 0);
    settle();
    EXPECT_EQ(g_ran.load(), 1) << "the unmatched resume did not cancel this pause";
    starpu_resume();
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran.load(), 2);
}

TEST_F(StarPU, PauseLetsRunningTasksFinish) {
    g_ran.store(0);
    g_release.store(false);
    g_started.store(false);
    // On worker 1 (VP 1): the program keeps VP 0.
    ASSERT_EQ(starpu_task_insert(&blocking_cl, STARPU_EXECUTE_ON_WORKER, 1, 0), 0);
    while (!g_started.load()) {
        mpc::sched::yield();
    }
    starpu_pause();
    g_release.store(true);
    while (g_ran.load() == 0) {  // the running task ends while paused
        mpc::sched::yield();
    }
    ASSERT_EQ(starpu_task_insert(&count_cl, 0), 0);
    settle();
    EXPECT_EQ(g_ran.load(), 1);
    starpu_resume();
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran.load(), 2);
}

TEST_F(StarPUConf, ShutdownWhilePausedRunsTheQueuedTasks) {
    g_ran.store(0);
    starpu_conf c = conf_of(2);
    ASSERT_EQ(starpu_init(&c), 0);
    starpu_pause();
    ASSERT_EQ(starpu_task_insert(&count_cl, 0), 0);
    starpu_shutdown();  // lifts the pause (logged), else it would wait for ever
    EXPECT_EQ(g_ran.load(), 1);
    ASSERT_EQ(starpu_init(&c), 0);
    ASSERT_EQ(starpu_task_insert(&count_cl, 0), 0);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_ran.load(), 2) << "the next start is not paused";
    starpu_shutdown();
}

// ---- starpu_wait_initialized, starpu_display_stats ----------------------------------------------

TEST_F(StarPUConf, WaitInitializedReturnsOnceStarted) {
    std::atomic<bool> done{false};
    std::thread waiter([&] {
        starpu_wait_initialized();
        done.store(true);
    });
    starpu_conf c = conf_of(1);
    ASSERT_EQ(starpu_init(&c), 0);
    waiter.join();
    EXPECT_TRUE(done.load());
    starpu_wait_initialized();  // already up: returns at once
    testing::internal::CaptureStderr();
    starpu_display_stats();
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "as StarPU: nothing without STARPU_WORKER/BUS_STATS";
    setenv("STARPU_WORKER_STATS", "1", 1);  // after starpu_init: no summary at shutdown
    setenv("STARPU_BUS_STATS", "1", 1);
    testing::internal::CaptureStderr();
    starpu_display_stats();
    const std::string out = testing::internal::GetCapturedStderr();
    unsetenv("STARPU_WORKER_STATS");
    unsetenv("STARPU_BUS_STATS");
    EXPECT_NE(out.find("Worker stats"), std::string::npos) << out;
    EXPECT_NE(out.find("CPU 0"), std::string::npos) << out;
    EXPECT_NE(out.find("Data transfer stats"), std::string::npos) << out;
    starpu_shutdown();
}

}  // namespace
