/// \file
/// Reduction operations: the predefined ones (MPI 3.1 section 5.9.2) on the predefined types
/// they are defined for, and user operations (MPI_Op_create).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <type_traits>

namespace mpc::mpi {

/// MPI_SUCCESS if `op` may reduce elements of the basic predefined type `type` (or of an f90
/// type, MPI_Type_create_f90_*, as the predefined type it stands for), else the error
/// class (MPI_ERR_OP for an invalid or freed op or one not defined on that type).
int op_check(MPI_Op op, MPI_Datatype type) noexcept;

/// inout[i] = in[i] op inout[i] for `count` elements of `type` (a predefined type for
/// predefined ops; any type for user ops, which receive the handle as is).
void op_apply(MPI_Op op, const void* in, void* inout, int count, MPI_Datatype type) noexcept;

/// The index of an operation handle (1 MPI_MAX, 2 MPI_MIN, 3 MPI_SUM, ...; user operations from
/// 32 on), or -1 for a handle that is not an operation.
inline int op_index(MPI_Op op) noexcept {
    return (static_cast<unsigned>(op) >> 24) == MPC_HANDLE_KIND_OP ? static_cast<int>(static_cast<unsigned>(op) & 0xffffffU)
                                                                   : -1;
}

/// Whether op is a user operation (MPI_Op_create), valid or not.
bool op_is_user(MPI_Op op) noexcept;

/// Whether the operation is commutative (predefined ones are).
bool op_commutes(MPI_Op op) noexcept;

/// x MAX / MIN / SUM acc (op index 1, 2, 3 of the predefined operations) for one element, as
/// op_apply computes it: integers wrap around (computed unsigned: signed overflow is undefined).
template <class T>
T op_add(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
        return a + b;
    }
}

template <class T>
T op_max_min_sum(int op_index, T x, T acc) noexcept {
    switch (op_index) {
        case 1: return x > acc ? x : acc;
        case 2: return x < acc ? x : acc;
        default: return op_add(x, acc);
    }
}

}  // namespace mpc::mpi
