/// \file
/// The wire header of every message between processes (DESIGN.md decision 4): what the matching
/// engine of the receiving task needs to match a message before its payload is touched.
/// Every transport carries it unchanged (UCX sends it as the active-message header).
///
/// The layout is fixed (48 bytes, no padding, host byte order: the processes of one job run on
/// one architecture) and trivially copyable, so that it is copied with memcpy and never parsed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mpc::net {

/// What a message is for; the engine's protocols. A transport does not interpret it.
enum class msg_kind : std::uint8_t {
    eager = 0,       ///< the payload is the whole message
    rendezvous = 1,  ///< a large message (the transport moves it zero-copy when the receive is posted)
    ack = 2,         ///< an acknowledgement (synchronous send matched, flow control), no payload
    control = 3,     ///< engine-internal control traffic
};

/// Flags of msg_kind, or-ed into envelope::flags.
enum envelope_flags : std::uint8_t {
    env_flag_sync = 1u << 0,  ///< synchronous send: the receiver acknowledges the match (MPI_Ssend)
};

/// The header carried with every message. Fixed size, trivially copyable.
struct envelope {
    std::uint32_t context_id = 0;  ///< communicator context (the matching engine's namespace)
    std::int32_t source = 0;       ///< the sender's rank in the communicator (what receives match)
    std::int32_t dest = 0;         ///< world rank of the receiving task
    std::int32_t tag = 0;          ///< MPI tag
    std::uint64_t size = 0;        ///< payload bytes of the whole message
    std::uint32_t seq = 0;         ///< the sender's serial number of the message (with cookie, names it)
    msg_kind kind = msg_kind::eager;
    std::uint8_t flags = 0;                  ///< envelope_flags
    std::uint8_t reserved[2] = {0, 0};       ///< later use (collective trees); zero for now
    std::int32_t source_world = 0;           ///< world rank of the sending task (where acks go)
    std::uint32_t reserved2 = 0;             ///< zero
    /// The sender's token for the answer (an ack names the synchronous send it completes);
    /// meaningful to the sending process only.
    std::uint64_t cookie = 0;
};

static_assert(std::is_trivially_copyable_v<envelope>);
static_assert(std::is_standard_layout_v<envelope>);
static_assert(sizeof(envelope) == 48, "the envelope is a fixed 48-byte wire header");
static_assert(offsetof(envelope, size) == 16 && offsetof(envelope, seq) == 24 && offsetof(envelope, kind) == 28 &&
              offsetof(envelope, source_world) == 32 && offsetof(envelope, cookie) == 40);

}  // namespace mpc::net
