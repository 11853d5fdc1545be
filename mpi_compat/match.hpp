/// \file
/// Requests and the matching engine: one engine per rank, fed by every sender (DESIGN.md
/// decision 4). Envelopes carry (context id, source, tag, size, protocol).
///
/// In-process protocol (decision 5), all under the receiver's engine lock for the matching
/// and without it for the copy:
///  - the receive is posted first: the sender copies its buffer straight into the receiver's;
///  - the send comes first, small (<= eager limit) and not synchronous: the sender copies it
///    into one eager buffer and completes; the receiver copies it out when it matches;
///  - the send comes first, large or synchronous (Ssend): the sender queues a descriptor of
///    its buffer and waits; the receiver copies sender buffer -> receiver buffer and completes
///    the send.
/// Non-overtaking holds because both queues are scanned in order under one lock.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/spinlock.hpp"
#include "mpi_compat/datatype/datatype.hpp"
#include "scheduler/sync.hpp"

namespace mpc::mpi {

struct task;

enum class req_kind : std::uint8_t { send, recv, generalized };

/// A typed buffer: `count` elements of `type` at `buf` (layout per the datatype), `bytes` of
/// packed data. `contig`: the data is one block of `bytes` at buf + type->true_lb().
struct typed_buf {
    const void* buf = nullptr;
    count_t count = 0;
    const datatype* type = nullptr;
    std::size_t bytes = 0;
    bool contig = true;

    /// The contiguous block (valid when contig).
    const char* base() const noexcept { return static_cast<const char*>(buf) + (type ? type->true_lb() : 0); }
};

/// `count` elements of `type` at `buf` (the type must be valid for communication).
typed_buf typed(const void* buf, count_t count, const datatype* type) noexcept;
/// `n` raw bytes at buf (MPI_BYTE).
typed_buf raw_bytes(const void* buf, std::size_t n) noexcept;

/// How a send was started (persistent requests remember it).
enum class send_mode : std::uint8_t { standard, sync, ready, buffered };

/// Arguments of a persistent request, replayed by MPI_Start.
struct persistent_args {
    const void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int peer = 0;
    int tag = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    send_mode mode = send_mode::standard;
};

/// Callbacks of a generalized request (MPI_Grequest_start).
struct grequest_fns {
    int (*query)(void*, MPI_Status*) = nullptr;
    int (*free)(void*) = nullptr;
    int (*cancel)(void*, int) = nullptr;
    void* state = nullptr;
};

/// A point-to-point request. Completion protocol: the completer fills the status, sets done
/// and takes the waiters under `lk`, unlocks (its last access), then wakes them. Whoever frees
/// a request first takes and releases `lk`, so a completer still inside cannot touch freed
/// memory.
struct request {
    request* next = nullptr;  ///< posted-queue link
    req_kind kind = req_kind::recv;
    bool persistent = false;  ///< made by *_init: survives completion until MPI_Request_free
    bool active = true;       ///< persistent requests: started and not yet completed by a wait
    bool in_table = false;
    persistent_args args;
    grequest_fns greq;
    void* bsend_block = nullptr;  ///< buffered send: its block in the attached buffer
    std::atomic<bool> done{false};
    spinlock lk;
    sched::wait_queue waiters;
    sched::semaphore* notify = nullptr;  ///< Waitany/Waitsome: released on completion
    // receive side
    typed_buf target;          ///< where a receive lands (target.bytes: its capacity)
    std::uint32_t context = 0;
    int source = MPI_ANY_SOURCE;  ///< comm rank or MPI_ANY_SOURCE
    int tag = MPI_ANY_TAG;
    // send side (rendezvous: the receiver copies from here)
    typed_buf source_data;
    const datatype* held = nullptr;  ///< type retained while a non-blocking operation uses it
    // result
    MPI_Status status{};
    int index = 0;  ///< handle index when in the request table

    void reset() noexcept;
    /// Marks complete and wakes the waiters (any thread).
    void complete() noexcept;
    /// Parks the caller until complete (may yield). Returns true if it parked: the completer then
    /// released the request before waking us, so no quiesce() is needed.
    bool wait(const char* what) noexcept;
    /// Makes sure no completer is still inside before the request is reused or freed.
    void quiesce() noexcept {
        lk.lock();
        lk.unlock();
    }
};

/// Request handles: a process-wide table of chunks (never freed, so a handle's memory stays
/// valid), and a free list per rank (no contention between ranks; a spinlock, uncontended
/// unless the rank's own threads call MPI at once under MPI_THREAD_MULTIPLE).
class request_pool {
public:
    request* alloc() noexcept;
    void release(request* r) noexcept;
    /// MPI_Request_free of an active request: released by a later alloc() once complete.
    void orphan(request* r) noexcept {
        spin_guard g(lk_);
        orphans_.push_back(r);
    }
    static request* from_handle(MPI_Request h) noexcept;
    static MPI_Request handle_of(const request* r) noexcept { return MPC_HANDLE(MPC_HANDLE_KIND_REQUEST, r->index); }

    /// Releases the orphans that have completed.
    void reap() noexcept {
        spin_guard g(lk_);
        reap_orphans();
    }

private:
    void reap_orphans() noexcept;  ///< lk_ held
    void release_locked(request* r) noexcept;
    spinlock lk_;
    std::vector<request*> free_;
    std::vector<request*> orphans_;
};

/// A message that arrived before its receive was posted.
struct unexpected_msg {
    unexpected_msg* next = nullptr;
    std::uint32_t context;
    int source;  ///< sender's rank in the communicator
    int tag;
    std::size_t bytes;
    void* eager = nullptr;        ///< eager copy, packed (stored right after the descriptor), or
    request* sender = nullptr;    ///< rendezvous: the sender's pending request
};

class match_engine {
public:
    /// Sender side: delivers to the posted receive that matches, or queues the message.
    /// `sreq` completes when the data has left `buf` (now for eager, at match for rendezvous).
    /// `sync` forces rendezvous (MPI_Ssend).
    void deliver(std::uint32_t context, int source, int tag, const typed_buf& data, request* sreq,
                 bool sync) noexcept;
    /// Receiver side: takes the first matching unexpected message, or posts `r`.
    void post(request* r) noexcept;
    /// Probe: the status of the first matching unexpected message; false if none.
    bool probe(std::uint32_t context, int source, int tag, MPI_Status* st) noexcept;
    /// Blocking probe: parks the caller until a matching message is queued (may yield).
    void probe_wait(std::uint32_t context, int source, int tag, MPI_Status* st) noexcept;
    /// Removes a posted receive (MPI_Cancel); false if it was already matched.
    bool cancel(request* r) noexcept;
    /// Matched probe: removes and returns the first matching unexpected message (nullptr if
    /// none); `wait` parks until one arrives.
    unexpected_msg* take(std::uint32_t context, int source, int tag, bool wait) noexcept;
    /// Receives a message taken by take() into a receive request (the request's buffer and
    /// capacity are set) and completes it.
    static void receive_taken(unexpected_msg* m, request* r) noexcept;

    static std::size_t eager_limit() noexcept;

private:
    spinlock lk_;
    request* posted_head_ = nullptr;
    request* posted_tail_ = nullptr;
    unexpected_msg* unexp_head_ = nullptr;
    unexpected_msg* unexp_tail_ = nullptr;
    sched::wait_queue probers_;  ///< ULTs in MPI_Probe / MPI_Mprobe, woken on each arrival

    const unexpected_msg* find_unexpected(std::uint32_t context, int source, int tag) const noexcept;
    unexpected_msg* unlink_unexpected(std::uint32_t context, int source, int tag) noexcept;
};

/// Fills a status with the received byte count.
void set_status(MPI_Status* st, int source, int tag, std::size_t bytes, int error) noexcept;
std::size_t status_bytes(const MPI_Status& st) noexcept;

}  // namespace mpc::mpi
