/// \file
/// The parallel policies (StarPU's peager and pheft): they make the default combined workers
/// at start (parallel.cpp, find_worker_combinations; STARPU_MIN_WORKERSIZE,
/// STARPU_MAX_WORKERSIZE) and run parallel-capable tasks (SPMD or fork-join codelets with
/// max_parallelism > 1) on them; other tasks are scheduled as by eager and dmda.
///
/// peager (StarPU's parallel_eager): one FIFO for sequential tasks and one for parallel ones.
/// Any worker takes sequential tasks; only a worker that is the master of a combined worker
/// takes parallel ones, and runs each on the largest combined worker it masters that the task
/// accepts (as StarPU's, which leaves parallel tasks to the masters). A parallel task wakes a
/// master.
///
/// pheft (StarPU's parallel_heft): each task goes to the worker or combined worker expected
/// to finish it first: its expected end is the latest expected end of its members plus the
/// task's expected length (the performance model's), divided by the combined worker's size
/// (the ideal speed-up: StarPU keeps a model per combined architecture; this one has the
/// sequential model only, and does not feed it with parallel runs). A task without a
/// calibrated model counts one µs, so that placements still spread; equal expected ends go to
/// the worker with the fewest queued tasks.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "lib/spinlock.hpp"
#include "scheduler/queues.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/perfmodel.hpp"
#include "taskgraph/policy.hpp"

namespace mpc::tg {
namespace {

/// STARPU_MIN_WORKERSIZE / STARPU_MAX_WORKERSIZE (StarPU's: at least 2, no maximum).
void find_combinations() noexcept {
    int min_size = 2;
    int max_size = max_workers;
    if (const char* s = std::getenv("STARPU_MIN_WORKERSIZE"); s != nullptr && *s != '\0') {
        min_size = std::max(2, std::atoi(s));
    }
    if (const char* s = std::getenv("STARPU_MAX_WORKERSIZE"); s != nullptr && *s != '\0') {
        max_size = std::atoi(s) > 0 ? std::atoi(s) : max_workers;
    }
    find_worker_combinations(min_size, max_size);
}

struct combo {
    int id;
    std::vector<int> members;
};

/// The combined workers, those of each master largest first (made once the workers run).
struct combos {
    std::vector<combo> all;
    std::vector<std::vector<int>> by_master;  ///< indices into all
    void load(int nworkers) {
        find_combinations();
        all.clear();
        by_master.assign(static_cast<std::size_t>(nworkers), {});
        const int n = combined_worker_count();
        for (int i = 0; i < n; ++i) {
            combo c{nworkers + i, std::vector<int>(static_cast<std::size_t>(max_workers))};
            c.members.resize(static_cast<std::size_t>(combined_worker_members(c.id, c.members.data(), max_workers)));
            if (!c.members.empty() && c.members[0] < nworkers) {
                by_master[static_cast<std::size_t>(c.members[0])].push_back(static_cast<int>(all.size()));
            }
            all.push_back(std::move(c));
        }
        for (std::vector<int>& m : by_master) {
            std::stable_sort(m.begin(), m.end(), [this](int a, int b) {
                return all[static_cast<std::size_t>(a)].members.size() > all[static_cast<std::size_t>(b)].members.size();
            });
        }
    }
};

class peager final : public policy {
public:
    explicit peager(const policy_context& ctx) : n_(ctx.nworkers), context0_(ctx.members == nullptr) {}

    void started() noexcept override {
        if (context0_) {
            c_.load(n_);
            for (int w = 0; w < n_; ++w) {
                if (!c_.by_master[static_cast<std::size_t>(w)].empty()) {
                    masters_.push_back(w);
                }
            }
        }
    }
    int push(task* t) noexcept override {
        const bool par = detail::parallel_capable(t) && !masters_.empty();
        {
            spin_guard g(lock_);
            (par ? par_ : seq_).push_back(t);
        }
        n_queued_.fetch_add(1, std::memory_order_release);
        if (par) {
            return masters_[static_cast<std::size_t>(rr_.fetch_add(1, std::memory_order_relaxed) % masters_.size())];
        }
        return -1;
    }
    task* pop(int w) noexcept override {
        if (n_queued_.load(std::memory_order_acquire) == 0) {
            return nullptr;
        }
        const bool master = w >= 0 && w < n_ && !masters_.empty() && !c_.by_master[static_cast<std::size_t>(w)].empty();
        task* t = nullptr;
        {
            spin_guard g(lock_);
            task* s = seq_.front();
            task* p = master ? par_.front() : nullptr;
            if (s != nullptr && (p == nullptr || s->seq < p->seq)) {
                t = seq_.pop_front();
            } else if (p != nullptr) {
                t = par_.pop_front();
            }
        }
        if (t == nullptr) {
            return nullptr;
        }
        n_queued_.fetch_sub(1, std::memory_order_relaxed);
        if (!master || !detail::parallel_capable(t)) {
            return t;
        }
        for (int i : c_.by_master[static_cast<std::size_t>(w)]) {
            const combo& c = c_.all[static_cast<std::size_t>(i)];
            if (static_cast<int>(c.members.size()) <= t->max_par) {
                detail::dispatch_parallel(t, c.id);  // its parts wait in the members' queues
                return nullptr;
            }
        }
        return t;  // no combination small enough: on this worker alone
    }
    bool may_have_work(int /*w*/) const noexcept override { return n_queued_.load(std::memory_order_relaxed) != 0; }

private:
    int n_;
    bool context0_;  ///< combined workers are made of context 0's workers
    combos c_;
    std::vector<int> masters_;
    spinlock lock_;
    sched::detail::fifo<task> seq_;
    sched::detail::fifo<task> par_;
    std::atomic<long> n_queued_{0};
    std::atomic<unsigned> rr_{0};
};

class pheft final : public policy {
public:
    explicit pheft(const policy_context& ctx)
        : n_(ctx.nworkers),
          context0_(ctx.members == nullptr),
          expected_(ctx.expected_us != nullptr ? ctx.expected_us : &task_expected_us),
          q_(new queue[static_cast<std::size_t>(ctx.nworkers)]) {}

    void started() noexcept override {
        if (context0_) {
            c_.load(n_);
        }
    }
    int push(task* t) noexcept override {
        spin_guard g(place_lock_);
        const double now = static_cast<double>(detail::now_ns()) / 1000.0;
        double len = expected_(t, 0);
        if (!(len > 0) || std::isnan(len)) {
            len = 1.0;
        }
        // Equal ends (workers whose expected ends have passed: a submitter slower than the
        // tasks' expected lengths, or lengths unknown) go to the shorter queue, so that tasks
        // still spread instead of all going to the first worker.
        int best = -1;
        long best_n = 0;
        double best_end = std::numeric_limits<double>::infinity();
        for (int w = 0; w < n_; ++w) {
            const double end = std::max(now, q_[w].exp_end) + len;
            const long n = q_[w].n.load(std::memory_order_relaxed);
            if (end < best_end || (end == best_end && n < best_n)) {
                best_end = end;
                best_n = n;
                best = w;
            }
        }
        int best_combo = -1;
        if (detail::parallel_capable(t)) {
            for (std::size_t i = 0; i < c_.all.size(); ++i) {
                const combo& c = c_.all[i];
                if (static_cast<int>(c.members.size()) > t->max_par) {
                    continue;
                }
                double ready = now;
                for (int m : c.members) {
                    ready = std::max(ready, q_[m].exp_end);
                }
                const double end = ready + len / static_cast<double>(c.members.size());
                if (end < best_end) {
                    best_end = end;
                    best_combo = static_cast<int>(i);
                }
            }
        }
        t->predicted_us = len;
        if (best_combo >= 0) {
            const combo& c = c_.all[static_cast<std::size_t>(best_combo)];
            for (int m : c.members) {
                q_[m].exp_end = best_end;
            }
            detail::dispatch_parallel(t, c.id);  // kicks the members
            return wake_nobody;
        }
        q_[best].exp_end = best_end;
        t->sched_worker = best;
        {
            spin_guard qg(q_[best].lock);
            q_[best].tasks.push_back(t);
            q_[best].n.fetch_add(1, std::memory_order_release);
        }
        return best;
    }
    task* pop(int w) noexcept override {
        queue& q = q_[w];
        if (q.n.load(std::memory_order_acquire) == 0) {
            return nullptr;
        }
        spin_guard g(q.lock);
        task* t = q.tasks.pop_front();
        if (t != nullptr) {
            q.n.fetch_sub(1, std::memory_order_relaxed);
        }
        return t;
    }
    bool may_have_work(int w) const noexcept override { return q_[w].n.load(std::memory_order_relaxed) != 0; }

private:
    struct alignas(64) queue {
        spinlock lock;
        sched::detail::fifo<task> tasks;
        std::atomic<long> n{0};
        double exp_end = 0;  ///< µs on the runtime's clock; under the policy's place_lock_
    };
    int n_;
    bool context0_;
    double (*expected_)(const task*, int);
    combos c_;
    spinlock place_lock_;
    std::unique_ptr<queue[]> q_;
};

}  // namespace

std::unique_ptr<policy> make_peager(const policy_context& ctx) { return std::make_unique<peager>(ctx); }
std::unique_ptr<policy> make_pheft(const policy_context& ctx) { return std::make_unique<pheft>(ctx); }

}  // namespace mpc::tg
