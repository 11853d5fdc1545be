/// \file
/// Modular scheduling (StarPU's modular schedulers, in MPC's terms): a policy is a tree of
/// components. Ready tasks enter at the root and go down (push) through switches that choose a
/// child, into queues; an idle worker pulls from its leaf, and a leaf with nothing goes up
/// (pull) to its parent. The protocol:
///
/// - push(t): a ready task from above. Returns the worker to wake for it (the one whose path
///   now holds it), or -1 when any idle worker may take it.
/// - pull(w): a task for worker w from this component, or from above when it has none;
///   nullptr when the path from w to the root is empty. A switch that holds nothing answers
///   for its siblings: the work-stealing switch steals from another child there.
/// - can_push(child): a bounded child has room again (it was full and a worker pulled): the
///   component may push held tasks down into it. Returns the worker to wake, or -1.
/// - can_pull(w): a lock-free hint that pull(w) may find work (the idle worker's spin test).
/// - accepts(): whether a push now would stay under the component's bound.
/// - notify_start(t, w): worker w took t and starts it now (only for policies that measure);
///   notify_done(t, w, us): t ran on w for `us` µs. Each component passes both to its parent,
///   so that a deciding switch (dm) can correct its per-worker expectations.
///
/// Concurrency: push and pull come from any worker and from the program at once; each
/// component locks what it owns. A child calls its parent only without holding its own lock,
/// and a parent calls its children while holding its own (lock order: parent before child).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <vector>

#include "lib/spinlock.hpp"
#include "scheduler/queues.hpp"
#include "taskgraph/policy.hpp"

namespace mpc::tg::modular {

class component {
public:
    virtual ~component() = default;
    virtual int push(task* t) noexcept = 0;
    virtual task* pull(int worker) noexcept = 0;
    virtual bool can_pull(int worker) const noexcept = 0;
    virtual int can_push(component* /*child*/) noexcept { return -1; }
    virtual bool accepts() const noexcept { return true; }
    /// Tasks waiting in this component (a queue's size; 0 for the others). A lock-free hint.
    virtual long queued() const noexcept { return 0; }
    /// For a deciding parent that holds its own lock: removes and returns the task a thief
    /// would take from this queue (steal()'s end) if want(t, arg) accepts it, evaluated under
    /// the queue's lock; nullptr otherwise (and for components that are not queues). Calls
    /// nothing of the parent (can_push): the caller does what a freed slot asks for.
    virtual task* steal_if(bool (*want)(const task* t, void* arg), void* arg) noexcept {
        (void)want;
        (void)arg;
        return nullptr;
    }
    /// The root's answer to policy::pop_idle (an idle worker about to park); nullptr by default.
    virtual task* rebalance(int /*worker*/) noexcept { return nullptr; }
    virtual void notify_start(task* t, int worker) noexcept {
        if (parent != nullptr) {
            parent->notify_start(t, worker);
        }
    }
    virtual void notify_done(task* t, int worker, double us) noexcept {
        if (parent != nullptr) {
            parent->notify_done(t, worker, us);
        }
    }
    component* parent = nullptr;
};

/// Orders for queue<>: put, take (the worker's end) and steal (the other end).
struct fifo_order {
    void put(task* t) noexcept { q.push_back(t); }
    task* take() noexcept { return q.pop_front(); }
    task* steal() noexcept { return q.pop_front(); }
    task* peek_steal() const noexcept { return q.front(); }
    sched::detail::fifo<task> q;
};

/// Highest priority first, FIFO (submission number) among equals.
struct prio_order {
    void put(task* t) { heap.push(t); }
    task* take() noexcept {
        if (heap.empty()) {
            return nullptr;
        }
        task* t = heap.top();
        heap.pop();
        return t;
    }
    task* steal() noexcept { return take(); }
    task* peek_steal() const noexcept { return heap.empty() ? nullptr : heap.top(); }
    struct lower {
        bool operator()(const task* a, const task* b) const noexcept {
            return a->priority != b->priority ? a->priority < b->priority : a->seq > b->seq;
        }
    };
    std::priority_queue<task*, std::vector<task*>, lower> heap;
};

/// A work-stealing deque: the owner works at the front (newest first: its data are warm),
/// thieves take from the back (the oldest, usually the largest remaining subgraph).
struct deque_order {
    void put(task* t) { d.push_front(t); }
    task* take() noexcept { return pop(true); }
    task* steal() noexcept { return pop(false); }
    task* peek_steal() const noexcept { return d.empty() ? nullptr : d.back(); }
    task* pop(bool front) noexcept {
        if (d.empty()) {
            return nullptr;
        }
        task* t = front ? d.front() : d.back();
        if (front) {
            d.pop_front();
        } else {
            d.pop_back();
        }
        return t;
    }
    std::deque<task*> d;
};

/// A queue component. `owner`: the worker it feeds (its leaf), or -1 when shared. `limit`: at
/// most that many tasks (0: no bound); a full queue refuses pushes (accepts() false) and calls
/// its parent's can_push once a pull makes room.
template <class Order>
class queue final : public component {
public:
    explicit queue(int owner = -1, long limit = 0) noexcept : owner_(owner), limit_(limit) {}

    int push(task* t) noexcept override {
        {
            spin_guard g(lock_);
            q_.put(t);
            size_.fetch_add(1, std::memory_order_relaxed);
        }
        return owner_;
    }
    task* pull(int worker) noexcept override {
        task* t = size_.load(std::memory_order_relaxed) != 0 ? take(false) : nullptr;
        if (t != nullptr) {
            return t;
        }
        return parent != nullptr ? parent->pull(worker) : nullptr;
    }
    /// Takes from the thieves' end (for a stealing parent); no recursion upwards.
    task* steal() noexcept { return size_.load(std::memory_order_relaxed) != 0 ? take(true) : nullptr; }
    /// Steals half of this queue's tasks (at least one, at most steal_batch_max), oldest first:
    /// returns the oldest and puts the others into `into` (the thief's own queue, unbounded),
    /// so that a thief pays one contended lock for up to steal_batch_max tasks instead of one
    /// per task. A bounded queue gives one task (its parent may hold tasks back for it).
    /// *moved (if given): the tasks taken, the returned one included.
    task* steal_half(queue& into, long* moved = nullptr) noexcept {
        long n = size_.load(std::memory_order_relaxed);
        if (n == 0) {
            return nullptr;
        }
        if (limit_ != 0 || into.limit_ != 0 || n == 1) {
            task* t = take(true);
            if (moved != nullptr) {
                *moved = t != nullptr ? 1 : 0;
            }
            return t;
        }
        task* batch[steal_batch_max];
        long k = 0;
        {
            spin_guard g(lock_);
            const long want = std::min(std::max(size_.load(std::memory_order_relaxed) / 2, 1L), steal_batch_max);
            while (k < want) {
                task* t = q_.steal();
                if (t == nullptr) {
                    break;
                }
                batch[k++] = t;
            }
            size_.fetch_sub(k, std::memory_order_acq_rel);
        }
        if (k > 1) {
            spin_guard g(into.lock_);
            for (long i = 1; i < k; ++i) {
                into.q_.put(batch[i]);  // the oldest of them ends where thieves take first
            }
            into.size_.fetch_add(k - 1, std::memory_order_relaxed);
        }
        if (moved != nullptr) {
            *moved = k;
        }
        return k > 0 ? batch[0] : nullptr;
    }
    /// The most tasks one steal_half() moves.
    static constexpr long steal_batch_max = 32;
    bool can_pull(int worker) const noexcept override {
        return size_.load(std::memory_order_relaxed) != 0 || (parent != nullptr && parent->can_pull(worker));
    }
    bool accepts() const noexcept override { return limit_ == 0 || size_.load(std::memory_order_acquire) < limit_; }
    long queued() const noexcept override { return size(); }
    task* steal_if(bool (*want)(const task* t, void* arg), void* arg) noexcept override {
        if (size_.load(std::memory_order_relaxed) == 0) {
            return nullptr;
        }
        spin_guard g(lock_);
        task* t = q_.peek_steal();
        if (t == nullptr || !want(t, arg)) {
            return nullptr;
        }
        q_.steal();
        size_.fetch_sub(1, std::memory_order_acq_rel);
        return t;
    }
    long size() const noexcept { return size_.load(std::memory_order_relaxed); }
    int owner() const noexcept { return owner_; }

private:
    task* take(bool thief) noexcept {
        task* t = nullptr;
        long before = 0;
        {
            spin_guard g(lock_);
            t = thief ? q_.steal() : q_.take();
            if (t != nullptr) {
                before = size_.fetch_sub(1, std::memory_order_acq_rel);
            }
        }
        if (t != nullptr && limit_ != 0 && before == limit_ && parent != nullptr) {
            parent->can_push(this);  // it was full: the parent may have held tasks back
        }
        return t;
    }

    spinlock lock_;
    Order q_;
    std::atomic<long> size_{0};
    int owner_;
    long limit_;
};

using fifo_queue = queue<fifo_order>;
using prio_queue = queue<prio_order>;
using deque_queue = queue<deque_order>;

/// Builds a policy from a tree: push enters at the root, worker w pops from leaves[w].
class tree_policy final : public policy {
public:
    tree_policy(std::vector<std::unique_ptr<component>> parts, component* root, std::vector<component*> leaves,
                bool measures) noexcept
        : parts_(std::move(parts)), root_(root), leaves_(std::move(leaves)), measures_(measures) {}
    int push(task* t) noexcept override { return root_->push(t); }
    task* pop(int worker) noexcept override {
        component* leaf = leaves_[static_cast<std::size_t>(worker)];
        task* t = leaf->pull(worker);
        if (t != nullptr && measures_) {
            leaf->notify_start(t, worker);
        }
        return t;
    }
    bool may_have_work(int worker) const noexcept override {
        return leaves_[static_cast<std::size_t>(worker)]->can_pull(worker);
    }
    task* pop_idle(int worker) noexcept override {
        task* t = root_->rebalance(worker);
        if (t != nullptr && measures_) {
            leaves_[static_cast<std::size_t>(worker)]->notify_start(t, worker);
        }
        return t;
    }
    bool measures() const noexcept override { return measures_; }
    void done(task* t, int worker, double us) noexcept override {
        leaves_[static_cast<std::size_t>(worker)]->notify_done(t, worker, us);
    }
    component* root() const noexcept { return root_; }

private:
    std::vector<std::unique_ptr<component>> parts_;
    component* root_;
    std::vector<component*> leaves_;
    bool measures_;
};

/// Options of the model-based switch (dm, dmda, dmdas).
struct heft_options {
    bool data_aware = false;  ///< dmda: the transfer time counts
    bool sorted = false;      ///< dmdas: per-worker queues by priority
    double alpha = 1.0;       ///< weight of the expected completion (STARPU_SCHED_ALPHA)
    double beta = 1.0;        ///< weight of the transfer time (STARPU_SCHED_BETA)
    long queue_limit = 0;     ///< bound of each worker's queue (0: none)
};

/// A uniform draw in [0, 1) from a per-thread generator (no shared state).
double uniform01() noexcept;
/// A non-negative weight from environment variable `var` (STARPU_SCHED_ALPHA...); 1 when unset,
/// and 1 with a warning when malformed.
double weight(const char* var) noexcept;

/// The policies' trees, also for tests that drive a tree directly.
std::unique_ptr<tree_policy> make_heft_tree(const policy_context& ctx, const heft_options& o);

}  // namespace mpc::tg::modular
