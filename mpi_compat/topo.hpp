/// \file
/// Virtual topologies (MPI 3.1 chapter 7). Each member of a communicator keeps its own
/// immutable copy of the topology in its comm_local (comm.hpp), so queries take no lock and
/// MPI_Comm_dup shares the pointer. Cartesian and graph topologies hold the whole structure;
/// a distributed graph holds the calling member's neighbors only, as MPI intends.
#pragma once

#include <mpi.h>

#include <vector>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

struct virtual_topology {
    int kind = MPI_UNDEFINED;  ///< MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
    // MPI_CART
    std::vector<int> dims;
    std::vector<int> periods;  ///< 0 or 1 per dimension
    // MPI_GRAPH
    std::vector<int> index;
    std::vector<int> edges;
    // MPI_DIST_GRAPH (this member's neighbors)
    std::vector<int> sources;
    std::vector<int> source_weights;
    std::vector<int> dests;
    std::vector<int> dest_weights;
    bool weighted = false;
};

/// The validated start of a topology query: `t` is the caller's topology of the communicator,
/// of kind `kind` (0: any kind, and t may then be null).
struct topo_call {
    task* self = nullptr;
    comm* c = nullptr;
    const virtual_topology* t = nullptr;
    int err = MPI_SUCCESS;
};
topo_call enter_topo(const char* call, MPI_Comm h, int kind) noexcept;

/// The rank `disp` steps from `rank` along dimension `dim` of Cartesian topology t (row-major
/// ranks), or MPI_PROC_NULL past the end of a non-periodic dimension (MPI_Cart_shift).
int cart_shift(const virtual_topology& t, int rank, int dim, long long disp) noexcept;

}  // namespace mpc::mpi
