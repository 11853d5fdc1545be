// StarPU 1.3's asynchronous partitioning through the C API (taskgraph/partition.cpp,
// starpu_filters.cpp): several plans on one handle, submitted and unpartitioned in turn or
// switched implicitly by the tasks that name a child or the parent (also through nested plans),
// read-only plans read concurrently with the parent, the upgrade to read-write, the
// read-only unpartition, the sequential-consistency variants, codelets' specific nodes, and
// misuse stopping the program with a message. Each test checks the data's values after tasks
// on the parent and on children interleaved; the first task of each sleeps, so that a task
// ordered wrongly would see stale values.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "starpu_fixture.hpp"

namespace {

using StarPUPlans = mpc::test::starpu_two_workers;

constexpr unsigned nx = 12;  // contiguous dimension
constexpr unsigned ny = 8;
constexpr unsigned parts = 4;

// Every element of a matrix (or of a piece of one): v = v * mul + add. The multiplication makes
// the order of two such tasks on the same element matter.
struct affine {
    int mul;
    int add;
    int sleep_ms;
};

void affine_fn(void* buffers[], void* arg) {
    const auto* a = static_cast<const affine*>(arg);
    if (a->sleep_ms > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(a->sleep_ms));
    }
    auto* p = reinterpret_cast<int*>(STARPU_MATRIX_GET_PTR(buffers[0]));
    const unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
    for (unsigned y = 0; y < STARPU_MATRIX_GET_NY(buffers[0]); ++y) {
        for (unsigned x = 0; x < STARPU_MATRIX_GET_NX(buffers[0]); ++x) {
            p[y * ld + x] = p[y * ld + x] * a->mul + a->add;
        }
    }
}

starpu_codelet affine_cl() {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = affine_fn;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    cl.name = "affine";
    return cl;
}

struct matrix_fixture {
    std::vector<int> m = std::vector<int>(nx * ny);
    starpu_data_handle_t h{};
    starpu_data_handle_t vert[parts]{};   // starpu_matrix_filter_block: slices along x
    starpu_data_handle_t horiz[parts]{};  // starpu_matrix_filter_vertical_block: slices along y
    starpu_data_filter fv{};
    starpu_data_filter fh{};

    matrix_fixture() {
        for (unsigned i = 0; i < nx * ny; ++i) {
            m[i] = static_cast<int>(i);
        }
        starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(m.data()), nx, nx, ny,
                                    sizeof(int));
        fv.filter_func = starpu_matrix_filter_block;
        fv.nchildren = parts;
        fh.filter_func = starpu_matrix_filter_vertical_block;
        fh.nchildren = parts;
        starpu_data_partition_plan(h, &fv, vert);
        starpu_data_partition_plan(h, &fh, horiz);
    }
    void done() {
        starpu_data_partition_clean(h, parts, vert);
        starpu_data_partition_clean(h, parts, horiz);
        starpu_data_unregister(h);
    }
};

int insert(starpu_codelet* cl, starpu_data_handle_t h, affine* a) {
    return starpu_task_insert(cl, STARPU_RW, h, STARPU_CL_ARGS_NFREE, a, sizeof *a, 0);
}

// The sequence both explicit and implicit tests run: the parent, the vertical pieces, the
// parent, the horizontal pieces, the parent; `explicit_switches` submits the plans itself.
void interleave(matrix_fixture& f, bool explicit_switches) {
    starpu_codelet cl = affine_cl();
    static affine slow_plus{1, 1, 30};
    static affine times3{3, 0, 0};
    static affine plus5{1, 5, 0};
    static affine times2_plus1{2, 1, 0};
    static affine minus7{1, -7, 0};
    const std::vector<int> before = f.m;  // nothing is submitted on it now
    ASSERT_EQ(insert(&cl, f.h, &slow_plus), 0);
    if (explicit_switches) {
        starpu_data_partition_submit(f.h, parts, f.vert);
    }
    for (auto c : f.vert) {
        ASSERT_EQ(insert(&cl, c, &times3), 0);
    }
    if (explicit_switches) {
        starpu_data_unpartition_submit(f.h, parts, f.vert, STARPU_MAIN_RAM);
    }
    ASSERT_EQ(insert(&cl, f.h, &plus5), 0);
    if (explicit_switches) {
        starpu_data_partition_submit(f.h, parts, f.horiz);
    }
    for (auto c : f.horiz) {
        ASSERT_EQ(insert(&cl, c, &times2_plus1), 0);
    }
    if (explicit_switches) {
        starpu_data_unpartition_submit(f.h, parts, f.horiz, STARPU_MAIN_RAM);
    }
    ASSERT_EQ(insert(&cl, f.h, &minus7), 0);
    ASSERT_EQ(starpu_data_acquire(f.h, STARPU_R), 0);
    for (unsigned i = 0; i < nx * ny; ++i) {
        const int want = (((before[i] + 1) * 3 + 5) * 2 + 1) - 7;
        ASSERT_EQ(f.m[i], want) << "element " << i;
    }
    starpu_data_release(f.h);
}

TEST_F(StarPUPlans, TwoPlansSubmittedInTurn) {
    matrix_fixture f;
    interleave(f, true);
    f.done();
}

TEST_F(StarPUPlans, TwoPlansSwitchedImplicitly) {
    matrix_fixture f;
    interleave(f, false);
    // Twice more: from the horizontal plan (on after the last child task) back to the parent.
    interleave(f, false);
    f.done();
}

TEST_F(StarPUPlans, ImplicitFromOnePlanToTheOther) {
    // Vertical pieces then horizontal pieces with no task on the parent between them: the
    // vertical plan goes off and the horizontal one on by themselves.
    matrix_fixture f;
    starpu_codelet cl = affine_cl();
    static affine slow_plus{1, 2, 30};
    static affine times3{3, 0, 0};
    static affine times5{5, 1, 0};
    for (auto c : f.vert) {
        ASSERT_EQ(insert(&cl, c, &slow_plus), 0);
        ASSERT_EQ(insert(&cl, c, &times3), 0);
    }
    for (auto c : f.horiz) {
        ASSERT_EQ(insert(&cl, c, &times5), 0);
    }
    // The acquisition of the parent unpartitions too.
    ASSERT_EQ(starpu_data_acquire(f.h, STARPU_R), 0);
    for (unsigned i = 0; i < nx * ny; ++i) {
        ASSERT_EQ(f.m[i], (static_cast<int>(i) + 2) * 3 * 5 + 1) << i;
    }
    starpu_data_release(f.h);
    f.done();
}

// Three levels of plans (frecursive): a task on a grandchild's piece switches its ancestors'
// plans on; a task on a child then switches the grandchildren's off.
TEST_F(StarPUPlans, NestedPlansImplicit) {
    std::vector<int> v(64);
    for (int i = 0; i < 64; ++i) {
        v[static_cast<std::size_t>(i)] = i;
    }
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 64, sizeof(int));
    starpu_data_filter f{};
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = 2;
    starpu_data_handle_t l1[2], l2[2][2], l3[2][2][2];
    starpu_data_partition_plan(h, &f, l1);
    for (int i = 0; i < 2; ++i) {
        starpu_data_partition_plan(l1[i], &f, l2[i]);
        for (int j = 0; j < 2; ++j) {
            starpu_data_partition_plan(l2[i][j], &f, l3[i][j]);
        }
    }
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void* b[], void* arg) {
        const auto* a = static_cast<const affine*>(arg);
        if (a->sleep_ms > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(a->sleep_ms));
        }
        auto* p = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(b[0]));
        for (unsigned k = 0; k < STARPU_VECTOR_GET_NX(b[0]); ++k) {
            p[k] = p[k] * a->mul + a->add;
        }
    };
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    static affine slow{1, 1, 30};
    static affine times2{2, 0, 0};
    static affine plus3{1, 3, 0};
    static affine times5{5, 0, 0};
    ASSERT_EQ(insert(&cl, h, &slow), 0);
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
            for (int k = 0; k < 2; ++k) {
                ASSERT_EQ(insert(&cl, l3[i][j][k], &times2), 0);
            }
        }
    }
    ASSERT_EQ(insert(&cl, l1[0], &plus3), 0);  // l1[0]'s plan goes off (and its children's)
    for (int j = 0; j < 2; ++j) {
        ASSERT_EQ(insert(&cl, l2[1][j], &times5), 0);  // l2[1][j]'s plans go off
    }
    ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
    for (int i = 0; i < 64; ++i) {
        const int after = (i + 1) * 2;
        ASSERT_EQ(v[static_cast<std::size_t>(i)], i < 32 ? after + 3 : after * 5) << i;
    }
    starpu_data_release(h);
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
            starpu_data_partition_clean(l2[i][j], 2, l3[i][j]);
        }
        starpu_data_partition_clean(l1[i], 2, l2[i]);
    }
    starpu_data_partition_clean(h, 2, l1);
    starpu_data_unregister(h);
}

// Two reading tasks that meet: each arrives and waits (up to 5 s) for the other; `met` counts
// those that saw the other, so 2 means they ran at the same time.
struct rendezvous {
    std::atomic<int> arrived{0};
    std::atomic<int> met{0};
    std::atomic<long> sum{0};
};

void meet_fn(void* buffers[], void* arg) {
    auto* r = static_cast<rendezvous*>(arg);
    r->arrived.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (r->arrived.load() < 2 && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    if (r->arrived.load() >= 2) {
        r->met.fetch_add(1);
    }
    const auto* p = reinterpret_cast<const int*>(STARPU_MATRIX_GET_PTR(buffers[0]));
    const unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
    long s = 0;
    for (unsigned y = 0; y < STARPU_MATRIX_GET_NY(buffers[0]); ++y) {
        for (unsigned x = 0; x < STARPU_MATRIX_GET_NX(buffers[0]); ++x) {
            s += p[y * ld + x];
        }
    }
    r->sum.fetch_add(s);
}

starpu_codelet meet_cl() {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = meet_fn;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    cl.name = "meet";
    return cl;
}

long sum_of(const std::vector<int>& m, int mul, int add) {
    long s = 0;
    for (int x : m) {
        s += static_cast<long>(x) * mul + add;
    }
    return s;
}

TEST_F(StarPUPlans, ReadOnlyPlansReadWithTheParent) {
    matrix_fixture f;
    starpu_codelet cl = affine_cl();
    starpu_codelet meet = meet_cl();
    static affine slow_times2{2, 0, 30};
    ASSERT_EQ(insert(&cl, f.h, &slow_times2), 0);
    // Both plans read-only at once; a reader of the parent meets a reader of each piece.
    starpu_data_partition_readonly_submit(f.h, parts, f.vert);
    starpu_data_partition_readonly_submit(f.h, parts, f.horiz);
    // One pair at a time: with two workers, two readers that may run together do.
    std::vector<rendezvous> rv(parts);
    std::vector<rendezvous> rh(parts);
    for (unsigned i = 0; i < parts; ++i) {
        ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.h, STARPU_CL_ARGS_NFREE, &rv[i], sizeof rv[i], 0), 0);
        ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.vert[i], STARPU_CL_ARGS_NFREE, &rv[i], sizeof rv[i], 0), 0);
        ASSERT_EQ(starpu_task_wait_for_all(), 0);
        ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.horiz[i], STARPU_CL_ARGS_NFREE, &rh[i], sizeof rh[i], 0), 0);
        ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.h, STARPU_CL_ARGS_NFREE, &rh[i], sizeof rh[i], 0), 0);
        ASSERT_EQ(starpu_task_wait_for_all(), 0);
    }
    const long whole = sum_of(f.m, 1, 0);
    long vpieces = 0;
    long hpieces = 0;
    for (unsigned i = 0; i < parts; ++i) {
        EXPECT_EQ(rv[i].met.load(), 2) << "a reader of the parent and of vertical piece " << i << " did not meet";
        EXPECT_EQ(rh[i].met.load(), 2) << "a reader of the parent and of horizontal piece " << i << " did not meet";
        vpieces += rv[i].sum.load() - whole;
        hpieces += rh[i].sum.load() - whole;
    }
    EXPECT_EQ(vpieces, whole) << "the vertical pieces' readers saw the doubled values";
    EXPECT_EQ(hpieces, whole) << "the horizontal pieces' readers saw the doubled values";
    for (int i = 0; i < static_cast<int>(nx * ny); ++i) {
        ASSERT_EQ(f.m[static_cast<std::size_t>(i)], 2 * i);
    }
    // Upgrade: only one read-only plan may be on, then it becomes read-write.
    starpu_data_unpartition_submit(f.h, parts, f.horiz, STARPU_MAIN_RAM);
    starpu_data_partition_readwrite_upgrade_submit(f.h, parts, f.vert);
    static affine plus1{1, 1, 0};
    for (auto c : f.vert) {
        ASSERT_EQ(insert(&cl, c, &plus1), 0);
    }
    // Back read-only: the parent and the pieces read concurrently, the writes seen by both.
    starpu_data_unpartition_readonly_submit(f.h, parts, f.vert, STARPU_MAIN_RAM);
    rendezvous r;
    ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.vert[1], STARPU_CL_ARGS_NFREE, &r, sizeof r, 0), 0);
    ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.h, STARPU_CL_ARGS_NFREE, &r, sizeof r, 0), 0);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(r.met.load(), 2) << "after unpartition_readonly, a piece and the parent are read concurrently";
    long piece1 = 0;  // vertical piece 1: x in [3, 6) of every row
    for (unsigned y = 0; y < ny; ++y) {
        for (unsigned x = nx / parts; x < 2 * nx / parts; ++x) {
            piece1 += f.m[y * nx + x];
        }
    }
    EXPECT_EQ(r.sum.load(), sum_of(f.m, 1, 0) + piece1) << "both saw the pieces' writes";
    starpu_data_unpartition_submit(f.h, parts, f.vert, STARPU_MAIN_RAM);
    static affine times3{3, 0, 0};
    ASSERT_EQ(insert(&cl, f.h, &times3), 0);
    ASSERT_EQ(starpu_data_acquire(f.h, STARPU_R), 0);
    for (int i = 0; i < static_cast<int>(nx * ny); ++i) {
        ASSERT_EQ(f.m[static_cast<std::size_t>(i)], (2 * i + 1) * 3) << i;
    }
    starpu_data_release(f.h);
    f.done();
}

TEST_F(StarPUPlans, ImplicitReadOnlyKeepsTheParentReadable) {
    matrix_fixture f;
    starpu_codelet cl = affine_cl();
    starpu_codelet meet = meet_cl();
    static affine slow_plus4{1, 4, 30};
    ASSERT_EQ(insert(&cl, f.h, &slow_plus4), 0);
    // Reading a piece switches its plan on read-only: a reader of the parent then needs no
    // unpartition (which would order it after the piece's reader: they could not meet).
    rendezvous r;
    ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.horiz[2], STARPU_CL_ARGS_NFREE, &r, sizeof r, 0), 0);
    ASSERT_EQ(starpu_task_insert(&meet, STARPU_R, f.h, STARPU_CL_ARGS_NFREE, &r, sizeof r, 0), 0);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(r.met.load(), 2);
    // Writing a piece of the read-only plan upgrades it; writing the parent then unpartitions.
    static affine times2{2, 0, 0};
    for (auto c : f.horiz) {
        ASSERT_EQ(insert(&cl, c, &times2), 0);
    }
    static affine minus1{1, -1, 0};
    ASSERT_EQ(insert(&cl, f.h, &minus1), 0);
    ASSERT_EQ(starpu_data_acquire(f.h, STARPU_R), 0);
    for (int i = 0; i < static_cast<int>(nx * ny); ++i) {
        ASSERT_EQ(f.m[static_cast<std::size_t>(i)], (i + 4) * 2 - 1) << i;
    }
    starpu_data_release(f.h);
    f.done();
}

TEST_F(StarPUPlans, SequentialConsistencyVariants) {
    matrix_fixture f;
    // Without the parent's sequential consistency the switch does not wait for the parent's
    // reader: a piece's task runs beside it and releases it (ordered after it, the reader
    // would wait 5 s for nothing).
    std::atomic<int> go{0};
    starpu_codelet wait_go{};
    wait_go.cpu_funcs[0] = [](void*[], void* arg) {
        auto* g = static_cast<std::atomic<int>*>(arg);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (g->load() == 0 && std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        g->fetch_add(10);
    };
    wait_go.nbuffers = 1;
    wait_go.modes[0] = STARPU_R;
    starpu_codelet set_go{};
    set_go.cpu_funcs[0] = [](void*[], void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); };
    set_go.nbuffers = 1;
    set_go.modes[0] = STARPU_R;
    ASSERT_EQ(starpu_task_insert(&wait_go, STARPU_R, f.h, STARPU_CL_ARGS_NFREE, &go, sizeof go, 0), 0);
    starpu_data_partition_submit_sequential_consistency(f.h, parts, f.vert, 0);
    ASSERT_EQ(starpu_task_insert(&set_go, STARPU_R, f.vert[0], STARPU_CL_ARGS_NFREE, &go, sizeof go, 0), 0);
    std::atomic<int> called{0};
    starpu_data_unpartition_submit_sequential_consistency_cb(
        f.h, parts, f.vert, STARPU_MAIN_RAM, 1, [](void* a) { static_cast<std::atomic<int>*>(a)->fetch_add(1); },
        &called);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(go.load(), 11) << "the piece's task ran after the parent's reader: the switch waited for it";
    EXPECT_EQ(called.load(), 1) << "the unpartition's callback";
    starpu_data_partition_submit(f.h, parts, f.vert);
    starpu_data_unpartition_submit_sequential_consistency(f.h, parts, f.vert, STARPU_MAIN_RAM, 1);
    f.done();
}

TEST_F(StarPUPlans, UnpartitionSubmitRecursive) {
    matrix_fixture f;
    starpu_codelet cl = affine_cl();
    static affine plus2{1, 2, 20};
    for (auto c : f.vert) {
        ASSERT_EQ(insert(&cl, c, &plus2), 0);
    }
    starpu_data_unpartition_submit_r(f.h, STARPU_MAIN_RAM);
    // The parent is whole again: a task on it follows the pieces' tasks.
    static affine times3{3, 0, 0};
    ASSERT_EQ(insert(&cl, f.h, &times3), 0);
    ASSERT_EQ(starpu_data_acquire(f.h, STARPU_R), 0);
    for (int i = 0; i < static_cast<int>(nx * ny); ++i) {
        ASSERT_EQ(f.m[static_cast<std::size_t>(i)], (i + 2) * 3) << i;
    }
    starpu_data_release(f.h);
    f.done();
}

TEST_F(StarPUPlans, SpecificNodes) {
    matrix_fixture f;
    starpu_codelet cl = affine_cl();
    cl.specific_nodes = 1;
    static affine plus1{1, 1, 0};
    for (int node : {STARPU_MAIN_RAM, STARPU_SPECIFIC_NODE_LOCAL, STARPU_SPECIFIC_NODE_CPU, STARPU_SPECIFIC_NODE_SLOW}) {
        cl.nodes[0] = node;
        ASSERT_EQ(insert(&cl, f.h, &plus1), 0) << "node " << node << " is main memory";
    }
    int dyn = STARPU_MAIN_RAM;
    cl.dyn_nodes = &dyn;
    cl.nodes[0] = 5;  // dyn_nodes wins
    ASSERT_EQ(insert(&cl, f.h, &plus1), 0);
    cl.dyn_nodes = nullptr;
    EXPECT_EQ(insert(&cl, f.h, &plus1), -EINVAL) << "node 5 does not exist";
    cl.nodes[0] = STARPU_SPECIFIC_NODE_FAST;
    EXPECT_EQ(insert(&cl, f.h, &plus1), -EINVAL) << "StarPU 1.3.10 refuses FAST too";
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(f.m[7], 7 + 5);
    f.done();
}

// ---- misuse: StarPU asserts; MPC stops with a message ----------------------------------------

TEST(StarPUPlansDeath, UnpartitionNotSubmitted) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            matrix_fixture f;
            starpu_data_unpartition_submit(f.h, parts, f.vert, STARPU_MAIN_RAM);
        },
        "starpu_data_unpartition_submit: plan not submitted");
}

TEST(StarPUPlansDeath, TwoReadWritePlansAtOnce) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            matrix_fixture f;
            starpu_data_partition_submit(f.h, parts, f.vert);
            starpu_data_partition_submit(f.h, parts, f.horiz);
        },
        "starpu_data_partition_submit: another plan is on");
}

TEST(StarPUPlansDeath, ReadOnlyBesideReadWrite) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            matrix_fixture f;
            starpu_data_partition_submit(f.h, parts, f.vert);
            starpu_data_partition_readonly_submit(f.h, parts, f.horiz);
        },
        "starpu_data_partition_readonly_submit: another plan is on");
}

TEST(StarPUPlansDeath, UpgradeBesideAnotherReadOnlyPlan) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            matrix_fixture f;
            starpu_data_partition_readonly_submit(f.h, parts, f.vert);
            starpu_data_partition_readonly_submit(f.h, parts, f.horiz);
            starpu_data_partition_readwrite_upgrade_submit(f.h, parts, f.vert);
        },
        "starpu_data_partition_readwrite_upgrade_submit: cannot upgrade");
}

TEST(StarPUPlansDeath, ChildrenOfAnotherPlan) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            matrix_fixture f;
            starpu_data_handle_t mixed[parts];
            for (unsigned i = 0; i < parts; ++i) {
                mixed[i] = i == 1 ? f.horiz[i] : f.vert[i];
            }
            starpu_data_partition_submit(f.h, parts, mixed);
        },
        "starpu_data_partition_submit: children.* are not the handles starpu_data_partition_plan gave");
}

TEST(StarPUPlansDeath, SynchronousPartitionBesidePlans) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            matrix_fixture f;
            starpu_data_partition(f.h, &f.fv);
        },
        "starpu_data_partition: handle partitioned already");
}

TEST_F(StarPUPlans, SynchronousPartitionRefusesTheParent) {
    // A synchronous partition's children switch only by starpu_data_unpartition: a task on
    // the parent meanwhile is refused (StarPU asserts), the children's values stay.
    std::vector<int> v(16, 1);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 16, sizeof(int));
    starpu_data_filter f{};
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = 2;
    starpu_data_partition(h, &f);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void*[], void*) {};
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_R, h, 0), -EINVAL);
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_R, h, 0), 0);
    starpu_data_unregister(h);
}

}  // namespace
