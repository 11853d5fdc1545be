/// \file
/// StarPU 1.3 C API: struct starpu_task on the core's tasks.
///
/// starpu_task::starpu_private holds a reference to the core task of the task's current
/// submission. It is made on first need (declare_deps may name a task before it is submitted)
/// and replaced when a finished task is submitted again. The core task's callback is a
/// trampoline that runs the user's callback and then, for a detached task with destroy set,
/// frees the starpu_task: that is what StarPU does at a task's end.

#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
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
namespace {

constexpr int task_magic = 42;

/// The core task of the task's current submission, made if needed; nullptr on no memory.
task* core_of(starpu_task* t) noexcept {
    if (t->starpu_private == nullptr) {
        result<task*> r = task_create();
        if (!r) {
            return nullptr;
        }
        t->starpu_private = *r;
    }
    return static_cast<task*>(t->starpu_private);
}

/// A new core record for a task whose record `old` was submitted (and has finished): marked as
/// a resubmission (its tag starts over, as StarPU does for a task submitted again).
task* renew_core_of(starpu_task* t, task* old) noexcept {
    task_release(old);
    t->starpu_private = nullptr;
    task* core = core_of(t);
    if (core != nullptr) {
        core->resubmitted = true;
    }
    return core;
}

/// The core task for a new submission or new dependencies: the current one unless it has
/// been submitted already (a finished task submitted again gets a new record).
task* fresh_core_of(starpu_task* t, const char* call) noexcept {
    auto* old = static_cast<task*>(t->starpu_private);
    if (old != nullptr && task_submitted(old)) {
        if (!task_finished(old)) {
            fatal(call, "the task is already submitted and has not finished");
        }
        return renew_core_of(t, old);
    }
    return core_of(t);
}

/// The core task a new dependency on t waits for: the current one, unless it has finished: a
/// finished task named as a dependency is one that will be submitted again (StarPU refuses
/// dependencies on terminated tasks), so the dependency is on its next submission.
task* dep_core_of(starpu_task* t) noexcept {
    auto* old = static_cast<task*>(t->starpu_private);
    if (old != nullptr && task_finished(old)) {
        return renew_core_of(t, old);
    }
    return core_of(t);
}

/// Drops the task's core record and the dyn_ arrays (starpu_task_clean). `check`: the task
/// must not be running (false only from the task's own end, before the core marks it done).
void clean(starpu_task* t, bool check) noexcept {
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
    if (t->profiling_info != nullptr) [[unlikely]] {
        profile_task_end(t);
        profile_callback(t, false);
        if (t->callback_func != nullptr) {
            t->callback_func(t->callback_arg);
        }
        profile_callback(t, true);  // the callback can neither destroy nor resubmit a running task
    } else if (t->callback_func != nullptr) {
        t->callback_func(t->callback_arg);
    }
    if (auto_destroy) {
        free_task(t, false);  // the core task lives on: the runtime holds its own reference
    }
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
    return t->cl == nullptr || t->cl->can_execute == nullptr || t->cl->can_execute(w, t, 0) != 0;
}

/// The worker t must run on: -1 for any, a worker when only some may run it (placed in turn
/// among them, so that no policy gives it to another), or -ENODEV (logged) when none may.
int place(starpu_task* t) noexcept {
    const char* name = t->name != nullptr ? t->name : (t->cl != nullptr && t->cl->name != nullptr ? t->cl->name : "(unnamed)");
    const auto n = static_cast<unsigned>(worker_count());
    if (t->execute_on_a_specific_worker) {
        if (t->workerid >= n) {
            MPC_LOG(error, tg, "starpu_task_submit: task %s asks for worker %u; there are %u workers", name,
                    t->workerid, n);
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
        std::uint32_t where = scl->where != 0 ? scl->where : (scl->cpu_funcs[0] != nullptr ? STARPU_CPU : 0);
        if (t->where != -1 && t->where != 0) {  // 0: a task zeroed without starpu_task_init
            where &= static_cast<std::uint32_t>(t->where);
        }
        if ((where & STARPU_CPU) == 0 || scl->cpu_funcs[0] == nullptr) {
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
        cl.cpu_funcs[0] = scl->cpu_funcs[0];
        cl.nbuffers = n;
        d.cl = &cl;
    }
    access_mode inline_modes[max_buffers];
    std::vector<access_mode> more_modes;
    access_mode* modes = inline_modes;
    if (n > max_buffers) {
        more_modes.resize(static_cast<std::size_t>(n));
        modes = more_modes.data();
    }
    for (int i = 0; i < n; ++i) {
        modes[i] = static_cast<access_mode>(mode_of(t, i));
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
    if (int w = place(t); w < -1) {
        return w;
    } else {
        d.worker = w;
    }
    const bool sync = t->synchronous != 0;
    if (starpu_sched_policy* p = user_policy(); p != nullptr && p->submit_hook != nullptr) {
        p->submit_hook(t);
    }
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
    return starpu::errno_of(wait_for_all());
}

int starpu_task_wait_for_n_submitted(unsigned n) { return starpu::errno_of(wait_for_n_submitted(n)); }

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
        mpc::tg::task* dep = starpu::dep_core_of(task_array[i]);
        if (dep == nullptr) {
            starpu::fatal("starpu_task_declare_deps_array", "no memory for the task record");
        }
        if (mpc::status st = declare_deps(core, &dep, 1); !st.ok()) {
            starpu::fatal("starpu_task_declare_deps_array", st.reason());
        }
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
