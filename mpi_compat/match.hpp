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
#include <cstring>
#include <vector>

#include "lib/spinlock.hpp"
#include "lib/tsan.hpp"
#include "network/transport.hpp"
#include "mpi_compat/datatype/datatype.hpp"
#include "scheduler/sync.hpp"

namespace mpc::mpi {

struct task;
namespace remote {
struct remote_msg;
}

enum class req_kind : std::uint8_t { send, recv, generalized };

/// A typed buffer: `count` elements of `type` at `buf` (layout per the datatype), `bytes` of
/// packed data. `contig`: the data is one block of `bytes` at buf + type->true_lb().
/// No member initializers: a request on the stack leaves its unused one unset (typed_buf{}
/// is all zero: no buffer, no type, 0 bytes).
struct typed_buf {
    const void* buf;
    count_t count;
    const datatype* type;
    std::size_t bytes;
    bool contig;

    /// The contiguous block (valid when contig).
    const char* base() const noexcept { return static_cast<const char*>(buf) + (type ? type->true_lb() : 0); }
};

/// `count` elements of `type` at `buf` (the type must be valid for communication).
[[gnu::always_inline]] inline typed_buf typed(const void* buf, count_t count, const datatype* type) noexcept {
    typed_buf t;  // NOLINT: every field set below
    t.buf = buf;
    t.count = count;
    t.type = type;
    t.bytes = static_cast<std::size_t>(count * type->size());
    t.contig = count <= 1 ? type->is_contiguous() || t.bytes == 0 : type->is_contiguous();
    return t;
}
/// `n` raw bytes at buf (MPI_BYTE).
typed_buf raw_bytes(const void* buf, std::size_t n) noexcept;

/// How a send was started (persistent requests remember it).
enum class send_mode : std::uint8_t { standard, sync, ready, buffered };

/// Arguments of a persistent request, replayed by MPI_Start. No member initializers: a
/// request on the stack leaves them unset (request::reset() sets them).
struct persistent_args {
    const void* buf;
    int count;
    MPI_Datatype type;
    int peer;
    int tag;
    MPI_Comm comm;
    send_mode mode;
};

/// Callbacks of a generalized request (MPI_Grequest_start).
struct grequest_fns {
    int (*query)(void*, MPI_Status*);
    int (*free)(void*);
    int (*cancel)(void*, int);
    void* state;
};

/// Who waits for a request: a parked ULT, (MPI_Waitany / Waitsome) a semaphore shared by
/// several requests, or a function the completer calls (the thread-less non-blocking
/// collectives between processes, coll/hier_nb.cpp: it runs wherever the request completes,
/// inside the transport's progress among others, so it must not yield or block). Lives on the
/// waiter's stack, or as long as its request is pending.
struct completion_waiter {
    sched::ult* u = nullptr;
    sched::semaphore* sem = nullptr;
    void (*fn)(completion_waiter* self) noexcept = nullptr;
    void* arg = nullptr;  ///< for fn
};

/// A point-to-point request.
///
/// Completion protocol: one atomic word, `state`: pending (0), done (1), or the address of
/// the one completion_waiter parked on it. The completer writes the status, then exchanges in
/// `done`; that exchange is its last access to the request (the waiter may free it at once),
/// and if it took a waiter it wakes it. A waiter spins briefly while its VP has nothing else
/// to do, then parks and publishes itself with a CAS pending -> &waiter only after its context
/// is saved (sched::park_publish), so no wake-up is lost or early. No lock, no quiescence:
/// two atomic operations per completed wait.
///
/// Only the fields before `// cold` are initialized by the constructor, so that the blocking
/// calls can keep a request on their stack for a few nanoseconds; reset() initializes the
/// whole request for the pooled (handle) ones.
struct request {
    static constexpr std::uintptr_t pending = 0;
    static constexpr std::uintptr_t completed = 1;

    request* next = nullptr;  ///< posted-queue link
    std::atomic<std::uintptr_t> state{pending};
    req_kind kind = req_kind::recv;
    bool persistent = false;  ///< made by *_init: survives completion until MPI_Request_free
    bool active = true;       ///< persistent requests: started and not yet completed by a wait
    bool in_table = false;
    // receive side
    std::uint32_t context = 0;
    int source = MPI_ANY_SOURCE;  ///< comm rank or MPI_ANY_SOURCE
    int tag = MPI_ANY_TAG;
    typed_buf target;  ///< where a receive lands (target.bytes: its capacity); set by start_recv
    // send side (rendezvous: the receiver copies from here)
    typed_buf source_data;  ///< set by deliver() when it queues a rendezvous
    class match_engine* queued_at = nullptr;  ///< rendezvous send: the engine holding its message
    const datatype* held = nullptr;  ///< type retained while a non-blocking operation uses it
    // result (written by the completer before `done`)
    MPI_Status status;
    // cold: meaningful for pooled requests only (set by reset() / the calls that use them)
    int index;  ///< handle index in the request table (set once, when its chunk is made)
    persistent_args args;
    grequest_fns greq;
    void* bsend_block;  ///< buffered send: its block in the attached buffer
    /// Run once when the request is done with (mpc_request_on_release): after its completion
    /// (non-persistent) or when MPI_Request_free frees it (persistent). The mpi_f08 bindings
    /// release there what a non-contiguous Fortran buffer needed (docs/fortran.md).
    void (*release_fn)(void*);
    void* release_arg;
    // to or from a rank of another process (remote.cpp; set by the operation that uses them)
    /// The transport's record of the send or fetch. In a union so that the constructor leaves
    /// it alone (net::completion zeroes its 64 bytes, a cost every stack request would pay: 15%
    /// of the 0-byte latency between ranks of one VP); constructed by reset() and by remote.cpp
    /// before use.
    union {
        net::completion netc;
    };
    void* net_tmp;         ///< packed copy of a non-contiguous send, or a receive's bounce buffer
    int net_pending;       ///< events before a remote send completes (sent, and ack if synchronous)
    int net_cancel;        ///< MPI_Cancel of a remote send: 0 waiting for the answer, 1 cancelled, 2 not
    std::uint32_t net_serial;  ///< pooled requests: remote sends made with it (zeroed once, kept by reset())

    request() noexcept {}  // NOLINT: leaves the cold fields and the status uninitialized
    request(const request&) = delete;
    request& operator=(const request&) = delete;

    void reset() noexcept;
    bool is_done() const noexcept {
        if (state.load(std::memory_order_acquire) != completed) {
            return false;
        }
        tsan_acquire(&state);
        return true;
    }
    /// Marks complete and wakes the waiter (any thread). The status must be written already.
    void complete() noexcept {
        tsan_release(&state);
        const std::uintptr_t old = state.exchange(completed, std::memory_order_acq_rel);  // last access to *this
        if (old > completed) {
            wake_waiter(old);
        }
    }
    /// complete() for a request nobody can be waiting on yet: the calling operation has not
    /// returned its handle (a plain store instead of an exchange).
    void complete_unwatched() noexcept {
        tsan_release(&state);
        state.store(completed, std::memory_order_release);
    }
    /// Returns once complete (may spin briefly, then park). One waiter at a time, as MPI
    /// requires; a second concurrent waiter polls.
    void wait(const char* what) noexcept {
        if (!is_done()) {
            wait_slow(what);
        }
    }
    void wait_slow(const char* what) noexcept;
    /// complete() that found a waiter (the address complete() exchanged out of `state`).
    void wake_waiter(std::uintptr_t waiter) noexcept;
    /// Registers w to be signalled on completion (Waitany); false if already complete.
    bool watch(completion_waiter* w) noexcept {
        std::uintptr_t expect = pending;
        tsan_release(&state);  // may run in a post-switch action: see lib/tsan.hpp
        return state.compare_exchange_strong(expect, reinterpret_cast<std::uintptr_t>(w), std::memory_order_acq_rel,
                                             std::memory_order_acquire);
    }
    /// Withdraws a watch(); false if the completer took w (it signals w exactly once).
    bool unwatch(completion_waiter* w) noexcept {
        std::uintptr_t expect = reinterpret_cast<std::uintptr_t>(w);
        bool ok = state.compare_exchange_strong(expect, pending, std::memory_order_acq_rel, std::memory_order_acquire);
        tsan_acquire(&state);
        return ok;
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
        guard g(*this);
        orphans_.push_back(r);
    }
    static request* from_handle(MPI_Request h) noexcept;
    static MPI_Request handle_of(const request* r) noexcept { return MPC_HANDLE(MPC_HANDLE_KIND_REQUEST, r->index); }

    /// Releases the orphans that have completed.
    void reap() noexcept {
        guard g(*this);
        reap_orphans();
    }
    /// Whether calls take the pool's lock: only when several threads of the rank may call MPI
    /// at once (MPI_THREAD_MULTIPLE); set by MPI_Init / MPI_Init_thread, before any request.
    void set_locking(bool on) noexcept { locking_ = on; }

private:
    void reap_orphans() noexcept;  ///< lk_ held
    void release_locked(request* r) noexcept;
    /// Takes lk_ when the pool is locking (see set_locking()).
    struct guard {
        explicit guard(request_pool& p) noexcept : pool(p) {
            if (pool.locking_) {
                pool.lk_.lock();
            }
        }
        ~guard() {
            if (pool.locking_) {
                pool.lk_.unlock();
            }
        }
        guard(const guard&) = delete;
        guard& operator=(const guard&) = delete;
        request_pool& pool;
    };
    spinlock lk_;
    bool locking_ = true;
    std::vector<request*> free_;
    std::vector<request*> orphans_;
};

/// Appends x to a matching engine queue (singly linked through `next`, with a tail pointer).
template <class T>
inline void queue_append(T*& head, T*& tail, T* x) noexcept {
    x->next = nullptr;
    (tail != nullptr ? tail->next : head) = x;
    tail = x;
}

/// Whether a receive for (want_src, want_tag) takes a message from src with tag (wildcards).
inline bool envelope_matches(int want_src, int want_tag, int src, int tag) noexcept {
    return (want_src == MPI_ANY_SOURCE || want_src == src) && (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/// Fills a status with the received byte count.
inline void set_status(MPI_Status* st, int source, int tag, std::size_t bytes, int error) noexcept {
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = error;
    st->mpc_count_lo = static_cast<int>(bytes & 0xffffffffU);
    st->mpc_count_hi_and_cancelled = static_cast<int>((bytes >> 32) << 1);
}

/// What the user's status receives: every field but MPI_ERROR, which "message-passing calls do
/// not modify"; only the calls that return several statuses set it, and only when they return
/// MPI_ERR_IN_STATUS (MPI 3.1 section 3.2.5). `out` may be MPI_STATUS_IGNORE.
inline void user_status(MPI_Status* out, const MPI_Status& in) noexcept {
    if (out != MPI_STATUS_IGNORE) {
        const int error = out->MPI_ERROR;
        *out = in;
        out->MPI_ERROR = error;
    }
}

/// set_status() for the user's status (MPI_ERROR left as it is; `st` may be MPI_STATUS_IGNORE).
inline void set_user_status(MPI_Status* st, int source, int tag, std::size_t bytes) noexcept {
    if (st != MPI_STATUS_IGNORE) {
        set_status(st, source, tag, bytes, st->MPI_ERROR);
    }
}

/// A message that arrived before its receive was posted.
struct unexpected_msg {
    unexpected_msg* next = nullptr;
    std::uint32_t context;
    int source;  ///< sender's rank in the communicator
    int tag;
    std::size_t bytes;
    void* eager = nullptr;        ///< eager copy, packed (stored right after the descriptor), or
    request* sender = nullptr;    ///< rendezvous: the sender's pending request, or
    remote::remote_msg* remote = nullptr;  ///< from another process (stored after the descriptor)
};

class match_engine {
public:
    /// Sender side: delivers to the posted receive that matches, or queues the message.
    /// `sreq` completes when the data has left `buf` (now for eager, at match for rendezvous);
    /// the caller must not have handed `sreq` to anyone yet (it is completed unwatched).
    /// `sync` forces rendezvous (MPI_Ssend).
    void deliver(std::uint32_t context, int source, int tag, const typed_buf& data, request* sreq,
                 bool sync) noexcept;
    /// deliver() of a contiguous message when the oldest posted receive takes it whole (same
    /// context, source and tag match, contiguous target with room): copies it and completes
    /// that receive, without a send request (MPI_Send's fast path, p2p.hpp). Does nothing and
    /// returns false otherwise; the caller then calls deliver(), which finds any later match.
    [[gnu::always_inline]] bool deliver_posted(std::uint32_t context, int source, int tag, const void* buf,
                                               std::size_t bytes) noexcept {
        lk_.lock();
        request* r = posted_head_;
        if (r == nullptr || r->context != context || !envelope_matches(r->source, r->tag, source, tag) ||
            !r->target.contig || bytes > r->target.bytes) {
            lk_.unlock();
            return false;
        }
        posted_head_ = r->next;
        if (posted_head_ == nullptr) {
            posted_tail_ = nullptr;
        }
        lk_.unlock();
        r->next = nullptr;
        if (bytes != 0) {
            std::memcpy(const_cast<char*>(r->target.base()), buf, bytes);  // the single copy
        }
        set_status(&r->status, source, tag, bytes, MPI_SUCCESS);
        r->complete();
        return true;
    }
    /// post() when no unexpected message is queued (MPI_Recv's fast path): appends r to the
    /// posted receives. False (nothing done) when some message is queued: call post().
    [[gnu::always_inline]] bool post_if_none_queued(request* r) noexcept {
        lk_.lock();
        if (unexp_head_ != nullptr) {
            lk_.unlock();
            return false;
        }
        queue_append(posted_head_, posted_tail_, r);
        lk_.unlock();
        return true;
    }
    /// A message from another process (the transport's receive handler; remote.hpp): to the
    /// posted receive that matches, or queued with the transport's descriptor kept.
    void deliver_remote(const net::envelope& env, net::incoming& msg) noexcept;
    /// Withdraws the unexpected remote message that world rank `source_world` sent with
    /// `cookie` and serial number `serial` (MPI_Cancel of that send); false when a receive took
    /// it already.
    bool cancel_remote(int source_world, std::uint64_t cookie, std::uint32_t serial) noexcept;
    /// Receiver side: takes the first matching unexpected message, or posts `r`.
    void post(request* r) noexcept;
    /// Probe: the status of the first matching unexpected message; false if none.
    bool probe(std::uint32_t context, int source, int tag, MPI_Status* st) noexcept;
    /// Blocking probe: parks the caller until a matching message is queued (may yield).
    void probe_wait(std::uint32_t context, int source, int tag, MPI_Status* st) noexcept;
    /// Removes a posted receive (MPI_Cancel); false if it was already matched.
    bool cancel(request* r) noexcept;
    /// Removes the queued message of a rendezvous send (MPI_Cancel of a send); false if a
    /// receive (or a matched probe) has taken it already.
    bool cancel_send(request* sreq) noexcept;
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
    /// The first posted receive / unexpected message that matches (lock held).
    request* unlink_posted(std::uint32_t context, int source, int tag) noexcept;
    unexpected_msg* unlink_unexpected(std::uint32_t context, int source, int tag) noexcept;
    /// Appends m to the unexpected queue, unlocks, wakes the probers.
    void enqueue_unexpected(unexpected_msg* m) noexcept;
};

/// How long a blocked rank busy-waits, while its VP is idle, before it parks (ns;
/// MPC_MPI_WAIT_SPIN_US): requests and the shared-memory collectives.
std::uint64_t wait_spin_ns() noexcept;

/// n bytes of typed data packed into a contiguous buffer, and back (n <= the layout's bytes;
/// contiguous layouts: one memcpy).
void pack_data(const typed_buf& from, void* packed, std::size_t n) noexcept;
void unpack_data(const void* packed, const typed_buf& to, std::size_t n) noexcept;

std::size_t status_bytes(const MPI_Status& st) noexcept;

}  // namespace mpc::mpi
