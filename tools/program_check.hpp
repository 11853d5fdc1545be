/// \file
/// What kind of program mpc_run is asked to start: an MPI program built with mpc_cc/mpc_cxx
/// (its ELF symbol tables define `mpc_program_built_with_mpc_cc`, see mpc_start.c), a program
/// that uses the engine directly (links libmpc, runs its own main), a script, or anything else.
///
/// The ELF file is read with <elf.h> (64-bit little-endian only): the section headers, the
/// .symtab and .dynsym symbol tables and the .dynamic section, every offset checked against the
/// file's size. A file with no section headers (sstrip) is "other".
#pragma once

#include <string>

namespace mpc::tools {

enum class program_kind {
    mpi,     ///< ELF defining mpc_program_built_with_mpc_cc: built with mpc_cc / mpc_cxx
    engine,  ///< ELF that needs libmpc (DT_NEEDED) without the marker: calls the engine itself
    script,  ///< starts with "#!"
    other,   ///< anything else (another ELF, a 32-bit ELF, a text file without "#!", ...)
};

struct program_info {
    program_kind kind = program_kind::other;
    std::string detail;  ///< for other: why (e.g. "not an ELF file"); for script: the "#!" line
};

/// The symbol mpc_start.c defines in every program built with mpc_cc / mpc_cxx.
inline constexpr const char* mpc_marker_symbol = "mpc_program_built_with_mpc_cc";

/// Inspects the executable at `path` (an existing, readable file); `libmpc_soname` is the
/// DT_NEEDED name that identifies an engine program (e.g. "libmpc.so.0").
program_info inspect_program(const std::string& path, const char* libmpc_soname);

}  // namespace mpc::tools
