/// \file
/// The policy table, and the two simplest policies: eager (one shared FIFO) and prio (one
/// shared queue ordered by priority, FIFO among equal priorities), StarPU's policies of the
/// same names.

#include "taskgraph/policy.hpp"

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "lib/spinlock.hpp"
#include "taskgraph/modular.hpp"

namespace mpc::tg {
namespace {

/// A policy with one queue shared by every worker, under one lock. Q provides put(task*) and
/// take() (nullptr when empty); the policies differ only in Q's order: eager takes the oldest
/// ready task (modular::fifo_order, intrusive through task::next), prio the highest priority,
/// the first submitted among equals (modular::prio_order). The same trees as modular-eager and
/// modular-prio, fused into one object: one lock and no virtual call between components. Good
/// while tasks are long compared with a cache-line transfer; the baseline the other policies
/// are measured against.
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

constexpr policy_entry g_policies[] = {
    {"eager", "greedy: one shared FIFO, every worker takes the oldest ready task", &make_eager},
    {"prio", "greedy with priorities: one shared queue, highest priority first, FIFO among equals", &make_prio},
    {"modular-eager", "eager as a component tree (a FIFO above the workers' leaves)", &make_modular_eager},
    {"modular-prio", "prio as a component tree (a priority queue above the workers' leaves)", &make_modular_prio},
    {"random", "each task to a random worker, drawn in proportion to the workers' speeds", &make_random},
    {"ws", "work stealing: per-worker deques, a worker's tasks stay local, idle workers steal", &make_ws},
    {"lws", "locality work stealing: as ws, stealing from the nearest workers first", &make_lws},
    {"dm", "deque model: each task to the worker expected to finish it first (performance models)", &make_dm},
    {"dmda", "dm with the data-transfer time in the expected completion", &make_dmda},
    {"dmdas", "dmda with per-worker queues sorted by priority", &make_dmdas},
    {"heteroprio", "buckets by priority, each architecture takes them in its own order", &make_heteroprio},
    {"peager", "parallel eager: parallel tasks on the largest combined worker their master has", &make_peager},
    {"pheft", "parallel HEFT: each task to the worker or combined worker expected to finish it first", &make_pheft},
};

/// "eager, prio, ..." built once from the table.
std::string make_names() {
    std::string s;
    for (const policy_entry& e : g_policies) {
        s += s.empty() ? "" : ", ";
        s += e.name;
    }
    return s;
}

}  // namespace

std::unique_ptr<policy> make_eager(const policy_context& /*ctx*/) { return std::make_unique<central<modular::fifo_order>>(); }
std::unique_ptr<policy> make_prio(const policy_context& /*ctx*/) { return std::make_unique<central<modular::prio_order>>(); }

std::span<const policy_entry> policies() noexcept { return g_policies; }

const char* policy_names() noexcept {
    static const std::string names = make_names();
    return names.c_str();
}

const policy_entry* find_policy(const char* name) noexcept {
    for (const policy_entry& e : g_policies) {
        if (std::strcmp(e.name, name) == 0) {
            return &e;
        }
    }
    return nullptr;
}

}  // namespace mpc::tg
