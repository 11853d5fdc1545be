// The StarPU 1.3 C API's data side (taskgraph/starpu_data.cpp, starpu_filters.cpp,
// starpu_interfaces.cpp): the standard filters' part sizes and offsets (StarPU's arithmetic),
// asynchronous partitioning, the CSR interface, custom interfaces (allocation on node -1,
// scratch copies, pack/unpack, unregister hook), dense pack/unpack, acquisition variants,
// tasks on a given worker, STARPU_REDUX/COMMUTE through starpu_task_insert, and the memory
// limit from STARPU_LIMIT_CPU_MEM.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "starpu_fixture.hpp"

namespace {

using StarPUData = mpc::test::starpu_two_workers;

// ---- filters -----------------------------------------------------------------------------

TEST_F(StarPUData, VectorBlockFilterSizesAndOffsets) {
    std::vector<int> v(10);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 10, sizeof(int));
    starpu_data_filter f{};
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = 3;
    starpu_data_partition(h, &f);
    ASSERT_EQ(starpu_data_get_nb_children(h), 3);
    const unsigned want_nx[] = {4, 3, 3};  // StarPU: the first n % nparts parts one larger
    const unsigned want_first[] = {0, 4, 7};
    for (unsigned i = 0; i < 3; ++i) {
        starpu_data_handle_t c = starpu_data_get_child(h, i);
        EXPECT_EQ(c, starpu_data_get_sub_data(h, 1, i));
        EXPECT_EQ(starpu_vector_get_nx(c), want_nx[i]);
        EXPECT_EQ(starpu_vector_get_local_ptr(c), reinterpret_cast<uintptr_t>(v.data() + want_first[i]));
    }
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    EXPECT_EQ(starpu_data_get_nb_children(h), 0);
    // With a shadow of 1: the inner 8 elements cut in 3, each part widened by 1 on both sides.
    f.filter_func = starpu_vector_filter_block_shadow;
    f.filter_arg_ptr = reinterpret_cast<void*>(uintptr_t{1});  // StarPU passes the shadow there
    starpu_data_partition(h, &f);
    const unsigned want_shadow_nx[] = {5, 5, 4};
    const unsigned want_shadow_first[] = {0, 3, 6};
    for (unsigned i = 0; i < 3; ++i) {
        starpu_data_handle_t c = starpu_data_get_child(h, i);
        EXPECT_EQ(starpu_vector_get_nx(c), want_shadow_nx[i]);
        EXPECT_EQ(starpu_vector_get_local_ptr(c), reinterpret_cast<uintptr_t>(v.data() + want_shadow_first[i]));
    }
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    // Parts of given lengths.
    uint32_t lens[] = {2, 5, 3};
    f.filter_func = starpu_vector_filter_list;
    f.filter_arg_ptr = lens;
    starpu_data_partition(h, &f);
    EXPECT_EQ(starpu_vector_get_nx(starpu_data_get_child(h, 1)), 5u);
    EXPECT_EQ(starpu_vector_get_local_ptr(starpu_data_get_child(h, 2)), reinterpret_cast<uintptr_t>(v.data() + 7));
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    long llens[] = {9, 1, 0};
    f.filter_func = starpu_vector_filter_list_long;
    f.filter_arg_ptr = llens;
    starpu_data_partition(h, &f);
    EXPECT_EQ(starpu_vector_get_nx(starpu_data_get_child(h, 1)), 1u);
    EXPECT_EQ(starpu_vector_get_local_ptr(starpu_data_get_child(h, 1)), reinterpret_cast<uintptr_t>(v.data() + 9));
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    starpu_data_unregister(h);
}

TEST_F(StarPUData, ShadowFiltersOnMatricesAndBlocks) {
    // 10 x 4 matrix (ld 10), shadow 1 along x in 2: inner 8 -> 4 + 2 each, at 0 and 4.
    std::vector<double> m(10 * 4);
    starpu_data_handle_t h;
    starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(m.data()), 10, 10, 4, sizeof(double));
    starpu_data_filter f{};
    f.filter_func = starpu_matrix_filter_block_shadow;
    f.nchildren = 2;
    f.filter_arg_ptr = reinterpret_cast<void*>(uintptr_t{1});
    starpu_data_partition(h, &f);
    EXPECT_EQ(starpu_matrix_get_nx(starpu_data_get_child(h, 1)), 6u);
    EXPECT_EQ(starpu_matrix_get_local_ptr(starpu_data_get_child(h, 1)), reinterpret_cast<uintptr_t>(m.data() + 4));
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    f.filter_func = starpu_matrix_filter_vertical_block_shadow;  // y: inner 2 -> 1 + 2 each, rows 0 and 1
    starpu_data_partition(h, &f);
    EXPECT_EQ(starpu_matrix_get_ny(starpu_data_get_child(h, 1)), 3u);
    EXPECT_EQ(starpu_matrix_get_local_ptr(starpu_data_get_child(h, 1)), reinterpret_cast<uintptr_t>(m.data() + 10));
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    starpu_data_unregister(h);
    std::vector<float> b(6 * 6 * 6);
    starpu_block_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b.data()), 6, 36, 6, 6, 6,
                               sizeof(float));
    const std::size_t stride[] = {1, 6, 36};
    void (*filters[])(void*, void*, starpu_data_filter*, unsigned, unsigned) = {
        starpu_block_filter_block_shadow, starpu_block_filter_vertical_block_shadow,
        starpu_block_filter_depth_block_shadow};
    for (int k = 0; k < 3; ++k) {
        f.filter_func = filters[k];
        starpu_data_partition(h, &f);  // inner 4 -> 2 + 2 each, at 0 and 2
        starpu_data_handle_t c = starpu_data_get_child(h, 1);
        uint32_t dims[] = {starpu_block_get_nx(c), starpu_block_get_ny(c), starpu_block_get_nz(c)};
        EXPECT_EQ(dims[k], 4u) << k;
        EXPECT_EQ(starpu_block_get_local_ptr(c), reinterpret_cast<uintptr_t>(b.data() + 2 * stride[k])) << k;
        starpu_data_unpartition(h, STARPU_MAIN_RAM);
    }
    starpu_data_unregister(h);
}

TEST_F(StarPUData, MatrixAndBlockFilters) {
    // A 6 x 5 matrix (nx = 6 contiguous, ny = 5 rows, ld = 8) in 3 x 2 tiles.
    std::vector<double> m(8 * 5);
    starpu_data_handle_t h;
    starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(m.data()), 8, 6, 5, sizeof(double));
    starpu_data_filter fx{};
    fx.filter_func = starpu_matrix_filter_block;
    fx.nchildren = 3;
    starpu_data_filter fy{};
    fy.filter_func = starpu_matrix_filter_vertical_block;
    fy.nchildren = 2;
    starpu_data_map_filters(h, 2, &fx, &fy);
    for (unsigned i = 0; i < 3; ++i) {
        for (unsigned j = 0; j < 2; ++j) {
            starpu_data_handle_t t = starpu_data_get_sub_data(h, 2, i, j);
            EXPECT_EQ(starpu_matrix_get_nx(t), 2u);
            EXPECT_EQ(starpu_matrix_get_ny(t), j == 0 ? 3u : 2u);
            EXPECT_EQ(starpu_matrix_get_local_ld(t), 8u);
            EXPECT_EQ(starpu_matrix_get_local_ptr(t), reinterpret_cast<uintptr_t>(m.data() + 2 * i + 8 * 3 * j));
        }
    }
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    starpu_data_unregister(h);

    std::vector<float> b(4 * 3 * 6);
    starpu_block_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b.data()), 4, 12, 4, 3, 6,
                               sizeof(float));
    starpu_data_filter fz{};
    fz.filter_func = starpu_block_filter_depth_block;
    fz.nchildren = 4;
    starpu_data_partition(h, &fz);
    EXPECT_EQ(starpu_block_get_nz(starpu_data_get_child(h, 0)), 2u);
    EXPECT_EQ(starpu_block_get_nz(starpu_data_get_child(h, 3)), 1u);
    EXPECT_EQ(starpu_block_get_local_ptr(starpu_data_get_child(h, 2)), reinterpret_cast<uintptr_t>(b.data() + 12 * 4));
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    fz.filter_func = starpu_block_filter_block;
    fz.nchildren = 2;
    starpu_data_partition(h, &fz);
    EXPECT_EQ(starpu_block_get_nx(starpu_data_get_child(h, 1)), 2u);
    EXPECT_EQ(starpu_block_get_local_ptr(starpu_data_get_child(h, 1)), reinterpret_cast<uintptr_t>(b.data() + 2));
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    starpu_data_unregister(h);
}

void add_one(void* buffers[], void*) {
    auto* v = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(buffers[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i) {
        v[i] += 1;
    }
}

TEST_F(StarPUData, PartitionPlanSubmitUnpartitionClean) {
    std::vector<int> v(100, 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v.data()), 100, sizeof(int));
    starpu_codelet cl{};
    cl.cpu_funcs[0] = add_one;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    starpu_data_filter f{};
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = 4;
    starpu_data_handle_t kids[4];
    starpu_data_partition_plan(h, &f, kids);
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0) << "planned, not submitted: the parent is usable";
    starpu_data_partition_submit(h, 4, kids);
    for (auto k : kids) {
        ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, k, 0), 0);
    }
    starpu_data_unpartition_submit(h, 4, kids, STARPU_MAIN_RAM);
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0);
    // Planned children can be switched on again.
    starpu_data_partition_submit(h, 4, kids);
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, kids[3], 0), 0);
    starpu_data_unpartition_submit(h, 4, kids, STARPU_MAIN_RAM);
    starpu_data_partition_clean(h, 4, kids);
    ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(v[i], i >= 75 ? 4 : 3) << i;
    }
    starpu_data_release(h);
    starpu_data_unregister(h);
}

// ---- CSR ----------------------------------------------------------------------------------

TEST_F(StarPUData, CsrInterfaceAndScratchCopy) {
    // 3 x 3: [1 0 2; 0 3 0; 4 0 5], 1-based indices.
    std::vector<float> val{1, 2, 3, 4, 5};
    std::vector<uint32_t> col{1, 3, 2, 1, 3};
    std::vector<uint32_t> row{1, 3, 4, 6};
    starpu_data_handle_t h;
    starpu_csr_data_register(&h, STARPU_MAIN_RAM, 5, 3, reinterpret_cast<uintptr_t>(val.data()), col.data(), row.data(),
                             1, sizeof(float));
    EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_CSR_INTERFACE_ID);
    EXPECT_EQ(starpu_csr_get_nnz(h), 5u);
    EXPECT_EQ(starpu_csr_get_nrow(h), 3u);
    EXPECT_EQ(starpu_csr_get_firstentry(h), 1u);
    EXPECT_EQ(starpu_csr_get_local_colind(h), col.data());
    EXPECT_EQ(starpu_csr_get_local_rowptr(h), row.data());
    EXPECT_EQ(starpu_csr_get_local_nzval(h), reinterpret_cast<uintptr_t>(val.data()));
    EXPECT_EQ(starpu_csr_get_elemsize(h), sizeof(float));
    EXPECT_EQ(starpu_data_get_size(h), 5 * sizeof(float) + (5 + 4) * sizeof(uint32_t));
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void* b[], void*) {
        // The original (R) and a scratch copy of the same shape, filled and read back.
        auto* s = static_cast<starpu_csr_interface*>(b[1]);
        const auto* a = static_cast<starpu_csr_interface*>(b[0]);
        ASSERT_EQ(STARPU_CSR_GET_NNZ(s), STARPU_CSR_GET_NNZ(a));
        ASSERT_EQ(STARPU_CSR_GET_NROW(s), STARPU_CSR_GET_NROW(a));
        ASSERT_NE(STARPU_CSR_GET_NZVAL(s), STARPU_CSR_GET_NZVAL(a));
        for (uint32_t k = 0; k < STARPU_CSR_GET_NNZ(a); ++k) {
            reinterpret_cast<float*>(STARPU_CSR_GET_NZVAL(s))[k] = reinterpret_cast<float*>(STARPU_CSR_GET_NZVAL(a))[k];
            STARPU_CSR_GET_COLIND(s)[k] = STARPU_CSR_GET_COLIND(a)[k];
        }
        for (uint32_t r = 0; r <= STARPU_CSR_GET_NROW(a); ++r) {
            STARPU_CSR_GET_ROWPTR(s)[r] = STARPU_CSR_GET_ROWPTR(a)[r];
        }
    };
    cl.nbuffers = 2;
    cl.modes[0] = STARPU_R;
    cl.modes[1] = STARPU_SCRATCH;
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_R, h, STARPU_SCRATCH, h, STARPU_TASK_SYNCHRONOUS, 1, 0), 0);
    starpu_data_unregister(h);
}

// ---- custom interfaces --------------------------------------------------------------------

struct ints_interface {
    int* p;
    uint32_t n;
};
std::atomic<int> g_allocs{0};
std::atomic<int> g_frees{0};
std::atomic<int> g_unregistered{0};

starpu_data_interface_ops make_ints_ops() {
    starpu_data_interface_ops o{};
    o.register_data_handle = [](starpu_data_handle_t h, unsigned home, void* in) {
        auto* src = static_cast<ints_interface*>(in);
        auto* mine = static_cast<ints_interface*>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
        mine->n = src->n;
        mine->p = home == STARPU_MAIN_RAM ? src->p : nullptr;
    };
    o.unregister_data_handle = [](starpu_data_handle_t) { g_unregistered.fetch_add(1); };
    o.allocate_data_on_node = [](void* i, unsigned node) -> starpu_ssize_t {
        auto* x = static_cast<ints_interface*>(i);
        x->p = reinterpret_cast<int*>(starpu_malloc_on_node(node, x->n * sizeof(int)));
        g_allocs.fetch_add(1);
        return x->p != nullptr ? static_cast<starpu_ssize_t>(x->n * sizeof(int)) : -ENOMEM;
    };
    o.free_data_on_node = [](void* i, unsigned node) {
        auto* x = static_cast<ints_interface*>(i);
        starpu_free_on_node(node, reinterpret_cast<uintptr_t>(x->p), x->n * sizeof(int));
        g_frees.fetch_add(1);
    };
    o.get_size = [](starpu_data_handle_t h) -> size_t {
        return static_cast<ints_interface*>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM))->n * sizeof(int);
    };
    o.to_pointer = [](void* i, unsigned) -> void* { return static_cast<ints_interface*>(i)->p; };
    o.interfaceid = static_cast<starpu_data_interface_id>(starpu_data_interface_get_next_id());
    o.interface_size = sizeof(ints_interface);
    return o;
}

void iota_with_scratch(void* b[], void*) {
    auto* x = static_cast<ints_interface*>(b[0]);
    auto* s = static_cast<ints_interface*>(b[1]);
    for (uint32_t i = 0; i < x->n; ++i) {
        s->p[i] = static_cast<int>(i);
    }
    for (uint32_t i = 0; i < x->n; ++i) {
        x->p[i] = s->p[i] * 2;
    }
}

TEST_F(StarPUData, CustomInterface) {
    static starpu_data_interface_ops ops = make_ints_ops();
    g_allocs = g_frees = g_unregistered = 0;
    ints_interface none{nullptr, 16};
    starpu_data_handle_t h;
    starpu_data_handle_t tmp;
    starpu_data_register(&h, -1, &none, &ops);  // memory made by the runtime at first use
    starpu_data_register(&tmp, -1, &none, &ops);
    EXPECT_EQ(static_cast<int>(starpu_data_get_interface_id(h)), static_cast<int>(ops.interfaceid));
    EXPECT_EQ(starpu_data_get_interface_ops(h), &ops);
    EXPECT_EQ(starpu_data_get_size(h), 16 * sizeof(int));
    starpu_codelet cl{};
    cl.cpu_funcs[0] = iota_with_scratch;
    cl.nbuffers = 2;
    cl.modes[0] = STARPU_W;
    cl.modes[1] = STARPU_SCRATCH;
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, h, STARPU_SCRATCH, tmp, 0), 0);
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, h, STARPU_SCRATCH, tmp, 0), 0);
    ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
    auto* p = static_cast<int*>(starpu_data_get_local_ptr(h));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p[15], 30);
    starpu_data_release(h);
    EXPECT_EQ(starpu_data_pack(h, nullptr, nullptr), -ENOSYS) << "no pack_data in the ops";
    starpu_data_handle_t same;  // the same shape, its own memory: the kernel works there too
    starpu_data_register_same(&same, h);
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, same, STARPU_SCRATCH, tmp, 0), 0);
    ASSERT_EQ(starpu_data_acquire(same, STARPU_R), 0);
    auto* q = static_cast<int*>(starpu_data_get_local_ptr(same));
    ASSERT_NE(q, nullptr);
    EXPECT_NE(q, p);
    EXPECT_EQ(q[15], 30);
    starpu_data_release(same);
    starpu_data_unregister(same);
    starpu_data_unregister(h);
    starpu_data_unregister(tmp);
    EXPECT_EQ(g_allocs.load(), 5) << "each handle's memory once, one scratch copy per task";
    EXPECT_EQ(g_frees.load(), 5);
    EXPECT_EQ(g_unregistered.load(), 3);
}

// With alloc_compare, a custom interface's freed scratch buffers stay in the workers' caches
// and serve later tasks (of another handle of the same shape too); a handle of another shape
// gets its own; shutdown frees what the caches keep.
TEST(StarPUDataCache, CustomInterfaceWithAllocCompare) {
    static starpu_data_interface_ops ops = [] {
        starpu_data_interface_ops o = make_ints_ops();
        o.alloc_compare = [](void* a, void* b) {
            return static_cast<ints_interface*>(a)->n == static_cast<ints_interface*>(b)->n ? 1 : 0;
        };
        return o;
    }();
    starpu_conf conf;
    ASSERT_EQ(starpu_conf_init(&conf), 0);
    conf.ncpus = 2;
    conf.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&conf), 0);
    g_allocs = g_frees = 0;
    ints_interface shape16{nullptr, 16};
    ints_interface shape8{nullptr, 8};
    starpu_data_handle_t a, b, c;
    starpu_data_register(&a, -1, &shape16, &ops);
    starpu_data_register(&b, -1, &shape16, &ops);
    starpu_data_register(&c, -1, &shape8, &ops);
    static std::atomic<int> wrong{0};
    wrong = 0;
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void* buf[], void* arg) {
        auto* s = static_cast<ints_interface*>(buf[0]);
        uint32_t want = 0;
        starpu_codelet_unpack_args(arg, &want);
        if (s->p == nullptr || s->n != want) {
            wrong.fetch_add(1);
            return;
        }
        for (uint32_t i = 0; i < s->n; ++i) {
            s->p[i] = static_cast<int>(i);
        }
    };
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_SCRATCH;
    constexpr int n = 40;
    for (int i = 0; i < n; ++i) {
        starpu_data_handle_t h = i < n / 2 ? a : i < 3 * n / 4 ? b : c;
        uint32_t want = h == c ? 8 : 16;
        ASSERT_EQ(starpu_task_insert(&cl, STARPU_SCRATCH, h, STARPU_VALUE, &want, sizeof want, 0), 0);
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_LE(g_allocs.load(), 2 * 2) << "at most one buffer per worker and shape is made";
    EXPECT_GE(g_allocs.load(), 2);
    EXPECT_LT(g_frees.load(), g_allocs.load()) << "freed buffers stay cached";
    starpu_data_unregister(a);
    starpu_data_unregister(b);
    starpu_data_unregister(c);
    starpu_shutdown();
    EXPECT_EQ(g_frees.load(), g_allocs.load()) << "shutdown frees the cached buffers";
}

TEST_F(StarPUData, DensePackUnpack) {
    std::vector<int> m(4 * 3);  // 3 x 3 in a ld = 4 matrix
    for (int i = 0; i < 12; ++i) {
        m[i] = i;
    }
    starpu_data_handle_t h;
    starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(m.data()), 4, 3, 3, sizeof(int));
    void* buf = nullptr;
    starpu_ssize_t n = 0;
    ASSERT_EQ(starpu_data_pack(h, &buf, &n), 0);
    ASSERT_EQ(n, static_cast<starpu_ssize_t>(9 * sizeof(int)));
    const int want[] = {0, 1, 2, 4, 5, 6, 8, 9, 10};
    for (int i = 0; i < 9; ++i) {
        EXPECT_EQ(static_cast<int*>(buf)[i], want[i]);
        static_cast<int*>(buf)[i] = -i;
    }
    EXPECT_EQ(starpu_data_unpack(h, buf, 3), -EINVAL) << "wrong size";
    ASSERT_EQ(starpu_data_unpack(h, buf, static_cast<size_t>(n)), 0);  // frees buf
    EXPECT_EQ(m[9], -7);
    EXPECT_EQ(m[3], 3) << "the gap between rows is left alone";
    // A handle of the same shape (dense, ld = nx) takes the packed data too.
    starpu_data_handle_t same;
    starpu_data_register_same(&same, h);
    EXPECT_EQ(starpu_matrix_get_nx(same), 3u);
    EXPECT_EQ(starpu_matrix_get_ny(same), 3u);
    ASSERT_EQ(starpu_data_pack(h, &buf, &n), 0);
    ASSERT_EQ(starpu_data_acquire(same, STARPU_W), 0);  // its memory is made here
    EXPECT_EQ(starpu_matrix_get_local_ld(same), 3u);
    ASSERT_EQ(starpu_data_unpack(same, buf, static_cast<size_t>(n)), 0);
    EXPECT_EQ(reinterpret_cast<int*>(starpu_matrix_get_local_ptr(same))[4], -4);
    starpu_data_release(same);
    starpu_data_unregister(same);
    starpu_data_unregister(h);
}

// ---- acquisition, workers, modes through task_insert -------------------------------------

TEST_F(StarPUData, AcquireVariantsAndNodes) {
    int x = 1;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
    EXPECT_EQ(starpu_data_acquire_on_node(h, 3, STARPU_R), -EINVAL);
    ASSERT_EQ(starpu_data_acquire_on_node(h, STARPU_ACQUIRE_NO_NODE, STARPU_RW), 0);
    starpu_data_release_on_node(h, STARPU_ACQUIRE_NO_NODE);
    std::atomic<int> called{0};
    struct ctx {
        starpu_data_handle_t h;
        std::atomic<int>* called;
    } c{h, &called};
    auto cb = [](void* a) {
        auto* k = static_cast<ctx*>(a);
        k->called->fetch_add(1);
        starpu_data_release(k->h);
    };
    ASSERT_EQ(starpu_data_acquire_cb(h, STARPU_R, cb, &c), 0);
    ASSERT_EQ(starpu_data_acquire_on_node_cb(h, STARPU_MAIN_RAM, STARPU_RW, cb, &c), 0);
    ASSERT_EQ(starpu_data_acquire_cb_sequential_consistency(h, STARPU_RW, cb, &c, 0), 0);
    ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);  // after every callback's release
    EXPECT_EQ(called.load(), 3);
    starpu_data_release(h);
    ASSERT_EQ(starpu_data_acquire_try(h, STARPU_R), 0);
    EXPECT_EQ(starpu_data_acquire_on_node_try(h, STARPU_MAIN_RAM, STARPU_W), -EAGAIN);
    EXPECT_EQ(starpu_data_acquire_on_node_try(h, 2, STARPU_W), -EINVAL);
    starpu_data_release(h);
    // Hints and invalidation, on the only node.
    EXPECT_EQ(starpu_data_prefetch_on_node(h, STARPU_MAIN_RAM, 1), 0);
    EXPECT_EQ(starpu_data_prefetch_on_node(h, 1, 1), -EINVAL);
    EXPECT_EQ(starpu_data_fetch_on_node(h, STARPU_MAIN_RAM, 0), 0);
    EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 1u);
    EXPECT_EQ(starpu_data_is_on_node(h, 1), 0u);
    starpu_data_wont_use(h);
    starpu_data_invalidate_submit(h);
    starpu_data_invalidate(h);
    int tag = 7;
    starpu_data_set_user_data(h, &tag);
    EXPECT_EQ(starpu_data_get_user_data(h), &tag);
    starpu_data_unregister(h);
}

void record_worker(void* b[], void*) { *reinterpret_cast<int*>(STARPU_VARIABLE_GET_PTR(b[0])) = starpu_worker_get_id(); }

TEST_F(StarPUData, ExecuteOnWorker) {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = record_worker;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_W;
    for (int w = 0; w < 2; ++w) {
        for (int k = 0; k < 10; ++k) {
            int where = -1;
            starpu_data_handle_t h;
            starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&where), sizeof where);
            if (k % 2 == 0) {
                ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, h, STARPU_EXECUTE_ON_WORKER, w, 0), 0);
            } else {
                starpu_task* t = starpu_task_create();
                t->cl = &cl;
                t->handles[0] = h;
                t->execute_on_a_specific_worker = 1;
                t->workerid = static_cast<unsigned>(w);
                ASSERT_EQ(starpu_task_submit(t), 0);
            }
            starpu_data_unregister(h);
            EXPECT_EQ(where, w);
        }
    }
    int where = -1;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&where), sizeof where);
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_W, h, STARPU_EXECUTE_ON_WORKER, 2, 0), -EINVAL) << "no worker 2";
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, h, STARPU_EXECUTE_ON_WORKER, -1, 0), 0) << "-1: any worker";
    starpu_data_unregister(h);
    EXPECT_GE(where, 0);
}

void redux_add(void* b[], void*) {
    *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[0])) += *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[1]));
}
void redux_zero(void* b[], void*) { *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[0])) = 0; }
void contribute(void* b[], void* arg) {
    long k = 0;
    starpu_codelet_unpack_args(arg, &k);
    *reinterpret_cast<long*>(STARPU_VARIABLE_GET_PTR(b[0])) += k;
}

TEST_F(StarPUData, ReduxAndCommuteThroughInsert) {
    long sum = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&sum), sizeof sum);
    starpu_codelet init{};
    init.cpu_funcs[0] = redux_zero;
    init.nbuffers = 1;
    init.modes[0] = STARPU_W;
    starpu_codelet red{};
    red.cpu_funcs[0] = redux_add;
    red.nbuffers = 2;
    red.modes[0] = STARPU_RW;
    red.modes[1] = STARPU_R;
    starpu_codelet cl{};
    cl.cpu_funcs[0] = contribute;
    cl.nbuffers = 1;
    EXPECT_NE(starpu_task_insert(&cl, STARPU_REDUX, h, 0), 0) << "no reduction methods yet";
    starpu_data_set_reduction_methods(h, &red, &init);
    starpu_codelet cl2{};  // variable modes per call
    cl2.cpu_funcs[0] = contribute;
    cl2.nbuffers = STARPU_VARIABLE_NBUFFERS;
    for (long k = 1; k <= 100; ++k) {
        int mode = k % 3 == 0 ? (STARPU_RW | STARPU_COMMUTE) : STARPU_REDUX;
        ASSERT_EQ(starpu_task_insert(&cl2, mode, h, STARPU_VALUE, &k, sizeof k, 0), 0);
    }
    EXPECT_NE(starpu_task_insert(&cl2, STARPU_R | STARPU_COMMUTE, h, 0), 0) << "R|COMMUTE is not a mode";
    starpu_data_unregister(h);
    EXPECT_EQ(sum, 5050);
}

TEST(StarPUDataEnv, MemoryLimitFromEnvironment) {
    ASSERT_EQ(setenv("STARPU_LIMIT_CPU_MEM", "1", 1), 0);  // 1 MiB
    starpu_conf conf;
    ASSERT_EQ(starpu_conf_init(&conf), 0);
    conf.ncpus = 1;
    conf.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&conf), 0);
    starpu_data_handle_t big;
    starpu_vector_data_register(&big, -1, 0, 2 << 20, 1);  // 2 MiB: never fits
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) {};
    cl.nbuffers = 1;
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_SCRATCH, big, 0), -ENOMEM);
    starpu_codelet clw = cl;  // the first insert set cl's mode to SCRATCH
    clw.modes[0] = STARPU_W;
    EXPECT_EQ(starpu_task_insert(&clw, STARPU_W, big, 0), -ENOMEM) << "the handle's own memory does not fit";
    starpu_data_unregister(big);
    starpu_shutdown();
    unsetenv("STARPU_LIMIT_CPU_MEM");
    ASSERT_EQ(setenv("STARPU_LIMIT_CPU_MEM", "lots", 1), 0);
    EXPECT_EQ(starpu_init(&conf), -EINVAL) << "a malformed limit is refused";
    unsetenv("STARPU_LIMIT_CPU_MEM");
}

}  // namespace

namespace {

// The built-in interfaces' ops tables through starpu_data_get_interface_ops: the exported table,
// describe and display, shape footprints and compare, the pointer, pack/unpack through the table.
TEST(StarPUBuiltinOps, TablesDescribeAndPack) {
    ASSERT_EQ(mpc::test::start_with_policy(nullptr, 1), 0);  // the default policy, one worker
    double a[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b[12] = {};
    starpu_data_handle_t va, vb, vc, m;
    starpu_vector_data_register(&va, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a), 12, sizeof(double));
    starpu_vector_data_register(&vb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b), 12, sizeof(double));
    starpu_vector_data_register(&vc, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b), 11, sizeof(double));
    starpu_matrix_data_register(&m, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a), 4, 3, 3, sizeof(double));
    starpu_data_interface_ops* o = starpu_data_get_interface_ops(va);
    ASSERT_EQ(o, &starpu_interface_vector_ops);
    EXPECT_EQ(starpu_data_get_interface_ops(m), &starpu_interface_matrix_ops);
    EXPECT_EQ(o->interfaceid, STARPU_VECTOR_INTERFACE_ID);
    EXPECT_EQ(o->interface_size, sizeof(starpu_vector_interface));
    EXPECT_STREQ(o->name, "STARPU_VECTOR_INTERFACE");
    EXPECT_EQ(o->get_size(va), 12 * sizeof(double));
    char buf[32];
    void* ia = starpu_data_get_interface_on_node(va, STARPU_MAIN_RAM);
    EXPECT_EQ(o->describe(ia, buf, sizeof buf), 5);
    EXPECT_STREQ(buf, "V12x8");
    EXPECT_EQ(o->describe(ia, buf, 3), 5);  // snprintf's answer: the whole length, truncated text
    EXPECT_STREQ(buf, "V1");
    starpu_data_interface_ops* om = starpu_data_get_interface_ops(m);
    om->describe(starpu_data_get_interface_on_node(m, STARPU_MAIN_RAM), buf, sizeof buf);
    EXPECT_STREQ(buf, "M3x3x8");
    EXPECT_EQ(o->footprint(va), o->footprint(vb));
    EXPECT_NE(o->footprint(va), o->footprint(vc));
    EXPECT_EQ(o->compare(ia, starpu_data_get_interface_on_node(vb, STARPU_MAIN_RAM)), 1);
    EXPECT_EQ(o->compare(ia, starpu_data_get_interface_on_node(vc, STARPU_MAIN_RAM)), 0);
    EXPECT_EQ(o->to_pointer(ia, STARPU_MAIN_RAM), a);
    EXPECT_EQ(o->to_pointer(ia, 1), nullptr);
    char* text = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&text, &len);
    ASSERT_NE(f, nullptr);
    om->display(m, f);
    std::fclose(f);
    EXPECT_STREQ(text, "3\t3\t");
    std::free(text);
    void* packed = nullptr;
    starpu_ssize_t count = 0;
    ASSERT_EQ(o->pack_data(va, STARPU_MAIN_RAM, &packed, &count), 0);
    EXPECT_EQ(count, static_cast<starpu_ssize_t>(12 * sizeof(double)));
    ASSERT_EQ(o->unpack_data(vb, STARPU_MAIN_RAM, packed, static_cast<size_t>(count)), 0);  // frees packed
    EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);
    EXPECT_EQ(o->pack_data(va, 1, &packed, &count), -ENODEV);
    EXPECT_EQ(starpu_interface_csr_ops.display, nullptr);  // as in StarPU 1.3.10
    for (starpu_data_handle_t h : {va, vb, vc, m}) {
        starpu_data_unregister(h);
    }
    starpu_shutdown();
}

}  // namespace
