// starpu_data_cpy (taskgraph/starpu_data_cpy.cpp) on the built-in interfaces (a matrix into one
// with another leading dimension, a CSR, a vector ordered between tasks, asynchronous with a
// callback) and on a custom interface (its copy method and compare method called), misuse
// (different interfaces or shapes, no copy method, compare refusing); a custom interface's
// footprint method mixed into the data footprint that indexes performance models.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "starpu_fixture.hpp"

namespace {

using StarPUCpy = mpc::test::starpu_two_workers;

TEST_F(StarPUCpy, MatrixIntoAnotherLeadingDimension) {
    std::vector<double> a(4 * 3);  // 3 x 3 used, ld 4
    std::vector<double> b(3 * 3, -1.0);
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<double>(i);
    }
    starpu_data_handle_t ha;
    starpu_data_handle_t hb;
    starpu_matrix_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a.data()), 4, 3, 3, sizeof(double));
    starpu_matrix_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b.data()), 3, 3, 3, sizeof(double));
    ASSERT_EQ(starpu_data_cpy(hb, ha, 0, nullptr, nullptr), 0);
    for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(b[j * 3 + i], a[j * 4 + i]) << i << "," << j;
        }
    }
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
}

TEST_F(StarPUCpy, Csr) {
    // [[1 0 2] [0 3 0]]
    double va[] = {1, 2, 3};
    uint32_t ca[] = {0, 2, 1};
    uint32_t ra[] = {0, 2, 3};
    double vb[3] = {};
    uint32_t cb[3] = {};
    uint32_t rb[3] = {};
    starpu_data_handle_t ha;
    starpu_data_handle_t hb;
    starpu_csr_data_register(&ha, STARPU_MAIN_RAM, 3, 2, reinterpret_cast<uintptr_t>(va), ca, ra, 0, sizeof(double));
    starpu_csr_data_register(&hb, STARPU_MAIN_RAM, 3, 2, reinterpret_cast<uintptr_t>(vb), cb, rb, 0, sizeof(double));
    ASSERT_EQ(starpu_data_cpy(hb, ha, 0, nullptr, nullptr), 0);
    EXPECT_EQ(std::memcmp(va, vb, sizeof va), 0);
    EXPECT_EQ(std::memcmp(ca, cb, sizeof ca), 0);
    EXPECT_EQ(std::memcmp(ra, rb, sizeof ra), 0);
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
}

void scale(void** b, void* arg) {
    int f = 0;
    starpu_codelet_unpack_args(arg, &f);
    auto* v = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(b[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(b[0]); ++i) {
        v[i] *= f;
    }
}

std::atomic<int> g_callbacks{0};

TEST_F(StarPUCpy, OrderedBetweenTasksAsynchronously) {
    std::vector<int> x(100, 1);
    std::vector<int> y(100, 0);
    starpu_data_handle_t hx;
    starpu_data_handle_t hy;
    starpu_vector_data_register(&hx, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(x.data()), 100, sizeof(int));
    starpu_vector_data_register(&hy, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(y.data()), 100, sizeof(int));
    starpu_codelet cl{};
    cl.cpu_funcs[0] = scale;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    int three = 3;
    int five = 5;
    g_callbacks = 0;
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, hx, STARPU_VALUE, &three, sizeof three, 0), 0);  // x = 3
    ASSERT_EQ(starpu_data_cpy(hy, hx, 1, [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); },
                              &g_callbacks),
              0);                                                                                 // y = x after it
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, hx, STARPU_VALUE, &five, sizeof five, 0), 0);   // x = 15 after the copy
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    starpu_data_unregister(hx);
    starpu_data_unregister(hy);
    EXPECT_EQ(g_callbacks.load(), 1);
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(y[i], 3);
        ASSERT_EQ(x[i], 15);
    }
}

TEST_F(StarPUCpy, BuiltinMisuse) {
    int a[4] = {};
    int b[5] = {};
    long v = 0;
    starpu_data_handle_t ha;
    starpu_data_handle_t hb;
    starpu_data_handle_t hv;
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a), 4, sizeof(int));
    starpu_vector_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b), 5, sizeof(int));
    starpu_variable_data_register(&hv, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&v), sizeof v);
    EXPECT_EQ(starpu_data_cpy(hb, ha, 0, nullptr, nullptr), -EINVAL) << "4 and 5 elements";
    EXPECT_EQ(starpu_data_cpy(hv, ha, 0, nullptr, nullptr), -EINVAL) << "a vector into a variable";
    EXPECT_EQ(starpu_data_cpy(nullptr, ha, 0, nullptr, nullptr), -EINVAL);
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
    starpu_data_unregister(hv);
}

// ---- a custom interface: an array of n ints, plus a tag that its footprint method sees -------

struct tagged {
    int* p;
    uint32_t n;
    uint32_t tag;  ///< part of the layout for the footprint, not of the size
};
std::atomic<int> g_copies{0};
std::atomic<int> g_compares{0};
std::atomic<int> g_footprints{0};

tagged* tagged_of(starpu_data_handle_t h) {
    return static_cast<tagged*>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
}

starpu_data_interface_ops make_tagged_ops() {
    starpu_data_interface_ops o{};
    o.register_data_handle = [](starpu_data_handle_t h, unsigned, void* in) { *tagged_of(h) = *static_cast<tagged*>(in); };
    o.allocate_data_on_node = [](void* i, unsigned node) -> starpu_ssize_t {
        auto* x = static_cast<tagged*>(i);
        x->p = reinterpret_cast<int*>(starpu_malloc_on_node(node, x->n * sizeof(int)));
        return x->p != nullptr ? static_cast<starpu_ssize_t>(x->n * sizeof(int)) : -ENOMEM;
    };
    o.free_data_on_node = [](void* i, unsigned node) {
        auto* x = static_cast<tagged*>(i);
        starpu_free_on_node(node, reinterpret_cast<uintptr_t>(x->p), x->n * sizeof(int));
    };
    o.get_size = [](starpu_data_handle_t h) -> size_t { return tagged_of(h)->n * sizeof(int); };
    o.footprint = [](starpu_data_handle_t h) -> uint32_t {
        g_footprints.fetch_add(1);
        return tagged_of(h)->n * 131u + tagged_of(h)->tag;
    };
    o.compare = [](void* a, void* b) -> int {
        g_compares.fetch_add(1);
        return static_cast<tagged*>(a)->n == static_cast<tagged*>(b)->n ? 1 : 0;
    };
    static starpu_data_copy_methods copy = [] {
        starpu_data_copy_methods m{};
        m.ram_to_ram = [](void* src, unsigned, void* dst, unsigned) -> int {
            g_copies.fetch_add(1);
            std::memcpy(static_cast<tagged*>(dst)->p, static_cast<tagged*>(src)->p, static_cast<tagged*>(src)->n * sizeof(int));
            return 0;
        };
        return m;
    }();
    o.copy_methods = &copy;
    o.interfaceid = static_cast<starpu_data_interface_id>(starpu_data_interface_get_next_id());
    o.interface_size = sizeof(tagged);
    return o;
}

TEST_F(StarPUCpy, CustomInterfaceCopyCompareFootprint) {
    static starpu_data_interface_ops ops = make_tagged_ops();
    static starpu_data_interface_ops no_copy = [] {
        starpu_data_interface_ops o = make_tagged_ops();
        o.copy_methods = nullptr;
        return o;
    }();
    g_copies = g_compares = g_footprints = 0;
    std::vector<int> a(8), b(8, 0), c(9, 0), d(8, 0);
    for (int i = 0; i < 8; ++i) {
        a[static_cast<std::size_t>(i)] = i * i;
    }
    tagged ta{a.data(), 8, 1};
    tagged tb{b.data(), 8, 2};
    tagged tc{c.data(), 9, 1};
    tagged td{d.data(), 8, 1};
    starpu_data_handle_t ha, hb, hc, hd;
    starpu_data_register(&ha, STARPU_MAIN_RAM, &ta, &ops);
    starpu_data_register(&hb, STARPU_MAIN_RAM, &tb, &ops);
    starpu_data_register(&hc, STARPU_MAIN_RAM, &tc, &ops);
    starpu_data_register(&hd, STARPU_MAIN_RAM, &td, &no_copy);

    ASSERT_EQ(starpu_data_cpy(hb, ha, 0, nullptr, nullptr), 0);
    EXPECT_EQ(b, a);
    EXPECT_EQ(g_copies.load(), 1);
    EXPECT_GE(g_compares.load(), 1);
    EXPECT_EQ(starpu_data_cpy(hc, ha, 0, nullptr, nullptr), -EINVAL) << "compare says 8 and 9 differ";
    EXPECT_EQ(g_copies.load(), 1);
    EXPECT_EQ(starpu_data_cpy(hd, hd, 0, nullptr, nullptr), 0) << "a handle onto itself: nothing to do";
    starpu_data_handle_t hd2;
    starpu_data_register(&hd2, STARPU_MAIN_RAM, &td, &no_copy);
    EXPECT_EQ(starpu_data_cpy(hd2, hd, 0, nullptr, nullptr), -ENOSYS) << "no copy method";

    // The footprint method counts: same size, different tags, different task footprints.
    auto footprint_of = [](starpu_data_handle_t h) { return mpc::test::read_footprint(h); };
    const int before = g_footprints.load();
    const uint32_t fa = footprint_of(ha);
    const uint32_t fb = footprint_of(hb);
    EXPECT_GT(g_footprints.load(), before) << "the interface's footprint method was not called";
    EXPECT_NE(fa, fb) << "tags 1 and 2 must give different footprints";
    starpu_data_handle_t he;
    tagged te{d.data(), 8, 1};
    starpu_data_register(&he, STARPU_MAIN_RAM, &te, &ops);
    EXPECT_EQ(fa, footprint_of(he)) << "same interface, size and tag: same footprint";
    for (starpu_data_handle_t h : {ha, hb, hc, hd, hd2, he}) {
        starpu_data_unregister(h);
    }
}

}  // namespace
