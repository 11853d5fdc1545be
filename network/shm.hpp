/// \file
/// The shared-memory transport between the processes of one node (issue 7): a ring per
/// (sender process -> receiver process) pair in memory the receiver owns, single copy through
/// CMA (process_vm_readv) for large messages. Part of libmpc (no UCX); remote.cpp routes the
/// peers of this process's node through it and the others through UCX.
///
/// Design (docs/architecture.md, "Network: shared memory between the processes of a node"):
/// - **Memory.** Each process creates one memfd segment (memfd_create: nothing in the file
///   system, gone with the last process that maps it) holding a header and one receive ring per
///   possible sender. Its address (pid, memfd, eventfd, a random token, the address of a probe
///   word) goes through the bootstrap's all-gather; a sender maps the segment by opening
///   /proc/<pid>/fd/<memfd> (UCX's "proc link") and checks the token.
/// - **Rings.** Slots are cache lines. A message starts with a line holding the 48-byte
///   envelope, then a 64-bit flag word (message type in the top byte, the slot's absolute
///   position + 1 below, written last with release), then 8 payload bytes; a longer eager
///   payload continues in the next lines (contiguous: a message that does not fit before the
///   ring's end is preceded by a pad record). So an envelope with up to 8 bytes is one line. The
///   receiver checks only the flag of the line at its consumer position; it zeroes the flag word
///   of the payload lines it consumed, so stale data never looks like a message. One producer
///   per ring: the sending VPs of a process serialize on a spin lock per peer.
/// - **Flow control.** The consumer position sits on its own line (the ring's control line),
///   written by the receiver after each message and read by the sender only when its cached
///   copy says the ring is full. A send that does not fit is queued (in order, behind any
///   earlier queued send) and finished by progress(); the sender sets `waiting` on the control
///   line, and the receiver wakes it (eventfd) after freeing space.
/// - **Rendezvous** (from the eager limit, MPC_NET_SHM_EAGER): a one-line request (envelope,
///   buffer address, the sender's completion record); fetch() reads the data with
///   process_vm_readv straight into the receive buffer and answers with a one-line `fin` in the
///   reverse ring, which completes the sender's send. A connect() first reads the peer's probe
///   word with process_vm_readv: without CMA permission (Yama, containers) it fails with
///   `unsupported` and the caller uses another transport for that peer.
/// - **Sleep.** arm() sets a `sleeping` word in this process's segment (then re-checks the
///   rings); a sender that sees it after publishing writes to the receiver's eventfd (its copy,
///   from pidfd_getfd: an eventfd cannot be reopened through /proc; see "Without pidfd"). Store (message) then load
///   (`sleeping`) on one side against store then load on the other needs a full barrier on
///   both: the sleeper's is a membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which makes every
///   registered process's running threads pass a barrier, so the senders need none (a fence per
///   message costs about 8% of the 64-byte bandwidth: it waits for the transfer of the ring's
///   line). Where the kernel lacks it (or MPC_NET_SHM_MEMBARRIER=0), both sides fence.
///
/// - **Without pidfd** (kernels before 5.6, as RHEL 8's 4.18; MPC_NET_SHM_PIDFD=0): a process
///   that cannot use pidfd_open and pidfd_getfd (checked on itself at creation) makes its
///   wake-up fd a non-blocking pipe instead of an eventfd; a peer opens it through
///   /proc/<pid>/fd/<fd>, which works for a pipe (not for an eventfd), read-write so that a
///   write never raises SIGPIPE once the process has gone. The sleeper polls it as it would the
///   eventfd (the watcher waits on several fds at once: a futex would not do). A peer's
///   liveness then comes from /proc/<pid>/stat: gone, a zombie, or a start time other than the
///   one read at connect() (a reused pid) means ended. The ring protocol is the same.
///
/// - **Shared copies** (from MPC_NET_SHM_SPLIT bytes): the sender, idle until the transfer ends
///   anyway, copies part of the message. Its request says it will help; fetch() takes one of
///   its own descriptors for that peer (`xfer`, in the receiver's segment: source, length,
///   destination, chunks of 64-256 KiB, a generation), sends a one-line `cts` naming it, and claims
///   chunks one by one (a compare-and-swap on generation | next chunk) reading each with
///   process_vm_readv; the sender, on the cts, claims chunks too and writes them with
///   process_vm_writev. The receiver waits for the last chunk, frees the descriptor, then sends
///   the fin. A cts handled after its copy ended (the sender was busy) finds another
///   generation and copies nothing. A sender busy elsewhere only leaves the receiver every
///   chunk. Two cores copy a message of a megabyte instead of one. The descriptors belong to
///   the receiver's fetches, not to the messages in flight: any number of large sends in
///   flight all share their copies (a window of 64 with descriptors owned by the sender,
///   32 per peer, copied half of its messages alone: benchmarks/RESULTS.md, "Between
///   processes", "1 MiB bandwidth between two processes", 2026-11-23).
///
/// Threading: send(), fetch(), release() and progress() are safe from several threads; one
/// progress() at a time drains the rings (another returns 0 at once). connect() and
/// disconnect() are for start-up, before the first progress(). Callbacks run inside progress()
/// (or inside send()/fetch() when the operation completes at once): they must not yield, block
/// or call progress().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "lib/status.hpp"
#include "network/transport.hpp"

namespace mpc::net {

/// Creation parameters of the shared-memory transport.
struct shm_options {
    int max_peers = 0;  ///< peer ids are 0 .. max_peers-1 (process indices of the job)
    int index = -1;     ///< this process's id (the ring it writes in a peer's segment)
    recv_handler on_recv = nullptr;
    void* recv_arg = nullptr;
    std::size_t ring_bytes = 0;  ///< bytes of each receive ring (0: MPC_NET_SHM_RING)
    std::size_t eager_max = 0;   ///< largest eager payload (0: MPC_NET_SHM_EAGER)
};

/// What address() holds (host byte order; for tests that forge addresses).
struct shm_address {
    std::uint64_t magic;
    std::uint64_t token;       ///< random; also in the segment's header and the probe word
    std::uint64_t probe_addr;  ///< address of a word holding `token` (the CMA probe)
    std::uint64_t seg_bytes;
    std::int32_t pid;
    std::int32_t memfd;
    std::int32_t efd;
    std::int32_t index;
    std::uint32_t rings;
    std::uint32_t slots;  ///< lines per ring
    std::uint32_t wake;   ///< what efd is: 0 an eventfd (pidfd_getfd), 1 a pipe (open /proc/<pid>/fd/<efd>)
    std::uint32_t reserved;
};

/// One process's shared-memory transport. Not movable.
class shm_transport final : public transport {
public:
    /// Creates the segment and the eventfd. Errors: invalid_argument, no_memory, internal
    /// (a system call failed; logged with errno's text).
    static result<std::unique_ptr<shm_transport>> create(const shm_options& opts) noexcept;
    ~shm_transport() override;
    shm_transport(const shm_transport&) = delete;
    shm_transport& operator=(const shm_transport&) = delete;

    const std::vector<std::byte>& address() const noexcept override { return address_; }
    /// Maps the peer's segment, gets a copy of its eventfd, probes CMA. Start-up only. Errors:
    /// invalid_argument (bad address), unsupported (the peer cannot be reached through shared
    /// memory and CMA: use another transport for it).
    status connect(int peer, const void* addr, std::size_t len) noexcept override;
    /// Forgets a connected peer (start-up only: the caller chose another transport for it).
    void disconnect(int peer) noexcept;
    /// Eager (copied into the ring; c->fn runs before send returns unless the ring is full) up
    /// to the eager limit, rendezvous above (c->fn runs when the receiver fetched or released
    /// the message). Never blocks.
    status send(int peer, const envelope& env, const void* data, std::size_t len, completion* c) noexcept override;
    void release(incoming& msg) noexcept override;
    /// Kept rendezvous messages only (eager data is not kept: incoming::keep() returns false
    /// for it, the handler copies). Completes before returning.
    status fetch(incoming& msg, void* buf, std::size_t cap, completion* c) noexcept override;
    int progress() noexcept override;
    int event_fd() const noexcept override { return efd_; }
    bool arm() noexcept override;
    bool peer_failed(int peer) const noexcept override;
    std::string route(int peer) const override;
    status shutdown() noexcept override;

    /// The largest eager payload.
    std::size_t eager_max() const noexcept { return eager_max_; }

    struct ring;    ///< a receive ring in a segment (shm.cpp)
    struct peer;    ///< the state about one peer process (shm.cpp)
    struct queued;  ///< a send waiting for ring space (shm.cpp)

    /// Whether this process sleeps behind a membarrier, so that its senders need no fence.
    bool uses_membarrier() const noexcept { return asym_; }
    /// Whether this process uses pidfds (peers' liveness, their eventfds); false: its wake-up fd
    /// is a pipe and a peer's liveness comes from /proc/<pid>/stat (shm.hpp, "Without pidfd").
    bool uses_pidfd() const noexcept { return pidfd_; }
    /// Chunks of shared copies this process copied: as the receiver (read) or the sender (written).
    std::uint64_t shared_chunks(bool written) const noexcept {
        return (written ? chunks_written_ : chunks_read_).load(std::memory_order_relaxed);
    }

private:
    shm_transport() = default;
    status init(const shm_options& opts) noexcept;
    peer* find(int id) const noexcept;
    ring* rx_ring(int sender) const noexcept;
    std::size_t xfer_area(int rings) const noexcept;
    bool rx_ready(const peer& p) const noexcept;
    int drain_ring(peer& p) noexcept;
    std::size_t handle(peer& p, std::byte* first, std::uint64_t type) noexcept;
    int drain_queue(peer& p) noexcept;
    status post(peer& p, const queued& q, bool* written) noexcept;
    bool try_write(peer& p, const queued& q) noexcept;
    void notify(peer& p) noexcept;
    bool full_barrier_with_senders() noexcept;
    void send_fin(peer& p, std::uint64_t token, bool ok) noexcept;
    int take_xfer(peer& p) noexcept;
    void serve_cts(peer& p, std::uint64_t d) noexcept;
    status fetch_shared(peer& p, incoming& msg, void* buf) noexcept;
    bool tx_can_move(peer& p) noexcept;
    bool peer_dead(peer& p) noexcept;
    void fail_queue(peer& p) noexcept;

    shm_options opts_{};
    std::size_t eager_max_ = 0;
    std::uint32_t slots_ = 0;  ///< lines per ring (a power of two)
    std::size_t ring_stride_ = 0;
    std::size_t split_min_ = 0;  ///< shared copies from this size (MPC_NET_SHM_SPLIT; 0: never)
    std::byte* seg_ = nullptr;  ///< this process's segment
    std::size_t seg_bytes_ = 0;
    int memfd_ = -1;
    int efd_ = -1;       ///< the eventfd, or the pipe's read end (without pidfd)
    int wake_wfd_ = -1;  ///< without pidfd: the pipe's write end, kept so that the read end never sees POLLHUP
    bool pidfd_ = false;
    std::uint64_t probe_word_ = 0;  ///< holds the token: what peers read to probe CMA
    std::vector<std::byte> address_;
    std::unique_ptr<peer*[]> peers_;
    std::vector<peer*> polled_;  ///< connected peers, in id order
    std::atomic<bool> progressing_{false};
    std::atomic<int> queued_peers_{0};  ///< peers with queued sends
    bool asym_ = false;
    std::atomic<std::uint64_t> chunks_read_{0};
    std::atomic<std::uint64_t> chunks_written_{0};  ///< registered for global expedited membarrier (seg_header::asym)
};

}  // namespace mpc::net
