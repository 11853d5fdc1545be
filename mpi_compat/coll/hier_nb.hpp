/// \file
/// Small non-blocking collectives between processes without a thread (docs/collectives.md,
/// "Non-blocking collectives"): Ibarrier, and Ibcast, Ireduce and Iallreduce of small data
/// (shm::eager_fits) on an intra-communicator whose members live in several processes.
///
/// The members of each process arrive in a slot of their process's local view (hier.hpp) as
/// the eager calls of one process do (shm_nb.cpp): each leaves its data and request there and
/// counts itself in. The last one combines the process's data (a reduction in rank order) and
/// starts the call's part between the processes' leaders: a state machine of rounds of
/// non-blocking point-to-point on the communicator's collective context, sent and received in
/// the name of the process's leader (its engine, its world rank), whatever member or thread
/// runs it. A round ends when its last request completes; the code that completes that request
/// (the transport's progress, on an idle VP, in a waiting rank or in the event watcher; or the
/// call that posts it) runs the round's end and starts the next round. After the last round,
/// the result goes to every member's buffer in the process, the slot passes on, and the
/// members' requests complete. No thread, and nothing to do in MPI_Wait or MPI_Test.
///
/// The leaders run the algorithms of the blocking calls' leaders (hier.cpp, and the msg rule for
/// small data): dissemination (Ibarrier), binomial tree (Ibcast), recursive doubling folded to a
/// power of two (Iallreduce), binomial tree (Ireduce), in the same association, so a reduction
/// gives the bits the blocking call gives on the same layout. Predefined operations only (all
/// commutative): a user operation would run outside its rank in a round that the transport's
/// event watcher ends.
#pragma once

#include "mpi_compat/coll/shm.hpp"

namespace mpc::mpi::coll::hier_nb {

/// Whether non-blocking call a takes this path (the same answer on every member: the kind, the
/// sizes and signatures MPI requires to match, the job's layout, MPC_COLL_* knobs).
bool runs(const args& a) noexcept;
/// Where the caller arrives: its process's local view, a number of that view's sequence taken
/// now (so call it once per call, in call order, as the blocking calls take theirs).
shm::eager_pos position(const args& a) noexcept;

}  // namespace mpc::mpi::coll::hier_nb
