// The rest of StarPU 1.3's core API for policies, filters and interfaces of one's own: the copy
// helpers of copy methods (every shape against a reference, bad nodes refused), the filter chunk
// helper (against starpu_filter_vector_block), home node and allocation sizes, data state,
// progression/idle hooks (a hook returning 0 keeps the workers polling, deregistering stops the
// calls, the table is bounded), the workers' scheduling mutex, callback tasks, the transfer
// predictions and prefetch calls of a machine with one memory node, data names in the trace.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
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

std::vector<unsigned char> pattern(std::size_t n) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<unsigned char>(i * 7 + 3);
    }
    return v;
}

auto addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(StarpuExpert, InterfaceCopyMovesBytesAtTheOffsets) {
    auto src = pattern(256);
    std::vector<unsigned char> dst(256, 0);
    ASSERT_EQ(starpu_interface_copy(addr(src.data()), 16, STARPU_MAIN_RAM, addr(dst.data()), 32, STARPU_MAIN_RAM, 100,
                                    nullptr),
              0);
    for (std::size_t i = 0; i < 256; ++i) {
        const bool inside = i >= 32 && i < 132;
        ASSERT_EQ(dst[i], inside ? src[i - 16] : 0) << i;
    }
    EXPECT_EQ(starpu_interface_copy(addr(src.data()), 0, 1, addr(dst.data()), 0, STARPU_MAIN_RAM, 8, nullptr), -EINVAL);
    EXPECT_EQ(starpu_interface_copy(addr(src.data()), 0, STARPU_MAIN_RAM, addr(dst.data()), 0, 3, 8, nullptr), -EINVAL);
}

TEST(StarpuExpert, InterfaceCopy2d3d4dFollowTheLeadingDimensions) {
    // A 4-D box of 3 x 4 x 2 x 2 blocks of 5 bytes inside padded source and destination layouts.
    const std::size_t bs = 5, n1 = 4, n2 = 2, n3 = 2;
    const std::size_t ld1s = 8, ld2s = ld1s * n1 + 3, ld3s = ld2s * n2 + 1;
    const std::size_t ld1d = 6, ld2d = ld1d * n1 + 2, ld3d = ld2d * n2 + 5;
    auto src = pattern(ld3s * n3 + 64);
    auto expect_copied = [&](const std::vector<unsigned char>& dst, std::size_t m2, std::size_t m3) {
        for (std::size_t k = 0; k < m3; ++k) {
            for (std::size_t j = 0; j < m2; ++j) {
                for (std::size_t i = 0; i < n1; ++i) {
                    for (std::size_t b = 0; b < bs; ++b) {
                        ASSERT_EQ(dst[k * ld3d + j * ld2d + i * ld1d + b], src[k * ld3s + j * ld2s + i * ld1s + b]);
                    }
                }
            }
        }
    };
    std::vector<unsigned char> d2(ld3d * n3 + 64, 0);
    ASSERT_EQ(starpu_interface_copy2d(addr(src.data()), 0, 0, addr(d2.data()), 0, 0, bs, n1, ld1s, ld1d, nullptr), 0);
    expect_copied(d2, 1, 1);
    EXPECT_EQ(d2[bs], 0);  // the gap between blocks is left alone
    std::vector<unsigned char> d3(ld3d * n3 + 64, 0);
    ASSERT_EQ(starpu_interface_copy3d(addr(src.data()), 0, 0, addr(d3.data()), 0, 0, bs, n1, ld1s, ld1d, n2, ld2s, ld2d,
                                      nullptr),
              0);
    expect_copied(d3, n2, 1);
    std::vector<unsigned char> d4(ld3d * n3 + 64, 0);
    ASSERT_EQ(starpu_interface_copy4d(addr(src.data()), 0, 0, addr(d4.data()), 0, 0, bs, n1, ld1s, ld1d, n2, ld2s, ld2d,
                                      n3, ld3s, ld3d, nullptr),
              0);
    expect_copied(d4, n2, n3);
    // Contiguous shapes take the one-copy path and give the same bytes.
    std::vector<unsigned char> c(bs * n1 * n2, 0);
    ASSERT_EQ(starpu_interface_copy3d(addr(src.data()), 0, 0, addr(c.data()), 0, 0, bs, n1, bs, bs, n2, bs * n1, bs * n1,
                                      nullptr),
              0);
    EXPECT_EQ(std::memcmp(c.data(), src.data(), c.size()), 0);
    EXPECT_EQ(starpu_interface_copy2d(addr(src.data()), 0, 2, addr(c.data()), 0, 0, 1, 1, 1, 1, nullptr), -EINVAL);
    double t = -1;
    starpu_interface_start_driver_copy_async(0, 0, &t);
    EXPECT_GE(t, 0.0);
    starpu_interface_end_driver_copy_async(0, 0, t);
    starpu_interface_data_copy(0, 0, 16);
}

TEST(StarpuExpert, FilterChunkHelperCutsAsTheVectorBlockFilter) {
    ASSERT_EQ(start(1), 0);
    for (unsigned n : {1u, 7u, 10u, 64u, 100u}) {
        for (unsigned nparts : {1u, 2u, 3u, 7u}) {
            if (nparts > n) {
                continue;
            }
            std::vector<double> v(n);
            starpu_data_handle_t h;
            starpu_vector_data_register(&h, STARPU_MAIN_RAM, addr(v.data()), n, sizeof(double));
            starpu_data_filter f{};
            f.filter_func = starpu_vector_filter_block;
            f.nchildren = nparts;
            starpu_data_partition(h, &f);
            unsigned total = 0;
            for (unsigned id = 0; id < nparts; ++id) {
                unsigned chunk = 0;
                size_t off = 0;
                starpu_filter_nparts_compute_chunk_size_and_offset(n, nparts, sizeof(double), id, 1, &chunk, &off);
                starpu_data_handle_t child = starpu_data_get_sub_data(h, 1, id);
                EXPECT_EQ(chunk, starpu_vector_get_nx(child)) << n << "/" << nparts << " part " << id;
                EXPECT_EQ(addr(v.data()) + off, starpu_vector_get_local_ptr(child)) << n << "/" << nparts << " part " << id;
                EXPECT_EQ(off, static_cast<size_t>(total) * sizeof(double));
                total += chunk;
                unsigned c2 = 0;
                starpu_filter_nparts_compute_chunk_size_and_offset(n, nparts, sizeof(double), id, 1, &c2, nullptr);
                EXPECT_EQ(c2, chunk);  // the offset is optional
            }
            EXPECT_EQ(total, n);
            starpu_data_unpartition(h, STARPU_MAIN_RAM);
            starpu_data_unregister(h);
        }
    }
    // ld scales the offset: rows of a matrix.
    unsigned chunk = 0;
    size_t off = 0;
    starpu_filter_nparts_compute_chunk_size_and_offset(10, 3, 4, 2, 16, &chunk, &off);
    EXPECT_EQ(chunk, 3u);
    EXPECT_EQ(off, 7u * 16 * 4);
    starpu_shutdown();
}

std::atomic<size_t> g_seen_allocsize{0};

void fill_to_allocsize(void* buffers[], void* /*arg*/) {
    const size_t n = STARPU_VECTOR_GET_ALLOCSIZE(buffers[0]);
    g_seen_allocsize = n;
    std::memset(reinterpret_cast<void*>(STARPU_VECTOR_GET_PTR(buffers[0])), 0x5a, n);  // all of it is ours
}

TEST(StarpuExpert, HomeNodeAllocSizeAndStatus) {
    ASSERT_EQ(start(2), 0);
    std::vector<float> mine(100);
    starpu_data_handle_t a, b, m;
    starpu_vector_data_register(&a, STARPU_MAIN_RAM, addr(mine.data()), 100, sizeof(float));
    EXPECT_EQ(starpu_data_get_home_node(a), STARPU_MAIN_RAM);
    EXPECT_EQ(starpu_vector_get_allocsize(a), 100 * sizeof(float));
    EXPECT_EQ(starpu_data_get_alloc_size(a), 100 * sizeof(float));
    int alloc = -1, valid = -1, req = -1;
    starpu_data_query_status(a, STARPU_MAIN_RAM, &alloc, &valid, &req);
    EXPECT_EQ(alloc, 1);
    EXPECT_EQ(valid, 1);
    EXPECT_EQ(req, 0);
    starpu_data_query_status(a, 1, &alloc, &valid, &req);  // no such node
    EXPECT_EQ(alloc + valid + req, 0);
    starpu_data_query_status(a, STARPU_MAIN_RAM, nullptr, nullptr, nullptr);  // NULLs are fine

    // Registered without memory and a larger allocation: the runtime makes allocsize bytes.
    starpu_vector_data_register_allocsize(&b, -1, 0, 10, sizeof(double), 4096);
    EXPECT_EQ(starpu_data_get_home_node(b), -1);
    EXPECT_EQ(starpu_vector_get_allocsize(b), 4096u);
    EXPECT_EQ(starpu_data_get_alloc_size(b), 4096u);
    EXPECT_EQ(starpu_data_get_size(b), 10 * sizeof(double));
    starpu_data_query_status(b, STARPU_MAIN_RAM, &alloc, &valid, &req);
    EXPECT_EQ(alloc, 0);  // made at its first use
    EXPECT_EQ(valid, 0);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = fill_to_allocsize;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_W;
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, b, 0), 0);
    starpu_task_wait_for_all();
    EXPECT_EQ(g_seen_allocsize.load(), 4096u);
    starpu_data_query_status(b, STARPU_MAIN_RAM, &alloc, &valid, &req);
    EXPECT_EQ(alloc, 1);
    EXPECT_EQ(valid, 1);

    std::vector<double> mm(8 * 6);
    starpu_matrix_data_register_allocsize(&m, STARPU_MAIN_RAM, addr(mm.data()), 8, 8, 6, sizeof(double),
                                          8 * 6 * sizeof(double));
    EXPECT_EQ(starpu_matrix_get_allocsize(m), 8 * 6 * sizeof(double));
    EXPECT_EQ(starpu_data_get_alloc_size(m), 8 * 6 * sizeof(double));
    starpu_data_handle_t m2;
    starpu_matrix_data_register(&m2, STARPU_MAIN_RAM, addr(mm.data()), 8, 4, 6, sizeof(double));
    EXPECT_EQ(starpu_matrix_get_allocsize(m2), 4 * 6 * sizeof(double));

    EXPECT_EQ(starpu_data_get_ooc_flag(a), 1u);  // eligible by default
    starpu_data_set_ooc_flag(a, 0);
    EXPECT_EQ(starpu_data_get_ooc_flag(a), 0u);
    starpu_data_advise_as_important(a, 1);
    EXPECT_EQ(starpu_data_prefetch_on_node_prio(a, STARPU_MAIN_RAM, 1, 5), 0);
    EXPECT_EQ(starpu_data_idle_prefetch_on_node_prio(a, STARPU_MAIN_RAM, 1, 5), 0);
    EXPECT_EQ(starpu_data_prefetch_on_node_prio(a, 4, 1, 5), -EINVAL);

    starpu_data_unregister(a);
    starpu_data_unregister(b);
    starpu_data_unregister(m);
    starpu_data_unregister(m2);
    starpu_shutdown();
}

TEST(StarpuExpertDeathTest, AllocSizeBelowTheDataIsRefused) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            start(1);
            starpu_data_handle_t h;
            starpu_vector_data_register_allocsize(&h, -1, 0, 100, sizeof(double), 8);
        },
        "allocsize is smaller than nx \\* elemsize");
}

void touch(void** /*buffers*/, void* /*arg*/) {}

std::atomic<long> g_hook_calls{0};
unsigned polling_hook(void* arg) {
    g_hook_calls.fetch_add(1);
    return static_cast<std::atomic<unsigned>*>(arg)->load();
}

TEST(StarpuExpert, ProgressionHookThatForbidsSleepKeepsWorkersPolling) {
    ASSERT_EQ(start(2), 0);
    std::atomic<unsigned> may_block{0};
    g_hook_calls = 0;
    const int id = starpu_progression_hook_register(polling_hook, &may_block);
    ASSERT_GE(id, 0);
    starpu_wake_all_blocked_workers();  // sleeping workers look again, and find the hook
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long a = g_hook_calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long b = g_hook_calls.load();
    EXPECT_GT(a, 0);
    EXPECT_GT(b, a) << "idle workers stopped calling a hook that returned 0";
    // Letting them sleep: calls stop growing once every worker is asleep.
    may_block = 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const long c = g_hook_calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(g_hook_calls.load(), c) << "workers kept polling although the hook let them sleep";
    // A task's end makes the workers idle again: the hook runs again.
    starpu_codelet cl{};
    cl.cpu_funcs[0] = touch;  // run by a worker, which then finds nothing
    ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    starpu_task_wait_for_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GT(g_hook_calls.load(), c);
    starpu_progression_hook_deregister(id);
    may_block = 0;
    starpu_wake_all_blocked_workers();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long d = g_hook_calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(g_hook_calls.load(), d) << "a deregistered hook is still called";
    starpu_shutdown();
}

TEST(StarpuExpert, HookTableIsBoundedAndBadIdsAreRefused) {
    ASSERT_EQ(start(1), 0);
    std::atomic<unsigned> yes{1};
    std::vector<int> ids;
    for (int i = 0; i < 16; ++i) {
        const int id = i % 2 == 0 ? starpu_progression_hook_register(polling_hook, &yes)
                                  : starpu_idle_hook_register(polling_hook, &yes);
        ASSERT_GE(id, 0);
        ids.push_back(id);
    }
    EXPECT_EQ(starpu_idle_hook_register(polling_hook, &yes), -1);  // full
    EXPECT_EQ(starpu_progression_hook_register(nullptr, &yes), -1);
    starpu_progression_hook_deregister(ids[3]);
    EXPECT_EQ(starpu_idle_hook_register(polling_hook, &yes), ids[3]);  // the freed slot
    for (int id : ids) {
        starpu_idle_hook_deregister(id);
    }
    starpu_idle_hook_deregister(99);  // reported, nothing happens
    starpu_idle_hook_deregister(ids[0]);  // already gone: reported
    starpu_shutdown();
}

std::atomic<int> g_lock_results{0};
void lock_self_fn(void** /*buffers*/, void* /*arg*/) {
    starpu_worker_lock_self();
    const int w = starpu_worker_get_id();
    pthread_mutex_t* m = nullptr;
    pthread_cond_t* c = nullptr;
    starpu_worker_get_sched_condition(w, &m, &c);
    // The same mutex as starpu_worker_get_sched_condition's, held now.
    g_lock_results.fetch_add(pthread_mutex_trylock(m) == EBUSY ? 1 : 100);
    starpu_worker_unlock_self();
    if (pthread_mutex_trylock(m) == 0) {
        g_lock_results.fetch_add(1);
        pthread_mutex_unlock(m);
    }
}

TEST(StarpuExpert, WorkerLockIsTheSchedConditionMutex) {
    ASSERT_EQ(start(2), 0);
    starpu_worker_lock(1);
    EXPECT_NE(starpu_worker_trylock(1), 0);
    starpu_worker_unlock(1);
    ASSERT_EQ(starpu_worker_trylock(1), 0);
    starpu_worker_unlock(1);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = lock_self_fn;
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_lock_results.load(), 8);
    starpu_shutdown();
}

TEST(StarpuExpertDeathTest, WorkerLockMisuseIsReported) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            start(1);
            starpu_worker_lock_self();
        },
        "starpu_worker_lock_self.*outside a worker");
    EXPECT_DEATH(
        {
            start(1);
            starpu_worker_lock(7);
        },
        "starpu_worker_lock.*not a worker id");
}

std::atomic<int> g_callbacks{0};
void count_callback(void* arg) { g_callbacks.fetch_add(*static_cast<int*>(arg)); }

TEST(StarpuExpert, CallbackTaskCallsItsCallback) {
    ASSERT_EQ(start(2), 0);
    int three = 3;
    for (int i = 0; i < 5; ++i) {
        starpu_create_callback_task(count_callback, &three);
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_callbacks.load(), 15);
    starpu_shutdown();
}

TEST(StarpuExpert, TransferPredictionsAndPrefetchOfOneMemoryNode) {
    ASSERT_EQ(start(2), 0);
    EXPECT_EQ(starpu_transfer_bandwidth(0, 0), 0.0);
    EXPECT_EQ(starpu_transfer_latency(0, 0), 0.0);
    EXPECT_EQ(starpu_transfer_predict(0, 0, 1 << 20), 0.0);
    EXPECT_TRUE(std::isnan(starpu_transfer_bandwidth(0, 1)));
    EXPECT_TRUE(std::isnan(starpu_transfer_predict(0, 1, 8)));
    double x = 1;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, addr(&x), sizeof x);
    EXPECT_EQ(starpu_data_expected_transfer_time(h, STARPU_MAIN_RAM, STARPU_R), 0.0);
    EXPECT_TRUE(std::isnan(starpu_data_expected_transfer_time(h, 2, STARPU_R)));
    starpu_task* t = starpu_task_create();
    t->handles[0] = h;
    EXPECT_EQ(starpu_task_expected_data_transfer_time(STARPU_MAIN_RAM, t), 0.0);
    EXPECT_EQ(starpu_task_expected_data_transfer_time_for(t, 0), 0.0);
    EXPECT_EQ(starpu_task_expected_conversion_time(t, starpu_worker_get_perf_archtype(0, 0), 0), 0.0);
    EXPECT_EQ(starpu_prefetch_task_input_on_node(t, STARPU_MAIN_RAM), 0);
    EXPECT_EQ(starpu_idle_prefetch_task_input_on_node_prio(t, STARPU_MAIN_RAM, 3), 0);
    EXPECT_EQ(starpu_prefetch_task_input_for(t, 1), 0);
    EXPECT_EQ(starpu_idle_prefetch_task_input_for_prio(t, 0, 2), 0);
    EXPECT_EQ(starpu_prefetch_task_input_on_node(t, 1), -EINVAL);
    EXPECT_EQ(starpu_prefetch_task_input_for(t, 2), -EINVAL);  // 2 workers: 0 and 1
    EXPECT_EQ(starpu_prefetch_task_input_on_node(nullptr, 0), -EINVAL);
    t->destroy = 0;
    starpu_task_destroy(t);
    starpu_data_unregister(h);
    starpu_shutdown();
}

TEST(StarpuExpert, DataNamesAppearInTheTrace) {
    char path[] = "/tmp/mpc_expert_traceXXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    setenv("MPC_TG_TRACE", path, 1);
    ASSERT_EQ(start(1), 0);
    int x = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, addr(&x), sizeof x);
    starpu_data_set_name(h, "pressure \"p\"");
    starpu_codelet cl{};
    cl.cpu_funcs[0] = touch;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0);
    starpu_task_wait_for_all();
    char key[32];
    std::snprintf(key, sizeof key, "\"%p\"", static_cast<void*>(h));
    starpu_data_unregister(h);
    starpu_shutdown();
    unsetenv("MPC_TG_TRACE");
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string s = ss.str();
    std::remove(path);
    EXPECT_NE(s.find("\"data_names\""), std::string::npos) << s.substr(0, 400);
    EXPECT_NE(s.find(std::string(key) + ":\"pressure \\\"p\\\"\""), std::string::npos) << s.substr(0, 400);
    EXPECT_NE(s.find(std::string("\"handles\":[") + key), std::string::npos);  // the task names it the same way
}

}  // namespace
