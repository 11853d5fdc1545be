/// \file
/// Scheduling policies: where ready tasks wait and which worker takes which.
///
/// The runtime calls push() once a task's dependencies are met and pop() from an idle worker;
/// it owns the sleeping and waking of workers, so a policy is only queues and a choice. push()
/// returns the worker that should take the task (its queue holds it: that worker is woken) or
/// -1 when any idle worker may take it (the runtime wakes one, preferring workers on other VPs
/// than the submitter's, whose VP is busy running the submitter).
///
/// Concurrency: push() and pop() are called from any worker and from application threads at
/// once. The runtime issues a sequentially consistent fence after push() and before a worker's
/// last pop() ahead of sleeping, so a policy needs no more than release/acquire ordering on its
/// queues (a lock, or a lock-free deque).
///
/// Extension points for the policies still to come (issue 8): per-worker queues with stealing
/// (ws, lws: push returns -1, pop steals), performance-model placement (dm, dmda, dmdas: push
/// picks the worker and returns it; a completion hook, to add then, feeds the model and the
/// worker's expected end),
/// heteroprio (per-arch buckets). A new policy is one file with a factory, added to the table
/// in policy.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "taskgraph/detail.hpp"

namespace mpc::tg {

struct policy_context {
    int nworkers;
};

class policy {
public:
    virtual ~policy() = default;
    /// A ready task. Returns the worker that must be woken for it, or -1 for any.
    virtual int push(task* t) noexcept = 0;
    /// The next task for `worker`, or nullptr.
    virtual task* pop(int worker) noexcept = 0;
    /// Cheap hint (no lock) that pop(worker) may find work; used while spinning before sleep.
    virtual bool may_have_work(int worker) const noexcept = 0;
};

/// One entry of the policy table: STARPU_SCHED / MPC_TG_SCHED select it by name.
struct policy_entry {
    const char* name;
    const char* description;
    std::unique_ptr<policy> (*make)(const policy_context& ctx);
};

/// Every policy, the default ("eager") first.
std::span<const policy_entry> policies() noexcept;
/// The entry named `name`, or nullptr.
const policy_entry* find_policy(const char* name) noexcept;

std::unique_ptr<policy> make_eager(const policy_context& ctx);
std::unique_ptr<policy> make_prio(const policy_context& ctx);

}  // namespace mpc::tg
