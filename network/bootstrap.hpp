/// \file
/// How the processes of one job find each other (DESIGN.md decision 6): which process this is,
/// how many there are, an all-gather of opaque blobs (the transports' addresses), a barrier, and
/// a way to end the whole job. Two implementations: mpc_run's own (`mpc_run -n N -p P` forks P
/// processes and serves them over one socket each, bootstrap_local.cpp with the server in
/// supervisor.hpp) and PMIx under a resource manager (srun --mpi=pmix, prterun; later).
///
/// Every call blocks the calling kernel thread: the bootstrap runs at start-up, before the
/// ranks run, and at the end of the job, never on a message path.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "lib/status.hpp"

namespace mpc::net {

using blob = std::vector<std::byte>;

class bootstrap {
public:
    virtual ~bootstrap() = default;
    /// This process, 0 .. count() - 1.
    virtual int index() const noexcept = 0;
    virtual int count() const noexcept = 0;
    /// "local" (mpc_run), "pmix", "single".
    virtual const char* name() const noexcept = 0;
    /// Collective over the job's processes: each gives `mine`; on success `all` holds every
    /// process's blob in process order (all[index()] == mine). An error when the launcher is
    /// gone or a process of the job died meanwhile.
    virtual status allgather(std::span<const std::byte> mine, std::vector<blob>& all) noexcept = 0;
    /// Collective: returns once every process has entered it.
    virtual status barrier() noexcept = 0;
    /// Asks the launcher to end the whole job with `code` (MPI_Abort), naming `why`; the launcher
    /// kills every process, this one included. Returns only when no launcher answers (then the
    /// caller exits by itself).
    virtual void abort(int code, const char* why) noexcept = 0;
    /// Tells the launcher that this process finished its part normally (MPI_Finalize): an exit
    /// after it is not a failure.
    virtual status finalize() noexcept = 0;
};

/// The bootstrap the environment asks for: MPC_BOOTSTRAP_FD (set by mpc_run -p for each
/// process it starts) gives the local one; else PMIX_RANK (a PMIx server started this process:
/// srun --mpi=pmix, prterun) gives PMIx; else the job is this process alone ("single": index 0
/// of 1). A malformed variable or a launcher that does not answer is an error with the reason.
result<std::unique_ptr<bootstrap>> bootstrap_from_env() noexcept;

/// The PMIx bootstrap (bootstrap_pmix.cpp): PMIx_Init, index = PMIx rank, count = job size.
result<std::unique_ptr<bootstrap>> connect_pmix_bootstrap() noexcept;

/// The local bootstrap of process `index` of `count` over a connected stream socket to mpc_run's
/// supervisor (supervisor.hpp; tests use a socketpair). Performs the hello exchange: fails when
/// the other side is not a supervisor that expects this process. Takes the descriptor over.
result<std::unique_ptr<bootstrap>> connect_local_bootstrap(int fd, int index, int count) noexcept;

}  // namespace mpc::net
