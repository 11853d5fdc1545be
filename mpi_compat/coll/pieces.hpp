/// \file
/// Where the blocks of the gather, scatter and all-to-all forms lie in a member's buffers
/// (shared by the shm and msg algorithms; inline, header only).
#pragma once

#include "mpi_compat/coll/coll.hpp"
#include "mpi_compat/datatype/handles.hpp"

namespace mpc::mpi::coll {

/// What member `from` sends to member `to` in an all-to-all (its layout).
struct piece {
    const void* buf;
    count_t count;
    const datatype* type;
};

inline const datatype* type_of(MPI_Datatype h) noexcept { return datatype_from_handle(h); }

inline piece send_piece(const args& m, int to) noexcept {
    const void* base = m.in_place ? m.rbuf : m.sbuf;
    switch (m.k) {
        case kind::alltoall: {
            const datatype* t = m.in_place ? m.rtype : m.stype;
            count_t n = m.in_place ? m.rcount : m.scount;
            return {at(base, to * n * t->extent()), n, t};
        }
        case kind::alltoallv: {
            const datatype* t = m.in_place ? m.rtype : m.stype;
            const int* cnt = m.in_place ? m.rcounts : m.scounts;
            const int* dsp = m.in_place ? m.rdispls : m.sdispls;
            return {at(base, dsp[to] * t->extent()), cnt[to], t};
        }
        default: {  // alltoallw: byte displacements, a type per peer
            const MPI_Datatype* ts = m.in_place ? m.rtypes : m.stypes;
            const datatype* const* tp = m.in_place ? m.rtype_ptrs : m.stype_ptrs;
            const int* cnt = m.in_place ? m.rcounts : m.scounts;
            const int* dsp = m.in_place ? m.rdispls : m.sdispls;
            return {at(base, dsp[to]), cnt[to], tp != nullptr ? tp[to] : type_of(ts[to])};
        }
    }
}

inline piece recv_piece(const args& m, int from) noexcept {
    switch (m.k) {
        case kind::alltoall: return {at(m.rbuf, from * m.rcount * m.rtype->extent()), m.rcount, m.rtype};
        case kind::alltoallv: return {at(m.rbuf, m.rdispls[from] * m.rtype->extent()), m.rcounts[from], m.rtype};
        default:
            return {at(m.rbuf, m.rdispls[from]), m.rcounts[from],
                    m.rtype_ptrs != nullptr ? m.rtype_ptrs[from] : type_of(m.rtypes[from])};
    }
}

/// Gather/allgather: where member i's block goes in m's receive buffer.
inline piece gathered_block(const args& m, int i) noexcept {
    if (m.k == kind::gatherv || m.k == kind::allgatherv) {
        return {at(m.rbuf, m.rdispls[i] * m.rtype->extent()), m.rcounts[i], m.rtype};
    }
    return {at(m.rbuf, i * m.rcount * m.rtype->extent()), m.rcount, m.rtype};
}

/// Gather/allgather: what member m contributes (its send buffer, or its block in place).
inline piece contribution(const args& m) noexcept {
    if (m.in_place) {
        return gathered_block(m, m.rank);
    }
    return {m.sbuf, m.scount, m.stype};
}

/// Scatter: root's block for member i.
inline piece scattered_block(const args& root, int i) noexcept {
    if (root.k == kind::scatterv) {
        return {at(root.sbuf, root.sdispls[i] * root.stype->extent()), root.scounts[i], root.stype};
    }
    return {at(root.sbuf, i * root.scount * root.stype->extent()), root.scount, root.stype};
}

inline void copy_piece(const piece& from, const piece& to) noexcept {
    if (from.type != nullptr && to.type != nullptr) {
        copy_typed(from.buf, from.count, *from.type, const_cast<void*>(to.buf), to.count, *to.type);
    }
}


/// MPI_BYTE, for packed data.
inline const datatype& byte_type() noexcept { return *predefined(MPI_BYTE & 0xffffff); }

/// The base of member m's reduction input (its send buffer, or its receive buffer in place)
/// and of its result, as the red_view sees them.
inline const void* input_base(const args& m) noexcept {
    return at(m.in_place ? static_cast<const void*>(m.rbuf) : m.sbuf, m.red.buf_off);
}
inline void* output_base(const args& m) noexcept { return at(m.rbuf, m.red.buf_off); }

/// An all-to-all in place sends from a copy of its receive buffer: *out is `a` with rbuf
/// pointing at that copy (in *saved); a itself when not in place. False when out of memory.
bool save_in_place(const args& a, args* out, scratch* saved) noexcept;

/// Packed bytes of count elements of t (0 for a null type).
inline std::size_t packed_bytes(count_t count, const datatype* t) noexcept {
    return t == nullptr ? 0 : static_cast<std::size_t>(count * t->size());
}

}  // namespace mpc::mpi::coll
