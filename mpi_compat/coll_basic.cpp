/// \file
/// Basic collective algorithms over the internal point-to-point (internal.hpp): correct for
/// every communicator size, MPI_IN_PLACE included, but not tuned. The collectives issue adds the
/// tuned, hierarchical and non-blocking versions and selects among them; these remain the
/// fallback. Buffers are contiguous runs of predefined elements for now (type_size()).
///
/// Reductions combine in rank order for non-commutative user operations (MPI 3.1 5.9.1).

#include <cstring>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"
#include "mpi_compat/internal.hpp"
#include "mpi_compat/op.hpp"

using namespace mpc::mpi;

namespace {

enum coll_tag : int { tag_reduce = 16, tag_gather, tag_scatter, tag_alltoall, tag_scan };

struct ctx {
    task* self = nullptr;
    comm* c = nullptr;
    int rank = 0;
    int size = 0;
    int err = MPI_SUCCESS;
};

ctx enter(const char* call, MPI_Comm h) noexcept {
    comm_call base = enter_comm(call, h);
    ctx k;
    k.self = base.self;
    k.c = base.c;
    k.err = base.err;
    if (k.err != MPI_SUCCESS) {
        return k;
    }
    if (k.c->is_inter) {
        k.err = raise(h, MPI_ERR_COMM, call, "collectives on intercommunicators are not supported yet");
    } else {
        k.rank = k.c->rank_of(*k.self);
        k.size = k.c->size();
    }
    return k;
}

/// Checks a (buffer, count, type) triple; returns its size in bytes through *bytes.
int check_buf(MPI_Comm h, const char* call, const void* buf, int count, MPI_Datatype type,
              std::size_t* bytes) noexcept {
    if (count < 0) {
        return raise(h, MPI_ERR_COUNT, call, "negative count %d", count);
    }
    std::size_t esize = type_size(type);
    if (esize == 0) {
        return raise(h, MPI_ERR_TYPE, call,
                     "datatype %#x is invalid, not committed, or a derived type with holes (not supported by the "
                     "basic collectives yet)",
                     type);
    }
    if (buf == nullptr && count > 0) {
        return raise(h, MPI_ERR_BUFFER, call, "null buffer with count %d", count);
    }
    *bytes = esize * static_cast<std::size_t>(count);
    return MPI_SUCCESS;
}

int check_root(const ctx& k, MPI_Comm h, const char* call, int root) noexcept {
    if (root < 0 || root >= k.size) {
        return raise(h, MPI_ERR_ROOT, call, "invalid root %d (the communicator has %d ranks)", root, k.size);
    }
    return MPI_SUCCESS;
}

int check_op(MPI_Comm h, const char* call, MPI_Op op, MPI_Datatype type) noexcept {
    if (int err = op_check(op, type); err != MPI_SUCCESS) {
        return raise(h, err, call, "operation %#x is not defined on datatype %#x", op, type);
    }
    return MPI_SUCCESS;
}

char* at(void* base, std::size_t off) noexcept { return static_cast<char*>(base) + off; }
const char* at(const void* base, std::size_t off) noexcept { return static_cast<const char*>(base) + off; }

/// Reduces `count` elements of everyone's `data` into rank `root`'s `data` (others' data is
/// clobbered). Commutative ops: binomial tree; others: linear in rank order at the root.
void reduce_into(const ctx& k, void* data, int count, MPI_Datatype type, MPI_Op op, int root) {
    std::size_t bytes = type_size(type) * static_cast<std::size_t>(count);
    std::vector<char> tmp(bytes);
    int n = k.size;
    if (!op_commutes(op)) {
        if (k.rank != root) {
            coll_send(*k.self, *k.c, root, tag_reduce, data, bytes);
            return;
        }
        // result = d0 op d1 op ... op d(n-1), evaluated right to left: acc = d(n-1); acc = di op acc
        std::vector<char> acc(bytes);
        for (int r = n - 1; r >= 0; --r) {
            void* src = data;
            if (r != root) {
                coll_recv(*k.self, *k.c, r, tag_reduce, tmp.data(), bytes);
                src = tmp.data();
            }
            if (r == n - 1) {
                std::memcpy(acc.data(), src, bytes);
            } else {
                op_apply(op, src, acc.data(), count, type);
            }
        }
        std::memcpy(data, acc.data(), bytes);
        return;
    }
    int rel = (k.rank - root + n) % n;
    for (int mask = 1; mask < n; mask <<= 1) {
        if ((rel & mask) != 0) {
            coll_send(*k.self, *k.c, (rel - mask + root) % n, tag_reduce, data, bytes);
            return;
        }
        if (rel + mask < n) {
            coll_recv(*k.self, *k.c, (rel + mask + root) % n, tag_reduce, tmp.data(), bytes);
            op_apply(op, tmp.data(), data, count, type);
        }
    }
}

}  // namespace

extern "C" {

int PMPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm h) {
    ctx k = enter("MPI_Reduce", h);
    std::size_t bytes = 0;
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_root(k, h, "MPI_Reduce", root); e != MPI_SUCCESS) {
        return e;
    }
    const void* in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (int e = check_buf(h, "MPI_Reduce", k.rank == root ? rbuf : in, count, type, &bytes); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = check_op(h, "MPI_Reduce", op, type); e != MPI_SUCCESS) {
        return e;
    }
    if (k.rank == root && sbuf == rbuf && count > 0) {
        return raise(h, MPI_ERR_BUFFER, "MPI_Reduce", "send and receive buffers alias (use MPI_IN_PLACE)");
    }
    std::vector<char> work(bytes);
    if (bytes != 0) {
        std::memcpy(work.data(), in, bytes);
    }
    reduce_into(k, work.data(), count, type, op, root);
    if (k.rank == root && bytes != 0) {
        std::memcpy(rbuf, work.data(), bytes);
    }
    return MPI_SUCCESS;
}

int PMPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm h) {
    ctx k = enter("MPI_Allreduce", h);
    std::size_t bytes = 0;
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_buf(h, "MPI_Allreduce", rbuf, count, type, &bytes); e != MPI_SUCCESS) {
        return e;
    }
    if (sbuf == rbuf && count > 0) {
        return raise(h, MPI_ERR_BUFFER, "MPI_Allreduce", "send and receive buffers alias (use MPI_IN_PLACE)");
    }
    if (int e = check_op(h, "MPI_Allreduce", op, type); e != MPI_SUCCESS) {
        return e;
    }
    if (sbuf != MPI_IN_PLACE && bytes != 0) {
        std::memmove(rbuf, sbuf, bytes);
    }
    std::vector<char> work(static_cast<const char*>(rbuf), static_cast<const char*>(rbuf) + bytes);
    reduce_into(k, work.data(), count, type, op, 0);
    if (k.rank == 0 && bytes != 0) {
        std::memcpy(rbuf, work.data(), bytes);
    }
    coll_bcast(*k.self, *k.c, rbuf, bytes, 0);
    return MPI_SUCCESS;
}

int PMPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm h) {
    ctx k = enter("MPI_Gatherv", h);
    std::size_t sbytes = 0;
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_root(k, h, "MPI_Gatherv", root); e != MPI_SUCCESS) {
        return e;
    }
    bool in_place = k.rank == root && sbuf == MPI_IN_PLACE;
    if (!in_place) {
        if (int e = check_buf(h, "MPI_Gatherv", sbuf, scount, stype, &sbytes); e != MPI_SUCCESS) {
            return e;
        }
    }
    if (k.rank != root) {
        coll_send(*k.self, *k.c, root, tag_gather, sbuf, sbytes);
        return MPI_SUCCESS;
    }
    std::size_t esize = type_size(rtype);
    if (esize == 0 || rcounts == nullptr || displs == nullptr) {
        return raise(h, esize == 0 ? MPI_ERR_TYPE : MPI_ERR_ARG, "MPI_Gatherv", "invalid receive arguments");
    }
    for (int r = 0; r < k.size; ++r) {
        if (rcounts[r] < 0) {
            return raise(h, MPI_ERR_COUNT, "MPI_Gatherv", "negative count %d for rank %d", rcounts[r], r);
        }
        std::size_t off = static_cast<std::size_t>(displs[r]) * esize;
        std::size_t len = static_cast<std::size_t>(rcounts[r]) * esize;
        if (r == root) {
            if (!in_place && sbytes != 0) {
                std::memcpy(at(rbuf, off), sbuf, sbytes < len ? sbytes : len);
            }
        } else {
            coll_recv(*k.self, *k.c, r, tag_gather, at(rbuf, off), len);
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm h) {
    ctx k = enter("MPI_Gather", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    std::vector<int> counts(static_cast<std::size_t>(k.size), rcount);
    std::vector<int> displs(static_cast<std::size_t>(k.size));
    for (int r = 0; r < k.size; ++r) {
        displs[static_cast<std::size_t>(r)] = r * rcount;
    }
    if (k.rank == root && rcount < 0) {
        return raise(h, MPI_ERR_COUNT, "MPI_Gather", "negative count %d", rcount);
    }
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, counts.data(), displs.data(), rtype, root, h);
}

int PMPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf,
                  int rcount, MPI_Datatype rtype, int root, MPI_Comm h) {
    ctx k = enter("MPI_Scatterv", h);
    std::size_t rbytes = 0;
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_root(k, h, "MPI_Scatterv", root); e != MPI_SUCCESS) {
        return e;
    }
    bool in_place = k.rank == root && rbuf == MPI_IN_PLACE;
    if (!in_place) {
        if (int e = check_buf(h, "MPI_Scatterv", rbuf, rcount, rtype, &rbytes); e != MPI_SUCCESS) {
            return e;
        }
    }
    if (k.rank != root) {
        coll_recv(*k.self, *k.c, root, tag_scatter, rbuf, rbytes);
        return MPI_SUCCESS;
    }
    std::size_t esize = type_size(stype);
    if (esize == 0 || scounts == nullptr || displs == nullptr) {
        return raise(h, esize == 0 ? MPI_ERR_TYPE : MPI_ERR_ARG, "MPI_Scatterv", "invalid send arguments");
    }
    for (int r = 0; r < k.size; ++r) {
        std::size_t off = static_cast<std::size_t>(displs[r]) * esize;
        std::size_t len = static_cast<std::size_t>(scounts[r]) * esize;
        if (r == root) {
            if (!in_place && len != 0) {
                std::memcpy(rbuf, at(sbuf, off), len < rbytes ? len : rbytes);
            }
        } else {
            coll_send(*k.self, *k.c, r, tag_scatter, at(sbuf, off), len);
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm h) {
    ctx k = enter("MPI_Scatter", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    std::vector<int> counts(static_cast<std::size_t>(k.size), scount);
    std::vector<int> displs(static_cast<std::size_t>(k.size));
    for (int r = 0; r < k.size; ++r) {
        displs[static_cast<std::size_t>(r)] = r * scount;
    }
    return PMPI_Scatterv(sbuf, counts.data(), displs.data(), stype, rbuf, rcount, rtype, root, h);
}

int PMPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm h) {
    ctx k = enter("MPI_Allgatherv", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    std::size_t esize = type_size(rtype);
    if (esize == 0 || rcounts == nullptr || displs == nullptr) {
        return raise(h, esize == 0 ? MPI_ERR_TYPE : MPI_ERR_ARG, "MPI_Allgatherv", "invalid receive arguments");
    }
    const void* send = sbuf;
    if (sbuf == MPI_IN_PLACE) {  // my block is already in place in rbuf
        send = k.rank == 0 ? MPI_IN_PLACE : at(rbuf, static_cast<std::size_t>(displs[k.rank]) * esize);
        scount = rcounts[k.rank];
        stype = rtype;
    }
    if (int e = PMPI_Gatherv(send, scount, stype, rbuf, rcounts, displs, rtype, 0, h); e != MPI_SUCCESS) {
        return e;
    }
    // Everyone gets rank 0's assembled buffer: the extent covering every block.
    std::size_t end = 0;
    for (int r = 0; r < k.size; ++r) {
        std::size_t e = (static_cast<std::size_t>(displs[r]) + static_cast<std::size_t>(rcounts[r])) * esize;
        end = e > end ? e : end;
    }
    if (k.rank != 0) {
        std::vector<char> keep(end);  // blocks outside the displacements must not be touched
        coll_bcast(*k.self, *k.c, keep.data(), end, 0);
        for (int r = 0; r < k.size; ++r) {
            std::size_t off = static_cast<std::size_t>(displs[r]) * esize;
            std::memcpy(at(rbuf, off), keep.data() + off, static_cast<std::size_t>(rcounts[r]) * esize);
        }
    } else {
        coll_bcast(*k.self, *k.c, rbuf, end, 0);
    }
    return MPI_SUCCESS;
}

int PMPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm h) {
    ctx k = enter("MPI_Allgather", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    std::size_t rbytes = 0;
    if (int e = check_buf(h, "MPI_Allgather", rbuf, rcount, rtype, &rbytes); e != MPI_SUCCESS) {
        return e;
    }
    std::vector<char> mine(rbytes);
    if (sbuf == MPI_IN_PLACE) {
        std::memcpy(mine.data(), at(rbuf, static_cast<std::size_t>(k.rank) * rbytes), rbytes);
    } else {
        std::size_t sbytes = 0;
        if (int e = check_buf(h, "MPI_Allgather", sbuf, scount, stype, &sbytes); e != MPI_SUCCESS) {
            return e;
        }
        std::memcpy(mine.data(), sbuf, sbytes < rbytes ? sbytes : rbytes);
    }
    coll_allgather(*k.self, *k.c, mine.data(), rbuf, rbytes);
    return MPI_SUCCESS;
}

int PMPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h) {
    ctx k = enter("MPI_Alltoallv", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    std::size_t rsize = type_size(rtype);
    bool in_place = sbuf == MPI_IN_PLACE;
    std::size_t ssize = in_place ? rsize : type_size(stype);
    if (rsize == 0 || ssize == 0) {
        return raise(h, MPI_ERR_TYPE, "MPI_Alltoallv", "invalid datatype");
    }
    if (rcounts == nullptr || rdispls == nullptr || (!in_place && (scounts == nullptr || sdispls == nullptr))) {
        return raise(h, MPI_ERR_ARG, "MPI_Alltoallv", "null count or displacement array");
    }
    std::vector<char> copy;
    if (in_place) {  // send from a copy of the receive buffer
        std::size_t end = 0;
        for (int r = 0; r < k.size; ++r) {
            std::size_t e = (static_cast<std::size_t>(rdispls[r]) + static_cast<std::size_t>(rcounts[r])) * rsize;
            end = e > end ? e : end;
        }
        copy.assign(static_cast<char*>(rbuf), static_cast<char*>(rbuf) + end);
        sbuf = copy.data();
        scounts = rcounts;
        sdispls = rdispls;
    }
    // Pairwise exchange: step i sends to rank+i and receives from rank-i.
    for (int i = 0; i < k.size; ++i) {
        int to = (k.rank + i) % k.size;
        int from = (k.rank - i + k.size) % k.size;
        coll_sendrecv(*k.self, *k.c, to, at(sbuf, static_cast<std::size_t>(sdispls[to]) * ssize),
                      static_cast<std::size_t>(scounts[to]) * ssize, from,
                      at(rbuf, static_cast<std::size_t>(rdispls[from]) * rsize),
                      static_cast<std::size_t>(rcounts[from]) * rsize, tag_alltoall);
    }
    return MPI_SUCCESS;
}

int PMPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm h) {
    ctx k = enter("MPI_Alltoall", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (rcount < 0 || (sbuf != MPI_IN_PLACE && scount < 0)) {
        return raise(h, MPI_ERR_COUNT, "MPI_Alltoall", "negative count");
    }
    std::vector<int> sc(static_cast<std::size_t>(k.size), scount), sd(static_cast<std::size_t>(k.size));
    std::vector<int> rc(static_cast<std::size_t>(k.size), rcount), rd(static_cast<std::size_t>(k.size));
    for (int r = 0; r < k.size; ++r) {
        sd[static_cast<std::size_t>(r)] = r * scount;
        rd[static_cast<std::size_t>(r)] = r * rcount;
    }
    return PMPI_Alltoallv(sbuf, sc.data(), sd.data(), stype, rbuf, rc.data(), rd.data(), rtype, h);
}

int PMPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm h) {
    ctx k = enter("MPI_Reduce_scatter_block", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (rcount < 0) {
        return raise(h, MPI_ERR_COUNT, "MPI_Reduce_scatter_block", "negative count %d", rcount);
    }
    std::size_t esize = type_size(type);
    if (esize == 0) {
        return raise(h, MPI_ERR_TYPE, "MPI_Reduce_scatter_block", "invalid datatype %#x", type);
    }
    int total = rcount * k.size;
    std::vector<char> all(static_cast<std::size_t>(total) * esize);
    const void* in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (int e = PMPI_Reduce(in, all.data(), total, type, op, 0, h); e != MPI_SUCCESS) {
        return e;
    }
    return PMPI_Scatter(all.data(), rcount, type, rbuf, rcount, type, 0, h);
}

int PMPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm h) {
    ctx k = enter("MPI_Reduce_scatter", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (rcounts == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Reduce_scatter", "null counts");
    }
    std::size_t esize = type_size(type);
    if (esize == 0) {
        return raise(h, MPI_ERR_TYPE, "MPI_Reduce_scatter", "invalid datatype %#x", type);
    }
    std::vector<int> displs(static_cast<std::size_t>(k.size));
    int total = 0;
    for (int r = 0; r < k.size; ++r) {
        if (rcounts[r] < 0) {
            return raise(h, MPI_ERR_COUNT, "MPI_Reduce_scatter", "negative count for rank %d", r);
        }
        displs[static_cast<std::size_t>(r)] = total;
        total += rcounts[r];
    }
    std::vector<char> all(static_cast<std::size_t>(total) * esize);
    const void* in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (int e = PMPI_Reduce(in, all.data(), total, type, op, 0, h); e != MPI_SUCCESS) {
        return e;
    }
    return PMPI_Scatterv(all.data(), rcounts, displs.data(), type, rbuf, rcounts[k.rank], type, 0, h);
}

/// Inclusive (exclusive = false) or exclusive prefix reduction, as a chain in rank order.
int scan_common(const char* call, const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm h, bool exclusive) {
    ctx k = enter(call, h);
    std::size_t bytes = 0;
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_buf(h, call, rbuf, count, type, &bytes); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = check_op(h, call, op, type); e != MPI_SUCCESS) {
        return e;
    }
    std::vector<char> mine(bytes);
    if (bytes != 0) {
        std::memcpy(mine.data(), sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes);
    }
    std::vector<char> acc(bytes);  // reduction of ranks 0 .. rank-1
    if (k.rank > 0) {
        coll_recv(*k.self, *k.c, k.rank - 1, tag_scan, acc.data(), bytes);
    }
    std::vector<char> incl(mine);
    if (k.rank > 0) {
        op_apply(op, acc.data(), incl.data(), count, type);  // acc op mine, in rank order
    }
    if (k.rank + 1 < k.size) {
        coll_send(*k.self, *k.c, k.rank + 1, tag_scan, incl.data(), bytes);
    }
    if (bytes != 0) {
        if (!exclusive) {
            std::memcpy(rbuf, incl.data(), bytes);
        } else if (k.rank > 0) {
            std::memcpy(rbuf, acc.data(), bytes);  // rank 0's result is undefined: left as is
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm h) {
    return scan_common("MPI_Scan", sbuf, rbuf, count, type, op, h, false);
}

int PMPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm h) {
    return scan_common("MPI_Exscan", sbuf, rbuf, count, type, op, h, true);
}

int MPI_Reduce(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm) MPC_WEAK(MPI_Reduce);
int MPI_Allreduce(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm) MPC_WEAK(MPI_Allreduce);
int MPI_Gather(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm) MPC_WEAK(MPI_Gather);
int MPI_Gatherv(const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, int, MPI_Comm)
    MPC_WEAK(MPI_Gatherv);
int MPI_Scatter(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm) MPC_WEAK(MPI_Scatter);
int MPI_Scatterv(const void*, const int[], const int[], MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)
    MPC_WEAK(MPI_Scatterv);
int MPI_Allgather(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm) MPC_WEAK(MPI_Allgather);
int MPI_Allgatherv(const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, MPI_Comm)
    MPC_WEAK(MPI_Allgatherv);
int MPI_Alltoall(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm) MPC_WEAK(MPI_Alltoall);
int MPI_Alltoallv(const void*, const int[], const int[], MPI_Datatype, void*, const int[], const int[], MPI_Datatype,
                  MPI_Comm) MPC_WEAK(MPI_Alltoallv);
int MPI_Reduce_scatter_block(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm)
    MPC_WEAK(MPI_Reduce_scatter_block);
int MPI_Reduce_scatter(const void*, void*, const int[], MPI_Datatype, MPI_Op, MPI_Comm) MPC_WEAK(MPI_Reduce_scatter);
int MPI_Scan(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm) MPC_WEAK(MPI_Scan);
int MPI_Exscan(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm) MPC_WEAK(MPI_Exscan);
}
