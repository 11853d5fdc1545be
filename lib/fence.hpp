/// \file
/// A full (sequentially consistent) fence for Dekker-style handshakes: a publisher's store
/// before its read of a "sleeping" word, a sleeper's registration before its re-check.
///
/// ThreadSanitizer does not model std::atomic_thread_fence (GCC warns with -Wtsan, and TSan
/// may then report races the fence prevents). In TSan builds the fence is a seq_cst
/// read-modify-write of one process-wide word instead: on x86 a locked instruction, so the
/// same full barrier for the hardware, and an edge TSan sees between every two fences (it may
/// hide a race between fence users: the price of no false reports).
#pragma once

#include <atomic>

#include "lib/sanitizers.hpp"

namespace mpc {

#if MPC_TSAN
namespace detail {
inline std::atomic<unsigned> tsan_fence_word{0};
}  // namespace detail
#endif

/// On x86-64 the fence is a locked no-op on the stack (`lock orl $0`), as the Linux kernel's
/// smp_mb(): a locked instruction orders every earlier load and store of write-back memory
/// before every later one, as MFENCE does, and costs far less (this project's test machine, an
/// AMD EPYC virtual machine: 2.4 against 20 ns). It does not order non-temporal stores, which
/// none of the handshakes publish (glibc's memcpy ends its non-temporal copies with SFENCE).
inline void full_fence() noexcept {
#if MPC_TSAN
    detail::tsan_fence_word.fetch_add(1, std::memory_order_seq_cst);
#elif defined(__x86_64__)
    __asm__ __volatile__("lock; orl $0, -8(%%rsp)" ::: "memory", "cc");
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace mpc
