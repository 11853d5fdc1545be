/// \file
/// MPI error classes, strings and handlers. Every binding validates its arguments and reports
/// a failure through raise(), which applies the communicator's error handler for the calling
/// rank: MPI_ERRORS_RETURN returns the class; MPI_ERRORS_ARE_FATAL prints one line naming the
/// rank, the call and the reason, and ends the job.
#pragma once

#include <mpi.h>

namespace mpc::mpi {

/// Reports error `cls` of `call` on communicator `comm` (MPI_COMM_NULL: the world's handler).
/// Returns `cls` when the handler lets the call return.
[[gnu::format(printf, 4, 5)]] int raise(MPI_Comm comm, int cls, const char* call, const char* fmt, ...) noexcept;

/// The text of an error class (never null).
const char* error_text(int cls) noexcept;
const char* error_name(int cls) noexcept;

/// Ends the whole job with `code` after printing `why` (one line). MPI_Abort and fatal errors.
[[noreturn]] void end_job(int code) noexcept;

}  // namespace mpc::mpi
