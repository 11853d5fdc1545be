/// \file
/// Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, and the communicator
/// constructors on intercommunicators (intercomm.hpp). Point-to-point over an intercommunicator
/// names ranks of the remote group (comm::world_rank, comm::peer_count); the collectives on
/// intercommunicators are in coll/inter.cpp.
///
/// Traffic: between the groups on the intercommunicator's collective context (a message's
/// source is the sender's rank in its own group, so it names the remote rank); inside one group
/// on that group's view (comm::group_view), an intra-communicator with a context of its own.
///
/// Every constructor agrees on the new groups first; then one member (group A's first) picks the
/// context pairs and sends them to the others, and every member adopts the communicator of those
/// contexts (adopt_intercomm / adopt_comm: one object per process), so that it works whether the
/// members share a process or not.
///
/// Create: each group reduces its members' argument checks to its leader; the two leaders
/// exchange their status and, if both are fine, their groups over the peer communicator; the
/// leader with the lower world rank (its group is group A) picks the contexts and sends them to
/// the other leader; each leader broadcasts the outcome (the contexts and the remote group, or
/// the error class and where it was found) in its local communicator, so that every member
/// returns the same class.

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

/// What the creator of a new communicator sends the other members: its context pairs (views:
/// those of an intercommunicator's group views) and, for MPI_Intercomm_merge, whether group A
/// comes first.
struct new_contexts {
    std::uint32_t context = 0;
    std::uint32_t views = 0;
    int a_first = 1;
};

/// Sends `cx` from its creator, a member of group A of intercommunicator `parent`, to the
/// members `to` (world ranks of either group; the creator is skipped): group A's through A's
/// view, group B's over the intercommunicator. The receivers call recv_contexts.
void send_contexts(task& self, const comm& parent, const std::vector<int>& to, const new_contexts& cx, int tag) {
    const comm& view_a = *parent.group_view[0];
    for (int wr : to) {
        if (wr == self.world_rank) {
            continue;
        }
        if (int in_a = view_a.rank_of_world(wr); in_a != MPI_UNDEFINED) {
            coll_send(self, view_a, in_a, tag, &cx, sizeof(cx));
        } else {
            coll_send(self, parent, parent.rank_of_world(wr), tag, &cx, sizeof(cx));
        }
    }
}

/// Receives what `creator` (a world rank of group A of `parent`) sends with send_contexts. Both
/// paths name the creator by its rank in group A.
new_contexts recv_contexts(task& self, const comm& parent, int creator, int tag) {
    new_contexts cx;
    int source = parent.rank_of_world(creator);
    coll_recv(self, parent.in_group_a(self) ? *parent.group_view[0] : parent, source, tag, &cx, sizeof(cx));
    return cx;
}

/// The caller's side of a new communicator made from `parent`: it inherits the error handler.
MPI_Comm inherit(task& self, const comm& parent, MPI_Comm h) {
    MPI_Errhandler eh = local_of(self, &parent).errhandler;
    local_of(self, lookup_comm(h)).errhandler = eh;
    return h;
}

/// Collective over `a` and `b`, members of intercommunicator `parent` (a: of its group A, b: of
/// its group B, both non-empty, in new-rank order): a[0] picks the contexts of the
/// intercommunicator between a and b and sends them; every member adopts it.
MPI_Comm build_intercomm(task& self, const comm& parent, const std::vector<int>& a, const std::vector<int>& b,
                         int tag = tag_comm_create) {
    new_contexts cx;
    if (a.front() == self.world_rank) {
        cx.context = new_context_pair();
        cx.views = new_context_pair();
        send_contexts(self, parent, a, cx, tag);
        send_contexts(self, parent, b, cx, tag);
    } else {
        cx = recv_contexts(self, parent, a.front(), tag);
    }
    return inherit(self, parent, adopt_intercomm(cx.context, cx.views, a, b));
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

/// Where MPI_Intercomm_create failed, as the leaders report it to their groups.
enum class create_failure : int {
    none,
    member,         ///< a member of the local group (null newintercomm)
    peer,           ///< the local leader's peer communicator is invalid or an intercommunicator
    remote_leader,  ///< the local leader's remote leader is not a rank of the peer communicator
    leader_inside,  ///< the local leader's remote leader belongs to the local group
    overlap,        ///< the two groups share a process
    remote,         ///< the remote group failed (its leader said so)
};

/// What a leader broadcasts to its local group: the new contexts, whether the local group is
/// group A and the remote group's size (its members follow in a second broadcast), or the error
/// class and where it was found.
struct create_outcome {
    int err = MPI_SUCCESS;
    create_failure where = create_failure::none;
    new_contexts cx;
    int local_is_a = 0;
    int remote_size = 0;
};

/// The status a leader sends the other before the groups: its group's error class (0: none)
/// and size.
struct leader_header {
    int err = MPI_SUCCESS;
    int size = 0;
};

/// Binomial reduction of the members' error classes (MPI_SUCCESS: none) to member `root` of
/// intra-communicator c: the root gets MPI_SUCCESS or the first class in rank order from the
/// root on; the others get a partial result.
int reduce_error(task& self, const comm& c, int root, int err) {
    int n = c.size();
    int rel = (c.rank_of(self) - root + n) % n;
    for (int mask = 1; mask < n; mask <<= 1) {
        if ((rel & mask) != 0) {
            coll_send(self, c, (rel - mask + root) % n, tag_inter_status, &err, sizeof(err));
            break;
        }
        if (rel + mask < n) {
            int child = MPI_SUCCESS;
            coll_recv(self, c, (rel + mask + root) % n, tag_inter_status, &child, sizeof(child));
            if (err == MPI_SUCCESS) {
                err = child;
            }
        }
    }
    return err;
}

/// The local leader's part of MPI_Intercomm_create: checks its peer arguments, exchanges status
/// and groups with the remote leader over `peer_h` (internal tag `itag`) and builds or receives
/// the contexts of the new intercommunicator; `theirs` gets the remote group. `group_err` is its
/// group's reduced error class. A failure that leaves the peer arguments usable is also reported
/// to the remote leader; an invalid peer communicator or remote leader names nobody to report to.
create_outcome lead_intercomm(task& self, const comm& local, MPI_Comm peer_h, int remote_leader, int itag,
                              int group_err, std::vector<int>& theirs) {
    comm* peer = lookup_comm(peer_h);
    if (peer == nullptr || peer->is_inter) {
        return {MPI_ERR_COMM, create_failure::peer};
    }
    if (remote_leader < 0 || remote_leader >= peer->size()) {
        return {MPI_ERR_RANK, create_failure::remote_leader};
    }
    std::vector<int> mine = members_of(self, local);
    const int remote_world = peer->world_rank(self, remote_leader);
    if (std::find(mine.begin(), mine.end(), remote_world) != mine.end()) {
        return {MPI_ERR_RANK, create_failure::leader_inside};
    }
    leader_header out{group_err, static_cast<int>(mine.size())};
    leader_header in;
    coll_sendrecv(self, *peer, remote_leader, &out, sizeof(out), remote_leader, &in, sizeof(in), itag);
    if (group_err != MPI_SUCCESS) {
        return {group_err, create_failure::member};
    }
    if (in.err != MPI_SUCCESS) {
        return {in.err, create_failure::remote};
    }
    theirs.resize(static_cast<std::size_t>(in.size));
    coll_sendrecv(self, *peer, remote_leader, mine.data(), mine.size() * sizeof(int), remote_leader, theirs.data(),
                  theirs.size() * sizeof(int), itag);
    // Both leaders see both lists: they agree on an overlap without another message.
    for (int w : theirs) {
        if (std::find(mine.begin(), mine.end(), w) != mine.end()) {
            return {MPI_ERR_COMM, create_failure::overlap};
        }
    }
    create_outcome ok;
    ok.local_is_a = self.world_rank < remote_world ? 1 : 0;
    ok.remote_size = in.size;
    if (ok.local_is_a != 0) {
        ok.cx.context = new_context_pair();
        ok.cx.views = new_context_pair();
        coll_send(self, *peer, remote_leader, itag, &ok.cx, sizeof(ok.cx));
    } else {
        coll_recv(self, *peer, remote_leader, itag, &ok.cx, sizeof(ok.cx));
    }
    return ok;
}

/// The reason a member gives for a failed MPI_Intercomm_create.
const char* failure_text(create_failure f) noexcept {
    switch (f) {
        case create_failure::member:
            return "a member of the local group gave a null newintercomm pointer";
        case create_failure::peer:
            return "the local leader's peer communicator is invalid or an intercommunicator";
        case create_failure::remote_leader:
            return "the local leader's remote leader is not a rank of its peer communicator";
        case create_failure::leader_inside:
            return "the local leader's remote leader is a member of the local group";
        case create_failure::overlap:
            return "the local and remote groups overlap";
        case create_failure::remote:
            return "the call failed in the remote group";
        case create_failure::none:
            break;
    }
    return "no error";
}

}  // namespace

MPI_Comm intercomm_dup(task& self, const comm& c, int tag) {
    return build_intercomm(self, c, c.world_of, c.remote_of, tag);
}

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
    // What every member checks on its own, and finds alike: local_leader and tag are the same on
    // all members of a group (MPI 3.1 section 6.6.2), so the whole group returns at once.
    if (local->is_inter) {
        return raise(local_h, MPI_ERR_COMM, call, "the local communicator must be an intra-communicator");
    }
    if (local_leader < 0 || local_leader >= local->size()) {
        return raise(local_h, MPI_ERR_RANK, call, "invalid local leader %d (the local communicator has %d ranks)",
                     local_leader, local->size());
    }
    if (tag < 0) {
        return raise(local_h, MPI_ERR_TAG, call, "invalid tag %d", tag);
    }
    // The rest is agreed on, so that no member is left waiting: the members' checks are reduced
    // to the leader, which adds its own (peer communicator, remote leader, the groups' overlap)
    // and the remote group's, and broadcasts the outcome.
    const int mine = newcomm == nullptr ? MPI_ERR_ARG : MPI_SUCCESS;
    const int group_err = reduce_error(*self, *local, local_leader, mine);
    create_outcome out;
    std::vector<int> theirs;
    const bool leader = local->rank_of(*self) == local_leader;
    if (leader) {
        out = lead_intercomm(*self, *local, peer_h, remote_leader, intercomm_create_tag(tag), group_err, theirs);
    }
    coll_bcast(*self, *local, &out, sizeof(out), local_leader);
    if (out.err != MPI_SUCCESS) {
        if (newcomm == nullptr) {
            return raise(local_h, MPI_ERR_ARG, call, "null newintercomm pointer");
        }
        *newcomm = MPI_COMM_NULL;
        if (leader && out.where == create_failure::peer) {
            return raise(local_h, out.err, call, "invalid peer communicator %#x", peer_h);
        }
        if (leader && out.where == create_failure::remote_leader) {
            return raise(local_h, out.err, call, "invalid remote leader %d", remote_leader);
        }
        return raise(local_h, out.err, call, "%s", failure_text(out.where));
    }
    theirs.resize(static_cast<std::size_t>(out.remote_size));
    coll_bcast(*self, *local, theirs.data(), theirs.size() * sizeof(int), local_leader);
    std::vector<int> ours = members_of(*self, *local);
    MPI_Comm h = out.local_is_a != 0 ? adopt_intercomm(out.cx.context, out.cx.views, ours, theirs)
                                     : adopt_intercomm(out.cx.context, out.cx.views, theirs, ours);
    *newcomm = inherit(*self, *local, h);
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
    new_contexts cx;
    if (!in_a && rank == 0) {
        coll_send(self, c, 0, tag_merge, &flag, sizeof(flag));  // to A's rank 0
    }
    if (in_a && rank == 0) {
        int b_high = 0;
        coll_recv(self, c, 0, tag_merge, &b_high, sizeof(b_high));
        cx.a_first = flag != 0 && b_high == 0 ? 0 : 1;
        cx.context = new_context_pair();
        send_contexts(self, c, c.world_of, cx, tag_comm_create);
        send_contexts(self, c, c.remote_of, cx, tag_comm_create);
    } else {
        cx = recv_contexts(self, c, c.world_of.front(), tag_comm_create);
    }
    std::vector<int> members = cx.a_first != 0 ? c.world_of : c.remote_of;
    const std::vector<int>& second = cx.a_first != 0 ? c.remote_of : c.world_of;
    members.insert(members.end(), second.begin(), second.end());
    *newcomm = inherit(self, c, adopt_comm(cx.context, members));
    return MPI_SUCCESS;
}

int MPI_Intercomm_create(MPI_Comm, int, MPI_Comm, int, int, MPI_Comm*) MPC_WEAK(MPI_Intercomm_create);
int MPI_Intercomm_merge(MPI_Comm, int, MPI_Comm*) MPC_WEAK(MPI_Intercomm_merge);
}
