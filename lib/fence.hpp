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

inline void full_fence() noexcept {
#if MPC_TSAN
    detail::tsan_fence_word.fetch_add(1, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace mpc
