/// \file
/// Parallel tasks (StarPU's SPMD and fork-join codelets) and combined workers.
///
/// A combined worker is a group of workers; its first member is its master. A parallel task
/// given to one (by a parallel policy, or named by task_desc::worker) is split into parts: the
/// task itself for the master and an alias record per other member, each in that member's own
/// queue (the runtime's per-worker FIFO, served before the policies). All the parts of one task
/// are queued under one lock, so every member meets the parts of any two parallel tasks in the
/// same order: a member waiting for the others of its task can never wait for a member that
/// waits for it (the classic "acquire in one global order").
///
/// A part starts with a barrier: the members run the task together, as in StarPU. SPMD: each
/// member runs the function, seeing its rank (current_combined); the master waits for the
/// others' ends, then the task ends. Fork-join: the master runs the function alone while the
/// others stay parked (their VPs idle: the CPUs the function's own threads may use), until the
/// master is done. A worker parked here is a ULT waiting on a gate, like any wait.
#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <vector>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/gate.hpp"
#include "taskgraph/pool.hpp"

namespace mpc::tg {

struct par_state {
    task* master = nullptr;
    int combined = -1;
    int size = 1;
    int kind = 1;  ///< task_desc::parallel
    std::atomic<int> refs{0};
    detail::gate g;
    int arrived = 0;     ///< parts at the start barrier (under g.lock)
    int spmd_left = 0;   ///< SPMD aliases whose function has not returned (under g.lock)
    bool done = false;   ///< fork-join: the master's function returned (under g.lock)
    void** v = nullptr;  ///< the master's buffer pointers, ready before the barrier opens
    void* ifaces[max_buffers];
    std::unique_ptr<void*[]> more;
};

namespace detail {
namespace {

spinlock g_comb_lock;  ///< the table; also orders the dispatches (see the file comment)
std::vector<std::vector<int>> g_comb;
bool g_found = false;

void unref(par_state* ps) noexcept {
    if (ps->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete ps;
    }
}

/// The start barrier: every part of the task has reached its member.
void barrier(par_state* ps) noexcept {
    ps->g.lock.lock();
    if (++ps->arrived == ps->size) {
        gate::wakeups w = ps->g.notify_locked();
        ps->g.lock.unlock();
        gate::deliver(w);
        return;
    }
    ps->g.wait_locked([ps] { return ps->arrived >= ps->size; }, "mpc::tg parallel task (waiting for its other workers)");
}

void signal(par_state* ps, bool master_done) noexcept {
    ps->g.lock.lock();
    if (master_done) {
        ps->done = true;
    } else {
        --ps->spmd_left;
    }
    gate::wakeups w = ps->g.notify_locked();
    ps->g.lock.unlock();
    gate::deliver(w);
}

void run_master(task* t, par_state* ps) noexcept {
    const int me = current_worker();
    void** v = ps->ifaces;
    if (t->nbuffers > max_buffers) {
        ps->more.reset(new (std::nothrow) void*[t->nbuffers]);
        if (!ps->more) {
            MPC_LOG(fatal, tg, "task %s: no memory for its %d buffer pointers", t->name, t->nbuffers);
            std::abort();
        }
        v = ps->more.get();
    }
    prepare_buffers(t, me, v);
    ps->v = v;  // published by the barrier's lock
    if (t->pop_fn != nullptr) {
        t->pop_fn(t->pop_arg);
    }
    barrier(ps);
    set_combined(ps->combined, ps->size, 0);
    const std::uint64_t start = now_ns();
    t->fn(v, t->cl_arg);
    const std::uint64_t end = now_ns();
    set_combined(-1, 1, 0);
    if (ps->kind == 2) {
        signal(ps, true);  // the other members may go
    } else {
        ps->g.lock.lock();
        ps->g.wait_locked([ps] { return ps->spmd_left == 0; }, "mpc::tg SPMD task (waiting for its other ranks)");
    }
    // The duration on a combined worker is not the sequential one: the model is not fed
    // (StarPU keeps one per combined architecture), the policy and the trace are.
    perfmodel* m = t->model;
    t->model = nullptr;
    task_ran(t, start, end);
    t->model = m;
    finish_buffers(t, me, v);
    t->par = nullptr;
    unref(ps);
    complete(t);
}

void run_alias(task* a, par_state* ps) noexcept {
    barrier(ps);
    if (ps->kind == 1) {
        task* prev = set_running_task(ps->master);  // starpu_task_get_current(): the task
        set_combined(ps->combined, ps->size, a->par_rank);
        ps->master->fn(ps->v, ps->master->cl_arg);
        set_combined(-1, 1, 0);
        set_running_task(prev);
        signal(ps, false);
    } else {
        ps->g.lock.lock();
        ps->g.wait_locked([ps] { return ps->done; }, "mpc::tg fork-join task (member waiting for its master)");
    }
    a->par = nullptr;
    unref(ps);
    task_unref(a);
}

}  // namespace

void execute_part(task* t) noexcept {
    par_state* ps = t->par;
    if (t->kind == task_kind::alias) {
        run_alias(t, ps);
    } else {
        run_master(t, ps);
    }
}

void dispatch_parallel(task* t, int combined) noexcept {
    const int base = worker_count();
    std::vector<int> members;
    {
        spin_guard g(g_comb_lock);
        const int i = combined - base;
        if (i >= 0 && i < static_cast<int>(g_comb.size())) {
            members = g_comb[static_cast<std::size_t>(i)];
        }
    }
    if (members.empty()) {
        MPC_LOG(fatal, tg, "task %s: combined worker %d does not exist", t->name, combined);
        std::abort();
    }
    dispatch_on(t, members.data(), static_cast<int>(members.size()), combined, 0);
}

void dispatch_on(task* t, const int* members, int k, int combined, int kind) noexcept {
    auto* ps = new (std::nothrow) par_state;
    std::vector<task*> aliases(static_cast<std::size_t>(k - 1), nullptr);
    for (task*& a : aliases) {
        a = pool_new<task>(task_pool());
        if (a == nullptr) {
            ps = nullptr;
            break;
        }
    }
    if (ps == nullptr) {
        MPC_LOG(fatal, tg, "task %s: no memory to run it on combined worker %d", t->name, combined);
        std::abort();
    }
    ps->master = t;
    ps->combined = combined;
    ps->size = k;
    // A sequential task named on a combined worker: the master runs it (fork-join).
    ps->kind = kind != 0 ? kind : (t->par_kind != 0 ? t->par_kind : 2);
    ps->spmd_left = ps->kind == 1 ? k - 1 : 0;
    ps->refs.store(k, std::memory_order_relaxed);
    t->par = ps;
    for (int r = 1; r < k; ++r) {
        task* a = aliases[static_cast<std::size_t>(r - 1)];
        a->kind = task_kind::alias;
        a->name = t->name;
        a->state = task_state::submitted;
        a->par = ps;
        a->par_rank = r;
    }
    // One order for every member: see the file comment.
    spin_guard g(g_comb_lock);
    push_local(t, members[0], false).ignore();
    for (int r = 1; r < k; ++r) {
        push_local(aliases[static_cast<std::size_t>(r - 1)], members[r], false).ignore();
    }
}

void combined_reset() noexcept {
    spin_guard g(g_comb_lock);
    g_comb.clear();
    g_found = false;
}

}  // namespace detail

using namespace detail;

result<int> combined_worker_add(const int* workers, int n) noexcept {
    const int nw = worker_count();
    if (workers == nullptr || n < 2 || n > nw) {
        MPC_LOG(error, tg, "combined worker of %d workers: it needs between 2 and %d workers", n, nw);
        return status{errc::invalid_argument, "bad combined worker size"};
    }
    std::vector<int> m(workers, workers + n);
    for (int i = 0; i < n; ++i) {
        if (m[static_cast<std::size_t>(i)] < 0 || m[static_cast<std::size_t>(i)] >= nw ||
            std::count(m.begin(), m.end(), m[static_cast<std::size_t>(i)]) != 1) {
            MPC_LOG(error, tg, "combined worker: %d is not a worker, or is given twice", m[static_cast<std::size_t>(i)]);
            return status{errc::invalid_argument, "bad combined worker member"};
        }
    }
    spin_guard g(g_comb_lock);
    for (std::size_t i = 0; i < g_comb.size(); ++i) {
        if (g_comb[i] == m) {
            return nw + static_cast<int>(i);  // StarPU's answer for an existing combination
        }
    }
    if (nw + static_cast<int>(g_comb.size()) >= max_workers) {
        return status{errc::no_memory, "too many combined workers"};
    }
    g_comb.push_back(std::move(m));
    return nw + static_cast<int>(g_comb.size()) - 1;
}

int combined_worker_count() noexcept {
    spin_guard g(g_comb_lock);
    return static_cast<int>(g_comb.size());
}

int combined_worker_members(int id, int* out, int max) noexcept {
    spin_guard g(g_comb_lock);
    const int i = id - worker_count();
    if (i < 0 || i >= static_cast<int>(g_comb.size())) {
        return 0;
    }
    const std::vector<int>& m = g_comb[static_cast<std::size_t>(i)];
    for (int j = 0; j < static_cast<int>(m.size()) && j < max; ++j) {
        out[j] = m[static_cast<std::size_t>(j)];
    }
    return static_cast<int>(m.size());
}

namespace {
/// Adds `group` if its size fits, then its halves (StarPU's synthesized arity 2).
void add_group(const std::vector<int>& group, int min_size, int max_size) noexcept {
    const int n = static_cast<int>(group.size());
    if (n < std::max(min_size, 2)) {
        return;
    }
    if (n <= max_size) {
        (void)combined_worker_add(group.data(), n);
    }
    if (n > 2) {
        const auto half = static_cast<std::ptrdiff_t>((n + 1) / 2);
        add_group(std::vector<int>(group.begin(), group.begin() + half), min_size, max_size);
        add_group(std::vector<int>(group.begin() + half, group.end()), min_size, max_size);
    }
}
}  // namespace

void find_worker_combinations(int min_size, int max_size) noexcept {
    {
        spin_guard g(g_comb_lock);
        if (g_found) {
            return;
        }
        g_found = true;
    }
    const int nw = worker_count();
    // The workers in the machine's order (NUMA node, core, PU), grouped by NUMA node.
    std::vector<std::pair<long, int>> order;
    for (int w = 0; w < nw; ++w) {
        const mpc::topo::place p = sched::vp_place(worker_vp(w));
        order.emplace_back((static_cast<long>(p.numa) << 40) | (static_cast<long>(p.core + 1) << 20) | (p.pu + 1), w);
    }
    std::stable_sort(order.begin(), order.end());
    std::vector<int> all;
    std::vector<std::vector<int>> numa;
    int last_numa = -2;
    for (const auto& [key, w] : order) {
        all.push_back(w);
        const int node = static_cast<int>(key >> 40);
        if (node != last_numa) {
            numa.emplace_back();
            last_numa = node;
        }
        numa.back().push_back(w);
    }
    if (numa.size() <= 1) {
        add_group(all, min_size, max_size);
        return;
    }
    if (nw >= std::max(min_size, 2) && nw <= max_size) {
        (void)combined_worker_add(all.data(), nw);
    }
    for (const std::vector<int>& group : numa) {
        add_group(group, min_size, max_size);
    }
}

}  // namespace mpc::tg
