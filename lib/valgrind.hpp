/// \file
/// Valgrind's client requests, when its header is installed (Debian's valgrind package): each
/// is a few instructions that do nothing outside Valgrind. MPC_VALGRIND is 1 when they are
/// available (scheduler/context.hpp registers the ULT stacks with them).
#pragma once

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MPC_VALGRIND 1
#endif

namespace mpc {

/// Whether the process runs under Valgrind (false when built without its header).
inline bool running_on_valgrind() noexcept {
#if MPC_VALGRIND
    return RUNNING_ON_VALGRIND != 0;
#else
    return false;
#endif
}

}  // namespace mpc
