/// \file
/// The UCX transport between processes (DESIGN.md decision 6): one ucp context and one worker
/// per process, one endpoint per peer process, messages as active messages whose header is the
/// net::envelope.
///
/// Design:
/// - **Threading.** The worker is created with UCS_THREAD_MODE_MULTI: several VPs call
///   progress(), send() and fetch() concurrently and UCX serialises them with its worker lock
///   (recursive, so a receive handler may send or fetch). progress() adds a try-flag in front:
///   a VP that finds another one progressing returns 0 at once instead of queueing on the lock.
/// - **No allocation on the send path.** The caller owns a net::completion (the MPI request will
///   embed it): it holds the copy of the envelope that UCX reads until the send completes and
///   the callback; its address is the UCX request's user_data. UCX's requests come from its
///   own pools.
/// - **Receive.** One handler, set by the owner, sees every message with its envelope and an
///   `incoming` descriptor. Eager data may be copied in the handler, or kept and released later
///   when keep() succeeds (always with ucx_options::persistent_eager, i.e.
///   UCP_AM_FLAG_PERSISTENT_DATA; without it, when UCX can hand over its data without a copy of
///   its own: see transport.hpp); a rendezvous message must be kept
///   and is later fetched straight into the final buffer (ucp_am_recv_data_nbx), possibly long
///   after its arrival. fetch() also works on kept eager data (a memcpy), so the engine has one
///   path for an unexpected message that its receive matches later.
/// - **Aggregation** (ucx_batch.cpp, MPC_NET_UCX_BATCH): a small message to a peer that already
///   got one since the last progress() is not sent at once but packed, envelope and data, into
///   that peer's batch, one active message sent by the next progress() (or when the batch is
///   full, or before a message that is not batched): a window of small sends costs about one
///   system call and TCP segment per 8 KiB of batch (UCX's fragments) instead of one per
///   message. The first message after a progress() leaves at once, so a ping-pong waits for
///   nothing. A batched send completes when it is copied.
/// - **Failure.** Endpoints use UCP_ERR_HANDLING_MODE_PEER: a peer that dies is marked dead,
///   the owner's peer-failed callback runs (from progress()), its pending sends complete with an
///   error, and shutdown closes its endpoint with FORCE. Shutdown waits a bounded time
///   (MPC_NET_UCX_CLOSE_TIMEOUT) for the others.
///
/// Callbacks (completion, receive handler, peer failed) run inside progress() (or inside send()
/// and fetch() for operations that complete at once), under UCX's worker lock: they must not
/// yield, block or call progress().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "lib/status.hpp"
#include "network/envelope.hpp"
#include "network/transport.hpp"

// UCX's handle types, so that users of this header do not include ucp.h.
struct ucp_context;
struct ucp_worker;

namespace mpc::net {

/// One process's UCX transport. Not movable (UCX holds pointers to it).
class ucx_transport final : public transport {
public:
    /// Creates the ucp context and worker and installs the receive handler. Never blocks.
    static result<std::unique_ptr<ucx_transport>> create(const ucx_options& opts) noexcept;

    /// Orderly shutdown (see shutdown()).
    ~ucx_transport() override;
    ucx_transport(const ucx_transport&) = delete;
    ucx_transport& operator=(const ucx_transport&) = delete;

    /// This worker's address, to hand to peers (bootstrap); opaque bytes with a checked frame.
    const std::vector<std::byte>& address() const noexcept override { return address_; }

    /// Creates the endpoint to `peer` from the bytes its address() returned. Does not block.
    /// Errors: invalid_argument (peer out of range, already connected, or not an address made by
    /// address()), internal (UCX refused; the reason is UCX's text).
    status connect(int peer, const void* addr, std::size_t len) noexcept override;

    /// Sends `len` contiguous bytes at `data` to `peer` with `env` as header; UCX picks eager or
    /// rendezvous (forced to rendezvous from MPC_NET_UCX_RNDV_THRESH when that is set). `data`
    /// and `c` must stay valid until c->fn ran. On ok, c->fn runs exactly once (maybe before
    /// send returns); on error it never runs. Does not block.
    status send(int peer, const envelope& env, const void* data, std::size_t len, completion* c) noexcept override;

    /// Releases a kept eager message, or drops a kept rendezvous message (its sender completes).
    void release(incoming& msg) noexcept override;

    /// Moves a kept message into `buf` (`cap` bytes, at least msg.size()): a rendezvous message
    /// straight from the sender's buffer, eager data by memcpy. On ok, c->fn runs exactly once
    /// (maybe before fetch returns) and `msg` is consumed. Refused with invalid_argument (not
    /// kept, buffer too small, no completion): `msg` stays kept. Any error: c->fn never runs; an
    /// error from UCX itself consumes `msg` (UCX owns the descriptor). Does not block.
    status fetch(incoming& msg, void* buf, std::size_t cap, completion* c) noexcept override;

    /// Drives UCX: runs completions and handlers; returns the number of events handled. Safe
    /// from several threads at once; returns 0 at once when another thread is progressing.
    int progress() noexcept override;

    /// A file descriptor that becomes readable when events arrive, after a successful arm().
    int event_fd() const noexcept override { return efd_; }
    /// Arms the event fd before sleeping on it: true when armed (sleep), false when events are
    /// pending (progress() first).
    bool arm() noexcept override;

    /// True once `peer` failed.
    bool peer_failed(int peer) const noexcept override;
    /// Sends and fetches UCX still holds (requests whose callback has not run).
    int in_flight() const noexcept override;
    /// UCX's lanes to `peer` (from ucp_ep_print_info at connect time).
    std::string route(int peer) const override;

    /// Flushes and closes every endpoint (FORCE for failed peers), waiting at most
    /// MPC_NET_UCX_CLOSE_TIMEOUT milliseconds for the peers, then destroys the worker and the
    /// context. Idempotent; the destructor calls it. Blocks (progresses) until done.
    status shutdown() noexcept override;

    struct peer;   ///< one endpoint (ucx.cpp)
    struct batch;  ///< small messages packed into one active message (ucx_batch.cpp)

private:
    ucx_transport() = default;
    status init(const ucx_options& opts) noexcept;
    status init_worker() noexcept;
    status init_address() noexcept;
    status install_am_handler() noexcept;
    peer* find_peer(int id) const noexcept;
    void close_endpoints(long timeout_ms) noexcept;
    /// One active message now (ucx_io.cpp).
    status send_now(peer* p, const void* data, std::size_t len, completion* c) noexcept;
    // Aggregation (ucx_batch.cpp).
    status init_batches() noexcept;
    status send_ordered(peer* p, const void* data, std::size_t len, completion* c) noexcept;
    void flush_locked(peer* p) noexcept;
    int flush_batches() noexcept;
    batch* get_batch() noexcept;
    void put_batch(batch* b) noexcept;
    void free_batches() noexcept;

    ucp_context* context_ = nullptr;
    ucp_worker* worker_ = nullptr;
    int efd_ = -1;
    std::size_t rndv_thresh_ = 0;  // 0: UCX decides
    std::size_t tcp_eager_ = 0;    ///< MPC_NET_UCX_TCP_EAGER: eager limit to peers over TCP
    long close_timeout_ms_ = 0;
    bool detect_failure_ = false;  ///< UCP_ERR_HANDLING_MODE_PEER on the endpoints
    ucx_options opts_{};
    std::vector<std::byte> address_;
    std::unique_ptr<std::atomic<peer*>[]> peers_;
    std::atomic<bool> progressing_{false};
    // Aggregation (ucx_batch.cpp).
    std::size_t batch_cap_ = 0;  ///< bytes of records per batch; 0: off
    std::atomic<std::uint64_t> epoch_{0};  ///< progress() calls so far
    std::atomic<int> open_batches_{0};   ///< batches being filled
    std::mutex pool_lock_;
    std::vector<batch*> pool_;         ///< free batches
    std::vector<batch*> all_batches_;  ///< every batch made (freed at shutdown)
    std::mutex dirty_lock_;
    std::vector<int> dirty_;           ///< peers with a batch to flush (at most max_peers)
};

}  // namespace mpc::net
