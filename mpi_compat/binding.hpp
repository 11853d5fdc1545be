/// \file
/// Helpers of the C bindings: the PMPI_/MPI_ pairs and argument checks shared by the calls.
#pragma once

#include <mpi.h>

#include <cstddef>

/// Declares MPI_name as a weak alias of PMPI_name (profiling interface, MPI 3.1 section 14.2).
#define MPC_WEAK(name) __attribute__((weak, alias("P" #name)))

namespace mpc::mpi {

/// Bytes of one element of a datatype that the basic collectives can copy as raw bytes
/// (predefined types, and derived types whose elements form one block from the buffer on), or
/// 0: invalid, uncommitted, MPI_LB/MPI_UB, or a derived type with holes (not supported by the
/// basic collectives yet).
std::size_t type_size(MPI_Datatype t) noexcept;

}  // namespace mpc::mpi
