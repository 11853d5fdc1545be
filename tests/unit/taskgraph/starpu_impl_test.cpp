// Codelets with several CPU implementations (cpu_funcs[1...]): without a model the first
// implementation the worker may run; can_execute per implementation (and the can_execute
// queries); a performance model calibrates every implementation apart, then the fastest one
// runs; the model file keeps them apart; starpu_task_set_implementation is honoured.
#include <gtest/gtest.h>
#include <starpu.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::atomic<int> g_ran[3];
std::atomic<int> g_reported_wrong{0};

void spin_us(int us) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < end) {
    }
}

/// Each implementation counts its runs, and checks that starpu_task_get_implementation names it.
template <int K, int Us>
void impl_fn(void* /*buffers*/[], void* /*arg*/) {
    g_ran[K].fetch_add(1);
    if (starpu_task_get_implementation(starpu_task_get_current()) != K) {
        g_reported_wrong.fetch_add(1);
    }
    spin_us(Us);
}

int not_impl0(unsigned /*worker*/, starpu_task* /*t*/, unsigned nimpl) { return nimpl != 0 ? 1 : 0; }

struct Impl : ::testing::Test {
    std::filesystem::path dir;
    void SetUp() override {
        dir = std::filesystem::temp_directory_path() /
              ("mpc_tg_impl_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir);
        setenv("MPC_TG_PERFMODEL_DIR", dir.c_str(), 1);
        for (auto& r : g_ran) {
            r = 0;
        }
        g_reported_wrong = 0;
    }
    void TearDown() override {
        unsetenv("MPC_TG_PERFMODEL_DIR");
        std::filesystem::remove_all(dir);
    }
    static int start(const char* sched, int ncpus) {
        starpu_conf conf;
        starpu_conf_init(&conf);
        conf.ncpus = ncpus;
        conf.sched_policy_name = sched;
        conf.precedence_over_environment_variables = 1;
        return starpu_init(&conf);
    }
};

TEST_F(Impl, WithoutAModelTheFirstImplementationRuns) {
    ASSERT_EQ(start("eager", 2), 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = impl_fn<0, 0>;
    cl.cpu_funcs[1] = impl_fn<1, 0>;
    cl.nbuffers = 0;
    for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    }
    starpu_task_wait_for_all();
    starpu_shutdown();
    EXPECT_EQ(g_ran[0].load(), 20);
    EXPECT_EQ(g_ran[1].load(), 0);
    EXPECT_EQ(g_reported_wrong.load(), 0);
}

TEST_F(Impl, CanExecutePerImplementationPicksTheOneAllowed) {
    ASSERT_EQ(start("eager", 2), 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = impl_fn<0, 0>;
    cl.cpu_funcs[1] = impl_fn<1, 0>;
    cl.can_execute = not_impl0;
    cl.nbuffers = 0;
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->detach = 0;
    t->destroy = 0;  // kept after starpu_task_wait, for the query below
    EXPECT_EQ(starpu_worker_can_execute_task(0, t, 0), 0);
    EXPECT_EQ(starpu_worker_can_execute_task(0, t, 1), 1);
    EXPECT_EQ(starpu_worker_can_execute_task(0, t, 2), 0) << "no implementation 2";
    unsigned first = 9, mask = 0;
    EXPECT_EQ(starpu_worker_can_execute_task_first_impl(0, t, &first), 1);
    EXPECT_EQ(first, 1u);
    EXPECT_EQ(starpu_worker_can_execute_task_impl(1, t, &mask), 1);
    EXPECT_EQ(mask, 2u);
    ASSERT_EQ(starpu_task_submit(t), 0);
    ASSERT_EQ(starpu_task_wait(t), 0);
    EXPECT_EQ(starpu_task_get_implementation(t), 1u);
    starpu_task_destroy(t);
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    }
    starpu_task_wait_for_all();
    starpu_shutdown();
    EXPECT_EQ(g_ran[0].load(), 0);
    EXPECT_EQ(g_ran[1].load(), 11);
    EXPECT_EQ(g_reported_wrong.load(), 0);
}

TEST_F(Impl, AModelCalibratesEachImplementationThenRunsTheFastest) {
    ASSERT_EQ(start("dmda", 2), 0);
    static starpu_perfmodel model{};
    model.type = STARPU_HISTORY_BASED;
    model.symbol = "mpc_impl_test_model";
    starpu_codelet cl{};
    cl.cpu_funcs[0] = impl_fn<0, 2000>;  // slow (a preempted fast run must not look slower)
    cl.cpu_funcs[1] = impl_fn<1, 60>;   // fast
    cl.model = &model;
    cl.nbuffers = 0;
    constexpr int n = 80;
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
        if (i < 30) {
            starpu_task_wait_for_all();  // one at a time while calibrating: exact counts
        }
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_ran[0].load() + g_ran[1].load(), n);
    EXPECT_EQ(g_ran[0].load(), 10) << "implementation 0 runs until calibrated, then never (it is slower)";
    EXPECT_EQ(g_ran[1].load(), n - 10);
    EXPECT_EQ(g_reported_wrong.load(), 0);
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->destroy = 0;  // never submitted: the test frees it
    starpu_perfmodel_arch* arch = starpu_worker_get_perf_archtype(0, 0);
    const double slow = starpu_task_expected_length(t, arch, 0);
    const double fast = starpu_task_expected_length(t, arch, 1);
    EXPECT_GT(slow, 3 * fast) << slow << " vs " << fast;
    starpu_task_destroy(t);
    starpu_shutdown();  // saves the model
    bool found = false;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(e.path());
        std::stringstream ss;
        ss << in.rdbuf();
        if (ss.str().find("symbol mpc_impl_test_model") != std::string::npos) {
            found = ss.str().find("arch cpu_impl1") != std::string::npos && ss.str().find("arch cpu\n") != std::string::npos;
        }
    }
    EXPECT_TRUE(found) << "the model file keeps both implementations";
}

TEST_F(Impl, SetImplementationIsHonoured) {
    ASSERT_EQ(start("eager", 1), 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = impl_fn<0, 0>;
    cl.cpu_funcs[1] = impl_fn<1, 0>;
    cl.cpu_funcs[2] = impl_fn<2, 0>;
    cl.nbuffers = 0;
    starpu_tag_t tag = 0x51;
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->detach = 0;
    t->destroy = 0;
    starpu_tag_declare_deps_array(0x52, 1, &tag);
    t->use_tag = 1;
    t->tag_id = 0x52;
    ASSERT_EQ(starpu_task_submit(t), 0);  // waits for tag 0x51
    starpu_task_set_implementation(t, 2);
    starpu_task_set_implementation(t, 7);  // refused (logged): no change
    starpu_tag_notify_from_apps(tag);
    ASSERT_EQ(starpu_task_wait(t), 0);
    EXPECT_EQ(starpu_task_get_implementation(t), 2u);
    starpu_task_destroy(t);
    starpu_shutdown();
    EXPECT_EQ(g_ran[2].load(), 1);
    EXPECT_EQ(g_ran[0].load() + g_ran[1].load(), 0);
    EXPECT_EQ(g_reported_wrong.load(), 0);
}

}  // namespace

namespace {

void nothing_fn(void* /*buffers*/[], void* /*arg*/) { spin_us(200); }

TEST_F(Impl, NreadyCountsTasksWhoseDependenciesAreMetUntilTheyEnd) {
    ASSERT_EQ(start("eager", 2), 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = nothing_fn;
    cl.nbuffers = 0;
    EXPECT_EQ(starpu_task_nready(), 0);
    starpu_pause();  // ready tasks stay queued
    for (int i = 0; i < 5; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    }
    // three more that wait for a tag: submitted, not ready
    starpu_tag_t gate = 0x77;
    for (int i = 0; i < 3; ++i) {
        starpu_task* t = starpu_task_create();
        t->cl = &cl;
        t->use_tag = 1;
        t->tag_id = 0x100 + static_cast<starpu_tag_t>(i);
        starpu_tag_declare_deps_array(t->tag_id, 1, &gate);
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    EXPECT_EQ(starpu_task_nready(), 5);
    EXPECT_EQ(starpu_task_nsubmitted(), 8);
    starpu_resume();
    ASSERT_EQ(starpu_task_wait_for_no_ready(), 0);
    EXPECT_EQ(starpu_task_nready(), 0);
    EXPECT_EQ(starpu_task_nsubmitted(), 3) << "the tagged tasks are still waiting";
    starpu_tag_notify_from_apps(gate);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(starpu_task_nready(), 0);
    EXPECT_EQ(starpu_task_wait_for_no_ready(), 0) << "nothing ready: returns at once";
    starpu_shutdown();
}

}  // namespace
