/// \file
/// Records behind the opaque tg::task and tg::data, and the calls the layer's files share.
///
/// Life of a task: created (one reference, the creator's) -> submitted (the runtime takes a
/// reference; `ndeps` counts unmet dependencies plus one guard that submit() drops last, so a
/// predecessor finishing during submission cannot start the task early) -> ready (ndeps hit 0:
/// handed to the policy, or granted for an acquisition) -> done (callback run, successors and
/// waiters released, the runtime's reference dropped). Predecessors hold a reference on each
/// successor in their list, handles on the tasks they remember (last writer, readers), so a
/// record is freed only when nothing can reach it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/queues.hpp"
#include "taskgraph/gate.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg {

struct buffer {
    data* d;
    access_mode mode;
    bool arbitrated = false;  ///< taken at run time (no inferred order on it): see arbitrate()
};

enum class task_kind : std::uint8_t { normal, acquire };
enum class task_state : std::uint8_t { created, submitted, done };

struct task {
    std::atomic<int> refs{1};
    std::atomic<int> ndeps{1};  ///< unmet dependencies + the submission guard
    task_kind kind = task_kind::normal;
    task_state state = task_state::created;  ///< under g.lock
    bool granted = false;                    ///< acquisitions: ready; under g.lock

    cpu_fn fn = nullptr;  ///< nullptr: nothing to run (empty task)
    const char* name = nullptr;
    void* cl_arg = nullptr;
    int priority = default_priority;
    callback_fn callback = nullptr;
    void* callback_arg = nullptr;
    std::uint64_t seq = 0;  ///< submission number, for FIFO order among equals

    int nbuffers = 0;
    buffer* bufs = inline_bufs;  ///< inline_bufs, or heap_bufs beyond max_buffers
    buffer inline_bufs[max_buffers];
    std::unique_ptr<buffer[]> heap_bufs;

    detail::gate g;              ///< guards state, granted, succs; task_wait() waits here
    std::vector<task*> succs;    ///< each holds a reference

    task* next = nullptr;  ///< link of the one queue holding the task: a policy's, or a handle's waiters

    // Arbitration (handles without sequential consistency): the task takes its arbitrated
    // handles in address order before it is ready; arb_last is the last one taken.
    bool has_arbitrated = false;
    std::uintptr_t arb_last = 0;
    access_mode arb_wait_mode = access_none;  ///< the mode it waits for, in a handle's waiters

    // Scheduling and measurement (policy.hpp, perfmodel.hpp, trace.cpp).
    perfmodel* model = nullptr;
    std::uint32_t footprint = 0;
    std::size_t size = 0;
    double cost_us = -1;        ///< the application's cost function's answer; < 0: none
    double predicted_us = 0;    ///< what the policy expected when it placed the task
    int sched_worker = -1;      ///< the worker a placing policy chose
    std::uint64_t trace_id = 0; ///< non-zero when traced (trace.cpp)
};

struct data {
    static constexpr std::uint32_t live_magic = 0x74676461;  // "tgda"
    std::uint32_t magic = live_magic;
    interface_id id{};
    union {
        variable_interface var;
        vector_interface vec;
        matrix_interface mat;
        block_interface blk;
    } iface{};

    detail::gate g;  ///< guards what follows; unregister() waits here for users == 0
    bool seq = true;
    bool unregistering = false;
    bool free_when_unused = false;  ///< unregister_submit(): the last user frees the handle
    long users = 0;  ///< submitted, unfinished tasks and acquisitions naming this handle
    task* last_writer = nullptr;   ///< referenced
    std::vector<task*> readers;    ///< readers since last_writer, referenced
    std::vector<task*> acquired;   ///< the application's open acquisitions, referenced

    // Arbitration: who holds the data now, and the tasks waiting for it (FIFO).
    int arb_readers = 0;
    bool arb_writer = false;
    sched::detail::fifo<task> arb_waiters;
};

namespace detail {

void task_ref(task* t) noexcept;
void task_unref(task* t) noexcept;
/// succ waits for pred unless pred is done. Locks pred.
void add_dependency(task* pred, task* succ) noexcept;
/// Drops one unmet dependency of t; the last one makes t ready (after arbitration).
void dependency_met(task* t) noexcept;
/// t may run: granted (acquisition), completed (empty task) or handed to the policy.
void now_ready(task* t) noexcept;
/// The mode of t's accesses to its i-th buffer, combined with its other buffers on the same
/// handle; -1 when an earlier buffer names the same handle (it stands for both).
int combined_mode(const task* t, int i) noexcept;
/// Runs t's function on the calling worker, then completes it.
void execute(task* t) noexcept;
/// Ends t: callback, waiters, successors, handles, in-flight count; drops the runtime's ref.
void complete(task* t) noexcept;

/// Waits (may block) until t is done, whether or not it has been submitted yet.
void wait_done(task* t) noexcept;
/// errc::busy (logged) when tag `id` is carried by a task already or has been notified.
status tag_check(std::uint64_t id, const char* task_name) noexcept;
/// Before t (carrying `id`) is submitted: makes t wait for the tags `id` depends on, and the
/// tag's completion point wait for t. errc::busy (logged) when the tag is carried already.
status tag_attach(task* t, std::uint64_t id) noexcept;
/// After t was submitted with tag_attach(): the tag is done once t ends.
void tag_attached(std::uint64_t id) noexcept;

/// Enters t's accesses into the handles' histories (inferred dependencies) and counts t as a
/// user of each. errc::busy (logged) when a handle is being unregistered; then nothing is done.
status attach_buffers(task* t, bool infer) noexcept;
/// t no longer uses its handles (unregister may proceed once no task does).
void detach_buffers(task* t) noexcept;

/// Whether execute() measures every task (a trace, a summary or a policy that learns from the
/// durations); tasks with a performance model are measured in any case.
extern bool g_measure;
/// A task's function ran on the calling worker from `start_ns` to `end_ns` (steady clock):
/// feeds the policy, the model, the trace and the summary. Called before complete().
void task_ran(task* t, std::uint64_t start_ns, std::uint64_t end_ns) noexcept;
std::uint64_t now_ns() noexcept;
/// Trace hooks (trace.cpp): an id for a new task, and a dependency between two traced tasks.
extern bool g_tracing;
void trace_new_task(task* t) noexcept;
void trace_dependency(const task* pred, const task* succ) noexcept;

/// Hands a ready task to the policy and wakes a worker for it.
void push_ready(task* t) noexcept;
/// Takes t's arbitrated handles (from where it stopped); once it holds them all, t is ready
/// (scheduled, or granted for an acquisition). Otherwise t waits in a handle's queue and
/// continues when that handle is released.
void arbitrate(task* t) noexcept;
/// Gives back t's arbitrated handles and continues the tasks that were waiting for them.
void release_arbitrated(task* t) noexcept;
/// True when the caller runs inside a task or callback (blocking calls would deadlock).
bool in_task() noexcept;
/// The submission counter and in-flight accounting of the runtime.
std::uint64_t next_seq() noexcept;
void inflight_add() noexcept;
void inflight_done() noexcept;

}  // namespace detail
}  // namespace mpc::tg
