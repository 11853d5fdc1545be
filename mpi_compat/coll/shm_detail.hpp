/// \file
/// The slot helpers of shm.cpp that the non-blocking small calls (shm_nb.cpp) share.
#pragma once

#include <cstdint>
#include <cstring>

#include "mpi_compat/coll/pieces.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/match.hpp"
#include "mpi_compat/op.hpp"

namespace mpc::mpi::coll::shm::detail {

/// Wakes every ULT parked on the slot.
void wake(slot& s) noexcept;
/// Whether the slot serves call x now.
bool serves(const slot& s, std::uint64_t x) noexcept;
/// The call's slot, once the call seq - n_slots has left it (may yield).
slot& take_slot(const args& a, const char* what) noexcept;
/// Packs (buf, count, t) into dst; unpacks `bytes` packed bytes from src into (buf, count, t).
void pack_into(void* dst, const void* buf, count_t count, const datatype& t) noexcept;
void unpack_from(const void* src, std::size_t bytes, void* buf, count_t count, const datatype& t) noexcept;
/// Whether a member's reduction input fits its cell (a dense image of the view).
bool view_fits_cell(const red_view& v) noexcept;
/// acc = x0 op (x1 op ... op x(size-1)) over the members' cells (every element).
void reduce_cells(const slot& s, const red_view& v, int size, void* acc_base) noexcept;

// ---- the inline folds of the Allreduce fast paths (flat and one-VP) ---------------------------------

/// Element i of an array of T at p (any alignment).
template <class T>
T load_elem(const void* p, std::size_t i) noexcept {
    T v;
    std::memcpy(&v, static_cast<const unsigned char*>(p) + i * sizeof(T), sizeof(T));
    return v;
}

/// out = x_0 op (x_1 op (... op x_{size-1})), n elements of T, x_r at src(r): for each element
/// acc = x_{size-1}, then acc = x_r op acc for r from size - 2 down to 0, the order of
/// reduce_cells() and of the flat path's reduce_halves(), so the same bits. Element by element,
/// with the op chosen outside the loop: no copy call, no branch per element (8 B: a load per
/// member and one store). out may be one of the inputs (the same base).
template <class T, int Op, class Src>
void fold_typed(int size, std::size_t n, const Src& src, void* out) noexcept {
    auto* o = static_cast<unsigned char*>(out);
    for (std::size_t i = 0; i < n; ++i) {
        T acc = load_elem<T>(src(size - 1), i);
        for (int r = size - 2; r >= 0; --r) {
            acc = op_max_min_sum(Op, load_elem<T>(src(r), i), acc);
        }
        std::memcpy(o + i * sizeof(T), &acc, sizeof(T));
    }
}

template <class T, class Src>
void fold_op(int size, int op, std::size_t n, const Src& src, void* out) noexcept {
    switch (op) {
        case 1: fold_typed<T, 1>(size, n, src, out); break;
        case 2: fold_typed<T, 2>(size, n, src, out); break;
        default: fold_typed<T, 3>(size, n, src, out); break;
    }
}

/// fold_typed() of the element type e (op: 1 MAX, 2 MIN, 3 SUM).
template <class Src>
void fold_basic(basic_elem e, int size, int op, std::size_t n, const Src& src, void* out) noexcept {
    switch (e) {
        case basic_elem::f64: fold_op<double>(size, op, n, src, out); break;
        case basic_elem::f32: fold_op<float>(size, op, n, src, out); break;
        case basic_elem::i32: fold_op<std::int32_t>(size, op, n, src, out); break;
        case basic_elem::i64: fold_op<std::int64_t>(size, op, n, src, out); break;
    }
}

/// memcpy(dst, src, bytes) (no overlap) without the call for up to 16 bytes (the compiler
/// turns a copy loop back into the call): one or two moves.
inline void copy_small(void* dst, const void* src, std::size_t bytes) noexcept {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    if (bytes >= 8 && bytes <= 16) {  // two 8-byte moves, overlapping below 16
        const auto lo = load_elem<std::uint64_t>(s, 0);
        const auto hi = load_elem<std::uint64_t>(s + bytes - 8, 0);
        std::memcpy(d, &lo, 8);
        std::memcpy(d + bytes - 8, &hi, 8);
    } else if (bytes == 4) {
        const auto v = load_elem<std::uint32_t>(s, 0);
        std::memcpy(d, &v, 4);
    } else {
        std::memcpy(d, s, bytes);
    }
}

// ---- the eager non-blocking calls (shm_nb.cpp), shared with their between-process form (hier_nb.cpp)

/// Unpacks `bytes` of s.result into member i's receive buffer (Ibcast) and releases its
/// retained type.
void unpack_cell(slot& s, int i, std::size_t bytes) noexcept;
/// Copies the reduction result in s.result to every member's output (only < 0), or to member
/// `only`'s.
inline void copy_result(slot& s, int n, int only) noexcept {
    for (int i = 0; i < n; ++i) {
        if (only < 0 || i == only) {
            const args& m = s.cells[i].nb;
            copy_range(m.red, at(s.result, m.red.shift), output_base(m), 0, m.red.n);
        }
    }
}
/// The requests left in the first n cells (members not done at their arrival), into out.
inline int take_requests(const slot& s, int n, request** out) noexcept {
    int k = 0;
    for (int i = 0; i < n; ++i) {
        if (s.cells[i].req != nullptr) {
            out[k++] = s.cells[i].req;
        }
    }
    return k;
}
/// Hands the slot to call seq + n_slots and wakes whoever waits for it.
void free_slot(slot& s, std::uint64_t seq) noexcept;
/// Completes a non-blocking call's request (success); the last access to it.
inline void complete_request(request* r) noexcept {
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    r->complete();  // last access to *r: its owner may free it at once
}
inline void complete_requests(request* const* reqs, int n) noexcept {
    for (int i = 0; i < n; ++i) {
        complete_request(reqs[i]);
    }
}

}  // namespace mpc::mpi::coll::shm::detail
