// Smaller parts of StarPU 1.3's API: the application's allocator (starpu_malloc_set_hooks) for
// starpu_malloc and the handles the runtime allocates, starpu_malloc_on_node's default flags,
// starpu_data_request_allocation, starpu_memchunk_tidy, starpu_get_prefetch_flag, binding
// queries (starpu_bindid_get_workerids, starpu_get_pu_os_index, starpu_display_bindings) and
// the bus model's prints.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

int start(int ncpus) {
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.sched_policy_name = "eager";
    conf.precedence_over_environment_variables = 1;
    return starpu_init(&conf);
}

std::mutex g_m;
std::map<void*, size_t> g_live;  // what the hook made and has not freed
std::atomic<int> g_allocs{0}, g_frees{0}, g_bad_frees{0};

int my_malloc(unsigned node, void** a, size_t dim, int) {
    EXPECT_EQ(node, 0u);
    *a = std::malloc(dim);
    if (*a == nullptr) {
        return -ENOMEM;
    }
    std::lock_guard<std::mutex> g(g_m);
    g_live[*a] = dim;
    g_allocs.fetch_add(1);
    return 0;
}

int my_free(unsigned, void* a, size_t dim, int) {
    {
        std::lock_guard<std::mutex> g(g_m);
        auto it = g_live.find(a);
        if (it == g_live.end() || (dim != 0 && dim != it->second)) {
            g_bad_frees.fetch_add(1);  // not ours, or not the size it was made with
        } else {
            g_live.erase(it);
        }
    }
    g_frees.fetch_add(1);
    std::free(a);
    return 0;
}

void fill_fn(void* buffers[], void*) {
    auto* p = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(buffers[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i) {
        p[i] = static_cast<int>(i);
    }
}
starpu_codelet fill_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = fill_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_W;
    return c;
}();

}  // namespace

TEST(StarpuMallocHooks, TheApplicationsAllocatorMakesAndFreesStarpuMallocAndHandleMemory) {
    starpu_malloc_set_hooks(my_malloc, my_free);
    ASSERT_EQ(start(2), 0);
    void* p = nullptr;
    ASSERT_EQ(starpu_malloc(&p, 1000), 0);
    EXPECT_EQ(g_allocs.load(), 1) << "starpu_malloc went to the hook";
    EXPECT_EQ(starpu_free(p), 0);
    ASSERT_EQ(starpu_malloc_flags(&p, 333, STARPU_MALLOC_PINNED), 0);
    EXPECT_EQ(starpu_free_flags(p, 333, STARPU_MALLOC_PINNED), 0);
    const int before = g_allocs.load();
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, -1, 0, 4096, sizeof(int));  // memory made by the runtime
    ASSERT_EQ(starpu_task_insert(&fill_cl, STARPU_W, h, 0), 0);
    starpu_task_wait_for_all();
    EXPECT_EQ(g_allocs.load(), before + 1) << "the handle's memory came from the hook";
    starpu_data_acquire(h, STARPU_R);
    EXPECT_EQ(reinterpret_cast<int*>(starpu_vector_get_local_ptr(h))[4095], 4095);
    starpu_data_release(h);
    starpu_data_unregister(h);
    starpu_malloc_set_hooks(nullptr, nullptr);  // refused while running: still ours
    ASSERT_EQ(starpu_malloc(&p, 10), 0);
    EXPECT_EQ(g_allocs.load(), before + 2);
    starpu_free(p);
    starpu_shutdown();
    EXPECT_EQ(g_bad_frees.load(), 0) << "every free went to the hook with the size it was made with";
    EXPECT_EQ(g_allocs.load(), g_frees.load());
    EXPECT_TRUE(g_live.empty());
    starpu_malloc_set_hooks(my_malloc, nullptr);  // refused: one without the other
    starpu_malloc_set_hooks(nullptr, nullptr);
    ASSERT_EQ(start(1), 0);
    const int after = g_allocs.load();
    ASSERT_EQ(starpu_malloc(&p, 10), 0);
    EXPECT_EQ(g_allocs.load(), after) << "the runtime's own allocator again";
    starpu_free(p);
    starpu_shutdown();
}

TEST(StarpuMallocOnNode, DefaultFlagsAreThoseSet) {
    setenv("STARPU_LIMIT_CPU_MEM", "1", 1);  // 1 MiB
    ASSERT_EQ(start(1), 0);
    unsetenv("STARPU_LIMIT_CPU_MEM");
    const starpu_ssize_t room = starpu_memory_get_available(STARPU_MAIN_RAM);
    uintptr_t a = starpu_malloc_on_node(STARPU_MAIN_RAM, 4096);
    ASSERT_NE(a, 0u);
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), room) << "not counted by default";
    starpu_free_on_node(STARPU_MAIN_RAM, a, 4096);
    starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM, STARPU_MALLOC_COUNT);
    a = starpu_malloc_on_node(STARPU_MAIN_RAM, 4096);
    ASSERT_NE(a, 0u);
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), room - 4096) << "counted once asked";
    starpu_free_on_node(STARPU_MAIN_RAM, a, 4096);
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), room);
    starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM, STARPU_MALLOC_PINNED);
    starpu_malloc_on_node_set_default_flags(5, STARPU_MALLOC_COUNT);  // no such node: logged, ignored
    starpu_shutdown();
}

TEST(StarpuDataRequestAllocation, MakesTheMemoryOfAHandleTheRuntimeAllocates) {
    ASSERT_EQ(start(1), 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, -1, 0, 1024, sizeof(int));
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 0u);
    EXPECT_EQ(starpu_data_request_allocation(h, STARPU_MAIN_RAM), 0);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 1u);
    EXPECT_EQ(starpu_data_request_allocation(h, 9), -EINVAL) << "no node 9";
    starpu_data_unregister(h);
    starpu_memchunk_tidy(STARPU_MAIN_RAM);
    setenv("STARPU_PREFETCH", "0", 1);
    EXPECT_EQ(starpu_get_prefetch_flag(), 0);
    unsetenv("STARPU_PREFETCH");
    EXPECT_EQ(starpu_get_prefetch_flag(), 1);
    starpu_shutdown();
}

TEST(StarpuBindings, WorkersOfABindidAndPuIndices) {
    ASSERT_EQ(start(2), 0);
    int total = 0;
    for (int w = 0; w < static_cast<int>(starpu_worker_get_count()); ++w) {
        int* ids = nullptr;
        const int n = starpu_bindid_get_workerids(starpu_worker_get_bindid(w), &ids);
        ASSERT_GE(n, 1);
        bool found = false;
        for (int i = 0; i < n; ++i) {
            found = found || ids[i] == w;
        }
        EXPECT_TRUE(found) << "worker " << w << " is listed under its own bindid";
    }
    for (int b = 0; b < 64; ++b) {
        int* ids = nullptr;
        total += starpu_bindid_get_workerids(b, &ids);
    }
    EXPECT_EQ(total, static_cast<int>(starpu_worker_get_count())) << "each worker under exactly one bindid";
    int* none = reinterpret_cast<int*>(1);
    EXPECT_EQ(starpu_bindid_get_workerids(-1, &none), 0);
    EXPECT_EQ(none, nullptr);
    hwloc_obj_t pu = starpu_worker_get_hwloc_obj(1);  // a PU: its logical and OS indices
    ASSERT_NE(pu, nullptr);
    EXPECT_EQ(starpu_get_pu_os_index(pu->logical_index), static_cast<int>(pu->os_index));
    testing::internal::CaptureStdout();
    starpu_display_bindings();
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("worker 1: VP"), std::string::npos) << out;
    char* buf = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    starpu_bus_print_bandwidth(f);
    starpu_bus_print_affinity(f);
    starpu_bus_print_filenames(f);
    std::fclose(f);
    EXPECT_NE(std::strstr(buf, "NUMA 0"), nullptr);
    std::free(buf);
    starpu_shutdown();
}

// ---- Performance model tools

namespace {
void work_fn(void* buffers[], void*) {
    auto* p = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(buffers[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i) {
        p[i] += 1;
    }
}
starpu_perfmodel tool_model = [] {
    starpu_perfmodel m{};
    m.type = STARPU_HISTORY_BASED;
    m.symbol = "mpc_tools_test_model";
    return m;
}();
starpu_codelet work_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = work_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_RW;
    c.model = &tool_model;
    return c;
}();

std::string capture(void (*f)(FILE*, void*), void* arg) {
    char* buf = nullptr;
    size_t len = 0;
    FILE* out = open_memstream(&buf, &len);
    f(out, arg);
    std::fclose(out);
    std::string s(buf, len);
    std::free(buf);
    return s;
}
}  // namespace

TEST(StarpuPerfmodelTools, PrintListDumpAndCombinations) {
    char dir[] = "/tmp/mpc-perfmodel-tools-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    setenv("STARPU_PERF_MODEL_DIR", dir, 1);
    setenv("STARPU_CALIBRATE", "1", 1);
    ASSERT_EQ(start(1), 0);
    std::vector<int> small(100), big(10000);
    starpu_data_handle_t hs, hb;
    starpu_vector_data_register(&hs, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(small.data()), small.size(), sizeof(int));
    starpu_vector_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(big.data()), big.size(), sizeof(int));
    for (int i = 0; i < 12; ++i) {
        ASSERT_EQ(starpu_task_insert(&work_cl, STARPU_RW, hs, 0), 0);
        ASSERT_EQ(starpu_task_insert(&work_cl, STARPU_RW, hb, 0), 0);
    }
    starpu_task_wait_for_all();
    starpu_data_unregister(hs);
    starpu_data_unregister(hb);

    const std::string one = capture([](FILE* f, void*) { starpu_perfmodel_print(&tool_model, starpu_worker_get_perf_archtype(0, 0), 0, nullptr, nullptr, f); }, nullptr);
    EXPECT_NE(one.find("# hash\t\tsize"), std::string::npos) << one;
    int lines = 0;
    for (std::size_t p = one.find('\n'); p != std::string::npos; p = one.find('\n', p + 1)) {
        ++lines;
    }
    EXPECT_EQ(lines, 3) << "the header and one entry per size:\n" << one;
    EXPECT_NE(one.find("\t12\n"), std::string::npos) << "12 runs of each:\n" << one;
    const std::string all = capture([](FILE* f, void*) { EXPECT_EQ(starpu_perfmodel_print_all(&tool_model, nullptr, nullptr, nullptr, f), 0); }, nullptr);
    EXPECT_EQ(all.find("performance model for cpu_impl0\n"), 0u) << all;
    char cpu1[] = "cpu_impl1";
    const std::string none = capture([](FILE* f, void* a) { EXPECT_EQ(starpu_perfmodel_print_all(&tool_model, static_cast<char*>(a), nullptr, nullptr, f), 0); }, cpu1);
    EXPECT_TRUE(none.empty()) << "no data for implementation 1";
    char bogus[] = "cuda0";
    char* out = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&out, &len);
    EXPECT_EQ(starpu_perfmodel_print_all(&tool_model, bogus, nullptr, nullptr, f), -EINVAL);
    std::fclose(f);
    std::free(out);
    // One entry's estimations, by its footprint (the first column of the table).
    const uint32_t fp = static_cast<uint32_t>(std::stoul(one.substr(one.find('\n') + 1, 8), nullptr, 16));
    struct est_arg { uint32_t fp; } ea{fp};
    const std::string est = capture([](FILE* f2, void* a) { EXPECT_EQ(starpu_perfmodel_print_estimations(&tool_model, static_cast<est_arg*>(a)->fp, f2), 0); }, &ea);
    EXPECT_EQ(est.rfind("cpu_impl0\t", 0), 0u) << est;
    const std::string xml = capture([](FILE* f2, void*) { starpu_perfmodel_dump_xml(f2, &tool_model); }, nullptr);
    EXPECT_NE(xml.find("<perfmodel version="), std::string::npos);
    EXPECT_NE(xml.find("nsample=\"12\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("</perfmodel>"), std::string::npos);
    char path[512];
    starpu_perfmodel_debugfilepath(&tool_model, starpu_worker_get_perf_archtype(0, 0), path, sizeof path, 0);
    EXPECT_NE(std::strstr(path, "mpc_tools_test_model"), nullptr) << path;

    // Combinations: the CPU one is 0; one added is 1, found again, fetched.
    starpu_perfmodel_device cpu{STARPU_CPU_WORKER, 0, 1};
    EXPECT_EQ(starpu_perfmodel_arch_comb_get(1, &cpu), 0);
    EXPECT_EQ(starpu_perfmodel_arch_comb_fetch(0)->devices[0].type, STARPU_CPU_WORKER);
    starpu_perfmodel_device two[2] = {{STARPU_CPU_WORKER, 0, 4}, {STARPU_CPU_WORKER, 1, 4}};
    const int c = starpu_perfmodel_arch_comb_add(2, two);
    EXPECT_GE(c, 1);
    EXPECT_EQ(starpu_perfmodel_arch_comb_add(2, two), c) << "the same combination";
    EXPECT_EQ(starpu_perfmodel_arch_comb_get(2, two), c);
    EXPECT_EQ(starpu_perfmodel_arch_comb_fetch(c)->ndevices, 2);
    EXPECT_EQ(starpu_perfmodel_arch_comb_fetch(c + 5), nullptr);
    EXPECT_EQ(starpu_perfmodel_get_narch_combs(), c + 1);
    EXPECT_EQ(starpu_perfmodel_arch_comb_add(0, nullptr), -EINVAL);
    const std::string combs = capture([](FILE* f2, void*) { starpu_perfmodel_list_combs(f2, &tool_model); }, nullptr);
    EXPECT_NE(combs.find("0: CPU"), std::string::npos) << combs;
    starpu_shutdown();  // writes the model

    starpu_perfmodel_initialize();
    const std::string d = capture([](FILE* f2, void*) { starpu_perfmodel_directory(f2); }, nullptr);
    EXPECT_EQ(d, std::string("directory: <") + dir + ">\n");
    const std::string files = capture([](FILE* f2, void*) { EXPECT_EQ(starpu_perfmodel_list(f2), 0); }, nullptr);
    EXPECT_NE(files.find("file: <mpc_tools_test_model>"), std::string::npos) << files;
    unsetenv("STARPU_CALIBRATE");
    setenv("STARPU_PERF_MODEL_DIR", "/nonexistent/mpc-models", 1);
    out = nullptr;
    f = open_memstream(&out, &len);
    EXPECT_EQ(starpu_perfmodel_list(f), 1) << "an unreadable directory";
    std::fclose(f);
    std::free(out);
    unsetenv("STARPU_PERF_MODEL_DIR");
    (void)std::system((std::string("rm -rf '") + dir + "'").c_str());
}

namespace {
std::atomic<int> g_granted{0};
void granted_cb(void* h) {
    g_granted.fetch_add(1);
    starpu_data_release(static_cast<starpu_data_handle_t>(h));
}
}  // namespace

TEST(StarpuAcquireCb, QuickAndSyncJobidsVariantsAcquireAndNumberTheirSyncPoints) {
    ASSERT_EQ(start(1), 0);
    int x = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
    g_granted = 0;
    ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency_quick(h, STARPU_MAIN_RAM, STARPU_RW, granted_cb, h, 1, 1),
              0);
    long pre = -1, post = -1;
    ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(h, STARPU_MAIN_RAM, STARPU_R, granted_cb, h,
                                                                                 1, 0, &pre, &post),
              0);
    starpu_task_wait_for_all();
    starpu_data_unregister(h);  // waits for the releases
    EXPECT_EQ(g_granted.load(), 2);
    EXPECT_GT(pre, 0);
    EXPECT_GT(post, pre) << "two numbers of their own";
    starpu_task* t = starpu_task_create();
    EXPECT_GT(static_cast<long>(starpu_task_get_job_id(t)), post) << "from the same counter as the tasks'";
    t->destroy = 0;
    starpu_task_destroy(t);
    EXPECT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency_quick(h, 7, STARPU_R, granted_cb, nullptr, 1, 1), -EINVAL)
        << "no node 7";
    starpu_drand48_data st;
    starpu_srand48_r(3, &st);
    double d = -1;
    long l = -1;
    starpu_drand48_r(&st, &d);
    starpu_lrand48_r(&st, &l);
    EXPECT_TRUE(d >= 0 && d < 1);
    EXPECT_GE(l, 0);
    starpu_shutdown();
}
