/// \file
/// Non-blocking collectives. Small Ibarrier, Ibcast, Ireduce and Iallreduce inside a process
/// run without a thread: the last member to call completes the call for all (shm_nb.cpp,
/// shm::eager_runs); between processes, the last member of each process starts the leaders'
/// rounds, which the completions of their requests drive (hier_nb.cpp). Every other call is described in a `job` that runs in a user-level thread
/// of its own, started on the caller's VP, stealable and offered to sleeping VPs (so it
/// progresses on a free VP while the caller computes, or whenever the caller's VP has nothing
/// else to run); the request completes when the job returns. The sequence number is taken by the caller, so the order of the calls, not
/// the order in which their threads run, matches them up.
///
/// The user may free the communicator and the datatypes of a pending operation (MPI 3.1
/// sections 4.1.9 and 6.4.3): a job holds a reference on each until it is deleted, which
/// happens when it has run, before its request completes.
#pragma once

#include <mpi.h>

#include <vector>

#include "mpi_compat/coll/coll.hpp"

namespace mpc::mpi::coll::nbc {

/// A non-blocking operation. The destructor drops the references the job holds.
class job {
public:
    job() noexcept = default;
    job(const job&) = delete;
    job& operator=(const job&) = delete;
    virtual ~job();
    /// run()'s answer when somebody else completes the request (the call's last member).
    static constexpr int completed_elsewhere = -1;
    /// Runs the operation (in its thread; may yield). Returns an MPI error class, or
    /// completed_elsewhere.
    virtual int run() noexcept = 0;
    /// Keeps c alive until the job is deleted (one reference, once).
    void hold_comm(const comm* c) noexcept;
    /// Keeps t alive until the job is deleted (null and predefined types: nothing to hold).
    /// False when out of memory.
    [[nodiscard]] bool hold_type(const datatype* t) noexcept;

private:
    comm* comm_ = nullptr;
    std::vector<const datatype*> types_;
};

/// Starts j, owned from now on (deleted on every path), in a thread named `name` of rank
/// `self`; *req receives its request. Returns an error class (MPI_ERR_NO_MEM).
int start(task* self, const char* name, job* j, MPI_Request* req) noexcept;

/// Starts a (checked, numbered) call of one of coll.hpp's kinds; *req receives its request.
int start(const args& a, MPI_Request* req) noexcept;

}  // namespace mpc::mpi::coll::nbc
