/// \file
/// Execution contexts and the one place where the runtime switches stacks.
///
/// A context is a Boost.Context fcontext (a few registers pushed on the suspended stack; the
/// switch never enters the kernel) plus what the sanitizers need to follow the switch:
/// ASan's fake-stack handle and the stack bounds of the destination, TSan's fiber handle.
/// Both annotations compile away in normal builds.
#pragma once

#include <boost/context/detail/fcontext.hpp>
#include <cstddef>

#include "lib/sanitizers.hpp"
#include "lib/valgrind.hpp"

#if MPC_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if MPC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace mpc::sched::detail {

namespace bctx = boost::context::detail;

struct exec_ctx {
    bctx::fcontext_t fctx = nullptr;
    const void* stack_lo = nullptr;  ///< lowest usable address, for ASan
    std::size_t stack_size = 0;
    void* asan_fake = nullptr;
    void* tsan_fiber = nullptr;
    unsigned vg_stack = 0;  ///< Valgrind's id of the stack (0: none registered)
};

/// Tells Valgrind that [lo, lo + size) is a stack, so that a switch onto it is seen as a stack
/// switch and not as a huge frame (without it memcheck reports every ULT's first accesses).
/// Free outside Valgrind: the client request is a few instructions that do nothing.
inline void vg_register_stack(exec_ctx& c, const void* lo, std::size_t size) noexcept {
#if MPC_VALGRIND
    c.vg_stack = VALGRIND_STACK_REGISTER(lo, static_cast<const char*>(lo) + size);
#else
    (void)c;
    (void)lo;
    (void)size;
#endif
}
inline void vg_deregister_stack(exec_ctx& c) noexcept {
#if MPC_VALGRIND
    if (c.vg_stack != 0) {
        VALGRIND_STACK_DEREGISTER(c.vg_stack);
        c.vg_stack = 0;
    }
#else
    (void)c;
#endif
}

/// Tells the sanitizers that we are about to leave `from` for `to`. An exiting context passes
/// exiting=true so ASan frees its fake stack.
inline void annotate_leave(exec_ctx* from, const exec_ctx* to, bool exiting) noexcept {
#if MPC_ASAN
    __sanitizer_start_switch_fiber(exiting ? nullptr : &from->asan_fake, to->stack_lo, to->stack_size);
#else
    (void)from;
    (void)exiting;
#endif
#if MPC_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#else
    (void)to;
#endif
}

/// Tells ASan that `self` is running again (first thing after a switch lands).
inline void annotate_arrive(exec_ctx* self) noexcept {
#if MPC_ASAN
    __sanitizer_finish_switch_fiber(self->asan_fake, nullptr, nullptr);
#else
    (void)self;
#endif
}

inline void* tsan_new_fiber() noexcept {
#if MPC_TSAN
    return __tsan_create_fiber(0);
#else
    return nullptr;
#endif
}
inline void* tsan_current_fiber() noexcept {
#if MPC_TSAN
    return __tsan_get_current_fiber();
#else
    return nullptr;
#endif
}
inline void tsan_free_fiber(void* f) noexcept {
#if MPC_TSAN
    if (f != nullptr) {
        __tsan_destroy_fiber(f);
    }
#else
    (void)f;
#endif
}

}  // namespace mpc::sched::detail
