/// \file
/// Point-to-point on a communicator's collective context (comm::coll_context), the transport
/// of the collectives and of communicator creation. Blocking calls may yield.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

void coll_send(task& self, const comm& c, int dest, int tag, const void* buf, std::size_t bytes) noexcept;
void coll_recv(task& self, const comm& c, int source, int tag, void* buf, std::size_t bytes) noexcept;
/// Sends to `dest` and receives from `source` at once (no deadlock in rings and exchanges).
void coll_sendrecv(task& self, const comm& c, int dest, const void* sbuf, std::size_t sbytes, int source, void* rbuf,
                   std::size_t rbytes, int tag) noexcept;

/// Point-to-point addressed by world rank on an explicit context (`label` is the source rank
/// the receiver sees), for exchanges that communicator ranks cannot name (inside one group of an
/// intercommunicator). raw_recv takes the first message with `tag` from any source.
void raw_send(task& self, std::uint32_t context, int world_dest, int label, int tag, const void* buf,
              std::size_t bytes) noexcept;
void raw_recv(task& self, std::uint32_t context, int tag, void* buf, std::size_t bytes) noexcept;

/// Basic algorithms over coll_*: dissemination barrier, binomial broadcast, and an allgather of
/// `bytes` per rank (ring) into `out` (size * bytes).
void coll_barrier(task& self, const comm& c) noexcept;
void coll_bcast(task& self, const comm& c, void* buf, std::size_t bytes, int root) noexcept;
void coll_allgather(task& self, const comm& c, const void* mine, void* out, std::size_t bytes) noexcept;

/// Reserved tags of internal traffic on the collective context.
enum internal_tag : int { tag_barrier = 1, tag_bcast, tag_allgather, tag_comm_create, tag_intercomm = 8, tag_merge };

}  // namespace mpc::mpi
