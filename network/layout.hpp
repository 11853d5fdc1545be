/// \file
/// Which MPI ranks live in which process of a job: N ranks over P processes in contiguous
/// blocks, the first N mod P processes one rank more (`mpc_run -n 10 -p 4`: 3 3 2 2), so that
/// a rank's process is found by arithmetic, without a table, on every message to another rank.
/// The same split for mpc_run -p (which tells each process its block) and under PMIx (each
/// mpc_run computes its own from the PMIx rank and the job size).
#pragma once

#include "lib/status.hpp"

namespace mpc::net {

class layout {
public:
    /// N ranks over P processes; an error when P < 1, N < P (a process without ranks) or N < 1.
    static result<layout> make(int ranks, int processes) noexcept {
        if (processes < 1 || ranks < 1) {
            return status{errc::invalid_argument, "a job needs at least one rank and one process"};
        }
        if (ranks < processes) {
            return status{errc::invalid_argument, "more processes than ranks (-p larger than -n)"};
        }
        return layout(ranks, processes);
    }

    int ranks() const noexcept { return ranks_; }
    int processes() const noexcept { return procs_; }
    /// The first rank of process p, and how many it runs.
    int first_rank(int p) const noexcept { return p * base_ + (p < extra_ ? p : extra_); }
    int rank_count(int p) const noexcept { return base_ + (p < extra_ ? 1 : 0); }
    /// The process that runs `rank` (0 <= rank < ranks()).
    int process_of(int rank) const noexcept {
        const int big = extra_ * (base_ + 1);  // ranks in the processes with one more
        return rank < big ? rank / (base_ + 1) : extra_ + (rank - big) / base_;
    }

private:
    layout(int ranks, int procs) noexcept
        : ranks_(ranks), procs_(procs), base_(ranks / procs), extra_(ranks % procs) {}
    int ranks_;
    int procs_;
    int base_;   ///< ranks of the smaller processes
    int extra_;  ///< processes with base_ + 1 ranks (the first ones)
};

}  // namespace mpc::net
