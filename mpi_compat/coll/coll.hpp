/// \file
/// The collectives (docs/collectives.md): one description of a call (`args`), algorithms that
/// run it, and the choice among them.
///
/// A collective call is checked by its binding (api.cpp), described in an `args` record and
/// handed to run(), which picks an algorithm: the one MPC_COLL_<NAME> forces, else the default
/// for the communicator and the sizes. Every call on a communicator, blocking or not, takes the
/// next number of that communicator's sequence (the same on every member, since MPI has every
/// member start its collectives in the same order): the shared-memory algorithms use it to pick
/// their slot, the message-based ones to tag their messages, so that collectives in flight at
/// once on one communicator never meet.
///
/// Two families:
///  - shm (shm.cpp): every member lives in this process; members publish their `args` and read
///    each other's buffers directly (one copy, layout to layout), synchronised through counters
///    in a slot of the communicator. The default inside a process.
///  - msg (msg.cpp): point-to-point on the communicator's collective context (binomial and
///    pipelined trees, recursive doubling, ring, Rabenseifner, Bruck, pairwise). They carry the
///    collectives between processes and are tested on their own inside one.
///  - hier (hier.cpp): a communicator whose members live in several processes runs its
///    Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v) and Allgather(v), blocking or not, as shm in
///    each process and msg between one leader per process; its other calls run msg.
///
/// Non-blocking collectives (nbc.cpp) run the same algorithms in a user-level thread of the
/// rank's own; the request completes when it returns. Small ones take no thread: inside a
/// process the last member to call completes them for all (shm_nb.cpp); between processes the
/// last member of each process starts the leaders' rounds, driven by their requests'
/// completions (hier_nb.cpp).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "mpi_compat/datatype/datatype.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi::coll {

/// The collectives that have algorithms to choose from (order: the knob table's, api.cpp).
enum class kind : std::uint8_t {
    barrier,
    bcast,
    gather,
    gatherv,
    scatter,
    scatterv,
    allgather,
    allgatherv,
    alltoall,
    alltoallv,
    alltoallw,
    reduce,
    allreduce,
    reduce_scatter,
    reduce_scatter_block,
    scan,
    exscan,
    count_
};
inline constexpr int n_kinds = static_cast<int>(kind::count_);

/// The name of a collective (MPI_Allreduce's is "allreduce"; the knob is MPC_COLL_ALLREDUCE).
const char* kind_name(kind k) noexcept;

/// A reduction's element view: what op_apply() is given for `n` elements at `base`. The
/// algorithms reduce arrays of `n` elements of `t` spaced `stride` bytes apart, chunked at
/// element boundaries; a scratch array of n elements takes `span` bytes and its base is the
/// allocation plus `shift`.
struct red_view {
    MPI_Op op = MPI_OP_NULL;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    count_t n = 0;
    aint stride = 0;
    aint shift = 0;          ///< scratch: base = allocation + shift (user ops: -true_lb)
    aint buf_off = 0;        ///< user buffers: base = buffer + buf_off
    std::size_t span = 0;    ///< bytes of an n-element scratch array
    const datatype* dt = nullptr;  ///< the element type (non-dense views copy through it)
    bool dense = true;       ///< elements [a, b) are the bytes [a, b) x stride from base - shift
    bool commutative = true;
    /// Bytes of the elements [a, b) counted from a base (contiguous views only).
    std::size_t bytes(count_t a, count_t b) const noexcept { return static_cast<std::size_t>((b - a) * stride); }
};

/// Everything an algorithm needs about one member's call. It lives on the caller's stack (or
/// in the non-blocking request's record) until the algorithm returns; shm algorithms let the
/// other members read it.
struct args {
    kind k = kind::barrier;
    task* self = nullptr;
    const comm* c = nullptr;
    int rank = 0;
    int size = 0;
    std::uint64_t seq = 0;  ///< the call's number in the communicator's sequence
    /// Tag space of the messages (msg.cpp): an intercommunicator call runs several phases in
    /// its local group under the one sequence number, each phase in a space of its own.
    std::uint8_t phase = 0;
    /// A blocking call, made by the member itself: every member of the process makes its
    /// blocking calls in the communicator's order, so they may share per-process state in that
    /// order (hier.cpp). Non-blocking ones run in threads of their own, in any order.
    bool blocking = false;
    /// A non-blocking call that runs hierarchically: the next number of the run of the local
    /// view's sequence its shared-memory phases reserved when it started (hier::reserve), in
    /// the job's record; null otherwise (blocking calls number their phases as they run them).
    std::uint64_t* local_seq = nullptr;
    // data (as the binding received them; sbuf is never MPI_IN_PLACE: see in_place)
    const void* sbuf = nullptr;
    count_t scount = 0;
    const datatype* stype = nullptr;
    void* rbuf = nullptr;
    count_t rcount = 0;
    const datatype* rtype = nullptr;
    const int* scounts = nullptr;  ///< v and w forms
    const int* sdispls = nullptr;
    const int* rcounts = nullptr;
    const int* rdispls = nullptr;
    const MPI_Datatype* stypes = nullptr;  ///< alltoallw
    const MPI_Datatype* rtypes = nullptr;
    /// Non-blocking alltoallw: stypes and rtypes resolved at the call (and held: the user may
    /// free the handles before completion); null otherwise (the handles are looked up).
    const datatype* const* stype_ptrs = nullptr;
    const datatype* const* rtype_ptrs = nullptr;
    bool in_place = false;
    int root = 0;  ///< intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group
    // reductions: the element view of sbuf and rbuf (see red_view); reductions whose type
    // needs conversion run on packed copies (api.cpp) and see plain arrays here
    red_view red;
    bool red_pack = false;  ///< run on packed arrays of the basic type (api.cpp)
    const datatype* red_user_type = nullptr;
};

/// The next number of c's collective sequence for the caller (member `rank`).
std::uint64_t next_seq(const comm& c, int rank) noexcept;
/// Takes n numbers of that sequence at once; returns the first.
std::uint64_t next_seqs(const comm& c, int rank, int n) noexcept;
/// For a non-blocking call about to start (in the caller, in call order): when run() will take
/// the hierarchical path, reserves its local phases' sequence numbers in *next and points
/// a.local_seq at it.
void prepare_nonblocking(args& a, std::uint64_t* next) noexcept;

/// Whether MPC_COLL_<NAME> forces another algorithm than the shared-memory one on kind k.
bool algorithm_forced(kind k) noexcept;

/// An algorithm: runs a call (may yield; returns an MPI error class).
using algo_fn = int (*)(args&) noexcept;
/// The algorithm of collective k called `name` in the MPC_COLL_<NAME> choices; null when k has
/// none of that name ("auto" and "msg" name none: they choose).
algo_fn algorithm_named(kind k, const char* name) noexcept;

/// Runs the collective with the algorithm chosen for it (may yield; returns an MPI error class).
int run(args& a) noexcept;
/// run(), after the cases it does not see: a member alone, reductions on packed copies.
int execute(args& a) noexcept;
/// Runs a collective on an intercommunicator (inter.cpp; run() hands them over).
int run_inter(args& a) noexcept;
/// Whether the caller receives a rooted call's result: the root of an intra-communicator, the
/// member that passed MPI_ROOT on an intercommunicator.
inline bool is_root(const args& a) noexcept { return a.root == MPI_ROOT || (a.rank == a.root && !a.c->is_inter); }

/// Releases the collective state hung on a communicator (release_comm, last member).
void destroy_state(comm& c) noexcept;

// ---- helpers shared by the algorithms ------------------------------------------------------------

/// Copies (src, scount, stype) into (dst, rcount, rtype), layout to layout, one pass.
void copy_typed(const void* src, count_t scount, const datatype& stype, void* dst, count_t rcount,
                const datatype& rtype) noexcept;
/// Pointer arithmetic in bytes.
inline char* at(void* p, aint off) noexcept { return static_cast<char*>(p) + off; }
inline const char* at(const void* p, aint off) noexcept { return static_cast<const char*>(p) + off; }

/// inout = in op inout for elements [a, b) of the view, bases given.
void reduce_range(const red_view& v, const void* in_base, void* inout_base, count_t a, count_t b) noexcept;
/// Copies elements [a, b) of the view from one base to another.
void copy_range(const red_view& v, const void* from_base, void* to_base, count_t a, count_t b) noexcept;

/// A scratch array for a view (heap; freed by the destructor). base() is null when n == 0.
class scratch {
public:
    scratch() noexcept = default;
    explicit scratch(const red_view& v) noexcept { reset(v); }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    ~scratch();
    /// (Re)allocates for v; false when out of memory.
    bool reset(const red_view& v) noexcept;
    /// A plain byte buffer.
    bool reset_bytes(std::size_t n) noexcept;
    void* base() const noexcept { return base_; }
    bool ok() const noexcept { return ok_; }

private:
    void* mem_ = nullptr;
    void* base_ = nullptr;
    bool ok_ = true;
};

}  // namespace mpc::mpi::coll
