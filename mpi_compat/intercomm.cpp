/// \file
/// Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, and the communicator
/// constructors on intercommunicators (intercomm.hpp). Point-to-point over an intercommunicator
/// names ranks of the remote group (comm::world_rank, comm::peer_count); collectives on
/// intercommunicators are not supported yet and are refused with MPI_ERR_COMM.
///
/// Traffic: between the groups on the intercommunicator's collective context (a message's
/// source is the sender's rank in its own group, so it names the remote rank); inside one group
/// on that group's view (comm::group_view), an intra-communicator with a context of its own.
///
/// Create: the two leaders exchange their groups over the peer communicator; the leader with the
/// lower world rank builds the object (its group is group A) and sends the handle to the other
/// leader; each leader broadcasts the handle in its local communicator.

#include "mpi_compat/intercomm.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"
#include "mpi_compat/internal.hpp"

namespace mpc::mpi {
namespace {

/// Delivers handle h from its creator, a member of group A of intercommunicator `parent`, to the
/// members `to` (world ranks of either group; the creator is skipped): group A's through A's
/// view, group B's over the intercommunicator. The receivers call recv_handle.
void send_handle(task& self, const comm& parent, const std::vector<int>& to, MPI_Comm h) {
    const world_state& w = world();
    const comm& view_a = *parent.group_view[0];
    for (int wr : to) {
        if (wr == self.world_rank) {
            continue;
        }
        const task& t = *w.tasks[static_cast<std::size_t>(wr)];
        if (parent.in_group_a(t)) {
            coll_send(self, view_a, view_a.rank_of(t), tag_comm_create, &h, sizeof(h));
        } else {
            coll_send(self, parent, parent.rank_of(t), tag_comm_create, &h, sizeof(h));
        }
    }
}

/// Receives the handle that `creator` (a world rank of group A of `parent`) sends with
/// send_handle. Both paths name the creator by its rank in group A.
MPI_Comm recv_handle(task& self, const comm& parent, int creator) {
    MPI_Comm h = MPI_COMM_NULL;
    int source = parent.rank_of(*world().tasks[static_cast<std::size_t>(creator)]);
    coll_recv(self, parent.in_group_a(self) ? *parent.group_view[0] : parent, source, tag_comm_create, &h, sizeof(h));
    return h;
}

/// The caller's side of a new communicator made from `parent`: it inherits the error handler.
MPI_Comm adopt(task& self, const comm& parent, MPI_Comm h) {
    MPI_Errhandler eh = local_of(self, &parent).errhandler;
    local_of(self, lookup_comm(h)).errhandler = eh;
    return h;
}

/// Collective over `a` and `b`, members of intercommunicator `parent` (a: of its group A, b: of
/// its group B, both non-empty, in new-rank order): a[0] creates the intercommunicator between
/// a and b and delivers the handle; every member returns it.
MPI_Comm build_intercomm(task& self, const comm& parent, const std::vector<int>& a, const std::vector<int>& b) {
    MPI_Comm h = MPI_COMM_NULL;
    if (a.front() == self.world_rank) {
        h = register_comm(new_intercomm(a, b));
        send_handle(self, parent, a, h);
        send_handle(self, parent, b, h);
    } else {
        h = recv_handle(self, parent, a.front());
    }
    return adopt(self, parent, h);
}

/// The world ranks of `group` whose entry in `colors` ((color, key) per rank) has `color`,
/// ordered by (key, rank).
std::vector<int> members_with(const std::vector<int>& colors, const std::vector<int>& group, int color) {
    std::vector<std::tuple<int, int>> order;
    for (std::size_t r = 0; r < group.size(); ++r) {
        if (colors[2 * r] == color) {
            order.emplace_back(colors[2 * r + 1], static_cast<int>(r));
        }
    }
    std::sort(order.begin(), order.end());
    std::vector<int> out;
    out.reserve(order.size());
    for (const auto& [key, r] : order) {
        out.push_back(group[static_cast<std::size_t>(r)]);
    }
    return out;
}

/// The leaders swap their group lists over peer (collective context, internal tag `tag`).
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

MPI_Comm intercomm_dup(task& self, const comm& c) { return build_intercomm(self, c, c.world_of, c.remote_of); }

MPI_Comm intercomm_split(task& self, const comm& c, int color, int key) {
    const comm& view = c.local_view(self);
    const std::vector<int>& local = c.local_group(self);
    const std::vector<int>& remote = c.remote_group(self);
    // Every member learns (color, key) of both groups: allgather in each group, swap between the
    // groups' rank 0, broadcast of the other group's list in each group.
    int mine[2] = {color, key};
    std::vector<int> lcolors(2 * local.size());
    std::vector<int> rcolors(2 * remote.size());
    coll_allgather(self, view, mine, lcolors.data(), sizeof(mine));
    if (view.rank_of(self) == 0) {
        coll_sendrecv(self, c, 0, lcolors.data(), lcolors.size() * sizeof(int), 0, rcolors.data(),
                      rcolors.size() * sizeof(int), tag_inter_exchange);
    }
    coll_bcast(self, view, rcolors.data(), rcolors.size() * sizeof(int), 0);
    if (color == MPI_UNDEFINED) {
        return MPI_COMM_NULL;
    }
    std::vector<int> l = members_with(lcolors, local, color);
    std::vector<int> r = members_with(rcolors, remote, color);
    if (r.empty()) {
        return MPI_COMM_NULL;  // the color is given on this side only
    }
    return c.in_group_a(self) ? build_intercomm(self, c, l, r) : build_intercomm(self, c, r, l);
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

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
    const int itag = intercomm_create_tag(tag);
    MPI_Comm h = MPI_COMM_NULL;
    if (local->rank_of(*self) == local_leader) {
        comm* peer = lookup_comm(peer_h);
        if (peer == nullptr || peer->is_inter) {
            return raise(local_h, MPI_ERR_COMM, call, "invalid peer communicator %#x", peer_h);
        }
        if (remote_leader < 0 || remote_leader >= peer->size()) {
            return raise(local_h, MPI_ERR_RANK, call, "invalid remote leader %d", remote_leader);
        }
        std::vector<int> mine = members_of(*self, *local);
        std::vector<int> theirs = swap_groups(*self, *peer, remote_leader, itag, mine);
        for (int w : theirs) {
            if (std::find(mine.begin(), mine.end(), w) != mine.end()) {
                return raise(local_h, MPI_ERR_COMM, call, "the two groups overlap (world rank %d is in both)", w);
            }
        }
        if (self->world_rank < peer->world_rank(*self, remote_leader)) {
            h = register_comm(new_intercomm(std::move(mine), std::move(theirs)));
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
    comm_call k = enter_comm(call, h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    const comm& c = *k.c;
    if (!c.is_inter) {
        return raise(h, MPI_ERR_COMM, call, "not an intercommunicator");
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null output pointer");
    }
    // Group A's leader learns B's `high` and decides the order: the "low" group comes first; on a
    // tie, group A. It then builds the new communicator and delivers the handle to every member.
    task& self = *k.self;
    bool in_a = c.in_group_a(self);
    int rank = c.rank_of(self);
    int flag = high != 0 ? 1 : 0;
    MPI_Comm out = MPI_COMM_NULL;
    if (!in_a && rank == 0) {
        coll_send(self, c, 0, tag_merge, &flag, sizeof(flag));  // to A's rank 0
    }
    if (in_a && rank == 0) {
        int b_high = 0;
        coll_recv(self, c, 0, tag_merge, &b_high, sizeof(b_high));
        bool a_first = !(flag != 0 && b_high == 0);
        std::vector<int> members = a_first ? c.world_of : c.remote_of;
        const std::vector<int>& second = a_first ? c.remote_of : c.world_of;
        members.insert(members.end(), second.begin(), second.end());
        auto* m = new comm();
        m->world_of = std::move(members);
        m->context = new_context_pair();
        m->members.store(static_cast<int>(m->world_of.size()), std::memory_order_relaxed);
        m->index_ranks();
        out = register_comm(m);
        send_handle(self, c, c.world_of, out);
        send_handle(self, c, c.remote_of, out);
    } else {
        out = recv_handle(self, c, c.world_of.front());
    }
    *newcomm = adopt(self, c, out);
    return MPI_SUCCESS;
}

int MPI_Intercomm_create(MPI_Comm, int, MPI_Comm, int, int, MPI_Comm*) MPC_WEAK(MPI_Intercomm_create);
int MPI_Intercomm_merge(MPI_Comm, int, MPI_Comm*) MPC_WEAK(MPI_Intercomm_merge);
}
