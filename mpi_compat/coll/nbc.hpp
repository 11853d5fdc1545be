/// \file
/// Non-blocking collectives: the call's `args` are copied into a record and the algorithm runs
/// in a user-level thread of its own (placed by the scheduler, so it progresses on another VP
/// while the caller computes, or whenever the caller's VP has nothing else to run); the request
/// completes when the algorithm returns. The sequence number is taken by the caller, so the
/// order of the calls, not the order in which their threads run, matches them up.
#pragma once

#include <mpi.h>

#include "mpi_compat/coll/coll.hpp"

namespace mpc::mpi::coll::nbc {

/// Starts a (checked, numbered) call; *req receives its request. Returns an error class.
int start(const args& a, MPI_Request* req) noexcept;

}  // namespace mpc::mpi::coll::nbc
