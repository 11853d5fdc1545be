/// \file
/// User error handlers and user error classes, codes and strings (errhandler.cpp), for
/// errors.cpp's raise(), MPI_Comm_set_errhandler, MPI_Error_class and MPI_Error_string.
#pragma once

#include <mpi.h>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {

/// Whether `eh` is a handler made by MPI_Comm_create_errhandler (freed ones included: a
/// communicator may still use them).
bool is_user_errhandler(MPI_Errhandler eh) noexcept;

/// raise(): if the caller's handler for `comm` (MPI_COMM_NULL or invalid: MPI_COMM_WORLD's) is a
/// user handler, calls it with the communicator and `code` and returns true (raise() then
/// returns `code`); false for the predefined handlers. Calls user code.
bool invoke_user_errhandler(task& self, MPI_Comm comm, int code) noexcept;

/// The class of a code made by MPI_Add_error_code or MPI_Add_error_class, or -1 for other
/// values.
int user_error_class(int code) noexcept;
/// MPI_Error_string for a user code or class: copies the string given to it (empty if none
/// was) into `out` (MPI_MAX_ERROR_STRING bytes), sets *len, returns true; false for other values.
bool user_error_string(int code, char* out, int* len) noexcept;

/// The caller's value of the MPI_LASTUSEDCODE attribute (pointer to int, as attributes are).
int* lastusedcode(task& self) noexcept;

}  // namespace mpc::mpi
