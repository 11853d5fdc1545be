/// \file
/// The messages between a process and mpc_run's supervisor (bootstrap_local.cpp and
/// supervisor.cpp): a fixed header (magic, kind, two integers, payload length) and a payload,
/// over a stream socket. Blocking reads and writes that survive EINTR and short transfers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/status.hpp"

namespace mpc::net::wire {

inline constexpr std::uint32_t magic = 0x4d504342;  // "MPCB"

enum class kind : std::uint32_t {
    hello = 1,      ///< process -> supervisor: a = index, b = count it was told; reply: hello with the same
    allgather,      ///< process -> supervisor: payload = its blob; reply: allgather, a = count, payload =
                    ///< count x (u64 length, bytes)
    barrier,        ///< process -> supervisor; reply: barrier
    abort,          ///< process -> supervisor: a = exit code, payload = reason (no reply: the job ends)
    finalize,       ///< process -> supervisor: its part of the job ended normally; reply: finalize
    failed,         ///< supervisor -> process (instead of a reply): a = the process that died, payload =
                    ///< what happened
};

struct header {
    std::uint32_t magic;
    kind what;
    std::int32_t a;
    std::int32_t b;
    std::uint64_t length;  ///< payload bytes that follow
};
static_assert(sizeof(header) == 24);

/// Largest payload accepted (a corrupt length must not make the reader allocate without bound).
inline constexpr std::uint64_t max_payload = std::uint64_t{1} << 30;

/// Writes the header and the payload; a status naming the failure (EPIPE: the peer is gone).
status send(int fd, kind what, std::int32_t a, std::int32_t b, const void* payload, std::size_t len) noexcept;
/// Reads one message. End of file is errc::system with errno ECONNRESET ("the peer closed").
status receive(int fd, header& h, std::vector<std::byte>& payload) noexcept;

}  // namespace mpc::net::wire
