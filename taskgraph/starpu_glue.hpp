/// \file
/// Shared helpers of the StarPU C API files (starpu_*.cpp): error mapping and fatal errors.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "lib/status.hpp"
#include "taskgraph/tg.hpp"

struct starpu_task;
struct starpu_sched_policy;
struct starpu_data_interface_ops;
struct starpu_sched_component;

namespace mpc::tg {
struct heteroprio_config;
}

namespace mpc::tg::starpu {

/// 0, or the negative errno value StarPU returns for the same failure.
int errno_of(const status& st) noexcept;
/// Ends the program with one line naming the call and the reason, as StarPU's assertions do,
/// for misuse that a void function cannot report.
[[noreturn]] void fatal(const char* call, const char* reason) noexcept;
/// The flags starpu_malloc_on_node() uses on main memory (starpu_malloc_on_node_set_default_flags;
/// STARPU_MALLOC_PINNED by default, without StarPU's STARPU_MALLOC_COUNT: the runtime accounts
/// the memory of the handles it allocates itself, and a custom interface's allocate method
/// calls starpu_malloc_on_node inside that account).
int on_node_flags() noexcept;
/// Disk memory nodes (starpu_disk.cpp): how many are registered (nodes 1..count), whether
/// `node` is one, STARPU_DISK_SWAP's disk (starpu_init), every disk unplugged (starpu_shutdown),
/// d's home on disk `node` in the backend's object `obj` (a built-in interface registered there),
/// and whether d has a copy on disk `node`.
int disk_count() noexcept;
bool is_disk_node(int node) noexcept;
void disk_swap_from_env() noexcept;
void disks_unplug() noexcept;
void home_on_disk(data* d, unsigned node, void* obj, std::size_t size) noexcept;
bool on_disk_node(const data* d, unsigned node) noexcept;
/// starpu_task_submit().
int submit(starpu_task* t) noexcept;
/// A job number not given yet (starpu_task_get_job_id's counter).
unsigned long new_job_id() noexcept;
/// Drops the workerorder records (starpu_shutdown: orders count from 1 again).
void forget_worker_orders() noexcept;
/// Drops the application threads' bindings (starpu_shutdown).
void forget_bindings() noexcept;
/// Takes t out of its bundle, if any (cleaning or destroying it).
void leave_bundle(starpu_task* t) noexcept;
/// Fills d's model fields from t's codelet's performance model (starpu_perfmodel.cpp); d's
/// handles and buffer count must be set.
void fill_model(starpu_task* t, task_desc* d) noexcept;
/// The starpu_task a core task stands for (submitted through starpu_task_submit), or nullptr
/// (a task the runtime made itself).
starpu_task* api_task_of(const task* t) noexcept;
/// Profiling (starpu_profiling.cpp): the times record of a submission of t (nullptr when
/// profiling is off; t->profiling_info made on first need); t's dates from the record at its
/// end, before the callback, and the callback's own (end: after it); t's record freed.
task_times* profile_for_submit(starpu_task* t) noexcept;
void profile_task_end(starpu_task* t) noexcept;
void profile_callback(starpu_task* t, bool end) noexcept;
void profile_free(starpu_task* t) noexcept;
/// Whether worker w may run t (its workerids bitmap, its codelet's can_execute).
bool worker_may_run(unsigned w, starpu_task* t) noexcept;
/// The application's policy now running (starpu_sched.cpp), or nullptr.
starpu_sched_policy* user_policy() noexcept;
/// The policy table entry for an application's policy, to pass in config::custom_policy;
/// -EINVAL (logged) for a policy without push_task.
int user_policy_entry(starpu_sched_policy* ops, const policy_entry** out) noexcept;
/// The ops table of a built-in interface id (starpu_interface_*_ops), or nullptr.
starpu_data_interface_ops* builtin_ops(int id) noexcept;
/// The core's ops for a custom StarPU interface (its table rides along as their context): its
/// allocate/free_data_on_node, get_(alloc_)size, unregister_data_handle and footprint.
interface_ops core_ops_of(const starpu_data_interface_ops* ops) noexcept;
/// The workers of the application's policy's context (known from its init_sched on, before
/// the runtime counts as running).
int policy_workers() noexcept;
/// Worker `worker` was told to look for work (kicked: it was asleep and is woken), by a call of
/// the application's policy (starpu_wake_worker_*, a worker component taking a task): what
/// starpu_sched.cpp's push() needs to know whom more to wake.
void note_wake(int worker, bool kicked) noexcept;
/// The members of a composed component (starpu_composed.cpp), top first; nullptr when `c` is
/// not one (a one-pair recipe gives its component itself, which is not).
const std::vector<starpu_sched_component*>* composed_chain(starpu_sched_component* c) noexcept;
/// heteroprio's setup from starpu_conf::sched_policy_init (starpu_heteroprio.cpp):
/// set_policy_init() records the callback, heteroprio_setup() is config::heteroprio_setup, and
/// heteroprio_setup_workers() is the worker count while the callback runs (0 otherwise).
void set_policy_init(void (*init)(unsigned)) noexcept;
void (*policy_init_of_ctx0() noexcept)(unsigned);
/// The application's policy running scheduling context ctx (starpu_sched.cpp), or nullptr.
starpu_sched_policy* user_policy_of(unsigned ctx) noexcept;
/// Whether ctx names no scheduling context (logged, naming `call`).
bool ctx_unknown(unsigned ctx, const char* call) noexcept;
/// The context a task without one goes to: the thread's (starpu_sched_ctx_set_context), else 0.
unsigned submit_context() noexcept;
/// starpu_bound.cpp: whether tasks are being recorded (starpu_bound_start), and the record of
/// one submitted task.
extern std::atomic<bool> g_bound_on;
inline bool bound_recording() noexcept { return g_bound_on.load(std::memory_order_relaxed); }
void bound_record(starpu_task* t) noexcept;
void heteroprio_setup(heteroprio_config* c, int nworkers) noexcept;
int heteroprio_setup_workers() noexcept;

/// The rows of a dense built-in interface: `count` runs of `len` bytes, run i at base + off(i).
struct dense_layout {
    char* base = nullptr;
    std::size_t len = 0;
    std::size_t count = 0;
    std::size_t ld = 0;     ///< bytes between rows
    std::size_t ny = 1;     ///< rows per plane (blocks)
    std::size_t ldz = 0;    ///< bytes between planes (blocks)
    char* run(std::size_t i) const noexcept { return base + (i % ny) * ld + (i / ny) * ldz; }
};
/// The layout of interface `iface` of StarPU interface id `id`; false when it is not dense
/// (CSR, custom).
bool dense_of(void* iface, int id, dense_layout* out) noexcept;
/// The three arrays of a sparse built-in interface (CSR, BCSR: values, column indices, row
/// pointers; COO: values, columns, rows) and their bytes, in pack order; false for others.
bool sparse_arrays_of(void* iface, int id, void* arrays[3], std::size_t bytes[3]) noexcept;

/// With codelet->specific_nodes: -EINVAL (logged) when a buffer's node (nodes[i] or dyn_nodes[i])
/// is none of main memory's names (STARPU_MAIN_RAM, STARPU_SPECIFIC_NODE_LOCAL/CPU/SLOW); else 0.
int check_nodes(const starpu_codelet* cl, int nbuffers) noexcept;
}  // namespace mpc::tg::starpu
