/// \file
/// ThreadSanitizer happens-before annotations for the runtime's own synchronisation.
///
/// Why: TSan's interceptors of blocking calls (pthread_join, nanosleep, ...) mark the calling
/// fiber as "inside a blocking call", and while that mark is set TSan ignores the fiber's
/// atomic operations. Our versions of those calls park the ULT and switch to others; when the
/// ULT is resumed inside them, its fiber runs scheduler code (post-switch actions, queue
/// drains) whose atomics TSan then does not see, and it loses happens-before edges that are
/// there. tsan_release / tsan_acquire record the edge explicitly, on the same sync object TSan
/// uses for the atomic at `addr`; TSan honours them in that state. No-ops in other builds.
#pragma once

#include "lib/sanitizers.hpp"

#if MPC_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace mpc {

/// Before a release operation on the atomic at addr.
inline void tsan_release(const volatile void* addr) noexcept {
#if MPC_TSAN
    __tsan_release(const_cast<void*>(addr));
#else
    (void)addr;
#endif
}

/// After an acquire operation on the atomic at addr.
inline void tsan_acquire(const volatile void* addr) noexcept {
#if MPC_TSAN
    __tsan_acquire(const_cast<void*>(addr));
#else
    (void)addr;
#endif
}

}  // namespace mpc
