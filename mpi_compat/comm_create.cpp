/// \file
/// Communicators from groups and the smaller communicator calls: MPI_Comm_create,
/// MPI_Comm_create_group, MPI_Comm_split_type, MPI_Comm_idup, MPI_Comm_dup_with_info,
/// MPI_Comm_set_info/get_info, and the intercommunicator queries. MPI_Comm_create on an
/// intercommunicator is intercomm.cpp's (intercomm.hpp); MPI_Comm_create_group and
/// MPI_Comm_split_type are defined on intra-communicators only (MPI 3.1 section 6.4.2).
///
/// Creation (make_comm) follows comm_api.cpp's protocol: the member that becomes rank 0 picks the
/// context pair and sends it to the other members over the parent's collective context; each
/// adopts the communicator of that context (adopt_comm).
/// No other agreement is needed, because every member knows the member list from its arguments
/// (MPI requires the same group on all members of it). MPI_Comm_create therefore costs nothing
/// to the parent's ranks outside the group, and MPI_Comm_create_group involves only the group;
/// its tag is part of the internal tag, so concurrent creations with different tags stay apart.

#include <new>
#include <utility>

#include "mpi_compat/attr.hpp"
#include "mpi_compat/binding.hpp"
#include "mpi_compat/coll/nbc.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"
#include "mpi_compat/info.hpp"
#include "mpi_compat/intercomm.hpp"
#include "mpi_compat/internal.hpp"
#include "mpi_compat/remote.hpp"

namespace mpc::mpi {

comm_call enter_comm(const char* call, MPI_Comm h) noexcept {
    comm_call k;
    k.self = current();
    k.c = lookup_comm(h);
    if (k.self == nullptr) {
        k.err = raise(MPI_COMM_NULL, MPI_ERR_OTHER, call, "called outside an MPI rank");
    } else if (k.c == nullptr) {
        k.err = raise(MPI_COMM_NULL, MPI_ERR_COMM, call, "invalid communicator %#x", h);
    }
    return k;
}

std::vector<int> members_of(const task& self, const comm& c) {
    return c.is_self ? std::vector<int>{self.world_rank} : c.local_group(self);
}

MPI_Comm make_comm(task& self, const comm& parent, const std::vector<int>& members, int tag,
                   std::shared_ptr<const virtual_topology> topo) {
    std::uint32_t context = 0;
    if (members.front() == self.world_rank) {
        context = new_context_pair();
        for (std::size_t i = 1; i < members.size(); ++i) {
            coll_send(self, parent, parent.rank_of_world(members[i]), tag, &context, sizeof(context));
        }
    } else {
        coll_recv(self, parent, parent.rank_of_world(members.front()), tag, &context, sizeof(context));
    }
    MPI_Comm h = adopt_comm(context, members);
    comm* c = lookup_comm(h);
    MPI_Errhandler eh = local_of(self, &parent).errhandler;
    comm_local& l = local_of(self, c);
    l.errhandler = eh;
    l.topo = std::move(topo);
    return h;
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

namespace {

/// Resolves the group argument of a creation call on `h` and checks that it is a subgroup of
/// the communicator's group (of the caller's local group, for an intercommunicator).
int subgroup(const char* call, MPI_Comm h, const comm& c, MPI_Group gh, std::shared_ptr<const group>& g) noexcept {
    g = lookup_group(gh);
    if (g == nullptr) {
        return raise(h, MPI_ERR_GROUP, call, "invalid group %#x", gh);
    }
    const task& self = *current();
    const comm& local = c.is_inter ? c.local_view(self) : c;
    for (int wr : g->world_of) {
        if (local.is_self ? wr != self.world_rank : local.rank_of_world(wr) == MPI_UNDEFINED) {
            return raise(h, MPI_ERR_GROUP, call, "world rank %d of the group is not in the %s", wr,
                         c.is_inter ? "local group of the intercommunicator" : "communicator");
        }
    }
    return MPI_SUCCESS;
}

int check_info(const char* call, MPI_Comm h, MPI_Info info) noexcept {
    if (info != MPI_INFO_NULL && !info_valid(info)) {
        return raise(h, MPI_ERR_INFO, call, "invalid info %#x", info);
    }
    return MPI_SUCCESS;
}

/// MPI_Comm_idup: the duplication of comm_api.cpp's MPI_Comm_dup, run in a thread of the rank
/// (coll/nbc.hpp) so that the call returns at once: a member other than the creator waits
/// there for the contexts while the rank goes on (MPICH's comm_idup test has rank 0 receive
/// from every other rank before it calls MPI_Comm_idup). The contexts travel with the call's
/// own tag (idup_tag), so that several duplications in flight cannot swap their results. The
/// attribute copy callbacks run in that thread; *newcomm is written when it is done.
class idup_job final : public coll::nbc::job {
public:
    idup_job(task& self, const comm& parent, MPI_Comm* newcomm, int tag) noexcept
        : self_(self), parent_(parent), newcomm_(newcomm), tag_(tag) {
        hold_comm(&parent);
    }
    int run() noexcept override {
        MPI_Comm h = parent_.is_inter ? intercomm_dup(self_, parent_, tag_)
                                      : make_comm(self_, parent_, members_of(self_, parent_), tag_, nullptr);
        int e = on_comm_dup(self_, parent_, &h);  // attributes, topology
        *newcomm_ = h;
        return e;
    }

private:
    task& self_;
    const comm& parent_;
    MPI_Comm* newcomm_;
    int tag_;
};

}  // namespace

extern "C" {

int PMPI_Comm_create(MPI_Comm h, MPI_Group gh, MPI_Comm* newcomm) {
    comm_call k = enter_comm("MPI_Comm_create", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    std::shared_ptr<const group> g;
    if (int e = subgroup("MPI_Comm_create", h, *k.c, gh, g); e != MPI_SUCCESS) {
        return e;
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_create", "null output pointer");
    }
    int grank = g->rank_of_world(k.self->world_rank);
    if (k.c->is_inter) {  // every member takes part: the other group must learn this side's group
        *newcomm = intercomm_split(*k.self, *k.c, grank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, grank);
        return MPI_SUCCESS;
    }
    if (grank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    *newcomm = make_comm(*k.self, *k.c, g->world_of, tag_make_comm, nullptr);
    return MPI_SUCCESS;
}

int PMPI_Comm_create_group(MPI_Comm h, MPI_Group gh, int tag, MPI_Comm* newcomm) {
    comm_call k = enter_comm("MPI_Comm_create_group", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (k.c->is_inter) {
        return raise(h, MPI_ERR_COMM, "MPI_Comm_create_group", "the communicator must be an intra-communicator");
    }
    std::shared_ptr<const group> g;
    if (int e = subgroup("MPI_Comm_create_group", h, *k.c, gh, g); e != MPI_SUCCESS) {
        return e;
    }
    if (tag < 0) {
        return raise(h, MPI_ERR_TAG, "MPI_Comm_create_group", "invalid tag %d", tag);
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_create_group", "null output pointer");
    }
    if (g->rank_of_world(k.self->world_rank) == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    *newcomm = make_comm(*k.self, *k.c, g->world_of, tag_create_group + (tag & 0xffffff), nullptr);
    return MPI_SUCCESS;
}

int PMPI_Comm_split_type(MPI_Comm h, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
    comm_call k = enter_comm("MPI_Comm_split_type", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (k.c->is_inter) {
        return raise(h, MPI_ERR_COMM, "MPI_Comm_split_type", "the communicator must be an intra-communicator");
    }
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_split_type", "invalid split type %d", split_type);
    }
    if (int e = check_info("MPI_Comm_split_type", h, info); e != MPI_SUCCESS) {
        return e;
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_split_type", "null output pointer");
    }
    // The ranks of one node share memory: one communicator per node, ordered by key.
    return PMPI_Comm_split(h, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : remote::node_of(k.self->world_rank), key,
                           newcomm);
}

int PMPI_Comm_idup(MPI_Comm h, MPI_Comm* newcomm, MPI_Request* request) {
    comm_call k = enter_comm("MPI_Comm_idup", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (newcomm == nullptr || request == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_idup", "null output pointer");
    }
    const int tag = idup_tag(local_of(*k.self, k.c).idup_calls++);
    auto* j = new (std::nothrow) idup_job(*k.self, *k.c, newcomm, tag);
    int e = j == nullptr ? MPI_ERR_NO_MEM : coll::nbc::start(k.self, "MPI_Comm_idup", j, request);
    return e == MPI_SUCCESS ? MPI_SUCCESS : raise(h, e, "MPI_Comm_idup", "out of memory");
}

int PMPI_Comm_dup_with_info(MPI_Comm h, MPI_Info info, MPI_Comm* newcomm) {
    comm_call k = enter_comm("MPI_Comm_dup_with_info", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_info("MPI_Comm_dup_with_info", h, info); e != MPI_SUCCESS) {
        return e;
    }
    return PMPI_Comm_dup(h, newcomm);
}

int PMPI_Comm_set_info(MPI_Comm h, MPI_Info info) {
    comm_call k = enter_comm("MPI_Comm_set_info", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (info == MPI_INFO_NULL || !info_valid(info)) {
        return raise(h, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info %#x", info);
    }
    return MPI_SUCCESS;  // no communicator hint is used: MPI allows ignoring them
}

int PMPI_Comm_get_info(MPI_Comm h, MPI_Info* info_used) {
    comm_call k = enter_comm("MPI_Comm_get_info", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (info_used == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_get_info", "null output pointer");
    }
    return PMPI_Info_create(info_used);  // no hint is in use
}

int PMPI_Comm_test_inter(MPI_Comm h, int* flag) {
    comm_call k = enter_comm("MPI_Comm_test_inter", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (flag == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_test_inter", "null output pointer");
    }
    *flag = k.c->is_inter ? 1 : 0;
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm h, int* size) {
    comm_call k = enter_comm("MPI_Comm_remote_size", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (!k.c->is_inter) {
        return raise(h, MPI_ERR_COMM, "MPI_Comm_remote_size", "not an intercommunicator");
    }
    if (size == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_remote_size", "null output pointer");
    }
    *size = static_cast<int>(k.c->remote_group(*k.self).size());
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm h, MPI_Group* group) {
    comm_call k = enter_comm("MPI_Comm_remote_group", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (!k.c->is_inter) {
        return raise(h, MPI_ERR_COMM, "MPI_Comm_remote_group", "not an intercommunicator");
    }
    if (group == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_remote_group", "null output pointer");
    }
    MPI_Group g = register_group(k.c->remote_group(*k.self));
    if (g == MPI_GROUP_NULL) {
        return raise(h, MPI_ERR_NO_MEM, "MPI_Comm_remote_group", "out of memory");
    }
    *group = g;
    return MPI_SUCCESS;
}

int MPI_Comm_create(MPI_Comm, MPI_Group, MPI_Comm*) MPC_WEAK(MPI_Comm_create);
int MPI_Comm_create_group(MPI_Comm, MPI_Group, int, MPI_Comm*) MPC_WEAK(MPI_Comm_create_group);
int MPI_Comm_split_type(MPI_Comm, int, int, MPI_Info, MPI_Comm*) MPC_WEAK(MPI_Comm_split_type);
int MPI_Comm_idup(MPI_Comm, MPI_Comm*, MPI_Request*) MPC_WEAK(MPI_Comm_idup);
int MPI_Comm_dup_with_info(MPI_Comm, MPI_Info, MPI_Comm*) MPC_WEAK(MPI_Comm_dup_with_info);
int MPI_Comm_set_info(MPI_Comm, MPI_Info) MPC_WEAK(MPI_Comm_set_info);
int MPI_Comm_get_info(MPI_Comm, MPI_Info*) MPC_WEAK(MPI_Comm_get_info);
int MPI_Comm_test_inter(MPI_Comm, int*) MPC_WEAK(MPI_Comm_test_inter);
int MPI_Comm_remote_size(MPI_Comm, int*) MPC_WEAK(MPI_Comm_remote_size);
int MPI_Comm_remote_group(MPI_Comm, MPI_Group*) MPC_WEAK(MPI_Comm_remote_group);
}
