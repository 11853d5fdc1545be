#include "mpi_compat/coll/msg.hpp"

#include <cstring>

#include "lib/config.hpp"

namespace mpc::mpi::coll::msg {
namespace {

/// Tags of the message-based collectives: above every other internal tag (internal.hpp,
/// group.hpp), 256 steps per call, 2^16 calls before a tag comes back, a space per phase.
int tag_of(const args& a, int step) noexcept {
    return ((2 + a.phase) << 24) + static_cast<int>((a.seq & 0xffffU) << 8) + (step & 0xff);
}

void send(const args& a, int dest, int step, const void* buf, count_t count, const datatype& t) noexcept {
    request r;
    start_send(a, dest, step, buf, count, t, &r);
    r.wait("collective send");
}

void recv(const args& a, int src, int step, void* buf, count_t count, const datatype& t) noexcept {
    request r;
    start_recv(a, src, step, buf, count, t, &r);
    r.wait("collective receive");
}

}  // namespace

void start_send(const args& a, int dest, int step, const void* buf, count_t count, const datatype& t,
                request* r) noexcept {
    r->kind = req_kind::send;
    route_send(*a.self, a.c->world_rank(*a.self, dest), a.c->coll_context(), a.rank, tag_of(a, step),
               typed(buf, count, &t), r, false);
}

void start_recv(const args& a, int src, int step, void* buf, count_t count, const datatype& t, request* r) noexcept {
    r->kind = req_kind::recv;
    r->target = typed(buf, count, &t);
    r->context = a.c->coll_context();
    r->source = src;
    r->tag = tag_of(a, step);
    a.self->engine.post(r);
}

void send_piece_to(const args& a, int dest, int step, const piece& p) noexcept {
    if (p.type != nullptr) {
        send(a, dest, step, p.buf, p.count, *p.type);
    } else {
        send(a, dest, step, nullptr, 0, byte_type());
    }
}
void recv_piece_from(const args& a, int src, int step, const piece& p) noexcept {
    if (p.type != nullptr) {
        recv(a, src, step, const_cast<void*>(p.buf), p.count, *p.type);
    } else {
        recv(a, src, step, nullptr, 0, byte_type());
    }
}

void sendrecv(const args& a, int dest, const piece& out, int src, const piece& in, int step) noexcept {
    request rr;
    request rs;
    const datatype& bt = byte_type();
    start_recv(a, src, step, const_cast<void*>(in.buf), in.type ? in.count : 0, in.type ? *in.type : bt, &rr);
    start_send(a, dest, step, out.buf, out.type ? out.count : 0, out.type ? *out.type : bt, &rs);
    rs.wait("collective exchange");
    rr.wait("collective exchange");
}

piece elems(const red_view& v, const void* base, count_t lo, count_t hi) noexcept {
    if (v.dense) {
        return {at(base, -v.shift + lo * v.stride), static_cast<count_t>(v.bytes(lo, hi)), &byte_type()};
    }
    return {at(base, lo * v.stride), hi - lo, v.dt};
}

bool packed_buf::open(void* buf, count_t count, const datatype* t) noexcept {
    buf_ = buf;
    count_ = count;
    t_ = t;
    n_ = packed_bytes(count, t);
    if (n_ == 0 || t->is_contiguous()) {
        bytes_ = n_ == 0 ? nullptr : at(static_cast<char*>(buf), t->true_lb());
        return true;
    }
    if (!mem_.reset_bytes(n_)) {
        return false;
    }
    bytes_ = static_cast<char*>(mem_.base());
    return true;
}

void packed_buf::pack() noexcept {
    if (bytes_ != nullptr && mem_.base() != nullptr) {
        copy_typed(buf_, count_, *t_, bytes_, static_cast<count_t>(n_), byte_type());
    }
}

void packed_buf::unpack() noexcept {
    if (bytes_ != nullptr && mem_.base() != nullptr) {
        copy_typed(bytes_, static_cast<count_t>(n_), byte_type(), buf_, count_, *t_);
    }
}

std::size_t segment_size() noexcept {
    static const std::size_t seg = [] {
        auto v = config::get_size("MPC_COLL_SEGMENT_SIZE");  // a bad value is reported there
        return v && *v > 0 ? *v : std::size_t{32768};
    }();
    return seg;
}

int barrier(args& a) noexcept {
    const int n = a.size;
    int step = 0;
    for (int dist = 1; dist < n; dist <<= 1, ++step) {
        sendrecv(a, (a.rank + dist) % n, piece{nullptr, 0, nullptr}, (a.rank - dist + n) % n,
                 piece{nullptr, 0, nullptr}, step);
    }
    return MPI_SUCCESS;
}

void binomial_bcast(const args& a, int root, const piece& data, int step) noexcept {
    const int n = a.size;
    int rel = (a.rank - root + n) % n;
    int mask = 1;
    while (mask < n) {
        if ((rel & mask) != 0) {
            recv_piece_from(a, (rel - mask + root) % n, step, data);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < n) {
            send_piece_to(a, (rel + mask + root) % n, step, data);
        }
    }
}

namespace {
/// Every member's elements to `root`, which combines them in rank order into acc (x_{n-1},
/// then x_i op acc for i = n-2 .. 0) using tmp; both scratch arrays are the root's only.
void linear_reduce_to(const args& a, int root, void* acc, void* tmp) noexcept {
    const red_view& v = a.red;
    if (a.rank != root) {
        send_piece_to(a, root, 0, elems(v, input_base(a), 0, v.n));
        return;
    }
    for (int i = a.size - 1; i >= 0; --i) {
        void* into = i == a.size - 1 ? acc : tmp;
        if (i == a.rank) {
            copy_range(v, input_base(a), into, 0, v.n);
        } else {
            recv_piece_from(a, i, 0, elems(v, into, 0, v.n));
        }
        if (i != a.size - 1) {
            reduce_range(v, tmp, acc, 0, v.n);
        }
    }
}
}  // namespace

int bcast_binomial(args& a) noexcept {
    binomial_bcast(a, a.root, piece{a.rbuf, a.rcount, a.rtype}, 0);
    return MPI_SUCCESS;
}

int bcast_linear(args& a) noexcept {
    piece data{a.rbuf, a.rcount, a.rtype};
    if (a.rank != a.root) {
        recv_piece_from(a, a.root, 0, data);
        return MPI_SUCCESS;
    }
    request_set rs(a.size);
    if (!rs.ok()) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < a.size; ++i) {
        if (i != a.rank) {
            start_send(a, i, 0, a.rbuf, a.rcount, *a.rtype, rs.next());
        }
    }
    rs.wait_all();
    return MPI_SUCCESS;
}

int gather(args& a) noexcept {
    if (a.root == MPI_PROC_NULL) {
        return MPI_SUCCESS;  // intercommunicator: the root's group but not the root
    }
    if (!is_root(a)) {
        send_piece_to(a, a.root, 0, contribution(a));
        return MPI_SUCCESS;
    }
    const int n = peers(a);
    request_set rs(n);
    if (!rs.ok()) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; ++i) {
        if (!is_me(a, i)) {
            piece p = gathered_block(a, i);
            start_recv(a, i, 0, const_cast<void*>(p.buf), p.count, *p.type, rs.next());
        }
    }
    if (!a.in_place && !a.c->is_inter) {
        copy_piece(contribution(a), gathered_block(a, a.rank));
    }
    rs.wait_all();
    return MPI_SUCCESS;
}

int scatter(args& a) noexcept {
    if (a.root == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    piece mine{a.rbuf, a.rcount, a.rtype};
    if (!is_root(a)) {
        recv_piece_from(a, a.root, 0, mine);
        return MPI_SUCCESS;
    }
    const int n = peers(a);
    request_set rs(n);
    if (!rs.ok()) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; ++i) {
        if (!is_me(a, i)) {
            piece p = scattered_block(a, i);
            start_send(a, i, 0, p.buf, p.count, *p.type, rs.next());
        }
    }
    if (!a.in_place && !a.c->is_inter) {
        copy_piece(scattered_block(a, a.rank), mine);
    }
    rs.wait_all();
    return MPI_SUCCESS;
}

int allgather_ring(args& a) noexcept {
    const int n = a.size;
    if (!a.in_place) {
        copy_piece(contribution(a), gathered_block(a, a.rank));
    }
    int right = (a.rank + 1) % n;
    int left = (a.rank - 1 + n) % n;
    for (int step = 0; step < n - 1; ++step) {
        int out = (a.rank - step + n) % n;
        int in = (a.rank - step - 1 + n) % n;
        sendrecv(a, right, gathered_block(a, out), left, gathered_block(a, in), step);
    }
    return MPI_SUCCESS;
}

/// Recursive doubling (Thakur, Rabenseifner, Gropp, "Optimization of collective communication
/// operations in MPICH", IJHPCA 2005): at step k a member swaps with member rank ^ 2^k the 2^k
/// blocks it holds, which lie side by side in the receive buffer; log2(n) exchanges instead of
/// the ring's n - 1. Allgather on a power-of-two number of members (coll.cpp's usable check).
int allgather_recursive_doubling(args& a) noexcept {
    const int n = a.size;
    if (!a.in_place) {
        copy_piece(contribution(a), gathered_block(a, a.rank));
    }
    auto blocks = [&](int lo, int count) {
        piece first = gathered_block(a, lo);
        return piece{first.buf, first.count * count, first.type};
    };
    int step = 0;
    for (int mask = 1; mask < n; mask <<= 1, ++step) {
        int peer = a.rank ^ mask;
        sendrecv(a, peer, blocks(a.rank & ~(mask - 1), mask), peer, blocks(peer & ~(mask - 1), mask), step);
    }
    return MPI_SUCCESS;
}

int allgather_linear(args& a) noexcept {
    const int n = peers(a);
    request_set rs(n);
    if (!rs.ok()) {
        return MPI_ERR_NO_MEM;
    }
    piece mine = contribution(a);
    for (int i = 0; i < n; ++i) {
        if (!is_me(a, i)) {
            piece p = gathered_block(a, i);
            start_recv(a, i, 0, const_cast<void*>(p.buf), p.count, *p.type, rs.next());
        }
    }
    for (int i = 0; i < n; ++i) {
        if (!is_me(a, i)) {
            start_send(a, i, 0, mine.buf, mine.count, *mine.type, rs.next());
        }
    }
    if (!a.in_place && !a.c->is_inter) {
        copy_piece(mine, gathered_block(a, a.rank));
    }
    rs.wait_all();
    return MPI_SUCCESS;
}

int alltoall_pairwise(args& a) noexcept {
    args src;
    scratch saved;
    if (!save_in_place(a, &src, &saved)) {
        return MPI_ERR_NO_MEM;
    }
    const int n = a.size;
    copy_piece(send_piece(src, a.rank), recv_piece(a, a.rank));
    for (int step = 1; step < n; ++step) {
        int dest = (a.rank + step) % n;
        int from = (a.rank - step + n) % n;
        sendrecv(a, dest, send_piece(src, dest), from, recv_piece(a, from), step);
    }
    return MPI_SUCCESS;
}

int alltoall_linear(args& a) noexcept {
    args src;
    scratch saved;
    if (!save_in_place(a, &src, &saved)) {
        return MPI_ERR_NO_MEM;
    }
    const int n = peers(a);
    request_set rs(n);
    if (!rs.ok()) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; ++i) {
        piece p = recv_piece(a, i);
        if (!is_me(a, i) && p.type != nullptr) {
            start_recv(a, i, 0, const_cast<void*>(p.buf), p.count, *p.type, rs.next());
        }
    }
    for (int i = 0; i < n; ++i) {
        piece p = send_piece(src, i);
        if (!is_me(a, i) && p.type != nullptr) {
            start_send(a, i, 0, p.buf, p.count, *p.type, rs.next());
        }
    }
    if (!a.c->is_inter) {
        copy_piece(send_piece(src, a.rank), recv_piece(a, a.rank));
    }
    rs.wait_all();
    return MPI_SUCCESS;
}

// ---- reductions ------------------------------------------------------------------------------------

int reduce_binomial(args& a) noexcept {
    const red_view& v = a.red;
    const int n = a.size;
    int rel = (a.rank - a.root + n) % n;
    scratch acc(v);
    scratch tmp(v);
    if (!acc.ok() || !tmp.ok()) {
        return MPI_ERR_NO_MEM;
    }
    copy_range(v, input_base(a), acc.base(), 0, v.n);
    for (int mask = 1; mask < n; mask <<= 1) {
        if ((rel & mask) != 0) {
            send_piece_to(a, (rel - mask + a.root) % n, 0, elems(v, acc.base(), 0, v.n));
            return MPI_SUCCESS;
        }
        if (rel + mask < n) {
            recv_piece_from(a, (rel + mask + a.root) % n, 0, elems(v, tmp.base(), 0, v.n));
            reduce_range(v, tmp.base(), acc.base(), 0, v.n);  // commutative: any order
        }
    }
    copy_range(v, acc.base(), output_base(a), 0, v.n);
    return MPI_SUCCESS;
}

int reduce_linear(args& a) noexcept {
    const red_view& v = a.red;
    if (a.rank != a.root) {
        linear_reduce_to(a, a.root, nullptr, nullptr);
        return MPI_SUCCESS;
    }
    scratch acc(v);
    scratch tmp(v);
    if (!acc.ok() || !tmp.ok()) {
        return MPI_ERR_NO_MEM;
    }
    linear_reduce_to(a, a.root, acc.base(), tmp.base());
    copy_range(v, acc.base(), output_base(a), 0, v.n);
    return MPI_SUCCESS;
}

int fold_in(const args& a, int p2, void* acc, void* tmp) noexcept {
    const red_view& v = a.red;
    int rem = a.size - p2;
    if (a.rank >= 2 * rem) {
        return a.rank - rem;
    }
    if (a.rank % 2 == 0) {
        send_piece_to(a, a.rank + 1, 0, elems(v, acc, 0, v.n));
        return -1;
    }
    recv_piece_from(a, a.rank - 1, 0, elems(v, tmp, 0, v.n));
    reduce_range(v, tmp, acc, 0, v.n);
    return a.rank / 2;
}

void fold_out(const args& a, int p2, void* acc) noexcept {
    const red_view& v = a.red;
    if (a.rank >= 2 * (a.size - p2)) {
        return;
    }
    if (a.rank % 2 == 0) {
        recv_piece_from(a, a.rank + 1, 100, elems(v, acc, 0, v.n));
    } else {
        send_piece_to(a, a.rank - 1, 100, elems(v, acc, 0, v.n));
    }
}

bool folded::start(const args& a) noexcept {
    const red_view& v = a.red;
    if (!acc.reset(v) || !tmp.reset(v)) {
        return false;
    }
    copy_range(v, input_base(a), acc.base(), 0, v.n);
    p2 = pow2_floor(a.size);
    rem = a.size - p2;
    me = fold_in(a, p2, acc.base(), tmp.base());
    return true;
}

int allreduce_recursive_doubling(args& a) noexcept {
    const red_view& v = a.red;
    folded f;
    if (!f.start(a)) {
        return MPI_ERR_NO_MEM;
    }
    void* acc = f.acc.base();
    if (f.me >= 0) {
        int step = 1;
        for (int mask = 1; mask < f.p2; mask <<= 1, ++step) {
            int peer = unfolded(f.me ^ mask, f.rem);
            sendrecv(a, peer, elems(v, acc, 0, v.n), peer, elems(v, f.tmp.base(), 0, v.n), step);
            reduce_range(v, f.tmp.base(), acc, 0, v.n);
        }
    }
    fold_out(a, f.p2, acc);
    copy_range(v, acc, output_base(a), 0, v.n);
    return MPI_SUCCESS;
}

int allreduce_ring(args& a) noexcept {
    const red_view& v = a.red;
    const int n = a.size;
    if (v.n < n) {
        return allreduce_recursive_doubling(a);  // fewer elements than members: no chunks
    }
    scratch acc(v);
    scratch tmp(v);
    if (!acc.ok() || !tmp.ok()) {
        return MPI_ERR_NO_MEM;
    }
    copy_range(v, input_base(a), acc.base(), 0, v.n);
    auto lo = [&](int c) { return v.n * c / n; };
    int right = (a.rank + 1) % n;
    int left = (a.rank - 1 + n) % n;
    // Reduce-scatter: after step s, chunk (rank - s - 1) holds s + 2 contributions.
    for (int s = 0; s < n - 1; ++s) {
        int out = (a.rank - s + n) % n;
        int in = (a.rank - s - 1 + n) % n;
        sendrecv(a, right, elems(v, acc.base(), lo(out), lo(out + 1)), left,
                 elems(v, tmp.base(), lo(in), lo(in + 1)), s);
        reduce_range(v, tmp.base(), acc.base(), lo(in), lo(in + 1));
    }
    // Allgather: chunk (rank + 1) is complete here; pass the complete chunks around.
    for (int s = 0; s < n - 1; ++s) {
        int out = (a.rank + 1 - s + n) % n;
        int in = (a.rank - s + n) % n;
        sendrecv(a, right, elems(v, acc.base(), lo(out), lo(out + 1)), left,
                 elems(v, acc.base(), lo(in), lo(in + 1)), 128 + s);
    }
    copy_range(v, acc.base(), output_base(a), 0, v.n);
    return MPI_SUCCESS;
}

int allreduce_reduce_bcast(args& a) noexcept {
    args r = a;
    r.root = 0;
    if (int err = reduce_linear(r); err != MPI_SUCCESS) {
        return err;
    }
    binomial_bcast(a, 0, elems(a.red, output_base(a), 0, a.red.n), 1);  // the result, from rank 0
    return MPI_SUCCESS;
}

void scatter_blocks(const args& a, const void* acc, int step) noexcept {
    const red_view& v = a.red;
    const int n = a.size;
    // Element offsets of the blocks in the view (a block of c user elements is c * per).
    auto block = [&](int i) { return a.k == kind::reduce_scatter_block ? a.rcount : static_cast<count_t>(a.rcounts[i]); };
    count_t total = 0;
    for (int i = 0; i < n; ++i) {
        total += block(i);
    }
    count_t per = total > 0 ? v.n / total : 0;
    if (a.rank != 0) {
        recv_piece_from(a, 0, step, elems(v, output_base(a), 0, block(a.rank) * per));
        return;
    }
    count_t off = block(0) * per;
    for (int i = 1; i < n; ++i) {
        count_t len = block(i) * per;
        send_piece_to(a, i, step, elems(v, acc, off, off + len));
        off += len;
    }
    copy_range(v, acc, output_base(a), 0, block(0) * per);
}

int reduce_scatter(args& a) noexcept {
    const red_view& v = a.red;
    if (a.rank != 0) {
        linear_reduce_to(a, 0, nullptr, nullptr);
        scatter_blocks(a, nullptr, 1);
        return MPI_SUCCESS;
    }
    scratch acc(v);
    scratch tmp(v);
    if (!acc.ok() || !tmp.ok()) {
        return MPI_ERR_NO_MEM;
    }
    linear_reduce_to(a, 0, acc.base(), tmp.base());
    scatter_blocks(a, acc.base(), 1);
    return MPI_SUCCESS;
}

int scan(args& a) noexcept {
    const red_view& v = a.red;
    scratch prefix(v);  // x_0 op ... op x_{rank-1}
    scratch acc(v);
    if (!prefix.ok() || !acc.ok()) {
        return MPI_ERR_NO_MEM;
    }
    copy_range(v, input_base(a), acc.base(), 0, v.n);
    if (a.rank > 0) {
        recv_piece_from(a, a.rank - 1, 0, elems(v, prefix.base(), 0, v.n));
        reduce_range(v, prefix.base(), acc.base(), 0, v.n);  // acc = prefix op x_rank
    }
    if (a.rank + 1 < a.size) {
        send_piece_to(a, a.rank + 1, 0, elems(v, acc.base(), 0, v.n));
    }
    if (a.k == kind::scan) {
        copy_range(v, acc.base(), output_base(a), 0, v.n);
    } else if (a.rank > 0) {
        copy_range(v, prefix.base(), output_base(a), 0, v.n);
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::msg
