// StarPU's driver API (starpu_driver.h): CPU workers listed in starpu_conf::not_launched_drivers
// run only when a thread of the application drives them, with starpu_driver_run() on a thread
// of its own or starpu_driver_init/run_once/deinit from the program's thread; tasks they run
// run on that thread, as that worker; a worker nobody drives at shutdown has its tasks run by
// starpu_shutdown(); bad drivers and misuse give -EINVAL.
#include <gtest/gtest.h>
#include <starpu.h>

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace {

struct where_ran {
    std::atomic<int> count{0};
    pthread_t thread{};
    int worker = -2;
};

void note_fn(void*[], void* arg) {
    auto* w = static_cast<where_ran*>(arg);
    w->thread = pthread_self();
    w->worker = starpu_worker_get_id();
    w->count.fetch_add(1);
}

starpu_codelet note_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = note_fn;
    c.nbuffers = 0;
    return c;
}();

/// Starts with ncpus workers, those in `app` (CPU ids) not launched.
int start(int ncpus, const unsigned* app, unsigned napp, starpu_driver* drivers) {
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.sched_policy_name = "eager";
    conf.precedence_over_environment_variables = 1;
    for (unsigned i = 0; i < napp; ++i) {
        drivers[i].type = STARPU_CPU_WORKER;
        drivers[i].id.cpu_id = app[i];
    }
    conf.not_launched_drivers = drivers;
    conf.n_not_launched_drivers = napp;
    return starpu_init(&conf);
}

starpu_task* note_task(where_ran* w, int on_worker) {
    starpu_task* t = starpu_task_create();
    t->cl = &note_cl;
    t->cl_arg = w;
    if (on_worker >= 0) {
        t->execute_on_a_specific_worker = 1;
        t->workerid = static_cast<unsigned>(on_worker);
    }
    return t;
}

void* run_driver(void* d) {
    return reinterpret_cast<void*>(static_cast<intptr_t>(starpu_driver_run(static_cast<starpu_driver*>(d))));
}

}  // namespace

TEST(StarpuDriver, ADriverRunInTheApplicationsThreadRunsItsWorkersTasksThere) {
    starpu_driver d[1];
    const unsigned app[1] = {0};
    ASSERT_EQ(start(1, app, 1, d), 0);
    ASSERT_EQ(starpu_cpu_worker_get_count(), 1u) << "the worker exists, the runtime just does not run it";
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, nullptr, run_driver, &d[0]), 0);
    where_ran w;
    for (int i = 0; i < 20; ++i) {
        starpu_task* t = note_task(&w, -1);
        t->synchronous = 1;
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    EXPECT_EQ(w.count.load(), 20);
    EXPECT_TRUE(pthread_equal(w.thread, th)) << "tasks ran on the driver's thread";
    EXPECT_EQ(w.worker, 0) << "as worker 0";
    starpu_drivers_request_termination();
    void* ret = nullptr;
    ASSERT_EQ(pthread_join(th, &ret), 0);
    EXPECT_EQ(reinterpret_cast<intptr_t>(ret), 0) << "starpu_driver_run returns 0 after the request";
    starpu_shutdown();
}

TEST(StarpuDriver, InitRunOnceDeinitFromTheProgramsThread) {
    starpu_driver d[1];
    const unsigned app[1] = {0};
    ASSERT_EQ(start(1, app, 1, d), 0);
    EXPECT_EQ(starpu_driver_run_once(&d[0]), -EINVAL) << "not initialised by this thread";
    ASSERT_EQ(starpu_driver_init(&d[0]), 0);
    EXPECT_EQ(starpu_driver_init(&d[0]), -EINVAL) << "initialised already";
    EXPECT_EQ(starpu_driver_run_once(&d[0]), 0) << "nothing to run: returns at once";
    where_ran w;
    for (int i = 0; i < 8; ++i) {
        starpu_task* t = note_task(&w, -1);
        t->detach = 0;
        ASSERT_EQ(starpu_task_submit(t), 0);
        int rounds = 0;
        while (!starpu_task_finished(t) && rounds < 1000000) {
            ASSERT_EQ(starpu_driver_run_once(&d[0]), 0);
            ++rounds;
        }
        ASSERT_EQ(starpu_task_wait(t), 0);
        EXPECT_EQ(w.worker, 0);
        EXPECT_TRUE(pthread_equal(w.thread, pthread_self()));
    }
    EXPECT_EQ(w.count.load(), 8);
    EXPECT_EQ(starpu_worker_get_id(), -1) << "outside run_once the thread is no worker";
    ASSERT_EQ(starpu_driver_deinit(&d[0]), 0);
    EXPECT_EQ(starpu_driver_deinit(&d[0]), -EINVAL) << "deinitialised already";
    starpu_task_wait_for_all();
    starpu_shutdown();
}

TEST(StarpuDriver, TheOtherWorkersRunAsUsualAndShutdownRunsWhatNobodyDrives) {
    starpu_driver d[1];
    const unsigned app[1] = {1};
    ASSERT_EQ(start(2, app, 1, d), 0);
    ASSERT_EQ(starpu_cpu_worker_get_count(), 2u);
    where_ran on0, on1;
    starpu_task* t0 = note_task(&on0, 0);
    t0->synchronous = 1;
    ASSERT_EQ(starpu_task_submit(t0), 0) << "worker 0 is the runtime's: it runs at once";
    EXPECT_EQ(on0.count.load(), 1);
    EXPECT_EQ(on0.worker, 0);
    ASSERT_EQ(starpu_task_submit(note_task(&on1, 1)), 0);
    usleep(20 * 1000);
    EXPECT_EQ(on1.count.load(), 0) << "worker 1 is the application's, and nobody drives it";
    EXPECT_EQ(starpu_driver_init(nullptr), -EINVAL);
    starpu_driver cuda{};
    cuda.type = STARPU_CUDA_WORKER;
    EXPECT_EQ(starpu_driver_init(&cuda), -EINVAL) << "no CUDA worker";
    starpu_driver launched{};
    launched.type = STARPU_CPU_WORKER;
    launched.id.cpu_id = 0;
    EXPECT_EQ(starpu_driver_init(&launched), -EINVAL) << "worker 0 is run by the runtime";
    launched.id.cpu_id = 7;
    EXPECT_EQ(starpu_driver_run(&launched), -EINVAL) << "no worker 7";
    starpu_shutdown();
    EXPECT_EQ(starpu_driver_init(&d[0]), -EINVAL) << "not running";
    EXPECT_EQ(on1.count.load(), 1) << "shutdown ran the task left to the worker nobody drove";
    EXPECT_EQ(on1.worker, 1);
    EXPECT_TRUE(pthread_equal(on1.thread, pthread_self()));
}

TEST(StarpuDriver, ANotLaunchedDriverNamingNoWorkerIsRefused) {
    starpu_driver d[1];
    const unsigned app[1] = {3};
    EXPECT_EQ(start(2, app, 1, d), -EINVAL);
    EXPECT_EQ(starpu_is_initialized(), 0);
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 1;
    conf.n_not_launched_drivers = 1;
    conf.not_launched_drivers = nullptr;
    EXPECT_EQ(starpu_init(&conf), -EINVAL) << "a count without a list";
    starpu_driver cuda{};
    cuda.type = STARPU_CUDA_WORKER;
    conf.not_launched_drivers = &cuda;
    ASSERT_EQ(starpu_init(&conf), 0) << "a driver of another type is ignored (no such worker)";
    where_ran w;
    starpu_task* t = note_task(&w, -1);
    t->synchronous = 1;
    ASSERT_EQ(starpu_task_submit(t), 0);
    EXPECT_EQ(w.count.load(), 1);
    starpu_shutdown();
}

TEST(StarpuDriver, ShutdownEndsADriverRunThatWasNotAskedToTerminate) {
    starpu_driver d[1];
    const unsigned app[1] = {0};
    ASSERT_EQ(start(1, app, 1, d), 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, nullptr, run_driver, &d[0]), 0);
    where_ran first;
    starpu_task* t = note_task(&first, -1);
    t->synchronous = 1;
    ASSERT_EQ(starpu_task_submit(t), 0);  // the driver runs: shutdown leaves its tasks to it
    ASSERT_TRUE(pthread_equal(first.thread, th));
    where_ran w;
    for (int i = 0; i < 50; ++i) {
        ASSERT_EQ(starpu_task_submit(note_task(&w, -1)), 0);
    }
    starpu_shutdown();  // waits for the tasks (the driver runs them), then ends the driver's run
    EXPECT_EQ(w.count.load(), 50);
    EXPECT_TRUE(pthread_equal(w.thread, th)) << "the driver ran them, not the thread shutting down";
    void* ret = nullptr;
    ASSERT_EQ(pthread_join(th, &ret), 0);
    EXPECT_EQ(reinterpret_cast<intptr_t>(ret), 0);
}

namespace {
void* late_driver(void* d) {
    usleep(2500 * 1000);  // longer than the deadlock timeout the test sets
    return run_driver(d);
}
}  // namespace

// The program's thread waits for a task only the application's thread can run, and that
// thread starts driving late: a wait on an application thread is no deadlock.
TEST(StarpuDriver, WaitingForADriverThatStartsLateIsNoDeadlock) {
    setenv("MPC_SCHED_DEADLOCK_TIMEOUT", "1", 1);
    starpu_driver d[1];
    const unsigned app[1] = {0};
    const int rc = start(1, app, 1, d);
    unsetenv("MPC_SCHED_DEADLOCK_TIMEOUT");
    ASSERT_EQ(rc, 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, nullptr, late_driver, &d[0]), 0);
    where_ran w;
    starpu_task* t = note_task(&w, -1);
    t->synchronous = 1;
    ASSERT_EQ(starpu_task_submit(t), 0);
    EXPECT_EQ(w.count.load(), 1);
    EXPECT_TRUE(pthread_equal(w.thread, th));
    starpu_drivers_request_termination();
    ASSERT_EQ(pthread_join(th, nullptr), 0);
    starpu_shutdown();
}
