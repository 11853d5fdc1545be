/// \file
/// Scheduling contexts (StarPU's sched_ctx): sets of workers, each with its own policy, to
/// which tasks are submitted.
///
/// Context 0 is the runtime's own: every worker, the policy chosen at init, and the fast path
/// (runtime.cpp calls its policy directly, without a lock). Its members never change. The
/// other contexts (1 .. max_contexts-1) live here. Each has:
/// - its members (the runtime's worker ids) and a policy made for them: the policy sees them as
///   workers 0..n-1 (policy_context::members / local_of translate);
/// - a reader-writer lock: pushes and the members' pops read, a change of members writes. The
///   writer replaces a built-in policy by a new one made for the new members, moving the tasks
///   the old one held; an application's policy follows through its add_workers/remove_workers
///   (policy::resize);
/// - the tasks submitted and not finished (wait_for_all_in_context), and an inheritor: once the
///   application said it has finished submitting (finished_submit) and the last task ends,
///   the members join the inheritor, as in StarPU.
///
/// A worker knows its contexts by a bit mask (g_mask): 0 for a worker in context 0 only, which
/// keeps the runtime on its fast path; otherwise it serves its contexts in turn (runtime.cpp).
///
/// A context without policy (StarPU's, created without one) runs its tasks on its first
/// member, its master. A context with no member keeps its tasks until it gets some.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "lib/fence.hpp"
#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/gate.hpp"
#include "taskgraph/policy.hpp"

namespace mpc::tg {
namespace detail {
namespace {

/// Readers: pushes and pops (short, never blocking); the writer: a change of members, which
/// waits for the readers to leave. Writers are serialised by g_change.
class rwlock {
public:
    void lock_shared() noexcept {
        while (!try_lock_shared()) {
            relax();
        }
    }
    bool try_lock_shared() noexcept {
        int v = s_.load(std::memory_order_relaxed);
        while ((v & writer) == 0) {
            if (s_.compare_exchange_weak(v, v + 1, std::memory_order_acquire, std::memory_order_relaxed)) {
                return true;
            }
        }
        return false;
    }
    void unlock_shared() noexcept { s_.fetch_sub(1, std::memory_order_release); }
    void lock() noexcept {
        s_.fetch_or(writer, std::memory_order_acquire);
        while ((s_.load(std::memory_order_acquire) & ~writer) != 0) {
            relax();
        }
        owner_.store(me(), std::memory_order_relaxed);
    }
    void unlock() noexcept {
        owner_.store(nullptr, std::memory_order_relaxed);
        s_.fetch_and(~writer, std::memory_order_release);
    }
    /// Whether the caller is the writer (an application's policy hook, called during a change,
    /// asking about its context).
    bool held_by_me() const noexcept { return owner_.load(std::memory_order_relaxed) == me(); }

private:
    static constexpr int writer = 1 << 30;
    static void relax() noexcept {
        if (sched::self() != nullptr) {
            sched::yield();  // the other side may be a ULT of this VP
        } else {
            cpu_relax();
        }
    }
    static const void* me() noexcept {
        static thread_local char here;
        sched::ult* u = sched::self();
        return u != nullptr ? static_cast<const void*>(u) : static_cast<const void*>(&here);
    }
    std::atomic<int> s_{0};
    std::atomic<const void*> owner_{nullptr};
};

/// A reader's hold, or nothing when the caller is the writer already (a policy hook run during a
/// change of members that asks about its context: it sees the change's state).
struct shared_guard {
    explicit shared_guard(rwlock& l) noexcept : l_(l), taken_(!l.held_by_me()) {
        if (taken_) {
            l_.lock_shared();
        }
    }
    ~shared_guard() {
        if (taken_) {
            l_.unlock_shared();
        }
    }
    shared_guard(const shared_guard&) = delete;
    shared_guard& operator=(const shared_guard&) = delete;
    rwlock& l_;
    bool taken_;
};

struct context {
    rwlock lock;
    std::atomic<bool> live{false};  ///< created and not deleted; written under g_change
    bool deleting = false;          ///< under g_change
    bool no_policy = false;         ///< tasks run on the master (members[0])
    bool awake = false;             ///< without policy: every member runs each task (SPMD)
    const policy_entry* pe = nullptr;
    void* app = nullptr;  ///< policy_context::app_policy
    std::string name;
    // Under the lock (written by a writer, read by readers).
    std::unique_ptr<policy> pol;
    bool measures = false;
    bool starts = false;
    bool pins = false;
    std::vector<int> members;
    std::vector<int> vps;
    std::int16_t local[max_workers];
    std::uint16_t gen = 0;  ///< bumped when the policy is replaced (task::ctx_gen)
    spinlock wait_lock;
    sched::detail::fifo<task> waiting;  ///< no member (or no policy made) yet
    long nwaiting = 0;                  ///< under wait_lock
    // Under g_change.
    int inheritor = -1;
    std::atomic<bool> finished_submit{false};
    bool closed = false;  ///< done: its members went to the inheritor (under g_change)
    // Tasks submitted and not finished, and their waiters (wait_for_all_in_context).
    alignas(64) std::atomic<long> count{0};
    std::atomic<long> notify_at{-1};  ///< the highest count a waiter waits for; -1: none
    gate drained;
    // The close callback (StarPU's register_close_callback), under g_change.
    void (*on_close)(int, void*) = nullptr;
    void* on_close_arg = nullptr;
};

context g_ctx[max_contexts];
std::atomic<std::uint32_t> g_mask[max_workers];  ///< bit c: worker in context c (c >= 1)
/// Worker w's priority in context c (context_set_priority; 0 by default, as StarPU's): a
/// worker in several contexts serves the higher first.
std::atomic<unsigned> g_prio[max_contexts][max_workers];
std::atomic<bool> g_prios_set{false};  ///< one was ever set (else every worker turns round-robin)
/// Context 0's own count: its tasks, for wait_for_all_in_context(0) while others exist.
gate g_drained0;

/// A task of a context ended, leaving `left`: wakes the waiters for a count it reached.
void notify_count(std::atomic<long>& count, std::atomic<long>& notify_at, gate& g, long left) noexcept {
    if (left > notify_at.load(std::memory_order_seq_cst)) {
        return;
    }
    g.lock.lock();
    gate::wakeups w;
    if (count.load(std::memory_order_seq_cst) <= notify_at.load(std::memory_order_relaxed)) {
        w = g.notify_locked();
        notify_at.store(-1, std::memory_order_relaxed);  // the woken register again if they still wait
    }
    g.lock.unlock();
    gate::deliver(w);
}
std::atomic<int> g_nlive{0};  ///< contexts other than 0 alive

/// Serialises the changes of contexts (create, members, delete).
blocking_mutex g_change("mpc::tg scheduling context change");
struct change_guard {
    change_guard() noexcept { g_change.lock(); }
    ~change_guard() { g_change.unlock(); }
    change_guard(const change_guard&) = delete;
    change_guard& operator=(const change_guard&) = delete;
};

bool valid_id(int id) noexcept { return id >= 1 && id < max_contexts; }

/// Puts t in context c's policy (its lock held, shared or not), or keeps it / pins it when
/// the context has no policy. Returns the local worker to wake, -1 for any, or
/// wake_every_worker; -3: nothing to wake (kept or pinned).
int place(context& c, task* t) noexcept {
    if (c.pol != nullptr) {
        t->ctx_gen = c.gen;
        return c.pol->push(t);
    }
    if (c.no_policy && !c.members.empty()) {
        if (c.awake && c.members.size() > 1) {
            dispatch_on(t, c.members.data(), static_cast<int>(c.members.size()), -1, 1);  // every member
        } else {
            push_local(t, c.members[0], false).ignore();  // the master
        }
        return -3;
    }
    spin_guard g(c.wait_lock);
    c.waiting.push_back(t);
    ++c.nwaiting;
    return -3;
}

/// Wakes for a push into c that answered `target` (under c's lock).
void wake_for(const context& c, int target) noexcept {
    const int n = static_cast<int>(c.members.size());
    if (target >= 0 && target < n) {
        wake_worker(c.members[static_cast<std::size_t>(target)]);
        return;
    }
    if (target == wake_every_worker) {
        for (int w : c.members) {
            wake_worker(w);
        }
        return;
    }
    if (target == -1) {
        for (int w : c.members) {
            if (wake_worker(w)) {
                return;  // one sleeping member woke; the awake ones look anyway
            }
        }
    }
}

/// Makes c's policy for its current members (its lock held for writing).
void make_policy(context& c) noexcept {
    const int n = static_cast<int>(c.members.size());
    if (c.no_policy || c.pe == nullptr || (n == 0 && !c.pe->any_size)) {
        return;
    }
    policy_context pc;
    pc.nworkers = n;
    pc.current_worker = &current_worker;
    pc.worker_vp = c.vps.data();
    pc.context_id = static_cast<int>(&c - g_ctx);
    pc.members = c.members.data();
    pc.local_of = c.local;
    pc.app_policy = c.app;
    c.pol = c.pe->make(pc);
    c.measures = c.pol->measures();
    c.starts = c.pol->watches_starts();
    c.pins = c.pol->watches_pinned();
    if (c.measures) {
        g_policy_done.store(true, std::memory_order_relaxed);  // the runtime times every task from now on
    }
    c.pol->started();
    ++c.gen;
}

/// Fills c's arrays for `now` (its lock held for writing).
void fill_members(context& c, std::vector<int> now) noexcept {
    c.members = std::move(now);
    std::fill(std::begin(c.local), std::end(c.local), static_cast<std::int16_t>(-1));
    c.vps.clear();
    for (std::size_t i = 0; i < c.members.size(); ++i) {
        c.local[c.members[i]] = static_cast<std::int16_t>(i);
        c.vps.push_back(worker_vp(c.members[i]));
    }
}

/// Gives c the members `now` (its lock not held; g_change held), moving its tasks.
void set_members(context& c, std::vector<int> now) noexcept {
    const int id = static_cast<int>(&c - g_ctx);
    std::vector<task*> moved;
    c.lock.lock();
    const std::vector<int> before = c.members;
    if (c.pol != nullptr && c.pe != nullptr && c.pe->any_size) {
        // An application's policy follows (its add_workers / remove_workers).
        fill_members(c, std::move(now));
        c.pol->resize(before.data(), static_cast<int>(before.size()), c.members.data(), static_cast<int>(c.members.size()));
    } else {
        if (c.pol != nullptr) {
            // Drained while its arrays still describe the old members: a built-in policy keeps
            // per-worker queues indexed 0..n-1.
            for (int l = 0; l < static_cast<int>(before.size()); ++l) {
                while (task* t = c.pol->pop(l)) {
                    moved.push_back(t);
                }
                while (task* t = c.pol->pop_idle(l)) {
                    moved.push_back(t);
                }
            }
            c.pol.reset();
        }
        fill_members(c, std::move(now));
        make_policy(c);
    }
    for (int w : before) {
        g_mask[w].fetch_and(~(1u << id), std::memory_order_relaxed);
    }
    for (int w : c.members) {
        g_mask[w].fetch_or(1u << id, std::memory_order_relaxed);
    }
    {
        spin_guard g(c.wait_lock);
        while (task* t = c.waiting.pop_front()) {
            moved.push_back(t);
            --c.nwaiting;
        }
    }
    for (task* t : moved) {
        place(c, t);
    }
    c.lock.unlock();
    // Every member looks: the moved tasks, and a worker new to the context.
    for (int w : c.members) {
        wake_worker(w);
    }
}

std::vector<int> valid_members(const int* workers, int n, const char* call) noexcept {
    std::vector<int> out;
    const int nw = worker_count();
    if (n < 0) {
        for (int w = 0; w < nw; ++w) {
            out.push_back(w);
        }
        return out;
    }
    for (int i = 0; i < n; ++i) {
        const int w = workers[i];
        if (w < 0 || w >= nw) {
            MPC_LOG(error, tg, "%s: %d is not a worker (there are %d): left out", call, w, nw);
            continue;
        }
        if (std::find(out.begin(), out.end(), w) == out.end()) {
            out.push_back(w);
        }
    }
    return out;
}

/// Called when c's count reached 0: its waiters, and the move to the inheritor.
/// Both the last task's end and finished_submit() come here (whichever is last does the work:
/// each writes its side, sequentially consistent, before reading the other's).
void drained(context& c) noexcept {
    if (!c.finished_submit.load(std::memory_order_seq_cst)) {
        return;
    }
    change_guard g;
    const int inh = c.inheritor;
    if (!c.live.load(std::memory_order_relaxed) || c.deleting || c.closed ||
        c.count.load(std::memory_order_seq_cst) != 0 || inh < 0) {
        return;
    }
    c.closed = true;
    if (c.on_close != nullptr) {
        c.on_close(static_cast<int>(&c - g_ctx), c.on_close_arg);
    }
    if (inh == 0) {
        return;  // context 0 has every worker already
    }
    context& to = g_ctx[inh];
    if (!to.live.load(std::memory_order_relaxed)) {
        return;
    }
    std::vector<int> now = to.members;
    for (int w : c.members) {
        if (std::find(now.begin(), now.end(), w) == now.end()) {
            now.push_back(w);
        }
    }
    if (now.size() != to.members.size()) {
        MPC_LOG(debug, tg, "scheduling context %d finished: its workers join context %d", static_cast<int>(&c - g_ctx), inh);
        set_members(to, std::move(now));
    }
}

}  // namespace

// Context 0's count: its own line (every task's submission and end write it).
alignas(64) std::atomic<long> g_ctx0_count{0};
alignas(64) std::atomic<long> g_ctx0_notify{-1};

// ---- the runtime's side (runtime.cpp, task.cpp) --------------------------------------------

std::uint32_t ctx_mask(int w) noexcept { return g_mask[w].load(std::memory_order_relaxed); }
bool ctx_prios_set() noexcept { return g_prios_set.load(std::memory_order_relaxed); }
unsigned ctx_prio(int id, int w) noexcept { return g_prio[id][w].load(std::memory_order_relaxed); }

bool ctx_live(int id) noexcept { return id == 0 || (valid_id(id) && g_ctx[id].live.load(std::memory_order_acquire)); }

void ctx_push(task* t) noexcept {
    context& c = g_ctx[t->ctx];
    shared_guard g(c.lock);
    const int target = place(c, t);
    mpc::full_fence();  // the push before the sleeping checks
    wake_for(c, target);
}

task* ctx_pop(int id, int w) noexcept {
    context& c = g_ctx[id];
    if (!c.lock.try_lock_shared()) {
        return nullptr;  // a change in progress: it wakes the members when done
    }
    task* t = nullptr;
    if (const int l = c.local[w]; l >= 0 && c.pol != nullptr) {
        t = c.pol->pop(l);
    }
    c.lock.unlock_shared();
    return t;
}

task* ctx_pop_idle(int id, int w) noexcept {
    context& c = g_ctx[id];
    if (!c.lock.try_lock_shared()) {
        return nullptr;
    }
    task* t = nullptr;
    if (const int l = c.local[w]; l >= 0 && c.pol != nullptr) {
        t = c.pol->pop_idle(l);
    }
    c.lock.unlock_shared();
    return t;
}

bool ctx_may_have_work(int id, int w) noexcept {
    context& c = g_ctx[id];
    if (!c.lock.try_lock_shared()) {
        return false;
    }
    const int l = c.local[w];
    const bool yes = l >= 0 && c.pol != nullptr && c.pol->may_have_work(l);
    c.lock.unlock_shared();
    return yes;
}

void ctx_starting(task* t, int w) noexcept {
    context& c = g_ctx[t->ctx];
    shared_guard g(c.lock);
    if (const int l = c.local[w]; l >= 0 && c.pol != nullptr && c.starts && t->ctx_gen == c.gen) {
        c.pol->starting(t, l);
    }
}

void ctx_done(task* t, int w, double us) noexcept {
    context& c = g_ctx[t->ctx];
    shared_guard g(c.lock);
    if (const int l = c.local[w]; l >= 0 && c.pol != nullptr && c.measures && t->ctx_gen == c.gen) {
        c.pol->done(t, l, us);
    }
}

void ctx_pinned(task* t, int w) noexcept {
    context& c = g_ctx[t->ctx];
    shared_guard g(c.lock);
    if (const int l = c.local[w]; l >= 0 && c.pol != nullptr && c.pins) {
        t->ctx_gen = c.gen;
        c.pol->pinned(t, l);
    }
}

void ctx_task_added_slow(int id) noexcept { g_ctx[id].count.fetch_add(1, std::memory_order_relaxed); }

void ctx_task_done_slow(int id, long left0) noexcept {
    if (id == 0) {
        notify_count(g_ctx0_count, g_ctx0_notify, g_drained0, left0);
        return;
    }
    context& c = g_ctx[id];
    const long left = c.count.fetch_sub(1, std::memory_order_seq_cst) - 1;
    notify_count(c.count, c.notify_at, c.drained, left);
    if (left == 0) {
        drained(c);
    }
}

void ctx_stop_all() noexcept {
    change_guard g;
    for (int id = 1; id < max_contexts; ++id) {
        context& c = g_ctx[id];
        if (!c.live.load(std::memory_order_relaxed)) {
            continue;
        }
        c.lock.lock();
        for (int w : c.members) {
            g_mask[w].store(0, std::memory_order_relaxed);
        }
        fill_members(c, {});
        c.pol.reset();
        c.live.store(false, std::memory_order_release);
        c.lock.unlock();
    }
    g_nlive.store(0, std::memory_order_relaxed);
}

}  // namespace detail

using namespace detail;

result<int> context_create(const context_desc& d) noexcept {
    if (!running()) {
        return status{errc::not_initialized, "task runtime not running"};
    }
    std::vector<int> members = valid_members(d.workers, d.nworkers, "context_create");
    change_guard g;
    int id = -1;
    for (int i = 1; i < max_contexts; ++i) {
        if (!g_ctx[i].live.load(std::memory_order_relaxed)) {
            id = i;
            break;
        }
    }
    if (id < 0) {
        MPC_LOG(error, tg, "scheduling context %s: there are %d contexts already (the most)", d.name != nullptr ? d.name : "",
                max_contexts);
        return status{errc::no_memory, "too many scheduling contexts"};
    }
    context& c = g_ctx[id];
    c.lock.lock();
    c.name = d.name != nullptr ? d.name : "";
    c.no_policy = d.policy == nullptr;
    c.awake = c.no_policy && d.awake_workers;
    c.pe = d.policy;
    c.app = d.app_policy;
    c.pol.reset();
    c.members.clear();
    c.vps.clear();
    std::fill(std::begin(c.local), std::end(c.local), static_cast<std::int16_t>(-1));
    c.deleting = false;
    c.inheritor = -1;
    c.finished_submit.store(false, std::memory_order_relaxed);
    c.closed = false;
    c.count.store(0, std::memory_order_relaxed);
    c.notify_at.store(-1, std::memory_order_relaxed);
    c.on_close = nullptr;
    c.on_close_arg = nullptr;
    for (auto& p : g_prio[&c - g_ctx]) {
        p.store(0, std::memory_order_relaxed);  // a new context: the default priority
    }
    c.lock.unlock();
    c.live.store(true, std::memory_order_release);
    g_nlive.fetch_add(1, std::memory_order_relaxed);
    if (members.empty() && c.pe != nullptr && c.pe->any_size) {
        c.lock.lock();
        make_policy(c);  // an application's policy: init_sched before any worker comes
        c.lock.unlock();
    }
    set_members(c, std::move(members));
    MPC_LOG(debug, tg, "scheduling context %d (%s): %zu workers, policy %s", id, c.name.c_str(), c.members.size(),
            c.pe != nullptr ? c.pe->name : "(none: the master runs the tasks)");
    return id;
}

namespace {
status bad_context(int id, const char* call) noexcept {
    if (id == 0) {
        MPC_LOG(error, tg, "%s: context 0 (every worker) cannot be changed", call);
        return {errc::invalid_argument, "context 0 is fixed"};
    }
    MPC_LOG(error, tg, "%s: scheduling context %d does not exist", call, id);
    return {errc::invalid_argument, "no such scheduling context"};
}
}  // namespace

status context_add_workers(int id, const int* workers, int n) noexcept {
    if (!valid_id(id)) {
        return bad_context(id, "context_add_workers");
    }
    std::vector<int> add = valid_members(workers, n, "context_add_workers");
    change_guard g;
    context& c = g_ctx[id];
    if (!c.live.load(std::memory_order_relaxed)) {
        return bad_context(id, "context_add_workers");
    }
    std::vector<int> now = c.members;
    for (int w : add) {
        if (std::find(now.begin(), now.end(), w) == now.end()) {
            now.push_back(w);
        }
    }
    if (now.size() != c.members.size()) {
        set_members(c, std::move(now));
    }
    return {};
}

status context_remove_workers(int id, const int* workers, int n) noexcept {
    if (!valid_id(id)) {
        return bad_context(id, "context_remove_workers");
    }
    std::vector<int> drop = valid_members(workers, n, "context_remove_workers");
    change_guard g;
    context& c = g_ctx[id];
    if (!c.live.load(std::memory_order_relaxed)) {
        return bad_context(id, "context_remove_workers");
    }
    std::vector<int> now;
    for (int w : c.members) {
        if (std::find(drop.begin(), drop.end(), w) == drop.end()) {
            now.push_back(w);
        }
    }
    if (now.size() != c.members.size()) {
        set_members(c, std::move(now));
    }
    return {};
}

status context_set_inheritor(int id, int inheritor) noexcept {
    if (!valid_id(id)) {
        return bad_context(id, "context_set_inheritor");
    }
    if (inheritor != 0 && !ctx_live(inheritor)) {
        return bad_context(inheritor, "context_set_inheritor (the inheritor)");
    }
    change_guard g;
    if (!g_ctx[id].live.load(std::memory_order_relaxed)) {
        return bad_context(id, "context_set_inheritor");
    }
    g_ctx[id].inheritor = inheritor;
    return {};
}

int context_inheritor(int id) noexcept {
    if (!valid_id(id)) {
        return -1;
    }
    change_guard g;
    return g_ctx[id].live.load(std::memory_order_relaxed) ? g_ctx[id].inheritor : -1;
}

status context_finished_submit(int id) noexcept {
    if (!valid_id(id) || !g_ctx[id].live.load(std::memory_order_acquire)) {
        return id == 0 ? status{} : bad_context(id, "context_finished_submit");
    }
    context& c = g_ctx[id];
    c.finished_submit.store(true, std::memory_order_seq_cst);
    if (c.count.load(std::memory_order_seq_cst) == 0) {
        drained(c);  // its tasks have all ended already: the members move now
    }
    return {};
}

status wait_for_n_in_context(int id, long n) noexcept {
    if (in_task()) {
        MPC_LOG(error, tg, "waiting for a scheduling context's tasks from inside a task or callback: it may wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    if (n < 0) {
        return {errc::invalid_argument, "negative task count"};
    }
    if (id == 0 && g_nlive.load(std::memory_order_acquire) == 0) {
        return wait_for_n_submitted(n);  // context 0's tasks are all the tasks
    }
    if (!ctx_live(id)) {
        return bad_context(id, "wait_for_all_in_context");
    }
    std::atomic<long>& count = id == 0 ? g_ctx0_count : g_ctx[id].count;
    std::atomic<long>& notify_at = id == 0 ? g_ctx0_notify : g_ctx[id].notify_at;
    gate& gt = id == 0 ? g_drained0 : g_ctx[id].drained;
    gt.lock.lock();
    gt.wait_locked(
        [&] {
            // Threshold first, then the count (notify_count reads them the other way round).
            if (notify_at.load(std::memory_order_relaxed) < n) {
                notify_at.store(n, std::memory_order_seq_cst);
            }
            return count.load(std::memory_order_seq_cst) <= n;
        },
        n == 0 ? "mpc::tg::wait_for_all_in_context" : "mpc::tg::wait_for_n_in_context");
    return {};
}

status wait_for_all_in_context(int id) noexcept { return wait_for_n_in_context(id, 0); }

status context_on_close(int id, void (*fn)(int, void*), void* arg) noexcept {
    if (!valid_id(id)) {
        return bad_context(id, "context_on_close");
    }
    change_guard g;
    if (!g_ctx[id].live.load(std::memory_order_relaxed)) {
        return bad_context(id, "context_on_close");
    }
    g_ctx[id].on_close = fn;
    g_ctx[id].on_close_arg = arg;
    return {};
}

status context_delete(int id) noexcept {
    if (!valid_id(id)) {
        return bad_context(id, "context_delete");
    }
    if (in_task()) {
        MPC_LOG(error, tg, "context_delete called from inside a task or callback: it waits for the context's tasks");
        return {errc::busy, "blocking call from a task"};
    }
    context& c = g_ctx[id];
    {
        change_guard g;
        if (!c.live.load(std::memory_order_relaxed) || c.deleting) {
            return bad_context(id, "context_delete");
        }
        c.deleting = true;
        const int inh = c.inheritor;
        for (int i = 1; i < max_contexts; ++i) {
            if (g_ctx[i].live.load(std::memory_order_relaxed) && g_ctx[i].inheritor == id) {
                g_ctx[i].inheritor = inh;  // StarPU's: the heirs of the deleted inherit its heir
            }
        }
        if (inh > 0 && g_ctx[inh].live.load(std::memory_order_relaxed)) {
            context& to = g_ctx[inh];
            std::vector<int> now = to.members;
            for (int w : c.members) {
                if (std::find(now.begin(), now.end(), w) == now.end()) {
                    now.push_back(w);
                }
            }
            if (now.size() != to.members.size()) {
                set_members(to, std::move(now));
            }
        }
    }
    wait_for_all_in_context(id).ignore();  // its tasks run where they are
    change_guard g;
    c.lock.lock();
    for (int w : c.members) {
        g_mask[w].fetch_and(~(1u << id), std::memory_order_relaxed);
    }
    fill_members(c, {});
    c.pol.reset();
    c.live.store(false, std::memory_order_release);
    c.lock.unlock();
    g_nlive.fetch_sub(1, std::memory_order_relaxed);
    return {};
}

int context_workers(int id, int* out, int max) noexcept {
    if (id == 0) {
        const int n = worker_count();
        for (int i = 0; i < n && i < max; ++i) {
            out[i] = i;
        }
        return n;
    }
    if (!valid_id(id)) {
        return 0;
    }
    context& c = g_ctx[id];
    shared_guard g(c.lock);
    if (!c.live.load(std::memory_order_relaxed)) {
        return 0;
    }
    const int n = static_cast<int>(c.members.size());
    for (int i = 0; i < n && i < max; ++i) {
        out[i] = c.members[static_cast<std::size_t>(i)];
    }
    return n;
}

bool context_has_worker(int id, int w) noexcept {
    if (w < 0 || w >= worker_count()) {
        return false;
    }
    if (id == 0) {
        return true;
    }
    return valid_id(id) && (ctx_mask(w) & (1u << id)) != 0;
}

bool context_exists(int id) noexcept { return running() && ctx_live(id); }

long context_tasks(int id) noexcept {
    if (id == 0) {
        return g_ctx0_count.load(std::memory_order_relaxed);
    }
    return valid_id(id) ? g_ctx[id].count.load(std::memory_order_relaxed) : 0;
}

const char* context_name(int id) noexcept {
    if (id == 0) {
        return "init";
    }
    return valid_id(id) && g_ctx[id].live.load(std::memory_order_acquire) ? g_ctx[id].name.c_str() : nullptr;
}

const char* context_policy_name(int id) noexcept {
    if (id == 0) {
        return policy_name();
    }
    if (!valid_id(id) || !g_ctx[id].live.load(std::memory_order_acquire)) {
        return nullptr;
    }
    return g_ctx[id].pe != nullptr ? g_ctx[id].pe->name : nullptr;
}

status context_set_priority(int id, const int* workers, int n, unsigned priority) noexcept {
    if (id < 0 || id >= max_contexts || !context_exists(id)) {
        MPC_LOG(error, tg, "context_set_priority: no context %d", id);
        return {errc::invalid_argument, "no such context"};
    }
    for (int i = 0; i < n; ++i) {
        if (workers[i] < 0 || workers[i] >= max_workers) {
            MPC_LOG(error, tg, "context_set_priority: no worker %d", workers[i]);
            return {errc::invalid_argument, "no such worker"};
        }
    }
    g_prios_set.store(true, std::memory_order_relaxed);
    for (int i = 0; i < n; ++i) {
        g_prio[id][workers[i]].store(priority, std::memory_order_relaxed);
    }
    return {};
}

unsigned context_priority(int id, int w) noexcept {
    return id >= 0 && id < max_contexts && w >= 0 && w < max_workers ? ctx_prio(id, w) : 0;
}

unsigned worker_contexts(int w) noexcept { return w >= 0 && w < max_workers ? (ctx_mask(w) | 1u) : 0u; }

}  // namespace mpc::tg
