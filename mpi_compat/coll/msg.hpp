/// \file
/// Message-based collective algorithms: point-to-point on the communicator's collective
/// context, tagged with the call's sequence number (coll.hpp). They carry the collectives
/// between processes (the transport issue); inside a process MPC_COLL_<NAME> selects them.
/// Data moves typed (layout to layout through the matching engine); reductions exchange the
/// elements of their red_view.
#pragma once

#include "mpi_compat/coll/coll.hpp"

namespace mpc::mpi::coll::msg {

int barrier(args& a) noexcept;  ///< dissemination (Hensgen, Finkel, Manber): ceil(log2 n) rounds
int bcast_binomial(args& a) noexcept;
int bcast_linear(args& a) noexcept;
int gather(args& a) noexcept;   ///< linear, gather and gatherv
int scatter(args& a) noexcept;  ///< linear, scatter and scatterv
int allgather_ring(args& a) noexcept;
int allgather_linear(args& a) noexcept;
int alltoall_pairwise(args& a) noexcept;  ///< n - 1 exchanges, peer me +- step
int alltoall_linear(args& a) noexcept;    ///< every send and receive posted at once
int reduce_binomial(args& a) noexcept;    ///< commutative operations
int reduce_linear(args& a) noexcept;      ///< the root combines in rank order
int allreduce_recursive_doubling(args& a) noexcept;  ///< commutative; any size (folded to 2^k)
int allreduce_ring(args& a) noexcept;     ///< commutative: ring reduce-scatter + ring allgather
int allreduce_reduce_bcast(args& a) noexcept;
int reduce_scatter(args& a) noexcept;     ///< reduce to rank 0, then scatter of the blocks
int scan(args& a) noexcept;               ///< scan and exscan: a chain in rank order

}  // namespace mpc::mpi::coll::msg
