// heteroprio set up by the application: the core policy driven directly with a configuration
// (buckets in a configured order, two architectures with a slow factor), the checks StarPU
// asserts at initialisation, and the C API (starpu_heteroprio_set_* from
// starpu_conf::sched_policy_init): refused configurations, and misuse stopping the program.

#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu/1.3/starpu_heteroprio.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/heteroprio.hpp"
#include "taskgraph/policy.hpp"

namespace mpc::test {
namespace {

struct fake_tasks {
    std::vector<std::unique_ptr<tg::task>> ts;
    tg::task* make(int priority) {
        ts.push_back(std::make_unique<tg::task>());
        ts.back()->priority = priority;
        return ts.back().get();
    }
};

/// arch a walks `order`.
void map(tg::heteroprio_config& c, int a, const std::vector<int>& order) {
    c.nprios[a] = static_cast<int>(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        c.mapping[a][i] = static_cast<std::uint8_t>(order[i]);
        c.mapped[a][i] = true;
        c.archs[order[i]] |= 1u << a;
    }
}

std::unique_ptr<tg::policy> make(const tg::heteroprio_config& c, int nworkers) {
    tg::policy_context ctx;
    ctx.nworkers = nworkers;
    ctx.heteroprio = &c;
    return tg::make_heteroprio(ctx);
}

std::string why_not(const tg::heteroprio_config& c, int nworkers) {
    char why[256] = "";
    return c.check(nworkers, why, sizeof why) ? std::string("accepted") : std::string(why);
}

TEST(HeteroprioCore, BucketsInTheConfiguredOrderFifoWithin) {
    auto c = std::make_unique<tg::heteroprio_config>();
    map(*c, 0, {7, 2, 9, 0});
    ASSERT_EQ(why_not(*c, 2), "accepted");
    auto p = make(*c, 2);
    fake_tasks f;
    std::vector<tg::task*> t = {f.make(0), f.make(9), f.make(2), f.make(7), f.make(2), f.make(0), f.make(7)};
    for (tg::task* x : t) {
        EXPECT_EQ(p->push(x), -1);
    }
    std::vector<tg::task*> expect = {t[3], t[6], t[2], t[4], t[1], t[0], t[5]};
    for (std::size_t i = 0; i < expect.size(); ++i) {
        EXPECT_EQ(p->pop(static_cast<int>(i % 2)), expect[i]) << i;
    }
    EXPECT_EQ(p->pop(0), nullptr);
    EXPECT_FALSE(p->may_have_work(1));
}

// Worker 0 is a CPU, worker 1 of architecture 1 (a GPU, as StarPU's CUDA index). Bucket 3 is
// both's, architecture 1 is the faster there and the CPU twice slower: the CPU takes from it
// only while it holds at least 2 tasks per worker of architecture 1.
TEST(HeteroprioCore, SlowFactorLeavesTheLastTasksToTheFasterArchitecture) {
    auto c = std::make_unique<tg::heteroprio_config>();
    map(*c, 0, {3, 1});
    map(*c, 1, {3});
    c->faster[3] = 1;
    c->slow[3][0] = 2.0f;
    c->worker_arch[1] = 1;
    ASSERT_EQ(why_not(*c, 2), "accepted");
    auto p = make(*c, 2);
    fake_tasks f;
    std::vector<tg::task*> t = {f.make(3), f.make(3), f.make(3), f.make(1)};
    for (tg::task* x : t) {
        p->push(x);
    }
    EXPECT_EQ(p->pop(0), t[0]) << "3 tasks for 1 fast worker: 3 >= 2";
    EXPECT_EQ(p->pop(0), t[1]) << "2 >= 2";
    EXPECT_EQ(p->pop(0), t[3]) << "1 < 2: the CPU leaves bucket 3 and takes its next bucket";
    EXPECT_EQ(p->pop(0), nullptr);
    EXPECT_EQ(p->pop(1), t[2]) << "the faster architecture always takes";
    EXPECT_EQ(p->pop(1), nullptr) << "bucket 1 is not architecture 1's";
}

TEST(HeteroprioCore, ChecksWhatStarPUAsserts) {
    auto c = std::make_unique<tg::heteroprio_config>();
    EXPECT_NE(why_not(*c, 1).find("the CPU workers take no bucket"), std::string::npos) << why_not(*c, 1);
    map(*c, 0, {4, 5});
    c->mapping[0][6] = 8;  // a mapping beyond nb_prios (2)
    c->mapped[0][6] = true;
    c->archs[8] |= 1;
    EXPECT_NE(why_not(*c, 1).find("bucket 8 is given to CPU by starpu_heteroprio_set_mapping(CPU, 6, 8)"),
              std::string::npos)
        << why_not(*c, 1);
    c->archs[8] = 0;
    c->mapped[0][6] = false;
    c->nprios[0] = 3;  // priority 2 never mapped: bucket 0, which is not the CPUs'
    EXPECT_NE(why_not(*c, 1).find("priority 2 of CPU has no bucket"), std::string::npos) << why_not(*c, 1);
    c->nprios[0] = 2;
    c->slow[5][0] = -1;
    EXPECT_NE(why_not(*c, 1).find("slow factor"), std::string::npos) << why_not(*c, 1);
    c->slow[5][0] = 0;
    EXPECT_EQ(why_not(*c, 1), "accepted");
    c->nprios[1] = 1;  // another architecture without workers walking bucket 0 (not its own)
    EXPECT_NE(why_not(*c, 1).find("priority 0 of CUDA has no bucket"), std::string::npos) << why_not(*c, 1);
}

// ---- the C API -------------------------------------------------------------------------------

int start(void (*init)(unsigned), int ncpus = 1) {
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.sched_policy_name = "heteroprio";
    conf.precedence_over_environment_variables = 1;
    conf.sched_policy_init = init;
    return starpu_init(&conf);
}

void two_buckets(unsigned ctx) {
    starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_IDX, 2);
    starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, 0, 5);
    starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, 1, 3);
}

TEST(HeteroprioAPI, RefusedConfigurations) {
    EXPECT_EQ(start([](unsigned) {}), -EINVAL) << "no bucket for the CPUs";
    EXPECT_EQ(start([](unsigned ctx) {
                  two_buckets(ctx);
                  starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, 2, 8);  // beyond nb_prios
              }),
              -EINVAL);
    EXPECT_FALSE(starpu_is_initialized());
    EXPECT_FALSE(mpc::sched::initialized()) << "a refused start stops the engine it started";
    ASSERT_EQ(start(two_buckets, 2), 0) << "a good one after the refusals";
    EXPECT_EQ(starpu_sched_get_min_priority(), 0);
    EXPECT_EQ(starpu_sched_get_max_priority(), 0);
    static int x;
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) { ++x; };
    cl.nbuffers = 0;
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, STARPU_PRIORITY, i % 2 ? 5 : 3, 0), 0);
    }
    starpu_task_wait_for_all();
    starpu_shutdown();
    EXPECT_EQ(x, 10);
    EXPECT_EQ(starpu_sched_get_max_priority(), STARPU_MAX_PRIO);
}

using HeteroprioDeath = ::testing::Test;

TEST(HeteroprioDeath, MisuseStopsTheProgramNamingTheCall) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(starpu_heteroprio_set_nb_prios(0, STARPU_CPU_IDX, 2),
                 "starpu_heteroprio_set_nb_prios: called outside the heteroprio policy's initialisation");
    EXPECT_DEATH(start([](unsigned ctx) { starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_IDX, 100); }),
                 "starpu_heteroprio_set_nb_prios: the number of priorities 100 is not below STARPU_HETEROPRIO_MAX_PRIO");
    EXPECT_DEATH(start([](unsigned ctx) { starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, 0, 100); }),
                 "starpu_heteroprio_set_mapping: bucket 100 is not below");
    EXPECT_DEATH(start([](unsigned ctx) { starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, 120, 1); }),
                 "starpu_heteroprio_set_mapping: priority 120 is not below");
    EXPECT_DEATH(start([](unsigned) { starpu_heteroprio_set_faster_arch(1, STARPU_CPU_IDX, 1); }),
                 "starpu_heteroprio_set_faster_arch: scheduling context 1 does not exist");
    EXPECT_DEATH(start([](unsigned ctx) {
                     starpu_heteroprio_set_arch_slow_factor(ctx, static_cast<starpu_heteroprio_types>(7), 1, 1.0f);
                 }),
                 "starpu_heteroprio_set_arch_slow_factor: architecture index 7");
    EXPECT_DEATH(start([](unsigned ctx) { starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_IDX, 1, -2.0f); }),
                 "starpu_heteroprio_set_arch_slow_factor: slow factor -2 is not a finite number >= 0");
    // A task whose priority is no bucket of the CPUs (4: between the mapped 3 and 5).
    EXPECT_DEATH(
        {
            ASSERT_EQ(start(two_buckets), 0);
            starpu_codelet cl{};
            cl.cpu_funcs[0] = [](void**, void*) {};
            cl.nbuffers = 0;
            cl.name = "unmapped";
            starpu_task_insert(&cl, STARPU_PRIORITY, 4, 0);
            starpu_task_wait_for_all();
        },
        "heteroprio: task unmapped has priority 4, which is no bucket any worker takes");
}

}  // namespace
}  // namespace mpc::test
