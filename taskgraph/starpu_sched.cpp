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
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <mutex>
#include <span>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
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

class user_policy;

/// A scheduling context as the StarPU API sees it (the core's context.cpp holds its workers
/// and policy): the application's policy running it, the policy's data, its worker
/// collection, and what starpu_sched_ctx_create was told. Slot STARPU_NMAX_SCHED_CTXS is the
/// "no context" id (starpu_sched_ctx_get_context() with none set): StarPU keeps a slot for it
/// too, whose policy data a program may set and read.
struct context {
    std::atomic<starpu_sched_policy*> ops{nullptr};  ///< while the application's policy runs
    starpu_sched_policy* pending = nullptr;          ///< given to starpu_init (context 0) or _create
    std::atomic<user_policy*> running{nullptr};
    void* data = nullptr;                            ///< starpu_sched_ctx_set_policy_data
    void* user_data = nullptr;
    spinlock coll_lock;
    starpu_worker_collection coll{};
    int ids[STARPU_NMAXWORKERS] = {};
    std::atomic<int> nworkers{0};  ///< the collection's; set before init_sched
    bool min_set = false;
    bool max_set = false;
    int min_prio = 0;
    int max_prio = 0;
    unsigned hierarchy_level = 0;
    unsigned nesting = STARPU_NMAX_SCHED_CTXS;
    bool awake = false;
    void (*policy_init)(unsigned) = nullptr;
};
context g_ctx[STARPU_NMAX_SCHED_CTXS + 1];

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

/// (Re)builds context id's collection for workers ids[0..n) (nullptr: 0..n-1).
void build_collection(unsigned id, const int* ids, int n, starpu_worker_collection_type type) noexcept {
    context& x = g_ctx[id];
    spin_guard g(x.coll_lock);
    starpu_worker_collection& c = x.coll;
    c = starpu_worker_collection{};
    for (int i = 0; i < n; ++i) {
        const int w = ids != nullptr ? ids[i] : i;
        x.ids[i] = w;
        c.present[w] = 1;
        c.is_unblocked[w] = 1;
    }
    c.workerids = x.ids;
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
    x.nworkers.store(n, std::memory_order_release);
}

/// A context's members from the core (0: every running worker).
int core_members(unsigned id, int* out) noexcept {
    const int n = context_workers(static_cast<int>(id), out, STARPU_NMAXWORKERS);
    return std::min(n, STARPU_NMAXWORKERS);
}

class user_policy final : public policy {
public:
    user_policy(const policy_context& ctx, starpu_sched_policy* ops)
        : ops_(ops), id_(static_cast<unsigned>(ctx.context_id)), local_of_(ctx.local_of) {
        for (auto& h : hint_) {
            h.store(false, std::memory_order_relaxed);
        }
        for (int i = 0; i < ctx.nworkers; ++i) {
            members_.push_back(ctx.members != nullptr ? ctx.members[i] : i);
        }
        context& x = g_ctx[id_];
        build_collection(id_, members_.data(), static_cast<int>(members_.size()), ops->worker_type);
        x.data = nullptr;
        x.ops.store(ops, std::memory_order_release);
        x.running.store(this, std::memory_order_release);
        if (ops_->init_sched != nullptr) {
            ops_->init_sched(id_);
        }
        if (ops_->add_workers != nullptr && !members_.empty()) {
            ops_->add_workers(id_, members_.data(), static_cast<unsigned>(members_.size()));
        }
    }
    ~user_policy() override {
        if (long n = refused_.load(std::memory_order_relaxed); n > 1) {
            MPC_LOG(error, tg, "scheduling policy %s: push_task refused %ld tasks in all", name(), n);
        }
        if (ops_->remove_workers != nullptr && !members_.empty()) {
            ops_->remove_workers(id_, members_.data(), static_cast<unsigned>(members_.size()));
        }
        if (ops_->deinit_sched != nullptr) {
            ops_->deinit_sched(id_);
        }
        context& x = g_ctx[id_];
        x.running.store(nullptr, std::memory_order_release);
        x.ops.store(nullptr, std::memory_order_release);
        x.data = nullptr;
    }

    bool resize(const int* old_members, int old_n, const int* members, int n) noexcept override {
        std::vector<int> gone;
        std::vector<int> come;
        for (int i = 0; i < old_n; ++i) {
            if (std::find(members, members + n, old_members[i]) == members + n) {
                gone.push_back(old_members[i]);
            }
        }
        for (int i = 0; i < n; ++i) {
            if (std::find(old_members, old_members + old_n, members[i]) == old_members + old_n) {
                come.push_back(members[i]);
            }
        }
        if (!gone.empty() && ops_->remove_workers != nullptr) {
            ops_->remove_workers(id_, gone.data(), static_cast<unsigned>(gone.size()));
        }
        members_.assign(members, members + n);
        build_collection(id_, members_.data(), n, ops_->worker_type);
        if (!come.empty() && ops_->add_workers != nullptr) {
            ops_->add_workers(id_, come.data(), static_cast<unsigned>(come.size()));
        }
        return true;
    }
    user_policy(const user_policy&) = delete;
    user_policy& operator=(const user_policy&) = delete;

    int push(task* t) noexcept override {
        starpu_task* st = api_task_of(t);
        if (st == nullptr) {
            keep(t);
            return -1;
        }
        st->sched_ctx = id_;
        t_wakes = wakes{};
        if (int rc = ops_->push_task(st); rc != 0) {
            if (refused_.fetch_add(1, std::memory_order_relaxed) == 0) {  // said once; counted at the end
                MPC_LOG(error, tg, "scheduling policy %s: push_task returned %d for task %s; the task runs anyway",
                        name(), rc, st->name != nullptr ? st->name : "(unnamed)");
            }
            keep(t);
            return -1;
        }
        const int n = static_cast<int>(members_.size());
        if (t_wakes.kicked >= 0 && to_local(t_wakes.kicked) >= 0) {
            return to_local(t_wakes.kicked);  // already kicked: the runtime's kick finds it awake
        }
        if (t_wakes.hinted >= 0 && to_local(t_wakes.hinted) >= 0) {
            // Awake workers were told; one sleeping worker (another) looks too.
            return n > 1 ? -1 : to_local(t_wakes.hinted);
        }
        for (int w : members_) {
            hint_[w].store(true, std::memory_order_seq_cst);
        }
        return wake_every_worker;
    }
    task* pop(int local) noexcept override {
        if (local < 0 || local >= static_cast<int>(members_.size())) {
            return nullptr;
        }
        const int worker = members_[static_cast<std::size_t>(local)];
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
        starpu_task* st = ops_->pop_task(id_);
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
    bool may_have_work(int local) const noexcept override {
        return nkept_.load(std::memory_order_relaxed) != 0 ||
               (local >= 0 && local < static_cast<int>(members_.size()) &&
                hint_[members_[static_cast<std::size_t>(local)]].load(std::memory_order_relaxed));
    }
    bool measures() const noexcept override { return ops_->post_exec_hook != nullptr; }
    void done(task* t, int /*worker*/, double /*us*/) noexcept override {
        if (starpu_task* st = api_task_of(t); st != nullptr) {
            ops_->post_exec_hook(st, id_);
        }
    }
    bool watches_pinned() const noexcept override { return ops_->push_task_notify != nullptr; }
    void pinned(task* t, int local) noexcept override {
        if (starpu_task* st = api_task_of(t); st != nullptr) {
            const int w = members_[static_cast<std::size_t>(local)];
            ops_->push_task_notify(st, w, w, id_);
        }
    }
    bool watches_starts() const noexcept override { return ops_->pre_exec_hook != nullptr; }
    void starting(task* t, int /*worker*/) noexcept override {
        if (starpu_task* st = api_task_of(t); st != nullptr) {
            ops_->pre_exec_hook(st, id_);
        }
    }

    /// Marks worker w (the runtime's id) as having work to look for (starpu_wake_worker_*).
    void poke(int w) noexcept {
        if (w >= 0 && w < STARPU_NMAXWORKERS) {
            hint_[w].store(true, std::memory_order_seq_cst);
        }
    }

private:
    int to_local(int w) const noexcept { return local_of_ != nullptr ? local_of_[w] : w; }
    const char* name() const noexcept { return ops_->policy_name != nullptr ? ops_->policy_name : "(unnamed)"; }
    void keep(task* t) noexcept {
        spin_guard g(kept_lock_);
        kept_.push_back(t);
        nkept_.fetch_add(1, std::memory_order_release);
    }

    starpu_sched_policy* ops_;
    unsigned id_;
    const std::int16_t* local_of_;
    std::vector<int> members_;  ///< the runtime's ids of the context's workers (policy indices)
    std::atomic<bool> hint_[STARPU_NMAXWORKERS];  ///< by the runtime's worker id
    spinlock kept_lock_;
    sched::detail::fifo<task> kept_;  ///< the runtime's own tasks, and tasks push_task refused
    std::atomic<long> nkept_{0};
    std::atomic<long> refused_{0};  ///< push_task calls that failed
};

std::unique_ptr<policy> make_user(const policy_context& ctx) {
    auto* ops = static_cast<starpu_sched_policy*>(ctx.app_policy);
    return std::make_unique<user_policy>(ctx, ops != nullptr ? ops : g_ctx[0].pending);
}

policy_entry g_entry{"(application)", "the application's struct starpu_sched_policy", &make_user, true};
/// The entry of an application's policy given to starpu_sched_ctx_create (its ops ride in
/// policy_context::app_policy).
policy_entry g_ctx_entry{"(application)", "the application's struct starpu_sched_policy", &make_user, true};

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

starpu_sched_policy* user_policy() noexcept { return g_ctx[0].ops.load(std::memory_order_acquire); }

starpu_sched_policy* user_policy_of(unsigned ctx) noexcept {
    return ctx < STARPU_NMAX_SCHED_CTXS ? g_ctx[ctx].ops.load(std::memory_order_acquire) : nullptr;
}

bool ctx_unknown(unsigned id, const char* call) noexcept {
    if (id == 0 || (id < STARPU_NMAX_SCHED_CTXS && context_exists(static_cast<int>(id)))) {
        return false;
    }
    MPC_LOG(error, tg, "%s: scheduling context %u does not exist", call, id);
    return true;
}

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
    g_ctx[0].pending = ops;
    g_entry.name = ops->policy_name != nullptr ? ops->policy_name : "(application)";
    g_entry.description = ops->policy_description != nullptr ? ops->policy_description : g_entry.description;
    *out = &g_entry;
    return 0;
}

/// For starpu_sched_ctx_create: an application's policy (*out stays nullptr) or one of the
/// predefined structures (*out: that built-in policy); -EINVAL without push_task.
int user_policy_entry_for_ctx(starpu_sched_policy* ops, const policy_entry** out) noexcept {
    *out = builtins().entry_of(ops);
    if (*out == nullptr && ops->push_task == nullptr) {
        MPC_LOG(error, tg, "starpu_sched_ctx_create: scheduling policy %s has no push_task",
                ops->policy_name != nullptr ? ops->policy_name : "(unnamed)");
        return -EINVAL;
    }
    return 0;
}

void poke(unsigned ctx, int worker) noexcept {
    if (class user_policy* p = g_ctx[ctx].running.load(std::memory_order_acquire); p != nullptr) {
        p->poke(worker);
    }
}

int policy_workers() noexcept { return g_ctx[0].nworkers.load(std::memory_order_acquire); }

void note_wake(int worker, bool kicked) noexcept {
    (kicked ? t_wakes.kicked : t_wakes.hinted) = worker;
}

}  // namespace mpc::tg::starpu

using namespace mpc::tg;
namespace sp = mpc::tg::starpu;

extern "C" {

struct starpu_worker_collection starpu_worker_list = sp::app_collection(STARPU_WORKER_LIST, &sp::list_add);
struct starpu_worker_collection starpu_worker_tree = sp::app_collection(STARPU_WORKER_TREE, &sp::tree_add);

// ---- scheduling contexts --------------------------------------------------------------------

namespace {

/// The context set by starpu_sched_ctx_set_context: id + 1 (0: none), per ULT (a worker, the
/// program's main under mpc_run) or per plain thread.
mpc::spinlock g_key_lock;
std::atomic<int> g_key{-1};
thread_local unsigned t_current = 0;

int ctx_key() noexcept {
    int k = g_key.load(std::memory_order_acquire);
    if (k >= 0 || !mpc::sched::initialized()) {
        return k;
    }
    mpc::spin_guard g(g_key_lock);
    k = g_key.load(std::memory_order_relaxed);
    if (k < 0) {
        if (mpc::result<mpc::sched::key> made = mpc::sched::key_create(); made) {
            k = *made;
            g_key.store(k, std::memory_order_release);
        }
    }
    return k;
}

/// Whether a thread ever set a context: until then every submission goes to context 0 without
/// a look at the thread's record.
std::atomic<bool> g_any_set{false};

unsigned current_plus_one() noexcept {
    if (!g_any_set.load(std::memory_order_relaxed)) [[likely]] {
        return 0;
    }
    if (mpc::sched::self() != nullptr) {
        const int k = g_key.load(std::memory_order_acquire);
        return k < 0 ? 0 : static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(mpc::sched::get_specific(k)));
    }
    return t_current;
}

/// The built-in policy named `name` ("" or NULL: the default, as StarPU's), or nullptr after
/// a warning (StarPU falls back to its default too).
const policy_entry* policy_by_name(const char* name) noexcept {
    if (name == nullptr || *name == '\0') {
        const char* env = std::getenv("STARPU_SCHED");
        if (env != nullptr && *env != '\0' && find_policy(env) != nullptr) {
            return find_policy(env);
        }
        return &policies()[0];
    }
    if (const policy_entry* e = find_policy(name); e != nullptr) {
        return e;
    }
    MPC_LOG(warn, tg, "starpu_sched_ctx_create: no scheduling policy '%s' (valid: %s); the context uses %s", name,
            policy_names(), policies()[0].name);
    return &policies()[0];
}

/// A valid context id for a query, or -1 after logging.
bool known(unsigned id, const char* call) noexcept { return !sp::ctx_unknown(id, call); }

}  // namespace

unsigned starpu_sched_ctx_create(int* workerids, int nworkers, const char* sched_ctx_name, ...) {
    va_list ap;
    va_start(ap, sched_ctx_name);
    const policy_entry* pe = nullptr;
    starpu_sched_policy* app = nullptr;
    bool min_set = false;
    bool max_set = false;
    int min_prio = 0;
    int max_prio = 0;
    unsigned level = 0;
    unsigned nesting = STARPU_NMAX_SCHED_CTXS;
    bool awake = false;
    void (*init)(unsigned) = nullptr;
    void* user_data = nullptr;
    for (int key = va_arg(ap, int); key != 0; key = va_arg(ap, int)) {
        if (key == STARPU_SCHED_CTX_POLICY_NAME) {
            pe = policy_by_name(va_arg(ap, const char*));
            app = nullptr;
        } else if (key == STARPU_SCHED_CTX_POLICY_STRUCT) {
            app = va_arg(ap, starpu_sched_policy*);
            pe = nullptr;
        } else if (key == STARPU_SCHED_CTX_POLICY_MIN_PRIO) {
            min_prio = va_arg(ap, int);
            min_set = true;
        } else if (key == STARPU_SCHED_CTX_POLICY_MAX_PRIO) {
            max_prio = va_arg(ap, int);
            max_set = true;
        } else if (key == STARPU_SCHED_CTX_HIERARCHY_LEVEL) {
            level = va_arg(ap, unsigned);
        } else if (key == STARPU_SCHED_CTX_NESTED) {
            nesting = va_arg(ap, unsigned);
        } else if (key == STARPU_SCHED_CTX_AWAKE_WORKERS) {
            awake = true;
        } else if (key == STARPU_SCHED_CTX_POLICY_INIT) {
            init = va_arg(ap, void (*)(unsigned));
        } else if (key == STARPU_SCHED_CTX_USER_DATA) {
            user_data = va_arg(ap, void*);
        } else if (key == STARPU_SCHED_CTX_CUDA_NSMS) {
            (void)va_arg(ap, int);  // GPU streams: no GPU worker here
        } else if (key == STARPU_SCHED_CTX_SUB_CTXS) {
            (void)va_arg(ap, int*);
            (void)va_arg(ap, int);
        } else {
            va_end(ap);
            MPC_LOG(error, tg, "starpu_sched_ctx_create(%s): unrecognized argument %d (or the list does not end with 0)",
                    sched_ctx_name != nullptr ? sched_ctx_name : "", key);
            sp::fatal("starpu_sched_ctx_create", "unrecognized argument");
        }
    }
    va_end(ap);
    if (app != nullptr) {
        const policy_entry* builtin = nullptr;
        if (sp::user_policy_entry_for_ctx(app, &builtin) != 0) {
            sp::fatal("starpu_sched_ctx_create", "the scheduling policy has no push_task");
        }
        if (builtin != nullptr) {
            pe = builtin;  // one of starpu_sched_get_predefined_policies()
            app = nullptr;
        } else {
            pe = &sp::g_ctx_entry;
        }
    }
    context_desc d;
    d.name = sched_ctx_name;
    d.workers = workerids;
    // StarPU's: -1 is every worker, 0 none (a context that gets workers later).
    if (nworkers > 0 && workerids == nullptr) {
        sp::fatal("starpu_sched_ctx_create", "worker ids are NULL but their count is not 0 (-1: every worker)");
    }
    d.nworkers = nworkers < 0 ? -1 : nworkers;
    d.policy = pe;
    d.app_policy = app;
    d.awake_workers = awake;
    // The API's record first: the policy's init_sched may read the priorities and user data.
    // Creation is serialised by the core; the slot it picks is the first free one, as here.
    unsigned guess = STARPU_NMAX_SCHED_CTXS;
    for (unsigned i = 1; i < STARPU_NMAX_SCHED_CTXS; ++i) {
        if (!context_exists(static_cast<int>(i))) {
            guess = i;
            break;
        }
    }
    if (guess < STARPU_NMAX_SCHED_CTXS) {
        sp::context& x = sp::g_ctx[guess];
        x.data = nullptr;
        x.user_data = user_data;
        x.min_set = min_set;
        x.max_set = max_set;
        x.min_prio = min_prio;
        x.max_prio = max_prio;
        x.hierarchy_level = level;
        x.nesting = nesting;
        x.awake = awake;
        x.policy_init = init;
    }
    if (init != nullptr && pe != nullptr && pe != &sp::g_ctx_entry) {
        MPC_LOG(info, tg, "starpu_sched_ctx_create(%s): STARPU_SCHED_CTX_POLICY_INIT is called by the policy "
                          "that reads it (heteroprio in context 0); this context's %s does not",
                sched_ctx_name != nullptr ? sched_ctx_name : "", pe->name);
    }
    mpc::result<int> id = context_create(d);
    if (!id) {
        sp::fatal("starpu_sched_ctx_create", id.error().reason());  // StarPU asserts too
    }
    if (static_cast<unsigned>(*id) != guess) {
        sp::fatal("starpu_sched_ctx_create", "contexts created concurrently (StarPU serialises them too: create them "
                                             "from one thread)");
    }
    return static_cast<unsigned>(*id);
}

unsigned starpu_sched_ctx_create_inside_interval(const char* policy_name, const char* sched_ctx_name, int min_ncpus,
                                                 int max_ncpus, int /*min_ngpus*/, int /*max_ngpus*/,
                                                 unsigned allow_overlap) {
    // The first CPU workers in no other context (any worker when overlapping is allowed), up to
    // max_ncpus, at least min_ncpus.
    std::vector<int> pick;
    const int n = static_cast<int>(starpu_worker_get_count());
    for (int pass = 0; pass < 2 && static_cast<int>(pick.size()) < max_ncpus; ++pass) {
        for (int w = 0; w < n && static_cast<int>(pick.size()) < max_ncpus; ++w) {
            const bool alone = worker_contexts(w) == 1u;
            if (std::find(pick.begin(), pick.end(), w) == pick.end() &&
                (pass == 0 ? alone : (allow_overlap != 0 || static_cast<int>(pick.size()) < min_ncpus))) {
                pick.push_back(w);
            }
        }
    }
    if (static_cast<int>(pick.size()) < min_ncpus) {
        MPC_LOG(warn, tg, "starpu_sched_ctx_create_inside_interval(%s): %zu CPU workers, %d asked for at least",
                sched_ctx_name != nullptr ? sched_ctx_name : "", pick.size(), min_ncpus);
    }
    return starpu_sched_ctx_create(pick.data(), static_cast<int>(pick.size()), sched_ctx_name,
                                   STARPU_SCHED_CTX_POLICY_NAME, policy_name, 0);
}

void starpu_sched_ctx_register_close_callback(unsigned sched_ctx_id, void (*close_callback)(unsigned, void*),
                                              void* args) {
    struct thunk {
        void (*fn)(unsigned, void*);
        void* args;
    };
    static thunk thunks[STARPU_NMAX_SCHED_CTXS];
    if (sched_ctx_id == 0 || !known(sched_ctx_id, "starpu_sched_ctx_register_close_callback")) {
        return;
    }
    thunks[sched_ctx_id] = thunk{close_callback, args};
    context_on_close(
        static_cast<int>(sched_ctx_id),
        [](int id, void* p) {
            auto* t = static_cast<thunk*>(p);
            if (t->fn != nullptr) {
                t->fn(static_cast<unsigned>(id), t->args);
            }
        },
        &thunks[sched_ctx_id])
        .ignore();
}

void starpu_sched_ctx_add_workers(int* workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id) {
    if (sched_ctx_id == 0) {
        return;  // context 0 has every worker
    }
    if (mpc::status st = context_add_workers(static_cast<int>(sched_ctx_id), workerids_ctx, static_cast<int>(nworkers_ctx));
        !st.ok()) {
        sp::fatal("starpu_sched_ctx_add_workers", st.reason());
    }
}

void starpu_sched_ctx_remove_workers(int* workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id) {
    if (sched_ctx_id == 0) {
        MPC_LOG(error, tg, "starpu_sched_ctx_remove_workers: the workers of context 0 are fixed here (every worker): "
                           "create a context for the workers that should run its tasks");
        return;
    }
    if (mpc::status st =
            context_remove_workers(static_cast<int>(sched_ctx_id), workerids_ctx, static_cast<int>(nworkers_ctx));
        !st.ok()) {
        sp::fatal("starpu_sched_ctx_remove_workers", st.reason());
    }
}

void starpu_sched_ctx_display_workers(unsigned sched_ctx_id, FILE* f) {
    if (!known(sched_ctx_id, "starpu_sched_ctx_display_workers")) {
        return;
    }
    int ids[STARPU_NMAXWORKERS];
    const int n = sp::core_members(sched_ctx_id, ids);
    const char* name = context_name(static_cast<int>(sched_ctx_id));
    std::fprintf(f, "[sched_ctx %u]: %d worker(s) (%s):\n", sched_ctx_id, n, name != nullptr ? name : "");
    for (int i = 0; i < n; ++i) {
        char wname[64];
        starpu_worker_get_name(ids[i], wname, sizeof wname);
        std::fprintf(f, "\t\t%s\n", wname);
    }
}

void starpu_sched_ctx_delete(unsigned sched_ctx_id) {
    if (sched_ctx_id == 0) {
        MPC_LOG(error, tg, "starpu_sched_ctx_delete: context 0 is the runtime's own (it ends with starpu_shutdown)");
        return;
    }
    if (mpc::status st = context_delete(static_cast<int>(sched_ctx_id)); !st.ok()) {
        sp::fatal("starpu_sched_ctx_delete", st.reason());
    }
    sp::context& x = sp::g_ctx[sched_ctx_id];
    x.data = nullptr;
    x.user_data = nullptr;
    x.min_set = x.max_set = false;
}

void starpu_sched_ctx_set_inheritor(unsigned sched_ctx_id, unsigned inheritor) {
    if (inheritor >= STARPU_NMAX_SCHED_CTXS) {
        sp::fatal("starpu_sched_ctx_set_inheritor", "the inheritor is not a context id");
    }
    if (mpc::status st = context_set_inheritor(static_cast<int>(sched_ctx_id), static_cast<int>(inheritor)); !st.ok()) {
        sp::fatal("starpu_sched_ctx_set_inheritor", st.reason());
    }
}

unsigned starpu_sched_ctx_get_inheritor(unsigned sched_ctx_id) {
    const int i = sched_ctx_id == 0 ? -1 : context_inheritor(static_cast<int>(sched_ctx_id));
    return i < 0 ? STARPU_NMAX_SCHED_CTXS : static_cast<unsigned>(i);
}

unsigned starpu_sched_ctx_get_hierarchy_level(unsigned sched_ctx_id) {
    return sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? sp::g_ctx[sched_ctx_id].hierarchy_level : 0;
}

void starpu_sched_ctx_set_context(unsigned* sched_ctx_id) {
    const unsigned v = sched_ctx_id != nullptr ? *sched_ctx_id + 1 : 0;
    if (v != 0) {
        g_any_set.store(true, std::memory_order_relaxed);  // this thread reads its own store
    }
    if (mpc::sched::self() != nullptr) {
        const int k = ctx_key();
        if (k >= 0) {
            mpc::sched::set_specific(k, reinterpret_cast<void*>(static_cast<std::uintptr_t>(v))).ignore();
        }
        return;
    }
    t_current = v;
}

unsigned starpu_sched_ctx_get_context(void) {
    const unsigned v = current_plus_one();
    return v == 0 ? STARPU_NMAX_SCHED_CTXS : v - 1;
}


void starpu_sched_ctx_stop_task_submission(void) {
    // StarPU's submits a task telling its hypervisor that submission is over; there is no
    // hypervisor here, and starpu_sched_ctx_finished_submit() is what moves workers.
}

void starpu_sched_ctx_finished_submit(unsigned sched_ctx_id) {
    if (sched_ctx_id != 0) {
        context_finished_submit(static_cast<int>(sched_ctx_id)).ignore();
    }
}

unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int** workerids) {
    int ids[STARPU_NMAXWORKERS];
    const int n = known(sched_ctx_id, "starpu_sched_ctx_get_workers_list") ? sp::core_members(sched_ctx_id, ids) : 0;
    *workerids = static_cast<int*>(std::malloc(sizeof(int) * static_cast<std::size_t>(n > 0 ? n : 1)));
    if (*workerids == nullptr) {
        return 0;
    }
    std::copy(ids, ids + n, *workerids);
    return static_cast<unsigned>(n);
}

unsigned starpu_sched_ctx_get_workers_list_raw(unsigned sched_ctx_id, int** workerids) {
    if (!known(sched_ctx_id, "starpu_sched_ctx_get_workers_list_raw")) {
        *workerids = nullptr;
        return 0;
    }
    starpu_worker_collection* c = starpu_sched_ctx_get_worker_collection(sched_ctx_id);
    *workerids = c->workerids;
    return c->nworkers;
}

unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id) {
    int ids[STARPU_NMAXWORKERS];
    return known(sched_ctx_id, "starpu_sched_ctx_get_nworkers") ? static_cast<unsigned>(sp::core_members(sched_ctx_id, ids))
                                                                 : 0;
}

void starpu_sched_ctx_set_priority(int* workers, int nworkers, unsigned sched_ctx_id, unsigned priority) {
    if (!known(sched_ctx_id, "starpu_sched_ctx_set_priority") || nworkers < 0 || (nworkers > 0 && workers == nullptr)) {
        return;
    }
    context_set_priority(static_cast<int>(sched_ctx_id), workers, nworkers, priority).ignore();
}

unsigned starpu_sched_ctx_get_priority(int worker, unsigned sched_ctx_id) {
    return known(sched_ctx_id, "starpu_sched_ctx_get_priority") ? context_priority(static_cast<int>(sched_ctx_id), worker)
                                                                : 0;
}

unsigned starpu_sched_ctx_get_nshared_workers(unsigned sched_ctx_id, unsigned sched_ctx_id2) {
    int a[STARPU_NMAXWORKERS];
    if (!known(sched_ctx_id, "starpu_sched_ctx_get_nshared_workers") ||
        !known(sched_ctx_id2, "starpu_sched_ctx_get_nshared_workers")) {
        return 0;
    }
    const int n = sp::core_members(sched_ctx_id, a);
    unsigned shared = 0;
    for (int i = 0; i < n; ++i) {
        shared += context_has_worker(static_cast<int>(sched_ctx_id2), a[i]) ? 1 : 0;
    }
    return shared;
}

unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id) {
    return sched_ctx_id < STARPU_NMAX_SCHED_CTXS && context_has_worker(static_cast<int>(sched_ctx_id), workerid) ? 1 : 0;
}

unsigned starpu_sched_ctx_contains_type_of_worker(enum starpu_worker_archtype arch, unsigned sched_ctx_id) {
    return (arch == STARPU_CPU_WORKER || arch == STARPU_ANY_WORKER) && starpu_sched_ctx_get_nworkers(sched_ctx_id) > 0 ? 1 : 0;
}

unsigned starpu_sched_ctx_worker_get_id(unsigned sched_ctx_id) {
    const int w = starpu_worker_get_id();
    return w >= 0 && starpu_sched_ctx_contains_worker(w, sched_ctx_id) ? static_cast<unsigned>(w) : static_cast<unsigned>(-1);
}

unsigned starpu_sched_ctx_get_ctx_for_task(struct starpu_task* task) { return task->sched_ctx; }

unsigned starpu_sched_ctx_overlapping_ctxs_on_worker(int workerid) {
    // StarPU's: whether the worker is in more than one context (context 0 counts).
    const unsigned m = worker_contexts(workerid);
    return m != 0 && (m & (m - 1)) != 0 ? 1 : 0;
}

void* starpu_sched_ctx_get_user_data(unsigned sched_ctx_id) {
    return sched_ctx_id <= STARPU_NMAX_SCHED_CTXS ? sp::g_ctx[sched_ctx_id].user_data : nullptr;
}

void starpu_sched_ctx_set_user_data(unsigned sched_ctx_id, void* user_data) {
    if (sched_ctx_id <= STARPU_NMAX_SCHED_CTXS) {
        sp::g_ctx[sched_ctx_id].user_data = user_data;
    }
}

void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void* policy_data) {
    if (sched_ctx_id > STARPU_NMAX_SCHED_CTXS) {
        sp::fatal("starpu_sched_ctx_set_policy_data", "not a scheduling context id");
    }
    sp::g_ctx[sched_ctx_id].data = policy_data;
}

void* starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id) {
    return sched_ctx_id <= STARPU_NMAX_SCHED_CTXS ? sp::g_ctx[sched_ctx_id].data : nullptr;
}

struct starpu_sched_policy* starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id) {
    return known(sched_ctx_id, "starpu_sched_ctx_get_sched_policy") ? sp::user_policy_of(sched_ctx_id) : nullptr;
}

struct starpu_worker_collection* starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id) {
    if (!known(sched_ctx_id, "starpu_sched_ctx_get_worker_collection")) {
        return nullptr;
    }
    sp::context& x = sp::g_ctx[sched_ctx_id];
    if (sp::user_policy_of(sched_ctx_id) == nullptr) {  // a built-in policy: the collection of the members
        int ids[STARPU_NMAXWORKERS];
        const int n = sp::core_members(sched_ctx_id, ids);
        bool same = n == x.nworkers.load(std::memory_order_acquire);
        for (int i = 0; same && i < n; ++i) {
            same = x.ids[i] == ids[i];
        }
        if (!same) {
            sp::build_collection(sched_ctx_id, ids, n, STARPU_WORKER_LIST);
        }
    }
    return &x.coll;
}

void* starpu_sched_ctx_exec_parallel_code(void* (*func)(void*), void* param, unsigned sched_ctx_id) {
    // StarPU blocks the context's other workers while func runs on the caller, so that func's
    // threads (OpenMP's) may take their CPUs; here they keep serving their contexts.
    if (!known(sched_ctx_id, "starpu_sched_ctx_exec_parallel_code")) {
        return nullptr;
    }
    return func(param);
}

void starpu_sched_ctx_get_available_cpuids(unsigned sched_ctx_id, int** cpuids, int* ncpuids) {
    int ids[STARPU_NMAXWORKERS];
    const int n = known(sched_ctx_id, "starpu_sched_ctx_get_available_cpuids") ? sp::core_members(sched_ctx_id, ids) : 0;
    *cpuids = static_cast<int*>(std::malloc(sizeof(int) * static_cast<std::size_t>(n > 0 ? n : 1)));
    *ncpuids = 0;
    if (*cpuids == nullptr) {
        return;
    }
    // As StarPU's: all of them for the master (the first member) or a thread that is no
    // worker; a worker's own CPU for any other member.
    const int me = starpu_worker_get_id();
    for (int i = 0; i < n; ++i) {
        if (me < 0 || (n > 0 && ids[0] == me) || ids[i] == me) {
            (*cpuids)[(*ncpuids)++] = starpu_worker_get_bindid(ids[i]);
        }
    }
}

void starpu_sched_ctx_bind_current_thread_to_cpuid(unsigned cpuid) {
    if (mpc::sched::self() != nullptr) {
        if (mpc::sched::current_vp() != static_cast<int>(cpuid)) {
            starpu_bind_thread_on(static_cast<int>(cpuid), 0, "sched_ctx");  // a ULT moves to that VP
        }
        return;
    }
    if (!mpc::sched::initialized() || static_cast<int>(cpuid) >= mpc::sched::nr_vps()) {
        MPC_LOG(error, tg, "starpu_sched_ctx_bind_current_thread_to_cpuid: no CPU %u", cpuid);
        return;
    }
    if (mpc::status st = mpc::topo::bind_this_thread(mpc::sched::vp_place(static_cast<int>(cpuid))); !st.ok()) {
        MPC_LOG(warn, tg, "starpu_sched_ctx_bind_current_thread_to_cpuid(%u): %s", cpuid, st.reason());
    }
}

int starpu_sched_ctx_get_worker_rank(unsigned sched_ctx_id) {
    // StarPU's: the caller's index among the members of a context without policy whose
    // workers are awake (each runs every task); -1 otherwise.
    if (sched_ctx_id == 0 || sched_ctx_id >= STARPU_NMAX_SCHED_CTXS || !sp::g_ctx[sched_ctx_id].awake ||
        context_policy_name(static_cast<int>(sched_ctx_id)) != nullptr || !context_exists(static_cast<int>(sched_ctx_id))) {
        return -1;
    }
    int ids[STARPU_NMAXWORKERS];
    const int n = sp::core_members(sched_ctx_id, ids);
    const int me = starpu_worker_get_id();
    for (int i = 0; i < n; ++i) {
        if (ids[i] == me) {
            return i;
        }
    }
    return -1;
}

void (*starpu_sched_ctx_get_sched_policy_init(unsigned sched_ctx_id))(unsigned) {
    if (sched_ctx_id == 0) {
        return sp::policy_init_of_ctx0();
    }
    return sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? sp::g_ctx[sched_ctx_id].policy_init : nullptr;
}

unsigned starpu_sched_ctx_has_starpu_scheduler(unsigned sched_ctx_id, unsigned* awake_workers) {
    if (awake_workers != nullptr) {
        *awake_workers = sched_ctx_id < STARPU_NMAX_SCHED_CTXS && sp::g_ctx[sched_ctx_id].awake ? 1 : 0;
    }
    if (sched_ctx_id == 0) {
        return 1;
    }
    return context_policy_name(static_cast<int>(sched_ctx_id)) != nullptr ? 1 : 0;
}

int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id) {
    if (sched_ctx_id < STARPU_NMAX_SCHED_CTXS && sp::g_ctx[sched_ctx_id].min_set) {
        return sp::g_ctx[sched_ctx_id].min_prio;
    }
    if (sched_ctx_id == 0 || sched_ctx_id >= STARPU_NMAX_SCHED_CTXS) {
        return starpu_sched_get_min_priority();  // context 0's: STARPU_MIN_PRIO, the policy's range
    }
    int min = 0;
    int max = 0;
    priority_range(&min, &max);
    return min;
}

int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id) {
    if (sched_ctx_id < STARPU_NMAX_SCHED_CTXS && sp::g_ctx[sched_ctx_id].max_set) {
        return sp::g_ctx[sched_ctx_id].max_prio;
    }
    if (sched_ctx_id == 0 || sched_ctx_id >= STARPU_NMAX_SCHED_CTXS) {
        return starpu_sched_get_max_priority();
    }
    int min = 0;
    int max = 0;
    priority_range(&min, &max);
    return max;
}

int starpu_sched_ctx_set_min_priority(unsigned sched_ctx_id, int min_prio) {
    if (sched_ctx_id >= STARPU_NMAX_SCHED_CTXS) {
        return -EINVAL;
    }
    sp::g_ctx[sched_ctx_id].min_prio = min_prio;
    sp::g_ctx[sched_ctx_id].min_set = true;
    return 0;
}

int starpu_sched_ctx_set_max_priority(unsigned sched_ctx_id, int max_prio) {
    if (sched_ctx_id >= STARPU_NMAX_SCHED_CTXS) {
        return -EINVAL;
    }
    sp::g_ctx[sched_ctx_id].max_prio = max_prio;
    sp::g_ctx[sched_ctx_id].max_set = true;
    return 0;
}

int starpu_sched_set_min_priority(int min_prio) {
    return starpu_sched_ctx_set_min_priority(sp::submit_context(), min_prio);
}

int starpu_sched_set_max_priority(int max_prio) {
    return starpu_sched_ctx_set_max_priority(sp::submit_context(), max_prio);
}

int starpu_sched_ctx_min_priority_is_set(unsigned sched_ctx_id) {
    return sched_ctx_id < STARPU_NMAX_SCHED_CTXS && sp::g_ctx[sched_ctx_id].min_set ? 1 : 0;
}

int starpu_sched_ctx_max_priority_is_set(unsigned sched_ctx_id) {
    return sched_ctx_id < STARPU_NMAX_SCHED_CTXS && sp::g_ctx[sched_ctx_id].max_set ? 1 : 0;
}

unsigned starpu_worker_get_sched_ctx_list(int workerid, unsigned** sched_ctxs) {
    const unsigned m = worker_contexts(workerid);
    *sched_ctxs = static_cast<unsigned*>(std::malloc(sizeof(unsigned) * STARPU_NMAX_SCHED_CTXS));
    if (*sched_ctxs == nullptr) {
        return 0;
    }
    unsigned n = 0;
    for (unsigned c = 0; c < STARPU_NMAX_SCHED_CTXS; ++c) {
        if ((m & (1u << c)) != 0) {
            (*sched_ctxs)[n++] = c;
        }
    }
    return n;
}

struct starpu_sched_policy** starpu_sched_get_predefined_policies(void) { return sp::builtins().list.get(); }

void starpu_worker_get_sched_condition(int workerid, pthread_mutex_t** sched_mutex, pthread_cond_t** sched_cond) {
    static pthread_mutex_t mutexes[STARPU_NMAXWORKERS];
    static pthread_cond_t conds[STARPU_NMAXWORKERS];
    static std::once_flag made;
    std::call_once(made, [] {
        for (int i = 0; i < STARPU_NMAXWORKERS; ++i) {
            pthread_mutex_init(&mutexes[i], nullptr);
            pthread_cond_init(&conds[i], nullptr);
        }
    });
    if (workerid < 0 || workerid >= STARPU_NMAXWORKERS) {
        sp::fatal("starpu_worker_get_sched_condition", "not a worker id");
    }
    *sched_mutex = &mutexes[workerid];
    *sched_cond = &conds[workerid];
}

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
    const unsigned m = worker_contexts(workerid);
    for (unsigned c = 0; c < STARPU_NMAX_SCHED_CTXS; ++c) {
        if ((m & (1u << c)) != 0) {
            sp::poke(c, workerid);
        }
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
    if (workerid >= starpu_worker_get_count() || nimpl >= STARPU_MAXIMPLEMENTATIONS || task == nullptr) {
        return 0;
    }
    if (task->cl == nullptr) {
        return nimpl == 0 && sp::worker_may_run(workerid, task) ? 1 : 0;
    }
    if (task->cl->cpu_funcs[nimpl] == nullptr || !sp::worker_may_run(workerid, task)) {
        return 0;
    }
    return task->cl->can_execute == nullptr || task->cl->can_execute(workerid, task, nimpl) != 0 ? 1 : 0;
}

int starpu_worker_can_execute_task_impl(unsigned workerid, struct starpu_task* task, unsigned* impl_mask) {
    unsigned mask = 0;
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS; ++k) {
        if (starpu_worker_can_execute_task(workerid, task, k) != 0) {
            mask |= 1u << k;
        }
    }
    if (impl_mask != nullptr) {
        *impl_mask = mask;
    }
    return mask != 0 ? 1 : 0;
}

int starpu_worker_can_execute_task_first_impl(unsigned workerid, struct starpu_task* task, unsigned* nimpl) {
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS; ++k) {
        if (starpu_worker_can_execute_task(workerid, task, k) != 0) {
            if (nimpl != nullptr) {
                *nimpl = k;
            }
            return 1;
        }
    }
    return 0;
}

void starpu_do_schedule(void) {
    for (unsigned c = 0; c < STARPU_NMAX_SCHED_CTXS; ++c) {
        if (starpu_sched_policy* p = sp::user_policy_of(c); p != nullptr && p->do_schedule != nullptr) {
            p->do_schedule(c);
        }
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

unsigned mpc::tg::starpu::submit_context() noexcept {
    const unsigned v = current_plus_one();
    return v == 0 ? 0 : v - 1;
}
