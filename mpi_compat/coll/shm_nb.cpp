/// \file
/// Non-blocking small calls completed by their last member to arrive (shm.hpp, "non-blocking
/// small calls"): Ibarrier, and Ibcast, Ireduce and Iallreduce of small data inside a process.
///
/// A thread per call (nbc.cpp) costs its creation, two switches and its exit, about 0.2 us,
/// more than the small call itself. Here a member's call only writes its cell and counts
/// itself in (one atomic add); the member that brings the count to the communicator's size
/// runs the call for every member (it is in the same process: every buffer is in reach),
/// hands the slot on, and completes every member's request, so a member's MPI_Wait or MPI_Test
/// only looks at its request. Nothing needs progress: the call is done when its last member
/// has called it, whatever the others are doing (computing, or waiting on other requests).
///
/// What the last member reads of the others: its cell (data packed or copied there, a copy of
/// its args). Reductions use their view only (predefined types, or a predefined operation on
/// a derived type reduced as its basic type: no derived type is touched); a derived receive
/// type of an Ibcast member is retained at its arrival and released by the last member, since
/// the user may free it before the call completes (MPI 3.1 section 4.1.9).
///
/// The same arrival serves the calls between processes (hier_nb.cpp): there the members of a
/// process arrive in a slot of its local view (eager_pos), and the last one, instead of
/// completing the call, starts the rounds between the processes' leaders.

#include <mpi.h>

#include "lib/config.hpp"
#include "mpi_compat/coll/pieces.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/coll/shm_detail.hpp"
#include "mpi_compat/match.hpp"
#include "mpi_compat/op.hpp"

namespace mpc::mpi::coll::shm {

using namespace detail;

namespace {

/// The size of Ibcast's message: the same on every member (the type signatures match).
std::size_t bcast_bytes(const args& a) noexcept { return packed_bytes(a.rcount, a.rtype); }

/// Whether a reduction's elements fit the cells and the result, and its view touches no type
/// the user may free meanwhile (a user operation is handed the user's type).
bool small_reduction(const args& a) noexcept {
    const red_view& v = a.red;
    return !a.red_pack && view_fits_cell(v) && v.span <= result_bytes &&
           (!op_is_user(v.op) || (v.dt != nullptr && v.dt->is_predefined()));
}

/// Runs call k for every member once all have arrived: s's cells hold their args and data.
void run_for_all(slot& s, kind k, int n) noexcept {
    const args& first = s.cells[0].nb;
    switch (k) {
        case kind::bcast: {
            const int root = first.root;
            const std::size_t bytes = s.cells[root].nbytes;  // the root's type may be freed by now
            for (int i = 0; i < n; ++i) {
                if (i != root) {
                    unpack_cell(s, i, bytes);
                }
            }
            break;
        }
        case kind::allreduce: {
            reduce_cells(s, first.red, n, at(s.result, first.red.shift));
            copy_result(s, n, -1);
            break;
        }
        case kind::reduce: {
            reduce_cells(s, first.red, n, at(s.result, first.red.shift));
            copy_result(s, n, first.root);
            break;
        }
        default: break;  // barrier: arriving was all
    }
}

/// Arrives at s, which serves p.seq.
void arrive_at(slot& s, const args& a, const eager_pos& p, request* r) noexcept {
    cell& me = s.cells[p.rank];
    // An Ibcast root and the other members of an Ireduce are done once their data is in the
    // slot: their requests complete at once (as a flat Bcast's root may run ahead).
    const bool is_root = p.rank == p.root;
    const bool done_now = (a.k == kind::bcast && is_root) || (a.k == kind::reduce && !is_root);
    me.req = done_now ? nullptr : r;
    me.held = nullptr;
    if (a.k != kind::barrier) {  // a barrier's members leave nothing but their request
        me.nb = a;
        me.nb.rank = p.rank;  // the slot's numbering (in a process: the communicator's)
        me.nb.root = p.root;
        me.a = &me.nb;
    }
    switch (a.k) {
        case kind::bcast:
            if (is_root) {
                pack_into(s.result, a.rbuf, a.rcount, *a.rtype);
                me.nbytes = bcast_bytes(a);
            } else if (!a.rtype->is_predefined()) {
                a.rtype->retain();
                me.held = a.rtype;
            }
            break;
        case kind::allreduce:
        case kind::reduce:
            copy_range(a.red, input_base(a), at(me.data, a.red.shift), 0, a.red.n);
            break;
        default: break;
    }
    const auto n = static_cast<std::uint32_t>(p.size);
    if (s.count.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
        p.last(s, a, p);
    }
    if (done_now) {
        complete_request(r);
    }
}

}  // namespace

void complete_here(slot& s, const args& a, const eager_pos& p) noexcept {
    run_for_all(s, a.k, p.size);
    request* reqs[eager_max];
    const int n = take_requests(s, p.size, reqs);
    free_slot(s, p.seq);
    complete_requests(reqs, n);
}

namespace detail {

void unpack_cell(slot& s, int i, std::size_t bytes) noexcept {
    cell& c = s.cells[i];
    unpack_from(s.result, bytes, c.nb.rbuf, c.nb.rcount, *c.nb.rtype);
    if (c.held != nullptr) {
        datatype::release(c.held);
        c.held = nullptr;
    }
}

void free_slot(slot& s, std::uint64_t seq) noexcept {
    // As if every member had left (shm.cpp, leave()): the cells may be reused from here on.
    s.count.store(0, std::memory_order_relaxed);
    s.flag.store(0, std::memory_order_relaxed);
    s.gen.store(seq + n_slots, std::memory_order_release);
    wake(s);  // jobs waiting for the slot (eager_arrive)
}

}  // namespace detail

bool eager_enabled() noexcept {
    static const bool on = [] {
        auto v = config::get_int("MPC_COLL_NB_EAGER");  // a bad value is reported there
        return !v || *v != 0;
    }();
    return on;
}

namespace {
[[gnu::always_inline]] inline bool fits(const args& a) noexcept {
    switch (a.k) {
        case kind::barrier: return true;
        case kind::bcast: return bcast_bytes(a) <= result_bytes;
        case kind::reduce:
        case kind::allreduce: return small_reduction(a);
        default: return false;
    }
}
}  // namespace

bool eager_fits(const args& a) noexcept { return fits(a); }

bool eager_runs(const args& a) noexcept {
    return !a.c->is_inter && a.c->local_only && a.size >= 2 && a.size <= eager_max && !algorithm_forced(a.k) &&
           eager_enabled() && fits(a);
}

bool eager_try_arrive(const args& a, const eager_pos& p, request* r) noexcept {
    slot& s = state_of(*p.view).slots[p.seq % n_slots];
    if (!serves(s, p.seq)) {
        return false;  // only this member's arrival can move the slot past p.seq: no race
    }
    arrive_at(s, a, p, r);
    return true;
}

void eager_arrive(const args& a, const eager_pos& p, request* r) noexcept {
    args at_slot = a;  // take_slot() reads the slot's communicator and number from its args
    at_slot.c = p.view;
    at_slot.seq = p.seq;
    arrive_at(take_slot(at_slot, kind_name(a.k)), a, p, r);
}

}  // namespace mpc::mpi::coll::shm
