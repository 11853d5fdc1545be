/// \file
/// Helpers of the C bindings: the PMPI_/MPI_ pairs and argument checks shared by the calls.
#pragma once

#include <mpi.h>

#include <cstddef>

/// Declares MPI_name as a weak alias of PMPI_name (profiling interface, MPI 3.1 section 14.2).
#define MPC_WEAK(name) __attribute__((weak, alias("P" #name)))

namespace mpc::mpi {

/// Size in bytes of one element of a datatype usable for communication, or 0 if the handle is
/// not one (invalid, MPI_DATATYPE_NULL, MPI_LB/MPI_UB).
std::size_t type_size(MPI_Datatype t) noexcept;

}  // namespace mpc::mpi
