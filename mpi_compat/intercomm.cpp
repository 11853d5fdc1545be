/// \file
/// Intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge. Point-to-point over an
/// intercommunicator names ranks of the remote group (comm::world_rank, comm::peer_count);
/// collectives and communicator constructors on intercommunicators are not supported yet and
/// are refused with MPI_ERR_COMM.
///
/// Create: the two leaders exchange their groups over the peer communicator; the leader with the
/// lower world rank builds the object (its group is group A) and sends the handle to the other
/// leader; each leader broadcasts the handle in its local communicator.

#include <algorithm>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/internal.hpp"

using namespace mpc::mpi;

namespace {

std::vector<int> local_members(const task& self, const comm& c) {
    if (c.is_self) {
        return {self.world_rank};
    }
    return c.local_group(self);
}

/// The leaders swap their group lists over peer (collective context, tag derived from the user's).
std::vector<int> swap_groups(task& self, const comm& peer, int remote_leader, int tag, const std::vector<int>& mine) {
    int n = static_cast<int>(mine.size());
    int rn = 0;
    coll_sendrecv(self, peer, remote_leader, &n, sizeof(n), remote_leader, &rn, sizeof(rn), tag);
    std::vector<int> theirs(static_cast<std::size_t>(rn));
    coll_sendrecv(self, peer, remote_leader, mine.data(), mine.size() * sizeof(int), remote_leader, theirs.data(),
                  theirs.size() * sizeof(int), tag);
    return theirs;
}

}  // namespace

extern "C" {

int PMPI_Intercomm_create(MPI_Comm local_h, int local_leader, MPI_Comm peer_h, int remote_leader, int tag,
                          MPI_Comm* newcomm) {
    const char* call = "MPI_Intercomm_create";
    task* self = current();
    comm* local = lookup_comm(local_h);
    if (self == nullptr || local == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, call, "invalid local communicator %#x", local_h);
    }
    if (local->is_inter) {
        return raise(local_h, MPI_ERR_COMM, call, "the local communicator must be an intra-communicator");
    }
    int lsize = local->local_size(*self);
    if (local_leader < 0 || local_leader >= lsize) {
        return raise(local_h, MPI_ERR_RANK, call, "invalid local leader %d", local_leader);
    }
    if (newcomm == nullptr || tag < 0) {
        return raise(local_h, newcomm == nullptr ? MPI_ERR_ARG : MPI_ERR_TAG, call, "bad output pointer or tag");
    }
    const int itag = tag_intercomm + 16 + (tag & 0xffff);
    MPI_Comm h = MPI_COMM_NULL;
    if (local->rank_of(*self) == local_leader) {
        comm* peer = lookup_comm(peer_h);
        if (peer == nullptr || peer->is_inter) {
            return raise(local_h, MPI_ERR_COMM, call, "invalid peer communicator %#x", peer_h);
        }
        if (remote_leader < 0 || remote_leader >= peer->size()) {
            return raise(local_h, MPI_ERR_RANK, call, "invalid remote leader %d", remote_leader);
        }
        std::vector<int> mine = local_members(*self, *local);
        std::vector<int> theirs = swap_groups(*self, *peer, remote_leader, itag, mine);
        for (int w : theirs) {
            if (std::find(mine.begin(), mine.end(), w) != mine.end()) {
                return raise(local_h, MPI_ERR_COMM, call, "the two groups overlap (world rank %d is in both)", w);
            }
        }
        if (self->world_rank < peer->world_rank(*self, remote_leader)) {
            auto* c = new comm();
            c->is_inter = true;
            c->world_of = mine;
            c->remote_of = theirs;
            c->context = new_context_pair();
            c->members.store(static_cast<int>(mine.size() + theirs.size()), std::memory_order_relaxed);
            c->index_ranks();
            h = register_comm(c);
            coll_send(*self, *peer, remote_leader, itag, &h, sizeof(h));
        } else {
            coll_recv(*self, *peer, remote_leader, itag, &h, sizeof(h));
        }
    }
    coll_bcast(*self, *local, &h, sizeof(h), local_leader);
    local_of(*self, lookup_comm(h)).errhandler = local_of(*self, local).errhandler;
    *newcomm = h;
    return MPI_SUCCESS;
}

int PMPI_Intercomm_merge(MPI_Comm h, int high, MPI_Comm* newcomm) {
    const char* call = "MPI_Intercomm_merge";
    task* self = current();
    comm* c = lookup_comm(h);
    if (self == nullptr || c == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, call, "invalid communicator %#x", h);
    }
    if (!c->is_inter) {
        return raise(h, MPI_ERR_COMM, call, "not an intercommunicator");
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null output pointer");
    }
    // Group A's leader learns B's `high` and decides the order: the "low" group comes first; on a
    // tie, group A. It then builds the new communicator and sends the handle to every member.
    bool in_a = c->in_group_a(*self);
    int rank = c->rank_of(*self);
    int flag = high != 0 ? 1 : 0;
    MPI_Comm out = MPI_COMM_NULL;
    if (!in_a && rank == 0) {
        coll_send(*self, *c, 0, tag_merge, &flag, sizeof(flag));  // to A's rank 0
    }
    if (in_a && rank == 0) {
        int b_high = 0;
        coll_recv(*self, *c, 0, tag_merge, &b_high, sizeof(b_high));
        bool a_first = !(flag != 0 && b_high == 0);
        std::vector<int> members = a_first ? c->world_of : c->remote_of;
        const std::vector<int>& second = a_first ? c->remote_of : c->world_of;
        members.insert(members.end(), second.begin(), second.end());
        auto* m = new comm();
        m->world_of = members;
        m->context = new_context_pair();
        m->members.store(static_cast<int>(members.size()), std::memory_order_relaxed);
        m->index_ranks();
        out = register_comm(m);
        for (int w : members) {
            if (w != self->world_rank) {
                raw_send(*self, c->coll_context(), w, 0, tag_merge + 1, &out, sizeof(out));
            }
        }
    } else {
        raw_recv(*self, c->coll_context(), tag_merge + 1, &out, sizeof(out));
    }
    local_of(*self, lookup_comm(out)).errhandler = local_of(*self, c).errhandler;
    *newcomm = out;
    return MPI_SUCCESS;
}

int MPI_Intercomm_create(MPI_Comm, int, MPI_Comm, int, int, MPI_Comm*) MPC_WEAK(MPI_Intercomm_create);
int MPI_Intercomm_merge(MPI_Comm, int, MPI_Comm*) MPC_WEAK(MPI_Intercomm_merge);
}
