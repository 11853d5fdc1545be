/// \file
/// Small non-blocking collectives between processes without a thread (hier_nb.hpp): the round
/// machine of the leaders' part, and the start and end of a call in a process.

#include "mpi_compat/coll/hier_nb.hpp"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

#include "lib/log.hpp"
#include "mpi_compat/coll/hier_detail.hpp"
#include "mpi_compat/coll/msg.hpp"
#include "mpi_compat/coll/shm_detail.hpp"
#include "mpi_compat/comm.hpp"
#include "mpi_compat/op.hpp"

namespace mpc::mpi::coll::shm {

/// The leaders' part of the call a local view's slot serves (one at a time per slot; kept for
/// the slot's later calls).
struct remote_call {
    // the call
    comm* c = nullptr;  ///< held from the start to the end (the user may free it meanwhile)
    slot* s = nullptr;
    args g;             ///< the call among the leaders (leader view, this process's leader)
    std::uint64_t lseq = 0;  ///< the slot's call, in the local view's sequence
    int members = 0;         ///< in this process
    int local_root = -1;     ///< the root's cell (Ibcast, Ireduce), -1: another process
    int root_proc = 0;       ///< the root's process (leader rank)
    std::size_t nbytes = 0;  ///< Ibcast's message
    int fold_me = -1;        ///< Iallreduce: rank among the p2 leaders after the fold (-1: folded out)
    // the rounds
    int round = -1;
    std::atomic<int> pending{0};  ///< requests of the round not complete, + 1 while posting
    int used = 0;                 ///< requests of the round
    // storage, sized for the leader view (P leaders)
    int cap = 0;  ///< requests
    std::unique_ptr<request[]> reqs;
    std::unique_ptr<completion_waiter[]> waiters;
    std::size_t tmp_cap = 0;
    unsigned char* tmp = nullptr;  ///< the receive array of reductions (malloc)

    ~remote_call() { std::free(tmp); }
};

void destroy_remote(remote_call* x) noexcept { delete x; }

}  // namespace mpc::mpi::coll::shm

namespace mpc::mpi::coll::hier_nb {
namespace {

using shm::remote_call;
using shm::slot;

/// Tag space of the leaders' messages (args::phase; hier.cpp uses 2 to 4).
constexpr std::uint8_t phase_nb = 5;

int leaders(const remote_call& x) noexcept { return x.g.size; }
int me(const remote_call& x) noexcept { return x.g.rank; }
const red_view& view(const remote_call& x) noexcept { return x.g.red; }
/// The process's partial result, then the call's: in the slot's result area.
void* acc(const remote_call& x) noexcept { return at(x.s->result, view(x).shift); }
/// The receive array (a reduction base).
void* tmp(const remote_call& x) noexcept { return at(x.tmp, view(x).shift); }

bool count_down(remote_call& x) noexcept { return x.pending.fetch_sub(1, std::memory_order_acq_rel) == 1; }

void drive(remote_call& x) noexcept;

/// A request of the round completed (wherever: the transport's progress among others).
void on_event(completion_waiter* w) noexcept {
    auto* x = static_cast<remote_call*>(w->arg);
    if (count_down(*x)) {
        drive(*x);
    }
}

/// The next request of the round, counted in; watch() it once started.
request* next_request(remote_call& x) noexcept {
    request* r = &x.reqs[x.used];
    completion_waiter& w = x.waiters[x.used];
    ++x.used;
    r->state.store(request::pending, std::memory_order_relaxed);  // reused round after round
    w = completion_waiter{nullptr, nullptr, &on_event, &x};
    x.pending.fetch_add(1, std::memory_order_acq_rel);
    return r;
}

/// After starting r: complete already (the send left at once, the message was there)? Then it
/// is counted here, else on_event counts it.
void watch(remote_call& x, request* r) noexcept {
    if (!r->watch(&x.waiters[r - x.reqs.get()])) {
        count_down(x);  // never the last: the poster holds one count
    }
}

void send(remote_call& x, int to, int step, const piece& p) noexcept {
    request* r = next_request(x);
    msg::start_send(x.g, to, step, p.buf, p.type != nullptr ? p.count : 0, p.type != nullptr ? *p.type : byte_type(),
                    r);
    watch(x, r);
}

void recv(remote_call& x, int from, int step, const piece& p) noexcept {
    request* r = next_request(x);
    msg::start_recv(x.g, from, step, const_cast<void*>(p.buf), p.type != nullptr ? p.count : 0,
                    p.type != nullptr ? *p.type : byte_type(), r);
    watch(x, r);
}

piece whole(const remote_call& x, const void* base) noexcept { return msg::elems(view(x), base, 0, view(x).n); }
constexpr piece nothing{nullptr, 0, nullptr};

// ---- the rounds of each algorithm: post() posts round x.round's requests (false: no round
// left), end() runs once they all completed ----------------------------------------------------

/// Dissemination (msg::barrier): round k, a message to me + 2^k, one from me - 2^k.
bool barrier_post(remote_call& x) noexcept {
    const int n = leaders(x);
    const int dist = 1 << x.round;
    if (dist >= n) {
        return false;
    }
    recv(x, (me(x) - dist + n) % n, x.round, nothing);
    send(x, (me(x) + dist) % n, x.round, nothing);
    return true;
}

/// Binomial tree from leader `root` (msg::binomial_bcast), in two rounds: the message from the
/// parent, then to every child at once.
bool bcast_post(remote_call& x, int root, const piece& data) noexcept {
    const int n = leaders(x);
    const int rel = (me(x) - root + n) % n;
    int mask = 1;
    while (mask < n && (rel & mask) == 0) {
        mask <<= 1;
    }
    if (x.round == 0) {
        if (rel != 0) {
            recv(x, (rel - mask + root) % n, 0, data);
        }
        return true;
    }
    if (x.round == 1) {
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (rel + mask < n) {
                send(x, (rel + mask + root) % n, 0, data);
            }
        }
        return true;
    }
    return false;
}

/// Commutative Iallreduce: recursive doubling folded to p2 = pow2_floor(n) leaders
/// (msg::allreduce_recursive_doubling): round 0 folds in, rounds 1 .. log2(p2) exchange with
/// the partner (step = round), the round after folds out (step 100).
int log2_of(int p2) noexcept {
    int l = 0;
    while ((1 << l) < p2) {
        ++l;
    }
    return l;
}

/// The fold's message within the pairs (2i, 2i + 1) of the first 2 * rem leaders: in (round
/// 0), the even one's acc to the odd one's tmp; out (after the exchanges, step 100), the odd
/// one's acc, the result, to the even one's acc.
void fold_post(remote_call& x, int rem, bool in) noexcept {
    const int m = me(x);
    if (m >= 2 * rem) {
        return;
    }
    const bool even = m % 2 == 0;
    const int peer = even ? m + 1 : m - 1;
    if (even == in) {
        send(x, peer, in ? 0 : 100, whole(x, acc(x)));
    } else {
        recv(x, peer, in ? 0 : 100, whole(x, in ? tmp(x) : acc(x)));
    }
}

bool rd_post(remote_call& x) noexcept {
    const int p2 = msg::pow2_floor(leaders(x));
    const int rem = leaders(x) - p2;
    const int steps = log2_of(p2);
    if (x.round == 0 || x.round == steps + 1) {
        fold_post(x, rem, x.round == 0);
        return true;
    }
    if (x.round <= steps) {
        if (x.fold_me >= 0) {
            const int peer = msg::unfolded(x.fold_me ^ (1 << (x.round - 1)), rem);
            recv(x, peer, x.round, whole(x, tmp(x)));
            send(x, peer, x.round, whole(x, acc(x)));
        }
        return true;
    }
    return false;
}

void rd_end(remote_call& x) noexcept {
    const int rem = leaders(x) - msg::pow2_floor(leaders(x));
    const bool folding = x.round == 0 && me(x) < 2 * rem && me(x) % 2 == 1;
    const bool exchange = x.round >= 1 && x.round <= log2_of(msg::pow2_floor(leaders(x))) && x.fold_me >= 0;
    if (folding || exchange) {
        reduce_range(view(x), tmp(x), acc(x), 0, view(x).n);  // partner's op own
    }
}

/// Commutative Ireduce: binomial tree to leader `root` (msg::reduce_binomial), one child per
/// round, until the leader sends its partial to its parent.
bool reduce_tree_post(remote_call& x) noexcept {
    const int n = leaders(x);
    const int mask = 1 << x.round;
    const int rel = (me(x) - x.root_proc + n) % n;
    if (mask >= n || (rel & (mask - 1)) != 0) {
        return false;  // done, or sent to the parent already
    }
    if ((rel & mask) != 0) {
        send(x, (rel - mask + x.root_proc) % n, 0, whole(x, acc(x)));
    } else if (rel + mask < n) {
        recv(x, (rel + mask + x.root_proc) % n, 0, whole(x, tmp(x)));
    }
    return true;
}

void reduce_tree_end(remote_call& x) noexcept {
    const int n = leaders(x);
    const int mask = 1 << x.round;
    const int rel = (me(x) - x.root_proc + n) % n;
    if ((rel & mask) == 0 && rel + mask < n) {
        reduce_range(view(x), tmp(x), acc(x), 0, view(x).n);  // child's subtree op own
    }
}

bool post(remote_call& x) noexcept {
    switch (x.g.k) {
        case kind::barrier: return barrier_post(x);
        case kind::bcast: return bcast_post(x, x.root_proc, msg::bytes(x.s->result, 0, x.nbytes));
        case kind::allreduce: return rd_post(x);
        case kind::reduce: return reduce_tree_post(x);
        default: return false;
    }
}

void end(remote_call& x) noexcept {
    if (x.g.k == kind::allreduce) {
        rd_end(x);
    } else if (x.g.k == kind::reduce) {
        reduce_tree_end(x);
    }
}

/// The last round is over: the result to the process's members, the slot to its next call, the
/// requests complete, the communicator is let go (the last access to x).
void finish(remote_call& x) noexcept {
    slot& s = *x.s;
    switch (x.g.k) {
        case kind::bcast:
            for (int i = 0; i < x.members; ++i) {
                if (i != x.local_root) {
                    shm::detail::unpack_cell(s, i, x.nbytes);
                }
            }
            break;
        case kind::allreduce: shm::detail::copy_result(s, x.members, -1); break;
        case kind::reduce:
            if (x.local_root >= 0) {
                shm::detail::copy_result(s, x.members, x.local_root);
            }
            break;
        default: break;
    }
    request* reqs[shm::eager_max];
    const int n = shm::detail::take_requests(s, x.members, reqs);
    comm* c = x.c;
    shm::detail::free_slot(s, x.lseq);  // x may serve the slot's next call from here on
    shm::detail::complete_requests(reqs, n);
    release_comm(c);
}

/// Ends the round whose requests all completed, and posts the next ones until a round waits
/// for a request (another event goes on from there) or none is left.
void drive(remote_call& x) noexcept {
    for (;;) {
        if (x.round >= 0) {
            end(x);
        }
        ++x.round;
        x.used = 0;
        x.pending.store(1, std::memory_order_release);  // the poster's count
        if (!post(x)) {
            finish(x);
            return;
        }
        if (!count_down(x)) {
            return;
        }
    }
}

/// The slot's remote_call, sized for n leaders and a receive array of `bytes`; the end of the
/// job when out of memory (the other processes would wait forever).
remote_call& remote_of(slot& s, int n, std::size_t bytes) noexcept {
    remote_call* x = s.remote;
    if (x == nullptr) {
        x = new (std::nothrow) remote_call;
        s.remote = x;
    }
    bool ok = x != nullptr;
    if (ok && x->cap < n + 1) {
        x->reqs.reset(new (std::nothrow) request[static_cast<std::size_t>(n) + 1]);
        x->waiters.reset(new (std::nothrow) completion_waiter[static_cast<std::size_t>(n) + 1]);
        ok = x->reqs != nullptr && x->waiters != nullptr;
        x->cap = ok ? n + 1 : 0;
    }
    if (ok && x->tmp_cap < bytes) {
        std::free(x->tmp);
        x->tmp = static_cast<unsigned char*>(std::malloc(bytes));
        ok = x->tmp != nullptr;
        x->tmp_cap = ok ? bytes : 0;
    }
    if (!ok) {
        MPC_LOG(fatal, mpi, "out of memory for a non-blocking collective between %d processes", n);
        std::abort();
    }
    return *x;
}

/// The last member of the process to arrive: combines the process's data and starts the
/// leaders' rounds (eager_pos::last).
void start_remote(slot& s, const args& a, const shm::eager_pos& p) noexcept {
    const hier::levels& h = hier::levels_of(*a.c);
    const int n = static_cast<int>(h.first.size());
    const bool reduction = a.k == kind::reduce || a.k == kind::allreduce;
    const red_view& v = s.cells[0].nb.red;  // the slot's layout (cells and result)
    remote_call& x = remote_of(s, n, reduction ? v.span : 0);
    x.c = const_cast<comm*>(a.c);  // the reference count is the object's lifetime, not its value
    retain_comm(x.c);
    x.s = &s;
    x.lseq = p.seq;
    x.members = p.size;
    x.local_root = p.root;
    x.g = a;
    x.g.c = h.leaders.get();
    x.g.rank = h.me;
    x.g.size = n;
    x.g.phase = phase_nb;
    x.g.self = world().tasks[static_cast<std::size_t>(h.leaders->world_of[static_cast<std::size_t>(h.me)])].get();
    x.g.blocking = false;
    x.g.local_seq = nullptr;
    x.root_proc = a.k == kind::bcast || a.k == kind::reduce ? h.process[static_cast<std::size_t>(a.root)] : 0;
    x.round = -1;
    if (a.k == kind::bcast) {
        // The message's size is the same everywhere; the root's type may be freed by now, the
        // caller's is alive.
        x.nbytes = p.root >= 0 ? s.cells[p.root].nbytes : packed_bytes(a.rcount, a.rtype);
    }
    if (reduction) {
        x.g.red = v;
        shm::detail::reduce_cells(s, v, p.size, acc(x));  // rank order in the process
        const int rem = n - msg::pow2_floor(n);
        x.fold_me = h.me >= 2 * rem ? h.me - rem : (h.me % 2 == 1 ? h.me / 2 : -1);
    }
    MPC_LOG(trace, mpi, "non-blocking %s: %d members here, %d processes, without a thread", kind_name(a.k), p.size,
            n);
    drive(x);
}

}  // namespace

bool runs(const args& a) noexcept {
    if (!shm::eager_enabled() || a.c->is_inter || a.c->local_only || a.size < 2 || algorithm_forced(a.k) ||
        !shm::eager_fits(a)) {
        return false;
    }
    const bool reduction = a.k == kind::reduce || a.k == kind::allreduce;
    if (reduction && (op_is_user(a.red.op) || !a.red.commutative)) {
        return false;  // every predefined operation is commutative
    }
    const hier::levels& h = hier::levels_of(*a.c);
    if (h.first.size() < 2 || h.me < 0 || h.count[static_cast<std::size_t>(h.me)] > shm::eager_max) {
        return false;
    }
    return true;
}

shm::eager_pos position(const args& a) noexcept {
    const hier::levels& h = hier::levels_of(*a.c);
    const int local = h.local_rank[static_cast<std::size_t>(a.rank)];
    shm::eager_pos p;
    p.view = h.local.get();
    p.rank = local;
    p.size = h.count[static_cast<std::size_t>(h.me)];
    p.seq = next_seq(*h.local, local);
    if ((a.k == kind::bcast || a.k == kind::reduce) && h.process[static_cast<std::size_t>(a.root)] == h.me) {
        p.root = h.local_rank[static_cast<std::size_t>(a.root)];
    }
    p.last = &start_remote;
    return p;
}

}  // namespace mpc::mpi::coll::hier_nb
