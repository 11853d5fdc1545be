/// \file
/// Attribute caching on communicators (attr.cpp): the hooks that communicator duplication,
/// freeing and MPI_Finalize call. Each member keeps its own attributes (comm_local::attrs).
#pragma once

#include <mpi.h>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

/// MPI_Comm_dup, on every member, right after the duplicate `*newcomm` of `from` is created:
/// gives the caller's copy the attributes that their copy callbacks keep and `from`'s topology.
/// If a copy callback fails, the caller leaves the duplicate (its copied attributes are deleted,
/// *newcomm becomes MPI_COMM_NULL) and the callback's error code is returned. Calls user code.
int on_comm_dup(task& self, const comm& from, MPI_Comm* newcomm) noexcept;

/// MPI_Comm_free, before the caller's comm_local is dropped: calls the delete callbacks of the
/// caller's attributes on `c`, last set first. On a callback failure the remaining attributes
/// stay, the communicator must not be freed, and the callback's code is returned.
int on_comm_free(task& self, const comm& c) noexcept;

/// MPI_Finalize, first thing: deletes the caller's attributes on MPI_COMM_SELF, then on
/// MPI_COMM_WORLD (MPI 3.1 section 8.7.1: a library can run code at finalization this way).
int on_finalize(task& self) noexcept;

}  // namespace mpc::mpi
