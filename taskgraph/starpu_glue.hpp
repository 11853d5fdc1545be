/// \file
/// Shared helpers of the StarPU C API files (starpu_*.cpp): error mapping and fatal errors.
#pragma once

#include "lib/status.hpp"
#include "taskgraph/tg.hpp"

struct starpu_task;

namespace mpc::tg::starpu {

/// 0, or the negative errno value StarPU returns for the same failure.
int errno_of(const status& st) noexcept;
/// Ends the program with one line naming the call and the reason, as StarPU's assertions do,
/// for misuse that a void function cannot report.
[[noreturn]] void fatal(const char* call, const char* reason) noexcept;
/// starpu_task_submit().
int submit(starpu_task* t) noexcept;
/// Fills d's model fields from t's codelet's performance model (starpu_perfmodel.cpp); d's
/// handles and buffer count must be set.
void fill_model(starpu_task* t, task_desc* d) noexcept;

}  // namespace mpc::tg::starpu
