/// \file
/// One-VP small collectives (shm.hpp, vp_ctl): the members of a communicator on one VP run one
/// at a time on it, so a call needs no cross-core handshake: each member leaves what it brings
/// in its entry and parks, handing the VP straight to the next ready member; the last to
/// arrive runs the whole call for everybody and readies the others. With several VPs, the
/// members of each VP count in as a group, and one line per group crosses cores (VP groups).
#include <time.h>

#include <cstring>

#include "lib/spinlock.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/coll/shm_detail.hpp"
#include "scheduler/detail.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi::coll::shm {

using namespace detail;

namespace {

/// park_publish()'s argument: counts the caller in at `count` of n; the last one does not park.
struct arrival {
    std::atomic<std::uint32_t>* count;
    std::uint32_t n;
    bool last = false;
};

bool count_in(void* p, sched::ult* /*self*/) noexcept {
    auto* x = static_cast<arrival*>(p);
    x->last = x->count->fetch_add(1, std::memory_order_acq_rel) + 1 == x->n;
    return !x->last;  // park unless last
}

/// Counts the caller (me, running on v; null: a plain thread) in at `count` of n and parks it
/// unless it is the last; returns whether it was.
bool count_park(sched::vp* v, sched::ult* me, std::atomic<std::uint32_t>& count, std::uint32_t n,
                const char* what) noexcept {
    arrival x{&count, n};
    if (me != nullptr) {
        // parks unless last; the VP switches to its next ready ULT (the inline form, as
        // request::wait_slow: this is the whole cost of a call besides the switch). Not
        // stealable meanwhile (as sched::wait_list): a stealable ULT publishes after its
        // switch, and a thief could resume it, readied by the last arrival, while count_in
        // still writes x on its stack.
        const bool stealable = me->stealable;
        me->stealable = false;
        sched::detail::park_publish_current(v, me, &count_in, &x, what);
        me->stealable = stealable;
    } else {
        count_in(&x, nullptr);
    }
    return x.last;
}

/// Returns once `done` passed call k. A ULT gets here once readied, which its waker does just
/// before publishing `done`; a plain thread of the rank (MPI_THREAD_MULTIPLE) polls, backing
/// off to short sleeps as request::wait_slow does.
void await(const std::atomic<std::uint64_t>& done, std::uint64_t k, const sched::ult* me) noexcept {
    for (unsigned spins = 0; done.load(std::memory_order_acquire) <= k; ++spins) {
        if (spins < 1000 || me != nullptr) {
            cpu_relax();
        } else {
            struct timespec ts = {0, spins < 10000 ? 1000 : 50000};
            nanosleep(&ts, nullptr);
        }
    }
}

/// A group's leader, the call done: readies the group's other members, opens call k + 1 for
/// the group.
void finish_group(vp_ctl& ctl, vp_group& g, int rank, std::uint64_t k) noexcept {
    g.arrived.store(0, std::memory_order_relaxed);  // nobody of g arrives at k + 1 before g.done
    const std::size_t staged = ctl.staged;  // a Bcast's root bytes or an Allreduce's result (vp_ctl::stage)
    for (std::uint32_t i = 0; i < g.n; ++i) {
        const int r = ctl.members[static_cast<std::uint32_t>(g.first) + i];
        if (staged != 0 && ctl.stage_root < 0) {  // an Allreduce's result
            if (ctl.stage_range) {
                copy_range(ctl.stage_view, at(ctl.stage, ctl.stage_view.shift), ctl.e[r].out, 0, ctl.stage_view.n);
            } else {
                copy_small(ctl.e[r].out, ctl.stage, staged);
            }
        } else if (staged != 0 && r != ctl.stage_root) {
            const vp_entry& to = ctl.e[r];
            if (to.a == nullptr) {
                std::memcpy(to.out, ctl.stage, staged);
            } else {
                unpack_from(ctl.stage, staged, to.a->rbuf, to.a->rcount, *to.a->rtype);
            }
        }
        if (r != rank && ctl.e[r].waiter != nullptr) {
            sched::detail::make_ready(ctl.e[r].waiter);
        }
    }
    g.done.store(k + 1, std::memory_order_release);
}

/// Member `rank` arrives at its call k with `mine`; returns true for the last member, which
/// must then run the call and finish(); the others return once it has.
bool arrive(state& st, int rank, int size, std::uint64_t k, const vp_entry& mine, const char* what) noexcept {
    vp_ctl& ctl = st.vp;
    vp_entry& e = ctl.e[rank];
    sched::vp* v = sched::detail::this_vp();
    sched::ult* me = v != nullptr ? v->current : nullptr;
    e = mine;
    e.waiter = me;
    if (ctl.ngroups <= 1) {
        if (count_park(v, me, ctl.arrived, static_cast<std::uint32_t>(size), what)) {
            return true;
        }
        await(ctl.done, k, me);
        return false;
    }
    // VP groups: into the group, then (the group's last) into the communicator
    vp_group& g = ctl.g[ctl.group_of[rank]];
    if (!count_park(v, me, g.arrived, g.n, what)) {
        await(g.done, k, me);
        return false;
    }
    g.leader = rank;  // read by the last leader, after the count below
    if (count_park(v, me, ctl.arrived, static_cast<std::uint32_t>(ctl.ngroups), what)) {
        ctl.staged = 0;  // the leaders read it after `done`; a Bcast sets it (bcast_all)
        return true;
    }
    await(ctl.done, k, me);
    finish_group(ctl, g, rank, k);
    return false;
}

/// The last member, the call done: readies every parked member (the other groups' leaders,
/// which ready their groups) and opens call k + 1.
void finish(state& st, int rank, int size, std::uint64_t k) noexcept {
    vp_ctl& ctl = st.vp;
    ctl.arrived.store(0, std::memory_order_relaxed);  // nobody arrives at k + 1 before `done`
    if (ctl.ngroups <= 1) {
        for (int r = 0; r < size; ++r) {
            // Read before `done`: a plain thread released by it may enter the next call.
            if (r != rank && ctl.e[r].waiter != nullptr) {
                sched::detail::make_ready(ctl.e[r].waiter);
            }
        }
        ctl.done.store(k + 1, std::memory_order_release);
        return;
    }
    const int mine = ctl.group_of[rank];
    for (int h = 0; h < ctl.ngroups; ++h) {
        if (h != mine && ctl.e[ctl.g[h].leader].waiter != nullptr) {
            sched::detail::make_ready(ctl.e[ctl.g[h].leader].waiter);
        }
    }
    ctl.done.store(k + 1, std::memory_order_release);
    finish_group(ctl, ctl.g[mine], rank, k);
}

/// The last member of a Bcast of `bytes` (packed) copies the root's data to every other member:
/// byte images on the fast path (no args), typed buffers on the general one, in any mix.
void bcast_all(vp_ctl& ctl, int root, int size, std::size_t bytes) noexcept {
    const vp_entry& from = ctl.e[root];
    if (ctl.ngroups > 1) {
        // VP groups: each leader copies from the stage to its group (finish_group), on its
        // own VP, once the root may have left
        if (bytes != 0) {
            if (from.a == nullptr) {
                std::memcpy(ctl.stage, from.in, bytes);
            } else {
                pack_into(ctl.stage, from.a->rbuf, from.a->rcount, *from.a->rtype);
            }
        }
        ctl.staged = bytes;
        ctl.stage_root = root;
        return;
    }
    for (int r = 0; r < size; ++r) {
        if (r == root) {
            continue;
        }
        const vp_entry& to = ctl.e[r];
        if (from.a == nullptr && to.a == nullptr) {
            std::memcpy(to.out, from.in, bytes);
        } else if (from.a == nullptr) {
            unpack_from(from.in, bytes, to.a->rbuf, to.a->rcount, *to.a->rtype);
        } else if (to.a == nullptr) {
            pack_into(to.out, from.a->rbuf, from.a->rcount, *from.a->rtype);
        } else {
            copy_typed(from.a->rbuf, from.a->rcount, *from.a->rtype, to.a->rbuf, to.a->rcount, *to.a->rtype);
        }
    }
}

/// The last member runs call a (kind bcast, reduce or allreduce) for every member. Reductions
/// take every member's input and output from its entry (members on the Allreduce fast path
/// bring no args), in rank order: acc = x_{n-1}, then acc = x_r op acc for r = n-2 ... 0.
void run_general(vp_ctl& ctl, const args& a) noexcept {
    const red_view& v = a.red;
    if (a.k == kind::bcast) {
        bcast_all(ctl, a.root, a.size, packed_bytes(a.rcount, a.rtype));
        return;
    }
    alignas(16) unsigned char acc_own[flat_bytes];
    // VP groups: an Allreduce's result goes to the stage, each leader copies it to its group
    const bool staged = a.k == kind::allreduce && ctl.ngroups > 1;
    unsigned char* acc = staged ? ctl.stage : acc_own;
    void* acc_base = at(acc, v.shift);
    copy_range(v, ctl.e[a.size - 1].in, acc_base, 0, v.n);
    for (int r = a.size - 2; r >= 0; --r) {
        reduce_range(v, ctl.e[r].in, acc_base, 0, v.n);
    }
    if (staged) {
        ctl.stage_view = v;  // dense (one_vp_runs): copy_range does not read its datatype
        ctl.stage_range = true;
        ctl.stage_root = -1;
        ctl.staged = v.span != 0 ? v.span : 1;  // nonzero: there is a result to copy
        return;
    }
    for (int r = 0; r < a.size; ++r) {
        if (a.k == kind::allreduce || r == a.root) {
            copy_range(v, acc_base, ctl.e[r].out, 0, v.n);
        }
    }
}

}  // namespace

bool one_vp_runs(const args& a) noexcept {
    if (a.size < 2 || a.c->is_inter || state_of(*a.c).vp.ngroups == 0) {
        return false;
    }
    switch (a.k) {
        case kind::barrier: return true;
        case kind::bcast:
            return vp_bcast_runs(state_of(*a.c).vp) && packed_bytes(a.rcount, a.rtype) <= flat_bytes;
        case kind::reduce:
        case kind::allreduce: return !a.red_pack && a.red.dense && a.red.span <= flat_bytes;
        default: return false;
    }
}

int one_vp_barrier(state& st, int rank, int size) noexcept {
    const std::uint64_t k = st.seqs[rank].vp_next++;
    if (arrive(st, rank, size, k, {}, "MPI_Barrier")) {
        finish(st, rank, size, k);
    }
    return MPI_SUCCESS;
}

int one_vp_allreduce_basic(state& st, int rank, int size, const void* in, void* out, std::size_t n,
                           basic_elem e, int op) noexcept {
    const std::uint64_t k = st.seqs[rank].vp_next++;
    if (arrive(st, rank, size, k, {in, out, nullptr, nullptr}, "MPI_Allreduce")) {
        vp_ctl& ctl = st.vp;
        const vp_entry* en = ctl.e;
        alignas(16) unsigned char acc_own[flat_bytes];
        // VP groups: the result goes to the stage, each leader copies it to its group
        unsigned char* acc = ctl.ngroups > 1 ? ctl.stage : acc_own;
        fold_basic(e, size, op, n, [en](int r) { return en[r].in; }, acc);
        if (ctl.ngroups > 1) {
            ctl.staged = n * basic_size(e);
            ctl.stage_root = -1;
            ctl.stage_range = false;
        } else {
            for (int r = 0; r < size; ++r) {
                copy_small(en[r].out, acc, n * basic_size(e));
            }
        }
        finish(st, rank, size, k);
    }
    return MPI_SUCCESS;
}

int one_vp_bcast_bytes(state& st, int rank, int size, int root, void* buf, std::size_t bytes) noexcept {
    const std::uint64_t k = st.seqs[rank].vp_next++;
    if (arrive(st, rank, size, k, {buf, buf, nullptr, nullptr}, "MPI_Bcast")) {
        bcast_all(st.vp, root, size, bytes);
        finish(st, rank, size, k);
    }
    return MPI_SUCCESS;
}

int one_vp(args& a) noexcept {
    if (a.k == kind::barrier) {
        return one_vp_barrier(state_of(*a.c), a.rank, a.size);
    }
    state& st = state_of(*a.c);
    const std::uint64_t k = st.seqs[a.rank].vp_next++;
    const bool red = a.k != kind::bcast;
    const bool out = red && (a.k != kind::reduce || a.rank == a.root);  // a Reduce's other members may pass no buffer
    const vp_entry mine{red ? input_base(a) : nullptr, out ? output_base(a) : nullptr, &a, nullptr};
    const char* what = a.k == kind::bcast ? "MPI_Bcast" : a.k == kind::reduce ? "MPI_Reduce" : "MPI_Allreduce";
    if (arrive(st, a.rank, a.size, k, mine, what)) {
        run_general(st.vp, a);
        finish(st, a.rank, a.size, k);
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::shm
