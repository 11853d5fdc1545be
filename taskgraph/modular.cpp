/// \file
/// The component-built policies: modular-eager, modular-prio, random, ws, lws, dm, dmda, dmdas
/// (see modular.hpp for the protocol, policy.cpp for the table; heteroprio is heteroprio.cpp).

#include "taskgraph/modular.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "lib/log.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/perfmodel.hpp"

namespace mpc::tg::modular {
namespace {

int no_current_worker() { return -1; }

double zero_transfer(const task* /*t*/, int /*worker*/) { return 0.0; }

/// Chooses a child at random, in proportion to its worker's speed. Holds nothing.
class random_switch final : public component {
public:
    random_switch(std::vector<component*> children, const double* speed) : children_(std::move(children)) {
        double sum = 0;
        for (std::size_t i = 0; i < children_.size(); ++i) {
            double s = speed != nullptr && speed[i] > 0 ? speed[i] : 1.0;
            sum += s;
            cumulative_.push_back(sum);
        }
    }
    int push(task* t) noexcept override {
        double r = uniform01() * cumulative_.back();
        std::size_t i = 0;
        while (i + 1 < cumulative_.size() && r >= cumulative_[i]) {
            ++i;
        }
        return children_[i]->push(t);
    }
    task* pull(int /*worker*/) noexcept override { return nullptr; }
    bool can_pull(int /*worker*/) const noexcept override { return false; }

private:
    std::vector<component*> children_;
    std::vector<double> cumulative_;
};

/// Work stealing over per-worker deques. A task pushed by a worker goes to its own deque (its
/// data are warm there); one pushed by the program goes round-robin over the workers on other
/// VPs than the program's (that VP is busy running the program: its worker would only get the
/// task by a steal), or over all when every worker shares it. A worker whose deque is
/// empty pulls here and steals from the others' oldest ends: in turn from a rotating start
/// (ws), or nearest first in VP order (lws). A steal takes half of the victim's tasks (up to
/// deque_queue::steal_batch_max) into the thief's deque: when the program feeds one worker's
/// deque and another worker lives off steals, one contended lock per batch instead of per task.
class steal_switch final : public component {
public:
    steal_switch(std::vector<deque_queue*> children, const policy_context& ctx, bool local)
        : children_(std::move(children)),
          current_(ctx.current_worker != nullptr ? ctx.current_worker : &no_current_worker),
          local_of_(ctx.local_of) {
        const int n = static_cast<int>(children_.size());
        order_.resize(static_cast<std::size_t>(n));
        for (int w = 0; w < n; ++w) {
            std::vector<int>& o = order_[static_cast<std::size_t>(w)];
            if (local) {
                // Victims by distance in VP order (ties: the lower VP first).
                const int* vp = ctx.worker_vp;
                auto vp_of = [vp](int i) { return vp != nullptr ? vp[i] : i; };
                for (int v = 0; v < n; ++v) {
                    if (v != w) {
                        o.push_back(v);
                    }
                }
                std::stable_sort(o.begin(), o.end(), [&](int a, int b) {
                    int da = std::abs(vp_of(a) - vp_of(w));
                    int db = std::abs(vp_of(b) - vp_of(w));
                    return da != db ? da < db : vp_of(a) < vp_of(b);
                });
            } else {
                for (int v = 1; v < n; ++v) {
                    o.push_back((w + v) % n);
                }
            }
        }
        local_ = local;
        vp_ = ctx.worker_vp;
    }
    ~steal_switch() override {
        MPC_LOG(debug, tg, "%s: %llu steals moved %llu tasks", local_ ? "lws" : "ws",
                static_cast<unsigned long long>(steals_.load(std::memory_order_relaxed)),
                static_cast<unsigned long long>(stolen_.load(std::memory_order_relaxed)));
    }
    int push(task* t) noexcept override {
        int w = current_();
        if (local_of_ != nullptr && w >= 0) {
            w = local_of_[w];  // a context's policy: the pusher's index among its members
        }
        if (w < 0 || w >= static_cast<int>(children_.size())) {
            w = program_target();
        }
        children_[static_cast<std::size_t>(w)]->push(t);
        return -1;  // any idle worker: the owner, or a thief
    }
    task* pull(int worker) noexcept override {
        const std::vector<int>& o = order_[static_cast<std::size_t>(worker)];
        const std::size_t n = o.size();
        // ws starts at a rotating victim so that thieves spread; lws keeps the locality order.
        std::size_t start = local_ || n == 0 ? 0 : static_cast<std::size_t>(rr_.load(std::memory_order_relaxed)) % n;
        deque_queue& mine = *children_[static_cast<std::size_t>(worker)];
        for (std::size_t i = 0; i < n; ++i) {
            long moved = 0;
            if (task* t = children_[static_cast<std::size_t>(o[(start + i) % n])]->steal_half(mine, &moved); t != nullptr) {
                steals_.fetch_add(1, std::memory_order_relaxed);
                stolen_.fetch_add(static_cast<std::uint64_t>(moved), std::memory_order_relaxed);
                return t;
            }
        }
        return nullptr;
    }
    bool can_pull(int /*worker*/) const noexcept override {
        for (const deque_queue* c : children_) {
            if (c->size() != 0) {
                return true;
            }
        }
        return false;
    }

private:
    /// The deque for a task the program pushes: round-robin, skipping the workers on the
    /// program's VP unless all are there.
    int program_target() noexcept {
        const std::size_t n = children_.size();
        const std::uint64_t start = rr_.fetch_add(1, std::memory_order_relaxed);
        const int here = sched::current_vp();
        if (vp_ != nullptr && here >= 0) {
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t w = (start + i) % n;
                if (vp_[w] != here) {
                    return static_cast<int>(w);
                }
            }
        }
        return static_cast<int>(start % n);
    }

    std::vector<deque_queue*> children_;
    std::vector<std::vector<int>> order_;
    int (*current_)();
    const std::int16_t* local_of_ = nullptr;  ///< policy_context::local_of
    const int* vp_ = nullptr;  ///< each worker's VP (nullptr: unknown)
    bool local_ = false;
    std::atomic<std::uint64_t> rr_{0};
    std::atomic<std::uint64_t> steals_{0};
    std::atomic<std::uint64_t> stolen_{0};  ///< tasks the steals moved (the batches' sizes)
};

/// set_bundle_length_hook()'s function (tg.hpp).
constinit std::atomic<double (*)(const void*)> g_bundle_length{nullptr};

/// HEFT (dm, dmda, dmdas): each task to the worker with the smallest expected completion,
/// alpha * (load + length) + beta * transfer, where load is the expected remaining work already
/// given to the worker (its queue, and what is left of its running task: the prediction minus
/// the time it has run, at least 0) and length the model's prediction on that worker. A task whose model is not calibrated on some worker goes to the least loaded
/// such worker, so that it gets measured (StarPU calibrates the same way). When every eligible
/// worker queue is full (bounded queues), the task waits here, in submission or priority
/// order, until a queue makes room (can_push) or an idle worker pulls it.
///
/// The choice is made again when a worker runs dry: an idle worker about to park (it found its
/// queue empty and spun; policy::pop_idle) looks at the next task of the other workers' queues
/// (most loaded first) and takes it, and the next ones in a batch, when it
/// would now end sooner there by the same measure (its own load + length + transfer, against
/// what is left of the owner's running task + length + transfer; equal expectations: the
/// worker with fewer tasks, as for a push). Predictions go wrong (a model's mean, no model at
/// all, a VP that the OS descheduled): without this, the last tasks of one queue run while the
/// other workers idle. A task placed well stays: a faster worker's queue is not raided by a
/// slower one.
class heft_switch final : public component {
public:
    heft_switch(std::vector<component*> children, const policy_context& ctx, const heft_options& o)
        : children_(std::move(children)),
          load_(children_.size(), 0.0),
          ntasks_(new std::atomic<long>[children_.size()]),
          running_(children_.size()),
          expected_(ctx.expected_us != nullptr ? ctx.expected_us : &task_expected_us),
          transfer_(ctx.transfer_us != nullptr ? ctx.transfer_us : &zero_transfer),
          same_length_(ctx.expected_us == nullptr),
          o_(o) {
        for (std::size_t w = 0; w < children_.size(); ++w) {
            ntasks_[w].store(0, std::memory_order_relaxed);
        }
    }
    ~heft_switch() override {
        MPC_LOG(debug, tg, "heft: idle workers took %llu tasks from other workers' queues",
                static_cast<unsigned long long>(rebalanced_.load(std::memory_order_relaxed)));
    }

    int push(task* t) noexcept override {
        spin_guard g(lock_);
        int best = choose(t);
        if (best < 0) {
            held_.put(t);
            held_n_.fetch_add(1, std::memory_order_relaxed);
            return -1;
        }
        return give(t, best);
    }
    task* pull(int worker) noexcept override {
        if (held_n_.load(std::memory_order_relaxed) == 0) {
            return nullptr;
        }
        spin_guard g(lock_);
        task* t = held_.take();
        if (t != nullptr) {
            held_n_.fetch_sub(1, std::memory_order_relaxed);
            account(t, worker);  // an idle worker: the earliest completion there is
        }
        return t;
    }
    int can_push(component* child) noexcept override {
        if (held_n_.load(std::memory_order_relaxed) == 0) {
            return -1;
        }
        spin_guard g(lock_);
        for (std::size_t w = 0; w < children_.size(); ++w) {
            if (children_[w] == child && child->accepts()) {
                if (task* t = held_.take(); t != nullptr) {
                    held_n_.fetch_sub(1, std::memory_order_relaxed);
                    return give(t, static_cast<int>(w));
                }
            }
        }
        return -1;
    }
    bool can_pull(int /*worker*/) const noexcept override { return held_n_.load(std::memory_order_relaxed) != 0; }
    void notify_start(task* t, int worker) noexcept override {
        if (worker < 0 || worker >= static_cast<int>(load_.size())) {
            return;
        }
        if (t->sched_worker != worker || t->predicted_us <= 0) {
            // Nothing to subtract from the worker's load while t runs: running_[worker] stays
            // empty (notify_done of the worker's previous task emptied it). No clock, no lock.
            return;
        }
        const std::uint64_t now = detail::now_ns();
        spin_guard g(lock_);
        running_[static_cast<std::size_t>(worker)] = {now, t->predicted_us};
    }
    void notify_done(task* t, int worker, double /*us*/) noexcept override {
        if (t->sched_worker < 0 || t->sched_worker >= static_cast<int>(load_.size())) {
            return;
        }
        if (t->predicted_us <= 0) {
            // Nothing was added to the load for t, and notify_start set no running entry for it
            // (that of the worker's previous task was cleared by its notify_done): only the
            // count changes, without the lock the program's pushes take.
            ntasks_[static_cast<std::size_t>(t->sched_worker)].fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        spin_guard g(lock_);
        if (worker >= 0 && worker < static_cast<int>(running_.size())) {
            running_[static_cast<std::size_t>(worker)] = {};
        }
        unaccount(t, t->sched_worker);
    }

private:
    /// The worker for t, or -1 when no eligible queue has room. Under lock_. Equal expectations
    /// (no model: every length is 0) go to the worker with the fewest tasks, as in StarPU.
    int choose(const task* t) noexcept {
        std::uint64_t now = 0;  // read once, when a worker's running task has a prediction
        int best = -1;
        double best_fit = std::numeric_limits<double>::infinity();
        int uncal = -1;  // least loaded worker where t's model is not calibrated
        double uncal_ahead = 0;
        auto fewer = [this](std::size_t w, int than) {
            return than < 0 || count(w) < count(static_cast<std::size_t>(than));
        };
        // The runtime's model has one CPU architecture: one lookup serves every worker. A
        // bundle's task is placed for the length of the bundle's tasks not placed yet (StarPU's
        // dmda), so that they tend to go to one worker.
        double (*bundle_us)(const void*) = g_bundle_length.load(std::memory_order_acquire);
        const bool bundled = t->bundle != nullptr && bundle_us != nullptr;
        const double len0 = bundled ? bundle_us(t->bundle) : same_length_ ? expected_(t, 0) : 0.0;
        for (std::size_t w = 0; w < children_.size(); ++w) {
            if (!children_[w]->accepts()) {
                continue;
            }
            const double a = ahead(w, &now);
            double len = same_length_ || bundled ? len0 : expected_(t, static_cast<int>(w));
            if (std::isnan(len)) {
                if (uncal < 0 || a < uncal_ahead || (a == uncal_ahead && fewer(w, uncal))) {
                    uncal = static_cast<int>(w);
                    uncal_ahead = a;
                }
                continue;
            }
            double fit = o_.alpha * (a + len);
            if (o_.data_aware) {
                fit += o_.beta * transfer_(t, static_cast<int>(w));
            }
            if (fit < best_fit || (fit == best_fit && fewer(w, best))) {
                best_fit = fit;
                best = static_cast<int>(w);
            }
        }
        return uncal >= 0 ? uncal : best;
    }
    /// Expected µs before worker w is free: its load less the elapsed part of its running task.
    /// *now: the clock, read on first need (0: not yet).
    double ahead(std::size_t w, std::uint64_t* now) const noexcept {
        const running& r = running_[w];
        if (r.start_ns == 0 || r.predicted_us <= 0) {
            return load_[w];
        }
        if (*now == 0) {
            *now = detail::now_ns();
        }
        const double elapsed = static_cast<double>(*now - r.start_ns) / 1000.0;
        return load_[w] - std::min(elapsed, r.predicted_us);
    }
    void account(task* t, int w) noexcept {
        double len = expected_(t, w);
        t->predicted_us = std::isnan(len) ? 0.0 : len;
        t->sched_worker = w;
        load_[static_cast<std::size_t>(w)] += t->predicted_us;
        ntasks_[static_cast<std::size_t>(w)].fetch_add(1, std::memory_order_relaxed);
    }
    /// account()'s inverse: t, given to worker w, leaves it (ended, or taken by another). Under lock_.
    void unaccount(const task* t, int w) noexcept {
        double& l = load_[static_cast<std::size_t>(w)];
        l = l > t->predicted_us ? l - t->predicted_us : 0.0;
        ntasks_[static_cast<std::size_t>(w)].fetch_sub(1, std::memory_order_relaxed);
    }
    long count(std::size_t w) const noexcept { return ntasks_[w].load(std::memory_order_relaxed); }
    /// Expected µs left of worker w's running task (0: none, or no prediction). Under lock_.
    double running_left(std::size_t w, std::uint64_t* now) const noexcept {
        const running& r = running_[w];
        if (r.start_ns == 0 || r.predicted_us <= 0) {
            return 0.0;
        }
        if (*now == 0) {
            *now = detail::now_ns();
        }
        const double elapsed = static_cast<double>(*now - r.start_ns) / 1000.0;
        return r.predicted_us - std::min(elapsed, r.predicted_us);
    }
    /// What steal_if() evaluates for a queued task t of worker `victim`, for worker `thief`.
    struct steal_view {
        heft_switch* self;
        int thief;
        int victim;
        double thief_ahead;
        double victim_left;  ///< what is left of the victim's running task
    };
    /// HEFT again for t, the next task of v's queue: true when it would end sooner on the
    /// thief (see the class comment). Under lock_ and v's queue lock.
    static bool better_on_thief(const task* t, void* arg) noexcept {
        const steal_view& s = *static_cast<const steal_view*>(arg);
        heft_switch& h = *s.self;
        const double lt = h.expected_(t, s.thief);
        const double lv = h.same_length_ ? lt : h.expected_(t, s.victim);
        const bool nt = std::isnan(lt);
        const bool nv = std::isnan(lv);
        if (nt != nv) {
            return nt;  // the worker where t is uncalibrated keeps it or gets it: it measures it
        }
        double ft = s.thief_ahead;
        double fv = s.victim_left;
        if (!nt) {
            ft = h.o_.alpha * (ft + lt);
            fv = h.o_.alpha * (fv + lv);
            if (h.o_.data_aware) {
                ft += h.o_.beta * h.transfer_(t, s.thief);
                fv += h.o_.beta * h.transfer_(t, s.victim);
            }
        }
        // The victim's count includes t; as a push now would see it: without t.
        return ft < fv || (ft == fv && h.count(static_cast<std::size_t>(s.thief)) <
                                           h.count(static_cast<std::size_t>(s.victim)) - 1);
    }
public:
    /// An idle worker about to park (policy::pop_idle): the next task of another worker's
    /// queue (the most loaded first) if HEFT now places it on this worker. Lock-free when the
    /// other queues are empty.
    task* rebalance(int thief) noexcept override {
        const std::size_t n = children_.size();
        if (thief < 0 || thief >= static_cast<int>(n)) {
            return nullptr;
        }
        bool any = false;
        for (std::size_t v = 0; v < n && !any; ++v) {
            any = static_cast<int>(v) != thief && children_[v]->queued() != 0;
        }
        if (!any) {
            return nullptr;
        }
        spin_guard g(lock_);
        if (held_n_.load(std::memory_order_relaxed) != 0) {
            return nullptr;  // pushed meanwhile: the caller's next pull takes it from held_
        }
        std::uint64_t now = 0;
        steal_view sv{this, thief, -1, ahead(static_cast<std::size_t>(thief), &now), 0.0};
        std::bitset<max_workers> tried;  // n <= max_workers (policy_context::nworkers)
        tried.set(static_cast<std::size_t>(thief));
        for (;;) {
            int v = -1;  // the most loaded untried worker with queued tasks
            double va = 0;
            for (std::size_t w = 0; w < n; ++w) {
                if (w >= tried.size() || tried.test(w) || children_[w]->queued() == 0) {
                    continue;
                }
                const double a = ahead(w, &now);
                if (v < 0 || a > va || (a == va && count(w) > count(static_cast<std::size_t>(v)))) {
                    v = static_cast<int>(w);
                    va = a;
                }
            }
            if (v < 0) {
                return nullptr;
            }
            tried.set(static_cast<std::size_t>(v));
            sv.victim = v;
            sv.victim_left = running_left(static_cast<std::size_t>(v), &now);
            // The first task taken runs now; the next ones, while HEFT still moves them (the
            // thief's load grows with each), go to the thief's queue: one visit of the switch
            // for up to steal_batch_max tasks (with no model: until the counts are even).
            task* first = nullptr;
            component& mine = *children_[static_cast<std::size_t>(thief)];
            for (long k = 0; k < steal_batch_max && (first == nullptr || mine.accepts()); ++k) {
                task* t = children_[static_cast<std::size_t>(v)]->steal_if(&better_on_thief, &sv);
                if (t == nullptr) {
                    break;
                }
                unaccount(t, v);
                account(t, thief);
                rebalanced_.fetch_add(1, std::memory_order_relaxed);
                if (first == nullptr) {
                    first = t;
                } else {
                    mine.push(t);
                }
                sv.thief_ahead = ahead(static_cast<std::size_t>(thief), &now);
            }
            if (first != nullptr) {
                return first;
            }
        }
    }

private:
    /// The most tasks one rebalance() moves (as a ws steal).
    static constexpr long steal_batch_max = 32;
    int give(task* t, int w) noexcept {
        account(t, w);
        children_[static_cast<std::size_t>(w)]->push(t);
        return w;
    }

    spinlock lock_;
    std::vector<component*> children_;
    std::vector<double> load_;   ///< under lock_: expected µs of work given to each worker
    /// Tasks given to each worker and not finished: added under lock_, taken off by
    /// notify_done (without the lock for a task with no prediction).
    std::unique_ptr<std::atomic<long>[]> ntasks_;
    struct running {
        std::uint64_t start_ns = 0;  ///< 0: none
        double predicted_us = 0;
    };
    std::vector<running> running_;  ///< under lock_: each worker's task in progress
    double (*expected_)(const task*, int);
    double (*transfer_)(const task*, int);
    bool same_length_;  ///< expected_ does not depend on the worker (the runtime's models: one arch)
    heft_options o_;
    std::atomic<std::uint64_t> rebalanced_{0};  ///< tasks an idle worker took from another's queue
    prio_order held_;  ///< priority order; with equal priorities it is the submission order
    std::atomic<long> held_n_{0};
};

/// One shared queue above the workers: each worker's leaf is the queue itself.
template <class Q>
std::unique_ptr<policy> shared_queue_tree(const policy_context& ctx) {
    std::vector<std::unique_ptr<component>> parts;
    parts.push_back(std::make_unique<Q>());
    component* root = parts.back().get();
    std::vector<component*> leaves(static_cast<std::size_t>(ctx.nworkers), root);
    return std::make_unique<tree_policy>(std::move(parts), root, std::move(leaves), false);
}

/// One queue per worker (the leaves) under a root that make_root builds from them.
template <class Q, class MakeRoot>
std::unique_ptr<tree_policy> per_worker_tree(const policy_context& ctx, bool measures, long limit, MakeRoot make_root) {
    std::vector<std::unique_ptr<component>> parts;
    std::vector<Q*> queues;
    std::vector<component*> leaves;
    for (int w = 0; w < ctx.nworkers; ++w) {
        auto q = std::make_unique<Q>(w, limit);
        queues.push_back(q.get());
        leaves.push_back(q.get());
        parts.push_back(std::move(q));
    }
    std::unique_ptr<component> root = make_root(queues);
    for (component* l : leaves) {
        l->parent = root.get();
    }
    component* r = root.get();
    parts.push_back(std::move(root));
    return std::make_unique<tree_policy>(std::move(parts), r, std::move(leaves), measures);
}

template <class Q>
std::vector<component*> as_components(const std::vector<Q*>& qs) {
    return {qs.begin(), qs.end()};
}

}  // namespace

/// Per-thread xorshift: random draws without a shared state.
double uniform01() noexcept {
    thread_local std::uint64_t s = 0x9e3779b97f4a7c15ull ^ reinterpret_cast<std::uintptr_t>(&s);
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<double>(s >> 11) * (1.0 / 9007199254740992.0);
}

/// STARPU_SCHED_ALPHA / STARPU_SCHED_BETA (StarPU's dmda weights), 1 by default.
double weight(const char* var) noexcept {
    const char* s = std::getenv(var);
    if (s == nullptr || *s == '\0') {
        return 1.0;
    }
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0)) {
        MPC_LOG(warn, tg, "%s=%s is not a non-negative number: 1 is used", var, s);
        return 1.0;
    }
    return v;
}

std::unique_ptr<tree_policy> make_heft_tree(const policy_context& ctx, const heft_options& o) {
    auto root = [&](const auto& qs) { return std::make_unique<heft_switch>(as_components(qs), ctx, o); };
    return o.sorted ? per_worker_tree<prio_queue>(ctx, true, o.queue_limit, root)
                    : per_worker_tree<fifo_queue>(ctx, true, o.queue_limit, root);
}

}  // namespace mpc::tg::modular

namespace mpc::tg {

void set_bundle_length_hook(double (*hook)(const void* bundle)) noexcept {
    modular::g_bundle_length.store(hook, std::memory_order_release);
}

using namespace modular;

std::unique_ptr<policy> make_modular_eager(const policy_context& ctx) { return shared_queue_tree<fifo_queue>(ctx); }
std::unique_ptr<policy> make_modular_prio(const policy_context& ctx) { return shared_queue_tree<prio_queue>(ctx); }

std::unique_ptr<policy> make_random(const policy_context& ctx) {
    return per_worker_tree<fifo_queue>(
        ctx, false, 0, [&](const auto& qs) { return std::make_unique<random_switch>(as_components(qs), ctx.speed); });
}

std::unique_ptr<policy> make_ws(const policy_context& ctx) {
    return per_worker_tree<deque_queue>(ctx, false, 0,
                                        [&](const auto& qs) { return std::make_unique<steal_switch>(qs, ctx, false); });
}
std::unique_ptr<policy> make_lws(const policy_context& ctx) {
    return per_worker_tree<deque_queue>(ctx, false, 0,
                                        [&](const auto& qs) { return std::make_unique<steal_switch>(qs, ctx, true); });
}

std::unique_ptr<policy> make_dm(const policy_context& ctx) { return make_heft_tree(ctx, heft_options{}); }

std::unique_ptr<policy> make_dmda(const policy_context& ctx) {
    heft_options o;
    o.data_aware = true;
    o.alpha = weight("STARPU_SCHED_ALPHA");
    o.beta = weight("STARPU_SCHED_BETA");
    return make_heft_tree(ctx, o);
}

std::unique_ptr<policy> make_dmdas(const policy_context& ctx) {
    heft_options o;
    o.data_aware = true;
    o.sorted = true;
    o.alpha = weight("STARPU_SCHED_ALPHA");
    o.beta = weight("STARPU_SCHED_BETA");
    return make_heft_tree(ctx, o);
}

}  // namespace mpc::tg
