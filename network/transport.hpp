/// \file
/// The interface of a transport between processes, as the MPI layer sees it (DESIGN.md decision
/// 6): send a message (an envelope and contiguous bytes) to a peer process, receive every message
/// through one handler, keep an unexpected one and fetch it later into its final buffer, drive
/// progress from the VPs, sleep on an event fd. The UCX transport (ucx.hpp) implements it in a
/// module of its own, libmpc_net_ucx.so, which libmpc loads (load_transport()) only for jobs of
/// several processes; libmpc itself never links UCX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/status.hpp"
#include "network/envelope.hpp"

namespace mpc::net {

class ucx_transport;
class shm_transport;
class transport;

/// A caller-owned record of one send or fetch; it must stay valid (and unmoved) until `fn` ran.
/// `fn` runs exactly once for every send()/fetch() that returned ok, with the final status.
struct completion {
    using fn_t = void (*)(completion* self, status st) noexcept;
    fn_t fn = nullptr;
    void* arg = nullptr;  ///< free for the owner
    envelope header{};    ///< send(): the copy of the envelope UCX sends (set by send())
};

/// A message that arrived: a value the receive handler may copy to keep it past the handler.
class incoming {
public:
    /// Payload bytes of the message (the envelope's size as UCX saw it).
    std::size_t size() const noexcept { return length_; }
    /// True for a rendezvous message: its data is still at the sender; fetch() moves it.
    bool is_rendezvous() const noexcept { return rndv_; }
    /// The eager payload, readable during the handler and, once kept, until release()/fetch().
    /// Null for rendezvous messages.
    const void* data() const noexcept { return rndv_ ? nullptr : data_; }
    /// True once keep() succeeded (on this object or the one it was copied from in the handler).
    bool kept() const noexcept { return kept_; }
    /// In the receive handler only: keeps the message after the handler returns (eager data
    /// stays readable; a rendezvous message stays fetchable). Returns false when UCX did not
    /// hand over persistent data (then the handler must copy it now). A rendezvous message that
    /// is not kept is dropped (its sender completes).
    bool keep() noexcept {
        kept_ = persistent_ || rndv_;
        return kept_;
    }
    /// The transport that delivered the message: release() and fetch() go to it.
    transport* owner() const noexcept { return owner_; }

private:
    friend class ucx_transport;
    friend class shm_transport;
    transport* owner_ = nullptr;
    void* data_ = nullptr;
    std::uint64_t token_ = 0;  ///< transport-specific (shm: the sender's completion record)
    int peer_ = -1;            ///< transport-specific (shm: the sending process)
    std::uint32_t aux_ = 0;    ///< transport-specific (shm: 1 when the sender helps copy, else 0)
    std::size_t length_ = 0;
    bool rndv_ = false;
    bool persistent_ = false;
    bool kept_ = false;
};

/// The receive handler: called for every message (inside progress()). Must not yield or block.
using recv_handler = void (*)(void* arg, const envelope& env, incoming& msg) noexcept;
/// Called once when a peer fails (inside progress()), with UCX's reason.
using peer_failed_handler = void (*)(void* arg, int peer, const char* reason) noexcept;

/// Creation parameters.
struct ucx_options {
    int max_peers = 1024;  ///< peer ids are 0 .. max_peers-1 (process indices of the job)
    recv_handler on_recv = nullptr;
    void* recv_arg = nullptr;
    peer_failed_handler on_peer_failed = nullptr;
    void* peer_failed_arg = nullptr;
    /// UCP_ERR_HANDLING_MODE_PEER on every endpoint: a dead peer is reported (on_peer_failed)
    /// and its pending sends fail instead of hanging. Off by default (also on with
    /// MPC_NET_UCX_PEER_FAILURE=1): UCX 1.13 has no peer-failure support in its shared-memory
    /// transports (sysv, posix, cma), so with it two processes of one node talk over TCP
    /// (ucx_pingpong: 4.3 us for 0 bytes instead of 0.5). A job learns of a dead process from
    /// its launcher instead (net::supervisor, or the PMIx server), which ends the job.
    bool detect_peer_failure = false;
    /// UCP_AM_FLAG_PERSISTENT_DATA: every eager message can be kept (incoming::keep()), at the
    /// price of a copy UCX makes of each one whose data it cannot hand over as is (over TCP:
    /// every message that arrives in one fragment). Off (the engine's setting): such a message
    /// is read straight from UCX's receive buffer, once, into the posted receive's buffer, and
    /// copied by the engine only when unexpected (keep() false where UCX cannot hand its data
    /// over); a rendezvous message can always be kept.
    bool persistent_eager = false;
};

/// A transport between the processes of a job. Peers are process indices 0 .. count-1.
/// Callbacks (completions, the receive handler) run inside progress(), or inside send() and
/// fetch() for operations that complete at once: they must not yield, block or call progress().
class transport {
public:
    virtual ~transport() = default;
    /// This process's address, to hand to the peers through the bootstrap.
    virtual const std::vector<std::byte>& address() const noexcept = 0;
    /// Connects to `peer` from the bytes its address() returned. Does not block.
    virtual status connect(int peer, const void* addr, std::size_t len) noexcept = 0;
    /// Sends `len` contiguous bytes with `env` as header; `data` and `c` stay valid until c->fn
    /// ran; on ok c->fn runs exactly once (maybe before send returns), on error never.
    virtual status send(int peer, const envelope& env, const void* data, std::size_t len, completion* c) noexcept = 0;
    /// Gives a kept message back (a rendezvous one is dropped: its sender completes).
    virtual void release(incoming& msg) noexcept = 0;
    /// Moves a kept message into `buf` (`cap` >= msg.size()); c->fn runs once on ok.
    virtual status fetch(incoming& msg, void* buf, std::size_t cap, completion* c) noexcept = 0;
    /// Runs completions and handlers; the number of events handled. Thread-safe.
    virtual int progress() noexcept = 0;
    /// Readable when events arrive after a successful arm(); -1 when there is none.
    virtual int event_fd() const noexcept = 0;
    /// Arms the event fd: true when armed (the caller may sleep on it), false when events are
    /// pending (progress first).
    virtual bool arm() noexcept = 0;
    virtual bool peer_failed(int peer) const noexcept = 0;
    /// Operations this process started that are in flight (UCX still holds a send or a fetch):
    /// progress soon may move them, so an idle VP may keep polling rather than sleep.
    virtual int in_flight() const noexcept { return 0; }
    /// What carries the messages to a connected `peer`, for people ("tcp/eth0 (am, rma_bw)");
    /// empty when not known.
    virtual std::string route(int peer) const = 0;
    /// Flushes and closes every connection; blocks (progressing) a bounded time.
    virtual status shutdown() noexcept = 0;
};

/// The UCX transport from its module (libmpc_net_ucx.so next to libmpc, else the library
/// path): an error naming the module and dlopen's reason when it cannot be loaded.
result<std::unique_ptr<transport>> load_transport(const ucx_options& opts) noexcept;

/// The module's entry point (extern "C", looked up by load_transport()): a new transport, or
/// nullptr with the reason copied to `why` (at most why_len bytes, NUL-terminated).
using transport_factory = transport* (*)(const ucx_options* opts, char* why, std::size_t why_len);
inline constexpr const char* transport_factory_symbol = "mpc_net_ucx_create";

}  // namespace mpc::net
