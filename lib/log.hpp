/// \file
/// Logging: MPC_LOG(level, subsys, fmt, ...) checks the level before formatting anything.
/// Levels per subsystem come from MPC_LOG_LEVEL, e.g. "warn,sched:debug". Each line carries a
/// prefix naming the process and, when known, the VP and ULT (or rank) that logged it.
#pragma once

#include <atomic>
#include <cstddef>

namespace mpc {

enum class log_level : int { fatal = 0, error, warn, info, debug, trace };
enum class subsys : int { core = 0, sched, alloc, net, mpi, ckpt, tg, count_ };

namespace detail {
extern std::atomic<int> log_levels[static_cast<int>(subsys::count_)];
[[gnu::format(printf, 3, 4)]] void log_write(log_level lvl, subsys s, const char* fmt, ...) noexcept;
}  // namespace detail

/// True when a message of this level for this subsystem would be printed.
inline bool log_enabled(log_level lvl, subsys s) noexcept {
    return static_cast<int>(lvl) <= detail::log_levels[static_cast<int>(s)].load(std::memory_order_relaxed);
}

/// Parses "warn,sched:debug,net:trace"; returns false (and changes nothing) on a bad spec.
bool log_configure(const char* spec) noexcept;

/// Writes the context part of a log prefix ("vp 1 ult 7") into buf; installed by the scheduler.
using log_prefix_fn = std::size_t (*)(char* buf, std::size_t cap) noexcept;
void set_log_prefix_fn(log_prefix_fn fn) noexcept;

const char* to_string(subsys s) noexcept;

}  // namespace mpc

#define MPC_LOG(level, sub, ...)                                                   \
    do {                                                                           \
        if (::mpc::log_enabled(::mpc::log_level::level, ::mpc::subsys::sub)) {     \
            ::mpc::detail::log_write(::mpc::log_level::level, ::mpc::subsys::sub, __VA_ARGS__); \
        }                                                                          \
    } while (0)
