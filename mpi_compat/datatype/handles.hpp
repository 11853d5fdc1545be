/// \file
/// The handle table of datatypes: MPI_Datatype <-> datatype*. Predefined handles map to the
/// static predefined types; derived types get indices >= MPC_DATATYPE_PREDEFINED_COUNT in a
/// process-wide table shared by all ranks. Lookups are lock-free (two acquire loads); creating
/// and freeing handles take a spinlock. Freed indices are reused in FIFO order, as late as
/// possible, so that a stale handle stays invalid for a while. Never yields or blocks.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "lib/status.hpp"
#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi {

/// A derived (or f90) type's handle (index >= MPC_DATATYPE_PREDEFINED_COUNT): its live type or
/// nullptr.
const datatype* derived_from_handle(int index) noexcept;

/// The datatype named by h (predefined or live derived), or nullptr for MPI_DATATYPE_NULL,
/// a freed or never-issued handle, or a handle of another kind.
[[gnu::always_inline]] inline const datatype* datatype_from_handle(MPI_Datatype h) noexcept {
    const auto u = static_cast<unsigned>(h);
    if ((u >> 24) != MPC_HANDLE_KIND_DATATYPE) {
        return nullptr;
    }
    const int index = int(u & 0xffffff);
    return index < MPC_DATATYPE_PREDEFINED_COUNT ? predefined(index) : derived_from_handle(index);
}

/// The datatype named by h if it may be used to communicate: valid, committed (predefined types
/// always are), and not MPI_LB or MPI_UB; nullptr otherwise (the caller reports MPI_ERR_TYPE).
/// Hold a reference (retain()) for as long as a request uses it.
[[gnu::always_inline]] inline const datatype* datatype_for_comm(MPI_Datatype h) noexcept {
    if (h == MPI_LB || h == MPI_UB) {
        return nullptr;
    }
    const datatype* t = datatype_from_handle(h);
    return t && t->is_committed() ? t : nullptr;
}

/// Issues a new handle naming t, taking over one reference of t (released by
/// datatype_handle_free). errc::no_memory when the table is full. Predefined types keep their
/// fixed handles and never go through here; f90 types (datatype::create_f90) do, and their
/// handles can never be freed.
result<MPI_Datatype> datatype_handle_add(const datatype* t) noexcept;

/// Frees derived handle h and drops its reference (the type lives on while other types or
/// requests hold references). errc::invalid_argument for predefined, f90 or invalid handles.
[[nodiscard]] status datatype_handle_free(MPI_Datatype h) noexcept;

/// Live derived handles, f90 ones excepted (for leak checks in tests).
std::size_t datatype_handles_live() noexcept;

}  // namespace mpc::mpi
