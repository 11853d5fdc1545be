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
#include "scheduler/sync.hpp"
#include "taskgraph/gate.hpp"
#include "taskgraph/small_list.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg {

struct buffer {
    data* d;
    access_mode mode;
    bool arbitrated = false;  ///< taken at run time (no inferred order on it): see arbitrate()
    bool no_infer = false;    ///< the task takes no inferred dependency on this buffer
    bool pinned = false;      ///< ensure_memory() pinned d's memory until attach (unpin_buffers)
};

/// alias: one member's part of a parallel task other than its master's (parallel.cpp).
enum class task_kind : std::uint8_t { normal, acquire, internal, alias };
struct par_state;
enum class task_state : std::uint8_t { created, submitted, done };

struct task {
    std::atomic<int> refs{1};
    std::atomic<int> ndeps{1};  ///< unmet dependencies + the submission guard
    task_kind kind = task_kind::normal;
    task_state state = task_state::created;  ///< under g.lock
    bool granted = false;                    ///< acquisitions: ready; under g.lock
    bool try_only = false;                   ///< acquire_try(): refused rather than waiting
    std::uint8_t ctx = 0;                    ///< its scheduling context (context.cpp)
    std::uint16_t ctx_gen = 0;               ///< the context's policy that took it (its generation)
    std::uint8_t par_kind = 0;               ///< task_desc::parallel (0: sequential)
    int max_par = 1;                         ///< task_desc::max_parallelism
    int par_rank = 0;                        ///< an alias's rank in its combined worker
    par_state* par = nullptr;                ///< while run by a combined worker (parallel.cpp)

    cpu_fn fn = nullptr;  ///< nullptr: nothing to run (empty task)
    /// A codelet with several implementations (nimpls > 1: its cpu_funcs, holes allowed): the
    /// worker picks one just before the run (detail::pick_impl: the one a policy set in
    /// forced_impl, else the best the performance model predicts, else the first it may run)
    /// and `impl` says which ran. nimpls == 1: fn only, impl 0.
    cpu_fn impl_fns[max_implementations] = {};
    std::uint8_t nimpls = 1;
    std::uint8_t impl = 0;
    std::int8_t forced_impl = -1;
    bool counted_ready = false;  ///< counted in tasks_ready() from push_ready() to complete()
    const char* name = nullptr;
    void* cl_arg = nullptr;
    int priority = default_priority;
    callback_fn callback = nullptr;
    void* callback_arg = nullptr;
    std::uint64_t seq = 0;  ///< submission number, for FIFO order among equals
    int worker = -1;        ///< >= 0: only this worker may run it (the runtime's per-worker queue)
    int ran_on = -1;        ///< the worker that runs it, set just before its run
    std::atomic<bool> end_deps_used{false};  ///< end_dep_add() was called: its end may come from another ULT
    std::size_t mem_reserved = 0;  ///< bytes of the memory limit held until the task ends (scratch)

    int nbuffers = 0;
    buffer* bufs = inline_bufs;  ///< inline_bufs, or heap_bufs beyond max_buffers
    buffer inline_bufs[max_buffers];
    std::unique_ptr<buffer[]> heap_bufs;

    detail::gate g;              ///< guards state, granted, succs; task_wait() waits here
    detail::small_list<task*, 2> succs;  ///< each holds a reference; not changed once the task is done

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
    const void* bundle = nullptr;  ///< task_desc::bundle
    double predicted_us = 0;    ///< what the policy expected when it placed the task
    int sched_worker = -1;      ///< the worker a placing policy chose
    std::uint64_t trace_id = 0; ///< non-zero when traced (trace.cpp)
    task_times* times = nullptr;  ///< task_desc::times (profiling)
    std::atomic<std::uint8_t> push_stamp{0};  ///< who writes times->push_end (runtime.cpp)

    // Tags (tags.cpp).
    task* tag_node = nullptr;  ///< the tag instance this task's end fires (referenced), or nullptr
    bool tag_fired = false;    ///< a tag instance's node: fired already (under the tags' lock)
    bool resubmitted = false;  ///< the C API's record of a task submitted again (starpu_task.cpp)
    std::atomic<unsigned long> job_id{0};  ///< starpu_task_get_job_id's answer, 0 until asked
    std::atomic<bool> ending{false};  ///< its end has begun (callback running or done): it may be submitted again

    // End dependencies (StarPU's end deps): complete() returns at once while end_deps > 0,
    // taking one off; end_rdep's count drops when this task ends (referenced; under g.lock).
    std::atomic<int> end_deps{0};
    task* end_rdep = nullptr;
    callback_fn ready_fn = nullptr;  ///< run when the task becomes ready (StarPU's prologue)
    void* ready_arg = nullptr;
    callback_fn pop_fn = nullptr;    ///< run by the worker just before fn (StarPU's pop prologue)
    void* pop_arg = nullptr;
};

/// Where a handle's interface structure lives: inline for the built-in interfaces, on the heap
/// (with a sink for other memory nodes) for custom ones.
union builtin_iface {
    variable_interface var;
    vector_interface vec;
    matrix_interface mat;
    block_interface blk;
    csr_interface csr;
    bcsr_interface bcsr;
    coo_interface coo;
};

struct data;
/// A planned partition (partition.cpp): its children, and whether it is switched on.
struct partition_plan_rec {
    std::vector<data*> kids;
    enum class state : std::uint8_t { off, ro, rw } st = state::off;
    bool sync = false;  ///< made by partition() (StarPU's starpu_data_partition): no implicit switch
};

/// A data access arbiter (tg.hpp, arbiter.cpp).
struct arbiter {
    spinlock lock;
    sched::detail::fifo<task> waiting;  ///< tasks that could not take all their handles of it
    long handles = 0;                   ///< registered handles assigned to it (under lock)
};

struct data {
    static constexpr std::uint32_t live_magic = 0x74676461;  // "tgda"
    std::uint32_t magic = live_magic;
    interface_id id{};
    builtin_iface iface{};
    void* ifp = &iface;                   ///< the interface codelets receive
    std::unique_ptr<std::byte[]> custom;  ///< a custom interface, then its sink
    const interface_ops* ops = nullptr;   ///< allocation of buffers shaped like it
    interface_ops custom_ops{};           ///< a custom interface's (ops points here)
    /// allocate_on_use() and not made yet: the first use makes it (read without the lock by
    /// every submission: the common case costs one load).
    std::atomic<bool> needs_memory{false};
    bool allocating = false;              ///< ... being made now (ensure_memory)
    bool allocated = false;               ///< ... made (freed with the handle)
    bool fresh = false;                   ///< ... and nothing has accessed it yet (under g.lock)
    void* user = nullptr;                 ///< user_data
    data* reg_prev = nullptr;             ///< the registry of live handles, oldest first
    data* reg_next = nullptr;             ///< (data.cpp, under its lock)
    bool reg_listed = false;
    /// Where it was registered, for lookups that are scoped (StarPU's OpenMP tasks and regions
    /// each see the handles registered in them): g_data_scope's answer then, else nullptr.
    const void* scope = nullptr;
    /// The application's coordinates of the data (starpu_data_set_coordinates: a tile's place
    /// in a matrix, for traces), up to four.
    int coords[4] = {};
    unsigned ncoords = 0;
    /// Registered on node -1 (the runtime makes the memory): starpu_data_get_home_node.
    bool runtime_memory = false;
    std::atomic<bool> ooc{true};        ///< starpu_data_set_ooc_flag (no disk node: recorded)

    detail::gate g;  ///< guards what follows; unregister() waits here for users == 0
    bool seq = true;
    bool unregistering = false;
    bool free_when_unused = false;  ///< unregister_submit(): the last user frees the handle
    long users = 0;  ///< submitted, unfinished tasks and acquisitions naming this handle
    task* last_writer = nullptr;   ///< referenced
    std::vector<task*> readers;    ///< readers since last_writer, referenced
    std::vector<task*> acquired;   ///< the application's open acquisitions, referenced
    int grants_running = 0;        ///< asynchronous acquisitions' grant callbacks running now

    // Arbitration: who holds the data now, and the tasks waiting for it (FIFO). With an
    // arbiter, the arbiter's lock guards arb_readers and arb_writer and its queue is used.
    arbiter* arb = nullptr;
    bool ever_used = false;  ///< under g.lock: a task or acquisition has named it
    int arb_readers = 0;
    bool arb_writer = false;
    sched::detail::fifo<task> arb_waiters;

    // Redux accesses (modes.cpp): the open phase's tasks and the workers' private copies.
    cpu_fn redux_fn = nullptr;
    void* redux_arg = nullptr;
    cpu_fn init_fn = nullptr;
    void* init_arg = nullptr;
    /// 0: the data holds a value; 1: it holds none yet (memory made by the runtime, or the
    /// handle invalidated): the first access that reads it runs init_fn, when there is one,
    /// as StarPU initialises such a handle with its reduction init codelet; 2: that runs now;
    /// 3 (content_on_disk): its main-memory copy is made but its value is still the disk
    /// copy's, read by the first access that reads it (the worker about to run a task, or
    /// ensure_memory() for any other use); 4 (content_loading): that read runs now, on a
    /// helper thread started by the submission or in the access; 5 (content_lost): the read
    /// failed (logged; an access that reads it ends the program).
    std::atomic<int> content{0};
    std::vector<task*> redux_tasks;        ///< referenced; the phase ends at the next other access
    std::unique_ptr<void*[]> copies;       ///< per worker: an interface on its private memory
    std::size_t redux_reserved = 0;        ///< memory limit held for the open phase's copies
    int redux_copies = 0;                  ///< copies reserved for (at most one per worker)
    /// The workers whose copy exists, in the order the copies were made (copies_made of them):
    /// positions 1..n of the reduction tree. Written by the phase's tasks, read by its reduction.
    std::unique_ptr<int[]> copy_order;
    std::atomic<int> copies_made{0};
    // Commute accesses: the open group (referenced), ordered after what came before.
    std::vector<task*> commute_group;

    // Partitioning (partition.cpp), under partition.cpp's lock and g.lock. A handle may have
    // several plans; at most one is switched on read-write, or several read-only.
    data* parent = nullptr;
    std::vector<std::unique_ptr<partition_plan_rec>> plans;  ///< planned partitions
    partition_plan_rec* sibs = nullptr;  ///< a child: the plan it belongs to
    int nactive = 0;                     ///< plans switched on
    bool partitioned = false;     ///< a plan is on read-write: tasks may not name it
    bool ro_partitioned = false;  ///< plans are on read-only: tasks may only read it
    bool child_off = false;       ///< a child whose plan is not switched on: not usable
    bool child_ro = false;        ///< a child of a plan switched on read-only: read only
    /// A parent with plans of partition_plan() or a child of one: an access may switch plans
    /// first (partition_access()). Read without the locks at every submission.
    std::atomic<bool> plan_involved{false};

    // Out of core (data.cpp "Eviction", starpu_disk.cpp): the data may also live on a disk
    // node, where the memory limit evicts the main-memory copy of an idle handle whose memory
    // the runtime made, or where the handle was registered (its home).
    void* spill = nullptr;       ///< the disk layer's record of the disk copy, or nullptr
    bool disk_valid = false;     ///< under g.lock: the disk copy holds the current value
    bool evicting = false;       ///< under g.lock: the main-memory copy is being written out
    bool cleaning = false;       ///< under g.lock: ... written out ahead of eviction, kept (write-behind)
    std::uint32_t writers = 0;       ///< under g.lock: writing accesses attached so far
    std::uint32_t clean_writers = 0; ///< under g.lock: `writers` when write-behind began
    int pins = 0;                ///< under g.lock: submissions between ensure_memory and attach
    std::uint64_t last_use = 0;  ///< under g.lock: when a task or acquisition last named it
    bool important = false;      ///< under g.lock: evicted after the others (advise_as_important)
    sched::wait_list loaded;     ///< accesses waiting for a read back from disk (content_loading)
    std::atomic<int> loads_out{0};  ///< reads on a helper that may still touch d (their wake-up)
};

namespace detail {

void task_ref(task* t) noexcept;
void task_unref(task* t) noexcept;
/// The scope a handle registered now belongs to (set while StarPU's OpenMP support runs), or
/// nullptr: handles are then found from anywhere.
extern std::atomic<const void* (*)()> g_data_scope;
/// Makes a registered handle, now complete, visible to find_handle (destroy_data removes it).
void enlist(data* d) noexcept;
inline status listed(status st, data** out) noexcept {
    if (st.ok()) {
        enlist(*out);
    }
    return st;
}
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
/// With end dependencies pending, only counts one of them down (see end_dep_add()).
void complete(task* t) noexcept;

/// Waits (may block) until t is done, whether or not it has been submitted yet.
void wait_done(task* t) noexcept;
/// Before t (carrying `id`) is submitted: makes t wait for the tags `id` depends on and, unless
/// the tag is done already, makes t's end fire it (t->tag_node). `again`: t is a task submitted
/// anew (StarPU's resubmission): a done tag starts a fresh instance. errc::no_memory only.
status tag_attach(task* t, std::uint64_t id, bool again) noexcept;
/// t, which carried a tag (t->tag_node set), has ended: fires the tag unless it is done already.
void tag_task_ended(task* t) noexcept;

/// Whether buffer mode m has no place in the handle's history (scratch).
inline bool untracked(unsigned m) noexcept { return (m & access_scratch) != 0; }

/// Called with d->g.lock held, before an access in `mode` enters d's history: ends an open redux
/// phase (an internal reduction task that becomes the last writer) or commute group (an empty
/// task after all its members) unless the access continues it. Returns a task to launch with
/// launch_internal() once the lock is released, or nullptr.
task* close_phases(data* d, unsigned mode) noexcept;
/// Ends a run (a redux phase's tasks or a commute group): `closer` after every member, whose
/// references the run held are dropped.
void after_all(std::vector<task*>& members, task* closer) noexcept;
/// Ends d's open redux phase (d->g.lock held): the reduction task, or tree of tasks
/// (reduction.cpp), after every task of the phase; its last task becomes the last writer.
/// Returns the first task to launch_internal() (the others are chained behind it).
task* make_reduction(data* d) noexcept;
/// A buffer of d's shape for `worker` (from its cache, else allocated; aborts when the system
/// allocator fails: the bytes were reserved at submission), and its end: into the worker's
/// cache (returns the bytes the cache holds now) or freed (returns 0; worker -1: always).
void* new_copy(data* d, int worker) noexcept;
std::size_t free_copy(data* d, void* c, int worker) noexcept;
/// Records a redux or commute access of t to d (d->g.lock held); false for another mode.
bool infer_special(data* d, unsigned mode, task* t) noexcept;
/// The dependencies of a writer on d's history (readers, else the last writer) for t, which
/// becomes the last writer when `become_writer`. d->g.lock held.
void infer_write(data* d, task* t, bool become_writer) noexcept;
/// Makes an internal task (kind internal, submitted, in flight, guard held) named `name`.
task* make_internal(const char* name) noexcept;
/// Drops an internal task's submission guard: it runs (or completes) once its deps are met.
/// Internal tasks chained through `next` (a reduction tree, before launch) are launched too.
void launch_internal(task* t) noexcept;
/// Memory reservations against the limit; reserve may wait (see set_memory_limit()).
status mem_reserve(std::size_t bytes, const char* what) noexcept;
void mem_release(std::size_t bytes) noexcept;
/// Before submission: waits at the high watermark (submission limits).
void throttle_submission() noexcept;
/// Reserves what t's scratch buffers and redux copies need (may wait); sets t->mem_reserved.
status reserve_task_memory(task* t) noexcept;
/// Waits until done(arg) (re-checked whenever wake_in_flight_waiters() is called or no task is
/// in flight any more); false when it still does not hold with nothing in flight. May block.
bool wait_in_flight(bool (*done)(void*), void* arg, const char* what) noexcept;
void wake_in_flight_waiters() noexcept;
/// Per-task preparation of the interfaces a codelet receives: scratch buffers made, redux
/// copies found or made on `worker`. finish_buffers() frees the scratch buffers (into the
/// worker's cache when it keeps them: t->mem_reserved then drops by their bytes).
void prepare_buffers(task* t, int worker, void** v) noexcept;
/// Before an access in mode m to d's data: a write-only access gives it a value; one that
/// reads data holding none runs the init method first (once, whoever else reads at once).
void settle_content(data* d, unsigned m) noexcept;
void finish_buffers(task* t, int worker, void** v) noexcept;
/// Per-worker buffer cache (scratch_cache.cpp). cache_take: a cached buffer of d's shape made
/// for `worker`'s use (its bytes given back: the caller's reservation covers it), or nullptr.
/// cache_put: keeps `iface` (a buffer of d's shape) for reuse; returns the bytes the cache now
/// holds against the limit (the caller gives back that much less), 0 when it did not keep it.
void* cache_take(const data* d, int worker) noexcept;
std::size_t cache_put(const data* d, void* iface, int worker) noexcept;
/// Frees cached buffers, oldest first, until `want` bytes went back (0: all); returns them.
std::size_t cache_evict(std::size_t want) noexcept;
/// While on (counted), nothing is cached: set by a reservation that waits for memory.
void cache_pressure(bool on) noexcept;
/// Frees a handle's runtime-made memory and redux copies (at unregister).
void free_data_memory(data* d) noexcept;
/// Makes the memory of an allocate_on_use() handle if it has none yet (may wait for memory),
/// reading its disk copy back when the memory limit evicted it. With `pinned`, while disks
/// exist, also pins the memory (no eviction) until unpin_buffers(): *pinned says whether it did.
/// `defer_load` (a task's submission): the disk copy is not read before the call returns; a
/// helper thread starts reading it when the task `reads` it (sched::blocking_start), else, or
/// without helpers, the worker that runs the first task reading it does (content_on_disk),
/// so that submission goes on and the reads overlap the tasks running. Without `defer_load`, a
/// value still on disk is read before the call returns.
status ensure_memory(data* d, bool* pinned = nullptr, bool defer_load = false, bool reads = true) noexcept;
inline constexpr int content_on_disk = 3;
inline constexpr int content_loading = 4;
inline constexpr int content_lost = 5;
/// Before an access to d's data whose value is not in memory yet (content >= content_on_disk):
/// one that `reads` it waits for a read in flight, or reads it back now (once; an access at
/// the same time waits for that read); a write-only one drops the disk's value. May yield.
void load_deferred(data* d, bool reads) noexcept;
/// starpu_data_prefetch_on_node() to main memory: stamps d as used now (stamp_use) and, when
/// d was evicted, makes its memory again
/// and reads its disk copy back, on a helper thread when `async` (else here), taking memory
/// under the limit without waiting: evicting other idle handles when `evict`, only what is free
/// otherwise (idle prefetch). A hint: when it cannot (no room, d busy, nothing on disk), it
/// does nothing and the next use reads as usual. May yield (a synchronous read).
void prefetch_memory(data* d, bool async, bool evict) noexcept;
/// Stamps d as used now in eviction's order (least recently used first), when disks exist.
void stamp_use(data* d) noexcept;
/// Waits until no read back from disk is in flight for d, its helper's wake-up of the waiters
/// included (unregistration: d is freed next). May yield.
void wait_no_load(data* d) noexcept;
/// Several implementations: which one t runs on `worker` (-1: any) and its expected µs (NaN:
/// not calibrated; chosen then, so that it is); pick_impl sets t->impl and t->fn from it. The
/// StarPU layer's filter says whether the worker may run implementation k (can_execute).
double best_impl(const task* t, int worker, int* impl) noexcept;
void pick_impl(task* t, int worker) noexcept;
extern std::atomic<bool (*)(const task*, int, int)> g_impl_filter;
/// Counts t into tasks_ready() (push_ready); ready_uncount() counts one out (its end).
void ready_count(task* t) noexcept;
void ready_uncount() noexcept;
/// Drops the pins ensure_memory() put on t's buffers (after attach_buffers, or a failure).
void unpin_buffers(task* t) noexcept;
/// Drops one pin of d (taken under d->g.lock: ++d->pins); tells a reservation waiting for
/// memory when d becomes evictable by it.
void unpin(data* d) noexcept;

/// The disk layer (starpu_disk.cpp), installed when the first disk node is registered. Each is
/// called with no lock held. store: writes the main-memory copy of d (it holds a value; d is
/// marked evicting, or is being freed) to its disk copy, making one in d->spill if it has none;
/// false (logged) when it cannot (no room on the disks, an I/O error). load: reads d's disk copy
/// into its main-memory copy, just made. retire: d is being freed, its main-memory copy still
/// there; a disk copy the runtime made goes, and a home on disk first gets the newer
/// main-memory value back when `ram_newer`.
struct spill_ops {
    bool (*store)(data* d) noexcept;
    bool (*load)(data* d) noexcept;
    void (*retire)(data* d, bool ram_newer) noexcept;
};
void set_spill_ops(const spill_ops* o) noexcept;
const spill_ops* spill_hooks() noexcept;
/// Evicts idle handles' main-memory copies to disk, least recently used first, until `want`
/// bytes went back; returns the bytes given back (0 without disks).
std::size_t spill_evict(std::size_t want) noexcept;
/// Counts changes that may make eviction possible (a handle's last user gone) while somebody
/// waits for memory (spill_waiting()), so that a waiter can try again.
unsigned spill_epoch() noexcept;
/// Write-behind jobs out (data.cpp, drop_user): each makes a handle clean, then evictable.
int cleaning_out() noexcept;
void spill_waiting(bool on) noexcept;
/// A new handle record of kind id (built-in ops set for built-in kinds).
status new_handle(data** out, interface_id id) noexcept;
/// Before a task or acquisition accessing d (write: in a writing mode) enters d's history: when
/// d has plans or is a planned child, switches the plans (partition/unpartition tasks) so that
/// d may be accessed so (StarPU's implicit partitioning). No lock held.
void partition_access(data* d, bool write) noexcept;
/// infer() of data.cpp for an internal task: t's access in `mode` enters d's history (lock held).
void infer_access(data* d, access_mode mode, task* t) noexcept;
/// Called by unregister() (no lock held): the handle may go if it is not partitioned.
status check_unpartitioned(data* d, const char* call) noexcept;
/// Enters t's accesses into the handles' histories (inferred dependencies) and counts t as a
/// user of each. errc::busy (logged) when a handle is being unregistered; then nothing is done.
status attach_buffers(task* t, bool infer) noexcept;
/// t no longer uses its handles (unregister may proceed once no task does).
void detach_buffers(task* t) noexcept;
/// One user less on d; the last one lets unregister() go on (or frees d after
/// unregister_submit()).
void drop_user(data* d) noexcept;
/// An acquisition is ready: it becomes the application's (d->acquired), its waiter wakes, its
/// callback (acquire_async) runs.
void granted(task* a) noexcept;
/// Frees a handle nobody uses any more (its history, memory, record).
void destroy_data(data* d) noexcept;
void drop_history(data* d) noexcept;
/// errc::invalid_argument (logged) unless d looks like a registered handle.
status live(const data* d, const char* call) noexcept;
/// The allocation ops of a built-in interface (interfaces.cpp).
const interface_ops* builtin_ops(interface_id id) noexcept;

/// Whether execute() measures every task (a trace or a summary); tasks with a performance
/// model are measured in any case.
extern bool g_measure;
/// Whether the policy wants done() after every task (policy::measures()); an untimed task
/// reaches it through task_ran(t, 0, 0): a duration of 0, which such policies do not read.
extern std::atomic<bool> g_policy_done;
/// A task's function ran on the calling worker from `start_ns` to `end_ns` (steady clock):
/// feeds the policy, the model, the trace and the summary. Called before complete().
void task_ran(task* t, std::uint64_t start_ns, std::uint64_t end_ns) noexcept;
std::uint64_t now_ns() noexcept;
/// Profiling (runtime.cpp): whether the workers account their time (set_profiling()); the
/// calling worker starts a task function at `now`, or ran one from start to end.
extern std::atomic<bool> g_profiling;
void prof_exec_begin(std::uint64_t now) noexcept;
void prof_exec_end(std::uint64_t start, std::uint64_t end, double flops) noexcept;
/// A worker pops a task whose times are recorded, at `now` (settles push_end with the pusher).
void close_push_stamp(task* t, task_times* tt, std::uint64_t now) noexcept;
/// Trace hooks (trace.cpp): an id for a new task, and a dependency between two traced tasks.
extern bool g_tracing;
void trace_new_task(task* t) noexcept;
void trace_dependency(const task* pred, const task* succ) noexcept;

/// Hands a ready task to the policy and wakes a worker for it.
void push_ready(task* t) noexcept;
/// Puts a ready task in worker w's own queue (served before the policy), at the front or the
/// back, and wakes w. errc::invalid_argument for a bad worker.
status push_local(task* t, int w, bool front) noexcept;
/// Wakes worker w if it sleeps; true if it did.
bool wake_worker(int w) noexcept;
/// Registered progression/idle hooks (starpu_expert.cpp): how many; run_idle_hooks() calls
/// each and returns false when one asked the workers not to sleep (returned 0).
extern std::atomic<int> g_idle_hooks;
bool run_idle_hooks() noexcept;
/// Takes t's arbitrated handles (from where it stopped); once it holds them all, t is ready
/// (scheduled, or granted for an acquisition). Otherwise t waits in a handle's queue and
/// continues when that handle is released.
void arbitrate(task* t) noexcept;
/// Gives back t's arbitrated handles and continues the tasks that were waiting for them.
void release_arbitrated(task* t) noexcept;
/// True when the caller runs inside a task or callback (blocking calls would deadlock).
bool in_task() noexcept;
/// The task the calling worker runs (its codelet or its callback), nullptr outside one.
task* running_task() noexcept;
/// Makes t the task starpu_task_get_current() answers on this ULT (its callback is about to
/// run here: an empty task ends on whichever ULT made it ready); returns the previous one, to
/// put back after the callback.
task* set_running_task(task* t) noexcept;
/// The submission counter and in-flight accounting of the runtime.
std::uint64_t next_seq() noexcept;
void inflight_add() noexcept;
void inflight_done() noexcept;

// Scheduling contexts (context.cpp) as the runtime sees them.
std::uint32_t ctx_mask(int w) noexcept;  ///< contexts other than 0 that worker w serves
bool ctx_prios_set() noexcept;               ///< context_set_priority() was ever called
unsigned ctx_prio(int id, int w) noexcept;   ///< worker w's priority in context id
bool ctx_live(int id) noexcept;
void ctx_push(task* t) noexcept;  ///< t->ctx != 0
task* ctx_pop(int id, int w) noexcept;
task* ctx_pop_idle(int id, int w) noexcept;
bool ctx_may_have_work(int id, int w) noexcept;
void ctx_starting(task* t, int w) noexcept;
void ctx_done(task* t, int w, double us) noexcept;
void ctx_pinned(task* t, int w) noexcept;
/// Context 0's own task count (context.cpp) and the highest count one of its waiters waits
/// for (-1: none): inline, as the counts of every task's submission and end.
extern std::atomic<long> g_ctx0_count;
extern std::atomic<long> g_ctx0_notify;
void ctx_task_added_slow(int id) noexcept;
void ctx_task_done_slow(int id, long left) noexcept;
inline void ctx_task_added(int id) noexcept {
    if (id == 0) [[likely]] {
        g_ctx0_count.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    ctx_task_added_slow(id);
}
inline void ctx_task_done(int id) noexcept {
    if (id == 0) [[likely]] {
        const long left = g_ctx0_count.fetch_sub(1, std::memory_order_seq_cst) - 1;
        if (left > g_ctx0_notify.load(std::memory_order_seq_cst)) [[likely]] {
            return;  // nobody waits for this count
        }
        ctx_task_done_slow(0, left);
        return;
    }
    ctx_task_done_slow(id, 0);
}
void ctx_stop_all() noexcept;  ///< at shutdown, once no task is in flight

// Parallel tasks (parallel.cpp).
/// Runs t on combined worker `combined` (an id >= worker_count()): its master part and one
/// alias per other member go to the members' own queues, in one order for every member.
void dispatch_parallel(task* t, int combined) noexcept;
/// The same on members[0..k) (kind: task_desc::parallel's values, 0: the task's own); combined
/// is the id the parts report (-1: each worker its own, as StarPU's awake contexts).
void dispatch_on(task* t, const int* members, int k, int combined, int kind) noexcept;
/// Whether t may run on several workers (an SPMD or fork-join codelet with max_parallelism > 1).
inline bool parallel_capable(const task* t) noexcept { return t->par_kind != 0 && t->max_par > 1; }
/// Runs a part of a parallel task (t->par set: the master or an alias) on the calling worker.
void execute_part(task* t) noexcept;
/// The calling worker's combined worker while it runs a part: its id, size and the rank.
void set_combined(int id, int size, int rank) noexcept;
void combined_reset() noexcept;  ///< at shutdown
/// From inside a task on a worker: runs one task this worker could take (its own queue, then
/// the policy's) on the caller's stack, and returns true; false when there is none, or the
/// caller is no worker. A wait that must let other tasks progress (OpenMP's task scheduling
/// points: barriers, taskwait) calls it in turn with its own check.
bool help_one() noexcept;

}  // namespace detail
}  // namespace mpc::tg
