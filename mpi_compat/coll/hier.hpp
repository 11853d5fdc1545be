/// \file
/// Hierarchical collectives (docs/collectives.md, "Between processes"): on an
/// intra-communicator whose members live in several processes, the members of each process
/// combine through shared memory (the shm algorithms on the process's *local view*), one
/// leader per process (its lowest communicator rank) runs a message-based algorithm with the
/// other leaders (the msg algorithms on the *leader view*), and the result is spread in each
/// process through shared memory again.
///
/// Every member of every process takes the same decision from what they all know: the
/// communicator's membership, the job's layout (which process runs which world rank), the
/// kind of call and its packed sizes. Nothing is communicated to decide.
///
/// The views are unregistered intra-communicators made once per communicator and process
/// (`levels`, hung on the communicator's collective state and freed with it):
///  - the local view: the members in this process, in communicator rank order; its shm
///    algorithms take their own sequence numbers on it, in the communicator's call order (MPI
///    orders the calls alike on every member): a blocking call as it runs its phases, a
///    non-blocking one all at once when it starts (reserve());
///  - the leader view: the leaders in communicator rank order, on the communicator's own
///    collective context. Its messages travel under the call's sequence number in a tag space
///    of their own (args::phase), so they never meet the communicator's other collective
///    traffic (message-based calls, non-blocking ones in flight), whose sources are
///    communicator ranks.
#pragma once

#include <memory>
#include <vector>

#include "mpi_compat/coll/coll.hpp"
#include "mpi_compat/comm.hpp"

namespace mpc::mpi::coll::hier {

/// A communicator split by process, as this process sees it.
struct levels {
    /// Worth it: at least two processes, and a process with at least two members (with one
    /// member per process the leader view is the communicator itself).
    bool useful = false;
    /// Each process's members are one block of consecutive communicator ranks: reducing each
    /// block, then the blocks in leader order, is rank order (non-commutative operations), and
    /// a process's gathered blocks lie side by side (Allgather).
    bool contiguous = false;
    int me = 0;                    ///< this process's rank in the leader view
    std::vector<int> process;      ///< per communicator rank: its process's rank in the leader view
    std::vector<int> local_rank;   ///< per communicator rank: its rank in its process's local view
    std::vector<int> first;        ///< per leader: its communicator rank (its process's lowest)
    std::vector<int> count;        ///< per leader: its process's members in the communicator
    std::unique_ptr<comm> local;   ///< this process's members
    std::unique_ptr<comm> leaders; ///< one member per process
};

/// Frees the levels of a communicator (destroy_state).
void destroy(levels* l) noexcept;

/// Whether blocking call `a` on an intra-communicator that spans processes runs hierarchically
/// (the same answer on every member; see the file comment). May allocate the levels.
bool runs(const args& a) noexcept;
/// Runs it (may yield; returns an MPI error class).
int run(args& a) noexcept;
/// For a non-blocking call that runs(): reserves, in the caller's call order, the numbers of
/// the local view's sequence its shared-memory phases will use, and sets *next to the first.
/// Blocking calls take theirs as they go, in the same order on every member of a process; a
/// non-blocking call runs in a thread of its own, whenever it is scheduled, so it takes them
/// when it starts. Its phases never run flat (flat calls count in call order too).
void reserve(const args& a, std::uint64_t* next) noexcept;

}  // namespace mpc::mpi::coll::hier
