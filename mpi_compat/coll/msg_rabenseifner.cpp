/// \file
/// Rabenseifner's reductions for long vectors, commutative operations only (Rabenseifner,
/// "Optimization of collective reduction operations", ICCS 2004; Thakur, Rabenseifner, Gropp,
/// "Optimization of collective communication operations in MPICH", IJHPCA 19(1), 2005).
///
/// A size that is not a power of two is first folded onto p2 members (fold_in, as in recursive
/// doubling). The vector is cut into p2 chunks (chunk c: elements [n c / p2, n (c + 1) / p2)).
/// Reduce-scatter by recursive halving: at distance m = p2/2, p2/4, ..., 1 a member keeps the
/// half of its current chunk range on its side of bit m, sends the other half to member ^ m and
/// reduces what it receives; member j ends with chunk j fully reduced. Then allreduce gathers
/// the chunks back by recursive doubling (m = 1, 2, ...), reduce by a binomial gather to the root.
///
/// Association: x_2i op x_2i+1 for the folded pairs, then at each halving step (partner's
/// partial) op (own partial); fixed by the communicator's size, so results are reproducible.
#include "mpi_compat/coll/msg.hpp"

namespace mpc::mpi::coll::msg {
namespace {

/// Element offset of chunk c.
count_t chunk_lo(const red_view& v, int p2, int c) noexcept { return v.n * c / p2; }

/// Recursive halving among the p2 folded members (`me` is the caller's folded rank): acc ends
/// holding chunk `me` reduced over every member. Steps 1 ... log2(p2).
void halving(const args& a, int p2, int me, void* acc, void* tmp) noexcept {
    const red_view& v = a.red;
    const int rem = a.size - p2;
    int lo = 0;
    int hi = p2;
    int step = 1;
    for (int m = p2 / 2; m > 0; m >>= 1, ++step) {
        int peer = unfolded(me ^ m, rem);
        int mid = lo + m;
        bool upper = (me & m) != 0;
        int keep_lo = upper ? mid : lo;
        int keep_hi = upper ? hi : mid;
        int give_lo = upper ? lo : mid;
        int give_hi = upper ? mid : hi;
        count_t k0 = chunk_lo(v, p2, keep_lo);
        count_t k1 = chunk_lo(v, p2, keep_hi);
        sendrecv(a, peer, elems(v, acc, chunk_lo(v, p2, give_lo), chunk_lo(v, p2, give_hi)), peer,
                 elems(v, tmp, k0, k1), step);
        reduce_range(v, tmp, acc, k0, k1);
        lo = keep_lo;
        hi = keep_hi;
    }
}

}  // namespace

int allreduce_rabenseifner(args& a) noexcept {
    const red_view& v = a.red;
    folded f;
    if (!f.start(a)) {
        return MPI_ERR_NO_MEM;
    }
    const int p2 = f.p2;
    void* acc = f.acc.base();
    if (f.me >= 0) {
        halving(a, p2, f.me, acc, f.tmp.base());
        int step = 64;
        for (int m = 1; m < p2; m <<= 1, ++step) {  // holds chunks [me & ~(m-1), + m)
            int peer = unfolded(f.me ^ m, f.rem);
            int mine = f.me & ~(m - 1);
            int theirs = (f.me ^ m) & ~(m - 1);
            sendrecv(a, peer, elems(v, acc, chunk_lo(v, p2, mine), chunk_lo(v, p2, mine + m)), peer,
                     elems(v, acc, chunk_lo(v, p2, theirs), chunk_lo(v, p2, theirs + m)), step);
        }
    }
    fold_out(a, p2, acc);
    copy_range(v, acc, output_base(a), 0, v.n);
    return MPI_SUCCESS;
}

/// The gather: folded rank `me` relative to the root's (me ^ newroot) sends the chunks it holds
/// to its binomial parent and leaves; a root folded out (an even rank below 2 rem) gets the
/// whole result from its odd partner at the end.
int reduce_rabenseifner(args& a) noexcept {
    const red_view& v = a.red;
    folded f;
    if (!f.start(a)) {
        return MPI_ERR_NO_MEM;
    }
    const int p2 = f.p2;
    const int me = f.me;
    void* acc = f.acc.base();
    if (me >= 0) {
        halving(a, p2, me, acc, f.tmp.base());
        const int newroot = a.root < 2 * f.rem ? a.root / 2 : a.root - f.rem;
        const int rel = me ^ newroot;
        int step = 64;
        for (int m = 1; m < p2; m <<= 1, ++step) {  // holds chunks [me & ~(m-1), + m)
            int peer = unfolded(me ^ m, f.rem);
            if ((rel & m) != 0) {
                int mine = me & ~(m - 1);
                send_piece_to(a, peer, step, elems(v, acc, chunk_lo(v, p2, mine), chunk_lo(v, p2, mine + m)));
                break;
            }
            int theirs = (me ^ m) & ~(m - 1);
            recv_piece_from(a, peer, step, elems(v, acc, chunk_lo(v, p2, theirs), chunk_lo(v, p2, theirs + m)));
        }
    }
    if (a.root < 2 * f.rem && a.root % 2 == 0) {
        if (a.rank == a.root + 1) {
            send_piece_to(a, a.root, 100, elems(v, acc, 0, v.n));
        } else if (a.rank == a.root) {
            recv_piece_from(a, a.root + 1, 100, elems(v, acc, 0, v.n));
        }
    }
    if (a.rank == a.root) {
        copy_range(v, acc, output_base(a), 0, v.n);
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::msg
