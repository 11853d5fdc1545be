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

/// Runs main once per rank (see launch.cpp).
extern "C" int mpc_mpi_launch(int (*main_fn)(int, char**, char**), int argc, char** argv, char** envp);

}  // namespace mpc::mpi
