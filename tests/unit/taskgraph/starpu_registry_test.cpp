// starpu_data_lookup (which handle holds a pointer), memory accounting of the application's
// blocks (STARPU_MALLOC_COUNT, starpu_memory_allocate) and binding application threads
// (starpu_get_next_bindid, starpu_bind_thread_on), and task bundles: each was missing before.
#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu_fxt.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>

#include "../env_guard.hpp"
#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "starpu_fixture.hpp"

namespace {

using StarpuRegistry = mpc::test::starpu_two_workers;

void fill(void** buffers, void*) {
    auto* v = reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i) {
        v[i] = static_cast<float>(i);
    }
}

TEST_F(StarpuRegistry, LookupFindsRegisteredPointersUntilUnregistered) {
    float a[16] = {}, b[16] = {};
    starpu_data_handle_t ha, hb, again;
    EXPECT_EQ(starpu_data_lookup(a), nullptr);
    EXPECT_EQ(starpu_data_lookup(nullptr), nullptr);
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a), 16, sizeof(float));
    starpu_vector_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b), 16, sizeof(float));
    EXPECT_EQ(starpu_data_lookup(a), ha);
    EXPECT_EQ(starpu_data_lookup(b), hb);
    EXPECT_EQ(starpu_data_lookup(a + 1), nullptr) << "only where the data starts";
    starpu_variable_data_register(&again, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a), sizeof(float));
    EXPECT_EQ(starpu_data_lookup(a), ha) << "the first registered answers";
    starpu_data_unregister(ha);
    EXPECT_EQ(starpu_data_lookup(a), again);
    starpu_data_unregister(again);
    starpu_data_unregister(hb);
    EXPECT_EQ(starpu_data_lookup(a), nullptr);
    EXPECT_EQ(starpu_data_lookup(b), nullptr);
}

TEST_F(StarpuRegistry, LookupFindsMemoryTheRuntimeMadeOnceItExists) {
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, -1, 0, 64, sizeof(float));
    starpu_codelet cl{};
    cl.cpu_funcs[0] = fill;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_W;
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, h, 0), 0);
    ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
    void* p = starpu_data_get_local_ptr(h);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(static_cast<float*>(p)[63], 63.0f);
    EXPECT_EQ(starpu_data_lookup(p), h);
    starpu_data_release(h);
    starpu_data_unregister(h);
}

TEST_F(StarpuRegistry, APartitionedHandleGivesWayToItsChildren) {
    int v[100] = {};
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v), 100, sizeof(int));
    starpu_data_filter f{};
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = 4;
    starpu_data_partition(h, &f);
    for (int i = 0; i < 4; ++i) {
        starpu_data_handle_t c = starpu_data_get_sub_data(h, 1, i);
        EXPECT_EQ(starpu_data_lookup(starpu_data_get_local_ptr(c)), c) << "child " << i;
    }
    EXPECT_EQ(starpu_data_lookup(v), starpu_data_get_sub_data(h, 1, 0)) << "the parent is partitioned";
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    EXPECT_EQ(starpu_data_lookup(v), h) << "the parent is back";
    EXPECT_EQ(starpu_data_lookup(v + 25), nullptr) << "the children are gone";
    starpu_data_unregister(h);
}

// STARPU_HAVE_HWLOC: the workers' cpusets and objects come from the runtime's topology.
TEST_F(StarpuRegistry, WorkersCpusetsAreTheirVpsPus) {
#ifndef STARPU_HAVE_HWLOC
    FAIL() << "STARPU_HAVE_HWLOC is not defined";
#else
    hwloc_topology_t topo = starpu_get_hwloc_topology();
    ASSERT_NE(topo, nullptr);
    hwloc_cpuset_t all = hwloc_bitmap_alloc();
    for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
        hwloc_obj_t obj = starpu_worker_get_hwloc_obj(static_cast<int>(w));
        ASSERT_NE(obj, nullptr);
        EXPECT_EQ(obj->type, HWLOC_OBJ_PU);
        EXPECT_EQ(static_cast<int>(obj->os_index), mpc::sched::vp_place(starpu_worker_get_bindid(static_cast<int>(w))).pu);
        hwloc_cpuset_t set = starpu_worker_get_hwloc_cpuset(static_cast<int>(w));
        EXPECT_EQ(hwloc_bitmap_weight(set), 1);
        EXPECT_TRUE(hwloc_bitmap_isset(set, obj->os_index));
        hwloc_bitmap_or(all, all, set);
        hwloc_bitmap_free(set);
    }
    EXPECT_GE(hwloc_bitmap_weight(all), 1);
    hwloc_bitmap_free(all);
    EXPECT_EQ(starpu_worker_get_hwloc_obj(1000), nullptr);
    hwloc_cpuset_t none = starpu_worker_get_hwloc_cpuset(-1);
    EXPECT_TRUE(hwloc_bitmap_iszero(none));
    hwloc_bitmap_free(none);
#endif
}

// starpu_worker_tree: filled in any order, walked in the machine's order.
TEST_F(StarpuRegistry, AWorkerTreeWalksTheWorkersInTheMachinesOrder) {
    starpu_worker_collection co{};
    co = starpu_worker_tree;
    EXPECT_EQ(co.type, STARPU_WORKER_TREE);
    co.init(&co);
    const int n = static_cast<int>(starpu_worker_get_count());
    for (int w = n - 1; w >= 0; --w) {
        EXPECT_EQ(co.add(&co, w), w);
    }
    EXPECT_EQ(co.add(&co, 0), -1) << "already there";
    auto key = [](int w) {
        const mpc::topo::place p = mpc::sched::vp_place(starpu_worker_get_bindid(w));
        return std::tuple(p.numa, p.core, p.pu);
    };
    starpu_sched_ctx_iterator it;
    co.init_iterator(&co, &it);
    int seen = 0;
    int last = -1;
    while (co.has_next(&co, &it)) {
        const int w = co.get_next(&co, &it);
        if (last >= 0) {
            EXPECT_LE(key(last), key(w)) << "worker " << last << " before " << w;
        }
        last = w;
        ++seen;
    }
    EXPECT_EQ(seen, n);
    EXPECT_EQ(co.remove(&co, 0), 0);
    EXPECT_EQ(co.remove(&co, 0), -1);
    EXPECT_EQ(co.nworkers, static_cast<unsigned>(n - 1));
    co.deinit(&co);
}

// Per-device cost functions (StarPU 1.3's starpu_perfmodel_set_per_devices_cost_function).
double cpu_cost(starpu_task*, starpu_perfmodel_arch* arch, unsigned nimpl) {
    return arch != nullptr && arch->ndevices == 1 && arch->devices[0].type == STARPU_CPU_WORKER ? 42.0 + nimpl : -1.0;
}
double gpu_cost(starpu_task*, starpu_perfmodel_arch*, unsigned) { return 1.0; }

TEST_F(StarpuRegistry, PerDevicesCostFunctionsAnswerForTheCpuWorkers) {
    starpu_perfmodel model{};
    model.type = STARPU_PER_ARCH;
    model.symbol = "per_devices_test";
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) {};
    cl.model = &model;
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->destroy = 0;
    starpu_perfmodel_arch* cpu = starpu_worker_get_perf_archtype(0, 0);
    EXPECT_TRUE(std::isnan(starpu_task_expected_length(t, cpu, 0))) << "no function yet";
    EXPECT_EQ(starpu_perfmodel_set_per_devices_cost_function(&model, 0, gpu_cost, STARPU_CUDA_WORKER, 0, 1, -1), 0);
    EXPECT_TRUE(std::isnan(starpu_task_expected_length(t, cpu, 0))) << "a GPU combination: not the CPU workers'";
    EXPECT_EQ(starpu_perfmodel_set_per_devices_cost_function(&model, 0, cpu_cost, STARPU_CPU_WORKER, 0, 1, -1), 0);
    EXPECT_DOUBLE_EQ(starpu_task_expected_length(t, cpu, 0), 42.0);
    EXPECT_EQ(starpu_perfmodel_set_per_devices_cost_function(&model, 0, cpu_cost, -1), -EINVAL) << "no device";
    EXPECT_EQ(starpu_perfmodel_set_per_devices_cost_function(&model, STARPU_MAXIMPLEMENTATIONS, cpu_cost,
                                                             STARPU_CPU_WORKER, 0, 1, -1),
              -EINVAL);
    starpu_task_destroy(t);
}

// Counted blocks share the runtime's memory limit with its own data allocations.
class StarpuCounted : public ::testing::Test {
protected:
    mpc::test::env_guard limit{"STARPU_LIMIT_CPU_NUMA_MEM", "4"};  // MiB: StarPU's name for node 0's limit
    void SetUp() override {
        starpu_conf conf;
        ASSERT_EQ(starpu_conf_init(&conf), 0);
        conf.ncpus = 2;
        ASSERT_EQ(starpu_init(&conf), 0);
    }
    void TearDown() override { starpu_shutdown(); }
};

void touch_w(void** buffers, void*) { static_cast<char*>(reinterpret_cast<void*>(STARPU_VARIABLE_GET_PTR(buffers[0])))[0] = 1; }

TEST_F(StarpuCounted, CountedBlocksShareTheLimitWithTheRuntimesData) {
    constexpr size_t mib = 1 << 20;
    EXPECT_EQ(starpu_memory_get_total(STARPU_MAIN_RAM), static_cast<starpu_ssize_t>(4 * mib));
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(starpu_malloc_flags(&a, 3 * mib, STARPU_MALLOC_COUNT), 0);
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), static_cast<starpu_ssize_t>(mib));
    EXPECT_EQ(starpu_malloc_flags(&b, 2 * mib, STARPU_MALLOC_COUNT), -ENOMEM);
    EXPECT_EQ(b, nullptr);
    ASSERT_EQ(starpu_malloc_flags(&b, 2 * mib, 0), 0) << "not counted: not limited";
    starpu_free_flags(b, 2 * mib, 0);
    ASSERT_EQ(starpu_malloc_flags(&b, 2 * mib, STARPU_MALLOC_COUNT | STARPU_MALLOC_NORECLAIM), 0)
        << "NORECLAIM: taken beyond the limit";
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), 0);
    starpu_free_flags(b, 2 * mib, STARPU_MALLOC_COUNT);
    // A handle the runtime makes memory for no longer fits beside the counted block.
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, -1, 0, 2 * mib);
    starpu_codelet cl{};
    cl.cpu_funcs[0] = touch_w;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_W;
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_W, h, 0), -ENOMEM);
    starpu_free_flags(a, 3 * mib, STARPU_MALLOC_COUNT);
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), static_cast<starpu_ssize_t>(4 * mib));
    EXPECT_EQ(starpu_task_insert(&cl, STARPU_W, h, 0), 0) << "room again";
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    starpu_data_unregister(h);
    // Accounting alone.
    EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, 3 * mib, 0), 0);
    EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, 2 * mib, 0), -ENOMEM);
    EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, 2 * mib, STARPU_MEMORY_OVERFLOW), 0);
    starpu_memory_deallocate(STARPU_MAIN_RAM, 2 * mib);
    starpu_memory_deallocate(STARPU_MAIN_RAM, mib);
    starpu_memory_deallocate(STARPU_MAIN_RAM, 2 * mib);
    starpu_memory_wait_available(STARPU_MAIN_RAM, 4 * mib);  // there: returns at once
    EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), static_cast<starpu_ssize_t>(4 * mib));
    EXPECT_EQ(starpu_memory_allocate(1, 1, 0), -EINVAL) << "main memory is the only node";
    void* c = nullptr;
    EXPECT_EQ(starpu_malloc_flags(&c, 16, 1 << 9), -EINVAL) << "an unknown flag";
}

// reserve_ncpus leaves VP 0 without a worker (the workers take the last VPs): the program's
// threads may bind there.
class StarpuBind : public ::testing::Test {
protected:
    void SetUp() override {
        starpu_conf conf;
        ASSERT_EQ(starpu_conf_init(&conf), 0);
        conf.ncpus = 2;
        conf.reserve_ncpus = 1;
        conf.precedence_over_environment_variables = 1;
        ASSERT_EQ(starpu_init(&conf), 0);
    }
    void TearDown() override { starpu_shutdown(); }
};

TEST_F(StarpuBind, ActiveAndPassiveThreadsGetTheReservedCpus) {
    ASSERT_EQ(starpu_worker_get_count(), 1u);
    const int worker_vp = starpu_worker_get_bindid(0);
    const unsigned active = starpu_get_next_bindid(STARPU_THREAD_ACTIVE, nullptr, 0);
    EXPECT_NE(static_cast<int>(active), worker_vp) << "a CPU no worker holds";
    EXPECT_EQ(starpu_bind_thread_on(static_cast<int>(active), STARPU_THREAD_ACTIVE, "main"), 0);
    EXPECT_EQ(mpc::sched::current_vp(), static_cast<int>(active)) << "the program's main moved there";
    EXPECT_EQ(starpu_bind_thread_on(static_cast<int>(active), STARPU_THREAD_ACTIVE, "main"), 0)
        << "the same name again: no conflict";
    // Every CPU is held now: the next passive id starts over (overloading), and a second
    // passive request shares it.
    const unsigned p1 = starpu_get_next_bindid(0, nullptr, 0);
    const unsigned p2 = starpu_get_next_bindid(0, nullptr, 0);
    EXPECT_EQ(p1, p2);
    EXPECT_EQ(starpu_bind_thread_on(worker_vp, 0, "helper"), -1) << "a worker holds it: a warning";
    EXPECT_EQ(mpc::sched::current_vp(), worker_vp);
    // A plain thread is pinned instead of moved.
    int rc = 1;
    std::thread t([&] { rc = starpu_bind_thread_on(static_cast<int>(active), 0, "other"); });
    t.join();
    EXPECT_EQ(rc, -1) << "an active thread of another name holds it";
    EXPECT_EQ(starpu_bind_thread_on(-1, 0, "nothing"), 0);
    EXPECT_EQ(starpu_bind_thread_on(1000, 0, "nowhere"), -1);
    EXPECT_EQ(mpc::sched::move_to(0).ok(), true);
}

std::atomic<int> g_bundled_runs{0};
void bundled(void**, void*) { g_bundled_runs.fetch_add(1); }
double ten_us(starpu_task*, unsigned) { return 10.0; }

// Bundles: StarPU's return codes, tasks leaving at clean, and a model-based policy placing
// bundled tasks (dmda uses the bundle's remaining length).
TEST(StarpuBundle, InsertRemoveCloseAndPlacement) {
    starpu_conf conf;
    ASSERT_EQ(starpu_conf_init(&conf), 0);
    conf.ncpus = 2;
    conf.sched_policy_name = "dmda";
    conf.precedence_over_environment_variables = 1;
    ASSERT_EQ(starpu_init(&conf), 0);
    starpu_perfmodel model{};
    model.type = STARPU_COMMON;
    model.cost_function = ten_us;
    model.symbol = "bundle_test";
    starpu_codelet cl{};
    cl.cpu_funcs[0] = bundled;
    cl.model = &model;
    starpu_task_bundle_t b;
    starpu_task_bundle_create(&b);
    constexpr int n = 6;
    starpu_task* t[n];
    for (auto& x : t) {
        x = starpu_task_create();
        x->cl = &cl;
        x->destroy = 0;
        ASSERT_EQ(starpu_task_bundle_insert(b, x), 0);
        EXPECT_EQ(x->bundle, b);
    }
    EXPECT_DOUBLE_EQ(starpu_task_bundle_expected_length(b, nullptr, 0), n * 10.0);
    EXPECT_EQ(starpu_task_bundle_remove(b, t[2]), 0);
    EXPECT_EQ(t[2]->bundle, nullptr);
    EXPECT_EQ(starpu_task_bundle_remove(b, t[2]), -ENOENT) << "not in it any more";
    EXPECT_DOUBLE_EQ(starpu_task_bundle_expected_length(b, nullptr, 0), (n - 1) * 10.0);
    g_bundled_runs = 0;
    for (auto* x : t) {
        ASSERT_EQ(starpu_task_submit(x), 0);
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(g_bundled_runs.load(), n);
    EXPECT_DOUBLE_EQ(starpu_task_bundle_expected_length(b, nullptr, 0), 0.0) << "every task is placed";
    starpu_task* late = starpu_task_create();
    late->cl = &cl;
    late->destroy = 0;
    ASSERT_EQ(starpu_task_submit(late), 0);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_EQ(starpu_task_bundle_insert(b, late), -EINVAL) << "submitted already";
    starpu_task_bundle_close(b);
    starpu_task* more = starpu_task_create();
    more->destroy = 0;
    EXPECT_EQ(starpu_task_bundle_insert(b, more), -EPERM) << "closed";
    starpu_task_destroy(more);
    starpu_task_destroy(late);
    for (auto* x : t) {
        starpu_task_destroy(x);  // the last one out of the closed bundle frees it
    }
    starpu_task_bundle_t empty;
    starpu_task_bundle_create(&empty);
    starpu_task_bundle_close(empty);  // freed at once
    starpu_shutdown();
}

}  // namespace

namespace {

// ---- the bound, coordinates, per-arch model records, trace controls ---------------------------

double fixed_cost(struct starpu_task*, struct starpu_perfmodel_arch*, unsigned) { return 500.0; }  // µs

TEST_F(StarpuRegistry, TheBoundIsTheRecordedWorkSpreadOverTheWorkers) {
    static starpu_perfmodel model;
    model = starpu_perfmodel{};
    model.type = STARPU_PER_ARCH;
    model.symbol = "tg_bound_model";
    starpu_perfmodel_init(&model);
    starpu_perfmodel_per_arch* pa = starpu_perfmodel_get_model_per_devices(&model, 0, STARPU_CPU_WORKER, 0, 1, -1);
    ASSERT_NE(pa, nullptr);
    pa->cost_function = fixed_cost;  // written in the record, as StarPU's cholesky example does
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) {};
    cl.model = &model;
    cl.name = "bounded";
    starpu_task* probe = starpu_task_create();
    probe->cl = &cl;
    starpu_perfmodel_arch* cpu = starpu_worker_get_perf_archtype(0, 0);
    EXPECT_DOUBLE_EQ(starpu_task_expected_length(probe, cpu, 0), 500.0) << "the record's function answers";
    probe->destroy = 0;
    starpu_task_destroy(probe);
    EXPECT_EQ(starpu_perfmodel_get_model_per_arch(&model, cpu, 0), pa) << "the same record";

    starpu_bound_start(0, 0);
    for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    starpu_bound_stop();
    ASSERT_EQ(starpu_task_insert(&cl, 0), 0);  // not recorded
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    double res = 0;
    double ires = 0;
    starpu_bound_compute(&res, &ires, 1);
    EXPECT_DOUBLE_EQ(res, 8 * 0.5 / 2) << "8 tasks of 0.5 ms on 2 workers";
    EXPECT_DOUBLE_EQ(ires, res);
    char buf[8192] = {};
    FILE* f = fmemopen(buf, sizeof buf, "w");
    starpu_bound_print_lp(f);
    std::fclose(f);
    EXPECT_NE(std::strstr(buf, "min: tmax;"), nullptr);
    EXPECT_NE(std::strstr(buf, " = 8;"), nullptr) << "the class's count: " << buf;
    f = fmemopen(buf, sizeof buf, "w");
    starpu_bound_print_mps(f);
    std::fclose(f);
    EXPECT_NE(std::strstr(buf, "ENDATA"), nullptr);
}

TEST_F(StarpuRegistry, CoordinatesAreKeptWithTheHandle) {
    int x = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
    starpu_data_set_coordinates(h, 2, 3, 7);
    int dims[4] = {};
    EXPECT_EQ(starpu_data_get_coordinates_array(h, 4, dims), 2u);
    EXPECT_EQ(dims[0], 3);
    EXPECT_EQ(dims[1], 7);
    starpu_data_unregister(h);
}

TEST_F(StarpuRegistry, FxtControlsWithoutATraceDoNothingHarmful) {
    EXPECT_EQ(starpu_fxt_is_enabled(), 0) << "MPC_TG_TRACE is not set";
    starpu_fxt_stop_profiling();
    starpu_fxt_trace_user_event(42);
    starpu_fxt_trace_user_event_string("mark");
    starpu_fxt_start_profiling();
}

}  // namespace
