/// \file
/// Communicator constructors on intercommunicators (intercomm.cpp), called by the bindings of
/// comm_api.cpp and comm_create.cpp once they have checked their arguments. Each is collective
/// over both groups, may yield, and gives the caller's copy of the result the error handler
/// the caller has on the parent.
///
/// Protocol: the groups agree on the new groups (MPI_Comm_split: an allgather of color and key
/// in each group view, an exchange between the two groups' rank 0, a broadcast in each group
/// view), then the first member of the new group A (always taken from the parent's group A)
/// creates the object and delivers its handle: to group A through A's view, to group B over
/// the parent intercommunicator (comm::group_view).
#pragma once

#include <mpi.h>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

/// MPI_Comm_dup on intercommunicator c: the same local and remote groups, the same order. The
/// contexts travel with internal tag `tag` (tag_comm_create, or MPI_Comm_idup's idup_tag).
MPI_Comm intercomm_dup(task& self, const comm& c, int tag);

/// MPI_Comm_split on intercommunicator c (MPI 3.1 section 6.4.2): the members of each color
/// form an intercommunicator between the ones of the parent's group A and of its group B, each
/// side ordered by (key, parent rank). MPI_COMM_NULL for MPI_UNDEFINED and for a color that
/// only one side gives. MPI_Comm_create on an intercommunicator is a split with color 0 for
/// the members of the group argument (key: their rank in it) and MPI_UNDEFINED for the others.
MPI_Comm intercomm_split(task& self, const comm& c, int color, int key);

}  // namespace mpc::mpi
