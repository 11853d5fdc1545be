// Parallel tasks (STARPU_SPMD, STARPU_FORKJOIN) and combined workers: the parallel policies make
// the default combined workers; an SPMD task runs on every member at once, each with its rank;
// a fork-join task runs once, on the master, with the combined worker's size; overlapping
// combined workers under a stream of parallel and sequential tasks never deadlock; a parallel
// codelet elsewhere runs on one worker; misuse gets an error.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <set>
#include <vector>

#include "scheduler/sched.hpp"

namespace {

int start(const char* policy, int ncpus) {
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.sched_policy_name = policy;
    conf.precedence_over_environment_variables = 1;
    return starpu_init(&conf);
}

std::atomic<int> g_calls{0};
std::atomic<int> g_inside{0};
std::atomic<int> g_met_all{0};   ///< calls that saw every rank inside at once
std::atomic<int> g_bad{0};       ///< a size, rank or id out of place
std::atomic<int> g_rank_mask{0};
std::atomic<int> g_sizes{0};     ///< sum of the sizes seen

void reset() {
    g_calls = 0;
    g_inside = 0;
    g_met_all = 0;
    g_bad = 0;
    g_rank_mask = 0;
    g_sizes = 0;
}

// Each rank waits (yielding, bounded) until all ranks of its task are inside: only a truly
// concurrent run gets there. Tasks run one at a time in these tests where this is checked.
void spmd_fn(void** /*buffers*/, void* /*arg*/) {
    const int size = starpu_combined_worker_get_size();
    const int rank = starpu_combined_worker_get_rank();
    if (size < 1 || rank < 0 || rank >= size) {
        g_bad.fetch_add(1);
    }
    if (size > 1 && starpu_combined_worker_get_id() < static_cast<int>(starpu_worker_get_count())) {
        g_bad.fetch_add(1);  // a parallel run reports its combined worker's id
    }
    g_rank_mask.fetch_or(1 << rank);
    g_sizes.fetch_add(size);
    g_calls.fetch_add(1);
    g_inside.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (g_inside.load() % size != 0 && std::chrono::steady_clock::now() < until) {
        mpc::sched::yield();
    }
    if (g_inside.load() % size == 0) {
        g_met_all.fetch_add(1);
    }
}

starpu_codelet make_cl(starpu_codelet_type type, void (*fn)(void**, void*), int max_par) {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = fn;
    cl.type = type;
    cl.max_parallelism = max_par;
    cl.nbuffers = 0;
    cl.name = "par";
    return cl;
}

std::atomic<int> g_worker_mask{0};
void note_worker(void** /*buffers*/, void* /*arg*/) {
    g_worker_mask.fetch_or(1 << starpu_worker_get_id());
    mpc::sched::sleep_for(std::chrono::microseconds(200));
}

// pheft with sequential tasks of unknown length from a submitter slower than the 1 us they are
// counted: every worker's expected end has passed at each placement, and ties go to the
// shorter queue, so both workers run tasks (they all went to worker 0 before).
TEST(StarpuParallel, PheftSpreadsUncalibratedTasksFromASlowSubmitter) {
    ASSERT_EQ(start("pheft", 2), 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = note_worker;
    cl.nbuffers = 0;
    cl.name = "seq";
    g_worker_mask = 0;
    for (int i = 0; i < 40; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_worker_mask.load(), 3) << "both workers ran tasks";
    starpu_shutdown();
}

TEST(StarpuParallel, TheParallelPoliciesMakeTheDefaultCombinedWorkers) {
    for (const char* p : {"pheft", "peager"}) {
        ASSERT_EQ(start(p, 2), 0) << p;
        ASSERT_EQ(starpu_combined_worker_get_count(), 1u) << p << ": the two workers";
        int size = 0;
        int* ids = nullptr;
        ASSERT_EQ(starpu_combined_worker_get_description(2, &size, &ids), 0);
        ASSERT_EQ(size, 2);
        EXPECT_EQ(ids[0], 0);
        EXPECT_EQ(ids[1], 1);
        EXPECT_EQ(starpu_worker_is_combined_worker(2), 1u);
        EXPECT_EQ(starpu_worker_is_combined_worker(1), 0u);
        starpu_shutdown();
    }
    ASSERT_EQ(start("eager", 2), 0);
    EXPECT_EQ(starpu_combined_worker_get_count(), 0u) << "other policies make none";
    starpu_sched_find_all_worker_combinations();
    EXPECT_EQ(starpu_combined_worker_get_count(), 1u);
    starpu_shutdown();
    ASSERT_EQ(start("pheft", 4), 0);
    EXPECT_EQ(starpu_combined_worker_get_count(), 3u) << "all four, then two halves";
    starpu_shutdown();
}

TEST(StarpuParallel, AnSpmdTaskRunsOnEveryMemberAtOnce) {
    ASSERT_EQ(start("eager", 2), 0);
    int both[2] = {0, 1};
    const int cw = starpu_combined_worker_assign_workerid(2, both);
    ASSERT_EQ(cw, 2);
    EXPECT_EQ(starpu_combined_worker_assign_workerid(2, both), cw) << "the same combination";
    reset();
    starpu_codelet cl = make_cl(STARPU_SPMD, spmd_fn, INT_MAX);
    for (int i = 0; i < 20; ++i) {
        starpu_task* t = starpu_task_create();
        t->cl = &cl;
        t->execute_on_a_specific_worker = 1;
        t->workerid = static_cast<unsigned>(cw);
        t->synchronous = 1;  // one at a time: the ranks of one task meet
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    EXPECT_EQ(g_calls.load(), 40) << "two ranks per task";
    EXPECT_EQ(g_met_all.load(), 40) << "both ranks were inside together";
    EXPECT_EQ(g_rank_mask.load(), 3);
    EXPECT_EQ(g_sizes.load(), 80);
    EXPECT_EQ(g_bad.load(), 0);
    starpu_shutdown();
}

std::atomic<int> g_fj_on[4];
void forkjoin_fn(void** /*buffers*/, void* /*arg*/) {
    g_calls.fetch_add(1);
    g_sizes.fetch_add(starpu_combined_worker_get_size());
    g_fj_on[starpu_worker_get_id()].fetch_add(1);
    if (starpu_combined_worker_get_rank() != 0) {
        g_bad.fetch_add(1);
    }
}

TEST(StarpuParallel, AForkJoinTaskRunsOnceOnItsMaster) {
    ASSERT_EQ(start("pheft", 2), 0);
    reset();
    for (auto& c : g_fj_on) {
        c = 0;
    }
    starpu_codelet cl = make_cl(STARPU_FORKJOIN, forkjoin_fn, INT_MAX);
    for (int i = 0; i < 30; ++i) {
        starpu_task* t = starpu_task_create();
        t->cl = &cl;
        t->execute_on_a_specific_worker = 1;
        t->workerid = 2;  // the combined worker pheft made
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_calls.load(), 30) << "once per task";
    EXPECT_EQ(g_sizes.load(), 60) << "with the combined worker's size";
    EXPECT_EQ(g_fj_on[0].load(), 30) << "on the master";
    EXPECT_EQ(g_bad.load(), 0);
    starpu_shutdown();
}

TEST(StarpuParallel, ElsewhereAParallelCodeletRunsOnOneWorker) {
    ASSERT_EQ(start("dmda", 2), 0);
    reset();
    starpu_codelet cl = make_cl(STARPU_SPMD, spmd_fn, INT_MAX);
    for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_calls.load(), 20);
    EXPECT_EQ(g_sizes.load(), 20) << "size 1 each";
    EXPECT_EQ(g_rank_mask.load(), 1);
    starpu_shutdown();
}

void seq_fn(void** /*buffers*/, void* /*arg*/) {
    g_calls.fetch_add(1);
    if (starpu_combined_worker_get_size() != 1) {
        g_bad.fetch_add(1);
    }
}

void count_parallel(void** /*buffers*/, void* /*arg*/) {
    g_calls.fetch_add(1);
    g_sizes.fetch_add(starpu_combined_worker_get_size());
    volatile double x = 0;
    for (int i = 0; i < 2000; ++i) {
        x = x + i;
    }
}

// Four workers make three overlapping combined workers ({0,1,2,3}, {0,1}, {2,3}); parallel tasks
// of both kinds and sequential ones, with dependencies through a handle, all end.
class MixedStream : public ::testing::TestWithParam<const char*> {};

TEST_P(MixedStream, OverlappingCombinedWorkersNeverDeadlock) {
    ASSERT_EQ(start(GetParam(), 4), 0);
    ASSERT_EQ(starpu_combined_worker_get_count(), 3u);
    reset();
    starpu_codelet spmd = make_cl(STARPU_SPMD, count_parallel, INT_MAX);
    starpu_codelet spmd2 = make_cl(STARPU_SPMD, count_parallel, 2);
    starpu_codelet fj = make_cl(STARPU_FORKJOIN, count_parallel, INT_MAX);
    starpu_codelet seq = make_cl(STARPU_SEQ, seq_fn, 0);
    starpu_codelet rw = make_cl(STARPU_SPMD, count_parallel, INT_MAX);
    rw.nbuffers = 1;
    rw.modes[0] = STARPU_RW;
    int value = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&value), sizeof value);
    const int n = 400;
    for (int i = 0; i < n; ++i) {
        starpu_codelet* cl = i % 5 == 0 ? &spmd : i % 5 == 1 ? &fj : i % 5 == 2 ? &seq : i % 5 == 3 ? &spmd2 : &rw;
        if (cl == &rw) {
            ASSERT_EQ(starpu_task_insert(cl, STARPU_RW, h, 0), 0);
        } else {
            ASSERT_EQ(starpu_task_insert(cl, 0), 0);
        }
        // Some straight onto a combined worker, whatever the policy chose.
        if (i % 37 == 0) {
            starpu_task* t = starpu_task_create();
            t->cl = &spmd;
            t->execute_on_a_specific_worker = 1;
            t->workerid = 4 + static_cast<unsigned>(i % 3);
            ASSERT_EQ(starpu_task_submit(t), 0);
        }
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_GE(g_calls.load(), n) << "every task ran (SPMD ones once per rank)";
    EXPECT_EQ(g_bad.load(), 0);
    EXPECT_GT(g_sizes.load(), g_calls.load()) << "some ran on combined workers";
    starpu_data_unregister(h);
    starpu_shutdown();
}

INSTANTIATE_TEST_SUITE_P(Policies, MixedStream, ::testing::Values("peager", "pheft"));

TEST(StarpuParallel, MisuseIsRefused) {
    ASSERT_EQ(start("eager", 2), 0);
    int one[1] = {0};
    EXPECT_EQ(starpu_combined_worker_assign_workerid(1, one), -EINVAL) << "one worker";
    int twice[2] = {1, 1};
    EXPECT_EQ(starpu_combined_worker_assign_workerid(2, twice), -EINVAL);
    int none[2] = {0, 7};
    EXPECT_EQ(starpu_combined_worker_assign_workerid(2, none), -EINVAL);
    int size = 0;
    int* ids = nullptr;
    EXPECT_EQ(starpu_combined_worker_get_description(5, &size, &ids), -EINVAL);
    starpu_codelet cl = make_cl(static_cast<starpu_codelet_type>(9), seq_fn, 1);
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    EXPECT_EQ(starpu_task_submit(t), -EINVAL) << "no such codelet type";
    t->execute_on_a_specific_worker = 1;
    t->workerid = 3;  // no combined worker exists
    cl.type = STARPU_SPMD;
    EXPECT_EQ(starpu_task_submit(t), -EINVAL);
    t->destroy = 0;
    starpu_task_destroy(t);
    // Outside a task: the program is no worker.
    EXPECT_EQ(starpu_combined_worker_get_id(), -1);
    EXPECT_EQ(starpu_combined_worker_get_size(), 1);
    EXPECT_EQ(starpu_combined_worker_get_rank(), 0);
    int both[2] = {0, 1};
    const int cw = starpu_combined_worker_assign_workerid(2, both);
    starpu_codelet spmd = make_cl(STARPU_SPMD, seq_fn, 1);
    starpu_task task_on_cw{};
    starpu_task_init(&task_on_cw);
    task_on_cw.cl = &spmd;
    EXPECT_EQ(starpu_combined_worker_can_execute_task(static_cast<unsigned>(cw), &task_on_cw, 0), 0)
        << "max_parallelism 1 is below the combined worker's size";
    spmd.max_parallelism = 2;
    EXPECT_EQ(starpu_combined_worker_can_execute_task(static_cast<unsigned>(cw), &task_on_cw, 0), 1);
    starpu_shutdown();
}

}  // namespace
