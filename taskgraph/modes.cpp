/// \file
/// The access modes beyond R/W/RW: SCRATCH, REDUX and COMMUTE (StarPU's semantics).
///
/// SCRATCH: the task gets a buffer shaped like the handle's interface, for itself, contents
/// undefined. It is made through the interface's ops (or taken from the worker's buffer cache,
/// scratch_cache.cpp) when the task starts on its worker and freed (or cached) when the task
/// ends; its memory is reserved against the runtime's limit at submission. The access takes no
/// part in the handle's history.
///
/// REDUX: a run of consecutive redux accesses (in submission order) is a phase. Each task of a
/// phase waits for what a writer would wait for (the readers since the last writer, else that
/// writer) but does not become the last writer, so the phase's tasks run in parallel, each on
/// its worker's private copy of the data, made and set neutral by the handle's init function
/// the first time that worker needs it. The next access that is not redux (a task, an
/// acquisition, unregister, a partition) closes the phase: internal reduction tasks after every
/// task of the phase fold the copies into the data with the handle's reduction function (one
/// task, or a tree: reduction.cpp); the last becomes the last writer, so the closing access
/// follows it.
///
/// COMMUTE: a run of consecutive commute accesses is a group. Each member waits for what a
/// writer would wait for, without becoming the last writer, and takes the handle exclusively at
/// run time (the arbiter, arbiter.cpp), so the members run one at a time in any order. The next
/// access that is not commute closes the group with an empty internal task after every member,
/// which becomes the last writer.

#include <algorithm>
#include <new>

#include "lib/log.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace detail {

void after_all(std::vector<task*>& members, task* closer) noexcept {
    for (task* m : members) {
        add_dependency(m, closer);
        task_unref(m);
    }
    members.clear();
}

task* close_phases(data* d, unsigned mode) noexcept {
    if (!d->redux_tasks.empty() && (mode & access_redux) == 0) {
        return make_reduction(d);  // reduction.cpp
    }
    if (!d->commute_group.empty() && (mode & access_commute) == 0) {
        task* j = make_internal("commute group end");  // empty: completes once ready
        after_all(d->commute_group, j);
        drop_history(d);  // every member followed it already
        task_ref(j);
        d->last_writer = j;
        return j;
    }
    return nullptr;
}

bool infer_special(data* d, unsigned mode, task* t) noexcept {
    std::vector<task*>* run = (mode & access_redux) != 0     ? &d->redux_tasks
                              : (mode & access_commute) != 0 ? &d->commute_group
                                                             : nullptr;
    if (run == nullptr) {
        return false;
    }
    infer_write(d, t, false);
    task_ref(t);
    run->push_back(t);
    return true;
}

status reserve_task_memory(task* t) noexcept {
    std::size_t scratch = 0;
    for (int i = 0; i < t->nbuffers; ++i) {
        if ((t->bufs[i].mode & access_scratch) == 0) {
            // A redux phase's reduction reads the main copy outside prepare_buffers(): read now.
            const bool defer = (t->bufs[i].mode & access_redux) == 0;
            const bool reads = (t->bufs[i].mode & access_read) != 0;
            if (status st = ensure_memory(t->bufs[i].d, &t->bufs[i].pinned, defer, reads); !st.ok()) {
                return st;
            }
        } else {
            const data* d = t->bufs[i].d;
            scratch += d->ops->size(d->ifp, d->ops->ctx, d);
        }
    }
    if (status st = mem_reserve(scratch, "scratch buffers of a task"); !st.ok()) {
        return st;
    }
    t->mem_reserved = scratch;
    for (int i = 0; i < t->nbuffers; ++i) {
        if ((t->bufs[i].mode & access_redux) == 0) {
            continue;
        }
        data* d = t->bufs[i].d;
        d->g.lock.lock();
        const bool more = d->redux_copies < worker_count();  // at most one copy per worker
        d->redux_copies += more ? 1 : 0;
        d->g.lock.unlock();
        if (!more) {
            continue;
        }
        const std::size_t bytes = d->ops->size(d->ifp, d->ops->ctx, d);
        status st = mem_reserve(bytes, "a worker's redux copy");
        spin_guard g(d->g.lock);
        if (!st.ok()) {
            --d->redux_copies;
            return st;
        }
        d->redux_reserved += bytes;
    }
    return {};
}

void settle_content(data* d, unsigned m) noexcept {
    int c = d->content.load(std::memory_order_acquire);
    if (c == 0) {
        return;
    }
    if (c >= content_on_disk) [[unlikely]] {
        load_deferred(d, (m & access_read) != 0);
        return;
    }
    if ((m & access_read) == 0 || d->init_fn == nullptr) {
        d->content.store(0, std::memory_order_release);  // written now, or nothing to start it with
        return;
    }
    if (c == 1 && d->content.compare_exchange_strong(c, 2, std::memory_order_acq_rel)) {
        void* x[1] = {d->ifp};
        d->init_fn(x, d->init_arg);
        d->content.store(0, std::memory_order_release);
        return;
    }
    while (d->content.load(std::memory_order_acquire) == 2) {  // another reader runs init (short)
        sched::yield();
    }
}

void prepare_buffers(task* t, int worker, void** v) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        const buffer& b = t->bufs[i];
        if ((b.mode & access_scratch) != 0) {
            v[i] = new_copy(b.d, worker);
        } else if ((b.mode & access_redux) != 0) {
            void*& c = b.d->copies[worker];  // only this worker touches its slot during the phase
            if (c == nullptr) {
                c = new_copy(b.d, worker);
                void* x[1] = {c};
                b.d->init_fn(x, b.d->init_arg);
                // Its place in the reduction tree (read by the reduction, after the phase).
                b.d->copy_order[b.d->copies_made.fetch_add(1, std::memory_order_acq_rel)] = worker;
            }
            v[i] = c;
        } else {
            settle_content(b.d, b.mode);
            v[i] = b.d->ifp;
        }
    }
}

void finish_buffers(task* t, int worker, void** v) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        if ((t->bufs[i].mode & access_scratch) != 0) {
            // Kept in the worker's cache: its bytes stay reserved, now as the cache's.
            const std::size_t kept = free_copy(t->bufs[i].d, v[i], worker);
            t->mem_reserved -= std::min(kept, t->mem_reserved);
        }
    }
}

void free_data_memory(data* d) noexcept {
    wait_no_load(d);  // a failed submission's read may still be writing into the memory
    if (d->copies) {
        for (int w = 0; w < max_workers; ++w) {
            if (d->copies[w] != nullptr) {
                free_copy(d, d->copies[w], -1);  // a phase never closed (no access came after it)
                d->copies[w] = nullptr;
            }
        }
        d->copies_made.store(0, std::memory_order_relaxed);
    }
    mem_release(d->redux_reserved);
    d->redux_reserved = 0;
    if (d->spill != nullptr) {  // its disk copy (a home on disk gets a newer value back first)
        const bool ram_newer = d->allocated && !d->disk_valid && d->content.load(std::memory_order_acquire) == 0;
        spill_hooks()->retire(d, ram_newer);
        d->spill = nullptr;
    }
    if (d->allocated) {
        mem_release(d->ops->size(d->ifp, d->ops->ctx, d));
        d->ops->release(d->ifp, d->ops->ctx);
        d->allocated = false;
    }
    if (d->ops->forget != nullptr) {
        d->ops->forget(d, d->ops->ctx);
    }
}

}  // namespace detail

status set_reduction(data* d, cpu_fn redux, void* redux_arg, cpu_fn init, void* init_arg) noexcept {
    if (status st = detail::live(d, "set_reduction"); !st.ok()) {
        return st;
    }
    // Either may be missing: an init function alone starts the data when it holds no value
    // (settle_content); a REDUX access needs both (check_redux).
    spin_guard g(d->g.lock);
    if (!d->copies) {
        d->copies.reset(new (std::nothrow) void*[max_workers]());
        d->copy_order.reset(new (std::nothrow) int[max_workers]());
        if (!d->copies || !d->copy_order) {
            d->copies.reset();
            return {errc::no_memory, "redux copies"};
        }
    }
    d->redux_fn = redux;
    d->redux_arg = redux_arg;
    d->init_fn = init;
    d->init_arg = init_arg;
    return {};
}

}  // namespace mpc::tg
