/// \file
/// Attribute caching on communicators (attr.cpp): the hooks that communicator duplication,
/// freeing and MPI_Finalize call. Each member keeps its own attributes (comm_local::attrs).
#pragma once

#include <mpi.h>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

/// The release hook of a keyval's extra_state (create_comm_keyval, create_type_keyval): a
/// member of the keyval record, it runs fn(state) when the record goes, i.e. once the keyval
/// was freed and none of its attributes is left. Not copyable: one record, one release.
class keyval_release {
public:
    keyval_release() = default;
    keyval_release(const keyval_release&) = delete;
    keyval_release& operator=(const keyval_release&) = delete;
    ~keyval_release() {
        if (fn_ != nullptr) {
            fn_(state_);
        }
    }
    void set(void* state, void (*fn)(void*)) noexcept {
        state_ = state;
        fn_ = fn;
    }

private:
    void* state_ = nullptr;
    void (*fn_)(void*) = nullptr;
};

/// MPI_Comm_dup, on every member, right after the duplicate `*newcomm` of `from` is created:
/// gives the caller's copy the attributes that their copy callbacks keep and `from`'s topology.
/// If a copy callback fails, the caller leaves the duplicate (its copied attributes are deleted,
/// *newcomm becomes MPI_COMM_NULL) and the callback's error code is returned. Calls user code.
int on_comm_dup(task& self, const comm& from, MPI_Comm* newcomm) noexcept;

/// MPI_Comm_free, before the caller's comm_local is dropped: calls the delete callbacks of the
/// caller's attributes on `c`, last set first. On a callback failure the remaining attributes
/// stay, the communicator must not be freed, and the callback's code is returned.
int on_comm_free(task& self, const comm& c) noexcept;

/// MPI_Finalize, first thing: deletes the caller's attributes on MPI_COMM_SELF, then on
/// MPI_COMM_WORLD (MPI 3.1 section 8.7.1: a library can run code at finalization this way).
int on_finalize(task& self) noexcept;

/// MPI_Comm_create_keyval (`call` names it in errors) whose extra_state the caller hands over:
/// once the keyval is created, release(extra_state) runs when the keyval has been freed and no
/// attribute of it is left (the Fortran bindings free their callback record so). On failure
/// release is not called: extra_state stays the caller's.
int create_comm_keyval(const char* call, MPI_Comm_copy_attr_function* copy_fn,
                       MPI_Comm_delete_attr_function* delete_fn, int* keyval, void* extra_state,
                       void (*release)(void*)) noexcept;

}  // namespace mpc::mpi
