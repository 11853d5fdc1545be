/// \file
/// Collectives on intercommunicators (MPI 3.1 section 5.2.2): each group sends to, or gets the
/// data of, the other. Message-based, whoever the members are:
///  - between the groups, point-to-point on the intercommunicator's collective context, where a
///    rank names the remote group (and a source is the sender's rank in its own group);
///  - inside a group, the msg algorithms run on the group's view (comm::group_view), an
///    intra-communicator of the local group that only internal traffic uses.
/// A call takes one number of the intercommunicator's sequence (api.cpp: kept per member on the
/// local view, which both groups count alike since every member of both groups calls the
/// collectives in the same order); its phases in the local group run under that number, each
/// in a tag space of its own (args::phase), so that calls in flight at once (non-blocking ones,
/// each in its own ULT, in any order) and the constructors' internal traffic on the views
/// (lower tags) never meet.
///
/// Algorithms: Bcast: the root sends to remote rank 0, which broadcasts in its group. Gather,
/// Scatter, Allgather and Alltoall: every block goes straight to its reader (msg.cpp's linear
/// ones, which take intercommunicators). Reduce, Allreduce, Reduce_scatter(_block): each group
/// reduces its data to its rank 0 (in rank order for a non-commutative operation), then the
/// leaders hand the result over (Reduce: to the root; Allreduce and Reduce_scatter: they swap),
/// and each leader broadcasts (Allreduce) or scatters (Reduce_scatter) the other group's
/// reduction in its group. Barrier: a barrier in each group, a swap between the leaders, a
/// broadcast in each group.

#include "mpi_compat/coll/msg.hpp"

namespace mpc::mpi::coll {
namespace {

/// A copy of a for a phase in the caller's local group: the view, the local rank and size.
args local_args(const args& a, std::uint8_t phase) noexcept {
    args l = a;
    l.c = &a.c->local_view(*a.self);
    l.phase = phase;
    return l;  // rank and size are already the caller's in its local group
}

/// An empty piece (barrier messages).
piece nothing() noexcept { return {nullptr, 0, &byte_type()}; }

int barrier(args& a) noexcept {
    args l = local_args(a, 0);
    msg::barrier(l);  // the whole local group has entered
    if (a.rank == 0) {
        msg::sendrecv(a, 0, nothing(), 0, nothing(), 0);  // and the whole remote group
    }
    l.phase = 1;
    msg::binomial_bcast(l, 0, nothing(), 0);
    return MPI_SUCCESS;
}

int bcast(args& a) noexcept {
    piece data{a.rbuf, a.rcount, a.rtype};
    if (a.root == MPI_ROOT) {
        msg::send_piece_to(a, 0, 0, data);
    } else if (a.root != MPI_PROC_NULL) {
        if (a.rank == 0) {
            msg::recv_piece_from(a, a.root, 0, data);
        }
        msg::binomial_bcast(local_args(a, 0), 0, data, 0);
    }
    return MPI_SUCCESS;
}

/// A scratch array of the view for the local rank 0 only.
bool leader_scratch(const args& a, scratch* s) noexcept { return a.rank != 0 || s->reset(a.red); }

/// Reduces the local group's inputs to its rank 0, into *acc there (allocated here; left
/// empty elsewhere), in rank order for a non-commutative operation.
int reduce_local(const args& a, scratch* acc) noexcept {
    if (!leader_scratch(a, acc)) {
        return MPI_ERR_NO_MEM;
    }
    args l = local_args(a, 0);
    l.k = kind::reduce;
    l.root = 0;
    l.in_place = false;
    l.rbuf = a.rank == 0 ? at(acc->base(), -a.red.buf_off) : nullptr;  // output_base(l) == acc
    return a.red.commutative ? msg::reduce_binomial(l) : msg::reduce_linear(l);
}

int reduce(args& a) noexcept {
    const red_view& v = a.red;
    if (a.root == MPI_ROOT) {
        msg::recv_piece_from(a, 0, 0, msg::elems(v, output_base(a), 0, v.n));
    }
    if (a.root < 0) {
        return MPI_SUCCESS;  // the root's group
    }
    scratch acc;
    int err = reduce_local(a, &acc);
    if (err == MPI_SUCCESS && a.rank == 0) {
        msg::send_piece_to(a, a.root, 0, msg::elems(v, acc.base(), 0, v.n));
    }
    return err;
}

/// Allreduce and Reduce_scatter(_block): each group reduces to its leader, the leaders swap
/// the reductions; `theirs` receives the other group's at the leader.
int reduce_and_swap(const args& a, void* theirs) noexcept {
    const red_view& v = a.red;
    scratch mine;
    int err = reduce_local(a, &mine);
    if (err == MPI_SUCCESS && a.rank == 0) {
        msg::sendrecv(a, 0, msg::elems(v, mine.base(), 0, v.n), 0, msg::elems(v, theirs, 0, v.n), 0);
    }
    return err;
}

int allreduce(args& a) noexcept {
    const red_view& v = a.red;
    if (int err = reduce_and_swap(a, output_base(a)); err != MPI_SUCCESS) {
        return err;
    }
    msg::binomial_bcast(local_args(a, 1), 0, msg::elems(v, output_base(a), 0, v.n), 0);
    return MPI_SUCCESS;
}

int reduce_scatter(args& a) noexcept {
    scratch theirs;
    if (!leader_scratch(a, &theirs)) {
        return MPI_ERR_NO_MEM;
    }
    if (int err = reduce_and_swap(a, theirs.base()); err != MPI_SUCCESS) {
        return err;
    }
    msg::scatter_blocks(local_args(a, 1), theirs.base(), 0);
    return MPI_SUCCESS;
}

}  // namespace

int run_inter(args& a) noexcept {
    switch (a.k) {
        case kind::barrier: return barrier(a);
        case kind::bcast: return bcast(a);
        case kind::gather:
        case kind::gatherv: return msg::gather(a);
        case kind::scatter:
        case kind::scatterv: return msg::scatter(a);
        case kind::allgather:
        case kind::allgatherv: return msg::allgather_linear(a);
        case kind::alltoall:
        case kind::alltoallv:
        case kind::alltoallw: return msg::alltoall_linear(a);
        case kind::reduce: return reduce(a);
        case kind::allreduce: return allreduce(a);
        case kind::reduce_scatter:
        case kind::reduce_scatter_block: return reduce_scatter(a);
        default: return MPI_ERR_COMM;  // scan and exscan: not defined (api.cpp refuses them)
    }
}

}  // namespace mpc::mpi::coll
