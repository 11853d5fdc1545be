/// \file
/// Bruck's algorithms for short blocks: all-to-all and allgather(v) in ceil(log2 n) steps on any
/// number of members (Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all
/// communications in multiport message-passing systems", IEEE TPDS 8(11), 1997). Blocks travel
/// packed (byte offsets are the same on every member whatever its datatypes), in a buffer
/// rotated so that position i holds the block of, or for, member rank + i.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "mpi_compat/coll/msg.hpp"

namespace mpc::mpi::coll::msg {

/// Position i starts with the block for member rank + i. At the step of distance k, the blocks
/// whose position has bit k set go to rank + k (packed together), the same positions are filled
/// from rank - k: a block at position i moves by i in all and reaches its destination, where it
/// sits at position (destination - source).
int alltoall_bruck(args& a) noexcept {
    const int p = a.size;
    const piece first = send_piece(a, 0);
    const std::size_t b = packed_bytes(first.count, first.type);  // every block, every member
    if (b == 0) {
        return MPI_SUCCESS;
    }
    const auto pn = static_cast<std::size_t>(p);
    const std::size_t half = (pn + 1) / 2;  // blocks moved per step, at most
    scratch tmp;
    scratch out;
    scratch in;
    if (!tmp.reset_bytes(pn * b) || !out.reset_bytes(half * b) || !in.reset_bytes(half * b)) {
        return MPI_ERR_NO_MEM;
    }
    auto* t = static_cast<char*>(tmp.base());
    auto* o = static_cast<char*>(out.base());
    auto* r = static_cast<char*>(in.base());
    for (int i = 0; i < p; ++i) {  // all read before anything is written: MPI_IN_PLACE is fine
        copy_piece(send_piece(a, (a.rank + i) % p), bytes(t, static_cast<std::size_t>(i) * b, static_cast<std::size_t>(i + 1) * b));
    }
    int step = 0;
    for (int k = 1; k < p; k <<= 1, ++step) {
        std::size_t cnt = 0;
        for (int i = k; i < p; ++i) {
            if ((i & k) != 0) {
                std::memcpy(o + cnt++ * b, t + static_cast<std::size_t>(i) * b, b);
            }
        }
        sendrecv(a, (a.rank + k) % p, bytes(o, 0, cnt * b), (a.rank - k + p) % p, bytes(r, 0, cnt * b), step);
        cnt = 0;
        for (int i = k; i < p; ++i) {
            if ((i & k) != 0) {
                std::memcpy(t + static_cast<std::size_t>(i) * b, r + cnt++ * b, b);
            }
        }
    }
    for (int j = 0; j < p; ++j) {
        auto pos = static_cast<std::size_t>((a.rank - j + p) % p);
        copy_piece(bytes(t, pos * b, (pos + 1) * b), recv_piece(a, j));
    }
    return MPI_SUCCESS;
}

/// Position i ends with the block of member rank + i. Before the step of distance k a member
/// holds positions [0, k); it sends the first min(k, n - k) of them to rank - k and receives
/// the same number from rank + k at positions [k, ...). Blocks may differ in size (allgatherv):
/// offsets are prefix sums over the rotated order.
int allgather_bruck(args& a) noexcept {
    const int p = a.size;
    std::unique_ptr<std::size_t[]> off(new (std::nothrow) std::size_t[static_cast<std::size_t>(p) + 1]);
    if (!off) {
        return MPI_ERR_NO_MEM;
    }
    off[0] = 0;
    for (int i = 0; i < p; ++i) {
        piece blk = gathered_block(a, (a.rank + i) % p);
        off[i + 1] = off[i] + packed_bytes(blk.count, a.rtype);
    }
    if (off[p] == 0) {
        return MPI_SUCCESS;
    }
    scratch tmp;
    if (!tmp.reset_bytes(off[p])) {
        return MPI_ERR_NO_MEM;
    }
    const piece mine = contribution(a);
    copy_piece(mine, bytes(tmp.base(), 0, off[1]));
    int step = 0;
    for (int k = 1; k < p; k <<= 1, ++step) {
        int cnt = std::min(k, p - k);
        sendrecv(a, (a.rank - k + p) % p, bytes(tmp.base(), 0, off[cnt]), (a.rank + k) % p,
                 bytes(tmp.base(), off[k], off[k + cnt]), step);
    }
    for (int i = 1; i < p; ++i) {
        copy_piece(bytes(tmp.base(), off[i], off[i + 1]), gathered_block(a, (a.rank + i) % p));
    }
    if (!a.in_place) {
        copy_piece(mine, gathered_block(a, a.rank));
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::msg
