/// \file
/// The MPI layer's process state: the ranks of this process (each a ULT running main), the
/// communicators, and how a call finds the rank it runs for.
///
/// A communicator object is shared by the members that live in this process: MPI_COMM_WORLD is
/// one object for all local ranks, and a rank's rank in it is derived from the calling task.
/// What MPI makes per-process (error handler, attributes, name) is kept per member.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi_compat/match.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi {

struct comm;

/// One MPI rank of this process.
struct task {
    int world_rank = 0;
    sched::ult* ult = nullptr;
    match_engine engine;
    request_pool requests;
    bool initialized = false;
    bool finalized = false;
    int thread_level = MPI_THREAD_SINGLE;
    int exit_code = 0;
    MPI_Errhandler world_errhandler = MPI_ERRORS_ARE_FATAL;
    MPI_Errhandler self_errhandler = MPI_ERRORS_ARE_FATAL;
};

/// A communicator (intra-communicators only so far).
struct comm {
    MPI_Comm handle = MPI_COMM_NULL;
    std::uint32_t context = 0;
    std::vector<int> world_of;  ///< comm rank -> world rank
    bool is_self = false;
    const char* name = "";

    int size() const noexcept { return is_self ? 1 : static_cast<int>(world_of.size()); }
    /// The caller's rank in this communicator, or MPI_UNDEFINED.
    int rank_of(const task& t) const noexcept;
    /// The task behind `rank` (a rank of this communicator, checked by the caller).
    int world_rank(const task& caller, int rank) const noexcept {
        return is_self ? caller.world_rank : world_of[static_cast<std::size_t>(rank)];
    }
};

struct world_state {
    int size = 0;
    std::vector<std::unique_ptr<task>> tasks;
    comm world;
    comm self;
    std::atomic<int> abort_code{-1};
    double wtime_origin = 0;
};

world_state& world() noexcept;

/// The rank the calling ULT runs for; nullptr outside a rank (plain thread, before launch).
inline task* current() noexcept { return static_cast<task*>(sched::current_task()); }

/// The communicator behind a handle, or nullptr for an invalid one.
comm* lookup_comm(MPI_Comm h) noexcept;

/// Runs main once per rank (see launch.cpp).
extern "C" int mpc_mpi_launch(int (*main_fn)(int, char**, char**), int argc, char** argv, char** envp);

}  // namespace mpc::mpi
