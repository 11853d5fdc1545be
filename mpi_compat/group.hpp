/// \file
/// Process groups, and the pieces shared by the calls that build communicators from groups and
/// topologies (comm_create.cpp, topo.cpp, topo_graph.cpp).
///
/// A group is an immutable list of world ranks in group-rank order. Handles index a
/// process-wide table (index 0: MPI_GROUP_NULL, 1: MPI_GROUP_EMPTY); each handle owns its object
/// through a shared_ptr, so a call that looked a group up keeps it alive even if another thread
/// frees the handle meanwhile. Groups do not reference communicators: MPI_Comm_group copies the
/// member list.
#pragma once

#include <mpi.h>

#include <memory>
#include <utility>
#include <vector>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

struct group {
    std::vector<int> world_of;                    ///< group rank -> world rank
    std::vector<std::pair<int, int>> rank_index;  ///< (world rank, group rank), sorted

    explicit group(std::vector<int> members);
    int size() const noexcept { return static_cast<int>(world_of.size()); }
    /// The group rank of world rank `w`, or MPI_UNDEFINED.
    int rank_of_world(int w) const noexcept;
};

/// The group behind a handle (MPI_GROUP_EMPTY included), or null for an invalid or freed one.
std::shared_ptr<const group> lookup_group(MPI_Group h) noexcept;
/// A handle for a new group of these world ranks; MPI_GROUP_EMPTY when there are none,
/// MPI_GROUP_NULL when out of memory.
MPI_Group register_group(std::vector<int> members) noexcept;

/// Internal tags of communicator creation on the parent's collective context (internal.hpp's
/// own tags stay below 64). MPI_Comm_create_group uses tag_create_group + (user tag mod 2^24).
enum group_tag : int { tag_make_comm = 64, tag_topo_gather = 65, tag_topo_scatter = 66, tag_create_group = 1 << 24 };

/// The validated start of a call on a communicator: err is set (and raised) on failure.
struct comm_call {
    task* self = nullptr;
    comm* c = nullptr;
    int err = MPI_SUCCESS;
};
comm_call enter_comm(const char* call, MPI_Comm h) noexcept;

/// World ranks of c's members, in rank order.
std::vector<int> members_of(const task& self, const comm& c);

struct virtual_topology;
/// Collective over `members` (world ranks in new-rank order, all members of `parent`, the caller
/// among them): members[0] picks the context pair and sends it to the others over the parent's
/// collective context with `tag`; each member adopts the communicator (adopt_comm), inherits the
/// parent's error handler and gets topology `topo` (may be null). May yield.
MPI_Comm make_comm(task& self, const comm& parent, const std::vector<int>& members, int tag,
                   std::shared_ptr<const virtual_topology> topo);

}  // namespace mpc::mpi
