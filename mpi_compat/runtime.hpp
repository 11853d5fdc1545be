/// \file
/// The MPI layer's process state: the ranks of this process (each a ULT running main), the
/// communicators, and how a call finds the rank it runs for.
///
/// Communicators: see comm.hpp.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "lib/spinlock.hpp"
#include "mpi_compat/comm.hpp"
#include "mpi_compat/match.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi {

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
    std::unordered_map<const comm*, comm_local> comm_locals;  ///< see comm.hpp
    /// Guards comm_locals' structure: threads of the rank may create and free communicators
    /// concurrently (MPI_THREAD_MULTIPLE). Entries never move, so a reference that local_of()
    /// returned stays valid while other entries come and go.
    spinlock comm_locals_lock;
};

struct world_state {
    int size = 0;
    std::vector<std::unique_ptr<task>> tasks;
    comm world;
    comm self;
    double wtime_origin = 0;
};

world_state& world() noexcept;

/// The rank of a thread a rank created (threads.cpp); nullptr for other threads.
task* thread_task() noexcept;

/// The rank the caller acts for: its ULT's, or, in a thread a rank created, that rank's;
/// nullptr elsewhere (runtime threads, before launch).
inline task* current() noexcept {
    auto* t = static_cast<task*>(sched::current_task());
    return t != nullptr ? t : thread_task();
}

/// Runs main once per rank (see launch.cpp).
extern "C" int mpc_mpi_launch(int (*main_fn)(int, char**, char**), int argc, char** argv, char** envp);

}  // namespace mpc::mpi
