/// \file
/// StarPU 1.3 C API: struct starpu_task on the core's tasks.
///
/// starpu_task::starpu_private holds a reference to the core task of the task's current
/// submission. It is made on first need (declare_deps may name a task before it is submitted)
/// and replaced when a finished task is submitted again. The core task's callback is a
/// trampoline that runs the user's callback and then, for a detached task with destroy set,
/// frees the starpu_task: that is what StarPU does at a task's end.

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/pool.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::detail {
namespace {
constinit record_pool g_starpu_task_pool{sizeof(starpu_task)};
}  // namespace
record_pool& starpu_task_pool() noexcept { return g_starpu_task_pool; }
}  // namespace mpc::tg::detail

namespace mpc::tg::starpu {
std::atomic<unsigned long> g_next_job_id{1};  ///< starpu_task_get_job_id's numbers
unsigned long new_job_id() noexcept { return g_next_job_id.fetch_add(1, std::memory_order_relaxed); }
namespace {

constexpr int task_magic = 42;

/// Explicit dependencies between tasks that may be submitted again (destroy == 0) outlive a
/// submission, as StarPU's do (its dependency records stay with the tasks and are re-armed at
/// each end). A link succ -> pred counts pred's ends: `seen` is the number of pred's ends that
/// succ's submissions have used. When succ is submitted again, an end it has not used yet
/// meets the dependency at once; otherwise succ waits for pred's running submission, or for
/// its next one. Both directions are kept so that destroying or cleaning either task drops
/// the link.
struct lasting_link {
    starpu_task* pred;
    std::uint64_t seen;
};
struct lasting_deps {
    std::mutex m;
    std::unordered_map<starpu_task*, std::vector<lasting_link>> preds;
    std::unordered_map<starpu_task*, std::vector<starpu_task*>> succs;
    struct ends_state {
        std::uint64_t n = 0;    ///< ends counted
        /// The core record of the last one counted, referenced: the pool hands a released
        /// record's memory to the next task_create, so an unreferenced address could name the
        /// task's next submission too and make it look ended.
        task* last = nullptr;
    };
    std::unordered_map<starpu_task*, ends_state> ends;  ///< of the tasks some link names
};
/// Set at the first lasting link: until then a task's end and clean pay one load, no call.
constinit std::atomic<bool> g_lasting_used{false};
lasting_deps& lasting() noexcept {
    static lasting_deps* d = new lasting_deps;  // never destroyed: tasks may be cleaned at exit
    return *d;
}

lasting_deps::ends_state ends_of(lasting_deps& d, starpu_task* t) noexcept {
    auto it = d.ends.find(t);
    return it == d.ends.end() ? lasting_deps::ends_state{} : it->second;
}

/// Records (or updates) the link succ -> pred with `seen`, the ends of pred succ has used.
void remember_dep(starpu_task* succ, starpu_task* pred, std::uint64_t seen) noexcept {
    lasting_deps& d = lasting();
    std::lock_guard g(d.m);
    try {
        auto& p = d.preds[succ];
        for (lasting_link& l : p) {
            if (l.pred == pred) {
                l.seen = seen;
                return;
            }
        }
        p.push_back({pred, seen});
        d.succs[pred].push_back(succ);
    } catch (...) {
        fatal("starpu_task_declare_deps", "no memory for a dependency record");
    }
    g_lasting_used.store(true, std::memory_order_release);
}

/// One more end of t (its submission `record`), for the links that name it (called after its
/// callback).
void count_end(starpu_task* t, void* record) noexcept {
    if (!g_lasting_used.load(std::memory_order_acquire) || record == nullptr) {
        return;
    }
    lasting_deps& d = lasting();
    task* previous = nullptr;
    {
        std::lock_guard g(d.m);
        if (d.succs.count(t) != 0) {
            auto& e = d.ends[t];
            ++e.n;
            previous = e.last;
            e.last = static_cast<task*>(record);
            detail::task_ref(e.last);
        }
    }
    task_release(previous);  // outside the lock: the last reference frees the record
}

/// What a lasting link's successor waits for, decided on one consistent view of the
/// predecessor (its ends and its current record, read under the table's lock).
struct link_wait {
    enum { met, on_record, on_next } kind;
    task* record;         ///< on_record: referenced
    std::uint64_t seen;   ///< the link's new count of used ends
};
/// `seen`: the link's used ends (a submission again), nullptr for a new declaration (which an
/// ended submission of pred meets at once, StarPU's rule).
link_wait decide_link(starpu_task* pred, const std::uint64_t* seen) noexcept {
    lasting_deps& d = lasting();
    std::lock_guard g(d.m);
    const lasting_deps::ends_state e = ends_of(d, pred);
    if (seen != nullptr && e.n > *seen) {
        return {link_wait::met, nullptr, *seen + 1};  // an end it has not used yet
    }
    auto* cur = static_cast<task*>(__atomic_load_n(&pred->starpu_private, __ATOMIC_ACQUIRE));
    // Its end is counted (count_end runs before the record is done), or it ended before any
    // link named pred (nothing counted it).
    const bool ended = cur != nullptr && (e.last == cur || (e.last == nullptr && task_finished(cur)));
    if (ended) {
        if (seen == nullptr) {
            return {link_wait::met, nullptr, e.n};
        }
        return {link_wait::on_next, nullptr, e.n + 1};  // that end was used: the next one
    }
    if (cur != nullptr) {
        detail::task_ref(cur);  // running, waiting, or made and not submitted yet
        return {link_wait::on_record, cur, e.n + 1};
    }
    return {link_wait::on_next, nullptr, e.n + 1};
}

/// The links of succ, for its new submission.
std::vector<lasting_link> remembered_preds(starpu_task* succ) noexcept {
    if (!g_lasting_used.load(std::memory_order_acquire)) {
        return {};
    }
    lasting_deps& d = lasting();
    std::lock_guard g(d.m);
    auto it = d.preds.find(succ);
    if (it == d.preds.end()) {
        return {};
    }
    try {
        return it->second;
    } catch (...) {
        fatal("starpu_task_submit", "no memory for a dependency record");
    }
}

void forget_deps(starpu_task* t) noexcept {
    if (!g_lasting_used.load(std::memory_order_acquire)) {
        return;
    }
    lasting_deps& d = lasting();
    task* last = nullptr;
    {
        std::lock_guard g(d.m);
        if (auto it = d.preds.find(t); it != d.preds.end()) {
            for (const lasting_link& l : it->second) {
                if (auto s2 = d.succs.find(l.pred); s2 != d.succs.end()) {
                    s2->second.erase(std::remove(s2->second.begin(), s2->second.end(), t), s2->second.end());
                }
            }
            d.preds.erase(it);
        }
        if (auto it = d.succs.find(t); it != d.succs.end()) {
            for (starpu_task* s2 : it->second) {
                if (auto p = d.preds.find(s2); p != d.preds.end()) {
                    auto& v = p->second;
                    v.erase(std::remove_if(v.begin(), v.end(), [t](const lasting_link& l) { return l.pred == t; }), v.end());
                }
            }
            d.succs.erase(it);
        }
        if (auto e = d.ends.find(t); e != d.ends.end()) {
            last = e->second.last;
            d.ends.erase(e);
        }
    }
    task_release(last);  // outside the lock: the last reference frees the record
}

/// starpu_task::workerorder: the tasks a worker is given with orders 1, 2, 3... start in that
/// order, whatever the order of their submission (StarPU's ordered list per worker). The end
/// of the task of order k is an empty core task, its "slot", on which the task of order k + 1
/// depends; the slot is made by whichever of the two comes first and dropped once both have
/// used it. Data dependencies are still those of the submission order.
struct order_slot {
    task* done = nullptr;  ///< referenced; submitted (completes at once) when k has ended
    bool ended = false;
    bool waited = false;
};
struct order_slots {
    std::mutex m;
    std::unordered_map<std::uint64_t, order_slot> slots;  ///< by worker << 32 | order
};
order_slots& worker_orders() noexcept {
    static order_slots* o = new order_slots;  // never destroyed: tasks may end at exit
    return *o;
}
std::uint64_t order_key(unsigned worker, unsigned order) noexcept {
    return (std::uint64_t{worker} << 32) | order;
}
/// The slot of (worker, order), made if needed. Caller holds the lock.
order_slot& slot_locked(order_slots& o, unsigned worker, unsigned order) noexcept {
    try {
        order_slot& s = o.slots[order_key(worker, order)];
        if (s.done == nullptr) {
            result<task*> r = task_create();
            if (!r) {
                fatal("starpu_task_submit", "no memory for a workerorder record");
            }
            s.done = *r;
        }
        return s;
    } catch (...) {
        fatal("starpu_task_submit", "no memory for a workerorder record");
    }
}
/// At the submission of the task of order `order` > 1 on worker: it waits for order - 1's end.
void wait_for_previous_order(task* core, unsigned worker, unsigned order) noexcept {
    order_slots& o = worker_orders();
    task* dep = nullptr;
    {
        std::lock_guard g(o.m);
        order_slot& s = slot_locked(o, worker, order - 1);
        dep = s.done;
        detail::task_ref(dep);
        s.waited = true;
        if (s.ended) {
            o.slots.erase(order_key(worker, order - 1));
            task_release(dep);  // the table's reference; ours is still held
        }
    }
    if (mpc::status st = declare_deps(core, &dep, 1); !st.ok()) {
        fatal("starpu_task_submit", st.reason());
    }
    task_release(dep);
}
}  // namespace

/// starpu_shutdown: the orders start again from 1 at the next starpu_init.
void forget_worker_orders() noexcept {
    order_slots& o = worker_orders();
    std::lock_guard g(o.m);
    for (auto& [key, s] : o.slots) {
        task_release(s.done);
    }
    o.slots.clear();
}

namespace {

/// At the end of the task of order `order` on worker: the next one may start.
void order_ended(unsigned worker, unsigned order) noexcept {
    order_slots& o = worker_orders();
    task* done = nullptr;
    {
        std::lock_guard g(o.m);
        order_slot& s = slot_locked(o, worker, order);
        done = s.done;
        detail::task_ref(done);
        s.ended = true;
        if (s.waited) {
            o.slots.erase(order_key(worker, order));
            task_release(done);
        }
    }
    task_desc d;
    d.name = "workerorder";
    if (mpc::status st = tg::submit(done, d); !st.ok()) {
        fatal("starpu_task_submit", st.reason());
    }
    task_release(done);
}

/// The core task of the task's current submission, made if needed; nullptr on no memory.
task* core_of(starpu_task* t) noexcept {
    void* cur = __atomic_load_n(&t->starpu_private, __ATOMIC_ACQUIRE);
    if (cur == nullptr) {
        // Two threads may make it at once (starpu_task_get_job_id from another worker, as in
        // StarPU's job test): the first one published wins.
        result<task*> r = task_create();
        if (!r) {
            return nullptr;
        }
        void* mine = *r;
        if (__atomic_compare_exchange_n(&t->starpu_private, &cur, mine, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            return static_cast<task*>(mine);
        }
        task_release(*r);
    }
    return static_cast<task*>(cur);
}

task* dep_core_of(starpu_task* t) noexcept;

/// Makes core (succ's record) wait as decide_link says, and records the link's new count.
void arm_link(task* core, starpu_task* succ, starpu_task* pred, const std::uint64_t* seen) noexcept {
    const link_wait w = decide_link(pred, seen);
    task* dep = w.kind == link_wait::on_record ? w.record : w.kind == link_wait::on_next ? dep_core_of(pred) : nullptr;
    if (w.kind == link_wait::on_next && dep == nullptr) {
        fatal("starpu_task_submit", "no memory for the task record");
    }
    if (dep != nullptr) {
        if (mpc::status st = declare_deps(core, &dep, 1); !st.ok()) {
            fatal("starpu_task_submit", st.reason());
        }
    }
    if (w.kind == link_wait::on_record) {
        task_release(w.record);
    }
    remember_dep(succ, pred, w.seen);
}

/// A new core record for a task whose record `old` was submitted (and has ended or is ending):
/// marked as a resubmission (its tag starts over, as StarPU does for a task submitted again),
/// its lasting dependencies re-armed.
task* renew_core_of(starpu_task* t, task* old) noexcept {
    task_release(old);
    // Atomic: the ending submission's on_task_end reads it on another worker (resubmission
    // from the callback, and that new run may end before the old callback returns).
    __atomic_store_n(&t->starpu_private, nullptr, __ATOMIC_RELEASE);
    task* core = core_of(t);
    if (core == nullptr) {
        return nullptr;
    }
    core->resubmitted = true;
    for (const lasting_link& l : remembered_preds(t)) {  // StarPU's dependencies are re-armed
        arm_link(core, t, l.pred, &l.seen);
    }
    return core;
}

/// The core task for a new submission or new dependencies: the current one unless it has
/// been submitted already (a finished task submitted again gets a new record).
task* fresh_core_of(starpu_task* t, const char* call) noexcept {
    auto* old = static_cast<task*>(t->starpu_private);
    if (old != nullptr && task_submitted(old)) {
        // Ending: its callback runs (StarPU lets a task be submitted again from there).
        if (!task_ending(old)) {
            fatal(call, "the task is already submitted and has not finished");
        }
        return renew_core_of(t, old);
    }
    return core_of(t);
}

/// The core task a re-armed dependency on t waits for: the current one, unless it has
/// finished: then the dependency is on t's next submission.
task* dep_core_of(starpu_task* t) noexcept {
    auto* old = static_cast<task*>(__atomic_load_n(&t->starpu_private, __ATOMIC_ACQUIRE));
    if (old != nullptr && (task_finished(old) || task_ending(old))) {
        return renew_core_of(t, old);  // its end has come (or is coming): the next submission
    }
    return core_of(t);
}

/// Drops the task's core record and the dyn_ arrays (starpu_task_clean). `check`: the task
/// must not be running (false only from the task's own end, before the core marks it done).
void clean(starpu_task* t, bool check) noexcept {
    leave_bundle(t);  // first: the bundle's length reads t's record
    forget_deps(t);
    if (auto* core = static_cast<task*>(t->starpu_private); core != nullptr) {
        if (check && task_submitted(core) && !task_finished(core)) {
            fatal("starpu_task_clean/destroy", "the task has been submitted and has not finished");
        }
        task_release(core);
        t->starpu_private = nullptr;
    }
    std::free(t->dyn_handles);
    t->dyn_handles = nullptr;
    std::free(t->dyn_modes);
    t->dyn_modes = nullptr;
    if (t->profiling_info != nullptr) {
        profile_free(t);
    }
}

/// Frees what the task structure owns, then the structure (a task of starpu_task_create()).
void free_task(starpu_task* t, bool check = true) noexcept {
    if (t->cl_arg_free) {
        std::free(t->cl_arg);
    }
    if (t->callback_arg_free) {
        std::free(t->callback_arg);
    }
    if (t->prologue_callback_arg_free) {
        std::free(t->prologue_callback_arg);
    }
    if (t->prologue_callback_pop_arg_free) {
        std::free(t->prologue_callback_pop_arg);
    }
    clean(t, check);
    detail::starpu_task_pool().put(t);
}

/// The core task's callback: the user's callback, then the end-of-task destruction.
void on_task_end(void* p) noexcept {
    auto* t = static_cast<starpu_task*>(p);
    // Read before the callback: it may destroy or resubmit a task that is not auto-destroyed.
    const bool auto_destroy = t->destroy && t->detach && !t->synchronous;
    void* const record = __atomic_load_n(&t->starpu_private, __ATOMIC_ACQUIRE);  // a resubmission may replace it
    void (*cb)(void*) = t->callback_func;
    if (starpu_codelet* cl = t->cl; cl != nullptr) {
        if (cb == nullptr) {
            cb = cl->callback_func;  // StarPU's rule: the codelet's, when the task has none
        }
        const int w = record != nullptr ? static_cast<task*>(record)->ran_on : -1;
        if (w >= 0 && w < STARPU_NMAXWORKERS) {
            // Only worker w writes its slot: a plain (relaxed) load and store, no locked add.
            unsigned long* slot = &cl->per_worker_stats[w];
            __atomic_store_n(slot, __atomic_load_n(slot, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
        }
    }
    t->status = STARPU_TASK_FINISHED;
    if (t->execute_on_a_specific_worker && t->workerorder > 0) [[unlikely]] {
        order_ended(t->workerid, t->workerorder);
    }
    if (t->profiling_info != nullptr) [[unlikely]] {
        profile_task_end(t);
        profile_callback(t, false);
        if (cb != nullptr) {
            cb(t->callback_arg);
        }
        profile_callback(t, true);
    } else if (cb != nullptr) {
        cb(t->callback_arg);
    }
    count_end(t, record);  // for the tasks whose declared dependencies name t
    if (__atomic_load_n(&t->starpu_private, __ATOMIC_ACQUIRE) != record) {
        return;  // the callback submitted the task again: it is that submission's now
    }
    if (t->regenerate && !auto_destroy) {
        // StarPU submits a regenerated task again at its end, after the callback (which may
        // clear the flag to stop the cycle).
        if (int rc = submit(t); rc != 0) {
            MPC_LOG(error, tg, "task %s: submitting it again (regenerate) failed: %d",
                    t->name != nullptr ? t->name : "(unnamed)", rc);
        }
        return;
    }
    if (auto_destroy) {
        free_task(t, false);  // the core task lives on: the runtime holds its own reference
    }
}

/// The deprecated single implementation (starpu_codelet::cpu_func), when cpu_funcs[0] is unset.
starpu_cpu_func_t legacy_cpu_func(const starpu_codelet* cl) noexcept {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    starpu_cpu_func_t f = cl->cpu_func;
#pragma GCC diagnostic pop
    return f == STARPU_MULTIPLE_CPU_IMPLEMENTATIONS ? nullptr : f;
}

/// The modes of the task's buffers, StarPU's way (STARPU_TASK_GET_MODE).
enum starpu_data_access_mode mode_of(const starpu_task* t, int i) noexcept {
    const starpu_codelet* cl = t->cl;
    if (cl->nbuffers == STARPU_VARIABLE_NBUFFERS || t->dyn_modes != nullptr) {
        return t->dyn_modes != nullptr ? t->dyn_modes[i] : t->modes[i];
    }
    return cl->dyn_modes != nullptr ? cl->dyn_modes[i] : cl->modes[i];
}

/// The n arguments of type T that follow in ap (the varargs forms of the *_array calls).
template <class T>
std::vector<T> collect(unsigned n, va_list ap) noexcept {
    std::vector<T> v(n);
    for (unsigned i = 0; i < n; ++i) {
        v[i] = va_arg(ap, T);
    }
    return v;
}

/// Whether worker w may run t: its workerids bitmap and its codelet's can_execute.
bool may_run(unsigned w, starpu_task* t) noexcept {
    if (t->workerids_len != 0) {
        constexpr unsigned bits = 32;
        if (w / bits >= t->workerids_len || (t->workerids[w / bits] & (1u << (w % bits))) == 0) {
            return false;
        }
    }
    if (t->cl == nullptr || t->cl->can_execute == nullptr) {
        return true;
    }
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS; ++k) {  // any implementation it may run
        if ((k == 0 || t->cl->cpu_funcs[k] != nullptr) && t->cl->can_execute(w, t, k) != 0) {
            return true;
        }
    }
    return false;
}

/// Whether worker w may run implementation k of core task t (detail::g_impl_filter).
bool impl_allowed(const task* t, int w, int k) noexcept {
    starpu_task* st = api_task_of(t);
    if (st == nullptr || st->cl == nullptr || st->cl->can_execute == nullptr) {
        return true;
    }
    return st->cl->can_execute(static_cast<unsigned>(w), st, static_cast<unsigned>(k)) != 0;
}

/// The worker t must run on: -1 for any, a worker when only some may run it (placed in turn
/// among them, so that no policy gives it to another), or -ENODEV (logged) when none may.
int place(starpu_task* t) noexcept {
    const char* name = t->name != nullptr ? t->name : (t->cl != nullptr && t->cl->name != nullptr ? t->cl->name : "(unnamed)");
    const auto n = static_cast<unsigned>(worker_count());
    if (t->execute_on_a_specific_worker) {
        if (t->workerid >= n && starpu_worker_is_combined_worker(static_cast<int>(t->workerid)) != 0) {
            // A combined worker: the task runs on all its members (a sequential codelet on its master).
            int ids[STARPU_NMAXWORKERS];
            const int k = combined_worker_members(static_cast<int>(t->workerid), ids, STARPU_NMAXWORKERS);
            for (int i = 0; i < k; ++i) {
                if (!may_run(static_cast<unsigned>(ids[i]), t)) {
                    MPC_LOG(warn, tg, "starpu_task_submit: task %s asks for combined worker %u, whose worker %d cannot "
                                      "execute it", name, t->workerid, ids[i]);
                    return -ENODEV;
                }
            }
            return static_cast<int>(t->workerid);
        }
        if (t->workerid >= n) {
            MPC_LOG(error, tg, "starpu_task_submit: task %s asks for worker %u; there are %u workers and %u combined "
                               "workers", name, t->workerid, n, starpu_combined_worker_get_count());
            return -EINVAL;
        }
        if (!may_run(t->workerid, t)) {
            MPC_LOG(warn, tg, "starpu_task_submit: task %s asks for worker %u, which cannot execute it", name,
                    t->workerid);
            return -ENODEV;
        }
        return static_cast<int>(t->workerid);
    }
    if (t->workerids_len == 0 && (t->cl == nullptr || t->cl->can_execute == nullptr)) {
        return -1;
    }
    unsigned able = 0;
    for (unsigned w = 0; w < n; ++w) {
        able += may_run(w, t) ? 1 : 0;
    }
    if (able == 0) {
        MPC_LOG(warn, tg, "starpu_task_submit: no worker can execute task %s (can_execute, workerids)", name);
        return -ENODEV;
    }
    if (able == n) {
        return -1;
    }
    static std::atomic<unsigned> turn{0};
    unsigned k = turn.fetch_add(1, std::memory_order_relaxed) % able;
    for (unsigned w = 0; w < n; ++w) {
        if (may_run(w, t) && k-- == 0) {
            return static_cast<int>(w);
        }
    }
    return -1;
}

}  // namespace

bool worker_may_run(unsigned w, starpu_task* t) noexcept { return may_run(w, t); }

starpu_task* api_task_of(const task* t) noexcept {
    return t->callback == &on_task_end ? static_cast<starpu_task*>(t->callback_arg) : nullptr;
}

int submit(starpu_task* t) noexcept {
    if (t == nullptr || t->magic != task_magic) {
        MPC_LOG(error, tg, "starpu_task_submit: not a task (set up with starpu_task_create, starpu_task_init or "
                           "STARPU_TASK_INITIALIZER)");
        return -EINVAL;
    }
    task* core = fresh_core_of(t, "starpu_task_submit");
    if (core == nullptr) {
        return -ENOMEM;
    }
    starpu_codelet* scl = t->cl;
    codelet cl;
    task_desc d;
    int n = 0;
    if (scl != nullptr) {
        starpu_cpu_func_t cpu0 = scl->cpu_funcs[0];
        if (cpu0 == nullptr) {
            cpu0 = legacy_cpu_func(scl);
        }
        std::uint32_t where = scl->where != 0 ? scl->where : (cpu0 != nullptr ? STARPU_CPU : 0);
        if (t->where != -1 && t->where != 0) {  // 0: a task zeroed without starpu_task_init
            where &= static_cast<std::uint32_t>(t->where);
        }
        const bool nowhere = where == STARPU_NOWHERE;  // orders its data accesses, runs nothing
        if (!nowhere && ((where & STARPU_CPU) == 0 || cpu0 == nullptr)) {
            MPC_LOG(warn, tg, "starpu_task_submit: codelet %s has no CPU implementation; only CPU workers exist",
                    scl->name != nullptr ? scl->name : "(unnamed)");
            return -ENODEV;
        }
        n = scl->nbuffers == STARPU_VARIABLE_NBUFFERS ? t->nbuffers : scl->nbuffers;
        if (scl->nbuffers != STARPU_VARIABLE_NBUFFERS && t->nbuffers != 0 && t->nbuffers != scl->nbuffers) {
            MPC_LOG(error, tg, "starpu_task_submit: codelet %s takes %d buffers, the task has %d",
                    scl->name != nullptr ? scl->name : "(unnamed)", scl->nbuffers, t->nbuffers);
            return -EINVAL;
        }
        if (n < 0 || (n > STARPU_NMAXBUFS && t->dyn_handles == nullptr)) {
            MPC_LOG(error, tg, "starpu_task_submit: %d buffers need dyn_handles (at most %d inline)", n,
                    STARPU_NMAXBUFS);
            return -EINVAL;
        }
        if (int rc = check_nodes(scl, n); rc != 0) {
            return rc;
        }
        cl.name = scl->name;
        cl.cpu_funcs[0] = cpu0;
        for (int k = 1; k < STARPU_MAXIMPLEMENTATIONS; ++k) {
            cl.cpu_funcs[k] = scl->cpu_funcs[k];  // several: the worker picks one (pick_impl)
        }
        if (cl.cpu_funcs[1] != nullptr || cl.cpu_funcs[2] != nullptr || cl.cpu_funcs[3] != nullptr) [[unlikely]] {
            detail::g_impl_filter.store(&impl_allowed, std::memory_order_release);
        }
        if (nowhere) {
            cl.where = mpc::tg::where_nowhere;
        }
        cl.nbuffers = n;
        d.cl = &cl;
        // Read as an int: a C program may store any int in the enum (C++ may not load it).
        int type = 0;
        static_assert(sizeof(scl->type) == sizeof(int));
        std::memcpy(&type, &scl->type, sizeof type);
        if (type != STARPU_SEQ) [[unlikely]] {
            if (type != STARPU_SPMD && type != STARPU_FORKJOIN) {
                MPC_LOG(error, tg, "starpu_task_submit: codelet %s has type %d (STARPU_SEQ, _SPMD or _FORKJOIN)",
                        scl->name != nullptr ? scl->name : "(unnamed)", type);
                return -EINVAL;
            }
            d.parallel = type == STARPU_SPMD ? 1 : 2;
            d.max_parallelism = std::max(scl->max_parallelism, 1);
        }
    }
    access_mode inline_modes[max_buffers];
    std::vector<access_mode> more_modes;
    access_mode* modes = inline_modes;
    if (n > max_buffers) {
        more_modes.resize(static_cast<std::size_t>(n));
        modes = more_modes.data();
    }
    for (int i = 0; i < n; ++i) {
        // SSEND and LOCALITY are hints for StarPU-MPI and a rebuilt ws: nothing for the core.
        modes[i] = static_cast<access_mode>(mode_of(t, i) & ~(STARPU_SSEND | STARPU_LOCALITY));
    }
    // starpu_data_handle_t is the core's data* under another name (starpu_data.cpp).
    d.handles = reinterpret_cast<data* const*>(t->dyn_handles != nullptr ? t->dyn_handles : t->handles);
    d.modes = modes;
    d.nbuffers = n;
    d.cl_arg = t->cl_arg;
    d.priority = t->priority;
    d.callback = &on_task_end;
    d.callback_arg = t;
    d.sequential_consistency = t->sequential_consistency != 0;
    d.handles_seq = t->handles_sequential_consistency;
    d.ready_callback = t->prologue_callback_func;
    d.ready_callback_arg = t->prologue_callback_arg;
    d.pop_callback = t->prologue_callback_pop_func;
    d.pop_callback_arg = t->prologue_callback_pop_arg;
    d.name = t->name;
    d.use_tag = t->use_tag != 0;
    d.tag = t->tag_id;
    d.times = profile_for_submit(t);
    d.tag_again = core->resubmitted;
    fill_model(t, &d);
    d.bundle = t->bundle;
    if (t->sched_ctx == STARPU_NMAX_SCHED_CTXS) {
        t->sched_ctx = submit_context();  // the thread's context, else 0 (StarPU's choice)
    }
    if (t->sched_ctx != 0 && (t->sched_ctx >= STARPU_NMAX_SCHED_CTXS || ctx_unknown(t->sched_ctx, "starpu_task_submit"))) {
        return -EINVAL;
    }
    d.context = static_cast<int>(t->sched_ctx);
    if (int w = place(t); w < -1) {
        return w;
    } else {
        d.worker = w;
    }
    if (t->execute_on_a_specific_worker && t->workerorder > 1) {
        wait_for_previous_order(core, t->workerid, t->workerorder);
    }
    const bool sync = t->synchronous != 0;
    if (bound_recording()) [[unlikely]] {
        bound_record(t);
    }
    if (starpu_sched_policy* p = user_policy_of(t->sched_ctx); p != nullptr && p->submit_hook != nullptr) {
        p->submit_hook(t);
    }
    t->status = STARPU_TASK_BLOCKED;
    if (status st = tg::submit(core, d); !st.ok()) {
        // busy here: a handle being unregistered or not usable while partitioned (StarPU
        // asserts); a malformed task for the program, not a deadlock.
        return st.code() == errc::busy ? -EINVAL : errno_of(st);
    }
    if (!sync) {
        return 0;
    }
    if (status st = task_wait(core); !st.ok()) {
        return errno_of(st);
    }
    if (t->destroy) {
        free_task(t);
    }
    return 0;
}

}  // namespace mpc::tg::starpu

using namespace mpc::tg;

extern "C" {

void starpu_codelet_init(struct starpu_codelet* cl) { std::memset(cl, 0, sizeof *cl); }

void starpu_task_init(struct starpu_task* task) {
    std::memset(task, 0, sizeof *task);
    task->sequential_consistency = 1;
    task->detach = 1;
    task->where = -1;
    task->priority = STARPU_DEFAULT_PRIO;
    task->sched_ctx = STARPU_NMAX_SCHED_CTXS;
    task->magic = starpu::task_magic;
    task->predicted = NAN;
    task->predicted_transfer = NAN;
    task->predicted_start = NAN;
}

struct starpu_task* starpu_task_get_current(void) {
    task* t = detail::running_task();
    return t != nullptr ? starpu::api_task_of(t) : nullptr;
}

struct starpu_task* starpu_task_create(void) {
    auto* t = static_cast<starpu_task*>(mpc::tg::detail::starpu_task_pool().get());
    if (t == nullptr) {
        return nullptr;
    }
    starpu_task_init(t);
    t->destroy = 1;
    return t;
}

void starpu_task_clean(struct starpu_task* task) { starpu::clean(task, true); }

void starpu_task_destroy(struct starpu_task* task) {
    if (task == nullptr) {
        return;
    }
    if (task->destroy && task->detach) {
        // It is freed automatically at its end; freeing it here would free it twice.
        starpu::fatal("starpu_task_destroy", "called for a task with destroy = 1 and detach = 1 (freed "
                                             "automatically when it ends)");
    }
    starpu::free_task(task);
}

int starpu_task_submit(struct starpu_task* task) { return starpu::submit(task); }

int starpu_task_wait(struct starpu_task* task) {
    if (task == nullptr || task->starpu_private == nullptr) {
        return -EINVAL;
    }
    if (task->detach) {
        MPC_LOG(error, tg, "starpu_task_wait on a detached task (set detach = 0 to wait for it)");
        return -EINVAL;
    }
    if (mpc::status st = task_wait(static_cast<mpc::tg::task*>(task->starpu_private)); !st.ok()) {
        return starpu::errno_of(st);
    }
    if (task->destroy) {
        starpu::free_task(task);
    }
    return 0;
}

int starpu_task_wait_array(struct starpu_task** tasks, unsigned nb_tasks) {
    for (unsigned i = 0; i < nb_tasks; ++i) {
        if (int rc = starpu_task_wait(tasks[i]); rc != 0) {
            return rc;
        }
    }
    return 0;
}

int starpu_task_wait_for_all(void) {
    starpu_do_schedule();
    if (const unsigned c = starpu_sched_ctx_get_context(); c < STARPU_NMAX_SCHED_CTXS) {
        return starpu_task_wait_for_all_in_ctx(c);  // StarPU's: the thread's context only
    }
    return starpu::errno_of(wait_for_all());
}

int starpu_task_wait_for_n_submitted(unsigned n) {
    if (const unsigned c = starpu_sched_ctx_get_context(); c < STARPU_NMAX_SCHED_CTXS) {
        return starpu_task_wait_for_n_submitted_in_ctx(c, n);
    }
    return starpu::errno_of(wait_for_n_submitted(n));
}

int starpu_task_wait_for_all_in_ctx(unsigned sched_ctx_id) {
    if (starpu::ctx_unknown(sched_ctx_id, "starpu_task_wait_for_all_in_ctx")) {
        return -EINVAL;
    }
    return starpu::errno_of(wait_for_all_in_context(static_cast<int>(sched_ctx_id)));
}

int starpu_task_wait_for_n_submitted_in_ctx(unsigned sched_ctx_id, unsigned n) {
    if (starpu::ctx_unknown(sched_ctx_id, "starpu_task_wait_for_n_submitted_in_ctx")) {
        return -EINVAL;
    }
    return starpu::errno_of(wait_for_n_in_context(static_cast<int>(sched_ctx_id), n));
}

int starpu_task_submit_to_ctx(struct starpu_task* task, unsigned sched_ctx_id) {
    if (task == nullptr) {
        return -EINVAL;
    }
    task->sched_ctx = sched_ctx_id;
    return starpu_task_submit(task);
}

int starpu_task_finished(struct starpu_task* task) {
    auto* core = static_cast<mpc::tg::task*>(task->starpu_private);
    return core != nullptr && task_finished(core) ? 1 : 0;
}

int starpu_task_nsubmitted(void) { return static_cast<int>(tasks_in_flight()); }

void starpu_task_declare_deps_array(struct starpu_task* task, unsigned ndeps, struct starpu_task* task_array[]) {
    mpc::tg::task* core = starpu::fresh_core_of(task, "starpu_task_declare_deps_array");
    if (core == nullptr) {
        starpu::fatal("starpu_task_declare_deps_array", "no memory for the task record");
    }
    for (unsigned i = 0; i < ndeps; ++i) {
        starpu_task* pred = task_array[i];
        if (pred == task) {
            starpu::fatal("starpu_task_declare_deps_array", "a task cannot depend on itself");
        }
        if (!task->destroy && !pred->destroy) {  // re-armed at a new submission
            starpu::arm_link(core, task, pred, nullptr);
            continue;
        }
        auto* cur = static_cast<mpc::tg::task*>(pred->starpu_private);
        if (cur != nullptr && task_finished(cur)) {
            continue;  // StarPU: a dependency on a task that has ended is met at once
        }
        mpc::tg::task* dep = starpu::core_of(pred);
        if (dep == nullptr) {
            starpu::fatal("starpu_task_declare_deps_array", "no memory for the task record");
        }
        if (mpc::status st = declare_deps(core, &dep, 1); !st.ok()) {
            starpu::fatal("starpu_task_declare_deps_array", st.reason());
        }
    }
}

namespace {
int successors(struct starpu_task* task, unsigned ndeps, struct starpu_task* task_array[], bool scheduled_only) {
    auto* core = static_cast<mpc::tg::task*>(task->starpu_private);
    if (core == nullptr) {
        return 0;
    }
    std::vector<mpc::tg::task*> v(8);
    int n = task_successors(core, v.data(), static_cast<int>(v.size()));
    while (n > static_cast<int>(v.size())) {  // more than fitted: again with room for all
        for (mpc::tg::task* s : v) {
            task_release(s);
        }
        v.assign(static_cast<std::size_t>(n), nullptr);
        n = task_successors(core, v.data(), static_cast<int>(v.size()));
    }
    unsigned count = 0;
    for (int i = 0; i < n; ++i) {
        starpu_task* s = starpu::api_task_of(v[static_cast<std::size_t>(i)]);
        const bool listed = s != nullptr && (!scheduled_only || (s->cl != nullptr && !s->execute_on_a_specific_worker));
        if (listed) {
            if (count < ndeps) {
                task_array[count] = s;
            }
            ++count;
        }
        task_release(v[static_cast<std::size_t>(i)]);
    }
    return static_cast<int>(count);
}
}  // namespace

int starpu_task_get_task_succs(struct starpu_task* task, unsigned ndeps, struct starpu_task* task_array[]) {
    return successors(task, ndeps, task_array, false);
}

int starpu_task_get_task_scheduled_succs(struct starpu_task* task, unsigned ndeps, struct starpu_task* task_array[]) {
    return successors(task, ndeps, task_array, true);
}

namespace {
std::atomic<starpu_notify_ready_soon_func> g_soon_fn{nullptr};
void ready_soon(void* data, mpc::tg::task* t, double us) {
    starpu_notify_ready_soon_func f = g_soon_fn.load(std::memory_order_acquire);
    if (starpu_task* st = starpu::api_task_of(t); f != nullptr && st != nullptr) {
        f(data, st, us);
    }
}
}  // namespace

void starpu_task_notify_ready_soon_register(starpu_notify_ready_soon_func f, void* data) {
    g_soon_fn.store(f, std::memory_order_release);
    set_ready_soon_hook(f != nullptr ? &ready_soon : nullptr, data);
}

unsigned long starpu_task_get_job_id(struct starpu_task* task) {
    mpc::tg::task* core = starpu::core_of(task);
    if (core == nullptr) {
        starpu::fatal("starpu_task_get_job_id", "no memory for the task record");
    }
    unsigned long id = core->job_id.load(std::memory_order_acquire);
    if (id == 0) {
        unsigned long mine = starpu::new_job_id();
        id = core->job_id.compare_exchange_strong(id, mine, std::memory_order_acq_rel) ? mine : id;
    }
    return id;
}

void starpu_create_sync_task(starpu_tag_t sync_tag, unsigned ndeps, starpu_tag_t* deps, void (*callback)(void*),
                             void* callback_arg) {
    starpu_tag_declare_deps_array(sync_tag, ndeps, deps);
    starpu_task* t = starpu_task_create();
    if (t == nullptr) {
        starpu::fatal("starpu_create_sync_task", "no memory for the task");
    }
    t->cl = nullptr;
    t->use_tag = 1;
    t->tag_id = sync_tag;
    t->callback_func = callback;
    t->callback_arg = callback_arg;
    if (int rc = starpu_task_submit(t); rc != 0) {
        starpu::fatal("starpu_create_sync_task", "the task was refused");
    }
}

void starpu_task_declare_deps(struct starpu_task* task, unsigned ndeps, ...) {
    va_list ap;
    va_start(ap, ndeps);
    std::vector<starpu_task*> deps = starpu::collect<starpu_task*>(ndeps, ap);
    va_end(ap);
    starpu_task_declare_deps_array(task, ndeps, deps.data());
}

void starpu_task_end_dep_add(struct starpu_task* t, int nb_deps) {
    mpc::tg::task* core = starpu::core_of(t);
    if (core == nullptr) {
        starpu::fatal("starpu_task_end_dep_add", "no memory for the task record");
    }
    if (mpc::status st = end_dep_add(core, nb_deps); !st.ok()) {
        starpu::fatal("starpu_task_end_dep_add", st.reason());
    }
}

void starpu_task_end_dep_release(struct starpu_task* t) {
    if (t == nullptr || t->starpu_private == nullptr) {
        starpu::fatal("starpu_task_end_dep_release", "the task has no end dependency");
    }
    end_dep_release(static_cast<mpc::tg::task*>(t->starpu_private));
}

void starpu_task_declare_end_deps_array(struct starpu_task* task, unsigned ndeps, struct starpu_task* task_array[]) {
    mpc::tg::task* core = starpu::core_of(task);
    std::vector<mpc::tg::task*> deps(ndeps);
    for (unsigned i = 0; i < ndeps; ++i) {
        deps[i] = starpu::core_of(task_array[i]);
        if (deps[i] == nullptr) {
            core = nullptr;
        }
    }
    if (core == nullptr) {
        starpu::fatal("starpu_task_declare_end_deps_array", "no memory for the task record");
    }
    if (mpc::status st = declare_end_deps(core, deps.data(), static_cast<int>(ndeps)); !st.ok()) {
        starpu::fatal("starpu_task_declare_end_deps_array", st.reason());
    }
}

void starpu_task_declare_end_deps(struct starpu_task* task, unsigned ndeps, ...) {
    va_list ap;
    va_start(ap, ndeps);
    std::vector<starpu_task*> deps = starpu::collect<starpu_task*>(ndeps, ap);
    va_end(ap);
    starpu_task_declare_end_deps_array(task, ndeps, deps.data());
}

void starpu_tag_declare_deps_array(starpu_tag_t id, unsigned ndeps, starpu_tag_t* array) {
    if (mpc::status st = tag_declare_deps(id, array, static_cast<int>(ndeps)); !st.ok()) {
        starpu::fatal("starpu_tag_declare_deps", st.reason());
    }
}

void starpu_tag_declare_deps(starpu_tag_t id, unsigned ndeps, ...) {
    va_list ap;
    va_start(ap, ndeps);
    std::vector<starpu_tag_t> deps = starpu::collect<starpu_tag_t>(ndeps, ap);
    va_end(ap);
    starpu_tag_declare_deps_array(id, ndeps, deps.data());
}

int starpu_tag_wait(starpu_tag_t id) { return starpu::errno_of(tag_wait(id)); }

int starpu_tag_wait_array(unsigned ntags, starpu_tag_t* id) {
    for (unsigned i = 0; i < ntags; ++i) {
        if (int rc = starpu_tag_wait(id[i]); rc != 0) {
            return rc;
        }
    }
    return 0;
}

void starpu_tag_notify_from_apps(starpu_tag_t id) {
    if (mpc::status st = tag_notify(id); !st.ok()) {
        starpu::fatal("starpu_tag_notify_from_apps", st.reason());
    }
}

void starpu_tag_restart(starpu_tag_t id) {
    if (mpc::status st = tag_restart(id); !st.ok()) {
        starpu::fatal("starpu_tag_restart", st.reason());
    }
}

void starpu_tag_notify_restart_from_apps(starpu_tag_t id) {
    if (mpc::status st = tag_notify_restart(id); !st.ok()) {
        starpu::fatal("starpu_tag_notify_restart_from_apps", st.reason());
    }
}

struct starpu_task* starpu_tag_get_task(starpu_tag_t id) {
    mpc::tg::task* t = tag_task(id);
    return t != nullptr ? starpu::api_task_of(t) : nullptr;
}

void starpu_tag_remove(starpu_tag_t id) { tag_remove(id); }

}  // extern "C"

extern "C" {

void starpu_task_set_implementation(struct starpu_task* st, unsigned impl) {
    if (st == nullptr || impl >= STARPU_MAXIMPLEMENTATIONS) {
        MPC_LOG(error, tg, "starpu_task_set_implementation: implementation %u (at most %d)", impl,
                STARPU_MAXIMPLEMENTATIONS - 1);
        return;
    }
    if (st->cl != nullptr && impl != 0 && st->cl->cpu_funcs[impl] == nullptr) {
        MPC_LOG(error, tg, "starpu_task_set_implementation: codelet %s has no implementation %u",
                st->cl->name != nullptr ? st->cl->name : "(unnamed)", impl);
        return;
    }
    if (mpc::tg::task* core = mpc::tg::starpu::core_of(st); core != nullptr) {
        core->forced_impl = static_cast<std::int8_t>(impl);  // read by the worker before the run
    }
}

unsigned starpu_task_get_implementation(struct starpu_task* st) {
    const auto* core =
        st != nullptr ? static_cast<const mpc::tg::task*>(__atomic_load_n(&st->starpu_private, __ATOMIC_ACQUIRE)) : nullptr;
    if (core == nullptr) {
        return 0;
    }
    // A set implementation is the one the run uses (pick_impl honours it when the worker may run it).
    return core->forced_impl >= 0 ? static_cast<unsigned>(core->forced_impl) : core->impl;
}

}  // extern "C"

extern "C" {

int starpu_task_nready(void) { return static_cast<int>(mpc::tg::tasks_ready()); }

int starpu_task_wait_for_no_ready(void) { return mpc::tg::starpu::errno_of(mpc::tg::wait_for_no_ready()); }

}  // extern "C"
