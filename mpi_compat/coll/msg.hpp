/// \file
/// Message-based collective algorithms: point-to-point on the communicator's collective
/// context, tagged with the call's sequence number (coll.hpp). They carry the collectives
/// between processes (the transport issue); inside a process MPC_COLL_<NAME> selects them.
/// Data moves typed (layout to layout through the matching engine); reductions exchange the
/// elements of their red_view.
#pragma once

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
