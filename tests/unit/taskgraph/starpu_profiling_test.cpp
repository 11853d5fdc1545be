// StarPU's profiling API (starpu_profiling.h) on the task-graph runtime: the tasks'
// profiling_info dates and their order, the workers' executing/sleeping time, task and flop
// counts, the status switch, the STARPU_PROFILING variable, buses (none), misuse; the
// worker queries and worker collections of starpu_worker.h (starpu_worker_list); small calls
// (starpu_task_dup, starpu_sleep, the memory size). misc_compare.c checks answers that must be
// StarPU's (hashes, names, helpers) against Debian's StarPU.
#include <gtest/gtest.h>
#include <starpu.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <vector>

#include "starpu_fixture.hpp"

namespace {

/// Two workers; profiling switched off again after each test (the status outlives
/// starpu_shutdown, as in StarPU).
class Profiling : public mpc::test::starpu_two_workers {
protected:
    void TearDown() override {
        starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
        mpc::test::starpu_two_workers::TearDown();
    }
};

void spin_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

/// Busy for cl_arg microseconds, then adds 1 to the vector's elements; records its worker.
struct busy_arg {
    int us = 0;
    int worker = -2;
};
void busy_kernel(void* buffers[], void* cl_arg) {
    auto* a = static_cast<busy_arg*>(cl_arg);
    a->worker = starpu_worker_get_id();
    spin_for(std::chrono::microseconds(a->us));
    auto* v = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(buffers[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i) {
        v[i] += 1;
    }
}

starpu_codelet busy_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = busy_kernel;
    c.nbuffers = 1;
    c.modes[0] = STARPU_RW;
    c.name = "busy";
    return c;
}();

void nothing(void**, void*) {}
starpu_codelet nothing_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = nothing;
    c.nbuffers = 0;
    c.name = "nothing";
    return c;
}();

void slow_callback(void*) { spin_for(std::chrono::microseconds(1000)); }

double us(timespec t) { return starpu_timing_timespec_to_us(&t); }

void submit_and_wait(starpu_task* t) {
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_wait(t), 0);
}

TEST_F(Profiling, OffByDefaultAndNoRecord) {
    EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
    starpu_task* t = starpu_task_create();
    t->cl = &nothing_cl;
    t->detach = 0;
    t->destroy = 0;
    ASSERT_NO_FATAL_FAILURE(submit_and_wait(t));
    EXPECT_EQ(t->profiling_info, nullptr);
    starpu_task_destroy(t);
}

// Every stage of a task is dated, in the order the task goes through them.
TEST_F(Profiling, TaskDatesInOrder) {
    EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_ENABLE), STARPU_PROFILING_DISABLE);
    EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_ENABLE);
    std::vector<int> v(64, 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 64, sizeof(int));
    const double before = starpu_timing_now();
    constexpr int n = 6;
    busy_arg args[n];
    starpu_task* tasks[n];
    for (int i = 0; i < n; ++i) {
        args[i].us = 2000;
        tasks[i] = starpu_task_create();
        tasks[i]->cl = &busy_cl;
        tasks[i]->handles[0] = h;
        tasks[i]->cl_arg = &args[i];
        tasks[i]->callback_func = slow_callback;
        tasks[i]->destroy = 0;
        ASSERT_EQ(starpu_task_submit(tasks[i]), 0);
    }
    starpu_task_wait_for_all();
    const double elapsed_us = starpu_timing_now() - before;
    double prev_end = 0;
    for (int i = 0; i < n; ++i) {
        const starpu_profiling_task_info* p = tasks[i]->profiling_info;
        ASSERT_NE(p, nullptr) << i;
        const timespec order[] = {p->submit_time,  p->push_start_time,         p->push_end_time,
                                  p->start_time,   p->end_time,                p->release_data_start_time,
                                  p->release_data_end_time, p->callback_start_time, p->callback_end_time};
        for (std::size_t k = 1; k < std::size(order); ++k) {
            EXPECT_LE(us(order[k - 1]), us(order[k])) << "task " << i << " stage " << k;
        }
        EXPECT_LE(us(p->pop_start_time), us(p->pop_end_time)) << i;
        EXPECT_LE(us(p->pop_end_time), us(p->acquire_data_start_time)) << i;
        EXPECT_LE(us(p->acquire_data_start_time), us(p->acquire_data_end_time)) << i;
        EXPECT_LE(us(p->acquire_data_end_time), us(p->start_time)) << i;
        EXPECT_LE(us(p->push_start_time), us(p->pop_end_time)) << i;
        EXPECT_GT(us(p->submit_time), 0) << i;
        EXPECT_GE(starpu_timing_timespec_delay_us(&tasks[i]->profiling_info->start_time,
                                                  &tasks[i]->profiling_info->end_time),
                  2000)
            << i;
        EXPECT_GE(us(p->callback_end_time) - us(p->callback_start_time), 1000) << i;
        // Read-write on one handle: the tasks ran one after the other, in submission order.
        EXPECT_GE(us(p->start_time), prev_end) << i;
        prev_end = us(p->end_time);
        EXPECT_EQ(p->workerid, args[i].worker) << i;
        EXPECT_GE(p->workerid, 0);
        EXPECT_LT(p->workerid, 2);
    }
    // Dates are relative to starpu_init: the last end is within the test's own time plus the
    // time since the fixture's init.
    EXPECT_LT(prev_end, elapsed_us + 60e6);
    starpu_data_unregister(h);
    EXPECT_EQ(v[0], n);
    for (starpu_task* t : tasks) {
        starpu_task_destroy(t);
    }
}

// A task submitted again gets new dates; one submitted with profiling off keeps its last.
TEST_F(Profiling, ResubmittedAndSwitchedOff) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    starpu_task* t = starpu_task_create();
    t->cl = &nothing_cl;
    t->detach = 0;
    t->destroy = 0;
    ASSERT_NO_FATAL_FAILURE(submit_and_wait(t));
    ASSERT_NE(t->profiling_info, nullptr);
    const double first = us(t->profiling_info->end_time);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_wait(t), 0);
    const double second = us(t->profiling_info->end_time);
    EXPECT_GE(second - first, 5000);
    EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_DISABLE), STARPU_PROFILING_ENABLE);
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_wait(t), 0);
    ASSERT_NE(t->profiling_info, nullptr);
    EXPECT_EQ(us(t->profiling_info->end_time), second);
    starpu_task_clean(t);  // frees the record, as StarPU's does
    EXPECT_EQ(t->profiling_info, nullptr);
    starpu_task_destroy(t);
}

// An empty task is never pushed nor run: submitted and called back, no worker.
TEST_F(Profiling, EmptyTask) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    starpu_task* t = starpu_task_create();
    t->detach = 0;
    t->destroy = 0;
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_wait(t), 0);
    ASSERT_NE(t->profiling_info, nullptr);
    EXPECT_GT(us(t->profiling_info->submit_time), 0);
    EXPECT_EQ(us(t->profiling_info->start_time), 0);
    EXPECT_EQ(t->profiling_info->workerid, -1);
    starpu_task_destroy(t);
}

// Executing time, task and flop counts per worker; a reset after each query.
TEST_F(Profiling, WorkerExecutingTime) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    std::vector<int> v(8, 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 8, sizeof(int));
    busy_arg a[5];
    for (busy_arg& x : a) {
        x.us = 5000;
        starpu_task* t = starpu_task_create();
        t->cl = &busy_cl;
        t->handles[0] = h;
        t->cl_arg = &x;
        t->execute_on_a_specific_worker = 1;
        t->workerid = 0;
        t->flops = 1e6;
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    starpu_task_wait_for_all();
    starpu_profiling_worker_info w0, w1;
    ASSERT_EQ(starpu_profiling_worker_get_info(0, &w0), 0);
    ASSERT_EQ(starpu_profiling_worker_get_info(1, &w1), 0);
    EXPECT_EQ(w0.executed_tasks, 5);
    EXPECT_EQ(w1.executed_tasks, 0);
    EXPECT_GE(us(w0.executing_time), 25000);
    EXPECT_GE(us(w0.total_time), us(w0.executing_time));
    EXPECT_LE(us(w0.executing_time) + us(w0.sleeping_time), us(w0.total_time) + 1);
    EXPECT_DOUBLE_EQ(w0.flops, 5e6);
    EXPECT_EQ(us(w1.executing_time), 0);
    // Counters start again after a query.
    ASSERT_EQ(starpu_profiling_worker_get_info(0, &w0), 0);
    EXPECT_EQ(w0.executed_tasks, 0);
    EXPECT_EQ(w0.flops, 0);
    EXPECT_LT(us(w0.executing_time), 5000);
    starpu_data_unregister(h);
}

// A worker with nothing to do parks: its sleeping time grows with the wall clock. (Worker 1:
// worker 0 shares VP 0 with this test's thread, which holds the VP in sleep_for, so that
// worker may not even reach its park: neither executing nor sleeping.)
TEST_F(Profiling, WorkerSleepingTime) {
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    starpu_profiling_worker_info i;
    ASSERT_EQ(starpu_profiling_worker_get_info(1, &i), 0);
    EXPECT_GE(us(i.total_time), 100000);
    EXPECT_GE(us(i.sleeping_time), 50000);  // it parks after a 20 us spin
    EXPECT_LE(us(i.sleeping_time), us(i.total_time));
    EXPECT_EQ(us(i.executing_time), 0);
    // A second query: a new interval, the worker still parked.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(starpu_profiling_worker_get_info(1, &i), 0);
    EXPECT_GE(us(i.sleeping_time), 10000);
    EXPECT_LT(us(i.total_time), 100000);
}

// Tasks are counted with profiling off too (StarPU does); time is not.
TEST_F(Profiling, TasksCountedWhenOff) {
    ASSERT_EQ(starpu_profiling_worker_get_info(0, nullptr), 0);  // reset only
    for (int i = 0; i < 3; ++i) {
        starpu_task* t = starpu_task_create();
        t->cl = &nothing_cl;
        t->execute_on_a_specific_worker = 1;
        t->workerid = 0;
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    starpu_task_wait_for_all();
    starpu_profiling_worker_info i;
    ASSERT_EQ(starpu_profiling_worker_get_info(0, &i), 0);
    EXPECT_EQ(i.executed_tasks, 3);
    EXPECT_EQ(us(i.executing_time), 0);
}

TEST_F(Profiling, Misuse) {
    starpu_profiling_worker_info i;
    EXPECT_EQ(starpu_profiling_worker_get_info(-1, &i), -EINVAL);
    EXPECT_EQ(starpu_profiling_worker_get_info(2, &i), -EINVAL);
    EXPECT_EQ(starpu_profiling_status_set(7), -EINVAL);
    EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
    // No bus: main memory is the only memory node.
    EXPECT_EQ(starpu_bus_get_count(), 0);
    EXPECT_EQ(starpu_bus_get_id(0, 0), -1);
    EXPECT_EQ(starpu_bus_get_src(0), -1);
    starpu_profiling_bus_info b;
    EXPECT_EQ(starpu_bus_get_profiling_info(0, &b), -EINVAL);
}

TEST(ProfilingNoRuntime, StatusBeforeInitAndQueriesAfter) {
    EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_ENABLE), STARPU_PROFILING_DISABLE);
    ASSERT_EQ(mpc::test::start_with_policy(nullptr, 2), 0);
    EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_ENABLE);
    starpu_shutdown();
    starpu_profiling_worker_info i;
    EXPECT_EQ(starpu_profiling_worker_get_info(0, &i), -ENODEV);
    EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_DISABLE), STARPU_PROFILING_ENABLE);
}

TEST(ProfilingNoRuntime, EnvironmentVariable) {
    ASSERT_EQ(setenv("STARPU_PROFILING", "1", 1), 0);
    ASSERT_EQ(mpc::test::start_with_policy(nullptr, 2), 0);
    EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_ENABLE);
    starpu_shutdown();
    starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
    ASSERT_EQ(setenv("STARPU_PROFILING", "x", 1), 0);
    EXPECT_EQ(mpc::test::start_with_policy(nullptr, 2), -EINVAL);  // malformed: refused
    unsetenv("STARPU_PROFILING");
}

TEST(ProfilingTiming, Helpers) {
    timespec a{2, 500000000}, b{1, 750000000};
    EXPECT_DOUBLE_EQ(starpu_timing_timespec_to_us(&a), 2.5e6);
    EXPECT_DOUBLE_EQ(starpu_timing_timespec_delay_us(&b, &a), 0.75e6);
    timespec r;
    starpu_timespec_sub(&a, &b, &r);
    EXPECT_EQ(r.tv_sec, 0);
    EXPECT_EQ(r.tv_nsec, 750000000);
    starpu_timespec_add(&a, &b, &r);
    EXPECT_EQ(r.tv_sec, 4);
    EXPECT_EQ(r.tv_nsec, 250000000);
}

// ---- worker queries and collections ------------------------------------------------------------

using Workers = mpc::test::starpu_two_workers;

std::vector<int> walk(starpu_worker_collection* c, starpu_sched_ctx_iterator* it) {
    std::vector<int> out;
    while (c->has_next(c, it)) {
        out.push_back(c->get_next(c, it));
    }
    return out;
}

TEST_F(Workers, WorkerList) {
    starpu_worker_collection c = starpu_worker_list;
    EXPECT_EQ(c.type, STARPU_WORKER_LIST);
    c.init(&c);
    EXPECT_EQ(c.nworkers, 0u);
    EXPECT_EQ(c.add(&c, 1), 1);
    EXPECT_EQ(c.add(&c, 0), 0);
    EXPECT_EQ(c.add(&c, 1), -1);  // already there
    EXPECT_EQ(c.add(&c, -3), -1);
    EXPECT_EQ(c.nworkers, 2u);
    starpu_sched_ctx_iterator it;
    c.init_iterator(&c, &it);
    EXPECT_EQ(walk(&c, &it), (std::vector<int>{1, 0}));
    EXPECT_EQ(c.remove(&c, 5), -1);
    EXPECT_EQ(c.remove(&c, 1), 1);
    EXPECT_EQ(c.nworkers, 1u);
    // has_next rewound the cursor at the end: a second walk needs no init_iterator.
    EXPECT_EQ(walk(&c, &it), (std::vector<int>{0}));
    EXPECT_EQ(c.add(&c, 1), 1);
    EXPECT_EQ(walk(&c, &it), (std::vector<int>{0, 1}));
    c.deinit(&c);
}

TEST_F(Workers, Queries) {
    int ids[4] = {-1, -1, -1, -1};
    EXPECT_EQ(starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, 4), 2u);
    EXPECT_EQ(ids[0], 0);
    EXPECT_EQ(ids[1], 1);
    EXPECT_EQ(starpu_worker_get_ids_by_type(STARPU_ANY_WORKER, ids, 1), static_cast<unsigned>(-ERANGE));
    EXPECT_EQ(starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 4), 0u);
    EXPECT_EQ(starpu_worker_get_by_type(STARPU_CPU_WORKER, 1), 1);
    EXPECT_EQ(starpu_worker_get_by_type(STARPU_CPU_WORKER, 2), -1);
    EXPECT_EQ(starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0), -1);
    EXPECT_EQ(starpu_worker_get_by_devid(STARPU_CPU_WORKER, 0), 0);
    EXPECT_EQ(starpu_worker_get_devid(1), 1);
    EXPECT_EQ(starpu_worker_get_devid(7), -1);
    int devids[4];
    EXPECT_EQ(starpu_worker_get_devids(STARPU_CPU_WORKER, devids, 4), 2);
    EXPECT_EQ(starpu_worker_get_devids(STARPU_OPENCL_WORKER, devids, 4), 0);
    EXPECT_GE(starpu_worker_get_bindid(0), 0);
    EXPECT_EQ(starpu_worker_get_bindid(9), -1);
    EXPECT_STREQ(starpu_worker_get_type_as_string(STARPU_CPU_WORKER), "STARPU_CPU_WORKER");
    EXPECT_STREQ(starpu_worker_get_type_as_string(STARPU_ANY_WORKER), "STARPU_ANY_WORKER");
    EXPECT_EQ(starpu_worker_get_local_memory_node(), unsigned{STARPU_MAIN_RAM});
    EXPECT_EQ(starpu_memory_nodes_get_count(), 1u);
    EXPECT_EQ(starpu_node_get_kind(STARPU_MAIN_RAM), STARPU_CPU_RAM);
    EXPECT_EQ(starpu_node_get_kind(1), STARPU_UNUSED);
    char name[32];
    EXPECT_GT(starpu_memory_node_get_name(STARPU_MAIN_RAM, name, sizeof name), 0);
    EXPECT_STREQ(name, "NUMA 0");
    EXPECT_EQ(starpu_memory_node_get_name(3, name, sizeof name), -1);
}

// ---- small calls ---------------------------------------------------------------------------------

TEST_F(Workers, TaskDup) {
    std::vector<int> v(4, 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 4, sizeof(int));
    busy_arg a{0, -2};
    starpu_task* t = starpu_task_create();
    t->cl = &busy_cl;
    t->handles[0] = h;
    t->cl_arg = std::malloc(sizeof a);
    std::memcpy(t->cl_arg, &a, sizeof a);
    t->cl_arg_free = 1;
    t->detach = 0;
    t->destroy = 0;
    starpu_task* d = starpu_task_dup(t);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->cl, t->cl);
    EXPECT_EQ(d->handles[0], h);
    EXPECT_EQ(d->cl_arg, t->cl_arg);
    EXPECT_EQ(d->cl_arg_free, 0u);  // shared, owned by the original
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_submit(d), 0);  // its own runtime record: both run
    ASSERT_EQ(starpu_task_wait(t), 0);
    ASSERT_EQ(starpu_task_wait(d), 0);
    starpu_data_unregister(h);
    EXPECT_EQ(v[0], 2);
    starpu_task_destroy(d);
    starpu_task_destroy(t);
}

TEST_F(Workers, SleepFromTaskAndCaller) {
    const auto t0 = std::chrono::steady_clock::now();
    starpu_usleep(20000);
    starpu_sleep(0.01f);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) { starpu_usleep(15000); };
    cl.nbuffers = 0;
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->detach = 0;
    t->destroy = 0;
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_wait(t), 0);
    EXPECT_GE(std::chrono::steady_clock::now() - t1, std::chrono::milliseconds(15));
    starpu_task_destroy(t);
}

TEST(MemorySize, LimitOrMachine) {
    ASSERT_EQ(setenv("STARPU_LIMIT_CPU_MEM", "64", 1), 0);  // MiB
    ASSERT_EQ(mpc::test::start_with_policy(nullptr, 1), 0);
    EXPECT_EQ(starpu_memory_get_total(STARPU_MAIN_RAM), 64 << 20);
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), 64 << 20);
    EXPECT_EQ(starpu_memory_get_total_all_nodes(), 64 << 20);
    EXPECT_EQ(starpu_memory_get_total(1), -1);
    starpu_shutdown();
    unsetenv("STARPU_LIMIT_CPU_MEM");
    ASSERT_EQ(mpc::test::start_with_policy(nullptr, 1), 0);
    EXPECT_GT(starpu_memory_get_total(STARPU_MAIN_RAM), 64 << 20);  // the machine's
    EXPECT_LE(starpu_memory_get_available(STARPU_MAIN_RAM), starpu_memory_get_total(STARPU_MAIN_RAM));
    starpu_shutdown();
}

TEST(EnvHelpers, MalformedStops) {
    const char* choices[] = {"a", "b", nullptr};
    ASSERT_EQ(setenv("MPC_TEST_CHOICE", "c", 1), 0);
    EXPECT_DEATH(starpu_get_env_string_var_default("MPC_TEST_CHOICE", choices, 0), "valid values: a, b");
    ASSERT_EQ(setenv("MPC_TEST_SIZE", "12X", 1), 0);
    EXPECT_DEATH(starpu_get_env_size_default("MPC_TEST_SIZE", 0), "expected a size");
    unsetenv("MPC_TEST_CHOICE");
    unsetenv("MPC_TEST_SIZE");
}

}  // namespace
