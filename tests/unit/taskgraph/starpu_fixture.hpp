// The fixture of the StarPU C API tests: the runtime started through starpu_init with two
// workers (the configuration wins over the environment), stopped after each test.
#pragma once

#include <gtest/gtest.h>
#include <starpu.h>

namespace mpc::test {

class starpu_two_workers : public ::testing::Test {
protected:
    void SetUp() override {
        starpu_conf conf;
        ASSERT_EQ(starpu_conf_init(&conf), 0);
        conf.ncpus = 2;
        conf.precedence_over_environment_variables = 1;
        ASSERT_EQ(starpu_init(&conf), 0);
    }
    void TearDown() override {
        starpu_shutdown();
        EXPECT_FALSE(starpu_is_initialized());
    }
};

/// starpu_init with an application's policy (nullptr: the default one) and `ncpus` workers (the
/// configuration wins).
inline int start_with_policy(starpu_sched_policy* p, int ncpus) {
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.precedence_over_environment_variables = 1;
    conf.sched_policy = p;
    return starpu_init(&conf);
}

/// The data footprint starpu_task_data_footprint gives a one-buffer task reading h.
inline uint32_t read_footprint(starpu_data_handle_t h) {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = [](void**, void*) {};
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    starpu_task* t = starpu_task_create();
    t->cl = &cl;
    t->handles[0] = h;
    uint32_t fp = starpu_task_data_footprint(t);
    t->destroy = 0;  // never submitted: destroyed here
    starpu_task_destroy(t);
    return fp;
}

}  // namespace mpc::test
