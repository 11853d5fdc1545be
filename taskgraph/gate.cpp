/// \file
/// The futex half of detail::gate (plain threads) and the delivery of wake-ups.

#include "taskgraph/gate.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace mpc::tg::detail {

void gate::futex_wait(std::uint32_t seen) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&futex_), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}

void gate::deliver(const wakeups& w) noexcept {
    if (w.chain != nullptr) {
        sched::wake_all(w.chain);
    }
    if (w.futex != nullptr) {
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w.futex), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr,
                  0);
    }
}

}  // namespace mpc::tg::detail
