/// \file
/// Message-based collective algorithms: point-to-point on the communicator's collective
/// context, tagged with the call's sequence number (coll.hpp). They carry the collectives
/// between processes (the transport issue); inside a process MPC_COLL_<NAME> selects them.
/// Data moves typed (layout to layout through the matching engine); reductions exchange the
/// elements of their red_view.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "mpi_compat/coll/coll.hpp"
#include "mpi_compat/coll/pieces.hpp"
#include "mpi_compat/match.hpp"

namespace mpc::mpi::coll::msg {

// ---- building blocks (also used by the intercommunicator algorithms, inter.cpp) -------------------
// `a` names the communicator, the caller (a.self, a.rank) and the tag (a.seq, a.phase); peers
// are ranks of a.c (of the remote group on an intercommunicator). Blocking ones may yield.

void start_send(const args& a, int dest, int step, const void* buf, count_t count, const datatype& t,
                request* r) noexcept;
void start_recv(const args& a, int src, int step, void* buf, count_t count, const datatype& t, request* r) noexcept;
void send_piece_to(const args& a, int dest, int step, const piece& p) noexcept;
void recv_piece_from(const args& a, int src, int step, const piece& p) noexcept;
/// Exchanges two pieces with two peers at once (no deadlock in rings and pairwise steps).
void sendrecv(const args& a, int dest, const piece& out, int src, const piece& in, int step) noexcept;
/// Elements [lo, hi) of a reduction view at `base`, as a piece to send or receive.
piece elems(const red_view& v, const void* base, count_t lo, count_t hi) noexcept;
/// Binomial-tree broadcast of `data` from member `root` of a.c (messages tagged with `step`).
void binomial_bcast(const args& a, int root, const piece& data, int step) noexcept;
/// Reduce_scatter(_block), after the reduction: member 0 holds the reduced vector in acc (a
/// scratch array of a.red) and sends each member its block (a's counts), tagged `step`.
void scatter_blocks(const args& a, const void* acc, int step) noexcept;

/// The largest power of two <= n (n >= 1).
inline int pow2_floor(int n) noexcept {
    int p = 1;
    while (p * 2 <= n) {
        p *= 2;
    }
    return p;
}
/// Reductions on a size that is not a power of two fold it onto p2 = pow2_floor(a.size)
/// members: among the first 2 * rem ranks (rem = a.size - p2) each even one sends its acc to the
/// next odd one, which computes acc = x_even op acc (step 0). Returns the caller's rank among
/// the p2 (rank / 2 or rank - rem), or -1 when it is folded out. tmp: a scratch of a.red.
int fold_in(const args& a, int p2, void* acc, void* tmp) noexcept;
/// The inverse: the odd ranks among the first 2 * rem send their acc to the even ones (step 100).
void fold_out(const args& a, int p2, void* acc) noexcept;
/// The rank of member `newrank` of the folded communicator (rem = a.size - p2).
inline int unfolded(int newrank, int rem) noexcept { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }
/// The start of a folded reduction: acc (the caller's input, then its partial result) and tmp,
/// scratch arrays of a.red, and the fold (fold_in) onto p2 members, me being the caller's rank
/// among them (-1: folded out).
struct folded {
    scratch acc;
    scratch tmp;
    int p2 = 1;
    int rem = 0;
    int me = -1;
    /// Allocates, copies the input and folds; false when out of memory.
    bool start(const args& a) noexcept;
};

/// The packed bytes of (buf, count, type): the buffer itself when the type is contiguous, else
/// a scratch copy that pack() fills from the buffer and unpack() writes back. Lets algorithms cut
/// a message at byte boundaries that are the same on every member whatever its datatype (the
/// type signatures match, the layouts need not).
class packed_buf {
public:
    /// False when out of memory.
    bool open(void* buf, count_t count, const datatype* t) noexcept;
    char* data() const noexcept { return bytes_; }
    std::size_t size() const noexcept { return n_; }
    void pack() noexcept;    ///< buffer -> bytes (nothing to do in place)
    void unpack() noexcept;  ///< bytes -> buffer (nothing to do in place)

private:
    void* buf_ = nullptr;
    count_t count_ = 0;
    const datatype* t_ = nullptr;
    char* bytes_ = nullptr;
    std::size_t n_ = 0;
    scratch mem_;
};
/// Bytes [lo, hi) of a byte array, as a piece.
inline piece bytes(const void* base, std::size_t lo, std::size_t hi) noexcept {
    return {at(base, static_cast<aint>(lo)), static_cast<count_t>(hi - lo), &byte_type()};
}
/// Bytes per segment of the pipelined algorithms (MPC_COLL_SEGMENT_SIZE, at least 1).
std::size_t segment_size() noexcept;

/// The members a call exchanges data with (a.size; the remote group's size on an
/// intercommunicator), and whether peer i is the caller itself.
inline int peers(const args& a) noexcept { return a.c->is_inter ? a.c->peer_count(*a.self) : a.size; }
inline bool is_me(const args& a, int i) noexcept { return !a.c->is_inter && i == a.rank; }

/// Posts every request of a linear algorithm at once and waits for all.
class request_set {
public:
    explicit request_set(int n) : r_(new (std::nothrow) request[static_cast<std::size_t>(n) * 2]) {}
    bool ok() const noexcept { return r_ != nullptr; }
    request* next() noexcept { return &r_[used_++]; }
    void wait_all() noexcept {
        for (int i = 0; i < used_; ++i) {
            r_[i].wait("collective");
        }
    }

private:
    std::unique_ptr<request[]> r_;
    int used_ = 0;
};

// ---- algorithms -----------------------------------------------------------------------------------
// gather, scatter, allgather_linear and alltoall_linear also run on intercommunicators.

int barrier(args& a) noexcept;  ///< dissemination (Hensgen, Finkel, Manber): ceil(log2 n) rounds
int bcast_binomial(args& a) noexcept;
int bcast_linear(args& a) noexcept;
int gather(args& a) noexcept;   ///< linear, gather and gatherv
int scatter(args& a) noexcept;  ///< linear, scatter and scatterv
int allgather_ring(args& a) noexcept;
int allgather_linear(args& a) noexcept;
int allgather_recursive_doubling(args& a) noexcept;  ///< allgather, 2^k members
int alltoall_pairwise(args& a) noexcept;  ///< n - 1 exchanges, peer me +- step
int alltoall_linear(args& a) noexcept;    ///< every send and receive posted at once
int reduce_binomial(args& a) noexcept;    ///< commutative operations
int reduce_linear(args& a) noexcept;      ///< the root combines in rank order
int allreduce_recursive_doubling(args& a) noexcept;  ///< commutative; any size (folded to 2^k)
int allreduce_ring(args& a) noexcept;     ///< commutative: ring reduce-scatter + ring allgather
int allreduce_reduce_bcast(args& a) noexcept;
int reduce_scatter(args& a) noexcept;     ///< reduce to rank 0, then scatter of the blocks
int scan(args& a) noexcept;               ///< scan and exscan: a chain in rank order

// Long- and short-message algorithms (msg_trees.cpp, msg_bruck.cpp, msg_rabenseifner.cpp).
int bcast_pipeline(args& a) noexcept;           ///< a chain, segment after segment
int bcast_binomial_pipeline(args& a) noexcept;  ///< a binomial tree, segment after segment
int bcast_scatter_allgather(args& a) noexcept;  ///< van de Geijn: binomial scatter + ring allgather
int gather_binomial(args& a) noexcept;          ///< gather only (not gatherv)
int scatter_binomial(args& a) noexcept;         ///< scatter only (not scatterv)
int alltoall_bruck(args& a) noexcept;           ///< alltoall only: ceil(log2 n) packed exchanges
int allgather_bruck(args& a) noexcept;          ///< allgather and allgatherv: ceil(log2 n) steps
int allreduce_rabenseifner(args& a) noexcept;   ///< commutative: halving reduce-scatter + doubling allgather
int reduce_rabenseifner(args& a) noexcept;      ///< commutative: halving reduce-scatter + binomial gather

/// The message-based algorithm the between-process rule gives for the call (msg_rule.cpp,
/// docs/collectives.md), by collective, communicator size and message size; the same on every
/// member. `name` receives its name.
algo_fn choose(const args& a, const char** name) noexcept;
/// Runs the algorithm choose() gives (MPC_COLL_<NAME>=msg).
int by_rule(args& a) noexcept;

}  // namespace mpc::mpi::coll::msg
