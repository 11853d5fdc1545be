/// \file
/// The message paths of the shared-memory transport: writing a message into a peer's ring
/// (or queueing it while the ring is full), draining this process's rings, rendezvous through
/// CMA. Design and ring format in shm.hpp.
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "lib/fence.hpp"
#include "lib/log.hpp"
#include "lib/tsan.hpp"
#include "network/shm_detail.hpp"

namespace mpc::net {

using namespace shm_detail;

namespace {

/// errc::internal with "what: errno's text" as the reason (status keeps a pointer: per thread).
status errno_status(const char* what) noexcept {
    thread_local char why[200];
    std::snprintf(why, sizeof why, "%s: %s", what, std::strerror(errno));
    return {errc::internal, why};
}

}  // namespace

status shm_detail::cma_copy(pid_t pid, void* local, const void* remote, std::size_t len, bool write) noexcept {
    std::size_t done = 0;
    while (done < len) {
        struct iovec l = {static_cast<char*>(local) + done, len - done};
        struct iovec r = {const_cast<char*>(static_cast<const char*>(remote)) + done, len - done};
        const ssize_t n = write ? ::process_vm_writev(pid, &l, 1, &r, 1, 0) : ::process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n == 0) {
                errno = EFAULT;
            }
            return errno_status(write ? "process_vm_writev of a rendezvous message"
                                      : "process_vm_readv of a rendezvous message");
        }
        done += static_cast<std::size_t>(n);
    }
    return {};
}

status shm_detail::sys_error(const char* what) noexcept {
    status st = errno_status(what);
    MPC_LOG(error, net, "%s", st.reason());
    return st;
}

namespace {

/// Asks for the line at p in the exclusive state (PREFETCHW; a no-op on x86 processors without
/// it, which decode the opcode as a NOP), so that a later store does not wait for the line.
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p, 1);
#endif
}

/// Ring lines ahead of the tail that a send asks for (see try_write).
constexpr std::uint64_t write_ahead = 8;

void wake_fd(int fd) noexcept {
    const std::uint64_t one = 1;
    ssize_t n = ::write(fd, &one, sizeof one);
    (void)n;  // a full counter already wakes the reader
}

}  // namespace

/// Writes `q` at the ring's tail (behind a pad record when it would cross the ring's end); false
/// when the ring has no room. Under p.lock.
bool shm_transport::try_write(peer& p, const queued& q) noexcept {
    const std::uint32_t mask = slots_ - 1;
    std::uint64_t type = q.type;
    std::size_t start = data_off;
    if (type == t_eager && q.len != q.env.size) {
        type = t_eager_len;
        start = line;
    }
    const std::size_t lines = type == t_rts ? 2 : (start + q.len + line - 1) / line;
    const std::uint64_t pos = p.tail & mask;
    const std::uint64_t pad = pos + lines > slots_ ? slots_ - pos : 0;
    if (p.tail + pad + lines - p.cached_head > slots_) {
        p.cached_head = p.tx->head.load(std::memory_order_acquire);
        if (p.tail + pad + lines - p.cached_head > slots_) {
            return false;
        }
    }
    if (pad != 0) {
        flag_of(p.tx->slot(p.tail, mask)).store((std::uint64_t{t_pad} << type_shift) | (p.tail + 1),
                                                std::memory_order_release);
        p.tail += pad;
    }
    std::byte* s = p.tx->slot(p.tail, mask);
    std::memcpy(s, &q.env, sizeof(envelope));
    switch (type) {
    case t_eager:
        if (q.len != 0) {
            std::memcpy(s + data_off, q.data, q.len);
        }
        break;
    case t_eager_len: {
        const std::uint64_t n = q.len;
        std::memcpy(s + data_off, &n, sizeof n);
        if (q.len != 0) {
            std::memcpy(s + line, q.data, q.len);
        }
        break;
    }
    case t_rts: {
        const std::uint64_t a = reinterpret_cast<std::uintptr_t>(q.data);
        const std::uint64_t c = reinterpret_cast<std::uintptr_t>(q.c);
        std::memcpy(s + data_off, &a, sizeof a);
        std::memcpy(s + line, &c, sizeof c);
        std::memcpy(s + line + sizeof c, &q.aux, sizeof q.aux);
        break;
    }
    default:  // t_fin (descriptor + 1 in the envelope's tag), t_cts
        std::memcpy(s + data_off, &q.extra, sizeof q.extra);
        break;
    }
    flag_of(s).store((type << type_shift) | (p.tail + 1), std::memory_order_release);
    p.tail += lines;
    // In a stream of sends (the second one or later since a message came from this peer), the
    // lines the next sends will write, last read by the receiver a lap ago, are asked for now,
    // while they are not needed, instead of at the stores: otherwise each message's stores wait
    // for their lines' transfer from the receiver's cache, and the next send's lock (a locked
    // instruction, which drains the store buffer) waits for all of them, so the transfers of
    // consecutive messages never overlap. Only lines the receiver has consumed (within the free
    // space seen last), never the line it polls. Not after a receive: in a ping-pong the request
    // would reach the receiver's core while it handles the message (0-byte latency +2%).
    const std::uint32_t streak = p.tx_streak.load(std::memory_order_relaxed);
    p.tx_streak.store(streak + 1, std::memory_order_relaxed);
    for (std::uint64_t i = 0; streak != 0 && i < lines; ++i) {
        const std::uint64_t ahead = p.tail + write_ahead + i;
        if (ahead - p.cached_head >= slots_) {
            break;
        }
        prefetch_for_write(p.tx->slot(ahead, mask));
    }
    return true;
}

/// After publishing: signals the receiver if it may be asleep (the fence, or the receiver's
/// membarrier, pairs with arm()'s barrier: shm.hpp, "Sleep").
void shm_transport::notify(peer& p) noexcept {
    if (p.fence) {
        mpc::full_fence();
    }
    if (p.hdr->sleeping.load(std::memory_order_relaxed) != 0) {
        wake_fd(p.efd);
    }
}

/// Writes `q` now, or queues it behind earlier queued sends (progress() writes it later).
status shm_transport::post(peer& p, const queued& q, bool* written) noexcept {
    bool ok = false;
    p.lock.lock();
    if (p.queue.empty()) {
        ok = try_write(p, q);
    }
    if (!ok) {
        try {
            p.queue.push_back(q);
        } catch (...) {
            p.lock.unlock();
            return {errc::no_memory, "queueing a send to a full shared-memory ring"};
        }
        if (p.queue.size() == 1) {
            p.has_queue.store(true, std::memory_order_relaxed);
            queued_peers_.fetch_add(1, std::memory_order_relaxed);
            p.tx->waiting.store(1, std::memory_order_relaxed);
        }
    }
    p.lock.unlock();
    if (ok) {
        notify(p);
    }
    *written = ok;
    return {};
}

status shm_transport::send(int id, const envelope& env, const void* data, std::size_t len, completion* c) noexcept {
    peer* p = find(id);
    if (p == nullptr) {
        return {errc::invalid_argument, "send to a peer that is not connected"};
    }
    if (c == nullptr || c->fn == nullptr || (data == nullptr && len != 0)) {
        return {errc::invalid_argument, "send without a completion or without data"};
    }
    if (p->failed.load(std::memory_order_acquire)) {
        return {errc::internal, "send to a peer process that ended"};
    }
    c->header = env;
    // A rendezvous completes on the fin from the other process, maybe in another thread of this
    // one: the edge from here to there goes through the other process, which TSan cannot see.
    tsan_release(c);
    queued q;
    q.type = len > eager_max_ ? t_rts : t_eager;
    q.env = env;
    q.data = data;
    q.len = len;
    q.c = c;
    if (q.type == t_rts && split_min_ != 0 && len >= split_min_) {
        q.aux = 1;  // we help copy it (serve_cts)
        tsan_release(p->peer_xfers);  // serve_cts reads the buffer, maybe in another thread (see above)
    }
    bool written = false;
    if (status st = post(*p, q, &written); !st) {
        return st;
    }
    if (written && q.type == t_eager) {
        c->fn(c, {});
    }
    return {};
}

void shm_transport::send_fin(peer& p, std::uint64_t token, bool ok) noexcept {
    queued q;
    q.type = t_fin;
    q.env.size = ok ? 0 : 1;
    q.extra = token;
    bool written = false;
    if (status st = post(p, q, &written); !st) {
        MPC_LOG(error, net, "cannot answer a rendezvous of peer %d: %s", p.id, st.reason());
    }
}

/// Writes the queued sends that fit now; gives up on a peer whose process ended.
int shm_transport::drain_queue(peer& p) noexcept {
    int n = 0;
    for (;;) {
        p.lock.lock();
        if (p.queue.empty()) {
            p.lock.unlock();
            break;
        }
        const queued q = p.queue.front();
        if (!try_write(p, q)) {
            const bool dead = (++p.stalls % 4096) == 0 && peer_dead(p);
            p.lock.unlock();
            if (dead) {
                fail_queue(p);
            }
            break;
        }
        p.queue.pop_front();
        p.stalls = 0;
        if (p.queue.empty()) {
            p.has_queue.store(false, std::memory_order_relaxed);
            queued_peers_.fetch_sub(1, std::memory_order_relaxed);
        }
        p.lock.unlock();
        notify(p);
        if (q.type == t_eager) {
            q.c->fn(q.c, {});
        }
        ++n;
    }
    return n;
}

/// The peer's process ended with sends queued for it: they fail (the owner's completion sees
/// an error; the launcher is ending the job).
void shm_transport::fail_queue(peer& p) noexcept {
    std::deque<queued> lost;
    p.lock.lock();
    lost.swap(p.queue);
    if (p.has_queue.exchange(false, std::memory_order_relaxed)) {
        queued_peers_.fetch_sub(1, std::memory_order_relaxed);
    }
    p.lock.unlock();
    MPC_LOG(debug, net, "peer %d ended with %zu sends queued for it", p.id, lost.size());
    for (const queued& q : lost) {
        if (q.c != nullptr) {
            q.c->fn(q.c, {errc::internal, "the receiving process ended"});
        }
    }
}

/// With sends queued: asks the receiver for a wake-up, then whether the first fits now.
bool shm_transport::tx_can_move(peer& p) noexcept {
    p.lock.lock();
    bool fits = false;
    if (!p.queue.empty()) {
        p.tx->waiting.store(1, std::memory_order_relaxed);
        mpc::full_fence();  // against drain_ring's
        const std::uint64_t saved = p.cached_head;
        p.cached_head = p.tx->head.load(std::memory_order_acquire);
        fits = p.cached_head != saved;  // the receiver consumed since the last attempt
    }
    p.lock.unlock();
    return fits;
}

/// Handles the message whose first line is `first`; returns its number of lines.
std::size_t shm_transport::handle(peer& p, std::byte* first, std::uint64_t type) noexcept {
    envelope env;
    std::memcpy(&env, first, sizeof env);
    incoming msg;
    msg.owner_ = this;
    msg.peer_ = p.id;
    std::size_t lines = 1;
    switch (type) {
    case t_eager:
        msg.data_ = first + data_off;
        msg.length_ = static_cast<std::size_t>(env.size);
        lines = (data_off + msg.length_ + line - 1) / line;
        break;
    case t_eager_len: {
        std::uint64_t n = 0;
        std::memcpy(&n, first + data_off, sizeof n);
        msg.data_ = first + line;
        msg.length_ = static_cast<std::size_t>(n);
        lines = 1 + (msg.length_ + line - 1) / line;
        break;
    }
    case t_rts: {
        std::uint64_t a = 0;
        std::memcpy(&a, first + data_off, sizeof a);
        std::memcpy(&msg.token_, first + line, sizeof msg.token_);
        std::memcpy(&msg.aux_, first + line + sizeof msg.token_, sizeof msg.aux_);
        msg.aux_ = msg.aux_ != 0 ? 1 : 0;  // the sender helps copy
        msg.data_ = reinterpret_cast<void*>(static_cast<std::uintptr_t>(a));
        msg.length_ = static_cast<std::size_t>(env.size);
        msg.rndv_ = true;
        lines = 2;
        break;
    }
    case t_cts: {
        std::uint64_t d = 0;
        std::memcpy(&d, first + data_off, sizeof d);
        serve_cts(p, d);
        return 1;
    }
    case t_fin: {
        std::uint64_t c = 0;
        std::memcpy(&c, first + data_off, sizeof c);
        auto* done = reinterpret_cast<completion*>(static_cast<std::uintptr_t>(c));
        tsan_acquire(done);  // see send()
        done->fn(done, env.size == 0 ? status{} : status{errc::internal, "the receiver could not read the message"});
        return 1;
    }
    default:
        MPC_LOG(error, net, "shm ring of peer %d: unknown message type %llu", p.id,
                static_cast<unsigned long long>(type));
        return 1;
    }
    if (opts_.on_recv != nullptr) {
        opts_.on_recv(opts_.recv_arg, env, msg);
    } else {
        MPC_LOG(warn, net, "dropped a message from rank %d: no receive handler", env.source);
    }
    if (msg.rndv_ && !msg.kept_ && msg.token_ != 0) {
        send_fin(p, msg.token_, true);  // dropped, neither kept nor fetched: the sender completes
    }
    return lines;
}

/// Handles the messages waiting in peer p's ring (at most a batch).
int shm_transport::drain_ring(peer& p) noexcept {
    const std::uint32_t mask = slots_ - 1;
    std::uint64_t head = p.rx_head.load(std::memory_order_relaxed);
    int n = 0;
    for (; n < 64; ++n) {
        std::byte* s = p.rx->slot(head, mask);
        const std::uint64_t f = flag_of(s).load(std::memory_order_acquire);
        if ((f & pos_mask) != head + 1) {
            break;
        }
        const std::uint64_t type = f >> type_shift;
        std::size_t lines = slots_ - (head & mask);  // t_pad
        if (type != t_pad) {
            lines = handle(p, s, type);
            for (std::size_t i = 1; i < lines; ++i) {  // stale payload must never look like a flag
                flag_of(p.rx->slot(head + i, mask)).store(0, std::memory_order_relaxed);
            }
        }
        head += lines;
        p.rx_head.store(head, std::memory_order_relaxed);
        p.rx->head.store(head, std::memory_order_release);
    }
    if (n > 0) {
        if (p.tx_streak.load(std::memory_order_relaxed) != 0) {
            p.tx_streak.store(0, std::memory_order_relaxed);  // a reply: no longer a stream (try_write)
        }
        mpc::full_fence();  // against tx_can_move's
        if (p.rx->waiting.load(std::memory_order_relaxed) != 0) {
            p.rx->waiting.store(0, std::memory_order_relaxed);
            wake_fd(p.efd);
        }
    }
    return n;
}

void shm_transport::release(incoming& msg) noexcept {
    if (!msg.kept_) {
        return;
    }
    msg.kept_ = false;
    if (msg.rndv_ && msg.token_ != 0) {
        if (peer* p = find(msg.peer_); p != nullptr) {
            send_fin(*p, msg.token_, true);  // the sender completes without a transfer
        }
        msg.token_ = 0;
    }
}

status shm_transport::fetch(incoming& msg, void* buf, std::size_t cap, completion* c) noexcept {
    if (!msg.kept_ || !msg.rndv_) {
        return {errc::invalid_argument, "fetch of a message that was not kept"};
    }
    if (cap < msg.length_ || (buf == nullptr && msg.length_ != 0)) {
        return {errc::invalid_argument, "fetch into a buffer smaller than the message"};
    }
    if (c == nullptr || c->fn == nullptr) {
        return {errc::invalid_argument, "fetch without a completion"};
    }
    peer* p = find(msg.peer_);
    if (p == nullptr) {
        return {errc::invalid_argument, "fetch from a peer that is not connected"};
    }
    msg.kept_ = false;
    const std::uint64_t token = msg.token_;
    msg.token_ = 0;
    status st = msg.aux_ != 0 ? fetch_shared(*p, msg, buf)
                              : cma_copy(p->pid, buf, msg.data_, msg.length_, false);
    if (!st) {
        // Most likely the sender died: the caller waits for the launcher (no error line here).
        MPC_LOG(debug, net, "peer %d: %s", p->id, st.reason());
        send_fin(*p, token, false);
        return st;
    }
    send_fin(*p, token, true);
    c->fn(c, {});
    return {};
}

/// Takes one of our descriptors for fetches from p; its index, or -1 when every one is in use
/// (as many fetches from p at once: the receiver then copies alone).
int shm_transport::take_xfer(peer& p) noexcept {
    std::uint32_t free = p.xfer_free.load(std::memory_order_relaxed);
    while (free != 0) {
        const int d = __builtin_ctz(free);
        if (p.xfer_free.compare_exchange_weak(free, free & ~(std::uint32_t{1} << d), std::memory_order_relaxed)) {
            return d;
        }
    }
    return -1;
}

namespace {

/// Claims chunks of x while its generation is `gen`, and copies each between this process's
/// `local` base and the other process's `remote` base (write: local -> remote, else remote ->
/// local), until none is left. The other fields were read before the first claim (a claim that
/// succeeds proves they belong to `gen`: shm_detail::xfer). Returns how many it copied.
std::uint64_t copy_chunks(xfer& x, std::uint32_t gen, pid_t pid, char* local, char* remote, bool write) noexcept {
    const std::uint32_t chunks = x.chunks.load(std::memory_order_relaxed);
    const std::size_t chunk = x.chunk_bytes.load(std::memory_order_relaxed);
    const std::size_t len = x.len.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);  // the fields before the claim (seqlock)
    std::uint64_t mine = 0;
    std::uint64_t v = x.next.load(std::memory_order_relaxed);
    for (;;) {
        const auto i = static_cast<std::uint32_t>(v);
        if ((v >> 32) != gen || i >= chunks) {
            return mine;
        }
        if (!x.next.compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) {
            continue;
        }
        const std::size_t off = static_cast<std::size_t>(i) * chunk;
        const std::size_t n = std::min(chunk, len - off);
        if (!cma_copy(pid, local + off, remote + off, n, write)) {
            x.failed.store(1, std::memory_order_relaxed);
        }
        x.done.fetch_add(1, std::memory_order_release);
        ++mine;
        v = x.next.load(std::memory_order_relaxed);
    }
}

}  // namespace

/// The receiver opened its descriptor (`d`: index | generation << 32) for a message of ours:
/// copy chunks of our buffer into its buffer (in progress). Nothing when the copy ended already.
void shm_transport::serve_cts(peer& p, std::uint64_t d) noexcept {
    const auto i = static_cast<std::uint32_t>(d);
    if (i >= static_cast<std::uint32_t>(xfers_per_peer)) {
        MPC_LOG(error, net, "shm ring of peer %d: a shared copy names descriptor %u", p.id, i);
        return;
    }
    xfer& x = p.peer_xfers[i];
    tsan_acquire(p.peer_xfers);  // see send()
    const auto src = x.src.load(std::memory_order_relaxed);
    const auto dst = x.dst.load(std::memory_order_relaxed);
    chunks_written_.fetch_add(copy_chunks(x, static_cast<std::uint32_t>(d >> 32), p.pid,
                                          reinterpret_cast<char*>(static_cast<std::uintptr_t>(src)),
                                          reinterpret_cast<char*>(static_cast<std::uintptr_t>(dst)), true),
                              std::memory_order_relaxed);
}

/// fetch() of a message whose sender helps: open a descriptor, ask the sender to help, copy
/// chunks until none is left, wait for those the sender took. Copies alone when every
/// descriptor for this peer is in use.
status shm_transport::fetch_shared(peer& p, incoming& msg, void* buf) noexcept {
    const int d = take_xfer(p);
    if (d < 0) {
        return cma_copy(p.pid, buf, msg.data_, msg.length_, false);
    }
    xfer& x = p.own_xfers[d];
    // A new generation first: from here a late claim of the previous copy fails (seqlock writer:
    // the generation, a release fence, then the fields).
    const auto gen = static_cast<std::uint32_t>((x.next.load(std::memory_order_relaxed) >> 32) + 1);
    x.next.store(std::uint64_t{gen} << 32, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    x.done.store(0, std::memory_order_relaxed);
    x.failed.store(0, std::memory_order_relaxed);
    const std::size_t chunk = split_chunk_bytes(msg.length_);
    const auto chunks = static_cast<std::uint32_t>((msg.length_ + chunk - 1) / chunk);
    x.chunk_bytes.store(static_cast<std::uint32_t>(chunk), std::memory_order_relaxed);
    x.chunks.store(chunks, std::memory_order_relaxed);
    x.src.store(reinterpret_cast<std::uintptr_t>(msg.data_), std::memory_order_relaxed);
    x.len.store(msg.length_, std::memory_order_relaxed);
    x.dst.store(reinterpret_cast<std::uintptr_t>(buf), std::memory_order_relaxed);
    queued q;
    q.type = t_cts;
    q.extra = static_cast<std::uint64_t>(d) | (std::uint64_t{gen} << 32);
    bool written = false;
    status st = post(p, q, &written);  // the ring's release store publishes the fields
    if (st) {
        chunks_read_.fetch_add(copy_chunks(x, gen, p.pid, static_cast<char*>(buf), static_cast<char*>(msg.data_), false),
                               std::memory_order_relaxed);
        for (unsigned spins = 0; x.done.load(std::memory_order_acquire) < chunks; ++spins) {
            // The sender is copying its last chunk (microseconds), unless its process lost its
            // core meanwhile (more processes than cores): then give ours up.
            if (spins < 2048) {
                cpu_relax();
            } else {
                ::sched_yield();
            }
            if (spins % 4096 == 4095 && peer_dead(p)) {
                st = {errc::internal, "the sending process ended during the copy"};
                break;
            }
        }
        if (st && x.failed.load(std::memory_order_relaxed) != 0) {
            st = {errc::internal, "process_vm_readv/writev of a chunk of a rendezvous message failed"};
        }
    }
    p.xfer_free.fetch_or(std::uint32_t{1} << d, std::memory_order_release);
    return st;  // an error queueing the cts (out of memory): the sender completes on the failed fin
}

}  // namespace mpc::net
