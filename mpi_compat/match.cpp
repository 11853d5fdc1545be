#include "mpi_compat/match.hpp"

#include <time.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <mutex>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "mpi_compat/datatype/copy.hpp"
#include "mpi_compat/p2p.hpp"
#include "mpi_compat/remote.hpp"
#include "scheduler/detail.hpp"

namespace mpc::mpi {

// ---- status -------------------------------------------------------------------------------

std::size_t status_bytes(const MPI_Status& st) noexcept {
    return static_cast<std::size_t>(static_cast<unsigned>(st.mpc_count_lo)) |
           (static_cast<std::size_t>(static_cast<unsigned>(st.mpc_count_hi_and_cancelled)) >> 1 << 32);
}

// ---- requests -----------------------------------------------------------------------------

void request::reset() noexcept {
    next = nullptr;
    state.store(pending, std::memory_order_relaxed);
    kind = req_kind::recv;
    persistent = false;
    active = true;
    context = 0;
    source = MPI_ANY_SOURCE;
    tag = MPI_ANY_TAG;
    target = typed_buf{};
    source_data = typed_buf{};
    queued_at = nullptr;
    held = nullptr;
    status = MPI_Status{};
    args = persistent_args{nullptr, 0, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_NULL, send_mode::standard};
    greq = grequest_fns{nullptr, nullptr, nullptr, nullptr};
    bsend_block = nullptr;
    release_fn = nullptr;
    release_arg = nullptr;
    new (&netc) net::completion{};
}

void request::wake_waiter(std::uintptr_t waiter) noexcept {
    tsan_acquire(&state);  // the waiter is parked until signalled: *this still exists
    auto* w = reinterpret_cast<completion_waiter*>(waiter);
    if (w->fn != nullptr) {
        w->fn(w);
    } else if (w->sem != nullptr) {
        w->sem->release();
    } else {
        sched::detail::make_ready(w->u);
    }
}

std::uint64_t wait_spin_ns() noexcept {
    static const std::uint64_t ns = [] {
        auto v = config::get_int("MPC_MPI_WAIT_SPIN_US");
        return v && *v > 0 ? static_cast<std::uint64_t>(*v) * 1000 : std::uint64_t{0};
    }();
    return ns;
}

namespace {

struct park_args {
    request* r;
    completion_waiter w;
};

/// Runs on the waiter's VP once its context is saved: publishes the waiter, unless the
/// request completed meanwhile (or, erroneously, another waiter is there: then poll).
bool publish_waiter(void* arg, sched::ult*) noexcept {
    auto* a = static_cast<park_args*>(arg);
    return a->r->watch(&a->w);
}
}  // namespace

void request::wait_slow(const char* what) noexcept {
    sched::vp* v = sched::detail::this_vp();
    sched::ult* me = v != nullptr ? v->current : nullptr;
    if (me == nullptr) {
        // A plain thread (one that a rank created): poll, backing off to short sleeps.
        for (unsigned spins = 0; !is_done(); ++spins) {
            if (spins < 1000) {
                cpu_relax();
            } else {
                struct timespec ts = {0, spins < 10000 ? 1000 : 50000};
                nanosleep(&ts, nullptr);
            }
        }
        return;
    }
    // Spin only while the VP has nothing else to run (sched::spin_until); with other ranks
    // ready, park at once (the inline test saves the calls on the in-process message path).
    if (!sched::detail::vp_has_work(v)) {
        auto done_cond = [](void* self) noexcept { return static_cast<request*>(self)->is_done(); };
        if (sched::detail::spin_until_current(v, done_cond, this, wait_spin_ns())) {
            return;
        }
    } else if (is_done()) {
        return;
    }
    park_args a{this, completion_waiter{me, nullptr}};
    sched::detail::park_publish_current(v, me, &publish_waiter, &a, what);
    while (!is_done()) {  // only when a second waiter found the slot taken
        sched::yield();
    }
}

namespace {
constexpr int chunk_bits = 10;
constexpr int chunk_size = 1 << chunk_bits;
constexpr int max_chunks = (1 << 24) / chunk_size;

struct request_table {
    std::mutex grow;
    std::atomic<request*> chunks[max_chunks] = {};
    int nchunks = 0;
};

request_table& table() {
    static request_table t;
    return t;
}
}  // namespace

void request_pool::reap_orphans() noexcept {
    for (std::size_t i = 0; i < orphans_.size();) {
        request* r = orphans_[i];
        if (r->is_done()) {
            orphans_[i] = orphans_.back();
            orphans_.pop_back();
            p2p::on_complete(*r, true);  // freed by MPI_Request_free while active
            release_locked(r);
        } else {
            ++i;
        }
    }
}

request* request_pool::alloc() noexcept {
    guard g(*this);
    if (!orphans_.empty()) {
        reap_orphans();
    }
    if (free_.empty()) {
        request_table& t = table();
        std::lock_guard<std::mutex> grow(t.grow);
        if (t.nchunks == max_chunks) {
            return nullptr;
        }
        auto* chunk = new (std::nothrow) request[chunk_size];
        if (chunk == nullptr) {
            return nullptr;
        }
        int base = t.nchunks * chunk_size;
        for (int i = chunk_size - 1; i >= 0; --i) {
            chunk[i].index = base + i;
            chunk[i].net_serial = 0;
            if (base + i != 0) {  // index 0 is MPI_REQUEST_NULL
                free_.push_back(&chunk[i]);
            }
        }
        t.chunks[t.nchunks].store(chunk, std::memory_order_release);
        ++t.nchunks;
    }
    request* r = free_.back();
    free_.pop_back();
    r->reset();
    r->in_table = true;
    return r;
}

void request_pool::release(request* r) noexcept {
    guard g(*this);
    release_locked(r);
}

void request_pool::release_locked(request* r) noexcept {
    if (r->held != nullptr) {
        datatype::release(r->held);
        r->held = nullptr;
    }
    r->in_table = false;
    free_.push_back(r);
}

request* request_pool::from_handle(MPI_Request h) noexcept {
    if ((static_cast<unsigned>(h) >> 24) != MPC_HANDLE_KIND_REQUEST) {
        return nullptr;
    }
    int idx = h & 0xffffff;
    request* chunk = table().chunks[idx >> chunk_bits].load(std::memory_order_acquire);
    if (idx == 0 || chunk == nullptr) {
        return nullptr;
    }
    request* r = &chunk[idx & (chunk_size - 1)];
    return r->in_table ? r : nullptr;
}

// ---- matching -----------------------------------------------------------------------------

namespace {
/// Copies n bytes of a typed source into a receive target (one copy, layout to layout).
void copy_data(const typed_buf& from, const typed_buf& to, std::size_t n) noexcept {
    if (n == 0) {
        return;
    }
    if (from.contig && to.contig) {
        std::memcpy(const_cast<char*>(to.base()), from.base(), n);
    } else {
        copy(from.buf, from.count, *from.type, const_cast<void*>(to.buf), to.count, *to.type,
             static_cast<count_t>(n));
    }
}

/// Completes a receive that got `bytes` (truncated to its capacity).
void complete_receive(request* r, int source, int tag, std::size_t bytes, std::size_t got) noexcept {
    set_status(&r->status, source, tag, got, bytes > r->target.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    r->complete();
}

std::size_t fit(std::size_t bytes, const request* r) noexcept { return bytes <= r->target.bytes ? bytes : r->target.bytes; }
}  // namespace

void pack_data(const typed_buf& from, void* packed, std::size_t n) noexcept {
    if (n == 0) {
        return;
    }
    if (from.contig) {
        std::memcpy(packed, from.base(), n);
    } else {
        segment seg(from.buf, from.count, *from.type);
        seg.pack(packed, static_cast<count_t>(n));
    }
}

void unpack_data(const void* packed, const typed_buf& to, std::size_t n) noexcept {
    if (n == 0) {
        return;
    }
    if (to.contig) {
        std::memcpy(const_cast<char*>(to.base()), packed, n);
    } else {
        segment seg(to.buf, to.count, *to.type);
        seg.unpack(packed, static_cast<count_t>(n));
    }
}

namespace {
// The engine's two queues (posted receives, unexpected messages) are singly linked through
// `next`, with a tail pointer for appends (lock held; queue_append() in match.hpp).

/// The first entry pred accepts, removed from its queue; nullptr if none.
template <class T, class Pred>
T* unlink_if(T*& head, T*& tail, Pred pred) noexcept {
    T* prev = nullptr;
    for (T* x = head; x != nullptr; prev = x, x = x->next) {
        if (pred(x)) {
            (prev != nullptr ? prev->next : head) = x->next;
            if (tail == x) {
                tail = prev;
            }
            x->next = nullptr;
            return x;
        }
    }
    return nullptr;
}
}  // namespace

request* match_engine::unlink_posted(std::uint32_t context, int source, int tag) noexcept {
    return unlink_if(posted_head_, posted_tail_, [&](const request* r) {
        return r->context == context && envelope_matches(r->source, r->tag, source, tag);
    });
}

void match_engine::enqueue_unexpected(unexpected_msg* m) noexcept {
    queue_append(unexp_head_, unexp_tail_, m);
    sched::ult* probers = probers_.take_all_locked();
    lk_.unlock();
    sched::wake_all(probers);
}

std::size_t match_engine::eager_limit() noexcept {
    static const std::size_t limit = [] {
        auto v = config::get_size("MPC_MPI_EAGER_LIMIT");
        return v ? *v : std::size_t{16384};
    }();
    return limit;
}

typed_buf raw_bytes(const void* buf, std::size_t n) noexcept {
    return typed(buf, static_cast<count_t>(n), predefined(MPI_BYTE & 0xffffff));
}

void match_engine::deliver(std::uint32_t context, int source, int tag, const typed_buf& data, request* sreq,
                           bool sync) noexcept {
    const std::size_t bytes = data.bytes;
    lk_.lock();
    if (request* r = unlink_posted(context, source, tag); r != nullptr) {
        lk_.unlock();
        std::size_t n = fit(bytes, r);
        copy_data(data, r->target, n);  // the single copy
        complete_receive(r, source, tag, bytes, n);
        sreq->complete_unwatched();
        return;
    }
    // One allocation: the descriptor, followed by the eager payload if there is one.
    bool eager = !sync && bytes <= eager_limit();
    void* mem = std::malloc(sizeof(unexpected_msg) + (eager ? bytes : 0));
    if (mem == nullptr && eager) {
        eager = false;  // fall back to rendezvous: no payload needed
        mem = std::malloc(sizeof(unexpected_msg));
    }
    auto* m = mem != nullptr ? new (mem) unexpected_msg{nullptr, context, source, tag, bytes} : nullptr;
    if (m != nullptr && eager && bytes != 0) {
        m->eager = m + 1;
        pack_data(data, m->eager, bytes);
    }
    if (m == nullptr) {
        lk_.unlock();
        MPC_LOG(fatal, mpi, "out of memory queueing a message of %zu bytes", bytes);
        std::abort();
    }
    if (!eager) {
        sreq->source_data = data;
        sreq->queued_at = this;
        m->sender = sreq;
    }
    enqueue_unexpected(m);
    if (eager) {
        sreq->complete_unwatched();
    }
}

unexpected_msg* match_engine::unlink_unexpected(std::uint32_t context, int source, int tag) noexcept {
    return unlink_if(unexp_head_, unexp_tail_,
        [&](const unexpected_msg* m) { return m->context == context && envelope_matches(source, tag, m->source, m->tag); });
}

void match_engine::deliver_remote(const net::envelope& env, net::incoming& msg) noexcept {
    const auto source = static_cast<int>(env.source);
    lk_.lock();
    if (request* r = unlink_posted(env.context_id, source, env.tag); r != nullptr) {
        lk_.unlock();
        remote::receive(r, env, msg, nullptr);
        return;
    }
    // Unexpected: keep the transport's descriptor (eager data stays where UCX put it; a
    // rendezvous message stays at the sender), or copy eager data that cannot be kept.
    const bool kept = msg.keep();
    const std::size_t copy = kept ? 0 : msg.size();
    void* mem = std::malloc(sizeof(unexpected_msg) + sizeof(remote::remote_msg) + copy);
    if (mem == nullptr) {
        lk_.unlock();
        MPC_LOG(fatal, mpi, "out of memory queueing a message of %zu bytes from another process",
                static_cast<std::size_t>(env.size));
        std::abort();
    }
    auto* m = new (mem) unexpected_msg{nullptr, env.context_id, source, env.tag, static_cast<std::size_t>(env.size)};
    m->remote = new (m + 1) remote::remote_msg{env, msg};
    if (!kept && copy != 0) {
        m->eager = m->remote + 1;
        std::memcpy(m->eager, msg.data(), copy);
    }
    enqueue_unexpected(m);
}

void match_engine::receive_taken(unexpected_msg* m, request* r) noexcept {
    std::size_t n = fit(m->bytes, r);
    if (m->remote != nullptr) {
        static_assert(std::is_trivially_destructible_v<remote::remote_msg>);
        remote::receive(r, m->remote->env, m->remote->msg, m->eager);
    } else if (m->sender != nullptr) {
        copy_data(m->sender->source_data, r->target, n);  // sender -> receiver, one copy
        complete_receive(r, m->source, m->tag, m->bytes, n);
        m->sender->complete();
    } else {
        unpack_data(m->eager, r->target, n);
        complete_receive(r, m->source, m->tag, m->bytes, n);
    }
    static_assert(std::is_trivially_destructible_v<unexpected_msg>);
    std::free(m);  // the descriptor and its eager payload
}

void match_engine::post(request* r) noexcept {
    lk_.lock();
    if (unexpected_msg* m = unlink_unexpected(r->context, r->source, r->tag); m != nullptr) {
        lk_.unlock();
        receive_taken(m, r);
        return;
    }
    queue_append(posted_head_, posted_tail_, r);
    lk_.unlock();
}

unexpected_msg* match_engine::take(std::uint32_t context, int source, int tag, bool wait) noexcept {
    bool plain = sched::self() == nullptr;
    for (unsigned spins = 0;; ++spins) {
        lk_.lock();
        if (unexpected_msg* m = unlink_unexpected(context, source, tag); m != nullptr || !wait) {
            lk_.unlock();
            return m;
        }
        if (plain) {  // a thread a rank created: poll
            lk_.unlock();
            struct timespec ts = {0, spins < 100 ? 1000 : 50000};
            nanosleep(&ts, nullptr);
            continue;
        }
        probers_.wait(lk_, "MPI_Mprobe");
    }
}

const unexpected_msg* match_engine::find_unexpected(std::uint32_t context, int source, int tag) const noexcept {
    for (const unexpected_msg* m = unexp_head_; m != nullptr; m = m->next) {
        if (m->context == context && envelope_matches(source, tag, m->source, m->tag)) {
            return m;
        }
    }
    return nullptr;
}

bool match_engine::probe(std::uint32_t context, int source, int tag, MPI_Status* st) noexcept {
    spin_guard g(lk_);
    const unexpected_msg* m = find_unexpected(context, source, tag);
    if (m != nullptr) {
        set_status(st, m->source, m->tag, m->bytes, MPI_SUCCESS);
    }
    return m != nullptr;
}

void match_engine::probe_wait(std::uint32_t context, int source, int tag, MPI_Status* st) noexcept {
    if (sched::self() == nullptr) {  // plain thread: poll
        for (unsigned spins = 0; !probe(context, source, tag, st); ++spins) {
            struct timespec ts = {0, spins < 100 ? 1000 : 50000};
            nanosleep(&ts, nullptr);
        }
        return;
    }
    for (;;) {
        lk_.lock();
        if (const unexpected_msg* m = find_unexpected(context, source, tag); m != nullptr) {
            set_status(st, m->source, m->tag, m->bytes, MPI_SUCCESS);
            lk_.unlock();
            return;
        }
        probers_.wait(lk_, "MPI_Probe");  // woken by the next arrival; look again
    }
}

bool match_engine::cancel(request* r) noexcept {
    spin_guard g(lk_);
    return unlink_if(posted_head_, posted_tail_, [r](const request* c) { return c == r; }) != nullptr;
}

bool match_engine::cancel_remote(int source_world, std::uint64_t cookie, std::uint32_t serial) noexcept {
    lk_.lock();
    unexpected_msg* m = unlink_if(unexp_head_, unexp_tail_, [&](const unexpected_msg* u) {
        return u->remote != nullptr && u->remote->env.source_world == source_world && u->remote->env.cookie == cookie &&
               u->remote->env.seq == serial;
    });
    lk_.unlock();
    if (m == nullptr) {
        return false;
    }
    if (m->remote->msg.kept()) {
        remote::transport().release(m->remote->msg);  // a rendezvous sender completes
    }
    std::free(m);
    return true;
}

bool match_engine::cancel_send(request* sreq) noexcept {
    lk_.lock();
    unexpected_msg* m =
        unlink_if(unexp_head_, unexp_tail_, [sreq](const unexpected_msg* u) { return u->sender == sreq; });
    lk_.unlock();
    std::free(m);
    return m != nullptr;
}

}  // namespace mpc::mpi
