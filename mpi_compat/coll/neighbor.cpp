/// \file
/// Neighborhood collectives (MPI 3.1 section 7.6): MPI_Neighbor_allgather(v) and
/// MPI_Neighbor_alltoall(v, w), blocking and non-blocking, on Cartesian, graph and distributed
/// graph topologies.
///
/// A call becomes a list of receives (one per source, in the standard's order) and a list of
/// sends (one per destination), each a piece of the user's buffers. They run as point-to-point
/// on the communicator's collective context, tagged with the call's sequence number (msg.hpp):
/// every receive is posted, then every send, then all are waited for, so no topology (self
/// loops, repeated edges, asymmetric degrees) can deadlock.
///
/// Matching: between two ranks, messages of one tag are non-overtaking, and both sides post
/// in the standard's order, so the k-th of several edges from s to d meets the k-th receive
/// from s at d. A Cartesian message is tagged with the direction it travels (step 0 towards
/// the -1 neighbor, step 1 towards +1): the block a rank receives from its -1 neighbor in
/// dimension d is what that neighbor sent to its +1 neighbor, even when both neighbors are
/// the same rank (periodic dimensions of size 1 or 2; MPI 4.0 section 8.6, mpi-issues #153).
/// MPI_PROC_NULL neighbors keep their buffer slot; nothing moves to or from them.

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/coll/coll.hpp"
#include "mpi_compat/coll/msg.hpp"
#include "mpi_compat/coll/nbc.hpp"
#include "mpi_compat/coll/pieces.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/topo.hpp"

namespace mpc::mpi::coll {
namespace {

/// A neighbor of the caller and the tag step of the message exchanged with it.
struct neighbor {
    int rank;  ///< in the communicator, or MPI_PROC_NULL
    int step;
};

/// The caller's sources and destinations in the order of MPI 3.1 section 7.6.
void neighbors_of(const virtual_topology& t, int me, std::vector<neighbor>& in, std::vector<neighbor>& out) {
    if (t.kind == MPI_CART) {
        for (int d = 0; d < static_cast<int>(t.dims.size()); ++d) {
            int neg = cart_shift(t, me, d, -1);
            int pos = cart_shift(t, me, d, 1);
            in.push_back({neg, 1});  // from -1: it travelled towards +1
            in.push_back({pos, 0});
            out.push_back({neg, 0});
            out.push_back({pos, 1});
        }
        return;
    }
    if (t.kind == MPI_GRAPH) {
        auto r = static_cast<std::size_t>(me);
        for (int j = me > 0 ? t.index[r - 1] : 0; j < t.index[r]; ++j) {
            int peer = t.edges[static_cast<std::size_t>(j)];
            in.push_back({peer, 0});
            out.push_back({peer, 0});
        }
        return;
    }
    for (int s : t.sources) {
        in.push_back({s, 0});
    }
    for (int d : t.dests) {
        out.push_back({d, 0});
    }
}

/// One side of a call as the user gave it. Block i lies at: `same` buf (allgather's send
/// side: one block for every neighbor), `block` buf + i x count extents, `v` buf + displs[i]
/// extents, `w` buf + bdispls[i] bytes (with types[i]).
struct side {
    enum form { same, block, v, w } shape;
    const void* buf;
    int count = 0;                          ///< same, block
    MPI_Datatype type = MPI_DATATYPE_NULL;  ///< same, block, v
    const int* counts = nullptr;            ///< v, w
    const int* displs = nullptr;            ///< v
    const MPI_Aint* bdispls = nullptr;      ///< w
    const MPI_Datatype* types = nullptr;    ///< w
};

/// One message of a call.
struct edge {
    int peer;
    int step;
    piece data;
};

/// A checked call: its messages in the standard's order (a job, for the non-blocking forms).
class exchange final : public nbc::job {
public:
    args a;  ///< the communicator, the caller and the sequence number (msg.hpp tags)
    std::vector<edge> recvs;
    std::vector<edge> sends;

    int run() noexcept override;
};

int exchange::run() noexcept {
    std::size_t n = recvs.size() + sends.size();
    std::unique_ptr<request[]> r(new (std::nothrow) request[n > 0 ? n : 1]);
    if (r == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    std::size_t used = 0;
    for (const edge& e : recvs) {
        if (e.peer != MPI_PROC_NULL) {
            msg::start_recv(a, e.peer, e.step, const_cast<void*>(e.data.buf), e.data.count, *e.data.type, &r[used++]);
        }
    }
    std::size_t posted = used;
    for (const edge& e : sends) {
        if (e.peer != MPI_PROC_NULL) {
            msg::start_send(a, e.peer, e.step, e.data.buf, e.data.count, *e.data.type, &r[used++]);
        }
    }
    int err = MPI_SUCCESS;
    for (std::size_t i = 0; i < used; ++i) {
        r[i].wait("neighborhood collective");
        if (i < posted && err == MPI_SUCCESS) {
            err = r[i].status.MPI_ERROR;  // MPI_ERR_TRUNCATE
        }
    }
    if (a.c->local_only) {
        shm::pass(a);  // the slot of this sequence number passes to the call n_slots later
    }  // (members in several processes: no shared slots; coll.cpp's rule)
    return err;
}

/// The checks' context: the call's name and communicator handle, for raise().
struct call {
    const char* name;
    MPI_Comm h;
};

/// Checks one side and appends its blocks to `out`, one per neighbor. An MPI error class.
int build(const call& k, const side& s, const std::vector<neighbor>& peers, const char* which, std::vector<edge>& out) {
    if (s.buf == MPI_IN_PLACE) {
        return raise(k.h, MPI_ERR_BUFFER, k.name, "MPI_IN_PLACE is not allowed in neighborhood collectives");
    }
    int n = static_cast<int>(peers.size());
    if ((s.shape == side::v || s.shape == side::w) && n > 0 &&
        (s.counts == nullptr || (s.shape == side::v ? s.displs == nullptr : s.bdispls == nullptr) ||
         (s.shape == side::w && s.types == nullptr))) {
        return raise(k.h, MPI_ERR_ARG, k.name, "null %s counts, displacements or datatypes array", which);
    }
    bool one_type = s.shape != side::w;
    const datatype* t = one_type ? datatype_for_comm(s.type) : nullptr;
    if (one_type && t == nullptr) {
        return raise(k.h, MPI_ERR_TYPE, k.name,
                     "invalid %s datatype %#x (null, freed, not committed, or MPI_LB/MPI_UB)", which, s.type);
    }
    if ((s.shape == side::same || s.shape == side::block) && s.count < 0) {
        return raise(k.h, MPI_ERR_COUNT, k.name, "negative %s count %d", which, s.count);
    }
    out.reserve(peers.size());
    for (int i = 0; i < n; ++i) {
        count_t count = s.count;
        aint off = 0;
        switch (s.shape) {
            case side::same:
                break;
            case side::block:
                off = static_cast<aint>(i) * s.count * t->extent();
                break;
            case side::v:
                count = s.counts[i];
                off = static_cast<aint>(s.displs[i]) * t->extent();
                break;
            case side::w:
                count = s.counts[i];
                off = s.bdispls[i];
                t = datatype_for_comm(s.types[i]);
                if (t == nullptr) {
                    return raise(k.h, MPI_ERR_TYPE, k.name, "invalid %s datatype %#x for neighbor %d", which,
                                 s.types[i], i);
                }
                break;
        }
        if (count < 0) {
            return raise(k.h, MPI_ERR_COUNT, k.name, "negative %s count %lld for neighbor %d", which,
                         static_cast<long long>(count), i);
        }
        if (null_data(s.buf, count, *t)) {
            return raise(k.h, MPI_ERR_BUFFER, k.name, "null %s buffer with count %lld for neighbor %d", which,
                         static_cast<long long>(count), i);
        }
        out.push_back({peers[static_cast<std::size_t>(i)].rank, peers[static_cast<std::size_t>(i)].step,
                       piece{at(s.buf, off), count, t}});
    }
    return MPI_SUCCESS;
}

/// Checks and runs a call; req null: blocking.
int neighbor_call(const char* name, MPI_Comm h, const side& send, const side& recv, bool nonblocking,
                  MPI_Request* req) noexcept {
    call k{name, h};
    topo_call base = enter_topo(name, h, 0);
    if (base.err != MPI_SUCCESS) {
        return base.err;
    }
    if (base.t == nullptr) {
        return raise(h, MPI_ERR_TOPOLOGY, name, "the communicator has no topology");
    }
    if (nonblocking && req == nullptr) {
        return raise(h, MPI_ERR_ARG, name, "null request pointer");
    }
    std::unique_ptr<exchange> x(new (std::nothrow) exchange);
    if (x == nullptr) {
        return raise(h, MPI_ERR_NO_MEM, name, "out of memory");
    }
    args& a = x->a;
    a.k = kind::alltoallw;  // names the wait in shm::pass
    a.self = base.self;
    a.c = base.c;
    a.rank = base.c->rank_of(*base.self);
    a.size = base.c->size();
    try {
        std::vector<neighbor> in;
        std::vector<neighbor> out;
        neighbors_of(*base.t, a.rank, in, out);
        if (int e = build(k, recv, in, "receive", x->recvs); e != MPI_SUCCESS) {
            return e;
        }
        if (int e = build(k, send, out, "send", x->sends); e != MPI_SUCCESS) {
            return e;
        }
    } catch (const std::bad_alloc&) {
        return raise(h, MPI_ERR_NO_MEM, name, "out of memory");
    }
    a.seq = next_seq(*a.c, a.rank);
    if (!nonblocking) {
        int err = x->run();
        if (err != MPI_SUCCESS) {
            const char* why = err == MPI_ERR_TRUNCATE ? "a message did not fit its receive block" : "out of memory";
            return raise(h, err, name, "%s", why);
        }
        return MPI_SUCCESS;
    }
    // The user may free the communicator and the datatypes before completion.
    x->hold_comm(a.c);
    for (const auto* list : {&x->recvs, &x->sends}) {
        for (const edge& e : *list) {
            if (!x->hold_type(e.data.type)) {
                return raise(h, MPI_ERR_NO_MEM, name, "out of memory");
            }
        }
    }
    int err = nbc::start(a.self, name + 4, x.release(), req);  // "neighbor_...": the thread's name
    return err == MPI_SUCCESS ? err : raise(h, err, name, "cannot start the operation");
}

side same(const void* buf, int count, MPI_Datatype t) noexcept { return {side::same, buf, count, t}; }
side block(const void* buf, int count, MPI_Datatype t) noexcept { return {side::block, buf, count, t}; }
side vside(const void* buf, const int* counts, const int* displs, MPI_Datatype t) noexcept {
    return {side::v, buf, 0, t, counts, displs};
}
side wside(const void* buf, const int* counts, const MPI_Aint* displs, const MPI_Datatype* types) noexcept {
    return {side::w, buf, 0, MPI_DATATYPE_NULL, counts, nullptr, displs, types};
}

}  // namespace
}  // namespace mpc::mpi::coll

using namespace mpc::mpi::coll;

// Each call, blocking and not: PMPI_Neighbor_<name> and PMPI_Ineighbor_<name>, with MPI_ names
// as weak aliases. The parameters are the blocking form's; the non-blocking one adds `r`.
#define MPC_NEIGHBOR_CALLS(name, send, recv, ...)                                   \
    int PMPI_Neighbor_##name(__VA_ARGS__) {                                         \
        return neighbor_call("MPI_Neighbor_" #name, h, send, recv, false, nullptr); \
    }                                                                               \
    int PMPI_Ineighbor_##name(__VA_ARGS__, MPI_Request* r) {                        \
        return neighbor_call("MPI_Ineighbor_" #name, h, send, recv, true, r);       \
    }                                                                               \
    int MPI_Neighbor_##name(__VA_ARGS__) MPC_WEAK(MPI_Neighbor_##name);             \
    int MPI_Ineighbor_##name(__VA_ARGS__, MPI_Request* r) MPC_WEAK(MPI_Ineighbor_##name);

extern "C" {

MPC_NEIGHBOR_CALLS(allgather, same(sbuf, scount, stype), block(rbuf, rcount, rtype), const void* sbuf, int scount,
                   MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, MPI_Comm h)
MPC_NEIGHBOR_CALLS(allgatherv, same(sbuf, scount, stype), vside(rbuf, rcounts, displs, rtype), const void* sbuf,
                   int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                   MPI_Datatype rtype, MPI_Comm h)
MPC_NEIGHBOR_CALLS(alltoall, block(sbuf, scount, stype), block(rbuf, rcount, rtype), const void* sbuf, int scount,
                   MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, MPI_Comm h)
MPC_NEIGHBOR_CALLS(alltoallv, vside(sbuf, scounts, sdispls, stype), vside(rbuf, rcounts, rdispls, rtype),
                   const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h)
MPC_NEIGHBOR_CALLS(alltoallw, wside(sbuf, scounts, sdispls, stypes), wside(rbuf, rcounts, rdispls, rtypes),
                   const void* sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                   void* rbuf, const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm h)

}  // extern "C"
#undef MPC_NEIGHBOR_CALLS
