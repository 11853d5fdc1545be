/// \file
/// StarPU 1.3 C API: modular schedulers built by the application (starpu_sched_component.h).
///
/// The components are StarPU's C structures and every call between them goes through their
/// function pointers (an application may replace any method, or write its own component), so
/// the tree walk is the C one. What the predefined components hold is MPC's: the fifo, prio
/// and eager_prio components keep their tasks in modular::prio_order (the priority heap of
/// modular-prio and dmdas, FIFO among equals: StarPU's fifo component also sorts by priority),
/// work_stealing keeps one modular::deque_queue per child (ws's deques: the owner takes the
/// newest, thieves the oldest). A worker component hands a task pushed into it to the
/// runtime's own queue of that worker (detail::push_local, what starpu_push_local_task does),
/// which the worker serves before calling the policy's pop_task; a worker whose queue is empty
/// calls pop_task = starpu_sched_tree_pop_task, which pulls through its worker component from
/// the parents. The tree runs as an application policy (starpu_sched.cpp, user_policy): its
/// push_task / pop_task / hooks are the starpu_sched_tree_* functions the application put in its
/// struct starpu_sched_policy.
///
/// Expected ends (µs, starpu_timing_now()): a worker component keeps exp_start, exp_len (predicted
/// work queued for it) and pipeline_len (predicted work started), as StarPU's; the queues keep
/// their predicted work. A task is counted in its worker component from the moment it is given
/// to it until pre_exec_hook, marked by the core task's sched_worker.

#include <starpu.h>
#include <starpu_sched_component.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/modular.hpp"
#include "taskgraph/starpu_glue.hpp"

struct starpu_bitmap {
    static constexpr int nwords = STARPU_NMAXWORKERS / 64;
    std::uint64_t w[nwords] = {};
    static bool in_range(int e) noexcept { return e >= 0 && e < STARPU_NMAXWORKERS; }
};

namespace mpc::tg::starpu {
namespace {

using modular::deque_queue;
using modular::prio_order;

task* core_of(starpu_task* t) noexcept { return static_cast<task*>(t->starpu_private); }

double predicted_of(const starpu_task* t) noexcept { return std::isnan(t->predicted) ? 0.0 : t->predicted; }

const char* name_of(const starpu_sched_component* c) noexcept { return c->name != nullptr ? c->name : "(unnamed)"; }

void need(const void* p, const char* call) noexcept {
    if (p == nullptr) {
        fatal(call, "NULL component or tree");
    }
}

// ---- trees and worker components ----------------------------------------------------------

std::atomic<starpu_sched_tree*> g_trees[STARPU_NMAX_SCHED_CTXS];
std::atomic<starpu_sched_component*> g_workers[STARPU_NMAXWORKERS];  ///< context 0's

/// A worker component's data: what StarPU's worker task list keeps for the estimates.
struct worker_data {
    int id = -1;
    spinlock lock;
    double exp_start = 0;     ///< when the queued work starts
    double exp_len = 0;       ///< predicted µs queued (given to the worker, not started)
    double pipeline_len = 0;  ///< predicted µs started and not finished
    long ntasks = 0;          ///< tasks given to the worker and not started
};

worker_data* wdata(starpu_sched_component* c) noexcept { return static_cast<worker_data*>(c->data); }

bool bad_ctx(unsigned ctx, const char* call) noexcept { return ctx_unknown(ctx, call); }

// ---- queue components (fifo, prio, eager_prio) --------------------------------------------

struct queue_data {
    spinlock lock;
    prio_order q;             ///< under lock
    long n = 0;               ///< under lock
    double exp_len = 0;       ///< under lock: predicted µs queued
    unsigned ntasks_threshold = 0;
    double exp_len_threshold = 0;
};

queue_data* qdata(starpu_sched_component* c) noexcept { return static_cast<queue_data*>(c->data); }

/// Stores t; refused (1) beyond a bound unless `back` (a task given back by a refused push).
int queue_put(starpu_sched_component* c, starpu_task* t, bool back) noexcept {
    queue_data* d = qdata(c);
    {
        spin_guard g(d->lock);
        const double len = predicted_of(t);
        if (!back && ((d->ntasks_threshold != 0 && d->n >= static_cast<long>(d->ntasks_threshold)) ||
                      (d->exp_len_threshold != 0 && d->n != 0 && d->exp_len + len >= d->exp_len_threshold))) {
            return 1;
        }
        d->q.put(core_of(t));
        ++d->n;
        d->exp_len += len;
    }
    if (!back) {
        c->can_pull(c);  // tell the children that they may pull
    }
    return 0;
}

starpu_task* queue_take(starpu_sched_component* c) noexcept {
    queue_data* d = qdata(c);
    mpc::spin_guard g(d->lock);
    task* t = d->q.take();
    if (t == nullptr) {
        return nullptr;
    }
    starpu_task* st = api_task_of(t);
    --d->n;
    d->exp_len = d->n == 0 ? 0.0 : std::max(0.0, d->exp_len - predicted_of(st));
    return st;
}

/// Pulls from c into `to` until `to` refuses a task (given back to c) or c is empty.
int queue_pump(starpu_sched_component* c, starpu_sched_component* to) noexcept {
    int done = 0;
    starpu_task* refused = starpu_sched_component_pump_to(c, to, &done);
    if (refused != nullptr) {
        queue_put(c, refused, true);
    }
    return done;
}

int fifo_push(starpu_sched_component* c, starpu_task* t) { return queue_put(c, t, false); }
int prio_push(starpu_sched_component* c, starpu_task* t) { return queue_put(c, t, false); }
int eager_prio_push(starpu_sched_component* c, starpu_task* t) { return queue_put(c, t, false); }

/// fifo and prio: the next task, or NULL; then the parents may push more into the room left.
starpu_task* queue_pull(starpu_sched_component* c, starpu_sched_component* /*to*/) {
    starpu_task* t = queue_take(c);
    starpu_sched_component_send_can_push_to_parents(c);
    return t;
}

/// eager_prio: the next task, else the parents'.
starpu_task* eager_prio_pull(starpu_sched_component* c, starpu_sched_component* to) {
    starpu_task* t = queue_take(c);
    return t != nullptr ? t : starpu_sched_component_parents_pull_task(c, to);
}

/// A child has room: push the queue into it (StarPU pumps into the only child; any child that
/// asks is served here).
int queue_can_push(starpu_sched_component* c, starpu_sched_component* to) {
    if (to == nullptr) {
        return 0;
    }
    return queue_pump(c, to);
}

double queue_estimated_end(starpu_sched_component* c) {
    queue_data* d = qdata(c);
    double len = 0;
    {
        spin_guard g(d->lock);
        len = d->exp_len;
    }
    return starpu_sched_component_estimated_end_min_add(c, len);
}

double queue_estimated_load(starpu_sched_component* c) {
    queue_data* d = qdata(c);
    long n = 0;
    {
        spin_guard g(d->lock);
        n = d->n;
    }
    return starpu_sched_component_estimated_load(c) + static_cast<double>(n);  // every worker: speed 1
}

void queue_deinit(starpu_sched_component* c) {
    queue_data* d = qdata(c);
    if (d != nullptr && d->n != 0) {
        MPC_LOG(error, tg, "starpu_sched_component_destroy: component %s still holds %ld tasks", name_of(c), d->n);
    }
    delete d;
    c->data = nullptr;
}

starpu_sched_component* make_queue(starpu_sched_tree* tree, const char* name, int (*push)(starpu_sched_component*,
                                                                                       starpu_task*),
                                   unsigned ntasks, double exp_len) {
    starpu_sched_component* c = starpu_sched_component_create(tree, name);
    auto* d = new queue_data;
    d->ntasks_threshold = ntasks;
    d->exp_len_threshold = exp_len;
    c->data = d;
    c->push_task = push;
    c->pull_task = &queue_pull;
    c->can_push = &queue_can_push;
    c->estimated_end = &queue_estimated_end;
    c->estimated_load = &queue_estimated_load;
    c->deinit_data = &queue_deinit;
    return c;
}

// ---- eager -----------------------------------------------------------------------------------

struct eager_data {
    spinlock lock;  ///< serialises can_push calls (target)
    std::atomic<starpu_sched_component*> target{nullptr};
};

bool is_worker(starpu_sched_component* c) noexcept { return starpu_sched_component_is_worker(c) != 0; }

int eager_push(starpu_sched_component* c, starpu_task* t) {
    auto* d = static_cast<eager_data*>(c->data);
    if (starpu_sched_component* target = d->target.load(std::memory_order_acquire);
        target != nullptr && starpu_sched_component_can_execute_task(target, t) &&
        starpu_sched_component_push_task(c, target, t) == 0) {
        return 0;  // the child that said it has room
    }
    // The first child (in connection order: usually worker order) that takes it; a worker child
    // is woken to pull instead (the task stays above: eager keeps no queue).
    for (unsigned i = 0; i < c->nchildren; ++i) {
        starpu_sched_component* child = c->children[i];
        if (!starpu_sched_component_can_execute_task(child, t)) {
            continue;
        }
        if (is_worker(child)) {
            if (child->can_pull(child) != 0) {
                return 1;
            }
        } else if (starpu_sched_component_push_task(c, child, t) == 0) {
            return 0;
        }
    }
    return 1;
}

int eager_can_push(starpu_sched_component* c, starpu_sched_component* to) {
    auto* d = static_cast<eager_data*>(c->data);
    mpc::spin_guard g(d->lock);
    d->target.store(to, std::memory_order_release);
    int r = starpu_sched_component_can_push(c, to);
    d->target.store(nullptr, std::memory_order_release);
    return r;
}

void eager_deinit(starpu_sched_component* c) {
    delete static_cast<eager_data*>(c->data);
    c->data = nullptr;
}

// ---- random ------------------------------------------------------------------------------------

/// A child able to run t, drawn in proportion to its workers (every CPU has speed 1).
int random_push(starpu_sched_component* c, starpu_task* t) {
    double total = 0;
    for (unsigned i = 0; i < c->nchildren; ++i) {
        if (starpu_sched_component_can_execute_task(c->children[i], t)) {
            total += starpu_bitmap_cardinal(c->children[i]->workers_in_ctx);
        }
    }
    if (total == 0) {
        return 1;
    }
    double r = modular::uniform01() * total;
    starpu_sched_component* chosen = nullptr;
    for (unsigned i = 0; i < c->nchildren; ++i) {
        starpu_sched_component* child = c->children[i];
        if (!starpu_sched_component_can_execute_task(child, t)) {
            continue;
        }
        chosen = child;
        r -= starpu_bitmap_cardinal(child->workers_in_ctx);
        if (r < 0) {
            break;
        }
    }
    return starpu_sched_component_push_task(c, chosen, t);
}

// ---- mct and heft ------------------------------------------------------------------------------

struct mct_data {
    starpu_sched_component_mct_data w{};
    spinlock lock;
    prio_order held;  ///< heft: tasks no child took yet (under lock)
    long nheld = 0;
};

/// The child for t (-1: none can run it): smallest alpha * (end + length) + beta * transfer,
/// ties to the least loaded; an uncalibrated model goes to the child idle first among those
/// where it is uncalibrated, so that it gets measured. Sets t's predictions.
starpu_sched_component* mct_choose(starpu_sched_component* c, starpu_task* t) noexcept {
    const auto* d = static_cast<mct_data*>(c->data);
    const double now = starpu_timing_now();
    starpu_sched_component* best = nullptr;
    double best_fit = std::numeric_limits<double>::infinity(), best_load = 0, best_len = 0, best_tr = 0;
    starpu_sched_component* uncal = nullptr;
    double uncal_end = 0;
    for (unsigned i = 0; i < c->nchildren; ++i) {
        starpu_sched_component* child = c->children[i];
        double len = 0;
        if (!starpu_sched_component_execute_preds(child, t, &len)) {
            continue;
        }
        const double end = std::max(child->estimated_end(child), now);
        if (std::isnan(len)) {
            if (uncal == nullptr || end < uncal_end) {
                uncal = child;
                uncal_end = end;
            }
            continue;
        }
        const double tr = starpu_sched_component_transfer_length(child, t);
        const double fit = d->w.alpha * (end + len - now) + d->w.beta * tr;
        const double load = child->estimated_load(child);
        if (fit < best_fit || (fit == best_fit && load < best_load)) {
            best = child;
            best_fit = fit;
            best_load = load;
            best_len = len;
            best_tr = tr;
        }
    }
    if (uncal != nullptr) {
        t->predicted = NAN;
        t->predicted_transfer = 0;
        return uncal;
    }
    if (best != nullptr) {
        t->predicted = best_len;
        t->predicted_transfer = best_tr;
    }
    return best;
}

int mct_push(starpu_sched_component* c, starpu_task* t) {
    starpu_sched_component* child = mct_choose(c, t);
    return child != nullptr ? starpu_sched_component_push_task(c, child, t) : 1;
}

/// heft: places held tasks, highest priority first, until a chosen child refuses one.
int heft_schedule(starpu_sched_component* c) noexcept {
    auto* d = static_cast<mct_data*>(c->data);
    int done = 0;
    for (;;) {
        task* core = nullptr;
        {
            spin_guard g(d->lock);
            core = d->held.take();
            if (core == nullptr) {
                return done;
            }
            --d->nheld;
        }
        starpu_task* t = api_task_of(core);
        starpu_sched_component* child = mct_choose(c, t);
        if (child == nullptr || starpu_sched_component_push_task(c, child, t) != 0) {
            spin_guard g(d->lock);
            d->held.put(core);
            ++d->nheld;
            return done;
        }
        done = 1;
    }
}

int heft_push(starpu_sched_component* c, starpu_task* t) {
    auto* d = static_cast<mct_data*>(c->data);
    {
        spin_guard g(d->lock);
        d->held.put(core_of(t));
        ++d->nheld;
    }
    heft_schedule(c);
    return 0;
}

int heft_can_push(starpu_sched_component* c, starpu_sched_component* to) {
    int done = heft_schedule(c);
    return starpu_sched_component_can_push(c, to) != 0 || done != 0 ? 1 : 0;
}

void mct_deinit(starpu_sched_component* c) {
    auto* d = static_cast<mct_data*>(c->data);
    if (d != nullptr && d->nheld != 0) {
        MPC_LOG(error, tg, "starpu_sched_component_destroy: component %s still holds %ld tasks", name_of(c), d->nheld);
    }
    delete d;
    c->data = nullptr;
}

starpu_sched_component* make_mct(starpu_sched_tree* tree, const char* name, starpu_sched_component_mct_data* params,
                                 int (*push)(starpu_sched_component*, starpu_task*)) {
    starpu_sched_component* c = starpu_sched_component_create(tree, name);
    auto* d = new mct_data;
    if (params != nullptr) {
        d->w = *params;
    } else {
        d->w.alpha = modular::weight("STARPU_SCHED_ALPHA");
        d->w.beta = modular::weight("STARPU_SCHED_BETA");
        d->w._gamma = modular::weight("STARPU_SCHED_GAMMA");
        d->w.idle_power = 0;
    }
    c->data = d;
    c->push_task = push;
    c->deinit_data = &mct_deinit;
    return c;
}

// ---- work stealing -----------------------------------------------------------------------------

/// One child's deque and the predicted work queued in it (µs; tasks without a prediction add
/// nothing), kept by its push, pull and steal.
struct ws_deque {
    deque_queue q;
    std::atomic<double> exp_len{0};
    void push(starpu_task* t) noexcept {
        exp_len.fetch_add(predicted_of(t), std::memory_order_relaxed);
        q.push(core_of(t));
    }
    /// The owner's end (pull) or a thief's (steal); nullptr when empty.
    starpu_task* take(bool steal) noexcept {
        task* ct = steal ? q.steal() : q.pull(-1);
        if (ct == nullptr) {
            return nullptr;
        }
        starpu_task* t = api_task_of(ct);
        if (q.size() == 0) {
            exp_len.store(0, std::memory_order_relaxed);  // an empty deque restarts from 0 (no drift)
        } else {
            exp_len.fetch_sub(predicted_of(t), std::memory_order_relaxed);
        }
        return t;
    }
};

/// Children are connected while the tree is built, before tasks flow (as in StarPU).
struct ws_data {
    std::vector<std::unique_ptr<ws_deque>> q;  ///< one per child, in children order
    std::atomic<std::uint64_t> last_push{0};   ///< StarPU's last_push_child (a count: mod nchildren)
    std::atomic<std::uint64_t> rr{0};          ///< where thieves start
};

ws_data* wsdata(starpu_sched_component* c) noexcept { return static_cast<ws_data*>(c->data); }

void ws_add_child(starpu_sched_component* c, starpu_sched_component* child) {
    starpu_sched_component_add_child(c, child);
    wsdata(c)->q.push_back(std::make_unique<ws_deque>());
}

/// As the default removal (the last child takes the removed one's place), with its deque.
void ws_remove_child(starpu_sched_component* c, starpu_sched_component* child) {
    ws_data* d = wsdata(c);
    for (unsigned i = 0; i < c->nchildren; ++i) {
        if (c->children[i] == child) {
            if (d->q[i]->q.size() != 0) {
                MPC_LOG(error, tg, "work_stealing component %s: a child removed with %ld tasks in its deque",
                        name_of(c), d->q[i]->q.size());
            }
            c->children[i] = c->children[--c->nchildren];
            d->q[i] = std::move(d->q.back());
            d->q.pop_back();
            return;
        }
    }
}

/// The index of the child holding worker w (or `to`), or -1.
int ws_child_of(starpu_sched_component* c, starpu_sched_component* to, int w) noexcept {
    for (unsigned i = 0; i < c->nchildren; ++i) {
        if (c->children[i] == to || (to == nullptr && w >= 0 && starpu_bitmap_get(c->children[i]->workers, w))) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

/// A push from the parent (StarPU's push_task): the next child round-robin after the last one
/// pushed to (StarPU's last_push_child) among those that can run t, whoever pushes; then every
/// child is told (can_pull_all: any idle worker below may take or steal it). Refused when no
/// child can run t.
int ws_push(starpu_sched_component* c, starpu_task* t) {
    ws_data* d = wsdata(c);
    const unsigned n = std::min<std::size_t>(c->nchildren, d->q.size());
    if (n == 0) {
        return 1;
    }
    const std::uint64_t start = d->last_push.load(std::memory_order_relaxed) + 1;
    for (unsigned k = 0; k < n; ++k) {
        const auto i = static_cast<std::size_t>((start + k) % n);
        if (starpu_sched_component_can_execute_task(c->children[i], t) == 0) {
            continue;
        }
        d->last_push.store(start + k, std::memory_order_relaxed);
        d->q[i]->push(t);
        starpu_sched_component_can_pull_all(c);
        return 0;
    }
    return 1;
}

/// starpu_sched_tree_work_stealing_push_task's push by worker w into its own deque of `c`; the
/// other children are told (can_pull: an idle worker wakes and steals it). 1 when no child of
/// `c` holds w.
int ws_push_own(starpu_sched_component* c, starpu_task* t, int w) {
    ws_data* d = wsdata(c);
    const int i = ws_child_of(c, nullptr, w);
    if (i < 0 || static_cast<std::size_t>(i) >= d->q.size()) {
        return 1;
    }
    d->q[static_cast<std::size_t>(i)]->push(t);
    c->can_pull(c);
    return 0;
}

starpu_task* ws_pull(starpu_sched_component* c, starpu_sched_component* to) {
    ws_data* d = wsdata(c);
    const unsigned n = std::min<std::size_t>(c->nchildren, d->q.size());
    const int mine = ws_child_of(c, to, starpu_worker_get_id());
    if (mine >= 0) {
        if (starpu_task* t = d->q[static_cast<std::size_t>(mine)]->take(false); t != nullptr) {
            return t;
        }
    }
    const std::uint64_t start = d->rr.fetch_add(1, std::memory_order_relaxed);
    for (unsigned k = 0; k < n; ++k) {
        const auto v = static_cast<std::size_t>((start + k) % n);
        if (static_cast<int>(v) != mine) {
            if (starpu_task* t = d->q[v]->take(true); t != nullptr) {
                return t;
            }
        }
    }
    return starpu_sched_component_parents_pull_task(c, to);
}

/// StarPU's: the tasks in the deques (not below them), per unit of the workers' speed.
double ws_estimated_load(starpu_sched_component* c) {
    ws_data* d = wsdata(c);
    long n = 0;
    for (const auto& q : d->q) {
        n += q->q.size();
    }
    const unsigned ctx = c->tree != nullptr ? c->tree->sched_ctx_id : 0;
    double speed = 0;
    for (int w = starpu_bitmap_first(c->workers_in_ctx); w != -1; w = starpu_bitmap_next(c->workers_in_ctx, w)) {
        speed += starpu_worker_get_relative_speedup(starpu_worker_get_perf_archtype(w, ctx));
    }
    return speed > 0 ? static_cast<double>(n) / speed : static_cast<double>(n);
}

/// StarPU's: the mean over the children of (when the child is free, at least now) plus the
/// predicted work in its deque, whoever will steal it. StarPU takes "when free" from the last
/// task pulled; here it is the child's own estimated_end.
double ws_estimated_end(starpu_sched_component* c) {
    ws_data* d = wsdata(c);
    const unsigned n = std::min<std::size_t>(c->nchildren, d->q.size());
    const double now = starpu_timing_now();
    if (n == 0) {
        return now;
    }
    double sum = 0;
    for (unsigned i = 0; i < n; ++i) {
        starpu_sched_component* child = c->children[i];
        sum += std::max(now, child->estimated_end(child)) + std::max(0.0, d->q[i]->exp_len.load(std::memory_order_relaxed));
    }
    return sum / n;
}

void ws_deinit(starpu_sched_component* c) {
    delete wsdata(c);
    c->data = nullptr;
}

// ---- best implementation, perfmodel select, eager calibration ----------------------------------

void set_prediction(starpu_sched_component* c, starpu_task* t) noexcept {
    double len = 0;
    if (starpu_sched_component_execute_preds(c, t, &len)) {
        t->predicted = len;
        t->predicted_transfer = starpu_sched_component_transfer_length(c, t);
    }
}

int best_impl_push(starpu_sched_component* c, starpu_task* t) {
    if (c->nchildren == 0) {
        MPC_LOG(error, tg, "best_implementation component %s has no child", name_of(c));
        return 1;
    }
    set_prediction(c, t);
    return starpu_sched_component_push_task(c, c->children[0], t);
}

starpu_task* best_impl_pull(starpu_sched_component* c, starpu_sched_component* to) {
    starpu_task* t = starpu_sched_component_parents_pull_task(c, to);
    if (t != nullptr) {
        set_prediction(c, t);
    }
    return t;
}

int perfmodel_select_push(starpu_sched_component* c, starpu_task* t) {
    auto* d = static_cast<starpu_sched_component_perfmodel_select_data*>(c->data);
    starpu_sched_component* to = d->no_perfmodel_component;
    if (t->cl != nullptr && t->cl->model != nullptr) {
        double len = 0;
        if (starpu_sched_component_execute_preds(c, t, &len)) {
            to = std::isnan(len) ? d->calibrator_component : len > 0 ? d->perfmodel_component : to;
        }
    }
    if (to == nullptr) {
        MPC_LOG(error, tg, "perfmodel_select component %s: no component for this task (NULL in its data)", name_of(c));
        return 1;
    }
    return starpu_sched_component_push_task(c, to, t);
}

void perfmodel_select_deinit(starpu_sched_component* c) {
    delete static_cast<starpu_sched_component_perfmodel_select_data*>(c->data);
    c->data = nullptr;
}

/// Takes a task only where its model is uncalibrated: the child idle first among those.
int eager_calibration_push(starpu_sched_component* c, starpu_task* t) {
    starpu_sched_component* best = nullptr;
    double best_end = 0;
    for (unsigned i = 0; i < c->nchildren; ++i) {
        starpu_sched_component* child = c->children[i];
        double len = 0;
        if (starpu_sched_component_execute_preds(child, t, &len) && std::isnan(len)) {
            const double end = child->estimated_end(child);
            if (best == nullptr || end < best_end) {
                best = child;
                best_end = end;
            }
        }
    }
    return best != nullptr ? starpu_sched_component_push_task(c, best, t) : 1;
}

// ---- worker components -------------------------------------------------------------------------

/// Counts t as given to worker component c (under no lock of c's).
void worker_account(starpu_sched_component* c, starpu_task* t) noexcept {
    worker_data* d = wdata(c);
    t->workerid = static_cast<unsigned>(d->id);
    core_of(t)->sched_worker = d->id;
    const double now = starpu_timing_now();
    mpc::spin_guard g(d->lock);
    d->exp_start = std::max(d->exp_start, now);
    d->exp_len += predicted_of(t);
    ++d->ntasks;
}

int worker_push(starpu_sched_component* c, starpu_task* t) {
    worker_data* d = wdata(c);
    worker_account(c, t);
    status st = detail::push_local(core_of(t), d->id, false);
    if (!st) {
        MPC_LOG(error, tg, "worker component %d: the task could not be queued (%s)", d->id, st.reason());
        return 1;
    }
    note_wake(d->id, true);  // push_local kicked it if it slept: it looks at its own queue first
    return 0;
}

starpu_task* worker_pull(starpu_sched_component* c, starpu_sched_component* /*to*/) {
    // Twice, as StarPU's worker component: a parent queue that was empty may have had tasks
    // pushed into it by the can_push its pull sent up.
    for (int tries = 0; tries < 2; ++tries) {
        for (unsigned i = 0; i < c->nparents; ++i) {
            if (c->parents[i] == nullptr) {
                continue;
            }
            if (starpu_task* t = starpu_sched_component_pull_task(c->parents[i], c); t != nullptr) {
                worker_account(c, t);
                return t;
            }
        }
    }
    return nullptr;
}

int worker_can_pull(starpu_sched_component* c) { return starpu_wake_worker_relax_light(wdata(c)->id); }

double worker_estimated_end(starpu_sched_component* c) {
    worker_data* d = wdata(c);
    const double now = starpu_timing_now();
    mpc::spin_guard g(d->lock);
    d->exp_start = std::max(d->exp_start, now + d->pipeline_len);
    return d->exp_start + d->exp_len;
}

double worker_estimated_load(starpu_sched_component* c) {
    worker_data* d = wdata(c);
    mpc::spin_guard g(d->lock);
    return static_cast<double>(d->ntasks);
}

void worker_deinit(starpu_sched_component* c) {
    worker_data* d = wdata(c);
    if (d != nullptr && d->id >= 0 && d->id < STARPU_NMAXWORKERS) {
        starpu_sched_component* expected = c;
        g_workers[d->id].compare_exchange_strong(expected, nullptr);
    }
    delete d;
    c->data = nullptr;
}

void worker_refuse_child(starpu_sched_component* /*c*/, starpu_sched_component* /*child*/) {
    fatal("starpu_sched_component_add_child", "a worker component cannot have children (it is a leaf)");
}

starpu_sched_component* worker_component_of_caller(const char* call) noexcept {
    const int w = starpu_worker_get_id();
    if (w < 0 || w >= STARPU_NMAXWORKERS) {
        MPC_LOG(error, tg, "%s: not called by a worker", call);
        return nullptr;
    }
    return g_workers[w].load(std::memory_order_acquire);
}

// ---- tree walks --------------------------------------------------------------------------------

void update_workers_rec(starpu_sched_component* c) noexcept {
    if (is_worker(c)) {
        return;
    }
    starpu_bitmap_unset_all(c->workers);
    if (c->nchildren == 0) {
        MPC_LOG(error, tg, "starpu_sched_tree_update_workers: component %s has no children: the tasks given to it "
                           "can never reach a worker (connect worker components at the leaves)", name_of(c));
    }
    for (unsigned i = 0; i < c->nchildren; ++i) {
        update_workers_rec(c->children[i]);
        starpu_bitmap_or(c->workers, c->children[i]->workers);
    }
    if (c->notify_change_workers != nullptr) {
        c->notify_change_workers(c);
    }
}

void update_in_ctx_rec(starpu_sched_component* c, starpu_bitmap* ctx_workers) noexcept {
    if (is_worker(c)) {
        return;  // shared between contexts: its workers are its own
    }
    starpu_bitmap_unset_and(c->workers_in_ctx, c->workers, ctx_workers);
    c->properties = starpu_bitmap_cardinal(c->workers_in_ctx) != 0
                        ? STARPU_SCHED_COMPONENT_HOMOGENEOUS | STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE
                        : 0;  // CPUs only, all in main memory
    for (unsigned i = 0; i < c->nchildren; ++i) {
        update_in_ctx_rec(c->children[i], ctx_workers);
    }
    if (c->notify_change_workers != nullptr) {
        c->notify_change_workers(c);
    }
}

/// Reports the workers of `ids` the tree's root does not reach.
void check_reach(starpu_sched_tree* t, const int* ids, unsigned n) noexcept {
    if (t->root == nullptr) {
        MPC_LOG(error, tg, "starpu_sched_tree_add_workers: the tree has no root (set tree->root)");
        return;
    }
    for (unsigned i = 0; i < n; ++i) {
        if (!starpu_bitmap_get(t->root->workers, ids[i])) {
            MPC_LOG(error, tg, "starpu_sched_tree_add_workers: worker %d is not a leaf of the tree (no worker component "
                               "connected for it, or starpu_sched_tree_update_workers not called): it will run no task "
                               "of the tree", ids[i]);
        }
    }
}

std::atomic<bool> g_refusal_said{false};  ///< a refused push was reported (for the current tree)

/// The nearest work_stealing component above `leaf` (a worker component), going up through the
/// parents as StarPU's starpu_sched_tree_work_stealing_push_task does, and into the chain of a
/// composed component (bottom first: the chain is not among the tree's links); nullptr if none.
starpu_sched_component* ws_above(starpu_sched_component* leaf) noexcept {
    std::vector<starpu_sched_component*> todo{leaf};
    auto add = [&todo](starpu_sched_component* m) {
        if (m != nullptr && std::find(todo.begin(), todo.end(), m) == todo.end()) {
            todo.push_back(m);
        }
    };
    for (std::size_t i = 0; i < todo.size(); ++i) {
        starpu_sched_component* c = todo[i];
        if (starpu_sched_component_is_work_stealing(c)) {
            return c;
        }
        if (const std::vector<starpu_sched_component*>* chain = composed_chain(c); chain != nullptr) {
            for (auto it = chain->rbegin(); it != chain->rend(); ++it) {
                add(*it);
            }
        }
        for (unsigned k = 0; k < c->nparents; ++k) {
            add(c->parents[k]);
        }
    }
    return nullptr;
}

}  // namespace
}  // namespace mpc::tg::starpu

using namespace mpc::tg;
namespace sp = mpc::tg::starpu;

extern "C" {

// ---- bitmaps -----------------------------------------------------------------------------------

struct starpu_bitmap* starpu_bitmap_create(void) { return new starpu_bitmap; }
void starpu_bitmap_destroy(struct starpu_bitmap* b) { delete b; }

void starpu_bitmap_set(struct starpu_bitmap* b, int e) {
    if (starpu_bitmap::in_range(e)) {
        b->w[e / 64] |= std::uint64_t{1} << (e % 64);
    }
}
void starpu_bitmap_unset(struct starpu_bitmap* b, int e) {
    if (starpu_bitmap::in_range(e)) {
        b->w[e / 64] &= ~(std::uint64_t{1} << (e % 64));
    }
}
void starpu_bitmap_unset_all(struct starpu_bitmap* b) { *b = starpu_bitmap{}; }
int starpu_bitmap_get(struct starpu_bitmap* b, int e) {
    return starpu_bitmap::in_range(e) && ((b->w[e / 64] >> (e % 64)) & 1u) != 0 ? 1 : 0;
}
void starpu_bitmap_unset_and(struct starpu_bitmap* a, struct starpu_bitmap* b, struct starpu_bitmap* c) {
    for (int i = 0; i < starpu_bitmap::nwords; ++i) {
        a->w[i] = b->w[i] & c->w[i];
    }
}
void starpu_bitmap_or(struct starpu_bitmap* a, struct starpu_bitmap* b) {
    for (int i = 0; i < starpu_bitmap::nwords; ++i) {
        a->w[i] |= b->w[i];
    }
}
int starpu_bitmap_and_get(struct starpu_bitmap* b1, struct starpu_bitmap* b2, int e) {
    return starpu_bitmap_get(b1, e) & starpu_bitmap_get(b2, e);
}
int starpu_bitmap_cardinal(struct starpu_bitmap* b) {
    int n = 0;
    for (std::uint64_t x : b->w) {
        n += __builtin_popcountll(x);
    }
    return n;
}
int starpu_bitmap_next(struct starpu_bitmap* b, int e) {
    for (int i = e < 0 ? 0 : e + 1; i < STARPU_NMAXWORKERS; ++i) {
        const std::uint64_t rest = b->w[i / 64] >> (i % 64);
        if (rest != 0) {
            return i + __builtin_ctzll(rest);
        }
        i |= 63;  // the rest of this word is empty
    }
    return -1;
}
int starpu_bitmap_first(struct starpu_bitmap* b) { return starpu_bitmap_next(b, -1); }
int starpu_bitmap_last(struct starpu_bitmap* b) {
    for (int i = starpu_bitmap::nwords - 1; i >= 0; --i) {
        if (b->w[i] != 0) {
            return i * 64 + 63 - __builtin_clzll(b->w[i]);
        }
    }
    return -1;
}
int starpu_bitmap_has_next(struct starpu_bitmap* b, int e) { return starpu_bitmap_next(b, e) != -1 ? 1 : 0; }

// ---- generic components ------------------------------------------------------------------------

static void nothing(struct starpu_sched_component* /*c*/) {}

void starpu_sched_component_add_child(struct starpu_sched_component* component, struct starpu_sched_component* child) {
    sp::need(component, "starpu_sched_component_add_child");
    sp::need(child, "starpu_sched_component_add_child");
    auto** a = static_cast<starpu_sched_component**>(
        std::realloc(component->children, sizeof(starpu_sched_component*) * (component->nchildren + 1)));
    if (a == nullptr) {
        sp::fatal("starpu_sched_component_add_child", "out of memory");
    }
    component->children = a;
    a[component->nchildren++] = child;
}

static void remove_from(starpu_sched_component*** arr, unsigned* n, starpu_sched_component* x) {
    for (unsigned i = 0; i < *n; ++i) {
        if ((*arr)[i] == x) {
            (*arr)[i] = (*arr)[--*n];
            return;
        }
    }
}

static void remove_child(struct starpu_sched_component* component, struct starpu_sched_component* child) {
    remove_from(&component->children, &component->nchildren, child);
}

static void add_parent(struct starpu_sched_component* component, struct starpu_sched_component* parent) {
    auto** a = static_cast<starpu_sched_component**>(
        std::realloc(component->parents, sizeof(starpu_sched_component*) * (component->nparents + 1)));
    if (a == nullptr) {
        sp::fatal("starpu_sched_component_connect", "out of memory");
    }
    component->parents = a;
    a[component->nparents++] = parent;
}

static void remove_parent(struct starpu_sched_component* component, struct starpu_sched_component* parent) {
    remove_from(&component->parents, &component->nparents, parent);
}

struct starpu_sched_component* starpu_sched_component_create(struct starpu_sched_tree* tree, const char* name) {
    auto* c = static_cast<starpu_sched_component*>(std::calloc(1, sizeof(starpu_sched_component)));
    if (c == nullptr) {
        sp::fatal("starpu_sched_component_create", "out of memory");
    }
    c->tree = tree;
    c->workers = starpu_bitmap_create();
    c->workers_in_ctx = starpu_bitmap_create();
    c->name = strdup(name != nullptr ? name : "(unnamed)");
    c->add_child = &starpu_sched_component_add_child;
    c->remove_child = &remove_child;
    c->add_parent = &add_parent;
    c->remove_parent = &remove_parent;
    c->pull_task = &starpu_sched_component_parents_pull_task;
    c->can_push = &starpu_sched_component_can_push;
    c->can_pull = &starpu_sched_component_can_pull;
    c->estimated_load = &starpu_sched_component_estimated_load;
    c->estimated_end = &starpu_sched_component_estimated_end_min;
    c->deinit_data = &nothing;
    c->notify_change_workers = &nothing;
    return c;
}

void starpu_sched_component_destroy(struct starpu_sched_component* component) {
    if (component == nullptr) {
        return;
    }
    while (component->nchildren != 0) {
        starpu_sched_component* child = component->children[0];
        child->remove_parent(child, component);
        component->remove_child(component, child);
    }
    while (component->nparents != 0) {
        starpu_sched_component* parent = component->parents[0];
        parent->remove_child(parent, component);
        component->remove_parent(component, parent);
    }
    if (component->deinit_data != nullptr) {
        component->deinit_data(component);
    }
    std::free(component->children);
    std::free(component->parents);
    std::free(component->name);
    starpu_bitmap_destroy(component->workers);
    starpu_bitmap_destroy(component->workers_in_ctx);
    std::free(component);
}

void starpu_sched_component_destroy_rec(struct starpu_sched_component* component) {
    if (component == nullptr) {
        return;
    }
    unsigned i = 0;
    while (i < component->nchildren) {
        if (sp::is_worker(component->children[i])) {
            ++i;
        } else {
            starpu_sched_component_destroy_rec(component->children[i]);  // unlinks it from component
        }
    }
    if (!sp::is_worker(component)) {
        starpu_sched_component_destroy(component);
    }
}

void starpu_sched_component_connect(struct starpu_sched_component* parent, struct starpu_sched_component* child) {
    sp::need(parent, "starpu_sched_component_connect");
    sp::need(child, "starpu_sched_component_connect");
    if (parent == child) {
        sp::fatal("starpu_sched_component_connect", "a component cannot be its own child");
    }
    if (sp::is_worker(parent)) {
        sp::fatal("starpu_sched_component_connect", "a worker component cannot have children (it is a leaf)");
    }
    for (unsigned i = 0; i < parent->nchildren; ++i) {
        if (parent->children[i] == child) {
            MPC_LOG(error, tg, "starpu_sched_component_connect: %s is already a child of %s: connected once, the second "
                               "connection is ignored", sp::name_of(child), sp::name_of(parent));
            return;
        }
    }
    parent->add_child(parent, child);
    child->add_parent(child, parent);
}

int starpu_sched_component_can_execute_task(struct starpu_sched_component* component, struct starpu_task* task) {
    sp::need(component, "starpu_sched_component_can_execute_task");
    for (int w = starpu_bitmap_first(component->workers_in_ctx); w != -1;
         w = starpu_bitmap_next(component->workers_in_ctx, w)) {
        if (starpu_worker_can_execute_task(static_cast<unsigned>(w), task, 0)) {
            return 1;
        }
    }
    return 0;
}

int starpu_sched_component_execute_preds(struct starpu_sched_component* component, struct starpu_task* task,
                                         double* length) {
    sp::need(component, "starpu_sched_component_execute_preds");
    // Every worker is a CPU with one implementation: the first able worker answers for all.
    for (int w = starpu_bitmap_first(component->workers_in_ctx); w != -1;
         w = starpu_bitmap_next(component->workers_in_ctx, w)) {
        if (starpu_worker_can_execute_task(static_cast<unsigned>(w), task, 0)) {
            if (length != nullptr) {
                *length = starpu_task_expected_length(task, starpu_worker_get_perf_archtype(w, 0), 0);
            }
            return 1;
        }
    }
    return 0;
}

double starpu_sched_component_transfer_length(struct starpu_sched_component* /*component*/, struct starpu_task* /*task*/) {
    return 0.0;  // all data in main memory
}

void starpu_sched_component_prefetch_on_node(struct starpu_sched_component* /*component*/, struct starpu_task* task) {
    task->prefetched = 1;
}

// ---- default methods ---------------------------------------------------------------------------

struct starpu_task* starpu_sched_component_pull_task(struct starpu_sched_component* from,
                                                     struct starpu_sched_component* to) {
    sp::need(from, "starpu_sched_component_pull_task");
    return from->pull_task(from, to);
}

int starpu_sched_component_push_task(struct starpu_sched_component* /*from*/, struct starpu_sched_component* to,
                                     struct starpu_task* task) {
    sp::need(to, "starpu_sched_component_push_task");
    if (to->push_task == nullptr) {
        MPC_LOG(error, tg, "starpu_sched_component_push_task: component %s has no push_task", sp::name_of(to));
        return 1;
    }
    return to->push_task(to, task);
}

struct starpu_task* starpu_sched_component_parents_pull_task(struct starpu_sched_component* component,
                                                             struct starpu_sched_component* /*to*/) {
    for (unsigned i = 0; i < component->nparents; ++i) {
        if (component->parents[i] != nullptr) {
            if (starpu_task* t = starpu_sched_component_pull_task(component->parents[i], component); t != nullptr) {
                return t;
            }
        }
    }
    return nullptr;
}

int starpu_sched_component_can_push(struct starpu_sched_component* component, struct starpu_sched_component* /*to*/) {
    for (unsigned i = 0; i < component->nparents; ++i) {
        starpu_sched_component* p = component->parents[i];
        if (p != nullptr && p->can_push(p, component) != 0) {
            return 1;
        }
    }
    return 0;
}

int starpu_sched_component_can_pull(struct starpu_sched_component* component) {
    for (unsigned i = 0; i < component->nchildren; ++i) {
        starpu_sched_component* c = component->children[i];
        if (c->can_pull(c) != 0) {
            return 1;
        }
    }
    return 0;
}

int starpu_sched_component_can_pull_all(struct starpu_sched_component* component) {
    for (unsigned i = 0; i < component->nchildren; ++i) {
        starpu_sched_component* c = component->children[i];
        c->can_pull(c);
    }
    return 0;
}

int starpu_sched_component_send_can_push_to_parents(struct starpu_sched_component* component) {
    sp::need(component, "starpu_sched_component_send_can_push_to_parents");
    return starpu_sched_component_can_push(component, nullptr);
}

struct starpu_task* starpu_sched_component_pump_to(struct starpu_sched_component* component,
                                                   struct starpu_sched_component* to, int* success) {
    sp::need(component, "starpu_sched_component_pump_to");
    sp::need(to, "starpu_sched_component_pump_to");
    for (;;) {
        starpu_task* t = component->pull_task(component, to);
        if (t == nullptr) {
            return nullptr;
        }
        if (starpu_sched_component_push_task(component, to, t) != 0) {
            return t;  // refused: the caller keeps it
        }
        if (success != nullptr) {
            *success = 1;
        }
    }
}

struct starpu_task* starpu_sched_component_pump_downstream(struct starpu_sched_component* component, int* success) {
    sp::need(component, "starpu_sched_component_pump_downstream");
    if (component->nchildren != 1) {
        MPC_LOG(error, tg, "starpu_sched_component_pump_downstream: component %s has %u children (one expected)",
                sp::name_of(component), component->nchildren);
        return nullptr;
    }
    return starpu_sched_component_pump_to(component, component->children[0], success);
}

double starpu_sched_component_estimated_load(struct starpu_sched_component* component) {
    double sum = 0;
    for (unsigned i = 0; i < component->nchildren; ++i) {
        starpu_sched_component* c = component->children[i];
        sum += c->estimated_load(c);
    }
    return sum;
}

double starpu_sched_component_estimated_end_min_add(struct starpu_sched_component* component, double exp_len) {
    double min = std::numeric_limits<double>::max();
    std::vector<double> ends(component->nchildren);
    for (unsigned i = 0; i < component->nchildren; ++i) {
        starpu_sched_component* c = component->children[i];
        ends[i] = c->estimated_end(c);
        min = std::min(min, ends[i]);
    }
    if (component->nchildren == 0) {
        min = starpu_timing_now();
    }
    if (exp_len > 0) {
        // Spread over the workers below, filling the children's imbalance first.
        const int card = std::max(1, starpu_bitmap_cardinal(component->workers_in_ctx));
        for (double e : ends) {
            exp_len += e - min;
        }
        min += exp_len / card;
    }
    return min;
}

double starpu_sched_component_estimated_end_min(struct starpu_sched_component* component) {
    return starpu_sched_component_estimated_end_min_add(component, 0.0);
}

double starpu_sched_component_estimated_end_average(struct starpu_sched_component* component) {
    if (component->nchildren == 0) {
        return starpu_timing_now();
    }
    double sum = 0;
    for (unsigned i = 0; i < component->nchildren; ++i) {
        starpu_sched_component* c = component->children[i];
        sum += c->estimated_end(c);
    }
    return sum / component->nchildren;
}

// ---- predefined components ---------------------------------------------------------------------

struct starpu_sched_component* starpu_sched_component_fifo_create(struct starpu_sched_tree* tree,
                                                                  struct starpu_sched_component_fifo_data* d) {
    return sp::make_queue(tree, "fifo", &sp::fifo_push, d != nullptr ? d->ntasks_threshold : 0,
                          d != nullptr ? d->exp_len_threshold : 0.0);
}
int starpu_sched_component_is_fifo(struct starpu_sched_component* c) { return c->push_task == &sp::fifo_push; }

struct starpu_sched_component* starpu_sched_component_prio_create(struct starpu_sched_tree* tree,
                                                                  struct starpu_sched_component_prio_data* d) {
    return sp::make_queue(tree, "prio", &sp::prio_push, d != nullptr ? d->ntasks_threshold : 0,
                          d != nullptr ? d->exp_len_threshold : 0.0);
}
int starpu_sched_component_is_prio(struct starpu_sched_component* c) { return c->push_task == &sp::prio_push; }

struct starpu_sched_component* starpu_sched_component_eager_prio_create(struct starpu_sched_tree* tree, void* /*arg*/) {
    starpu_sched_component* c = sp::make_queue(tree, "eager_prio", &sp::eager_prio_push, 0, 0.0);
    c->pull_task = &sp::eager_prio_pull;
    return c;
}
int starpu_sched_component_is_eager_prio(struct starpu_sched_component* c) {
    return c->push_task == &sp::eager_prio_push;
}

struct starpu_sched_component* starpu_sched_component_eager_create(struct starpu_sched_tree* tree, void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "eager");
    c->data = new sp::eager_data;
    c->push_task = &sp::eager_push;
    c->can_push = &sp::eager_can_push;
    c->deinit_data = &sp::eager_deinit;
    return c;
}
int starpu_sched_component_is_eager(struct starpu_sched_component* c) { return c->push_task == &sp::eager_push; }

struct starpu_sched_component* starpu_sched_component_random_create(struct starpu_sched_tree* tree, void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "random");
    c->push_task = &sp::random_push;
    return c;
}
int starpu_sched_component_is_random(struct starpu_sched_component* c) { return c->push_task == &sp::random_push; }

struct starpu_sched_component* starpu_sched_component_mct_create(struct starpu_sched_tree* tree,
                                                                 struct starpu_sched_component_mct_data* d) {
    return sp::make_mct(tree, "mct", d, &sp::mct_push);
}
int starpu_sched_component_is_mct(struct starpu_sched_component* c) { return c->push_task == &sp::mct_push; }

struct starpu_sched_component* starpu_sched_component_heft_create(struct starpu_sched_tree* tree,
                                                                  struct starpu_sched_component_mct_data* d) {
    starpu_sched_component* c = sp::make_mct(tree, "heft", d, &sp::heft_push);
    c->can_push = &sp::heft_can_push;
    return c;
}
int starpu_sched_component_is_heft(struct starpu_sched_component* c) { return c->push_task == &sp::heft_push; }

struct starpu_sched_component* starpu_sched_component_work_stealing_create(struct starpu_sched_tree* tree,
                                                                           void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "work_stealing");
    c->data = new sp::ws_data;
    c->add_child = &sp::ws_add_child;
    c->remove_child = &sp::ws_remove_child;
    c->push_task = &sp::ws_push;
    c->pull_task = &sp::ws_pull;
    c->estimated_load = &sp::ws_estimated_load;
    c->estimated_end = &sp::ws_estimated_end;
    c->deinit_data = &sp::ws_deinit;
    return c;
}
int starpu_sched_component_is_work_stealing(struct starpu_sched_component* c) { return c->push_task == &sp::ws_push; }

struct starpu_sched_component* starpu_sched_component_best_implementation_create(struct starpu_sched_tree* tree,
                                                                                 void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "best_impl");
    c->push_task = &sp::best_impl_push;
    c->pull_task = &sp::best_impl_pull;
    return c;
}

struct starpu_sched_component* starpu_sched_component_perfmodel_select_create(
    struct starpu_sched_tree* tree, struct starpu_sched_component_perfmodel_select_data* d) {
    sp::need(d, "starpu_sched_component_perfmodel_select_create");
    starpu_sched_component* c = starpu_sched_component_create(tree, "perfmodel_selector");
    c->data = new starpu_sched_component_perfmodel_select_data(*d);
    c->push_task = &sp::perfmodel_select_push;
    c->deinit_data = &sp::perfmodel_select_deinit;
    return c;
}
int starpu_sched_component_is_perfmodel_select(struct starpu_sched_component* c) {
    return c->push_task == &sp::perfmodel_select_push;
}

struct starpu_sched_component* starpu_sched_component_eager_calibration_create(struct starpu_sched_tree* tree,
                                                                               void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "eager_calibration");
    c->push_task = &sp::eager_calibration_push;
    return c;
}
int starpu_sched_component_is_eager_calibration(struct starpu_sched_component* c) {
    return c->push_task == &sp::eager_calibration_push;
}

// ---- worker components -------------------------------------------------------------------------

struct starpu_sched_component* starpu_sched_component_worker_new(unsigned sched_ctx, int workerid) {
    if (sp::bad_ctx(sched_ctx, "starpu_sched_component_worker_new")) {
        return nullptr;
    }
    if (workerid < 0 || workerid >= static_cast<int>(starpu_worker_get_count())) {
        MPC_LOG(error, tg, "starpu_sched_component_worker_new: no worker %d (%u workers)", workerid,
                starpu_worker_get_count());
        return nullptr;
    }
    if (starpu_sched_component* c = sp::g_workers[workerid].load(std::memory_order_acquire); c != nullptr) {
        return c;  // one per worker, shared as in StarPU
    }
    char name[32];
    std::snprintf(name, sizeof name, "worker %d", workerid);
    starpu_sched_component* c = starpu_sched_component_create(starpu_sched_tree_get(sched_ctx), name);
    auto* d = new sp::worker_data;
    d->id = workerid;
    d->exp_start = starpu_timing_now();
    c->data = d;
    starpu_bitmap_set(c->workers, workerid);
    starpu_bitmap_set(c->workers_in_ctx, workerid);
    c->properties = STARPU_SCHED_COMPONENT_HOMOGENEOUS | STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE;
    c->add_child = &sp::worker_refuse_child;
    c->push_task = &sp::worker_push;
    c->pull_task = &sp::worker_pull;
    c->can_pull = &sp::worker_can_pull;
    c->estimated_end = &sp::worker_estimated_end;
    c->estimated_load = &sp::worker_estimated_load;
    c->deinit_data = &sp::worker_deinit;
    sp::g_workers[workerid].store(c, std::memory_order_release);
    return c;
}

struct starpu_sched_component* starpu_sched_component_worker_get(unsigned sched_ctx, int workerid) {
    return starpu_sched_component_worker_new(sched_ctx, workerid);
}

int starpu_sched_component_is_worker(struct starpu_sched_component* c) {
    return c != nullptr && c->push_task == &sp::worker_push ? 1 : 0;
}
int starpu_sched_component_is_simple_worker(struct starpu_sched_component* c) {
    return starpu_sched_component_is_worker(c);
}
int starpu_sched_component_is_combined_worker(struct starpu_sched_component* /*c*/) { return 0; }

int starpu_sched_component_worker_get_workerid(struct starpu_sched_component* worker_component) {
    if (!starpu_sched_component_is_worker(worker_component)) {
        MPC_LOG(error, tg, "starpu_sched_component_worker_get_workerid: %s is not a worker component",
                worker_component != nullptr ? sp::name_of(worker_component) : "NULL");
        return -1;
    }
    return sp::wdata(worker_component)->id;
}

void starpu_sched_component_worker_pre_exec_hook(struct starpu_task* task, unsigned /*sched_ctx_id*/) {
    starpu_sched_component* c = sp::worker_component_of_caller("starpu_sched_component_worker_pre_exec_hook");
    if (c == nullptr || sp::core_of(task) == nullptr || sp::core_of(task)->sched_worker != sp::wdata(c)->id) {
        return;  // not given through the tree (a pinned task, a task of the runtime's)
    }
    sp::worker_data* d = sp::wdata(c);
    const double len = sp::predicted_of(task);
    const double now = starpu_timing_now();
    mpc::spin_guard g(d->lock);
    d->exp_len = std::max(0.0, d->exp_len - len);
    d->pipeline_len += len;
    d->exp_start = now + d->pipeline_len;
    --d->ntasks;
}

void starpu_sched_component_worker_post_exec_hook(struct starpu_task* task, unsigned /*sched_ctx_id*/) {
    starpu_sched_component* c = sp::worker_component_of_caller("starpu_sched_component_worker_post_exec_hook");
    if (c == nullptr || sp::core_of(task) == nullptr || sp::core_of(task)->sched_worker != sp::wdata(c)->id) {
        return;
    }
    sp::core_of(task)->sched_worker = -1;
    sp::worker_data* d = sp::wdata(c);
    const double now = starpu_timing_now();
    mpc::spin_guard g(d->lock);
    d->pipeline_len = std::max(0.0, d->pipeline_len - sp::predicted_of(task));
    d->exp_start = std::max(now + d->pipeline_len, d->exp_start);
}

// ---- trees ---------------------------------------------------------------------------------------

struct starpu_sched_tree* starpu_sched_tree_create(unsigned sched_ctx_id) {
    if (sp::bad_ctx(sched_ctx_id, "starpu_sched_tree_create")) {
        return nullptr;
    }
    auto* t = static_cast<starpu_sched_tree*>(std::calloc(1, sizeof(starpu_sched_tree)));
    if (t == nullptr) {
        sp::fatal("starpu_sched_tree_create", "out of memory");
    }
    starpu_sched_tree* expected = nullptr;
    if (!sp::g_trees[sched_ctx_id].compare_exchange_strong(expected, t)) {
        MPC_LOG(error, tg, "starpu_sched_tree_create: context %u already has a tree (destroy it first)", sched_ctx_id);
        std::free(t);
        return nullptr;
    }
    t->sched_ctx_id = sched_ctx_id;
    t->workers = starpu_bitmap_create();
    sp::g_refusal_said.store(false, std::memory_order_relaxed);  // said once per tree
    STARPU_PTHREAD_MUTEX_INIT(&t->lock, nullptr);
    return t;
}

void starpu_sched_tree_destroy(struct starpu_sched_tree* tree) {
    if (tree == nullptr) {
        return;
    }
    starpu_sched_tree* expected = tree;
    if (tree->sched_ctx_id < STARPU_NMAX_SCHED_CTXS) {
        sp::g_trees[tree->sched_ctx_id].compare_exchange_strong(expected, nullptr);
    }
    starpu_sched_component_destroy_rec(tree->root);
    tree->root = nullptr;
    for (auto& w : sp::g_workers) {  // the context's worker components go with its tree
        if (starpu_sched_component* c = w.load(std::memory_order_acquire); c != nullptr) {
            starpu_sched_component_destroy(c);
        }
    }
    starpu_bitmap_destroy(tree->workers);
    STARPU_PTHREAD_MUTEX_DESTROY(&tree->lock);
    std::free(tree);
}

void starpu_sched_tree_deinitialize(unsigned sched_ctx_id) {
    if (!sp::bad_ctx(sched_ctx_id, "starpu_sched_tree_deinitialize")) {
        starpu_sched_tree_destroy(static_cast<starpu_sched_tree*>(starpu_sched_ctx_get_policy_data(sched_ctx_id)));
    }
}

struct starpu_sched_tree* starpu_sched_tree_get(unsigned sched_ctx_id) {
    return sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? sp::g_trees[sched_ctx_id].load(std::memory_order_acquire) : nullptr;
}

void starpu_sched_tree_update_workers(struct starpu_sched_tree* t) {
    sp::need(t, "starpu_sched_tree_update_workers");
    if (t->root != nullptr) {
        sp::update_workers_rec(t->root);
    }
}

void starpu_sched_tree_update_workers_in_ctx(struct starpu_sched_tree* t) {
    sp::need(t, "starpu_sched_tree_update_workers_in_ctx");
    if (t->root != nullptr) {
        sp::update_in_ctx_rec(t->root, t->workers);
    }
}

static starpu_sched_tree* tree_of_ctx(unsigned ctx, const char* call) {
    if (sp::bad_ctx(ctx, call)) {
        return nullptr;
    }
    auto* t = static_cast<starpu_sched_tree*>(starpu_sched_ctx_get_policy_data(ctx));
    if (t == nullptr) {
        MPC_LOG(error, tg, "%s: the context has no tree (init_sched must make one and set it with "
                           "starpu_sched_ctx_set_policy_data)", call);
    }
    return t;
}

static void change_workers(unsigned ctx, const int* ids, unsigned n, bool add, const char* call) {
    starpu_sched_tree* t = tree_of_ctx(ctx, call);
    if (t == nullptr || (ids == nullptr && n != 0)) {
        return;
    }
    STARPU_PTHREAD_MUTEX_LOCK(&t->lock);
    for (unsigned i = 0; i < n; ++i) {
        if (add) {
            starpu_bitmap_set(t->workers, ids[i]);
        } else {
            starpu_bitmap_unset(t->workers, ids[i]);
        }
    }
    starpu_sched_tree_update_workers_in_ctx(t);
    STARPU_PTHREAD_MUTEX_UNLOCK(&t->lock);
    if (add) {
        sp::check_reach(t, ids, n);
    }
}

void starpu_sched_tree_add_workers(unsigned sched_ctx_id, int* workerids, unsigned nworkers) {
    change_workers(sched_ctx_id, workerids, nworkers, true, "starpu_sched_tree_add_workers");
}

void starpu_sched_tree_remove_workers(unsigned sched_ctx_id, int* workerids, unsigned nworkers) {
    change_workers(sched_ctx_id, workerids, nworkers, false, "starpu_sched_tree_remove_workers");
}

int starpu_sched_tree_push_task(struct starpu_task* task) {
    if (task == nullptr) {
        sp::fatal("starpu_sched_tree_push_task", "NULL task");
    }
    starpu_sched_tree* t = tree_of_ctx(task->sched_ctx, "starpu_sched_tree_push_task");
    if (t == nullptr) {
        return -EINVAL;
    }
    if (t->root == nullptr || starpu_bitmap_cardinal(t->root->workers_in_ctx) == 0) {
        if (!sp::g_refusal_said.exchange(true)) {
            MPC_LOG(error, tg, "starpu_sched_tree_push_task: the tree %s (no worker component below its root, or "
                               "starpu_sched_tree_update_workers not called)",
                    t->root == nullptr ? "has no root" : "reaches no worker");
        }
        return -ENODEV;
    }
    int r = starpu_sched_component_push_task(nullptr, t->root, task);
    if (r != 0 && !sp::g_refusal_said.exchange(true)) {
        MPC_LOG(error, tg, "starpu_sched_tree_push_task: the root component %s refused task %s (StarPU asserts here: "
                           "a decision component that cannot hold tasks needs a queue above it, e.g. "
                           "STARPU_SCHED_SIMPLE_FIFO_ABOVE)", sp::name_of(t->root),
                task->name != nullptr ? task->name : "(unnamed)");
    }
    return r;
}

struct starpu_task* starpu_sched_tree_pop_task(unsigned sched_ctx) {
    if (sp::bad_ctx(sched_ctx, "starpu_sched_tree_pop_task")) {
        return nullptr;
    }
    starpu_sched_component* c = sp::worker_component_of_caller("starpu_sched_tree_pop_task");
    return c != nullptr ? c->pull_task(c, nullptr) : nullptr;
}

int starpu_sched_tree_work_stealing_push_task(struct starpu_task* task) {
    // As StarPU's: a task pushed by a worker goes into that worker's deque of the nearest
    // work_stealing component above its worker component (the others steal it); anything else
    // (not a worker, no such component, a worker that cannot run it) through the tree's root.
    const int w = starpu_worker_get_id();
    unsigned impl = 0;
    if (w < 0 || starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(w), task, &impl) == 0) {
        return starpu_sched_tree_push_task(task);
    }
    starpu_sched_component* leaf = sp::worker_component_of_caller("starpu_sched_tree_work_stealing_push_task");
    starpu_sched_component* ws = leaf != nullptr ? sp::ws_above(leaf) : nullptr;
    if (ws == nullptr || starpu_sched_component_can_execute_task(ws, task) == 0) {
        return starpu_sched_tree_push_task(task);
    }
    return sp::ws_push_own(ws, task, w) == 0 ? 0 : starpu_sched_tree_push_task(task);
}

}  // extern "C"
