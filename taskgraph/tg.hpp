/// \file
/// The task-graph runtime (issue 8): a StarPU-style sequential task flow on the engine's VPs.
///
/// A program registers its data (handles), submits tasks that name a codelet (the function to
/// run) and the handles it accesses with a mode (read, write, read-write), and the runtime runs
/// each task once every earlier conflicting access to its data has finished: dependencies are
/// inferred from the submission order (read after write, write after read, write after write),
/// per handle, unless the handle's sequential consistency is switched off. Explicit
/// task-to-task dependencies add to them.
///
/// Workers are ULTs of the engine (DESIGN.md decision 8: no second thread pool), one per VP by
/// default, each pinned to its VP. A ready task goes to the scheduling policy (`policy.hpp`),
/// which hands it to a worker. `init()` starts the engine when it is not running, so a program
/// that uses only the task API is a plain executable.
///
/// The StarPU 1.3 C API (`include/starpu/1.3/starpu.h`) is a thin layer over this one
/// (`starpu_*.cpp` in this folder). "May block" below: the call waits (parks the calling ULT, or
/// sleeps on a futex in a plain thread); it must not be called from inside a task.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lib/status.hpp"

namespace mpc::tg {

/// Limits. A task may name more buffers than max_buffers (they live on the heap).
inline constexpr int max_buffers = 8;          ///< buffers kept inline in a task (StarPU's NMAXBUFS)
inline constexpr int max_implementations = 4;  ///< CPU implementations of a codelet
inline constexpr int max_workers = 256;
inline constexpr int variable_nbuffers = -1;   ///< codelet::nbuffers: the task says how many
/// Priorities: higher runs first under priority-aware policies (StarPU's range and default).
inline constexpr int min_priority = -5;
inline constexpr int max_priority = 5;
inline constexpr int default_priority = 0;

/// Where a codelet can run (StarPU's bit values).
inline constexpr std::uint32_t where_cpu = 1u << 1;

/// How a task accesses a buffer; the bit values are StarPU's (R = 1, W = 2, RW = 3).
enum access_mode : unsigned { access_none = 0, access_read = 1, access_write = 2, access_rw = 3 };

/// Kinds of data interface; the numbers are StarPU's interface ids.
enum class interface_id : int { matrix = 0, block = 1, vector = 2, variable = 5 };

// The interfaces a codelet receives in buffers[i]. Their layouts are StarPU 1.3's, so that
// STARPU_VECTOR_GET_PTR and friends read them (checked by static_asserts in starpu_data.cpp).
// Only main memory exists so far: dev_handle == ptr and offset == 0.
struct variable_interface {
    interface_id id;
    std::uintptr_t ptr;
    std::uintptr_t dev_handle;
    std::size_t offset;
    std::size_t elemsize;
};
struct vector_interface {
    interface_id id;
    std::uintptr_t ptr;
    std::uintptr_t dev_handle;
    std::size_t offset;
    std::uint32_t nx;
    std::size_t elemsize;
    std::uint32_t slice_base;
    std::size_t allocsize;
};
struct matrix_interface {
    interface_id id;
    std::uintptr_t ptr;
    std::uintptr_t dev_handle;
    std::size_t offset;
    std::uint32_t nx;  ///< elements per row (contiguous)
    std::uint32_t ny;  ///< rows
    std::uint32_t ld;  ///< elements between the starts of two rows
    std::size_t elemsize;
    std::size_t allocsize;
};

struct block_interface {
    interface_id id;
    std::uintptr_t ptr;
    std::uintptr_t dev_handle;
    std::size_t offset;
    std::uint32_t nx;   ///< elements per row (contiguous)
    std::uint32_t ny;   ///< rows per plane
    std::uint32_t nz;   ///< planes
    std::uint32_t ldy;  ///< elements between the starts of two rows
    std::uint32_t ldz;  ///< elements between the starts of two planes
    std::size_t elemsize;
};

/// A CPU implementation: buffers[i] points to the interface of the task's i-th handle.
using cpu_fn = void (*)(void** buffers, void* cl_arg);
using callback_fn = void (*)(void* arg);

/// What a task runs. Must outlive the tasks that use it.
struct codelet {
    const char* name = nullptr;
    std::uint32_t where = where_cpu;
    cpu_fn cpu_funcs[max_implementations] = {};
    int nbuffers = 0;  ///< or variable_nbuffers
    /// Access modes of the first max_buffers buffers; a task may give its own (task_desc::modes).
    access_mode modes[max_buffers] = {};
};

struct data;       ///< a registered piece of data (opaque)
struct task;       ///< a task (opaque, reference-counted)
struct perfmodel;  ///< a performance model (perfmodel.hpp)

// --------------------------------------------------------------------------------------------
// Runtime

/// Options of init(); unset fields come from the environment, then the defaults.
struct config {
    /// CPU workers; -1: MPC_TG_NCPU, else STARPU_NCPU, else one per VP. 0 is refused (no worker).
    int ncpus = -1;
    /// Scheduling policy by name; nullptr: MPC_TG_SCHED, else STARPU_SCHED, else "eager".
    const char* sched = nullptr;
    /// When true, the fields above win over the environment (StarPU's
    /// precedence_over_environment_variables); by default the environment wins, as in StarPU.
    bool config_over_env = false;
};

/// Starts the runtime (the engine too when it is not running: the caller becomes the primary
/// ULT of VP 0). Calls nest: each init() needs one shutdown(). errc::unsupported when no worker
/// is configured, errc::invalid_argument for an unknown policy or a malformed variable.
status init(const config& c = {}) noexcept;
/// Waits for every submitted task (may block), stops the workers, and stops the engine if
/// init() started it. Call from the thread that called init().
status shutdown() noexcept;
bool running() noexcept;

int worker_count() noexcept;
/// The worker running the caller (0..worker_count()-1), or -1 outside a worker.
int current_worker() noexcept;
/// VP of a worker.
int worker_vp(int worker) noexcept;
/// Name of the scheduling policy in use.
const char* policy_name() noexcept;

// --------------------------------------------------------------------------------------------
// Data

/// Registers memory the application owns; *out receives the handle. The memory must stay valid
/// until unregister().
status register_variable(data** out, void* ptr, std::size_t size) noexcept;
status register_vector(data** out, void* ptr, std::uint32_t nx, std::size_t elemsize) noexcept;
status register_matrix(data** out, void* ptr, std::uint32_t ld, std::uint32_t nx, std::uint32_t ny,
                       std::size_t elemsize) noexcept;
status register_block(data** out, void* ptr, std::uint32_t ldy, std::uint32_t ldz, std::uint32_t nx,
                      std::uint32_t ny, std::uint32_t nz, std::size_t elemsize) noexcept;
/// Waits until no submitted task uses d any more (may block), then frees the handle.
/// errc::busy, with a logged reason, when the application holds d acquired or when called from
/// inside a task (that would wait forever).
status unregister(data* d) noexcept;
/// Lets d go once no submitted task uses it any more (now if none does); does not wait. No
/// task may name d afterwards. errc::busy (logged) when d is already being unregistered.
status unregister_submit(data* d) noexcept;
/// The interface a codelet would receive.
void* interface_of(data* d) noexcept;
interface_id interface_of_kind(const data* d) noexcept;

/// Inferred dependencies for d (default true). Switching it off makes later tasks on d ignore
/// the submission order; tasks that conflict on d may then run together.
void set_sequential_consistency(data* d, bool on) noexcept;
bool sequential_consistency(const data* d) noexcept;
/// Default for handles registered later (default true).
void set_default_sequential_consistency(bool on) noexcept;
bool default_sequential_consistency() noexcept;

/// Takes d for the application in `mode`, in submission order like a task: waits (may block)
/// until every earlier conflicting task has finished; later conflicting tasks wait for
/// release(). errc::busy from inside a task.
status acquire(data* d, access_mode mode) noexcept;
/// Ends the latest acquire() of d. errc::invalid_argument when d is not acquired.
status release(data* d) noexcept;

// --------------------------------------------------------------------------------------------
// Tasks

/// What to run, on which data. Copied by submit().
struct task_desc {
    const codelet* cl = nullptr;  ///< nullptr: an empty task (synchronisation only)
    data* const* handles = nullptr;
    const access_mode* modes = nullptr;  ///< nullptr: the codelet's modes
    int nbuffers = 0;
    void* cl_arg = nullptr;
    int priority = default_priority;
    callback_fn callback = nullptr;  ///< runs on the worker after the task, before waiters wake
    void* callback_arg = nullptr;
    bool sequential_consistency = true;  ///< false: this task takes no inferred dependency
    const char* name = nullptr;          ///< shown in errors; the codelet's name by default
    bool use_tag = false;                ///< the task carries tag `tag` (see tags below)
    std::uint64_t tag = 0;
    /// Performance model (perfmodel.hpp): measured runs calibrate it and model-based policies
    /// consult it, indexed by `footprint` (history) or `size` (regressions).
    perfmodel* model = nullptr;
    std::uint32_t footprint = 0;
    std::size_t size = 0;
    /// Expected duration given by the application (a cost function), in µs; < 0: none.
    double cost_us = -1;
};

/// A new task, not yet submitted; the caller owns one reference (task_release()).
result<task*> task_create() noexcept;
/// Drops a reference; the task is freed once nothing uses it (a submitted task lives until it
/// has finished).
void task_release(task* t) noexcept;
/// Makes t wait for each of deps (created tasks, submitted or not, or finished ones). Call
/// before t is submitted.
status declare_deps(task* t, task* const* deps, int ndeps) noexcept;
/// Submits t: it runs once its inferred and declared dependencies are met. Does not block.
/// errc::invalid_argument (logged) for a buffer count that does not match the codelet, a null
/// handle, a codelet with no CPU implementation, or a task submitted twice; errc::busy for a
/// handle being unregistered.
status submit(task* t, const task_desc& desc) noexcept;
/// Waits until t has finished (callback included). May block; errc::busy from inside a task.
status task_wait(task* t) noexcept;
bool task_finished(const task* t) noexcept;
/// Whether submit() has accepted t (true from then on, also once t has finished).
bool task_submitted(const task* t) noexcept;
/// Waits until every submitted task has finished, including tasks submitted meanwhile.
status wait_for_all() noexcept;
/// Waits until at most n submitted tasks have not finished (may block): lets a submission loop
/// keep a bounded number of tasks in flight.
status wait_for_n_submitted(long n) noexcept;
/// Tasks submitted and not finished.
long tasks_in_flight() noexcept;

// --------------------------------------------------------------------------------------------
// Tags (StarPU's): a 64-bit name for the end of a task, or of something the application
// notifies. A tag is done when its task (task_desc::use_tag) has finished, or when
// tag_notify() is called; tags may depend on other tags, and then their task waits for those.

using tag_t = std::uint64_t;

/// Tag `id`'s task will wait for each tag of `deps` to be done. Declare before submitting it.
status tag_declare_deps(tag_t id, const tag_t* deps, int ndeps) noexcept;
/// Waits until tag `id` is done (may block; errc::busy from inside a task).
status tag_wait(tag_t id) noexcept;
/// Marks tag `id` done (for tags without a task). errc::busy if it is done or carried by a task.
status tag_notify(tag_t id) noexcept;
/// Makes a done tag reusable: its next task, or notification, is waited for anew.
status tag_restart(tag_t id) noexcept;
/// Forgets tag `id` (its dependencies included).
void tag_remove(tag_t id) noexcept;

}  // namespace mpc::tg
