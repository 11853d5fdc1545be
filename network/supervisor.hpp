/// \file
/// The server side of mpc_run's own bootstrap: starts the P processes of a job, answers their
/// bootstrap requests (all-gather, barrier, finalize) once every process has asked, and watches
/// them. When one dies (a signal, an exit without finalizing, a non-zero status) or calls
/// abort, the others are ended (SIGTERM, then SIGKILL after a grace period) and the job ends
/// with one message that names the process, its ranks and what happened. Each child also dies
/// with its supervisor (PR_SET_PDEATHSIG), so no process outlives the job.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "lib/status.hpp"

namespace mpc::net {

class supervisor {
public:
    /// Runs in the child process after fork(): index, and the socket to pass to
    /// connect_local_bootstrap() (as MPC_BOOTSTRAP_FD across an exec: it is not close-on-exec).
    /// Must not return: exec the program, or _exit().
    using child_main = std::function<void(int index, int fd)>;

    struct options {
        int count = 1;                  ///< processes
        std::vector<int> first_rank;    ///< per process, for messages (empty: not named)
        std::vector<int> rank_count;
        int grace_ms = 2000;            ///< SIGTERM to SIGKILL
    };

    /// Forks the processes; each runs `main`. An error (fork failed: the ones started are
    /// killed) or a supervisor to run(). PR_SET_PDEATHSIG follows the forking *thread*: call
    /// it from a thread that lives as long as the job (mpc_run's main thread).
    static result<supervisor> start(const options& opt, const child_main& main) noexcept;

    supervisor(supervisor&&) noexcept = default;
    supervisor& operator=(supervisor&&) noexcept = default;
    supervisor(const supervisor&) = delete;
    supervisor& operator=(const supervisor&) = delete;
    /// Kills and reaps the processes run() did not see end (an early return of the caller).
    ~supervisor();

    /// Serves the processes until all have exited. Returns the job's exit status: 0 when every
    /// process finalized and exited 0; the first non-zero exit status (128 + signal for a
    /// signal); the code of an abort. `message` is empty, or the one line that says why the job
    /// ended early (without a trailing newline).
    int run(std::string& message) noexcept;

    /// The pid of each process (tests kill one to check the failure path).
    std::vector<pid_t> pids() const;
    /// How process i ended (a waitpid() status), once run() has returned.
    int wait_status(int i) const noexcept { return procs_[static_cast<std::size_t>(i)].wait_status; }

    /// One process as the supervisor sees it.
    struct proc {
        pid_t pid = -1;
        int fd = -1;                 ///< -1 once closed
        bool said_hello = false;
        bool finalized = false;
        bool exited = false;
        int wait_status = 0;
        int pending = 0;             ///< the kind of the request waiting for the others, 0: none
        std::vector<std::byte> payload;
    };

private:
    supervisor() = default;
    std::string describe(int i) const;
    void fail(int i, std::string what, int status) noexcept;
    void serve_one(int i) noexcept;
    void answer_collectives() noexcept;
    void reap() noexcept;

    std::vector<proc> procs_;
    options opt_;
    bool ending_ = false;         ///< a failure or an abort: the processes are being ended
    long long kill_at_ms_ = 0;    ///< when SIGKILL follows the SIGTERM
    int job_status_ = 0;
    std::string message_;
};

}  // namespace mpc::net
