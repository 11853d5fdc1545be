// The StarPU C API of scheduling and performance models: policy selection through
// STARPU_SCHED, cost-function models, footprints, expected length and energy,
// starpu_perfmodel_update_history, loading models by symbol and by file (a missing model
// answers 1, as StarPU 1.3.10 does).

#include <gtest/gtest.h>
#include <starpu.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

void nop(void** /*buffers*/, void* /*arg*/) {}

double common_cost(struct starpu_task* t, unsigned /*nimpl*/) { return 10.0 * starpu_vector_get_nx(t->handles[0]); }
double arch_cost(struct starpu_task* /*t*/, struct starpu_perfmodel_arch* arch, unsigned /*nimpl*/) {
    return arch != nullptr && arch->ndevices == 1 && arch->devices[0].type == STARPU_CPU_WORKER ? 5.0 : -1.0;
}
uint32_t fixed_footprint(struct starpu_task* /*t*/) { return 0x5eed; }

class StarpuSched : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("mpc_tg_starpu_models_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        setenv("STARPU_PERF_MODEL_DIR", dir_.c_str(), 1);
        setenv("STARPU_NCPU", "2", 1);
        starpu_perfmodel_free_sampling();
    }
    void TearDown() override {
        unsetenv("STARPU_PERF_MODEL_DIR");
        unsetenv("STARPU_NCPU");
        unsetenv("STARPU_SCHED");
        starpu_perfmodel_free_sampling();
        std::filesystem::remove_all(dir_);
    }
    /// A task (not submitted) of codelet cl on h.
    static struct starpu_task* task_on(struct starpu_codelet* cl, starpu_data_handle_t h) {
        struct starpu_task* t = starpu_task_create();
        t->cl = cl;
        t->handles[0] = h;
        t->destroy = 0;
        return t;
    }
    std::filesystem::path dir_;
};

TEST_F(StarpuSched, EveryPolicyByNameAndUnknownOnesRefused) {
    for (const char* name : {"eager", "prio", "random", "ws", "lws", "dm", "dmda", "dmdas", "heteroprio", "peager", "pheft"}) {
        setenv("STARPU_SCHED", name, 1);
        ASSERT_EQ(starpu_init(nullptr), 0) << name;
        static struct starpu_codelet cl;
        starpu_codelet_init(&cl);
        cl.cpu_funcs[0] = &nop;
        for (int i = 0; i < 50; ++i) {
            ASSERT_EQ(starpu_task_insert(&cl, STARPU_PRIORITY, i % 3, 0), 0);
        }
        EXPECT_EQ(starpu_task_wait_for_all(), 0);
        starpu_shutdown();
    }
    setenv("STARPU_SCHED", "fifo-ish", 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(starpu_init(nullptr), -EINVAL);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("fifo-ish"), std::string::npos) << err;
    EXPECT_NE(err.find("dmdas"), std::string::npos) << err;
}

TEST_F(StarpuSched, CostFunctionModels) {
    float v[7];
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(v), 7, sizeof(v[0]));
    struct starpu_perfmodel common = {};
    common.type = STARPU_COMMON;
    common.cost_function = &common_cost;
    struct starpu_perfmodel per_arch = {};
    per_arch.type = STARPU_PER_ARCH;
    per_arch.arch_cost_function = &arch_cost;
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = &nop;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    struct starpu_task* t = task_on(&cl, h);
    EXPECT_EQ(starpu_task_expected_length(t, nullptr, 0), 0.0) << "no model";
    EXPECT_EQ(starpu_task_expected_energy(t, nullptr, 0), 0.0) << "no energy model";
    cl.model = &common;
    EXPECT_DOUBLE_EQ(starpu_task_expected_length(t, nullptr, 0), 70.0);
    cl.model = &per_arch;
    struct starpu_perfmodel_device dev = {STARPU_CPU_WORKER, 0, 1};
    struct starpu_perfmodel_arch cpu = {1, &dev};
    EXPECT_DOUBLE_EQ(starpu_task_expected_length(t, &cpu, 0), 5.0);
    EXPECT_DOUBLE_EQ(starpu_worker_get_relative_speedup(&cpu), 1.0);
    char name[32];
    starpu_perfmodel_get_arch_name(&cpu, name, sizeof name, 0);
    EXPECT_STREQ(name, "cpu_impl0");
    starpu_task_destroy(t);
    starpu_data_unregister(h);
}

TEST_F(StarpuSched, HistoryFedByUpdateHistoryStoredAndLoadedBack) {
    ASSERT_EQ(starpu_init(nullptr), 0);
    EXPECT_NE(starpu_worker_get_perf_archtype(0, STARPU_NMAX_SCHED_CTXS), nullptr);
    EXPECT_EQ(starpu_worker_get_perf_archtype(99, 0), nullptr);
    float a[16], b[16], c[32];
    starpu_data_handle_t ha, hb, hc;
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a), 16, sizeof(a[0]));
    starpu_vector_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b), 16, sizeof(b[0]));
    starpu_vector_data_register(&hc, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(c), 32, sizeof(c[0]));
    static struct starpu_perfmodel hist;
    std::memset(&hist, 0, sizeof hist);
    hist.type = STARPU_HISTORY_BASED;
    hist.symbol = "mpc_test_update_history";
    static struct starpu_perfmodel energy;
    std::memset(&energy, 0, sizeof energy);
    energy.type = STARPU_HISTORY_BASED;
    energy.symbol = "mpc_test_energy";
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = &nop;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    cl.model = &hist;
    cl.energy_model = &energy;
    struct starpu_task* ta = task_on(&cl, ha);
    struct starpu_task* tb = task_on(&cl, hb);
    struct starpu_task* tc = task_on(&cl, hc);
    EXPECT_EQ(starpu_task_data_footprint(ta), starpu_task_data_footprint(tb)) << "same sizes";
    EXPECT_NE(starpu_task_data_footprint(ta), starpu_task_data_footprint(tc));
    struct starpu_perfmodel_arch* arch = starpu_worker_get_perf_archtype(0, 0);
    EXPECT_TRUE(std::isnan(starpu_task_expected_length(ta, arch, 0)));
    for (int i = 0; i < 10; ++i) {
        starpu_perfmodel_update_history(&hist, ta, arch, 0, 0, 25.0);
        starpu_perfmodel_update_history(&energy, ta, arch, 0, 0, 3.0);
    }
    EXPECT_DOUBLE_EQ(starpu_task_expected_length(ta, arch, 0), 25.0);
    EXPECT_DOUBLE_EQ(starpu_task_expected_length(tb, arch, 0), 25.0) << "same footprint";
    EXPECT_TRUE(std::isnan(starpu_task_expected_length(tc, arch, 0))) << "other footprint";
    EXPECT_DOUBLE_EQ(starpu_task_expected_energy(ta, arch, 0), 3.0);
    const uint32_t fp = starpu_task_footprint(&hist, ta, arch, 0);
    EXPECT_DOUBLE_EQ(starpu_perfmodel_history_based_expected_perf(&hist, arch, fp), 25.0);
    // The application's footprint function replaces the data's.
    static struct starpu_perfmodel keyed;
    std::memset(&keyed, 0, sizeof keyed);
    keyed.type = STARPU_HISTORY_BASED;
    keyed.symbol = "mpc_test_keyed";
    keyed.footprint = &fixed_footprint;
    EXPECT_EQ(starpu_task_footprint(&keyed, tc, arch, 0), 0x5eedu);
    for (struct starpu_task* t : {ta, tb, tc}) {
        starpu_task_destroy(t);
    }
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
    starpu_data_unregister(hc);
    starpu_shutdown();  // stores the models

    char path[1024];
    starpu_perfmodel_get_model_path("mpc_test_update_history", path, sizeof path);
    EXPECT_EQ(std::string(path).rfind(dir_.string(), 0), 0u) << path;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    struct starpu_perfmodel loaded;
    std::memset(&loaded, 0, sizeof loaded);
    ASSERT_EQ(starpu_perfmodel_load_symbol("mpc_test_update_history", &loaded), 0);
    EXPECT_EQ(loaded.type, STARPU_HISTORY_BASED);
    EXPECT_EQ(loaded.is_loaded, 1u);
    EXPECT_DOUBLE_EQ(starpu_perfmodel_history_based_expected_perf(&loaded, nullptr, fp), 25.0);
    EXPECT_EQ(starpu_perfmodel_unload_model(&loaded), 0);
    struct starpu_perfmodel from_file;
    std::memset(&from_file, 0, sizeof from_file);
    ASSERT_EQ(starpu_perfmodel_load_file(path, &from_file), 0);
    EXPECT_STREQ(from_file.symbol, "mpc_test_update_history");
    std::memset(&from_file, 0, sizeof from_file);
    EXPECT_EQ(starpu_perfmodel_load_symbol("mpc_test_no_such_model", &from_file), 1) << "StarPU's answer";
    {
        std::ofstream out(path, std::ios::trunc);
        out << "mpc-perfmodel 1\nsymbol mpc_test_update_history\ntype history\narch cpu\nentry 1 2\n";
    }
    ::testing::internal::CaptureStderr();
    std::memset(&from_file, 0, sizeof from_file);
    EXPECT_EQ(starpu_perfmodel_load_symbol("mpc_test_update_history", &from_file), -EINVAL);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("ignored"), std::string::npos) << err;
}

}  // namespace
