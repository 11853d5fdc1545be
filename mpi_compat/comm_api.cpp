/// \file
/// Communicator management bindings: dup, split, free, compare, names; and MPI_Barrier and
/// MPI_Bcast over the basic internal algorithms (the collectives issue replaces those).
///
/// Creation protocol: the members agree on the new groups (split: an allgather of color and
/// key over the parent), then the member that becomes rank 0 of each new communicator picks
/// its context pair and sends it to the others over the parent's collective context; each
/// member adopts the communicator of that context (adopt_comm: the first member of a process
/// to get there creates the process's object, the others find it).
/// Dup and split of an intercommunicator are intercomm.cpp's (intercomm.hpp).

#include <algorithm>
#include <cstring>
#include <tuple>

#include "mpi_compat/attr.hpp"
#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"
#include "mpi_compat/intercomm.hpp"
#include "mpi_compat/internal.hpp"

using namespace mpc::mpi;

namespace {

using ctx = comm_call;

ctx enter(const char* call, MPI_Comm h) noexcept { return enter_comm(call, h); }

/// MPI_Group_compare on two member lists: MPI_IDENT (same ranks, same order), MPI_SIMILAR (same
/// ranks) or MPI_UNEQUAL.
int compare_members(std::vector<int> a, std::vector<int> b) {
    if (a == b) {
        return MPI_IDENT;
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace

extern "C" {

int PMPI_Comm_dup(MPI_Comm h, MPI_Comm* newcomm) {
    ctx k = enter("MPI_Comm_dup", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_dup", "null output pointer");
    }
    *newcomm = k.c->is_inter ? intercomm_dup(*k.self, *k.c, tag_comm_create)
                             : make_comm(*k.self, *k.c, members_of(*k.self, *k.c), tag_comm_create, nullptr);
    if (int e = on_comm_dup(*k.self, *k.c, newcomm); e != MPI_SUCCESS) {  // attributes, topology
        return raise(h, e, "MPI_Comm_dup", "an attribute copy callback returned %d", e);
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm h, int color, int key, MPI_Comm* newcomm) {
    ctx k = enter("MPI_Comm_split", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_split", "null output pointer");
    }
    if (color < 0 && color != MPI_UNDEFINED) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_split", "negative color %d", color);
    }
    if (k.c->is_inter) {
        *newcomm = intercomm_split(*k.self, *k.c, color, key);
        return MPI_SUCCESS;
    }
    int n = k.c->size();
    int mine[2] = {color, key};
    std::vector<int> all(static_cast<std::size_t>(2 * n));
    coll_allgather(*k.self, *k.c, mine, all.data(), sizeof(mine));
    if (color == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    // Members of my color, ordered by (key, parent rank).
    std::vector<std::tuple<int, int>> order;
    for (int r = 0; r < n; ++r) {
        if (all[static_cast<std::size_t>(2 * r)] == color) {
            order.emplace_back(all[static_cast<std::size_t>(2 * r + 1)], r);
        }
    }
    std::sort(order.begin(), order.end());
    std::vector<int> members;
    members.reserve(order.size());
    for (const auto& [kk, r] : order) {
        members.push_back(k.c->world_rank(*k.self, r));
    }
    *newcomm = make_comm(*k.self, *k.c, members, tag_comm_create, nullptr);
    return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm* h) {
    if (h == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free", "null communicator pointer");
    }
    ctx k = enter("MPI_Comm_free", *h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (k.c->predefined) {
        return raise(*h, MPI_ERR_COMM, "MPI_Comm_free", "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
    }
    if (int e = on_comm_free(*k.self, *k.c); e != MPI_SUCCESS) {  // attribute delete callbacks
        return raise(*h, e, "MPI_Comm_free", "an attribute delete callback returned %d", e);
    }
    drop_local(*k.self, k.c);
    release_comm(k.c);
    *h = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm a, MPI_Comm b, int* result) {
    ctx ka = enter("MPI_Comm_compare", a);
    if (ka.err != MPI_SUCCESS) {
        return ka.err;
    }
    ctx kb = enter("MPI_Comm_compare", b);
    if (kb.err != MPI_SUCCESS) {
        return kb.err;
    }
    if (result == nullptr) {
        return raise(a, MPI_ERR_ARG, "MPI_Comm_compare", "null result pointer");
    }
    if (ka.c == kb.c) {
        *result = MPI_IDENT;
    } else if (ka.c->is_inter != kb.c->is_inter) {
        *result = MPI_UNEQUAL;  // MPI 3.1 section 6.6.1: an intra- and an intercommunicator
    } else {
        // Intercommunicators: both the local and the remote groups must compare for CONGRUENT
        // or SIMILAR (one similar pair of groups makes the result SIMILAR).
        int local = compare_members(members_of(*ka.self, *ka.c), members_of(*kb.self, *kb.c));
        int remote =
            ka.c->is_inter ? compare_members(ka.c->remote_group(*ka.self), kb.c->remote_group(*kb.self)) : MPI_IDENT;
        if (local == MPI_UNEQUAL || remote == MPI_UNEQUAL) {
            *result = MPI_UNEQUAL;
        } else {
            *result = local == MPI_IDENT && remote == MPI_IDENT ? MPI_CONGRUENT : MPI_SIMILAR;
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm h, const char* name) {
    ctx k = enter("MPI_Comm_set_name", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (name == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_set_name", "null name");
    }
    local_of(*k.self, k.c).name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
    return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm h, char* name, int* resultlen) {
    ctx k = enter("MPI_Comm_get_name", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (name == nullptr || resultlen == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_get_name", "null output pointer");
    }
    const std::string& n = local_of(*k.self, k.c).name;
    std::memcpy(name, n.c_str(), n.size() + 1);
    *resultlen = static_cast<int>(n.size());
    return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm, MPI_Comm*) MPC_WEAK(MPI_Comm_dup);
int MPI_Comm_split(MPI_Comm, int, int, MPI_Comm*) MPC_WEAK(MPI_Comm_split);
int MPI_Comm_free(MPI_Comm*) MPC_WEAK(MPI_Comm_free);
int MPI_Comm_compare(MPI_Comm, MPI_Comm, int*) MPC_WEAK(MPI_Comm_compare);
int MPI_Comm_set_name(MPI_Comm, const char*) MPC_WEAK(MPI_Comm_set_name);
int MPI_Comm_get_name(MPI_Comm, char*, int*) MPC_WEAK(MPI_Comm_get_name);
}
