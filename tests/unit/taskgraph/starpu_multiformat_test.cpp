// StarPU's multiformat interface on CPU workers: registration on main memory and on -1, what
// codelets receive (the CPU format), size, footprint, pack/unpack, starpu_data_cpy, and
// eviction to disk of multiformat handles (a custom interface moved by its pack methods).
#include <gtest/gtest.h>
#include <starpu.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct point {
    float x, y;
};

starpu_multiformat_data_interface_ops g_format = [] {
    starpu_multiformat_data_interface_ops o{};
    o.cpu_elemsize = sizeof(point);
    o.cuda_elemsize = 2 * sizeof(float);  // kept, never used: no GPU
    return o;
}();

void scale_fn(void* buffers[], void* /*arg*/) {
    auto* p = static_cast<point*>(STARPU_MULTIFORMAT_GET_CPU_PTR(buffers[0]));
    const unsigned n = STARPU_MULTIFORMAT_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; ++i) {
        p[i].x *= 2;
        p[i].y *= 3;
    }
}

void fill_fn(void* buffers[], void* /*arg*/) {
    auto* p = static_cast<point*>(STARPU_MULTIFORMAT_GET_CPU_PTR(buffers[0]));
    const unsigned n = STARPU_MULTIFORMAT_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; ++i) {
        p[i] = {static_cast<float>(i), 1.0f};
    }
}

starpu_codelet scale_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = scale_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_RW;
    return c;
}();
starpu_codelet fill_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = fill_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_W;
    return c;
}();

int start(const char* limit_mib) {
    if (limit_mib != nullptr) {
        setenv("STARPU_LIMIT_CPU_MEM", limit_mib, 1);
    }
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 2;
    conf.precedence_over_environment_variables = 1;
    const int rc = starpu_init(&conf);
    unsetenv("STARPU_LIMIT_CPU_MEM");
    return rc;
}

TEST(StarpuMultiformat, CodeletsGetTheCpuFormat) {
    ASSERT_EQ(start(nullptr), 0);
    std::vector<point> pts(100);
    for (unsigned i = 0; i < pts.size(); ++i) {
        pts[i] = {static_cast<float>(i), 1.0f + static_cast<float>(i)};
    }
    starpu_data_handle_t h;
    starpu_multiformat_data_register(&h, STARPU_MAIN_RAM, pts.data(), 100, &g_format);
    EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_MULTIFORMAT_INTERFACE_ID);
    EXPECT_EQ(starpu_data_get_size(h), 100 * sizeof(point));
    starpu_data_interface_ops* ops = starpu_data_get_interface_ops(h);
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(ops->is_multiformat, 1);
    EXPECT_EQ(ops->get_mf_ops(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM)), &g_format);
    EXPECT_EQ(starpu_data_get_local_ptr(h), pts.data());
    ASSERT_EQ(starpu_task_insert(&scale_cl, STARPU_RW, h, 0), 0);
    // pack / unpack round trip
    ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
    void* packed = nullptr;
    starpu_ssize_t n = 0;
    ASSERT_EQ(starpu_data_pack(h, &packed, &n), 0);
    ASSERT_EQ(n, static_cast<starpu_ssize_t>(100 * sizeof(point)));
    EXPECT_EQ(static_cast<point*>(packed)[7].x, 14.0f);
    static_cast<point*>(packed)[7].x = -1;
    ASSERT_EQ(starpu_data_unpack(h, packed, static_cast<size_t>(n)), 0);
    starpu_data_release(h);
    // the same shape and footprint as another handle of 100 points; not as one of 50
    std::vector<point> other(100), fewer(50);
    starpu_data_handle_t h2, h3;
    starpu_multiformat_data_register(&h2, STARPU_MAIN_RAM, other.data(), 100, &g_format);
    starpu_multiformat_data_register(&h3, STARPU_MAIN_RAM, fewer.data(), 50, &g_format);
    EXPECT_EQ(ops->footprint(h), ops->footprint(h2));
    EXPECT_NE(ops->footprint(h), ops->footprint(h3));
    ASSERT_EQ(starpu_data_cpy(h2, h, 0, nullptr, nullptr), 0);
    starpu_data_unregister(h);
    starpu_data_unregister(h2);
    starpu_data_unregister(h3);
    starpu_shutdown();
    for (unsigned i = 0; i < 100; ++i) {
        const float x = i == 7 ? -1.0f : 2.0f * static_cast<float>(i);
        ASSERT_EQ(pts[i].x, x) << i;
        ASSERT_EQ(pts[i].y, 3.0f * (1.0f + static_cast<float>(i))) << i;
        ASSERT_EQ(other[i].x, x) << i;
    }
}

TEST(StarpuMultiformat, OnMinusOneTheRuntimeMakesTheMemoryAndMayEvictItToDisk) {
    std::string dir = (std::filesystem::temp_directory_path() / ("mpc_mf_" + std::to_string(getpid()))).string();
    ASSERT_EQ(start("1"), 0);
    ASSERT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.c_str()), -1), 1);
    constexpr unsigned per = 64 * 1024 / sizeof(point);  // 64 KiB each, 32 of them: twice the limit
    std::vector<starpu_data_handle_t> h(32);
    for (auto& x : h) {
        starpu_multiformat_data_register(&x, -1, nullptr, per, &g_format);
        EXPECT_EQ(starpu_data_test_if_allocated_on_node(x, STARPU_MAIN_RAM), 0u);
        ASSERT_EQ(starpu_task_insert(&fill_cl, STARPU_W, x, 0), 0);
    }
    for (int round = 0; round < 2; ++round) {
        for (auto& x : h) {
            ASSERT_EQ(starpu_task_insert(&scale_cl, STARPU_RW, x, 0), 0);
        }
    }
    starpu_task_wait_for_all();
    int on_disk = 0;
    for (auto& x : h) {
        on_disk += starpu_data_test_if_allocated_on_node(x, 1) != 0 ? 1 : 0;
    }
    EXPECT_GT(on_disk, 0);
    for (auto& x : h) {
        ASSERT_EQ(starpu_data_acquire(x, STARPU_R), 0);
        const auto* p = static_cast<const point*>(starpu_data_get_local_ptr(x));
        ASSERT_NE(p, nullptr);
        for (unsigned i = 0; i < per; i += 97) {
            ASSERT_EQ(p[i].x, 4.0f * static_cast<float>(i)) << i;
            ASSERT_EQ(p[i].y, 9.0f) << i;
        }
        starpu_data_release(x);
        starpu_data_unregister(x);
    }
    starpu_shutdown();
    std::filesystem::remove_all(dir);
}

}  // namespace
