// Modular schedulers built through StarPU's C API (starpu_sched_component.h,
// taskgraph/starpu_component.cpp): the bitmaps; trees from starpu_sched_component_initialize_simple_scheduler
// with a perfmodel selector, implementation choosers, work stealing below a decision; and misuse:
// NULL components, an edge connected twice, a worker given children, a tree without worker
// leaves, a root that refuses tasks, a second tree for the context, bad worker ids.
#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu/1.3/starpu_sched_component.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "starpu_fixture.hpp"

namespace {

// ---- bitmaps ------------------------------------------------------------------------------

TEST(Bitmap, SetsAndWalks) {
    starpu_bitmap* a = starpu_bitmap_create();
    starpu_bitmap* b = starpu_bitmap_create();
    EXPECT_EQ(starpu_bitmap_first(a), -1);
    EXPECT_EQ(starpu_bitmap_last(a), -1);
    EXPECT_EQ(starpu_bitmap_cardinal(a), 0);
    for (int e : {3, 64, 65, 200}) {
        starpu_bitmap_set(a, e);
    }
    starpu_bitmap_set(a, -1);                  // out of range: ignored
    starpu_bitmap_set(a, STARPU_NMAXWORKERS);  // likewise
    EXPECT_EQ(starpu_bitmap_cardinal(a), 4);
    EXPECT_EQ(starpu_bitmap_first(a), 3);
    EXPECT_EQ(starpu_bitmap_next(a, 3), 64);
    EXPECT_EQ(starpu_bitmap_next(a, 64), 65);
    EXPECT_EQ(starpu_bitmap_next(a, 65), 200);
    EXPECT_EQ(starpu_bitmap_next(a, 200), -1);
    EXPECT_EQ(starpu_bitmap_last(a), 200);
    EXPECT_TRUE(starpu_bitmap_has_next(a, 100));
    EXPECT_FALSE(starpu_bitmap_has_next(a, 200));
    EXPECT_EQ(starpu_bitmap_get(a, 65), 1);
    EXPECT_EQ(starpu_bitmap_get(a, 66), 0);
    EXPECT_EQ(starpu_bitmap_get(a, -5), 0);
    starpu_bitmap_set(b, 64);
    starpu_bitmap_set(b, 7);
    EXPECT_EQ(starpu_bitmap_and_get(a, b, 64), 1);
    EXPECT_EQ(starpu_bitmap_and_get(a, b, 7), 0);
    starpu_bitmap* c = starpu_bitmap_create();
    starpu_bitmap_unset_and(c, a, b);
    EXPECT_EQ(starpu_bitmap_cardinal(c), 1);
    EXPECT_EQ(starpu_bitmap_first(c), 64);
    starpu_bitmap_or(c, b);
    EXPECT_EQ(starpu_bitmap_cardinal(c), 2);
    starpu_bitmap_unset(a, 64);
    EXPECT_EQ(starpu_bitmap_cardinal(a), 3);
    starpu_bitmap_unset_all(a);
    EXPECT_EQ(starpu_bitmap_first(a), -1);
    starpu_bitmap_destroy(a);
    starpu_bitmap_destroy(b);
    starpu_bitmap_destroy(c);
}

// ---- the tree an application policy builds ------------------------------------------------

void (*g_build)(unsigned ctx) = nullptr;

void init_sched(unsigned ctx) { g_build(ctx); }
void deinit_sched(unsigned ctx) { starpu_sched_tree_deinitialize(ctx); }

starpu_sched_policy tree_policy() {
    starpu_sched_policy p{};
    p.init_sched = init_sched;
    p.deinit_sched = deinit_sched;
    p.add_workers = starpu_sched_tree_add_workers;
    p.remove_workers = starpu_sched_tree_remove_workers;
    p.push_task = starpu_sched_tree_push_task;
    p.pop_task = starpu_sched_tree_pop_task;
    p.pre_exec_hook = starpu_sched_component_worker_pre_exec_hook;
    p.post_exec_hook = starpu_sched_component_worker_post_exec_hook;
    p.policy_name = "test-tree";
    return p;
}

int start(starpu_sched_policy* p, int ncpus) { return mpc::test::start_with_policy(p, ncpus); }

void add_one(void** buffers, void*) { *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(buffers[0])) += 1; }

starpu_perfmodel g_model = [] {
    starpu_perfmodel m{};
    m.type = STARPU_HISTORY_BASED;
    m.symbol = "mpc_component_test_add";
    return m;
}();

/// n tasks adding 1 to one variable (a chain), with or without a history model; the sum.
long run_chain(int n, bool model) {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = add_one;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    cl.model = model ? &g_model : nullptr;
    long sum = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&sum), sizeof sum);
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_PRIORITY, i % 3, 0), 0);
    }
    starpu_task_wait_for_all();
    starpu_data_unregister(h);
    return sum;
}

class Trees : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        const char* dir = std::getenv("TMPDIR");
        model_dir_ = std::string(dir != nullptr ? dir : "/tmp") + "/mpc-component-test-models";
        setenv("STARPU_PERF_MODEL_DIR", model_dir_.c_str(), 1);
    }
    void TearDown() override { unsetenv("STARPU_PERF_MODEL_DIR"); }
    std::string model_dir_;
};

starpu_sched_component* make_mct(starpu_sched_tree* t, void*) { return starpu_sched_component_mct_create(t, nullptr); }
starpu_sched_component* make_heft(starpu_sched_tree* t, void*) { return starpu_sched_component_heft_create(t, nullptr); }

// fifo above, perfmodel selector (eager calibration, eager), mct, fifos below, best
// implementation above each worker: tasks with a model are calibrated, then placed by mct.
TEST_P(Trees, SimpleSchedulerWithModels) {
    g_build = [](unsigned ctx) {
        starpu_sched_component_initialize_simple_scheduler(
            make_mct, nullptr,
            STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_PERFMODEL | STARPU_SCHED_SIMPLE_FIFO_ABOVE |
                STARPU_SCHED_SIMPLE_FIFOS_BELOW | STARPU_SCHED_SIMPLE_IMPL,
            ctx);
    };
    starpu_sched_policy p = tree_policy();
    ASSERT_EQ(start(&p, GetParam()), 0);
    starpu_sched_tree* t = starpu_sched_tree_get(0);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(starpu_sched_ctx_get_policy_data(0), t);
    EXPECT_TRUE(starpu_sched_component_is_fifo(t->root));
    EXPECT_EQ(starpu_bitmap_cardinal(t->root->workers), GetParam());
    EXPECT_EQ(run_chain(120, true), 120);  // calibrated after 10 runs, then mct's
    EXPECT_EQ(run_chain(50, false), 50);   // no model: the eager branch
    starpu_shutdown();
    EXPECT_EQ(starpu_sched_tree_get(0), nullptr);  // destroyed by deinit_sched
}

// heft deciding between memory nodes (one here: forced by DECIDE_ALWAYS), work stealing below.
TEST_P(Trees, HeftOverWorkStealing) {
    g_build = [](unsigned ctx) {
        starpu_sched_component_initialize_simple_scheduler(
            make_heft, nullptr,
            STARPU_SCHED_SIMPLE_DECIDE_MEMNODES | STARPU_SCHED_SIMPLE_DECIDE_ALWAYS | STARPU_SCHED_SIMPLE_FIFOS_BELOW |
                STARPU_SCHED_SIMPLE_WS_BELOW,
            ctx);
    };
    starpu_sched_policy p = tree_policy();
    ASSERT_EQ(start(&p, GetParam()), 0);
    starpu_sched_tree* t = starpu_sched_tree_get(0);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(starpu_sched_component_is_heft(t->root));
    ASSERT_EQ(t->root->nchildren, 1u);
    starpu_sched_component* below = t->root->children[0];
    EXPECT_TRUE(starpu_sched_component_is_fifo(below));
    if (GetParam() > 1) {
        ASSERT_EQ(below->nchildren, 1u);
        EXPECT_TRUE(starpu_sched_component_is_work_stealing(below->children[0]));
    }
    EXPECT_EQ(run_chain(200, false), 200);
    for (int w = 0; w < GetParam(); ++w) {
        starpu_sched_component* c = starpu_sched_component_worker_get(0, w);
        ASSERT_NE(c, nullptr);
        EXPECT_TRUE(starpu_sched_component_is_worker(c));
        EXPECT_EQ(starpu_sched_component_worker_get_workerid(c), w);
        EXPECT_EQ(c->estimated_load(c), 0.0);
    }
    starpu_shutdown();
}

INSTANTIATE_TEST_SUITE_P(Workers, Trees, ::testing::Values(1, 2));

// ---- misuse -------------------------------------------------------------------------------

TEST(ComponentMisuse, NullComponent) {
    starpu_sched_component* c = starpu_sched_component_create(nullptr, "lonely");
    EXPECT_DEATH(starpu_sched_component_connect(nullptr, c), "starpu_sched_component_connect: NULL component");
    EXPECT_DEATH(starpu_sched_component_connect(c, nullptr), "starpu_sched_component_connect: NULL component");
    EXPECT_DEATH(starpu_sched_component_connect(c, c), "cannot be its own child");
    EXPECT_DEATH(starpu_sched_tree_update_workers(nullptr), "NULL component or tree");
    starpu_sched_component_destroy(nullptr);  // nothing, as free(NULL)
    starpu_sched_component_destroy(c);
}

TEST(ComponentMisuse, ConnectedTwice) {
    starpu_sched_component* p = starpu_sched_component_eager_create(nullptr, nullptr);
    starpu_sched_component* c = starpu_sched_component_fifo_create(nullptr, nullptr);
    starpu_sched_component_connect(p, c);
    ::testing::internal::CaptureStderr();
    starpu_sched_component_connect(p, c);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("fifo is already a child of eager"), std::string::npos) << err;
    EXPECT_EQ(p->nchildren, 1u);
    EXPECT_EQ(c->nparents, 1u);
    starpu_sched_component_destroy_rec(p);  // the fifo with it
}

// Several decisions: userchoice sends a task to the decision its sched_data names; one out of
// range, no decision at all, or decisions deciding differently stop the program (StarPU asserts).
TEST(ComponentMisuse, SeveralDecisions) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(starpu_sched_component_initialize_simple_schedulers(0, 0), "no decision");
    EXPECT_DEATH(
        {
            g_build = [](unsigned ctx) {
                starpu_sched_component_initialize_simple_schedulers(
                    ctx, 2, starpu_sched_component_eager_create, nullptr,
                    STARPU_SCHED_SIMPLE_DECIDE_WORKERS, starpu_sched_component_eager_create, nullptr,
                    STARPU_SCHED_SIMPLE_DECIDE_MEMNODES);
            };
            starpu_sched_policy p = tree_policy();
            start(&p, 1);
        },
        "the decisions' STARPU_SCHED_SIMPLE_DECIDE_. choices differ");
    EXPECT_DEATH(
        {
            g_build = [](unsigned ctx) {
                const unsigned f = STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_DECIDE_ALWAYS |
                                   STARPU_SCHED_SIMPLE_FIFOS_BELOW;
                starpu_sched_component_initialize_simple_schedulers(ctx, 2, starpu_sched_component_eager_create,
                                                                    nullptr, f, starpu_sched_component_eager_create,
                                                                    nullptr, f);
            };
            starpu_sched_policy p = tree_policy();
            ASSERT_EQ(start(&p, 1), 0);
            starpu_codelet cl{};
            cl.cpu_funcs[0] = [](void**, void*) {};
            cl.nbuffers = 0;
            cl.name = "third_cl";
            starpu_task* t = starpu_task_create();
            t->cl = &cl;
            t->name = "third";
            t->sched_data = reinterpret_cast<void*>(std::uintptr_t{2});
            EXPECT_EQ(starpu_task_submit(t), 0);
            starpu_task_wait_for_all();
        },
        "userchoice component: task third chose child 2 .starpu_task::sched_data. of 2");
}

// Composed components: the links a composed component keeps (its children are the chain's
// bottom's too, but only the composed component is their parent), and the misuse StarPU
// asserts on.
starpu_sched_component* make_fifo(starpu_sched_tree* t, void*) { return starpu_sched_component_fifo_create(t, nullptr); }
starpu_sched_component* make_eager(starpu_sched_tree* t, void*) { return starpu_sched_component_eager_create(t, nullptr); }
starpu_sched_component* make_none(starpu_sched_tree*, void*) { return nullptr; }

TEST(Composed, LinksAndDestruction) {
    starpu_sched_component_composed_recipe* r = starpu_sched_component_composed_recipe_create_singleton(make_fifo, nullptr);
    starpu_sched_component* one = starpu_sched_component_composed_component_create(nullptr, r);
    EXPECT_TRUE(starpu_sched_component_is_fifo(one)) << "a one-pair recipe gives that component";
    starpu_sched_component_destroy(one);
    starpu_sched_component_composed_recipe_add(r, make_eager, nullptr);
    starpu_sched_component* c = starpu_sched_component_composed_component_create(nullptr, r);
    starpu_sched_component_composed_recipe_destroy(r);  // the component does not need it any more
    EXPECT_FALSE(starpu_sched_component_is_fifo(c));
    EXPECT_FALSE(starpu_sched_component_is_eager(c));
    starpu_sched_component* a = starpu_sched_component_fifo_create(nullptr, nullptr);
    starpu_sched_component* b = starpu_sched_component_fifo_create(nullptr, nullptr);
    starpu_sched_component_connect(c, a);
    starpu_sched_component_connect(c, b);
    EXPECT_EQ(c->nchildren, 2u);
    ASSERT_EQ(a->nparents, 1u);
    EXPECT_EQ(a->parents[0], c);
    EXPECT_EQ(c->nparents, 0u);
    starpu_sched_component_destroy(a);  // unlinked from the composed component (and its chain)
    EXPECT_EQ(c->nchildren, 1u);
    EXPECT_EQ(c->children[0], b);
    starpu_sched_component_destroy_rec(c);  // b, then the composed component and its chain
    starpu_sched_component_composed_recipe_destroy(nullptr);
}

TEST(ComponentMisuse, ComposedRecipes) {
    starpu_sched_component_composed_recipe* empty = starpu_sched_component_composed_recipe_create();
    EXPECT_DEATH(starpu_sched_component_composed_component_create(nullptr, empty),
                 "starpu_sched_component_composed_component_create: NULL or empty recipe");
    EXPECT_DEATH(starpu_sched_component_composed_component_create(nullptr, nullptr), "NULL or empty recipe");
    EXPECT_DEATH(starpu_sched_component_composed_recipe_add(empty, nullptr, nullptr),
                 "starpu_sched_component_composed_recipe_add: NULL recipe or create function");
    starpu_sched_component_composed_recipe_add(empty, make_fifo, nullptr);
    starpu_sched_component_composed_recipe_add(empty, make_none, nullptr);
    EXPECT_DEATH(starpu_sched_component_composed_component_create(nullptr, empty), "a create function of the recipe returned NULL");
    starpu_sched_component_composed_recipe_destroy(empty);
}

TEST(ComponentMisuse, WorkerWithChildren) {
    EXPECT_DEATH(
        {
            starpu_sched_policy p{};
            p.push_task = [](starpu_task*) { return 0; };
            if (start(&p, 1) == 0) {
                starpu_sched_component* w = starpu_sched_component_worker_get(0, 0);
                starpu_sched_component_connect(w, starpu_sched_component_fifo_create(nullptr, nullptr));
            }
        },
        "a worker component cannot have children");
}

// A tree whose root has no children: reported at update_workers and add_workers, and at the
// first push; the tasks still run (the runtime keeps what the policy refuses).
TEST(ComponentMisuse, TreeWithoutWorkerLeaves) {
    g_build = [](unsigned ctx) {
        starpu_sched_tree* t = starpu_sched_tree_create(ctx);
        t->root = starpu_sched_component_fifo_create(t, nullptr);
        starpu_sched_tree_update_workers(t);
        starpu_sched_ctx_set_policy_data(ctx, t);
    };
    starpu_sched_policy p = tree_policy();
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(start(&p, 2), 0);
    EXPECT_EQ(run_chain(30, false), 30);
    starpu_shutdown();
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("component fifo has no children"), std::string::npos) << err;
    EXPECT_NE(err.find("worker 0 is not a leaf of the tree"), std::string::npos) << err;
    EXPECT_NE(err.find("worker 1 is not a leaf of the tree"), std::string::npos) << err;
    EXPECT_NE(err.find("reaches no worker"), std::string::npos) << err;
}

// eager directly above the workers keeps no task: the root refuses (StarPU asserts); reported,
// and the tasks still run.
TEST(ComponentMisuse, RootRefuses) {
    g_build = [](unsigned ctx) {
        starpu_sched_tree* t = starpu_sched_tree_create(ctx);
        t->root = starpu_sched_component_eager_create(t, nullptr);
        for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
            starpu_sched_component_connect(t->root, starpu_sched_component_worker_get(ctx, static_cast<int>(w)));
        }
        starpu_sched_tree_update_workers(t);
        starpu_sched_ctx_set_policy_data(ctx, t);
        EXPECT_EQ(starpu_sched_tree_create(ctx), nullptr);  // one tree per context
        EXPECT_EQ(starpu_sched_tree_create(3), nullptr);    // no such context
        EXPECT_EQ(starpu_sched_component_worker_get(ctx, 99), nullptr);
        EXPECT_EQ(starpu_sched_component_worker_get(1, 0), nullptr);
    };
    starpu_sched_policy p = tree_policy();
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(start(&p, 2), 0);
    EXPECT_EQ(run_chain(30, false), 30);
    EXPECT_EQ(starpu_sched_component_worker_get_workerid(starpu_sched_tree_get(0)->root), -1);
    starpu_shutdown();
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("the root component eager refused task"), std::string::npos) << err;
    EXPECT_NE(err.find("already has a tree"), std::string::npos) << err;
    EXPECT_NE(err.find("no worker 99"), std::string::npos) << err;
    EXPECT_NE(err.find("is not a worker component"), std::string::npos) << err;
}

// A worker connected twice under the same queue: the second edge is ignored, the tree works.
TEST(ComponentMisuse, WorkerConnectedTwiceStillRuns) {
    g_build = [](unsigned ctx) {
        starpu_sched_tree* t = starpu_sched_tree_create(ctx);
        t->root = starpu_sched_component_fifo_create(t, nullptr);
        for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
            starpu_sched_component* leaf = starpu_sched_component_worker_get(ctx, static_cast<int>(w));
            starpu_sched_component_connect(t->root, leaf);
            starpu_sched_component_connect(t->root, leaf);
        }
        starpu_sched_tree_update_workers(t);
        starpu_sched_ctx_set_policy_data(ctx, t);
    };
    starpu_sched_policy p = tree_policy();
    ASSERT_EQ(start(&p, 2), 0);
    EXPECT_EQ(starpu_sched_tree_get(0)->root->nchildren, 2u);
    EXPECT_EQ(run_chain(100, false), 100);
    starpu_shutdown();
}

}  // namespace
