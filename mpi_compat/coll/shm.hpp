/// \file
/// Shared-memory collectives: every member of the communicator is a rank of this process.
///
/// The communicator carries `slots` slots; call number `seq` uses slot seq % slots, once the
/// members of call seq - slots have all left it. In a slot each member publishes a pointer to
/// its `args` (and small data, copied into its cell so that the member may leave at once); the
/// members then read each other's buffers directly: one copy from the sender's layout to the
/// receiver's, no message, no intermediate buffer for large data. Synchronisation is a counter
/// of arrivals per slot (phase p of an algorithm is over when it reaches p x size) and a flag a
/// designated member raises (root released its data, a result is ready). A member waiting for
/// either spins while its VP has nothing else to run, then parks on the slot's queue; whoever
/// completes a condition wakes the queue. Nothing here allocates on the fast path.
#pragma once

#include <atomic>
#include <cstdint>

#include "lib/spinlock.hpp"
#include "mpi_compat/coll/coll.hpp"
#include "scheduler/sync.hpp"

namespace mpc::mpi::coll::hier {
struct levels;  // hier.hpp
}
namespace mpc::mpi {
struct request;  // match.hpp
}

namespace mpc::mpi::coll::shm {

struct remote_call;  ///< the between-process part of a thread-less non-blocking call (hier_nb.cpp)
/// Frees one (state::destroy; defined in hier_nb.cpp). Null: nothing.
void destroy_remote(remote_call* x) noexcept;

inline constexpr int n_slots = 4;
inline constexpr std::size_t cell_bytes = 256;     ///< small data a member leaves in its cell
inline constexpr std::size_t result_bytes = 2048;  ///< small data one member leaves for all

struct alignas(64) cell {
    const args* a = nullptr;
    std::size_t nbytes = 0;  ///< bytes in data (inline contributions)
    bool inl = false;        ///< the member's contribution is in `data`
    alignas(16) unsigned char data[cell_bytes];
    // a non-blocking small call (shm_nb.cpp): the member's call and request, for the last
    // member to arrive, which completes the call for all
    args nb;
    request* req = nullptr;
    const datatype* held = nullptr;  ///< the member's derived receive type (Ibcast), retained
};

struct alignas(64) member_seq {
    std::uint64_t next = 0;       ///< calls started by this member on the communicator (its own line)
    std::uint64_t flat_next = 0;  ///< flat calls made by this member (see flat())
    /// Every member has arrived at the flat calls before this one, as this member has seen in
    /// a wait (a member's arrival at call k implies its arrival at every call before k): the
    /// wait before rewriting a half skips the members' lines when an earlier wait proved it.
    std::uint64_t flat_seen = 0;
    std::uint64_t vp_next = 0;    ///< one-VP calls made by this member (see one_vp())
};

// ---- flat small collectives ----------------------------------------------------------------------
// Blocking Barrier, and Bcast, Reduce, Allreduce, Allgather(v) and Alltoall of small data (at
// most flat_bytes per member: its block, or all its blocks for Alltoall), on communicators of
// at most flat_limit() members (MPC_COLL_FLAT_MAX, default 8) and no more members than VPs
// (each member can spin on a core of its own), skip the slots and take no sequence number:
// member r's k-th flat call on the communicator (the same call on every member) stores k + 1
// in the epoch of r's half k % flat_halves, after r's data if any, and readers wait for the
// epochs they need and read the data where it lies. One cache-line transfer per member and
// call, no shared counter to fight over. A member writes its half for call k only once every
// member has arrived at call k - (flat_halves - 1), so nobody still reads what it wrote there
// for call k - flat_halves: the root of a Bcast (the members of a Reduce) may run up to
// flat_halves - 1 calls ahead of the others. Non-blocking calls never run flat (their order is
// that of the sequence numbers).

inline constexpr int flat_max = 64;     ///< the most members MPC_COLL_FLAT_MAX may allow
inline constexpr int flat_default = 8;  ///< MPC_COLL_FLAT_MAX unset or invalid
inline constexpr std::size_t flat_bytes = 240;  ///< data per member and call
inline constexpr int flat_halves = 4;            ///< calls a member's data may be in flight

struct alignas(64) flat_half {
    std::atomic<std::uint64_t> epoch{0};  ///< 1 + the last call published here
    alignas(16) unsigned char data[flat_bytes];
};

struct flat_member {
    flat_half half[flat_halves];
};

/// Parking for flat waiters: publishers wake only when somebody sleeps.
struct flat_ctl {
    alignas(64) std::atomic<std::uint32_t> sleepers{0};
    spinlock lk;
    sched::wait_queue q;
};

// ---- one-VP small collectives (shm_vp.cpp) ------------------------------------------------------
// Ranks of one VP run one at a time on it: blocking Barrier, and Bcast, Reduce and Allreduce of
// data that would run flat, are combined by the member that arrives last, with no spinning and
// no line moving between cores. Member r's k-th one-VP call (the same call on every member)
// leaves what it brings (buffers, its args, itself) in its entry, counts itself in and parks
// (its VP switches straight to the next ready member); the last to arrive runs the whole call
// for everybody (the reduction in rank order, x_0 op (x_1 op (... op x_{n-1})), as flat() and
// the slots: the same bits whatever the order of arrival), readies the others, and carries on.
//
// VP groups: with several VPs and more members than VPs, the members are grouped by the VP
// each runs on when the communicator's state is made (its first collective), and the count has two levels: a member counts
// itself into its group; the group's last arrival (its leader for this call) counts the group
// into the communicator; the last leader runs the call for everybody, readies the other
// leaders, and each leader readies its group. A member's arrival touches only its group's
// line, which stays in its VP's core; one line per group crosses cores. With one VP there is
// one group and one level. The grouping is a hint fixed when the state is made: a rank that
// moves later costs time, never a wrong result (the counts are atomics).
//
// The counts are atomics also for the ranks' plain threads (MPI_THREAD_MULTIPLE), which poll.
// Non-blocking calls never run here (their order is that of the sequence numbers).

/// The most members a one-VP Bcast has on one VP (in VP groups: in the largest group, whose
/// leader copies the data to them): past it the slots' Bcast, whose root leaves its data
/// and runs ahead while readers that find it there do not park, is ahead (64 ranks on one VP:
/// 7.3 us against 11.6-25 us; 8 ranks: 0.72 against 0.54; benchmarks/RESULTS.md).
inline constexpr int vp_bcast_max = 32;
/// With several VP groups, a Bcast whose largest group has fewer members takes the slots too:
/// their root runs ahead, and with few members per VP most readers find its data without
/// parking (8 ranks on 2 VPs: 0.55 against 0.49 us; 16: a tie; 40: 2.2 against 3.0;
/// benchmarks/RESULTS.md).
inline constexpr int vp_bcast_min_group = 8;

/// What member r brought to the current one-VP call.
struct vp_entry {
    const void* in = nullptr;  ///< reductions: the input's base; Bcast fast path: the root's bytes
    void* out = nullptr;       ///< reductions: the output's base; Bcast fast path: the member's bytes
    const args* a = nullptr;   ///< the general path's call; null on the Bcast fast path
    sched::ult* waiter = nullptr;  ///< the member's ULT, parked; null: a plain thread (polls)
};

/// The members of one VP (VP groups), in the current call.
struct alignas(64) vp_group {
    std::atomic<std::uint32_t> arrived{0};  ///< members in the current call
    std::atomic<std::uint64_t> done{0};     ///< calls completed for the group
    int leader = -1;                        ///< the group's last arrival in the current call
    int first = 0;                          ///< the group's members: vp_ctl::members[first, first + n)
    std::uint32_t n = 0;
};

struct vp_ctl {
    /// Members in the current call (one group), or groups (several).
    alignas(64) std::atomic<std::uint32_t> arrived{0};
    std::atomic<std::uint64_t> done{0};  ///< one-VP calls completed
    vp_entry* e = nullptr;               ///< n entries
    /// 0: no one-VP calls on this communicator; 1: one group (one VP), no g; more: VP groups.
    int ngroups = 0;
    vp_group* g = nullptr;             ///< ngroups entries when ngroups > 1
    int* members = nullptr;            ///< n ranks, by group
    std::uint16_t* group_of = nullptr;  ///< rank -> its group
    int max_group = 0;                 ///< members in the largest group (one group: n)
    /// A Bcast or an Allreduce on several groups: the last leader leaves the root's packed
    /// bytes (the result) here, and each leader copies them to its group's members (on its
    /// own VP) before readying them. staged: the bytes of the current call (0: nothing to
    /// copy); stage_root: a Bcast's root (-1: an Allreduce); stage_range: an Allreduce of the
    /// general path, copied as stage_view's elements (else raw bytes).
    std::size_t staged = 0;
    int stage_root = -1;
    bool stage_range = false;
    red_view stage_view;
    alignas(16) unsigned char stage[flat_bytes];
};

/// Whether a small Bcast runs on one VP (or in VP groups) on a communicator with ctl's groups.
inline bool vp_bcast_runs(const vp_ctl& ctl) noexcept {
    return ctl.ngroups == 1 ? ctl.max_group <= vp_bcast_max
                            : ctl.ngroups > 1 && ctl.max_group >= vp_bcast_min_group && ctl.max_group <= vp_bcast_max;
}

struct slot {
    alignas(64) std::atomic<std::uint64_t> gen{0};  ///< the call this slot serves
    alignas(64) std::atomic<std::uint32_t> count{0};  ///< arrivals
    std::atomic<std::uint32_t> flag{0};               ///< raised by a designated member
    alignas(64) std::atomic<std::uint32_t> left{0};   ///< members done with the slot
    sched::wait_list waiters;  ///< members parked on any of the above (woken all at once)
    alignas(16) unsigned char result[result_bytes];
    cell* cells = nullptr;
    /// A local view's slot (hier.hpp): the state of the thread-less non-blocking call it serves
    /// between processes (hier_nb.cpp), made by its first such call, reused by the later ones.
    remote_call* remote = nullptr;
};

/// What the blocking fast paths (api.cpp) run on a communicator of this process, per fast kind.
enum class fast_mode : std::uint8_t { none, flat, one_vp };
enum fast_kind : int { fk_barrier, fk_bcast, fk_allreduce, n_fast_kinds };

/// Per-communicator state (made on the first collective, freed with the communicator).
struct state {
    int n = 0;
    /// Fixed at creation from what never changes in a run (the size, the VPs, MPC_COLL_FLAT_MAX,
    /// the forced algorithms): one load tells the fast paths where a call goes.
    fast_mode fast[n_fast_kinds] = {};
    member_seq* seqs = nullptr;
    slot slots[n_slots];
    cell* cell_mem = nullptr;
    flat_member* flat = nullptr;  ///< n entries when n <= flat_limit()
    flat_ctl ctl;
    vp_ctl vp;
    /// The communicator split by process (hier.hpp), when it spans processes: made by the first
    /// hierarchical call here, freed with the state (destroy_state).
    std::atomic<hier::levels*> hier{nullptr};

    /// The state of c: its size, and the VP groups of its members.
    static state* create(const comm& c) noexcept;
    static void destroy(state* s) noexcept;
};

/// The state of c (created on first use; every member of c is in this process).
state& state_of(const comm& c) noexcept;

/// For a call that runs another algorithm: takes and leaves its slot at once, so that the slot's
/// turn passes to the call n_slots later.
void pass(const args& a) noexcept;

/// The largest communicator that runs flat (MPC_COLL_FLAT_MAX, read once).
int flat_limit() noexcept;
/// Whether blocking call a runs flat (same answer on every member: it depends on the kind, the
/// communicator size and the data size). Forced algorithms are the caller's business.
bool flat_runs(const args& a) noexcept;
/// Runs call a flat; it takes no sequence number (flat calls count among themselves).
int flat(args& a) noexcept;
/// flat() of a barrier (member `rank` of c's `size`), for the fast path that builds no args.
int flat_barrier(state& st, int rank, int size) noexcept;
/// The element types the Allreduce fast path folds inline (op.cpp's arithmetic).
enum class basic_elem : unsigned char { f64, f32, i32, i64 };
inline std::size_t basic_size(basic_elem e) noexcept { return e == basic_elem::f64 || e == basic_elem::i64 ? 8 : 4; }
/// flat() of an Allreduce of n elements (n x size <= flat_bytes) of e under MPI_MAX (op 1),
/// MPI_MIN (2) or MPI_SUM (3), from `in` (which may be `out`: in place) to `out`; the same
/// result, bit for bit, as flat() through the general path.
int flat_allreduce_basic(state& st, int rank, int size, const void* in, void* out, std::size_t n, basic_elem e,
                         int op) noexcept;
/// Whether blocking call a runs on one VP (one_vp(); the same answer on every member: the
/// communicator's VP groups, the kind and the data size). Forced algorithms are the caller's
/// business.
bool one_vp_runs(const args& a) noexcept;
/// Runs call a on one VP (see vp_ctl): kinds barrier, bcast, reduce, allreduce.
int one_vp(args& a) noexcept;
/// one_vp() of a barrier, for the fast path.
int one_vp_barrier(state& st, int rank, int size) noexcept;
/// one_vp() of flat_allreduce_basic()'s Allreduce: the same result, bit for bit.
int one_vp_allreduce_basic(state& st, int rank, int size, const void* in, void* out, std::size_t n,
                           basic_elem e, int op) noexcept;
/// one_vp() of a Bcast of `bytes` contiguous bytes at buf (a contiguous predefined type), for
/// the fast path that builds no args.
int one_vp_bcast_bytes(state& st, int rank, int size, int root, void* buf, std::size_t bytes) noexcept;
/// c's state if it exists (a communicator that made a collective call already), else null:
/// the blocking fast paths (api.cpp) check this instead of building the state.
inline state* state_if_ready(const comm& c) noexcept {
    return static_cast<state*>(c.coll_shm.load(std::memory_order_acquire));
}

// ---- non-blocking small calls (shm_nb.cpp) ---------------------------------------------------
// Ibarrier, and Ibcast, Ireduce and Iallreduce of small data, on communicators of 2 to
// eager_max members in this process, run without a thread: each member, in its call, leaves
// its data (and a copy of its args and its request) in its cell of the call's slot and counts
// itself in; the last member to arrive does the whole call for everybody (reduces the cells,
// writes every member's receive buffer), frees the slot and completes every member's request.
// A member whose slot still serves an older call (n_slots calls in flight) leaves that to a
// job that waits for the slot (nbc.cpp).

inline constexpr int eager_max = 64;  ///< the most members a call completed by its last arrival

struct eager_pos;
/// What the member whose arrival completes the count runs (a: its call; s: the slot, every
/// member's cell filled).
using eager_last_fn = void (*)(slot& s, const args& a, const eager_pos& p) noexcept;

/// Where a member arrives in an eager call: whose slots, its cell, how many arrive, the number
/// of the call in that communicator's sequence, the root's cell there if any, and what
/// the last arrival runs. In a process: a's own communicator, rank, size and sequence number
/// (eager_here()); between processes (hier_nb.cpp): the process's local view, its local rank
/// and size, a number of the local view's sequence reserved at the call.
struct eager_pos {
    const comm* view = nullptr;
    int rank = 0;
    int size = 0;
    std::uint64_t seq = 0;
    int root = -1;  ///< the root's cell (Ibcast, Ireduce; -1: not in this slot)
    eager_last_fn last = nullptr;
};

/// Whether non-blocking call a runs eagerly in this process (the same answer on every member:
/// kind, size, packed bytes, and for reductions the op and type, which MPI requires to be the
/// same).
bool eager_runs(const args& a) noexcept;
/// Whether a's data fits the eager path (kinds barrier, bcast, reduce, allreduce; the same
/// answer on every member).
bool eager_fits(const args& a) noexcept;
/// MPC_COLL_NB_EAGER (read once): false sends every non-blocking call to a job thread.
bool eager_enabled() noexcept;
/// The last member of a call in this process (eager_here()'s `last`): runs it, hands the slot
/// to call seq + n_slots, completes the requests.
void complete_here(slot& s, const args& a, const eager_pos& p) noexcept;
/// A call that eager_runs() in this process: its own communicator.
inline eager_pos eager_here(const args& a) noexcept { return {a.c, a.rank, a.size, a.seq, a.root, &complete_here}; }
/// Arrives at p's slot if it serves p.seq now; the last member runs p.last (r among the
/// requests). Returns false, having done nothing, when the slot is busy. Never yields.
bool eager_try_arrive(const args& a, const eager_pos& p, request* r) noexcept;
/// Waits for p's slot (may yield), then arrives as eager_try_arrive() does.
void eager_arrive(const args& a, const eager_pos& p, request* r) noexcept;

/// The shm algorithm of each collective.
int barrier(args& a) noexcept;
int bcast(args& a) noexcept;
int gather(args& a) noexcept;   ///< gather and gatherv
int scatter(args& a) noexcept;  ///< scatter and scatterv
int allgather(args& a) noexcept;  ///< allgather and allgatherv
int alltoall(args& a) noexcept;   ///< alltoall, alltoallv, alltoallw
int reduce(args& a) noexcept;
int allreduce(args& a) noexcept;
int reduce_scatter(args& a) noexcept;  ///< and reduce_scatter_block
int scan(args& a) noexcept;            ///< scan and exscan

}  // namespace mpc::mpi::coll::shm
