/// \file
/// heteroprio's configuration: StarPU's `starpu_heteroprio_set_*` calls, in the core's terms.
///
/// heteroprio (Agullo, Bramas, Coulaud, Darve, Messner, Takahashi, "Task-based FMM for
/// heterogeneous architectures", Concurrency and Computation 28(9), 2016) keeps ready tasks in
/// buckets, a FIFO each. Each architecture walks its own list of buckets, in its own order, and
/// takes the first task it finds, so that the kinds of tasks each architecture is good at come
/// first for it. For a bucket whose fastest architecture is known, a slower one takes a task
/// only while the bucket holds at least `slow factor` tasks per worker of the fastest one (the
/// end of the run, when a slow worker would delay the last tasks, is left to the fast ones).
///
/// Without configuration (no starpu_conf::sched_policy_init) the policy keeps one bucket per
/// priority level and CPUs take the highest first. With it, a task's priority is its bucket's
/// number, as in StarPU, and check() below validates what the application set up, as StarPU's
/// heteroprio asserts at initialisation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "taskgraph/tg.hpp"

namespace mpc::tg {

struct heteroprio_config {
    static constexpr int max_buckets = 100;  ///< STARPU_HETEROPRIO_MAX_PRIO
    static constexpr int max_archs = 5;      ///< STARPU_NB_TYPES: CPU, CUDA, OpenCL, MIC, MPI_MS
    /// How many entries of mapping[a] architecture a walks (starpu_heteroprio_set_nb_prios).
    int nprios[max_archs] = {};
    /// Architecture a's i-th bucket (starpu_heteroprio_set_mapping); 0 where never set, as StarPU.
    std::uint8_t mapping[max_archs][max_buckets] = {};
    bool mapped[max_archs][max_buckets] = {};
    /// Bit a: architecture a takes tasks from the bucket (set by set_mapping).
    unsigned archs[max_buckets] = {};
    /// The bucket's fastest architecture (starpu_heteroprio_set_faster_arch); 0, the CPUs, also
    /// means "none" as in StarPU.
    std::uint8_t faster[max_buckets] = {};
    /// How much slower architecture a is on the bucket's tasks (set_arch_slow_factor).
    float slow[max_buckets][max_archs] = {};
    /// Each worker's architecture (the runtime has CPUs only: all 0; tests set others).
    std::uint8_t worker_arch[max_workers] = {};

    /// Whether the configuration is usable by `nworkers` workers; when not, a message naming the
    /// call to fix goes into why (StarPU asserts on the same conditions).
    bool check(int nworkers, char* why, std::size_t len) const noexcept;
    /// "CPU", "CUDA", ... for architecture index a.
    static const char* arch_name(int a) noexcept;
};

}  // namespace mpc::tg
