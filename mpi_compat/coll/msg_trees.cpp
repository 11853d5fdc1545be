/// \file
/// Message-based trees for long messages and many members: the pipelined chain, the segmented
/// binomial tree and the van de Geijn broadcast, binomial gather and scatter (docs/collectives.md, "Between processes").
///
/// The broadcasts cut the message at packed byte boundaries (packed_buf): members may describe
/// the same bytes with different datatypes (matching signatures), so element boundaries differ
/// from member to member while byte offsets do not. A contiguous buffer is used in place; any
/// other is packed once at the root and unpacked once at the others. Gather and scatter carry
/// whole subtrees' blocks, packed in relative rank order.
#include <algorithm>
#include <optional>

#include "mpi_compat/coll/msg.hpp"

namespace mpc::mpi::coll::msg {
namespace {

/// The lowest set bit of rel > 0: the distance to its binomial parent (rel - lowbit).
int lowbit(int rel) noexcept { return rel & -rel; }

/// The first power of two >= n.
int pow2_ceil(int n) noexcept {
    int p = 1;
    while (p < n) {
        p <<= 1;
    }
    return p;
}

constexpr int max_children = 32;  ///< of a binomial tree over at most 2^31 members

/// A broadcast down a tree (`parent`: -1 at the root; `children` in sending order), the message
/// cut in segments of MPC_COLL_SEGMENT_SIZE packed bytes: a member forwards segment k to each
/// child while segment k + 1 arrives (one receive posted ahead, one send in flight per child).
/// Every segment between a pair carries the same tag: messages between two members do not
/// overtake each other, so segment k matches the k-th receive however many segments there are.
int pipelined_tree(args& a, int parent, const int* children, int nchildren) noexcept {
    packed_buf d;
    if (!d.open(a.rbuf, a.rcount, a.rtype)) {
        return MPI_ERR_NO_MEM;
    }
    const std::size_t n = d.size();  // the same on every member (signatures match)
    if (n == 0) {
        return MPI_SUCCESS;
    }
    const std::size_t seg = segment_size();
    const std::size_t nseg = (n + seg - 1) / seg;
    auto segment = [&](std::size_t k) { return bytes(d.data(), k * seg, std::min(n, (k + 1) * seg)); };
    std::optional<request> rr;
    std::optional<request> rs[max_children];
    auto post_recv = [&](std::size_t k) {
        piece s = segment(k);
        rr.emplace();
        start_recv(a, parent, 0, const_cast<void*>(s.buf), s.count, *s.type, &*rr);
    };
    if (parent >= 0) {
        post_recv(0);
    } else {
        d.pack();
    }
    for (std::size_t k = 0; k < nseg; ++k) {
        if (parent >= 0) {
            rr->wait("collective receive");
            if (k + 1 < nseg) {
                post_recv(k + 1);
            }
        }
        piece s = segment(k);
        for (int c = 0; c < nchildren; ++c) {
            if (rs[c]) {
                rs[c]->wait("collective send");
            }
            rs[c].emplace();
            start_send(a, children[c], 0, s.buf, s.count, *s.type, &*rs[c]);
        }
    }
    for (int c = 0; c < nchildren; ++c) {
        if (rs[c]) {
            rs[c]->wait("collective send");
        }
    }
    if (parent >= 0) {
        d.unpack();
    }
    return MPI_SUCCESS;
}

}  // namespace

/// A chain root -> root + 1 -> ... -> root - 1, segment after segment.
int bcast_pipeline(args& a) noexcept {
    const int p = a.size;
    const int rel = (a.rank - a.root + p) % p;
    const int next = (a.rank + 1) % p;
    return pipelined_tree(a, rel != 0 ? (a.rank - 1 + p) % p : -1, &next, rel != p - 1 ? 1 : 0);
}

/// The segmented binomial tree (Open MPI's "segmented binomial", MPICH's pipelined trees for
/// medium messages): the binomial tree of bcast_binomial with the message in segments flowing
/// down it one after the other. Depth log2(n) segments instead of the chain's n, and no member
/// sends more than log2(n) copies of the message.
int bcast_binomial_pipeline(args& a) noexcept {
    const int p = a.size;
    const int rel = (a.rank - a.root + p) % p;
    auto abs_rank = [&](int r) { return (r + a.root) % p; };
    // Parent: rel minus its lowest set bit; children: rel + m for the powers of two m below
    // that bit (below the first power of two >= p at the root), largest subtree first.
    const int top = rel == 0 ? pow2_ceil(p) : lowbit(rel);
    int children[max_children];
    int nchildren = 0;
    for (int m = top >> 1; m >= 1; m >>= 1) {
        if (rel + m < p) {
            children[nchildren++] = abs_rank(rel + m);
        }
    }
    return pipelined_tree(a, rel != 0 ? abs_rank(rel - lowbit(rel)) : -1, children, nchildren);
}

/// Van de Geijn's broadcast (Barnett, Gupta, Payne, Shuler, van de Geijn, Watts, "Interprocessor
/// collective communication library (InterCom)", SHPCC 1994; MPICH's scatter_ring_allgather):
/// the message in n chunks of ceil(bytes / n) bytes (the last ones shorter or empty), chunk i
/// for relative rank i; a binomial scatter gives each member its subtree's chunks, a ring
/// allgather then passes every chunk around. About 2 x bytes per member instead of log2(n) x.
int bcast_scatter_allgather(args& a) noexcept {
    packed_buf d;
    if (!d.open(a.rbuf, a.rcount, a.rtype)) {
        return MPI_ERR_NO_MEM;
    }
    const std::size_t n = d.size();
    if (n == 0) {
        return MPI_SUCCESS;
    }
    const int p = a.size;
    const int rel = (a.rank - a.root + p) % p;
    const std::size_t c = (n + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p);
    auto chunks = [&](int lo, int hi) {  // relative ranks [lo, hi)
        return bytes(d.data(), std::min(n, static_cast<std::size_t>(lo) * c), std::min(n, static_cast<std::size_t>(hi) * c));
    };
    auto real = [&](int r) { return (r + a.root) % p; };
    int mask = rel == 0 ? pow2_ceil(p) : lowbit(rel);
    if (rel == 0) {
        d.pack();
    } else {
        recv_piece_from(a, real(rel - mask), 0, chunks(rel, std::min(rel + mask, p)));
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < p) {
            send_piece_to(a, real(rel + mask), 0, chunks(rel + mask, std::min(rel + 2 * mask, p)));
        }
    }
    const int right = (a.rank + 1) % p;
    const int left = (a.rank - 1 + p) % p;
    for (int s = 0; s < p - 1; ++s) {  // one tag: every message comes from the left neighbour
        int out = (rel - s + p) % p;
        int in = (rel - s - 1 + p) % p;
        sendrecv(a, right, chunks(out, out + 1), left, chunks(in, in + 1), 1);
    }
    if (rel != 0) {
        d.unpack();
    }
    return MPI_SUCCESS;
}

/// Binomial gather: relative rank r (to the root) collects the blocks of its subtree [r, r +
/// lowbit(r)) packed in order, then sends them to r - lowbit(r) in one message; a leaf sends its
/// block straight from its buffer. log2(n) messages at the root instead of n - 1.
int gather_binomial(args& a) noexcept {
    const int p = a.size;
    const int rel = (a.rank - a.root + p) % p;
    const piece mine = contribution(a);
    const std::size_t b = packed_bytes(mine.count, mine.type);  // the same for every member
    if (b == 0) {
        return MPI_SUCCESS;
    }
    auto real = [&](int r) { return (r + a.root) % p; };
    const int sub = rel == 0 ? p : std::min(lowbit(rel), p - rel);
    if (rel != 0 && sub == 1) {
        send_piece_to(a, real(rel - lowbit(rel)), 0, mine);
        return MPI_SUCCESS;
    }
    scratch buf;
    if (!buf.reset_bytes(static_cast<std::size_t>(sub) * b)) {
        return MPI_ERR_NO_MEM;
    }
    copy_piece(mine, bytes(buf.base(), 0, b));
    for (int mask = 1; mask < p; mask <<= 1) {
        if ((rel & mask) != 0) {
            send_piece_to(a, real(rel - mask), 0, bytes(buf.base(), 0, static_cast<std::size_t>(sub) * b));
            return MPI_SUCCESS;
        }
        if (rel + mask < p) {
            auto lo = static_cast<std::size_t>(mask);
            auto hi = static_cast<std::size_t>(mask + std::min(mask, p - rel - mask));
            recv_piece_from(a, real(rel + mask), 0, bytes(buf.base(), lo * b, hi * b));
        }
    }
    for (int i = 1; i < p; ++i) {
        copy_piece(bytes(buf.base(), static_cast<std::size_t>(i) * b, static_cast<std::size_t>(i + 1) * b),
                   gathered_block(a, real(i)));
    }
    if (!a.in_place) {
        copy_piece(mine, gathered_block(a, a.rank));
    }
    return MPI_SUCCESS;
}

/// Binomial scatter, the reverse of gather_binomial: the root packs the blocks in relative rank
/// order, each member receives its subtree's in one message and passes on its children's.
int scatter_binomial(args& a) noexcept {
    const int p = a.size;
    const int rel = (a.rank - a.root + p) % p;
    const std::size_t b = rel == 0 ? packed_bytes(a.scount, a.stype) : packed_bytes(a.rcount, a.rtype);
    if (b == 0) {
        return MPI_SUCCESS;
    }
    auto real = [&](int r) { return (r + a.root) % p; };
    const piece mine{a.rbuf, a.rcount, a.rtype};
    int mask = rel == 0 ? pow2_ceil(p) : lowbit(rel);
    const int sub = rel == 0 ? p : std::min(mask, p - rel);
    if (rel != 0 && sub == 1) {
        recv_piece_from(a, real(rel - mask), 0, mine);
        return MPI_SUCCESS;
    }
    scratch buf;
    if (!buf.reset_bytes(static_cast<std::size_t>(sub) * b)) {
        return MPI_ERR_NO_MEM;
    }
    if (rel == 0) {
        for (int i = 1; i < p; ++i) {
            copy_piece(scattered_block(a, real(i)),
                       bytes(buf.base(), static_cast<std::size_t>(i) * b, static_cast<std::size_t>(i + 1) * b));
        }
    } else {
        recv_piece_from(a, real(rel - mask), 0, bytes(buf.base(), 0, static_cast<std::size_t>(sub) * b));
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < p) {
            auto lo = static_cast<std::size_t>(mask);
            auto hi = static_cast<std::size_t>(mask + std::min(mask, p - rel - mask));
            send_piece_to(a, real(rel + mask), 0, bytes(buf.base(), lo * b, hi * b));
        }
    }
    if (rel != 0) {
        copy_piece(bytes(buf.base(), 0, b), mine);
    } else if (!a.in_place) {
        copy_piece(scattered_block(a, a.rank), mine);
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::msg
