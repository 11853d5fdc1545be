/// \file
/// StarPU 1.3 C API: the expert mode (progression and idle hooks, waking every worker), the
/// copy helpers of custom interfaces' copy methods, data-state queries and hints, the
/// per-worker scheduling mutex, and the transfer predictions of a machine whose only memory
/// node is main memory.

#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"
#include "taskgraph/trace.hpp"

using namespace mpc::tg;

namespace mpc::tg::detail {

std::atomic<int> g_idle_hooks{0};

namespace {

constexpr int max_hooks = 16;  // StarPU's table has as many
struct hook {
    std::atomic<unsigned (*)(void*)> fn{nullptr};
    std::atomic<void*> arg{nullptr};
};
hook g_hooks[max_hooks];
std::mutex g_hooks_lock;  // registration only; the workers read the slots without it

int add_hook(unsigned (*func)(void*), void* arg, const char* call) noexcept {
    if (func == nullptr) {
        MPC_LOG(error, tg, "%s: the hook function is NULL", call);
        return -1;
    }
    std::lock_guard<std::mutex> g(g_hooks_lock);
    for (int i = 0; i < max_hooks; ++i) {
        if (g_hooks[i].fn.load(std::memory_order_relaxed) == nullptr) {
            g_hooks[i].arg.store(arg, std::memory_order_relaxed);
            g_hooks[i].fn.store(func, std::memory_order_release);
            g_idle_hooks.fetch_add(1, std::memory_order_seq_cst);
            // Sleeping workers look at the hooks again (a worker about to sleep sees the count).
            starpu_wake_all_blocked_workers();
            return i;
        }
    }
    MPC_LOG(error, tg, "%s: all %d hook slots are taken", call, max_hooks);
    return -1;
}

void remove_hook(int id, const char* call) noexcept {
    std::lock_guard<std::mutex> g(g_hooks_lock);
    if (id < 0 || id >= max_hooks || g_hooks[id].fn.load(std::memory_order_relaxed) == nullptr) {
        MPC_LOG(error, tg, "%s: %d is not a registered hook", call, id);
        return;
    }
    g_hooks[id].fn.store(nullptr, std::memory_order_release);
    g_idle_hooks.fetch_sub(1, std::memory_order_release);
}

}  // namespace

bool run_idle_hooks() noexcept {
    bool may_block = true;
    for (hook& h : g_hooks) {
        unsigned (*fn)(void*) = h.fn.load(std::memory_order_acquire);
        if (fn != nullptr && fn(h.arg.load(std::memory_order_relaxed)) == 0) {
            may_block = false;
        }
    }
    return may_block;
}

}  // namespace mpc::tg::detail

namespace {

data* core(starpu_data_handle_t h) noexcept { return reinterpret_cast<data*>(h); }

bool main_ram(unsigned node, const char* call) noexcept {
    if (node == STARPU_MAIN_RAM) {
        return true;
    }
    MPC_LOG(error, tg, "%s: memory node %u does not exist (main memory, 0, is the only one)", call, node);
    return false;
}

bool nodes_ok(unsigned src, unsigned dst, const char* call) noexcept {
    return main_ram(src, call) && main_ram(dst, call);
}

char* at(uintptr_t base, size_t off) noexcept { return reinterpret_cast<char*>(base + off); }

/// numblocks blocks of blocksize bytes, ld_src / ld_dst apart (one memcpy when contiguous).
void copy2d(const char* s, char* d, size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst) noexcept {
    if (blocksize == ld_src && blocksize == ld_dst) {
        std::memcpy(d, s, blocksize * numblocks);
        return;
    }
    for (size_t i = 0; i < numblocks; ++i) {
        std::memcpy(d + i * ld_dst, s + i * ld_src, blocksize);
    }
}

/// Every id of a worker, or a message.
bool worker_ok(unsigned w, const char* call) noexcept {
    if (w < starpu_worker_get_count()) {
        return true;
    }
    MPC_LOG(error, tg, "%s: %u is not a worker id (%u workers)", call, w, starpu_worker_get_count());
    return false;
}

pthread_mutex_t* sched_mutex(int workerid, const char* call) noexcept {
    if (workerid < 0 || static_cast<unsigned>(workerid) >= starpu_worker_get_count()) {
        starpu::fatal(call, "not a worker id");
    }
    pthread_mutex_t* m = nullptr;
    pthread_cond_t* c = nullptr;
    starpu_worker_get_sched_condition(workerid, &m, &c);
    return m;
}

int self_worker(const char* call) noexcept {
    const int w = starpu_worker_get_id();
    if (w < 0) {
        starpu::fatal(call, "called outside a worker");
    }
    return w;
}

}  // namespace

extern "C" {

// ---- expert mode ------------------------------------------------------------------------------

void starpu_wake_all_blocked_workers(void) {
    const unsigned n = starpu_worker_get_count();
    for (unsigned w = 0; w < n; ++w) {
        detail::wake_worker(static_cast<int>(w));
    }
}

int starpu_progression_hook_register(unsigned (*func)(void* arg), void* arg) {
    return detail::add_hook(func, arg, "starpu_progression_hook_register");
}
void starpu_progression_hook_deregister(int hook_id) {
    detail::remove_hook(hook_id, "starpu_progression_hook_deregister");
}
int starpu_idle_hook_register(unsigned (*func)(void* arg), void* arg) {
    return detail::add_hook(func, arg, "starpu_idle_hook_register");
}
void starpu_idle_hook_deregister(int hook_id) { detail::remove_hook(hook_id, "starpu_idle_hook_deregister"); }

// ---- copies for interfaces' copy methods -------------------------------------------------------

int starpu_interface_copy(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                          unsigned dst_node, size_t size, void* /*async_data*/) {
    if (!nodes_ok(src_node, dst_node, "starpu_interface_copy")) {
        return -EINVAL;
    }
    std::memmove(at(dst, dst_offset), at(src, src_offset), size);
    return 0;
}

int starpu_interface_copy2d(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                            unsigned dst_node, size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst,
                            void* /*async_data*/) {
    if (!nodes_ok(src_node, dst_node, "starpu_interface_copy2d")) {
        return -EINVAL;
    }
    copy2d(at(src, src_offset), at(dst, dst_offset), blocksize, numblocks, ld_src, ld_dst);
    return 0;
}

int starpu_interface_copy3d(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                            unsigned dst_node, size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
                            size_t numblocks2, size_t ld2_src, size_t ld2_dst, void* /*async_data*/) {
    if (!nodes_ok(src_node, dst_node, "starpu_interface_copy3d")) {
        return -EINVAL;
    }
    const char* s = at(src, src_offset);
    char* d = at(dst, dst_offset);
    if (blocksize * numblocks1 == ld2_src && ld2_src == ld2_dst && blocksize == ld1_src && ld1_src == ld1_dst) {
        std::memcpy(d, s, blocksize * numblocks1 * numblocks2);  // contiguous
        return 0;
    }
    for (size_t j = 0; j < numblocks2; ++j) {
        copy2d(s + j * ld2_src, d + j * ld2_dst, blocksize, numblocks1, ld1_src, ld1_dst);
    }
    return 0;
}

int starpu_interface_copy4d(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                            unsigned dst_node, size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
                            size_t numblocks2, size_t ld2_src, size_t ld2_dst, size_t numblocks3, size_t ld3_src,
                            size_t ld3_dst, void* async_data) {
    if (!nodes_ok(src_node, dst_node, "starpu_interface_copy4d")) {
        return -EINVAL;
    }
    for (size_t k = 0; k < numblocks3; ++k) {
        starpu_interface_copy3d(src, src_offset + k * ld3_src, src_node, dst, dst_offset + k * ld3_dst, dst_node,
                                blocksize, numblocks1, ld1_src, ld1_dst, numblocks2, ld2_src, ld2_dst, async_data);
    }
    return 0;
}

void starpu_interface_start_driver_copy_async(unsigned /*src_node*/, unsigned /*dst_node*/, double* start) {
    if (start != nullptr) {
        *start = starpu_timing_now();
    }
}
void starpu_interface_end_driver_copy_async(unsigned /*src_node*/, unsigned /*dst_node*/, double /*start*/) {}
void starpu_interface_data_copy(unsigned /*src_node*/, unsigned /*dst_node*/, size_t /*size*/) {}

// ---- data: home node, sizes, state, hints -------------------------------------------------------

int starpu_data_get_home_node(starpu_data_handle_t handle) {
    return core(handle)->runtime_memory ? -1 : STARPU_MAIN_RAM;
}

size_t starpu_data_get_alloc_size(starpu_data_handle_t handle) {
    data* d = core(handle);
    if (const starpu_data_interface_ops* ops = starpu_data_get_interface_ops(handle);
        ops != nullptr && ops->get_alloc_size != nullptr && d->custom) {
        return ops->get_alloc_size(handle);
    }
    switch (interface_of_kind(d)) {
    case interface_id::vector:
        return static_cast<const vector_interface*>(interface_of(d))->allocsize;
    case interface_id::matrix:
        return static_cast<const matrix_interface*>(interface_of(d))->allocsize;
    default:
        return starpu_data_get_size(handle);
    }
}

void starpu_data_query_status(starpu_data_handle_t handle, int memory_node, int* is_allocated, int* is_valid,
                              int* is_requested) {
    data* d = core(handle);
    if (memory_node != STARPU_MAIN_RAM) {  // a disk: its copy exists, and holds the current value
        const bool there = memory_node > 0 && starpu::on_disk_node(d, static_cast<unsigned>(memory_node));
        bool valid = false;
        if (there) {
            mpc::spin_guard g(d->g.lock);
            valid = d->disk_valid && d->content.load(std::memory_order_acquire) == 0;
        }
        if (is_allocated != nullptr) {
            *is_allocated = there ? 1 : 0;
        }
        if (is_valid != nullptr) {
            *is_valid = valid ? 1 : 0;
        }
        if (is_requested != nullptr) {
            *is_requested = 0;
        }
        return;
    }
    const bool here = data_has_memory(d);
    if (is_allocated != nullptr) {
        *is_allocated = here ? 1 : 0;
    }
    if (is_valid != nullptr) {
        // Memory the runtime made holds no value until something writes it.
        *is_valid = here && d->content.load(std::memory_order_acquire) == 0 ? 1 : 0;
    }
    if (is_requested != nullptr) {
        *is_requested = 0;
    }
}

void starpu_data_advise_as_important(starpu_data_handle_t handle, unsigned is_important) {
    data* d = core(handle);
    mpc::spin_guard g(d->g.lock);
    d->important = is_important != 0;  // evicted to disk after the others
}

void starpu_data_set_ooc_flag(starpu_data_handle_t handle, unsigned flag) {
    core(handle)->ooc.store(flag != 0, std::memory_order_relaxed);
}
unsigned starpu_data_get_ooc_flag(starpu_data_handle_t handle) {
    return core(handle)->ooc.load(std::memory_order_relaxed) ? 1 : 0;
}

void starpu_data_set_name(starpu_data_handle_t handle, const char* name) {
    detail::trace_name_data(core(handle), name != nullptr ? name : "");
}

int starpu_data_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int /*prio*/) {
    return starpu_data_prefetch_on_node(handle, node, async);
}
int starpu_data_idle_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int /*prio*/) {
    return starpu_data_idle_prefetch_on_node(handle, node, async);
}

// ---- filters ------------------------------------------------------------------------------------

void starpu_filter_nparts_compute_chunk_size_and_offset(unsigned n, unsigned nparts, size_t elemsize, unsigned id,
                                                        unsigned ld, unsigned* chunk_size, size_t* offset) {
    // The first n % nparts parts get one element more.
    const unsigned base = n / nparts;
    const unsigned extra = n % nparts;
    *chunk_size = base + (id < extra ? 1 : 0);
    if (offset != nullptr) {
        *offset = (static_cast<size_t>(id) * base + (id < extra ? id : extra)) * ld * elemsize;
    }
}

// ---- tasks --------------------------------------------------------------------------------------

void starpu_create_callback_task(void (*callback)(void*), void* callback_arg) {
    starpu_task* t = starpu_task_create();
    t->cl = nullptr;
    t->callback_func = callback;
    t->callback_arg = callback_arg;
    t->name = "callback task";
    if (int rc = starpu_task_submit(t); rc != 0) {
        MPC_LOG(error, tg, "starpu_create_callback_task: submission failed (%d)", rc);
    }
}

// ---- transfers (one memory node) ----------------------------------------------------------------

double starpu_task_expected_data_transfer_time(unsigned memory_node, struct starpu_task* /*task*/) {
    return memory_node == STARPU_MAIN_RAM ? 0.0 : NAN;
}
double starpu_task_expected_data_transfer_time_for(struct starpu_task* /*task*/, unsigned /*worker*/) { return 0.0; }
double starpu_data_expected_transfer_time(starpu_data_handle_t /*handle*/, unsigned memory_node,
                                          enum starpu_data_access_mode /*mode*/) {
    return memory_node == STARPU_MAIN_RAM ? 0.0 : NAN;
}
double starpu_task_expected_conversion_time(struct starpu_task* /*task*/, struct starpu_perfmodel_arch* /*arch*/,
                                            unsigned /*nimpl*/) {
    return 0.0;
}
double starpu_transfer_bandwidth(unsigned src_node, unsigned dst_node) {
    return src_node == STARPU_MAIN_RAM && dst_node == STARPU_MAIN_RAM ? 0.0 : NAN;
}
double starpu_transfer_latency(unsigned src_node, unsigned dst_node) {
    return src_node == STARPU_MAIN_RAM && dst_node == STARPU_MAIN_RAM ? 0.0 : NAN;
}
double starpu_transfer_predict(unsigned src_node, unsigned dst_node, size_t /*size*/) {
    return src_node == dst_node ? 0.0 : NAN;
}

namespace {
/// The handles t reads, evicted to disk, read back (prefetch_memory; `idle`: free memory only).
int prefetch_inputs(struct starpu_task* task, unsigned node, bool idle) noexcept {
    if (task == nullptr) {
        MPC_LOG(error, tg, "starpu_prefetch_task_input_on_node: task is NULL");
        return -EINVAL;
    }
    if (!main_ram(node, "starpu_prefetch_task_input_on_node")) {
        return -EINVAL;
    }
    const int n = task->cl != nullptr ? STARPU_TASK_GET_NBUFFERS(task) : 0;
    for (int i = 0; i < n; ++i) {
        const unsigned m = STARPU_TASK_GET_MODE(task, i);
        if ((m & STARPU_R) != 0 && (m & (STARPU_SCRATCH | STARPU_REDUX)) == 0) {
            data* d = reinterpret_cast<data*>(STARPU_TASK_GET_HANDLE(task, i));
            detail::prefetch_memory(d, true, !idle);
        }
    }
    return 0;
}
}  // namespace

int starpu_prefetch_task_input_on_node_prio(struct starpu_task* task, unsigned node, int /*prio*/) {
    return prefetch_inputs(task, node, false);
}
int starpu_prefetch_task_input_on_node(struct starpu_task* task, unsigned node) {
    return prefetch_inputs(task, node, false);
}
int starpu_idle_prefetch_task_input_on_node(struct starpu_task* task, unsigned node) {
    return prefetch_inputs(task, node, true);
}
int starpu_idle_prefetch_task_input_on_node_prio(struct starpu_task* task, unsigned node, int /*prio*/) {
    return prefetch_inputs(task, node, true);
}
int starpu_prefetch_task_input_for_prio(struct starpu_task* task, unsigned worker, int prio) {
    if (!worker_ok(worker, "starpu_prefetch_task_input_for")) {
        return -EINVAL;
    }
    return starpu_prefetch_task_input_on_node_prio(task, starpu_worker_get_memory_node(worker), prio);
}
int starpu_prefetch_task_input_for(struct starpu_task* task, unsigned worker) {
    return starpu_prefetch_task_input_for_prio(task, worker, 0);
}
int starpu_idle_prefetch_task_input_for(struct starpu_task* task, unsigned worker) {
    return starpu_idle_prefetch_task_input_for_prio(task, worker, 0);
}
int starpu_idle_prefetch_task_input_for_prio(struct starpu_task* task, unsigned worker, int prio) {
    if (!worker_ok(worker, "starpu_idle_prefetch_task_input_for")) {
        return -EINVAL;
    }
    return starpu_idle_prefetch_task_input_on_node_prio(task, starpu_worker_get_memory_node(worker), prio);
}

// ---- the workers' scheduling mutex ---------------------------------------------------------------

void starpu_worker_lock(int workerid) { pthread_mutex_lock(sched_mutex(workerid, "starpu_worker_lock")); }
int starpu_worker_trylock(int workerid) {
    return pthread_mutex_trylock(sched_mutex(workerid, "starpu_worker_trylock"));
}
void starpu_worker_unlock(int workerid) { pthread_mutex_unlock(sched_mutex(workerid, "starpu_worker_unlock")); }
void starpu_worker_lock_self(void) { starpu_worker_lock(self_worker("starpu_worker_lock_self")); }
void starpu_worker_unlock_self(void) { starpu_worker_unlock(self_worker("starpu_worker_unlock_self")); }

}  // extern "C"
