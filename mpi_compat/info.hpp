/// \file
/// Info objects (info.cpp), for the calls of other files that take an MPI_Info argument.
#pragma once

#include <mpi.h>

namespace mpc::mpi {

/// Whether `h` is a valid info handle (MPI_INFO_ENV included, MPI_INFO_NULL excluded).
bool info_valid(MPI_Info h) noexcept;

}  // namespace mpc::mpi
