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
#include "mpi_compat/fortran/support.h"
#include "mpi_compat/match.hpp"
#include "mpi_compat/remote.hpp"
#include "scheduler/detail.hpp"
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
    /// This rank's copy of the program (a const elf::copy*; null when not privatized).
    const void* image = nullptr;
    /// The Fortran special addresses in that copy, looked up on first use (fortran/support.cpp).
    std::atomic<const mpc_f_sentinels*> fortran{nullptr};
    /// The rank's ULT as the launcher made it (null until then; world_state::launched says when
    /// every rank of the process has one), for other ranks' threads: `ult` is the rank's own
    /// (set when it starts). The collectives group a new communicator's members by their VPs
    /// (coll/shm.hpp, VP groups).
    std::atomic<sched::ult*> spawned{nullptr};

    task() = default;
    task(const task&) = delete;
    task& operator=(const task&) = delete;
    ~task() { delete fortran.load(std::memory_order_relaxed); }
};

struct world_state {
    int size = 0;
    /// The ranks of this process: first_local .. first_local + nlocal - 1 (all of them in a
    /// single-process job; remote.hpp for the others).
    int first_local = 0;
    int nlocal = 0;
    int proc_index = 0;  ///< this process in the job, and the job's processes
    int nprocs = 1;
    /// Indexed by world rank; null for the ranks of other processes.
    std::vector<std::unique_ptr<task>> tasks;
    comm world;
    comm self;
    double wtime_origin = 0;
    /// Every rank of this process is spawned and its task's `spawned` set (release).
    std::atomic<bool> launched{false};
};

world_state& world() noexcept;

/// The communicator behind a handle, MPI_COMM_WORLD without the table (the fast paths'
/// lookup); nullptr for an invalid or freed handle.
[[gnu::always_inline]] inline const comm* fast_lookup_comm(MPI_Comm h) noexcept {
    return h == MPI_COMM_WORLD ? &world().world : lookup_comm(h);
}

/// Whether world rank wr lives in this process.
inline bool is_local(const world_state& w, int wr) noexcept {
    return static_cast<unsigned>(wr - w.first_local) < static_cast<unsigned>(w.nlocal);
}

/// The rank of a thread a rank created (threads.cpp); nullptr for other threads.
task* thread_task() noexcept;

/// The rank the caller acts for: its ULT's, or, in a thread a rank created, that rank's;
/// nullptr elsewhere (runtime threads, before launch).
inline task* current() noexcept {
    auto* t = static_cast<task*>(sched::detail::current_task_inline());
    return t != nullptr ? t : thread_task();
}

/// Sends a message from `self` to world rank `dest_world`: into its engine when it lives in this
/// process (match_engine::deliver), through the transport otherwise (remote::send).
inline void route_send(const task& self, int dest_world, std::uint32_t context, int source_rank, int tag,
                       const typed_buf& data, request* r, bool sync) noexcept {
    world_state& w = world();
    if (is_local(w, dest_world)) [[likely]] {
        w.tasks[static_cast<std::size_t>(dest_world)]->engine.deliver(context, source_rank, tag, data, r, sync);
        return;
    }
    remote::send(context, source_rank, self.world_rank, dest_world, tag, data, r, sync);
}

/// Runs main once per rank (see launch.cpp).
extern "C" int mpc_mpi_launch(int (*main_fn)(int, char**, char**), int argc, char** argv, char** envp);

}  // namespace mpc::mpi
