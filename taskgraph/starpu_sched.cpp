/// \file
/// StarPU 1.3 C API: scheduling policies written by the application (struct
/// starpu_sched_policy, given in starpu_conf::sched_policy), the one scheduling context (0) and
/// its worker collection, and the task lists such policies keep tasks in.
///
/// An application's policy runs as a core policy (policy.hpp), user_policy, which forwards:
/// push() to push_task, pop(w) to pop_task on worker w,
/// starting()/done() to pre_exec_hook/post_exec_hook, pinned() to push_task_notify. A worker keeps looking for work (spins,
/// then sleeps) only while its hint is set: every push_task and every starpu_wake_worker_*()
/// for it set it, a pop_task that finds nothing clears it (cleared before the call, so a push
/// during the call sets it again and the worker looks once more). Tasks the runtime makes
/// itself (reductions: no starpu_task stands for them) wait in a FIFO of ours, served first.
///
/// Waking: as in StarPU, the policy wakes the workers that may take the task it kept, with
/// starpu_wake_worker_* (a scheduling tree does it through can_pull: a queue that stores a task
/// calls it towards its children until a worker component wakes a sleeping worker, each awake
/// worker on the way getting its hint; a worker component that is pushed a task kicks its
/// worker). push() watches the calls its push_task makes on this thread: when one woke a
/// sleeping worker, nothing more is done; when some only reached awake workers, one sleeping
/// worker is woken as well (it looks once, as a thief would); when push_task woke nobody (a
/// policy that relies on the workers polling), every hint is set and every sleeping worker is
/// woken, as before.

#include <starpu.h>

#include <algorithm>
#include <climits>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <span>

#include "lib/log.hpp"
#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/policy.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace mpc::tg::starpu {
namespace {

/// What the policy's push_task did to the workers, on the pushing thread (see the file comment).
struct wakes {
    int kicked = -1;  ///< a sleeping worker it woke
    int hinted = -1;  ///< an awake worker it told to look
};
[[gnu::tls_model("initial-exec")]] thread_local wakes t_wakes;  // as the allocator's: no __tls_get_addr

/// The application's policy and the context's state. One context, one policy at a time.
struct context {
    std::atomic<starpu_sched_policy*> ops{nullptr};  ///< while the policy runs
    starpu_sched_policy* pending = nullptr;          ///< given to starpu_init, not made yet
    void* data = nullptr;                            ///< starpu_sched_ctx_set_policy_data
    spinlock coll_lock;
    starpu_worker_collection coll{};
    int ids[STARPU_NMAXWORKERS] = {};
    std::atomic<int> nworkers{0};  ///< the collection's; set before init_sched
};
context g_ctx;

/// As StarPU's lists: at the end the cursor goes back to the start, so that a second walk
/// needs no init_iterator.
unsigned coll_has_next(starpu_worker_collection* ws, starpu_sched_ctx_iterator* it) {
    if (it->cursor >= 0 && static_cast<unsigned>(it->cursor) < ws->nworkers) {
        return 1;
    }
    it->cursor = 0;
    return 0;
}
int coll_get_next(starpu_worker_collection* ws, starpu_sched_ctx_iterator* it) {
    if (!coll_has_next(ws, it)) {
        fatal("starpu_worker_collection::get_next", "no worker left (call has_next first)");
    }
    return ws->workerids[it->cursor++];
}
int coll_refuse(starpu_worker_collection* /*ws*/, int /*worker*/) {
    MPC_LOG(error, tg, "starpu_worker_collection: the context's workers are fixed (one context, every worker)");
    return -1;
}
void coll_nothing(starpu_worker_collection* /*ws*/) {}
void coll_init_iterator(starpu_worker_collection* /*ws*/, starpu_sched_ctx_iterator* it) {
    it->cursor = 0;
    it->value = nullptr;
    it->possible_value = nullptr;
    it->possibly_parallel = -1;
}
void coll_init_iterator_parallel(starpu_worker_collection* ws, starpu_sched_ctx_iterator* it, starpu_task* /*t*/) {
    coll_init_iterator(ws, it);
}

// starpu_worker_list: a collection the application fills (add, remove), in insertion order.
void list_init(starpu_worker_collection* ws) {
    auto* ids = static_cast<int*>(std::malloc(sizeof(int) * STARPU_NMAXWORKERS));
    if (ids == nullptr) {
        fatal("starpu_worker_list.init", "no memory for the worker list");
    }
    std::fill(ids, ids + STARPU_NMAXWORKERS, -1);
    ws->workerids = ids;
    ws->nworkers = 0;
    ws->unblocked_workers = nullptr;
    ws->nunblocked_workers = 0;
    ws->masters = nullptr;
    ws->nmasters = 0;
    std::fill(std::begin(ws->present), std::end(ws->present), 0);
    std::fill(std::begin(ws->is_unblocked), std::end(ws->is_unblocked), 0);
    std::fill(std::begin(ws->is_master), std::end(ws->is_master), 0);
}
void list_deinit(starpu_worker_collection* ws) {
    std::free(ws->workerids);
    ws->workerids = nullptr;
    ws->nworkers = 0;
}
/// Returns the worker, or -1 when it is already there (or not a worker id: logged).
int list_add(starpu_worker_collection* ws, int worker) {
    if (worker < 0 || worker >= STARPU_NMAXWORKERS) {
        MPC_LOG(error, tg, "starpu_worker_list.add: %d is not a worker id (0..%d)", worker, STARPU_NMAXWORKERS - 1);
        return -1;
    }
    if (ws->workerids == nullptr) {
        fatal("starpu_worker_list.add", "the collection is not initialized (call its init first)");
    }
    if (ws->present[worker]) {
        return -1;
    }
    ws->workerids[ws->nworkers++] = worker;
    ws->present[worker] = 1;
    ws->is_unblocked[worker] = 1;
    return worker;
}
/// Returns the worker, or -1 when it is not there; the others keep their order.
int list_remove(starpu_worker_collection* ws, int worker) {
    if (worker < 0 || worker >= STARPU_NMAXWORKERS || ws->workerids == nullptr || !ws->present[worker]) {
        return -1;
    }
    int* end = ws->workerids + ws->nworkers;
    int* at = std::find(ws->workerids, end, worker);
    std::copy(at + 1, end, at);
    end[-1] = -1;
    --ws->nworkers;
    ws->present[worker] = 0;
    ws->is_unblocked[worker] = 0;
    return worker;
}

// starpu_worker_tree: the same, kept in the machine's order (the workers' PUs depth first in
// the topology: NUMA node, core, hardware thread), so that a walk visits neighbours one after
// the other, as StarPU's tree walks the hwloc tree. A worker of no known place goes last.
long topology_rank(int worker) noexcept {
    const int vp = worker_vp(worker);
    if (vp < 0) {
        return LONG_MAX;
    }
    const mpc::topo::place p = mpc::sched::vp_place(vp);
    return (static_cast<long>(p.numa) << 40) | (static_cast<long>(p.core + 1) << 20) | static_cast<long>(p.pu + 1);
}
int tree_add(starpu_worker_collection* ws, int worker) {
    if (list_add(ws, worker) < 0) {
        return -1;
    }
    int* begin = ws->workerids;
    int* end = begin + ws->nworkers;
    const long rank = topology_rank(worker);
    int* at = std::find_if(begin, end - 1, [rank](int w) { return topology_rank(w) > rank; });
    std::rotate(at, end - 1, end);
    return worker;
}

/// The method table of a collection the application fills (starpu_worker_list and _tree differ
/// in how add places a worker).
constexpr starpu_worker_collection app_collection(starpu_worker_collection_type type,
                                                  int (*add)(starpu_worker_collection*, int)) noexcept {
    return starpu_worker_collection{
        .workerids = nullptr,
        .collection_private = nullptr,
        .nworkers = 0,
        .unblocked_workers = nullptr,
        .nunblocked_workers = 0,
        .masters = nullptr,
        .nmasters = 0,
        .present = {},
        .is_unblocked = {},
        .is_master = {},
        .type = type,
        .has_next = &coll_has_next,
        .get_next = &coll_get_next,
        .add = add,
        .remove = &list_remove,
        .init = &list_init,
        .deinit = &list_deinit,
        .init_iterator = &coll_init_iterator,
        .init_iterator_for_parallel_tasks = &coll_init_iterator_parallel,
    };
}

/// (Re)builds the collection for n workers (ids 0..n-1).
void build_collection(int n, starpu_worker_collection_type type) noexcept {
    spin_guard g(g_ctx.coll_lock);
    starpu_worker_collection& c = g_ctx.coll;
    c = starpu_worker_collection{};
    for (int i = 0; i < n; ++i) {
        g_ctx.ids[i] = i;
        c.present[i] = 1;
        c.is_unblocked[i] = 1;
    }
    c.workerids = g_ctx.ids;
    c.nworkers = static_cast<unsigned>(n);
    c.type = type;
    c.has_next = &coll_has_next;
    c.get_next = &coll_get_next;
    c.add = &coll_refuse;
    c.remove = &coll_refuse;
    c.init = &coll_nothing;
    c.deinit = &coll_nothing;
    c.init_iterator = &coll_init_iterator;
    c.init_iterator_for_parallel_tasks = &coll_init_iterator_parallel;
    g_ctx.nworkers.store(n, std::memory_order_release);
}

bool bad_ctx(unsigned id, const char* call) noexcept {
    if (id == 0) {
        return false;
    }
    MPC_LOG(error, tg, "%s: scheduling context %u does not exist (there is one context, 0)", call, id);
    return true;
}

class user_policy final : public policy {
public:
    user_policy(const policy_context& ctx, starpu_sched_policy* ops)
        : ops_(ops), n_(ctx.nworkers), hint_(new std::atomic<bool>[static_cast<std::size_t>(ctx.nworkers)]) {
        for (int w = 0; w < n_; ++w) {
            hint_[w].store(false, std::memory_order_relaxed);
        }
        build_collection(n_, ops->worker_type);
        g_ctx.data = nullptr;
        g_ctx.ops.store(ops, std::memory_order_release);
        if (ops_->init_sched != nullptr) {
            ops_->init_sched(0);
        }
        if (ops_->add_workers != nullptr) {
            ops_->add_workers(0, g_ctx.ids, static_cast<unsigned>(n_));
        }
    }
    ~user_policy() override {
        if (long n = refused_.load(std::memory_order_relaxed); n > 1) {
            MPC_LOG(error, tg, "scheduling policy %s: push_task refused %ld tasks in all", name(), n);
        }
        if (ops_->remove_workers != nullptr) {
            ops_->remove_workers(0, g_ctx.ids, static_cast<unsigned>(n_));
        }
        if (ops_->deinit_sched != nullptr) {
            ops_->deinit_sched(0);
        }
        g_ctx.ops.store(nullptr, std::memory_order_release);
        g_ctx.data = nullptr;
    }
    user_policy(const user_policy&) = delete;
    user_policy& operator=(const user_policy&) = delete;

    int push(task* t) noexcept override {
        starpu_task* st = api_task_of(t);
        if (st == nullptr) {
            keep(t);
            return -1;
        }
        st->sched_ctx = 0;
        t_wakes = wakes{};
        if (int rc = ops_->push_task(st); rc != 0) {
            if (refused_.fetch_add(1, std::memory_order_relaxed) == 0) {  // said once; counted at the end
                MPC_LOG(error, tg, "scheduling policy %s: push_task returned %d for task %s; the task runs anyway",
                        name(), rc, st->name != nullptr ? st->name : "(unnamed)");
            }
            keep(t);
            return -1;
        }
        if (t_wakes.kicked >= 0) {
            return t_wakes.kicked;  // already kicked: the runtime's kick finds it awake
        }
        if (t_wakes.hinted >= 0) {
            // Awake workers were told; one sleeping worker (another) looks too.
            return n_ > 1 ? -1 : t_wakes.hinted;
        }
        for (int w = 0; w < n_; ++w) {
            hint_[w].store(true, std::memory_order_seq_cst);
        }
        return wake_every_worker;
    }
    task* pop(int worker) noexcept override {
        if (worker < 0 || worker >= n_) {
            return nullptr;
        }
        // Cleared first: a push from now on sets it again, so the worker looks once more.
        hint_[worker].store(false, std::memory_order_seq_cst);
        if (nkept_.load(std::memory_order_acquire) != 0) {
            spin_guard g(kept_lock_);
            if (task* t = kept_.pop_front(); t != nullptr) {
                nkept_.fetch_sub(1, std::memory_order_relaxed);
                hint_[worker].store(true, std::memory_order_relaxed);  // the policy may hold more
                return t;
            }
        }
        if (ops_->pop_task == nullptr) {
            return nullptr;  // the workers serve only their own queues (starpu_push_local_task)
        }
        starpu_task* st = ops_->pop_task(0);
        if (st == nullptr) {
            return nullptr;
        }
        hint_[worker].store(true, std::memory_order_relaxed);  // there may be more
        auto* core = static_cast<task*>(st->starpu_private);
        if (core == nullptr || api_task_of(core) != st) {
            fatal("starpu_sched_policy::pop_task", "returned a task that the policy was not given by push_task");
        }
        return core;
    }
    bool may_have_work(int worker) const noexcept override {
        return nkept_.load(std::memory_order_relaxed) != 0 ||
               (worker >= 0 && worker < n_ && hint_[worker].load(std::memory_order_relaxed));
    }
    bool measures() const noexcept override { return ops_->post_exec_hook != nullptr; }
    void done(task* t, int /*worker*/, double /*us*/) noexcept override {
        if (starpu_task* st = api_task_of(t); st != nullptr) {
            ops_->post_exec_hook(st, 0);
        }
    }
    bool watches_pinned() const noexcept override { return ops_->push_task_notify != nullptr; }
    void pinned(task* t, int worker) noexcept override {
        if (starpu_task* st = api_task_of(t); st != nullptr) {
            ops_->push_task_notify(st, worker, worker, 0);
        }
    }
    bool watches_starts() const noexcept override { return ops_->pre_exec_hook != nullptr; }
    void starting(task* t, int /*worker*/) noexcept override {
        if (starpu_task* st = api_task_of(t); st != nullptr) {
            ops_->pre_exec_hook(st, 0);
        }
    }

    /// Marks worker w as having work to look for (starpu_wake_worker_*).
    void poke(int w) noexcept {
        if (w >= 0 && w < n_) {
            hint_[w].store(true, std::memory_order_seq_cst);
        }
    }

private:
    const char* name() const noexcept { return ops_->policy_name != nullptr ? ops_->policy_name : "(unnamed)"; }
    void keep(task* t) noexcept {
        spin_guard g(kept_lock_);
        kept_.push_back(t);
        nkept_.fetch_add(1, std::memory_order_release);
    }

    starpu_sched_policy* ops_;
    int n_;
    std::unique_ptr<std::atomic<bool>[]> hint_;
    spinlock kept_lock_;
    sched::detail::fifo<task> kept_;  ///< the runtime's own tasks, and tasks push_task refused
    std::atomic<long> nkept_{0};
    std::atomic<long> refused_{0};  ///< push_task calls that failed
};

user_policy* g_running = nullptr;  ///< set and cleared with g_ctx.ops (by make/deinit)

std::unique_ptr<policy> make_user(const policy_context& ctx) {
    auto p = std::make_unique<user_policy>(ctx, g_ctx.pending);
    g_running = p.get();
    return p;
}

policy_entry g_entry{"(application)", "the application's struct starpu_sched_policy", &make_user};

/// starpu_sched_get_predefined_policies(): one structure per built-in policy, with its name and
/// description only (the methods are MPC's own); given back in starpu_conf::sched_policy, it
/// selects that policy as its name would.
struct predefined {
    std::unique_ptr<starpu_sched_policy[]> structs;
    std::unique_ptr<starpu_sched_policy*[]> list;
    predefined() {
        const std::span<const policy_entry> all = policies();
        structs.reset(new starpu_sched_policy[all.size()]());
        list.reset(new starpu_sched_policy*[all.size() + 1]());
        for (std::size_t i = 0; i < all.size(); ++i) {
            structs[i].policy_name = all[i].name;
            structs[i].policy_description = all[i].description;
            structs[i].worker_type = STARPU_WORKER_LIST;
            list[i] = &structs[i];
        }
    }
    /// The built-in entry a structure of ours stands for, or nullptr.
    const policy_entry* entry_of(const starpu_sched_policy* p) const noexcept {
        const std::span<const policy_entry> all = policies();
        for (std::size_t i = 0; i < all.size(); ++i) {
            if (p == &structs[i]) {
                return &all[i];
            }
        }
        return nullptr;
    }
};
const predefined& builtins() {
    static const predefined p;
    return p;
}

}  // namespace

starpu_sched_policy* user_policy() noexcept { return g_ctx.ops.load(std::memory_order_acquire); }

int user_policy_entry(starpu_sched_policy* ops, const policy_entry** out) noexcept {
    if (const policy_entry* e = builtins().entry_of(ops); e != nullptr) {
        *out = e;  // one of starpu_sched_get_predefined_policies(): that built-in policy
        return 0;
    }
    if (ops->push_task == nullptr) {
        MPC_LOG(error, tg, "starpu_init: scheduling policy %s has no push_task",
                ops->policy_name != nullptr ? ops->policy_name : "(unnamed)");
        return -EINVAL;
    }
    if (ops->pop_task == nullptr) {
        MPC_LOG(info, tg, "scheduling policy %s has no pop_task: workers run only what push_task gives them "
                          "with starpu_push_local_task", ops->policy_name != nullptr ? ops->policy_name : "(unnamed)");
    }
    g_ctx.pending = ops;
    g_entry.name = ops->policy_name != nullptr ? ops->policy_name : "(application)";
    g_entry.description = ops->policy_description != nullptr ? ops->policy_description : g_entry.description;
    *out = &g_entry;
    return 0;
}

int policy_workers() noexcept { return g_ctx.nworkers.load(std::memory_order_acquire); }

void note_wake(int worker, bool kicked) noexcept {
    (kicked ? t_wakes.kicked : t_wakes.hinted) = worker;
}

}  // namespace mpc::tg::starpu

using namespace mpc::tg;
namespace sp = mpc::tg::starpu;

extern "C" {

struct starpu_worker_collection starpu_worker_list = sp::app_collection(STARPU_WORKER_LIST, &sp::list_add);
struct starpu_worker_collection starpu_worker_tree = sp::app_collection(STARPU_WORKER_TREE, &sp::tree_add);

// ---- the scheduling context -----------------------------------------------------------------

unsigned starpu_sched_ctx_get_context(void) { return 0; }

void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void* policy_data) {
    if (!sp::bad_ctx(sched_ctx_id, "starpu_sched_ctx_set_policy_data")) {
        sp::g_ctx.data = policy_data;
    }
}

void* starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id) {
    return sp::bad_ctx(sched_ctx_id, "starpu_sched_ctx_get_policy_data") ? nullptr : sp::g_ctx.data;
}

struct starpu_sched_policy* starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id) {
    return sp::bad_ctx(sched_ctx_id, "starpu_sched_ctx_get_sched_policy") ? nullptr : sp::user_policy();
}

struct starpu_worker_collection* starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id) {
    if (sp::bad_ctx(sched_ctx_id, "starpu_sched_ctx_get_worker_collection")) {
        return nullptr;
    }
    if (sp::user_policy() == nullptr) {  // a built-in policy: the collection of the running workers
        const int n = worker_count();
        if (n != sp::policy_workers()) {
            sp::build_collection(n, STARPU_WORKER_LIST);
        }
    }
    return &sp::g_ctx.coll;
}

unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id) {
    return sp::bad_ctx(sched_ctx_id, "starpu_sched_ctx_get_nworkers") ? 0 : starpu_worker_get_count();
}

unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int** workerids) {
    const unsigned n = starpu_sched_ctx_get_nworkers(sched_ctx_id);
    *workerids = static_cast<int*>(std::malloc(sizeof(int) * (n > 0 ? n : 1)));
    if (*workerids == nullptr) {
        return 0;
    }
    for (unsigned i = 0; i < n; ++i) {
        (*workerids)[i] = static_cast<int>(i);
    }
    return n;
}

unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id) {
    return sched_ctx_id == 0 && workerid >= 0 && static_cast<unsigned>(workerid) < starpu_worker_get_count() ? 1 : 0;
}

struct starpu_sched_policy** starpu_sched_get_predefined_policies(void) { return sp::builtins().list.get(); }

// ---- what a policy calls --------------------------------------------------------------------

int starpu_push_task_end(struct starpu_task* /*task*/) { return 0; }

int starpu_push_local_task(int workerid, struct starpu_task* task, int back) {
    auto* core = task != nullptr ? static_cast<mpc::tg::task*>(task->starpu_private) : nullptr;
    if (core == nullptr || !task_submitted(core) || task_finished(core)) {
        MPC_LOG(error, tg, "starpu_push_local_task: not a task handed to the policy by push_task");
        return -EINVAL;
    }
    // StarPU's local queue serves its back first: back != 0 puts the task where it is taken next.
    return sp::errno_of(detail::push_local(core, workerid, back != 0));
}

static int wake(int workerid) {
    if (sp::user_policy() != nullptr && sp::g_running != nullptr) {
        sp::g_running->poke(workerid);
    }
    const bool kicked = detail::wake_worker(workerid);
    sp::note_wake(workerid, kicked);
    return kicked ? 1 : 0;
}

int starpu_wake_worker_relax(int workerid) { return wake(workerid); }
int starpu_wake_worker_no_relax(int workerid) { return wake(workerid); }
int starpu_wake_worker_locked(int workerid) { return wake(workerid); }
int starpu_wake_worker_relax_light(int workerid) { return wake(workerid); }

int starpu_worker_can_execute_task(unsigned workerid, struct starpu_task* task, unsigned nimpl) {
    return workerid < starpu_worker_get_count() && nimpl == 0 && task != nullptr &&
                   (task->cl == nullptr || task->cl->cpu_funcs[0] != nullptr) && sp::worker_may_run(workerid, task)
               ? 1
               : 0;
}

int starpu_worker_can_execute_task_impl(unsigned workerid, struct starpu_task* task, unsigned* impl_mask) {
    int ok = starpu_worker_can_execute_task(workerid, task, 0);
    if (impl_mask != nullptr) {
        *impl_mask = ok ? 1u : 0u;
    }
    return ok;
}

int starpu_worker_can_execute_task_first_impl(unsigned workerid, struct starpu_task* task, unsigned* nimpl) {
    int ok = starpu_worker_can_execute_task(workerid, task, 0);
    if (ok && nimpl != nullptr) {
        *nimpl = 0;
    }
    return ok;
}

void starpu_do_schedule(void) {
    if (starpu_sched_policy* p = sp::user_policy(); p != nullptr && p->do_schedule != nullptr) {
        p->do_schedule(0);
    }
}

// ---- task lists ------------------------------------------------------------------------------

void starpu_task_list_init(struct starpu_task_list* list) {
    list->head = nullptr;
    list->tail = nullptr;
}

void starpu_task_list_push_front(struct starpu_task_list* list, struct starpu_task* task) {
    task->prev = nullptr;
    task->next = list->head;
    if (list->head != nullptr) {
        list->head->prev = task;
    } else {
        list->tail = task;
    }
    list->head = task;
}

void starpu_task_list_push_back(struct starpu_task_list* list, struct starpu_task* task) {
    task->next = nullptr;
    task->prev = list->tail;
    if (list->tail != nullptr) {
        list->tail->next = task;
    } else {
        list->head = task;
    }
    list->tail = task;
}

struct starpu_task* starpu_task_list_front(const struct starpu_task_list* list) { return list->head; }
struct starpu_task* starpu_task_list_back(const struct starpu_task_list* list) { return list->tail; }
int starpu_task_list_empty(const struct starpu_task_list* list) { return list->head == nullptr ? 1 : 0; }

void starpu_task_list_erase(struct starpu_task_list* list, struct starpu_task* task) {
    if (task->prev != nullptr) {
        task->prev->next = task->next;
    } else {
        list->head = task->next;
    }
    if (task->next != nullptr) {
        task->next->prev = task->prev;
    } else {
        list->tail = task->prev;
    }
    task->prev = nullptr;
    task->next = nullptr;
}

struct starpu_task* starpu_task_list_pop_front(struct starpu_task_list* list) {
    struct starpu_task* t = list->head;
    if (t != nullptr) {
        starpu_task_list_erase(list, t);
    }
    return t;
}

struct starpu_task* starpu_task_list_pop_back(struct starpu_task_list* list) {
    struct starpu_task* t = list->tail;
    if (t != nullptr) {
        starpu_task_list_erase(list, t);
    }
    return t;
}

struct starpu_task* starpu_task_list_begin(const struct starpu_task_list* list) { return list->head; }
struct starpu_task* starpu_task_list_end(const struct starpu_task_list* /*list*/) { return nullptr; }
struct starpu_task* starpu_task_list_next(const struct starpu_task* task) { return task->next; }

int starpu_task_list_ismember(const struct starpu_task_list* list, const struct starpu_task* look) {
    for (const starpu_task* t = list->head; t != nullptr; t = t->next) {
        if (t == look) {
            return 1;
        }
    }
    return 0;
}

void starpu_task_list_move(struct starpu_task_list* ldst, struct starpu_task_list* lsrc) {
    ldst->head = lsrc->head;
    ldst->tail = lsrc->tail;
    lsrc->head = nullptr;
    lsrc->tail = nullptr;
}

}  // extern "C"
