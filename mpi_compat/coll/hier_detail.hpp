/// \file
/// The steps every hierarchical algorithm takes (hier.cpp), shared with the ones in other files
/// (hier_v.cpp: Gatherv and Scatterv).
#pragma once

#include "mpi_compat/coll/hier.hpp"

namespace mpc::mpi::coll::hier {

/// The levels of c (made by the first member here that needs them).
const levels& levels_of(const comm& c) noexcept;
/// Whether the caller leads its process (its member of lowest rank).
bool is_leader(const args& a, const levels& h) noexcept;
/// The call as a phase of kind k in the caller's process (the local view; root 0).
args local_args(const args& a, const levels& h, kind k) noexcept;
/// Runs a phase in the process: alone, flat, or in the local view's slots (its own sequence;
/// a non-blocking call's numbers were reserved when it started). Kinds: barrier, bcast,
/// gather(v), scatter(v), reduce, allgather. May yield.
int local_phase(args& l) noexcept;

/// Gatherv and Scatterv between processes (hier_v.cpp).
int gatherv(args& a, const levels& h) noexcept;
int scatterv(args& a, const levels& h) noexcept;

}  // namespace mpc::mpi::coll::hier
