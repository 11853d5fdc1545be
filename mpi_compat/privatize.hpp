/// \file
/// Privatized programs (DESIGN.md decision 3, docs/privatization.md): every rank runs its own
/// copy of the program image (lib/elf_image.hpp), mapped into the rank's address slice, so it
/// has its own global and static variables, its own thread-local variables (served by our
/// __tls_get_addr, per user-level thread) and runs its own constructors and destructors.
#pragma once

#include <string>

namespace mpc::mpi::priv {

/// Opens the running program (/proc/self/exe) as an image and resolves its symbols against
/// the libraries already loaded. Once per process, before the ranks start; false and `err`
/// (which says why and what to do) when the program cannot be privatized.
bool open_program(std::string& err);

/// In the rank's own ULT: maps the rank's copy (in the rank's slice when it has one), runs its
/// constructors, main and, once main has returned, the rank's thread-local destructors and the
/// copy's destructors. `exit_code` gets main's return value. False and `err` when the copy
/// cannot be loaded (nothing of the program ran then).
bool run_rank(int rank, int argc, char** argv, char** envp, int& exit_code, std::string& err);

/// The address of the program's global symbol `name` as the calling rank sees it: in its copy
/// of the program when privatized, else the process-wide one (dlsym); nullptr when absent. May
/// take a lock (dlsym): callers keep the result.
void* rank_symbol(const char* name) noexcept;

}  // namespace mpc::mpi::priv
