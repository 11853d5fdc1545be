/// \file
/// Point-to-point on a communicator's collective context (comm::coll_context), the transport
/// of the collectives and of communicator creation. Blocking calls may yield.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

void coll_send(task& self, const comm& c, int dest, int tag, const void* buf, std::size_t bytes) noexcept;
void coll_recv(task& self, const comm& c, int source, int tag, void* buf, std::size_t bytes) noexcept;
/// Sends to `dest` and receives from `source` at once (no deadlock in rings and exchanges).
void coll_sendrecv(task& self, const comm& c, int dest, const void* sbuf, std::size_t sbytes, int source, void* rbuf,
                   std::size_t rbytes, int tag) noexcept;

/// Basic algorithms over coll_*: dissemination barrier, binomial broadcast, and an allgather of
/// `bytes` per rank (ring) into `out` (size * bytes).
void coll_barrier(task& self, const comm& c) noexcept;
void coll_bcast(task& self, const comm& c, void* buf, std::size_t bytes, int root) noexcept;
void coll_allgather(task& self, const comm& c, const void* mine, void* out, std::size_t bytes) noexcept;

/// Reserved tags of internal traffic on the collective context (coll_basic.cpp uses 16-20,
/// group.hpp 64 and up). On an intercommunicator, tag_comm_create delivers new handles both
/// over the intercommunicator and inside a group view (comm::group_view); tag_merge and
/// tag_inter_exchange are the leaders' exchanges of MPI_Intercomm_merge and MPI_Comm_split.
/// tag_inter_status gathers the members' argument checks of MPI_Intercomm_create at the local
/// leader (on the local communicator).
enum internal_tag : int {
    tag_barrier = 1,
    tag_bcast,
    tag_allgather,
    tag_comm_create,
    tag_merge = 8,
    tag_inter_exchange,
    tag_inter_status,
};

/// The internal tag of MPI_Intercomm_create's exchange between the leaders on the peer
/// communicator's collective context: user tags map one to one onto the negative tags below
/// MPI_ANY_TAG (tags no other internal traffic uses, so the exchange cannot meet a collective
/// or a construction running on the peer communicator in another thread); only MPI_TAG_UB
/// shares its internal tag, with MPI_TAG_UB - 1.
/// The internal tag of the n-th MPI_Comm_idup a member calls on a communicator (comm_local::
/// idup_calls): above the message-based collectives' tags (coll/msg.cpp), one per call modulo
/// 2^24, so that duplications in flight at once, and a blocking MPI_Comm_dup among them, each
/// receive their own contexts whatever order their threads run in.
constexpr int idup_tag(std::uint32_t n) noexcept { return 0x70000000 + static_cast<int>(n & 0xffffffU); }

constexpr int intercomm_create_tag(int user_tag) noexcept {
    return user_tag < INT_MAX ? INT_MIN + user_tag : INT_MIN + (INT_MAX - 1);
}

}  // namespace mpc::mpi
