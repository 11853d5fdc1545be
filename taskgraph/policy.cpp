/// \file
/// The policy table, and the two simplest policies: eager (one shared FIFO) and prio (one
/// shared queue ordered by priority, FIFO among equal priorities), StarPU's policies of the
/// same names.

#include "taskgraph/policy.hpp"

#include <atomic>
#include <cstring>
#include <queue>
#include <vector>

#include "lib/spinlock.hpp"
#include "scheduler/queues.hpp"

namespace mpc::tg {
namespace {

/// A policy with one queue shared by every worker, under one lock. Q provides put(task*) and
/// take() (nullptr when empty); the policies differ only in Q's order.
template <class Q>
class central final : public policy {
public:
    int push(task* t) noexcept override {
        spin_guard g(lock_);
        q_.put(t);
        size_.fetch_add(1, std::memory_order_relaxed);
        return -1;
    }
    task* pop(int /*worker*/) noexcept override {
        if (size_.load(std::memory_order_relaxed) == 0) {
            // Racy peek: a push it misses is covered by the runtime's fence-then-recheck before
            // a worker sleeps.
            return nullptr;
        }
        spin_guard g(lock_);
        task* t = q_.take();
        if (t != nullptr) {
            size_.fetch_sub(1, std::memory_order_relaxed);
        }
        return t;
    }
    bool may_have_work(int /*worker*/) const noexcept override {
        return size_.load(std::memory_order_relaxed) != 0;
    }

private:
    spinlock lock_;
    Q q_;
    std::atomic<long> size_{0};
};

/// eager's order: the oldest ready task first (the engine's intrusive FIFO, through
/// task::next). One lock: good while tasks are long compared with a cache-line transfer; the
/// baseline the other policies are measured against.
class fifo {
public:
    void put(task* t) noexcept { q_.push_back(t); }
    task* take() noexcept { return q_.pop_front(); }

private:
    sched::detail::fifo<task> q_;
};

/// prio's order: the highest priority first; among equal priorities, the one submitted first
/// (the submission number breaks ties, so the order is deterministic).
class by_priority {
public:
    void put(task* t) { heap_.push(t); }
    task* take() noexcept {
        if (heap_.empty()) {
            return nullptr;
        }
        task* t = heap_.top();
        heap_.pop();
        return t;
    }

private:
    struct lower {
        bool operator()(const task* a, const task* b) const noexcept {
            return a->priority != b->priority ? a->priority < b->priority : a->seq > b->seq;
        }
    };
    std::priority_queue<task*, std::vector<task*>, lower> heap_;
};

constexpr policy_entry g_policies[] = {
    {"eager", "greedy: one shared FIFO, every worker takes the oldest ready task", &make_eager},
    {"prio", "greedy with priorities: one shared queue, highest priority first, FIFO among equals", &make_prio},
};

}  // namespace

std::unique_ptr<policy> make_eager(const policy_context& /*ctx*/) { return std::make_unique<central<fifo>>(); }
std::unique_ptr<policy> make_prio(const policy_context& /*ctx*/) { return std::make_unique<central<by_priority>>(); }

std::span<const policy_entry> policies() noexcept { return g_policies; }

const policy_entry* find_policy(const char* name) noexcept {
    for (const policy_entry& e : g_policies) {
        if (std::strcmp(e.name, name) == 0) {
            return &e;
        }
    }
    return nullptr;
}

}  // namespace mpc::tg
