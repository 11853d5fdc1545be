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

}  // namespace mpc::test
