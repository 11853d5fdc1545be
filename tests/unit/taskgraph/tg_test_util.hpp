// Helpers of the task-graph tests: a codelet whose body is a C++ callable, submission in one
// call, and a fixture that starts the runtime with a given number of workers and policy.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/sched.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::test {

/// cl_arg of the probe codelets: the body to run.
struct probe {
    std::function<void(void** buffers)> body;
};

inline void run_probe(void** buffers, void* arg) { static_cast<probe*>(arg)->body(buffers); }

/// A codelet running a probe, with n buffers whose modes come from each task.
inline tg::codelet probe_codelet(int nbuffers, const char* name = "probe") {
    tg::codelet cl;
    cl.name = name;
    cl.cpu_funcs[0] = &run_probe;
    cl.nbuffers = nbuffers;
    return cl;
}

/// Submits a task running p on the handles with the modes; returns it (the caller releases it).
inline tg::task* submit_probe(const tg::codelet& cl, probe* p, std::vector<tg::data*> hs,
                              std::vector<tg::access_mode> modes, int priority = tg::default_priority,
                              bool seq = true) {
    tg::task* t = *tg::task_create();
    tg::task_desc d;
    d.cl = &cl;
    d.handles = hs.data();
    d.modes = modes.data();
    d.nbuffers = static_cast<int>(hs.size());
    d.cl_arg = p;
    d.priority = priority;
    d.sequential_consistency = seq;
    status st = tg::submit(t, d);
    EXPECT_TRUE(st.ok()) << st.reason();
    return t;
}

/// A handle the application holds (acquired for writing) until let_go(): tasks that read it are
/// held back, which makes "B must not run before A" observable.
struct held {
    long g = 0;
    tg::data* h = nullptr;
    held() {
        EXPECT_TRUE(tg::register_variable(&h, &g, sizeof g).ok());
        EXPECT_TRUE(tg::acquire(h, tg::access_write).ok());
    }
    held(const held&) = delete;
    held& operator=(const held&) = delete;
    void let_go() { EXPECT_TRUE(tg::release(h).ok()); }
    ~held() { EXPECT_TRUE(tg::unregister(h).ok()); }
};

/// A one-buffer task description (for submissions expected to fail).
inline tg::task_desc one_buffer(const tg::codelet* cl, tg::data** h, tg::access_mode* m, probe* p) {
    tg::task_desc d;
    d.cl = cl;
    d.handles = h;
    d.modes = m;
    d.nbuffers = 1;
    d.cl_arg = p;
    return d;
}

inline const char* mode_name(tg::access_mode m) {
    return m == tg::access_read ? "R" : m == tg::access_write ? "W" : "RW";
}

/// Every policy of the table (policy.cpp): the generic tests run under each.
inline const char* const all_policies[] = {"eager", "prio", "modular-eager", "modular-prio", "random", "ws",
                                           "lws", "dm", "dmda", "dmdas", "heteroprio", "peager", "pheft"};

/// Starts the runtime with GetParam() = (workers, policy); one VP per worker.
class tg_fixture : public ::testing::TestWithParam<std::tuple<int, const char*>> {
protected:
    void SetUp() override {
        tg::config c;
        c.ncpus = std::get<0>(GetParam());
        c.sched = std::get<1>(GetParam());
        c.config_over_env = true;
        status st = tg::init(c);
        ASSERT_TRUE(st.ok()) << st.reason();
    }
    void TearDown() override {
        status st = tg::shutdown();
        EXPECT_TRUE(st.ok()) << st.reason();
        EXPECT_FALSE(sched::initialized()) << "shutdown must stop the engine that init started";
    }
    int workers() const { return std::get<0>(GetParam()); }
};

inline std::string param_name(const ::testing::TestParamInfo<std::tuple<int, const char*>>& i) {
    std::string name = std::string(std::get<1>(i.param)) + "_" + std::to_string(std::get<0>(i.param)) + "w";
    for (char& c : name) {
        c = c == '-' ? '_' : c;  // gtest names: letters, digits, underscores
    }
    return name;
}

}  // namespace mpc::test
