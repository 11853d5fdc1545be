/// \file
/// Tasks: creation, explicit dependencies, submission, execution, completion and waiting
/// (see detail.hpp for the life of a task).

#include <cstring>
#include <new>
#include <utility>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/pool.hpp"

namespace mpc::tg {
namespace detail {

namespace {
constinit record_pool g_task_pool{sizeof(task)};
}  // namespace

record_pool& task_pool() noexcept { return g_task_pool; }

void task_ref(task* t) noexcept { t->refs.fetch_add(1, std::memory_order_relaxed); }

void task_unref(task* t) noexcept {
    if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        pool_delete(g_task_pool, t);
    }
}

void add_dependency(task* pred, task* succ) noexcept {
    if (pred == succ) {
        return;
    }
    spin_guard g(pred->g.lock);
    if (pred->state == task_state::done) {
        return;
    }
    if (!pred->succs.push_back(succ)) {
        MPC_LOG(fatal, tg, "no memory for a dependency of task %s", succ->name != nullptr ? succ->name : "");
        std::abort();
    }
    succ->ndeps.fetch_add(1, std::memory_order_relaxed);
    task_ref(succ);
    if (g_tracing) {
        trace_dependency(pred, succ);
    }
}

void dependency_met(task* t) noexcept {
    if (t->ndeps.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;
    }
    if (t->has_arbitrated) {
        arbitrate(t);
    } else {
        now_ready(t);
    }
}

void now_ready(task* t) noexcept {
    if (t->ready_fn != nullptr) {
        t->ready_fn(t->ready_arg);
    }
    if (t->kind == task_kind::acquire) {
        granted(t);
    } else if (t->fn == nullptr) {
        if (t->pop_fn != nullptr) {
            t->pop_fn(t->pop_arg);
        }
        complete(t);  // an empty task: nothing to run, its end is what others wait for
    } else {
        push_ready(t);
    }
}

namespace {
/// execute() while profiling, or for a task whose times are recorded: the same steps, stamped.
void execute_profiled(task* t, task_times* tt, int worker, void** v) noexcept {
    const bool prof = g_profiling.load(std::memory_order_relaxed);
    if (tt != nullptr) {
        tt->fetch_start = now_ns();
    }
    prepare_buffers(t, worker, v);
    const std::uint64_t start = now_ns();
    if (tt != nullptr) {
        tt->fetch_end = start;
        tt->start = start;
    }
    if (prof) {
        prof_exec_begin(start);
    }
    t->fn(v, t->cl_arg);
    const std::uint64_t end = now_ns();
    if (prof) {
        prof_exec_end(start, end, tt != nullptr ? tt->flops : 0.0);
    }
    task_ran(t, start, end);
    if (tt != nullptr) {
        tt->end = end;
        tt->release_start = end;
    }
    finish_buffers(t, worker, v);
    if (tt != nullptr) {
        tt->release_end = now_ns();
    }
    complete(t);
}
}  // namespace

void execute(task* t) noexcept {
    if (t->par != nullptr) [[unlikely]] {
        execute_part(t);  // the master's part of a parallel task
        return;
    }
    void* ifaces[max_buffers];
    std::unique_ptr<void*[]> more;
    void** v = ifaces;
    if (t->nbuffers > max_buffers) {
        more.reset(new (std::nothrow) void*[t->nbuffers]);
        if (!more) {
            MPC_LOG(fatal, tg, "task %s: no memory for its %d buffer pointers", t->name, t->nbuffers);
            std::abort();
        }
        v = more.get();
    }
    const int worker = current_worker();
    if (t->nimpls > 1) [[unlikely]] {
        pick_impl(t, worker);
    }
    if (task_times* tt = t->times; tt != nullptr || g_profiling.load(std::memory_order_relaxed)) [[unlikely]] {
        execute_profiled(t, tt, worker, v);
        return;
    }
    prepare_buffers(t, worker, v);
    if (t->pop_fn != nullptr) {
        t->pop_fn(t->pop_arg);
    }
    if (g_measure || t->model != nullptr) {
        std::uint64_t start = now_ns();
        t->fn(v, t->cl_arg);
        task_ran(t, start, now_ns());
    } else {
        t->fn(v, t->cl_arg);
        if (g_policy_done.load(std::memory_order_relaxed)) {
            task_ran(t, 0, 0);  // no clock read: only the model and the trace use durations
        }
    }
    finish_buffers(t, worker, v);
    complete(t);
}

void complete(task* t) noexcept {
    // End dependencies: n of them need n + 1 calls (the run and n releases); the last goes on.
    if (t->end_deps.load(std::memory_order_acquire) != 0 && t->end_deps.fetch_sub(1, std::memory_order_acq_rel) > 0) {
        return;
    }
    t->ending.store(true, std::memory_order_release);  // StarPU's "terminated": resubmission allowed
    // Counted out of tasks_ready() after its end is complete (after inflight_done: once none
    // is ready, every ready task's end is counted); taken now, as the callback may submit the
    // task again (push_ready then counts the new submission in).
    const bool was_ready = std::exchange(t->counted_ready, false);
    if (t->callback != nullptr) {
        // starpu_task_get_current() in the callback: on the worker that ran t it is t already
        // (its end comes right after its run there), else this ULT is told (an empty task,
        // or the last end dependency released elsewhere).
        if (t->ran_on >= 0 && !t->end_deps_used.load(std::memory_order_relaxed)) {
            t->callback(t->callback_arg);
        } else {
            task* prev = set_running_task(t);
            t->callback(t->callback_arg);
            set_running_task(prev);
        }
    }
    t->g.lock.lock();
    t->state = task_state::done;  // from now on nobody adds to t->succs
    task* end_rdep = t->end_rdep;
    t->end_rdep = nullptr;
    gate::wakeups w = t->g.notify_locked();
    t->g.lock.unlock();
    gate::deliver(w);
    if (t->has_arbitrated) {
        release_arbitrated(t);  // before detach: unregister may free a handle once unused
    }
    detach_buffers(t);
    if (t->tag_node != nullptr) {
        tag_task_ended(t);  // after the done state: a tag waiter may submit the task again
    }
    if (end_rdep != nullptr) {
        complete(end_rdep);  // one of its end dependencies
        task_unref(end_rdep);
    }
    if (t->mem_reserved != 0) {
        mem_release(t->mem_reserved);  // scratch buffers, or the redux copies a reduction freed
        t->mem_reserved = 0;
    }
    // Successors after the handles: an empty successor completes right here, and its own
    // successors recurse; chains of empty tasks are short in practice (synchronisation points).
    for (task* s : t->succs) {
        dependency_met(s);
        task_unref(s);
    }
    if (t->kind != task_kind::acquire) {
        if (t->kind == task_kind::normal) {
            ctx_task_done(t->ctx);
        }
        inflight_done();
    }
    if (was_ready) {
        ready_uncount();
    }
    task_unref(t);  // the runtime's reference
}

/// A redux access to h needs reduction methods and sequential consistency (the phase ends at
/// the next access in submission order).
status check_redux(data* h, bool task_seq, const char* name, int i) noexcept {
    spin_guard g(h->g.lock);
    if (h->redux_fn == nullptr || h->init_fn == nullptr) {
        MPC_LOG(error, tg, "task %s: buffer %d in REDUX mode, but the handle has no reduction methods "
                           "(set_reduction / starpu_data_set_reduction_methods)", name, i);
        return {errc::invalid_argument, "redux access without reduction methods"};
    }
    if (!h->seq || !task_seq) {
        MPC_LOG(error, tg, "task %s: buffer %d in REDUX mode without sequential consistency (the reduction "
                           "happens at the next access in submission order)", name, i);
        return {errc::unsupported, "redux access without sequential consistency"};
    }
    return {};
}

/// A handle named twice by one task, one of the accesses redux or commute: refused (the two
/// accesses cannot be combined into one). Only tasks with such modes pay for the check.
status check_special_twice(const task* t, int n, const char* name) noexcept {
    for (int i = 0; i < n; ++i) {
        if ((t->bufs[i].mode & (access_redux | access_commute)) == 0) {
            continue;
        }
        for (int j = 0; j < n; ++j) {
            if (j != i && t->bufs[j].d == t->bufs[i].d && (t->bufs[j].mode & access_scratch) == 0) {
                MPC_LOG(error, tg, "task %s: buffers %d and %d name the same handle, one in REDUX or COMMUTE mode",
                        name, i, j);
                return {errc::invalid_argument, "redux/commute handle named twice"};
            }
        }
    }
    return {};
}

/// Checks t's description against its codelet and copies it into t. Logs what is wrong.
status fill(task* t, const task_desc& d) noexcept {
    const char* name = d.name != nullptr ? d.name : (d.cl != nullptr && d.cl->name != nullptr ? d.cl->name : "(unnamed)");
    t->name = name;
    if (d.context != 0 && (d.context < 0 || d.context >= max_contexts || !ctx_live(d.context))) {
        MPC_LOG(error, tg, "task %s: scheduling context %d does not exist", name, d.context);
        return {errc::invalid_argument, "no such scheduling context"};
    }
    t->ctx = static_cast<std::uint8_t>(d.context);
    if (d.nbuffers < 0 || (d.nbuffers > 0 && d.handles == nullptr)) {
        MPC_LOG(error, tg, "task %s: %d buffers without handles", name, d.nbuffers);
        return {errc::invalid_argument, "bad buffer list"};
    }
    if (d.cl != nullptr) {
        if (d.cl->nbuffers != variable_nbuffers && d.cl->nbuffers != d.nbuffers) {
            MPC_LOG(error, tg, "task %s: its codelet takes %d buffers, the task gives %d", name, d.cl->nbuffers,
                    d.nbuffers);
            return {errc::invalid_argument, "buffer count does not match the codelet"};
        }
        if (d.cl->where != where_nowhere && ((d.cl->where & where_cpu) == 0 || d.cl->cpu_funcs[0] == nullptr)) {
            MPC_LOG(error, tg, "task %s: its codelet has no CPU implementation, and CPU workers are the only ones",
                    name);
            return {errc::unsupported, "no worker can run the codelet"};
        }
        if (d.modes == nullptr && d.nbuffers > max_buffers) {
            MPC_LOG(error, tg, "task %s: %d buffers need per-task modes (the codelet holds %d)", name, d.nbuffers,
                    max_buffers);
            return {errc::invalid_argument, "no modes for buffers beyond max_buffers"};
        }
    } else if (d.nbuffers != 0) {
        MPC_LOG(error, tg, "task %s: buffers without a codelet", name);
        return {errc::invalid_argument, "buffers without a codelet"};
    }
    if (d.nbuffers > max_buffers) {
        t->heap_bufs.reset(new (std::nothrow) buffer[d.nbuffers]);
        if (!t->heap_bufs) {
            return {errc::no_memory, "task buffers"};
        }
        t->bufs = t->heap_bufs.get();
    }
    for (int i = 0; i < d.nbuffers; ++i) {
        access_mode m = d.modes != nullptr ? d.modes[i] : d.cl->modes[i];
        if (d.handles[i] == nullptr || d.handles[i]->magic != data::live_magic) {
            MPC_LOG(error, tg, "task %s: buffer %d is not a registered handle", name, i);
            return {errc::invalid_argument, "bad handle"};
        }
        if (!valid_task_mode(m)) {
            MPC_LOG(error, tg, "task %s: buffer %d has access mode %u (supported: R, W, RW, SCRATCH, REDUX, "
                               "W|COMMUTE, RW|COMMUTE)", name, i, m);
            return {errc::invalid_argument, "bad access mode"};
        }
        if ((m & access_redux) != 0) {
            if (status st = check_redux(d.handles[i], d.sequential_consistency, name, i); !st.ok()) {
                return st;
            }
        }
        t->bufs[i] = {d.handles[i], m};
        t->bufs[i].no_infer = d.handles_seq != nullptr && d.handles_seq[i] == 0;
    }
    if (status st = check_special_twice(t, d.nbuffers, name); !st.ok()) {
        return st;
    }
    if (d.worker >= worker_count() && d.worker >= worker_count() + combined_worker_count()) {
        MPC_LOG(error, tg, "task %s: asked to run on worker %d, but there are %d workers and %d combined workers", name,
                d.worker, worker_count(), combined_worker_count());
        return {errc::invalid_argument, "no such worker"};
    }
    if (static_cast<unsigned>(d.parallel) > 2u) [[unlikely]] {
        MPC_LOG(error, tg, "task %s: parallel kind %d (0 sequential, 1 SPMD, 2 fork-join)", name, d.parallel);
        return {errc::invalid_argument, "bad parallel kind"};
    }
    t->worker = d.worker < 0 ? -1 : d.worker;
    t->par_kind = static_cast<std::uint8_t>(d.parallel);
    t->max_par = d.max_parallelism;  // t->par is null here: a parallel run clears it before the end
    t->nbuffers = d.nbuffers;
    t->has_arbitrated = false;
    t->arb_last = 0;
    t->fn = d.cl != nullptr && d.cl->where != where_nowhere ? d.cl->cpu_funcs[0] : nullptr;
    t->nimpls = 1;
    t->impl = 0;
    t->forced_impl = -1;
    if (t->fn != nullptr) {
        int last = 0;
        for (int k = 1; k < max_implementations; ++k) {
            last = d.cl->cpu_funcs[k] != nullptr ? k : last;
        }
        if (last > 0) [[unlikely]] {  // several implementations: the worker picks (pick_impl)
            std::copy(d.cl->cpu_funcs, d.cl->cpu_funcs + max_implementations, t->impl_fns);
            t->nimpls = static_cast<std::uint8_t>(last + 1);
        }
    }
    t->cl_arg = d.cl_arg;
    t->priority = d.priority;
    t->callback = d.callback;
    t->callback_arg = d.callback_arg;
    t->ready_fn = d.ready_callback;
    t->ready_arg = d.ready_callback_arg;
    t->pop_fn = d.pop_callback;
    t->pop_arg = d.pop_callback_arg;
    t->model = d.model;
    t->footprint = d.footprint;
    t->size = d.size;
    t->cost_us = d.cost_us;
    t->bundle = d.bundle;
    t->times = d.times;
    return {};
}

task* make_internal(const char* name) noexcept {
    task* t = pool_new<task>(g_task_pool);
    if (t == nullptr) {
        MPC_LOG(fatal, tg, "no memory for an internal task (%s)", name);
        std::abort();
    }
    t->kind = task_kind::internal;
    t->name = name;
    t->state = task_state::submitted;
    t->seq = next_seq();
    inflight_add();
    return t;  // its one reference is the runtime's, dropped by complete()
}

void launch_internal(task* t) noexcept {
    while (t != nullptr) {  // a reduction tree: its tasks are chained through `next`
        task* n = t->next;
        t->next = nullptr;
        dependency_met(t);  // t may be queued (next reused), run and freed from here on
        t = n;
    }
}

}  // namespace detail

bool valid_task_mode(unsigned m) noexcept {
    switch (m) {
    case access_read:
    case access_write:
    case access_rw:
    case access_scratch:
    case access_redux:
    case access_write | access_commute:
    case access_rw | access_commute:
        return true;
    default:
        return false;
    }
}

using namespace detail;

result<task*> task_create() noexcept {
    task* t = pool_new<task>(g_task_pool);
    if (t == nullptr) {
        return status{errc::no_memory, "task record"};
    }
    if (g_tracing) {
        trace_new_task(t);
    }
    return t;
}

void task_release(task* t) noexcept {
    if (t != nullptr) {
        task_unref(t);
    }
}

status declare_deps(task* t, task* const* deps, int ndeps) noexcept {
    if (t == nullptr || ndeps < 0 || (ndeps > 0 && deps == nullptr)) {
        return {errc::invalid_argument, "declare_deps: bad arguments"};
    }
    if (t->state != task_state::created) {
        MPC_LOG(error, tg, "declare_deps: task %s is already submitted", t->name != nullptr ? t->name : "");
        return {errc::invalid_argument, "dependencies declared after submission"};
    }
    for (int i = 0; i < ndeps; ++i) {
        if (deps[i] != nullptr) {
            add_dependency(deps[i], t);
        }
    }
    return {};
}

status end_dep_add(task* t, int n) noexcept {
    if (t == nullptr || n < 0) {
        return {errc::invalid_argument, "end_dep_add: bad arguments"};
    }
    if (task_finished(t)) {
        MPC_LOG(error, tg, "end_dep_add: task %s has ended already", t->name != nullptr ? t->name : "");
        return {errc::invalid_argument, "end dependency added to an ended task"};
    }
    t->end_deps_used.store(true, std::memory_order_relaxed);  // ordered by the add below
    t->end_deps.fetch_add(n, std::memory_order_acq_rel);
    return {};
}

void end_dep_release(task* t) noexcept { complete(t); }

status declare_end_deps(task* t, task* const* deps, int ndeps) noexcept {
    if (t == nullptr || ndeps < 0 || (ndeps > 0 && deps == nullptr)) {
        return {errc::invalid_argument, "declare_end_deps: bad arguments"};
    }
    if (status st = end_dep_add(t, ndeps); !st.ok()) {
        return st;
    }
    for (int i = 0; i < ndeps; ++i) {
        task* dep = deps[i];
        dep->g.lock.lock();
        const bool ended = dep->state == task_state::done;
        const bool taken = !ended && dep->end_rdep != nullptr;
        if (!ended && !taken) {
            task_ref(t);
            dep->end_rdep = t;
        }
        dep->g.lock.unlock();
        if (taken) {
            MPC_LOG(error, tg, "declare_end_deps: task %s already delays another task's end (one at a time, as in "
                               "StarPU)", dep->name != nullptr ? dep->name : "");
            end_dep_release(t);
            return {errc::unsupported, "a task delaying the end of two tasks"};
        }
        if (ended) {
            end_dep_release(t);
        }
    }
    return {};
}

status submit(task* t, const task_desc& d) noexcept {
    if (!running()) {
        MPC_LOG(error, tg, "task submitted while the task runtime is not running (call init first)");
        return {errc::not_initialized, "task runtime not running"};
    }
    if (t == nullptr) {
        return {errc::invalid_argument, "null task"};
    }
    if (!in_task()) {
        throttle_submission();  // at the high watermark: wait for the low one
    }
    if (d.times != nullptr) {
        d.times->submit = now_ns();
    }
    t->g.lock.lock();
    bool fresh = t->state == task_state::created;
    if (fresh) {
        t->state = task_state::submitted;
    }
    t->g.lock.unlock();
    if (!fresh) {
        MPC_LOG(error, tg, "task %s submitted twice", t->name != nullptr ? t->name : "");
        return {errc::invalid_argument, "task submitted twice"};
    }
    status st = fill(t, d);
    if (st.ok()) {
        st = reserve_task_memory(t);  // may wait for memory that tasks in flight give back
    }
    if (st.ok()) {
        st = attach_buffers(t, d.sequential_consistency);
    }
    unpin_buffers(t);  // counted as a user now (or not submitted): eviction may look at it again
    if (!st.ok()) {
        if (t->mem_reserved != 0) {
            mem_release(t->mem_reserved);
            t->mem_reserved = 0;
        }
        t->g.lock.lock();
        t->state = task_state::created;  // may be fixed and submitted again
        t->g.lock.unlock();
        return st;
    }
    if (d.use_tag) {
        if (status ts = tag_attach(t, d.tag, d.tag_again); !ts.ok()) {
            MPC_LOG(error, tg, "task %s runs without its tag: %s", t->name, ts.reason());  // no memory
        }
    }
    t->seq = next_seq();
    task_ref(t);  // the runtime's, dropped by complete()
    inflight_add();
    ctx_task_added(t->ctx);
    dependency_met(t);  // the submission guard
    return {};
}

bool task_finished(const task* t) noexcept {
    auto* m = const_cast<task*>(t);
    spin_guard g(m->g.lock);
    return m->state == task_state::done;
}

bool task_ending(const task* t) noexcept { return t->ending.load(std::memory_order_acquire); }

int task_successors(task* t, task** out, int max) noexcept {
    spin_guard g(t->g.lock);
    if (t->state == task_state::done) {
        return 0;
    }
    const int n = static_cast<int>(t->succs.size());
    for (int i = 0; i < n && i < max; ++i) {
        task_ref(t->succs[static_cast<std::size_t>(i)]);
        out[i] = t->succs[static_cast<std::size_t>(i)];
    }
    return n;
}

bool task_submitted(const task* t) noexcept {
    auto* m = const_cast<task*>(t);
    spin_guard g(m->g.lock);
    return m->state != task_state::created;
}

status task_wait(task* t) noexcept {
    if (t == nullptr) {
        return {errc::invalid_argument, "null task"};
    }
    if (in_task()) {
        MPC_LOG(error, tg, "task_wait called from inside a task or callback: it would wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    t->g.lock.lock();
    if (t->state == task_state::created) {
        t->g.lock.unlock();
        return {errc::invalid_argument, "task not submitted"};
    }
    t->g.wait_locked([t] { return t->state == task_state::done; }, "mpc::tg::task_wait");
    return {};
}

void detail::wait_done(task* t) noexcept {
    t->g.lock.lock();
    t->g.wait_locked([t] { return t->state == task_state::done; }, "mpc::tg::tag_wait");
}

}  // namespace mpc::tg
