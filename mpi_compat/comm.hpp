/// \file
/// Communicators. One comm object is shared by every member that lives in this process (all
/// of them, until processes are joined by UCX); what MPI makes local to a process — the error
/// handler, the name, cached attributes — is kept per member, in the member's task.
///
/// Each communicator owns two context ids: `context` for point-to-point traffic and
/// `context + 1` for the collectives built on it, so the two never match each other.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace mpc::mpi {

struct task;
struct virtual_topology;  // topo.hpp
struct keyval_info;       // attr.cpp

/// One attribute cached on a communicator by a member (attr.cpp). `key` keeps the keyval's
/// callbacks alive after MPI_Comm_free_keyval, as MPI requires.
struct cached_attr {
    int keyval = 0;
    void* value = nullptr;
    std::shared_ptr<keyval_info> key;
};

struct comm {
    MPI_Comm handle = MPI_COMM_NULL;
    std::uint32_t context = 0;     ///< point-to-point context; context + 1 is for collectives
    std::vector<int> world_of;     ///< comm rank -> world rank
    std::vector<std::pair<int, int>> rank_index;  ///< (world rank, comm rank), sorted; empty for WORLD and its duplicates
    bool is_self = false;
    bool is_world = false;
    /// Rank i is world rank i for every i (MPI_COMM_WORLD and its duplicates): rank_of() is
    /// the world rank, without a search (set by index_ranks()).
    bool world_order = false;
    /// The size when world_order (the blocking point-to-point fast paths check ranks against
    /// it, p2p.hpp), 0 otherwise (every rank fails that check: the general path).
    int fast_size = 0;
    /// Intercommunicator: world_of is group A, remote_of group B; a member of A sees A as its
    /// local group and B as the remote one, and the other way round.
    bool is_inter = false;
    std::vector<int> remote_of;
    std::vector<std::pair<int, int>> remote_index;  ///< (world rank, rank in B), sorted
    /// Intercommunicator: one unregistered intra-communicator per group (0: A, 1: B) that carries
    /// the internal traffic inside a group (the allgathers, broadcasts and handle deliveries of
    /// the constructors), apart from the traffic between the groups on coll_context(). Both
    /// views share one context pair of their own: a member only ever receives on it from its
    /// own group, so the two groups' messages cannot meet.
    std::unique_ptr<comm> group_view[2];
    bool predefined = false;
    /// Every member lives in this process (set by index_ranks(); WORLD's by the launch): the
    /// collectives may use shared memory. False for a communicator that spans processes.
    bool local_only = true;
    std::atomic<int> members{0};   ///< members that have not freed it yet
    /// Shared-memory collective state (coll/shm.hpp), made by the first collective; freed with
    /// the communicator.
    mutable std::atomic<void*> coll_shm{nullptr};

    comm() = default;
    comm(const comm&) = delete;
    comm& operator=(const comm&) = delete;
    ~comm();

    std::uint32_t coll_context() const noexcept { return context + 1; }
    /// Size of the (local) group; for an intercommunicator, of group A: use local_size().
    int size() const noexcept { return is_self ? 1 : static_cast<int>(world_of.size()); }
    /// Whether t belongs to group A (always, for an intra-communicator).
    bool in_group_a(const task& t) const noexcept;
    int local_size(const task& t) const noexcept {
        return is_inter && !in_group_a(t) ? static_cast<int>(remote_of.size()) : size();
    }
    /// Ranks a point-to-point call may name: the remote group's for an intercommunicator.
    int peer_count(const task& t) const noexcept {
        return !is_inter ? size() : in_group_a(t) ? static_cast<int>(remote_of.size()) : size();
    }
    /// World ranks of t's local group and of its remote group (intercommunicators).
    const std::vector<int>& local_group(const task& t) const noexcept {
        return is_inter && !in_group_a(t) ? remote_of : world_of;
    }
    const std::vector<int>& remote_group(const task& t) const noexcept {
        return is_inter && !in_group_a(t) ? world_of : remote_of;
    }
    /// The caller's rank in this communicator, or MPI_UNDEFINED.
    int rank_of(const task& t) const noexcept;
    /// The rank of world rank wr in this communicator (in either group of an intercommunicator),
    /// or MPI_UNDEFINED; on MPI_COMM_SELF, 0.
    int rank_of_world(int wr) const noexcept;
    /// The world rank behind `rank` (a valid rank of this communicator; of the remote group for
    /// an intercommunicator).
    int world_rank(const task& caller, int rank) const noexcept;
    /// Builds rank_index (and remote_index) from world_of (and remote_of).
    void index_ranks();
    /// The group point-to-point ranks refer to: the remote group of an intercommunicator.
    const std::vector<int>& remote_group_or_self(const task& t) const noexcept {
        return is_inter ? remote_group(t) : world_of;
    }
    /// The intra-communicator view of t's local group (intercommunicators only).
    const comm& local_view(const task& t) const noexcept { return *group_view[in_group_a(t) ? 0 : 1]; }
};

/// What each member keeps about a communicator.
struct comm_local {
    /// Atomic: threads of one rank (MPI_THREAD_MULTIPLE) may set it while others raise errors
    /// (MPICH's threads/pt2pt/threaded_sr sets it from several threads at once).
    std::atomic<MPI_Errhandler> errhandler{MPI_ERRORS_ARE_FATAL};
    std::string name;
    std::shared_ptr<const virtual_topology> topo;  ///< Cartesian/graph topology (topo.cpp); null: none
    std::vector<cached_attr> attrs;                ///< in the order they were set (attr.cpp)
    std::uint32_t idup_calls = 0;                  ///< MPI_Comm_idup calls so far (internal.hpp's idup_tag)
};

namespace detail {
/// The handle table (comm.cpp): index -> comm, in chunks that are never freed, so that every
/// MPI call looks its communicator up inline, with two acquire loads and no lock.
inline constexpr std::size_t comm_chunk_bits = 10;
inline constexpr std::size_t comm_chunk_size = std::size_t{1} << comm_chunk_bits;
inline constexpr std::size_t comm_max_chunks = (std::size_t{1} << 24) / comm_chunk_size;
extern std::atomic<std::atomic<comm*>*> comm_chunks[comm_max_chunks];
}  // namespace detail

/// The communicator behind a handle, or nullptr for an invalid or freed one.
inline comm* lookup_comm(MPI_Comm h) noexcept {
    if ((static_cast<unsigned>(h) >> 24) != MPC_HANDLE_KIND_COMM) {
        return nullptr;
    }
    auto idx = static_cast<std::size_t>(h & 0xffffff);
    std::atomic<comm*>* chunk = detail::comm_chunks[idx >> detail::comm_chunk_bits].load(std::memory_order_acquire);
    return chunk != nullptr ? chunk[idx & (detail::comm_chunk_size - 1)].load(std::memory_order_acquire) : nullptr;
}
/// Gives a new communicator a handle.
MPI_Comm register_comm(comm* c);
/// Drops one member's reference; the object goes when the last member has freed it.
void release_comm(comm* c) noexcept;
/// One more reference, for an operation that uses c after its caller may have freed it (a
/// pending non-blocking collective); release_comm() drops it. No-op on predefined ones.
void retain_comm(comm* c) noexcept;
/// A fresh pair of context ids, unique in the job: process p of P takes 16 + 2 (k P + p), k
/// counting its allocations (one process: 16, 18, 20, ...).
std::uint32_t new_context_pair() noexcept;
/// The registered intra-communicator of context `context` whose members (world ranks in rank
/// order) are `members`: the one another member in this process adopted already, or a new one
/// (one reference per member that lives here). Every member of a new communicator calls it
/// once, after the members agreed on the context (the creator sends it to the others).
MPI_Comm adopt_comm(std::uint32_t context, const std::vector<int>& members);
/// The registered intercommunicator of context pair `context` between groups a and b (world
/// ranks in rank order, disjoint), whose group views use the context pair `views`: adopted the
/// same way as adopt_comm (one object per process, one reference per member that lives here).
MPI_Comm adopt_intercomm(std::uint32_t context, std::uint32_t views, const std::vector<int>& a,
                         const std::vector<int>& b);

/// The calling member's local data for c (created with defaults on first use).
comm_local& local_of(task& t, const comm* c);
/// Drops the member's local data for c (MPI_Comm_free).
void drop_local(task& t, const comm* c) noexcept;

}  // namespace mpc::mpi
