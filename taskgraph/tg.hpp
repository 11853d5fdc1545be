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
/// A codelet that runs nowhere (StarPU's STARPU_NOWHERE): its tasks only order their data
/// accesses, like an empty task that holds buffers.
inline constexpr std::uint32_t where_nowhere = 1u << 0;

/// How a task accesses a buffer; the bit values are StarPU's (R = 1, W = 2, RW = 3).
/// - scratch: a buffer of the handle's shape for the task alone, contents undefined; no
///   dependency (one per task, allocated when it starts and freed when it ends).
/// - redux: a contribution to a reduction. Consecutive redux accesses run in parallel, each on
///   its worker's private copy (made by the handle's init function on first use); the next
///   other access first folds the copies into the data with the handle's reduction function
///   (set_reduction()). Needs sequential consistency on the handle and the task.
/// - commute (with write or rw): consecutive commute accesses run in any order among
///   themselves, one at a time, and stay ordered against the other accesses before and after.
enum access_mode : unsigned {
    access_none = 0,
    access_read = 1,
    access_write = 2,
    access_rw = 3,
    access_scratch = 4,
    access_redux = 8,
    access_commute = 16,
};
/// Whether m is a mode a task may use: R, W, RW, scratch, redux, W|commute, RW|commute.
bool valid_task_mode(unsigned m) noexcept;

/// Kinds of data interface; the numbers are StarPU's interface ids. Custom interfaces
/// (register_custom) use ids from first_custom_id up.
enum class interface_id : int {
    matrix = 0, block = 1, vector = 2, csr = 3, bcsr = 4, variable = 5, void_ = 6, multiformat = 7, coo = 8
};
inline constexpr int first_custom_id = 9;  ///< StarPU's STARPU_MAX_INTERFACE_ID
/// Whether handles of kind `id` keep their interface as a custom one (register_custom): the
/// custom kinds, and StarPU's multiformat interface, which the StarPU layer brings as one.
constexpr bool custom_storage(int id) noexcept {
    return id >= first_custom_id || id == static_cast<int>(interface_id::multiformat);
}

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

/// Compressed sparse rows: nrow rows, nnz non-zero values (nzval, elemsize bytes each), their
/// columns (colind) and the index of each row's first value (rowptr, nrow + 1 entries, from
/// firstentry).
struct csr_interface {
    interface_id id;
    std::uint32_t nnz;
    std::uint32_t nrow;
    std::uintptr_t nzval;
    std::uint32_t* colind;
    std::uint32_t* rowptr;
    std::uint32_t firstentry;
    std::size_t elemsize;
};

/// Compressed sparse rows of r x c blocks: nrow block rows, nnz blocks (nzval: r * c elements
/// each), the block column of each (colind), the index of each block row's first block
/// (rowptr, nrow + 1 entries).
struct bcsr_interface {
    interface_id id;
    std::uint32_t nnz;
    std::uint32_t nrow;
    std::uintptr_t nzval;
    std::uint32_t* colind;
    std::uint32_t* rowptr;
    std::uint32_t firstentry;
    std::uint32_t r;
    std::uint32_t c;
    std::size_t elemsize;
};

/// Coordinate lists: n_values values of an ny x nx matrix, each with its column and its row.
struct coo_interface {
    interface_id id;
    std::uint32_t* columns;
    std::uint32_t* rows;
    std::uintptr_t values;
    std::uint32_t nx;
    std::uint32_t ny;
    std::uint32_t n_values;
    std::size_t elemsize;
};

struct data;  ///< a registered piece of data (opaque)

/// How the runtime makes and frees a buffer shaped like a handle's interface: per-task SCRATCH
/// buffers, per-worker REDUX copies, and the memory of handles registered without any. The
/// built-in interfaces have theirs; custom interfaces bring one (register_custom).
struct interface_ops {
    std::size_t interface_size;  ///< bytes of the interface structure
    /// Fills the buffer pointers of `iface` (a copy of the handle's interface) with new memory.
    /// Returns the bytes allocated, or a negative value when the allocation failed.
    long (*allocate)(void* iface, const void* ctx) noexcept;
    /// Frees what allocate() put in iface.
    void (*release)(void* iface, const void* ctx) noexcept;
    /// Bytes of data handle d (whose interface is iface) describes: what allocate() takes.
    std::size_t (*size)(const void* iface, const void* ctx, const data* d) noexcept;
    /// Optional: called when the handle is freed, after release() of the runtime's memory.
    void (*forget)(data* d, const void* ctx) noexcept;
    const void* ctx;  ///< handed to the functions (a custom interface's own table)
    /// Optional: the interface's own footprint of d (a custom interface's footprint method),
    /// mixed into the data footprint that indexes performance models.
    std::uint32_t (*footprint)(const data* d, const void* ctx) noexcept = nullptr;
    /// Optional: whether a buffer made by allocate() for another handle of this kind (`made`,
    /// with its memory) may stand for a new buffer of `iface`'s shape (same ops, ctx and
    /// size() already checked). Set: freed scratch buffers and redux copies are kept per
    /// worker and reused (scratch_cache.cpp); nullptr: each is freed.
    bool (*same_shape)(const void* made, const void* iface, const void* ctx) noexcept = nullptr;
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

struct task;       ///< a task (opaque, reference-counted)
struct perfmodel;  ///< a performance model (perfmodel.hpp)
struct policy_entry;  ///< a scheduling policy's factory (policy.hpp)

// --------------------------------------------------------------------------------------------
// Runtime

struct heteroprio_config;

/// Options of init(); unset fields come from the environment, then the defaults.
struct config {
    /// CPU workers; -1: MPC_TG_NCPU, else STARPU_NCPU, else one per VP. 0 is refused (no worker).
    int ncpus = -1;
    /// Scheduling policy by name; nullptr: MPC_TG_SCHED, else STARPU_SCHED, else "eager".
    const char* sched = nullptr;
    /// When true, the fields above win over the environment (StarPU's
    /// precedence_over_environment_variables); by default the environment wins, as in StarPU.
    bool config_over_env = false;
    /// A policy of the application's (the StarPU API's starpu_conf::sched_policy): when set,
    /// it wins over `sched` and the environment.
    const policy_entry* custom_policy = nullptr;
    /// When the policy is heteroprio: fills its configuration (heteroprio.hpp) before the
    /// workers start (the StarPU API's starpu_conf::sched_policy_init); nullptr: the default
    /// buckets. A configuration that fails heteroprio_config::check() makes init() fail.
    void (*heteroprio_setup)(heteroprio_config* c, int nworkers) = nullptr;
    /// VPs left without a worker: that many fewer workers than ncpus (or than one per VP); none
    /// left is errc::unsupported. The workers take the last VPs, so the first ones are left.
    int reserve = 0;
    /// When not null, worker i runs on VP bindids[i % nbindids]; a VP that does not exist is
    /// errc::invalid_argument (logged). When init() starts the engine, it makes enough VPs for
    /// the largest, if the process has that many PUs.
    const unsigned* bindids = nullptr;
    int nbindids = 0;
    /// Calibration of the performance models (0, 1, 2; perfmodel.hpp); -1: MPC_TG_CALIBRATE,
    /// else STARPU_CALIBRATE, else 0. The environment wins unless config_over_env.
    int calibrate = -1;
    /// Called by a worker, on its VP, just before it parks for lack of work and when it is
    /// woken (StarPU's worker callbacks). Must not block.
    void (*going_to_sleep)(unsigned worker) = nullptr;
    void (*waking_up)(unsigned worker) = nullptr;
    /// Workers the application runs in threads of its own (StarPU's not_launched_drivers):
    /// their ids, 0 .. workers - 1 (another id is errc::invalid_argument, logged). The runtime
    /// starts no ULT for them; the application's thread runs their tasks through driver_init(),
    /// driver_run_once() or driver_run(), and driver_deinit().
    const int* app_workers = nullptr;
    int n_app_workers = 0;
};

/// Starts the runtime (the engine too when it is not running: the caller becomes the primary
/// ULT of VP 0). Calls nest: each init() needs one shutdown(). errc::unsupported when no worker
/// is configured, errc::invalid_argument for an unknown policy or a malformed variable.
status init(const config& c = {}) noexcept;
/// Waits for every submitted task (may block), stops the workers, and stops the engine if
/// init() started it. Call from the thread that called init().
status shutdown() noexcept;
bool running() noexcept;
/// Blocks until the runtime is up (an init() of another thread finished). May block.
void wait_initialized() noexcept;
/// Workers stop taking tasks until the matching resume_workers(); a task a worker takes
/// meanwhile waits in its hands. Nests. An unmatched resume_workers() is ignored (logged).
/// Neither blocks.
void pause_workers() noexcept;
void resume_workers() noexcept;
/// Pauses in force (0: none).
int pause_depth() noexcept;

int worker_count() noexcept;
/// The worker running the caller (0..worker_count()-1), or -1 outside a worker.
int current_worker() noexcept;
/// VP of a worker.
int worker_vp(int worker) noexcept;
/// Name of the scheduling policy in use.
const char* policy_name() noexcept;
/// The priorities the policy distinguishes, [min_priority, max_priority], except under a
/// heteroprio set up by the application, whose priorities are bucket numbers: [0, 0] then, the
/// range StarPU's contexts report unless the application sets one.
void priority_range(int* min, int* max) noexcept;

/// StarPU's driver API: a worker of config::app_workers runs in a thread of the application.
/// driver_init() makes the calling thread its driver (errc::invalid_argument, logged, for a
/// worker the runtime runs itself; errc::busy when a thread drives it already, or from inside
/// a task). driver_run_once() runs one task the worker may take, if there is one, on the
/// calling thread, which must be the driver (*ran: whether one ran; nullptr allowed).
/// driver_deinit() ends the calling thread's driving; the worker's tasks wait for a driver.
/// driver_run() is init, then tasks as they come (parking when there is none) until
/// drivers_request_termination() or shutdown(), then deinit. While a worker has no driver at
/// shutdown(), the thread shutting down runs its tasks (StarPU would wait for them forever).
status driver_init(int worker) noexcept;
status driver_run_once(int worker, bool* ran = nullptr) noexcept;
status driver_deinit(int worker) noexcept;
status driver_run(int worker) noexcept;
/// Ends driver_run() in every application thread (the next init() starts with none ended).
void drivers_request_termination() noexcept;
/// How the runtime makes and frees the memory of built-in handles it allocates (registered on
/// node -1, read back from disk, scratch buffers...): alloc sets *p and returns 0, or returns
/// non-zero for no memory; release gets the size alloc was given. nullptr (the default): the
/// runtime's own, 64-byte aligned. StarPU's starpu_malloc_set_hooks installs the application's.
struct memory_hooks {
    int (*alloc)(void** p, std::size_t n) noexcept = nullptr;
    void (*release)(void* p, std::size_t n) noexcept = nullptr;
};
void set_memory_hooks(const memory_hooks& h) noexcept;

/// Whether worker w is one the application runs (config::app_workers).
bool app_worker(int worker) noexcept;
/// Replace config::going_to_sleep / waking_up while running (nullptr: none); the workers read
/// them at their next park. They stay until the next init() sets the configuration's.
/// fn(arg, t, us) is called when a task starts whose duration is known (a model or a cost
/// function: us, its expected µs) for each submitted task t whose last unmet dependency it is:
/// t should be ready in about us (StarPU's notify_ready_soon). Called on the worker, before the
/// task runs; must not block. nullptr: none (the default).
void set_ready_soon_hook(void (*fn)(void* arg, task* t, double us), void* arg) noexcept;
/// The watchdog (MPC_TG_WATCHDOG_TIMEOUT / STARPU_WATCHDOG_TIMEOUT microseconds: tasks in
/// flight and none ended that long) calls hook(arg) instead of logging a warning (nullptr: the
/// warning). Kept across init()/shutdown(), as StarPU keeps it.
void set_watchdog_hook(void (*hook)(void*), void* arg) noexcept;
void set_going_to_sleep(void (*fn)(unsigned worker)) noexcept;
void set_waking_up(void (*fn)(unsigned worker)) noexcept;

// --------------------------------------------------------------------------------------------
// Profiling (StarPU's starpu_profiling.h is built on this)

/// Where one task's life went, in steady-clock nanoseconds (clock_ns()), written by the runtime
/// when the task's description points to such a record (task_desc::times) and it has not been
/// freed before the task finished. A stage the task did not go through stays 0 (an empty task
/// is never pushed nor run).
struct task_times {
    std::uint64_t submit = 0;
    std::uint64_t push_start = 0, push_end = 0;        ///< handed to the scheduler (or the worker's queue)
    std::uint64_t pop_start = 0, pop_end = 0;          ///< the worker's search that returned the task
    std::uint64_t fetch_start = 0, fetch_end = 0;      ///< its buffers made ready
    std::uint64_t start = 0, end = 0;                  ///< its function ran
    std::uint64_t release_start = 0, release_end = 0;  ///< its buffers given back
    int worker = -1;                                   ///< the worker that ran it
    double flops = 0;  ///< input: the task's operations, added to its worker's count
};

/// What a worker did since profiling was switched on or since the last worker_profile_take()
/// (nanoseconds): executing is the time in task functions; sleeping the time parked for
/// lack of work (not the short spin before parking).
struct worker_profile {
    std::uint64_t start_ns = 0;  ///< clock_ns() when the interval began
    std::uint64_t total_ns = 0;
    std::uint64_t executing_ns = 0;
    std::uint64_t sleeping_ns = 0;
    std::uint64_t tasks = 0;  ///< tasks run (counted whether profiling is on or not)
    double flops = 0;         ///< sum of task_times::flops of the tasks run while on
};

/// Switches the workers' time accounting on or off (before init() too); switching it on
/// starts every worker's interval again (counters reset). Off by default; MPC_TG_PROFILING=1
/// (or STARPU_PROFILING=1) switches it on at init(). Returns whether it was on.
bool set_profiling(bool on) noexcept;
bool profiling() noexcept;
/// Worker w's counters into *out (when out is not null), then a new interval for w.
/// errc::invalid_argument for a bad worker, errc::not_initialized when the runtime is down.
status worker_profile_take(int w, worker_profile* out) noexcept;
/// The clock of task_times and worker_profile (steady clock, ns), and its value at init().
std::uint64_t clock_ns() noexcept;
std::uint64_t started_ns() noexcept;

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
/// A CSR sparse matrix (csr_interface). rowptr holds nrow + 1 entries.
status register_csr(data** out, std::uint32_t nnz, std::uint32_t nrow, void* nzval, std::uint32_t* colind,
                    std::uint32_t* rowptr, std::uint32_t firstentry, std::size_t elemsize) noexcept;
/// A BCSR sparse matrix of r x c blocks (bcsr_interface). rowptr holds nrow + 1 entries.
status register_bcsr(data** out, std::uint32_t nnz, std::uint32_t nrow, void* nzval, std::uint32_t* colind,
                     std::uint32_t* rowptr, std::uint32_t firstentry, std::uint32_t r, std::uint32_t c,
                     std::size_t elemsize) noexcept;
/// A COO sparse matrix (coo_interface): n_values values with their columns and rows.
status register_coo(data** out, std::uint32_t nx, std::uint32_t ny, std::uint32_t n_values, std::uint32_t* columns,
                    std::uint32_t* rows, void* values, std::size_t elemsize) noexcept;
/// A handle of a custom interface: `iface` (ops.interface_size bytes) is copied into the handle;
/// `id` >= first_custom_id. The ops (and their ctx) must outlive the handle.
status register_custom(data** out, int id, const void* iface, const interface_ops& ops) noexcept;
/// A handle with no data (StarPU's void interface): tasks name it only to order themselves.
status register_void(data** out) noexcept;
/// d's data no longer holds a value (StarPU's invalidate): the next access that reads it runs
/// the handle's init method, when it has one. The caller holds d (an acquisition in W mode).
void mark_undefined(data* d) noexcept;
/// False while the runtime has not made the memory of an allocate_on_use() handle yet.
bool data_has_memory(const data* d) noexcept;
/// The handle has no memory of its own yet (StarPU's home node -1): the runtime allocates it,
/// through the interface's ops, at the first submission that needs it (which fails with
/// errc::no_memory if it cannot be had under the memory limit), and frees it with the handle.
/// Call right after registering, before any task names it.
status allocate_on_use(data* d) noexcept;
/// A new handle with src's interface (shape) and memory of its own, made by the runtime at the
/// first use (StarPU's starpu_data_register_same).
status register_same(data** out, const data* src) noexcept;
/// Interface structures of a handle for memory nodes other than main memory's: a sink that
/// a custom interface's registration may fill and nobody reads.
void* interface_sink(data* d) noexcept;
/// Bytes of data the handle describes.
std::size_t data_size(const data* d) noexcept;
/// The allocation ops of the handle's interface (a custom interface's, or the built-in ones).
const interface_ops* interface_ops_of(const data* d) noexcept;
/// Reduction functions for redux accesses: init(buffers = {copy}, init_arg) makes a worker's
/// copy neutral; redux(buffers = {into, from}, redux_arg) folds `from` into `into`. Either
/// may be nullptr: init alone also starts the handle's data when it holds no value (made by
/// the runtime, or invalidated), before the first access that reads it.
status set_reduction(data* d, cpu_fn redux, void* redux_arg, cpu_fn init, void* init_arg) noexcept;
/// A pointer the application attaches to the handle (StarPU's user_data).
void set_user_data(data* d, void* p) noexcept;
void* user_data(const data* d) noexcept;
/// The oldest live handle that is usable now (its memory made, not a parent partitioned
/// read-write, not a child of a plan that is off) and for which match(handle, key) is true,
/// or nullptr (starpu_data_lookup). Scans every live handle under the registry's lock; match
/// must not register or free handles.
data* find_handle(bool (*match)(data* d, const void* key), const void* key) noexcept;
/// A data access arbiter (StarPU's starpu_arbiter_t): the handles assigned to it are taken by
/// a task all at once or not at all, under the arbiter's lock (the centralised solution of the
/// dining philosophers), instead of one by one in address order, for their commute accesses
/// and the accesses without sequential consistency. A task whose handles belong to several
/// arbiters takes them arbiter by arbiter in address order. See arbiter.cpp.
struct arbiter;
result<arbiter*> arbiter_create() noexcept;
/// Before any access to d (errc::busy, logged, once a task or acquisition has used it);
/// nullptr gives d back to per-handle arbitration.
status assign_arbiter(data* d, arbiter* a) noexcept;
/// errc::busy (logged) while a registered handle is still assigned to `a`.
status arbiter_destroy(arbiter* a) noexcept;
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
/// acquire() only if nothing submitted before is in the way (every conflicting access has
/// finished): errc::busy otherwise, without waiting. On a handle without sequential
/// consistency, an acquisition racing with this one may still make it wait briefly. Does not
/// block otherwise; may be called from a task.
status acquire_try(data* d, access_mode mode) noexcept;
/// acquire() without waiting: `granted(arg)` runs once d is the application's (on the caller's
/// thread when nothing is in the way, else on the worker that ends the last conflicting task);
/// release() ends it as usual. `seq` false: no inferred order (only exclusion). May be called
/// from a task or callback.
status acquire_async(data* d, access_mode mode, callback_fn granted, void* arg, bool seq = true) noexcept;

// --------------------------------------------------------------------------------------------
// Partitioning: a handle cut into children, handles of their own with their own dependencies.
// A handle may have several partition plans (StarPU's asynchronous partitioning): at most one
// submitted read-write (then tasks may not name the parent), or several read-only (then the
// parent and those children may be read, not written). A task or acquisition naming a child of
// a plan that is not submitted, or the parent while plans are, switches the plans first
// (StarPU's implicit partitioning: partition/unpartition tasks in submission order); the
// children of partition() are switched only by partition()/unpartition().

/// Fills child i of n from the parent's interface (the child's interface is a copy of the
/// parent's before the call).
using fill_child_fn = void (*)(void* ctx, void* parent_iface, void* child_iface, int i, int n);
/// The kind of a child whose interface differs from its parent's (StarPU's get_child_ops: a
/// block of a BCSR matrix as a dense matrix, a row of a matrix as a vector).
struct child_kind {
    interface_id id{};    ///< a built-in kind, or a custom one (>= first_custom_id)
    interface_ops ops{};  ///< a custom kind's (copied into the child); unused for built-in kinds
};
/// Fills *out with child i's kind and returns true, or returns false: the parent's kind. A
/// child of another kind gets a zeroed interface before fill (not a copy of the parent's); a
/// built-in one's id field is set to its kind after fill.
using child_kind_fn = bool (*)(void* ctx, int i, child_kind* out);
/// Makes the n children of a new plan of `parent` (not usable until partition_submit()), of the
/// parent's kind unless `kind` says otherwise. errc::busy when the parent was partitioned by
/// partition(); errc::invalid_argument for an unknown kind or incomplete custom ops.
status partition_plan(data* parent, int n, fill_child_fn fill, void* ctx, data** children,
                      child_kind_fn kind = nullptr) noexcept;
/// The plan named by `which` (any of its children; nullptr: the handle's only plan) is used
/// from now on instead of the parent: its children follow every access to the parent submitted
/// before (none when !parent_seq). `readonly`: the children may only be read, and so may the
/// parent, beside other read-only plans. errc::busy (logged) when another plan is submitted
/// read-write, or read-only for a read-write submission. Does not block.
status partition_submit(data* parent, data* which = nullptr, bool readonly = false, bool parent_seq = true) noexcept;
/// A plan submitted read-only, the only one submitted, becomes read-write (after the readers of
/// the parent and of its children). errc::busy (logged) otherwise.
status partition_upgrade(data* parent, data* which) noexcept;
struct unpartition_options {
    bool to_readonly = false;  ///< back to the parent, the plan staying submitted read-only
    bool parent_seq = true;    ///< the parent's later accesses follow it
    callback_fn callback = nullptr;  ///< called when it is done
    void* callback_arg = nullptr;
};
/// Back to the parent: later accesses to the parent follow every access to the children
/// submitted before; the children may not be named any more (read only with to_readonly).
/// errc::invalid_argument (logged) when the plan is not submitted. Does not block.
status unpartition_submit(data* parent, data* which = nullptr, const unpartition_options& o = {}) noexcept;
/// Forgets a plan (unpartitioning it first if submitted) and frees its children once no task
/// uses them (may block). errc::busy when a child has plans of its own.
status partition_clean(data* parent, data* which = nullptr) noexcept;
/// plan + submit, and unpartition_submit + clean (StarPU's starpu_data_partition/unpartition):
/// the handle's only plan, switched by these calls alone.
status partition(data* parent, int n, fill_child_fn fill, void* ctx, child_kind_fn kind = nullptr) noexcept;
status unpartition(data* parent) noexcept;
/// Number of children of the handle's first plan (0 when none) and child i (nullptr when out of
/// range); the number of plans.
int nchildren(const data* d) noexcept;
data* child(const data* d, int i) noexcept;
int nplans(const data* d) noexcept;
/// Whether kids[0..n) are, in order, the children of one plan of `parent`.
bool is_plan(const data* parent, data* const* kids, int n) noexcept;
/// Switches off every plan submitted under d, the deepest first (StarPU's unpartition_submit_r).
status unpartition_all(data* d) noexcept;

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
    /// Per buffer: 0 when the task takes no inferred dependency on that buffer (nullptr: all do).
    const unsigned char* handles_seq = nullptr;
    callback_fn ready_callback = nullptr;  ///< runs when the task becomes ready, before it is queued
    void* ready_callback_arg = nullptr;
    callback_fn pop_callback = nullptr;  ///< runs on the worker just before the codelet
    void* pop_callback_arg = nullptr;
    const char* name = nullptr;          ///< shown in errors; the codelet's name by default
    bool use_tag = false;                ///< the task carries tag `tag` (see tags below)
    std::uint64_t tag = 0;
    /// The same work submitted again (StarPU's resubmitted task): if its tag is done, the tag
    /// starts over instead of staying done.
    bool tag_again = false;
    int worker = -1;                     ///< >= 0: only this worker runs the task
    /// Performance model (perfmodel.hpp): measured runs calibrate it and model-based policies
    /// consult it, indexed by `footprint` (history) or `size` (regressions).
    perfmodel* model = nullptr;
    std::uint32_t footprint = 0;
    std::size_t size = 0;
    /// Expected duration given by the application (a cost function), in µs; < 0: none.
    double cost_us = -1;
    /// A group of tasks to be placed together (StarPU's task bundle): model-based policies
    /// choose the worker for the group's expected length (bundle_length_hook), not the task's.
    const void* bundle = nullptr;
    /// Where to record the task's timestamps (profiling); the caller keeps it alive until the
    /// task has finished. nullptr: not recorded.
    task_times* times = nullptr;
    /// The scheduling context the task is submitted to (see context_create); 0: the initial
    /// context, every worker.
    int context = 0;
    /// A parallel task (StarPU's codelet type): 0 sequential, 1 SPMD (every member of the
    /// combined worker runs the function, with its rank), 2 fork-join (the first member runs it
    /// while the others wait, their CPUs left to its threads). It runs on a combined worker
    /// when a parallel policy (peager, pheft) or `worker` (a combined worker's id) puts it
    /// there, else on one worker as a sequential task.
    int parallel = 0;
    int max_parallelism = 1;  ///< the largest combined worker it may use
};

/// A new task, not yet submitted; the caller owns one reference (task_release()).
result<task*> task_create() noexcept;
/// Drops a reference; the task is freed once nothing uses it (a submitted task lives until it
/// has finished).
void task_release(task* t) noexcept;
/// Makes t wait for each of deps (created tasks, submitted or not, or finished ones). Call
/// before t is submitted.
status declare_deps(task* t, task* const* deps, int ndeps) noexcept;
/// End dependencies (StarPU's): t's end (callback, successors, waiters, handles) waits for n
/// calls of end_dep_release() besides its own run. Call before t ends.
status end_dep_add(task* t, int n) noexcept;
void end_dep_release(task* t) noexcept;
/// t's end waits for each of deps to end too (each may delay one task's end at a time:
/// errc::unsupported otherwise). Call before t ends.
status declare_end_deps(task* t, task* const* deps, int ndeps) noexcept;
/// Submits t: it runs once its inferred and declared dependencies are met. Does not block.
/// errc::invalid_argument (logged) for a buffer count that does not match the codelet, a null
/// handle, a codelet with no CPU implementation, or a task submitted twice; errc::busy for a
/// handle being unregistered.
status submit(task* t, const task_desc& desc) noexcept;
/// Waits until t has finished (callback included). May block; errc::busy from inside a task.
status task_wait(task* t) noexcept;
bool task_finished(const task* t) noexcept;
/// True once t's end has begun: its callback runs or has run (StarPU's terminated state, in
/// which the task may be submitted again, from its callback for instance).
bool task_ending(const task* t) noexcept;
/// The tasks that wait for t (its explicit and data successors) while t has not finished:
/// their count, the first `max` of them in out (referenced; task_release each). 0 once t has
/// finished.
int task_successors(task* t, task** out, int max) noexcept;
/// Whether submit() has accepted t (true from then on, also once t has finished).
bool task_submitted(const task* t) noexcept;
/// Waits until every submitted task has finished, including tasks submitted meanwhile.
status wait_for_all() noexcept;
/// Waits until at most n submitted tasks have not finished (may block): lets a submission loop
/// keep a bounded number of tasks in flight.
status wait_for_n_submitted(long n) noexcept;
/// Tasks submitted and not finished.
long tasks_in_flight() noexcept;
/// Tasks that are ready (their dependencies met, queued or running) and not finished: StarPU's
/// starpu_task_nready (not acquisitions, not empty tasks). Summed over per-VP counters.
long tasks_ready() noexcept;
/// Waits until tasks_ready() is 0 (StarPU's starpu_task_wait_for_no_ready); busy from a task.
status wait_for_no_ready() noexcept;

// --------------------------------------------------------------------------------------------
// Scheduling contexts (context.cpp; StarPU's sched_ctx)
//
// Context 0 holds every worker under the policy chosen at init; its members are fixed. A
// context created here holds a set of workers and a policy of its own for them: a task
// submitted to it (task_desc::context) runs on one of its members. A worker may be in several
// contexts; it serves them in turn. Changing a context's members moves the tasks it holds.

inline constexpr int max_contexts = 10;  ///< context ids are 0 .. max_contexts-1 (StarPU's count)

struct context_desc {
    const char* name = nullptr;
    /// Its workers; nworkers < 0: every worker. Ids that are no worker are logged and left out.
    const int* workers = nullptr;
    int nworkers = 0;
    /// Its policy; nullptr: none, the tasks run on the first member (StarPU's context without
    /// policy and its master).
    const policy_entry* policy = nullptr;
    void* app_policy = nullptr;  ///< policy_context::app_policy
    /// Without a policy: every member runs each task (as an SPMD task on the members, each
    /// with its rank; StarPU's STARPU_SCHED_CTX_AWAKE_WORKERS) instead of the first one.
    bool awake_workers = false;
};
/// A new context's id; errc::no_memory when max_contexts exist, errc::not_initialized when
/// the runtime does not run.
result<int> context_create(const context_desc& d) noexcept;
/// Waits for the context's tasks (its members first join its inheritor, if it has one),
/// then removes it. errc::invalid_argument for 0 or a context that does not exist;
/// errc::busy from a task.
status context_delete(int id) noexcept;
status context_add_workers(int id, const int* workers, int n) noexcept;
status context_remove_workers(int id, const int* workers, int n) noexcept;
/// Where the members go once the context is done (finished_submit, then its last task's
/// end) or deleted; -1: nowhere.
status context_set_inheritor(int id, int inheritor) noexcept;
int context_inheritor(int id) noexcept;
/// No more tasks will be submitted to the context: once none is in flight (at once when none
/// is), its members join its inheritor.
status context_finished_submit(int id) noexcept;
/// Waits until no task of the context is in flight (tasks submitted meanwhile included).
status wait_for_all_in_context(int id) noexcept;
/// Waits until at most n tasks of the context are in flight.
status wait_for_n_in_context(int id, long n) noexcept;
/// fn(id, arg) runs when the context is done (finished_submit, then its last task's end),
/// before its members join its inheritor.
status context_on_close(int id, void (*fn)(int, void*), void* arg) noexcept;
/// The members: their count, the first `max` in out.
int context_workers(int id, int* out, int max) noexcept;
bool context_has_worker(int id, int worker) noexcept;
bool context_exists(int id) noexcept;
/// The context's tasks in flight.
long context_tasks(int id) noexcept;
/// Its name ("init" for 0), nullptr when it does not exist.
const char* context_name(int id) noexcept;
/// Its policy's name; nullptr for none or a context that does not exist.
const char* context_policy_name(int id) noexcept;
/// The contexts worker w is in, as a bit mask (bit 0: context 0).
unsigned worker_contexts(int w) noexcept;
/// The priority of workers[0..n) in context id (StarPU's starpu_sched_ctx_set_priority; 0 by
/// default): a worker in several contexts looks for work in the higher first, and in turn among
/// equals. It holds for the worker while it is a member, and again if it joins anew.
status context_set_priority(int id, const int* workers, int n, unsigned priority) noexcept;
unsigned context_priority(int id, int worker) noexcept;

// --------------------------------------------------------------------------------------------
// Combined workers (parallel.cpp; StarPU's): groups of workers that run a parallel task
// together. Their ids follow the workers' (worker_count() + i). None exist until made, by the
// application or by find_worker_combinations (the parallel policies call it).

/// A new combined worker of workers[0..n) (n >= 2, distinct workers, the first is its master);
/// its id, or errc::invalid_argument (logged).
result<int> combined_worker_add(const int* workers, int n) noexcept;
int combined_worker_count() noexcept;
/// The members of combined worker id (their count; the first `max` in out); 0 for no such id.
int combined_worker_members(int id, int* out, int max) noexcept;
/// Makes the default combined workers once: the whole set of workers, each NUMA node's
/// workers when there are several, then halves of each group down to `min_size` workers
/// (StarPU's hwloc tree with its synthesized arity 2), sizes within [min_size, max_size].
void find_worker_combinations(int min_size, int max_size) noexcept;
/// The calling worker's combined worker while it runs a part of a parallel task: its id, size
/// and the caller's rank; otherwise the worker's own id, 1 and 0 (-1, 1, 0 outside workers).
void current_combined(int* id, int* size, int* rank) noexcept;

// --------------------------------------------------------------------------------------------
// Memory control (read at init from MPC_TG_* / STARPU_* variables, changeable afterwards)

/// Submission watermarks: a submission from the application that finds `max` tasks in flight
/// waits until at most `min` are (StarPU's STARPU_LIMIT_MAX/MIN_SUBMITTED_TASKS). max <= 0: no
/// limit; min < 0: max * 9 / 10.
void set_submission_limits(long max, long min) noexcept;
/// Memory the runtime may allocate for data (scratch buffers, redux copies, handles without
/// memory), in bytes; 0: no limit (StarPU's STARPU_LIMIT_CPU_MEM, in MiB). A submission that
/// needs more than is left waits while tasks in flight may give some back, and fails with
/// errc::no_memory (logged) when none can, or when called from a task.
void set_memory_limit(std::size_t bytes) noexcept;
std::size_t memory_limit() noexcept;
/// Bytes the runtime holds for data now, counting the buffers its per-worker caches keep
/// (memory_cached()): those are given back first when a reservation would exceed the limit.
std::size_t memory_used() noexcept;
/// The expected µs of a task group's members that no policy has placed yet (see
/// task_desc::bundle); set once by the StarPU layer.
void set_bundle_length_hook(double (*hook)(const void* bundle)) noexcept;
/// Memory the application accounts against the same limit (StarPU's starpu_memory_allocate
/// and starpu_malloc_flags(STARPU_MALLOC_COUNT)): `now` takes the bytes if they fit (no limit:
/// always), `reclaim` first frees the workers' cached buffers when they do not, `wait` waits
/// while tasks in flight may give memory back, `overflow` takes them whatever the limit.
/// errc::no_memory when they do not fit (`wait`: logged, when nothing in flight can give any
/// back, or when called from a task).
enum class account_how { now, reclaim, wait, overflow };
status account_memory(std::size_t bytes, account_how how) noexcept;
/// Gives back memory accounted with account_memory() (in one or several calls).
void unaccount_memory(std::size_t bytes) noexcept;
/// Waits until `bytes` more would fit under the limit, while tasks in flight may give memory
/// back; false (logged) when it gave up. Takes nothing.
bool wait_memory_room(std::size_t bytes) noexcept;
/// Bytes of freed scratch buffers and redux copies the workers keep for reuse (part of
/// memory_used()).
std::size_t memory_cached() noexcept;
/// Counters of the per-worker buffer caches (scratch buffers and redux copies), summed.
struct cache_stats {
    std::uint64_t hits = 0;       ///< buffers taken from a cache instead of allocated
    std::uint64_t misses = 0;     ///< cacheable buffers allocated (nothing of the shape cached)
    std::uint64_t evictions = 0;  ///< cached buffers freed (cache full, memory limit, flush)
    std::size_t entries = 0;      ///< buffers cached now
    std::size_t bytes = 0;        ///< memory_cached()
};
cache_stats scratch_cache_stats() noexcept;
/// Frees every cached buffer (shutdown does it too). Safe at any time.
void flush_scratch_cache() noexcept;
/// Buffers each worker keeps for reuse (MPC_TG_SCRATCH_CACHE, default 8, at most 16); 0: none.
void set_scratch_cache_slots(int n) noexcept;
/// A redux phase whose tasks made at least `copies` private copies (MPC_TG_REDUX_TREE,
/// default 3; 0: never) of a handle of at least `bytes` (MPC_TG_REDUX_TREE_BYTES, default
/// 16 KiB: below, a fold costs less than a task) is reduced by a tree of tasks (pairwise, log
/// depth) instead of one task folding them in turn.
void set_redux_tree(int copies, std::size_t bytes) noexcept;

// --------------------------------------------------------------------------------------------
// Tags (StarPU's): a 64-bit name for the end of a task, or of something the application
// notifies. A tag is done when the first task carrying it (task_desc::use_tag) has finished, or
// when tag_notify() is called; tags may depend on other tags, and then their tasks wait for
// those. Several tasks may carry one tag; a task carrying a done tag leaves it done unless it
// is submitted again (task_desc::tag_again), which starts the tag over.

using tag_t = std::uint64_t;

/// Tag `id`'s tasks will wait for each tag of `deps` to be done: each use of `id` waits for a
/// later completion of each dependency than its previous use did.
status tag_declare_deps(tag_t id, const tag_t* deps, int ndeps) noexcept;
/// Waits until tag `id` is done (may block; errc::busy from inside a task).
status tag_wait(tag_t id) noexcept;
/// Marks tag `id` done (nothing happens if it is done already).
status tag_notify(tag_t id) noexcept;
/// Marks tag `id` done (if it is not) and starts it over at once.
status tag_notify_restart(tag_t id) noexcept;
/// Starts a done tag over: its next task, or notification, is waited for anew.
status tag_restart(tag_t id) noexcept;
/// The last task that carried tag `id` (valid while the tag exists), or nullptr.
task* tag_task(tag_t id) noexcept;
/// Forgets tag `id` (its dependencies included).
void tag_remove(tag_t id) noexcept;
/// Forgets every tag (StarPU's shutdown does: a later starpu_init starts with none).
void tags_clear() noexcept;

}  // namespace mpc::tg
