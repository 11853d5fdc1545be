/// \file
/// Attribute caching on datatypes (type_attr.cpp): the hooks that MPI_Type_dup and
/// MPI_Type_free (datatype/bindings.cpp) call; and datatype names, which MPI_Type_set_name and
/// MPI_Type_get_name read and write here because predefined types have them per rank.
#pragma once

#include <mpi.h>

namespace mpc::mpi {

class datatype;

/// MPI_Type_dup, right after `newtype` was made as a duplicate of `from`: gives it the
/// attributes of `from` that their copy callbacks keep. If a copy callback fails, the
/// attributes already copied are deleted and the callback's code is returned; the caller then
/// frees `newtype`. Calls user code; takes no lock while no datatype has attributes.
int on_type_dup(MPI_Datatype from, MPI_Datatype newtype) noexcept;

/// MPI_Type_free, before derived handle `h` is freed: calls the delete callbacks of its
/// attributes, last set first. On a callback failure the remaining attributes stay, the type
/// must not be freed, and the callback's code is returned. Calls user code.
int on_type_free(MPI_Datatype h) noexcept;

/// MPI_Type_create_keyval whose extra_state the caller hands over: once the keyval is created,
/// release(extra_state) runs when the keyval has been freed and no attribute of it is left. On
/// failure release is not called: extra_state stays the caller's.
int create_type_keyval(MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn, int* keyval,
                       void* extra_state, void (*release)(void*)) noexcept;

/// MPI_Type_set_name on handle h, naming t (valid; name not null): a derived type's name is its
/// object's; a predefined or f90 type is named for the calling rank only (each rank has its own
/// in MPI's model). Truncated to MPI_MAX_OBJECT_NAME - 1 characters. MPI_ERR_NO_MEM if the
/// name cannot be stored.
int set_type_name(MPI_Datatype h, const datatype& t, const char* name) noexcept;

/// MPI_Type_get_name: copies the name the calling rank sees on h, naming t, into buf
/// (MPI_MAX_OBJECT_NAME chars); returns its length. A predefined or f90 type the rank has not
/// named has its MPI name ("MPI_INT"; that of the type it stands for).
int get_type_name(MPI_Datatype h, const datatype& t, char* buf) noexcept;

}  // namespace mpc::mpi
