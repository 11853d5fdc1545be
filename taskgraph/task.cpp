/// \file
/// Tasks: creation, explicit dependencies, submission, execution, completion and waiting
/// (see detail.hpp for the life of a task).

#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace detail {

void task_ref(task* t) noexcept { t->refs.fetch_add(1, std::memory_order_relaxed); }

void task_unref(task* t) noexcept {
    if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete t;
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
    succ->ndeps.fetch_add(1, std::memory_order_relaxed);
    task_ref(succ);
    pred->succs.push_back(succ);
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
    if (t->kind == task_kind::acquire) {
        t->g.lock.lock();
        t->granted = true;
        gate::wakeups w = t->g.notify_locked();
        t->g.lock.unlock();
        gate::deliver(w);
    } else if (t->fn == nullptr) {
        complete(t);  // an empty task: nothing to run, its end is what others wait for
    } else {
        push_ready(t);
    }
}

void execute(task* t) noexcept {
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
    for (int i = 0; i < t->nbuffers; ++i) {
        v[i] = interface_of(t->bufs[i].d);
    }
    if (g_measure || t->model != nullptr) {
        std::uint64_t start = now_ns();
        t->fn(v, t->cl_arg);
        task_ran(t, start, now_ns());
    } else {
        t->fn(v, t->cl_arg);
    }
    complete(t);
}

void complete(task* t) noexcept {
    if (t->callback != nullptr) {
        t->callback(t->callback_arg);
    }
    t->g.lock.lock();
    t->state = task_state::done;
    std::vector<task*> succs = std::move(t->succs);
    gate::wakeups w = t->g.notify_locked();
    t->g.lock.unlock();
    gate::deliver(w);
    if (t->has_arbitrated) {
        release_arbitrated(t);  // before detach: unregister may free a handle once unused
    }
    detach_buffers(t);
    // Successors after the handles: an empty successor completes right here, and its own
    // successors recurse; chains of empty tasks are short in practice (synchronisation points).
    for (task* s : succs) {
        dependency_met(s);
        task_unref(s);
    }
    if (t->kind == task_kind::normal) {
        inflight_done();
    }
    task_unref(t);  // the runtime's reference
}

/// Checks t's description against its codelet and copies it into t. Logs what is wrong.
status fill(task* t, const task_desc& d) noexcept {
    const char* name = d.name != nullptr ? d.name : (d.cl != nullptr && d.cl->name != nullptr ? d.cl->name : "(unnamed)");
    t->name = name;
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
        if ((d.cl->where & where_cpu) == 0 || d.cl->cpu_funcs[0] == nullptr) {
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
        if ((m & access_rw) == 0 || (m & ~access_rw) != 0) {
            MPC_LOG(error, tg, "task %s: buffer %d has access mode %u (supported: R, W, RW)", name, i, m);
            return {errc::invalid_argument, "bad access mode"};
        }
        t->bufs[i] = {d.handles[i], m};
    }
    t->nbuffers = d.nbuffers;
    t->has_arbitrated = false;
    t->arb_last = 0;
    t->fn = d.cl != nullptr ? d.cl->cpu_funcs[0] : nullptr;
    t->cl_arg = d.cl_arg;
    t->priority = d.priority;
    t->callback = d.callback;
    t->callback_arg = d.callback_arg;
    t->model = d.model;
    t->footprint = d.footprint;
    t->size = d.size;
    t->cost_us = d.cost_us;
    return {};
}

}  // namespace detail

using namespace detail;

result<task*> task_create() noexcept {
    task* t = new (std::nothrow) task;
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

status submit(task* t, const task_desc& d) noexcept {
    if (!running()) {
        MPC_LOG(error, tg, "task submitted while the task runtime is not running (call init first)");
        return {errc::not_initialized, "task runtime not running"};
    }
    if (t == nullptr) {
        return {errc::invalid_argument, "null task"};
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
    if (st.ok() && d.use_tag) {
        st = tag_check(d.tag, t->name);  // before the buffers: their history cannot be undone
    }
    if (st.ok()) {
        st = attach_buffers(t, d.sequential_consistency);
    }
    if (!st.ok()) {
        t->g.lock.lock();
        t->state = task_state::created;  // may be fixed and submitted again
        t->g.lock.unlock();
        return st;
    }
    if (d.use_tag) {
        if (status ts = tag_attach(t, d.tag); !ts.ok()) {
            // Only a race with another submission carrying the same tag, or no memory, gets here.
            MPC_LOG(error, tg, "task %s runs without its tag: %s", t->name, ts.reason());
        }
    }
    t->seq = next_seq();
    task_ref(t);  // the runtime's, dropped by complete()
    inflight_add();
    dependency_met(t);  // the submission guard
    if (d.use_tag) {
        tag_attached(d.tag);
    }
    return {};
}

bool task_finished(const task* t) noexcept {
    auto* m = const_cast<task*>(t);
    spin_guard g(m->g.lock);
    return m->state == task_state::done;
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
