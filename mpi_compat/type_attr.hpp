/// \file
/// Attribute caching on datatypes (type_attr.cpp): the hooks that MPI_Type_dup and
/// MPI_Type_free (datatype/bindings.cpp) call.
#pragma once

#include <mpi.h>

namespace mpc::mpi {

/// MPI_Type_dup, right after `newtype` was made as a duplicate of `from`: gives it the
/// attributes of `from` that their copy callbacks keep. If a copy callback fails, the
/// attributes already copied are deleted and the callback's code is returned; the caller then
/// frees `newtype`. Calls user code; takes no lock while no datatype has attributes.
int on_type_dup(MPI_Datatype from, MPI_Datatype newtype) noexcept;

/// MPI_Type_free, before derived handle `h` is freed: calls the delete callbacks of its
/// attributes, last set first. On a callback failure the remaining attributes stay, the type
/// must not be freed, and the callback's code is returned. Calls user code.
int on_type_free(MPI_Datatype h) noexcept;

}  // namespace mpc::mpi
