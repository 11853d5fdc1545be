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
/// eager and prio are written directly (one locked queue: the fastest path); the other policies
/// are trees of components (modular.hpp), as StarPU's modular schedulers. A policy that learns
/// from durations (dm, dmda, dmdas) says so with measures(): the runtime then times every task
/// and calls done() with the measured time. A new policy is a factory added to the table in
/// policy.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "taskgraph/detail.hpp"

namespace mpc::tg {

struct heteroprio_config;

struct policy_context {
    int nworkers = 1;
    /// Relative speed of each worker (nworkers entries; nullptr: all 1). random draws workers
    /// in proportion to it.
    const double* speed = nullptr;
    /// Expected duration of t on `worker`, in µs; NaN when unknown (an uncalibrated model),
    /// 0 without a model. nullptr: the runtime's (perfmodel.hpp, from t's model).
    double (*expected_us)(const task* t, int worker) = nullptr;
    /// Expected time to bring t's data to `worker`, in µs (0 while all data is in main memory).
    double (*transfer_us)(const task* t, int worker) = nullptr;
    /// The worker calling push() (a worker that submits from a task), or -1 (the program).
    int (*current_worker)() = nullptr;
    /// Workers' VPs (nworkers entries; nullptr: worker i on VP i): lws steals from the workers
    /// nearest in VP order first.
    const int* worker_vp = nullptr;
    /// heteroprio's buckets as the application set them up (heteroprio.hpp); nullptr: one
    /// bucket per priority level.
    const heteroprio_config* heteroprio = nullptr;
    /// The scheduling context the policy serves (context.cpp; 0: the initial one, every worker).
    /// A context's policy sees its members as workers 0..nworkers-1: members[i] is the
    /// runtime's id of worker i, local_of[id] the index of the runtime's worker id (-1: not a
    /// member). nullptr: the identity (context 0).
    int context_id = 0;
    const int* members = nullptr;
    const std::int16_t* local_of = nullptr;
    /// The application's policy (a struct starpu_sched_policy*) a context was created with;
    /// nullptr: the one given to init.
    void* app_policy = nullptr;
};

/// push()'s answer when the task may be for any worker and the policy cannot say which (an
/// application's policy): every sleeping worker is woken to look.
inline constexpr int wake_every_worker = -2;
/// push()'s answer when the policy has woken whom it needed itself (a parallel task it gave to
/// a combined worker's members): the runtime wakes nobody more.
inline constexpr int wake_nobody = -3;

class policy {
public:
    virtual ~policy() = default;
    /// A ready task. Returns the worker that must be woken for it, or -1 for any.
    virtual int push(task* t) noexcept = 0;
    /// The next task for `worker`, or nullptr.
    virtual task* pop(int worker) noexcept = 0;
    /// Cheap hint (no lock) that pop(worker) may find work; used while spinning before sleep.
    virtual bool may_have_work(int worker) const noexcept = 0;
    /// `worker` found nothing with pop() and spun for MPC_TG_SPIN_US: the last look before it
    /// parks, for work that pop() leaves where it is (HEFT's tasks queued on other workers).
    /// Kept off pop() so that a worker running dry between tiny tasks does not pay for it.
    virtual task* pop_idle(int /*worker*/) noexcept { return nullptr; }
    /// Whether the policy wants done() for every task (the runtime then times every task).
    virtual bool measures() const noexcept { return false; }
    /// t, popped by `worker`, ran for `us` µs (called before t completes; `us` is 0 when the
    /// runtime did not time t: see detail::g_policy_done).
    virtual void done(task* /*t*/, int /*worker*/, double /*us*/) noexcept {}
    /// Whether the policy wants starting() before every task a worker runs (its own queue's
    /// included); the runtime asks once, at start.
    virtual bool watches_starts() const noexcept { return false; }
    virtual void starting(task* /*t*/, int /*worker*/) noexcept {}
    /// Whether the policy wants pinned() for each task pinned to a worker (task_desc::worker),
    /// which goes to that worker's own queue without push(); asked once, at start.
    virtual bool watches_pinned() const noexcept { return false; }
    virtual void pinned(task* /*t*/, int /*worker*/) noexcept {}
    /// The context's members change to members[0..n) (policy_context's convention, the
    /// arrays it gave stay valid and now hold the new members). A policy that can follow
    /// (an application's, through its add_workers/remove_workers) does and returns true; the
    /// runtime replaces one that returns false by a new one, moving the tasks it held.
    /// Called once the workers run (worker_count() answers): the parallel policies make the
    /// combined workers here.
    virtual void started() noexcept {}
    virtual bool resize(const int* /*old_members*/, int /*old_n*/, const int* /*members*/, int /*n*/) noexcept {
        return false;
    }
};

/// One entry of the policy table: STARPU_SCHED / MPC_TG_SCHED select it by name.
struct policy_entry {
    const char* name;
    const char* description;
    std::unique_ptr<policy> (*make)(const policy_context& ctx);
    /// Whether make() accepts a context with no worker (an application's policy, whose
    /// add_workers comes later); the built-in policies are made once a context has workers.
    bool any_size = false;
};

/// Every policy, the default ("eager") first.
std::span<const policy_entry> policies() noexcept;
/// The entry named `name`, or nullptr.
const policy_entry* find_policy(const char* name) noexcept;

/// A comma-separated list of the policies' names, for error messages.
const char* policy_names() noexcept;

std::unique_ptr<policy> make_eager(const policy_context& ctx);
std::unique_ptr<policy> make_prio(const policy_context& ctx);
// Modular policies (modular.cpp).
std::unique_ptr<policy> make_modular_eager(const policy_context& ctx);
std::unique_ptr<policy> make_modular_prio(const policy_context& ctx);
std::unique_ptr<policy> make_random(const policy_context& ctx);
std::unique_ptr<policy> make_ws(const policy_context& ctx);
std::unique_ptr<policy> make_lws(const policy_context& ctx);
std::unique_ptr<policy> make_dm(const policy_context& ctx);
std::unique_ptr<policy> make_dmda(const policy_context& ctx);
std::unique_ptr<policy> make_dmdas(const policy_context& ctx);
std::unique_ptr<policy> make_heteroprio(const policy_context& ctx);  // heteroprio.cpp
std::unique_ptr<policy> make_peager(const policy_context& ctx);      // parallel_policies.cpp
std::unique_ptr<policy> make_pheft(const policy_context& ctx);

}  // namespace mpc::tg
