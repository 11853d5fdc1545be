/// \file
/// The end of a redux phase (modes.cpp): the tasks that fold the workers' private copies into
/// the data with the handle's reduction function, the data's own value always the first
/// operand (StarPU's semantics; the function must be associative and commutative).
///
/// Few copies (fewer than MPC_TG_REDUX_TREE, default 3) or small data (under
/// MPC_TG_REDUX_TREE_BYTES, default 16 KiB: a fold costs less than a task): one task folds them
/// in turn. Else a binary tree over positions 0..n, position 0 the data, position p >= 1 the p-th copy
/// made in the phase (d->copy_order). Step s combines position i + s into position i for every
/// i multiple of 2s, s = 1, 2, 4...: n tasks, depth ceil(log2(n + 1)), the tasks of one level
/// independent, so they run on different workers at once (as StarPU's reduction tree). Each
/// frees the copy it folded (into its worker's cache) and gives back its share of the phase's
/// reservation at its end. The last step, into position 0, is the reduction task proper: it
/// accesses the handle RW and becomes its last writer. The others wait for every task of the
/// phase through one empty join task (a phase may have thousands of tasks), and for the steps
/// that wrote their two positions before.
///
/// Which copies exist is known once the phase's tasks have run (a worker makes its copy the
/// first time it runs one of them): a step whose source position is beyond the copies made
/// does nothing. The reservation counted n = min(tasks, workers) copies, an upper bound.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace detail {
namespace {

std::atomic<int> g_tree_min{3};
std::atomic<std::size_t> g_tree_bytes{16384};

struct plan;
struct step {
    plan* p;
    task* self;  ///< lowers its mem_reserved when the freed copy stays in a cache
    int dst;
    int src;     ///< 0: fold every copy into the data (the one-task reduction)
};
/// Shared by the steps of one phase's reduction; freed by the last step, which runs after all
/// the others. Whether the data starts from init travels with it: a later phase may close, on
/// the submitting thread, while this reduction runs.
struct plan {
    data* d;
    bool init_main;  ///< no value before the phase: the data starts from init
    int n;           ///< copies reserved: positions 1..n
    int nsteps;
    step* steps;     ///< nsteps of them, right after the plan (one allocation)
};

/// The interface at tree position pos (0: the data), or nullptr when no such copy was made.
void* position(data* d, int pos, int made) noexcept {
    if (pos == 0) {
        return d->ifp;
    }
    return pos <= made ? d->copies[d->copy_order[pos - 1]] : nullptr;
}

/// Folds the copy at position src into position dst and frees it.
void fold(data* d, task* self, int dst, int src, int made) noexcept {
    void* b = position(d, src, made);
    if (b == nullptr) {
        return;
    }
    void* x[2] = {position(d, dst, made), b};
    d->redux_fn(x, d->redux_arg);
    d->copies[d->copy_order[src - 1]] = nullptr;
    const std::size_t kept = free_copy(d, b, current_worker());
    self->mem_reserved -= std::min(kept, self->mem_reserved);
}

void reduce_step(void** /*buffers*/, void* arg) {
    auto* s = static_cast<step*>(arg);
    plan* p = s->p;
    data* d = p->d;
    const int made = d->copies_made.load(std::memory_order_acquire);
    if (s->dst == 0 && s->src <= 1 && (p->init_main || d->content.load(std::memory_order_acquire) != 0)) {
        void* b[1] = {d->ifp};  // no value before the phase: start from the neutral one
        d->init_fn(b, d->init_arg);
    }
    if (s->dst == 0) {
        d->content.store(0, std::memory_order_release);  // the reduction gives the data its value
    }
    if (s->src != 0) {
        fold(d, s->self, s->dst, s->src, made);
    }
    if (s != &p->steps[p->nsteps - 1]) {
        return;
    }
    // The last step: every copy not folded yet (all of them for the one-task reduction; none
    // for a tree, unless more copies were made than reserved, which cannot happen).
    for (int pos = s->src != 0 ? p->n + 1 : 1; pos <= made; ++pos) {
        fold(d, s->self, 0, pos, made);
    }
    d->copies_made.store(0, std::memory_order_relaxed);  // the next phase starts after this task
    std::free(p);
}

/// The tree's steps, chained through `next` behind `join` (the last step last); returns the
/// last step, the one into position 0.
task* build_tree(data* d, task* join, plan* p) noexcept {
    const int n = p->n;
    const std::size_t each = d->ops->size(d->ifp, d->ops->ctx, d);
    std::size_t left = d->redux_reserved;
    task* last_at[max_workers + 1] = {};  // the step that wrote each position last
    task* tail = join;
    int k = 0;
    for (int s = 1; s <= n; s *= 2) {
        for (int i = 0; i + s <= n; i += 2 * s) {
            task* t = make_internal("reduction");
            p->steps[k] = {p, t, i, i + s};
            t->fn = &reduce_step;
            t->cl_arg = &p->steps[k];
            ++k;
            task* a = last_at[i] != nullptr ? last_at[i] : join;
            task* b = last_at[i + s] != nullptr ? last_at[i + s] : join;
            add_dependency(a, t);
            if (b != a) {
                add_dependency(b, t);
            }
            last_at[i] = t;
            t->mem_reserved = k < n ? std::min(each, left) : left;  // the last step: the rest
            left -= t->mem_reserved;
            tail->next = t;
            tail = t;
        }
    }
    return last_at[0];
}

}  // namespace

void* new_copy(data* d, int worker) noexcept {
    if (void* c = cache_take(d, worker); c != nullptr) {
        return c;
    }
    const std::size_t n = d->ops->interface_size;
    void* c = std::malloc(n);
    if (c != nullptr) {
        std::memcpy(c, d->ifp, n);
        if (d->ops->allocate(c, d->ops->ctx) >= 0) {
            return c;
        }
        std::free(c);
    }
    // The memory was reserved at submission: only the system allocator can fail here.
    MPC_LOG(fatal, tg, "no memory for a scratch buffer or redux copy (%zu bytes of data)",
            d->ops->size(d->ifp, d->ops->ctx, d));
    std::abort();
}

std::size_t free_copy(data* d, void* c, int worker) noexcept {
    if (std::size_t kept = cache_put(d, c, worker); kept != 0) {
        return kept;
    }
    d->ops->release(c, d->ops->ctx);
    std::free(c);
    return 0;
}

task* make_reduction(data* d) noexcept {
    const int n = d->redux_copies;
    const int tree_min = g_tree_min.load(std::memory_order_relaxed);
    const bool tree = tree_min > 0 && n >= tree_min &&
                      d->ops->size(d->ifp, d->ops->ctx, d) >= g_tree_bytes.load(std::memory_order_relaxed);
    const int nsteps = tree ? n : 1;
    static_assert(sizeof(plan) % alignof(step) == 0);
    void* mem = std::malloc(sizeof(plan) + static_cast<std::size_t>(nsteps) * sizeof(step));
    if (mem == nullptr) {
        MPC_LOG(fatal, tg, "no memory for the reduction of a redux phase");
        std::abort();
    }
    auto* p = new (mem) plan{d, d->fresh, n, nsteps, nullptr};
    p->steps = reinterpret_cast<step*>(p + 1);
    for (int i = 0; i < nsteps; ++i) {
        new (&p->steps[i]) step{};
    }
    // The tree's steps wait for the phase through one join; the one-task reduction directly.
    task* head = tree ? make_internal("reduction join") : make_internal("reduction");
    after_all(d->redux_tasks, head);
    task* r = head;
    if (tree) {
        r = build_tree(d, head, p);
    } else {
        p->steps[0] = {p, r, 0, 0};
        r->fn = &reduce_step;
        r->cl_arg = &p->steps[0];
        r->mem_reserved = d->redux_reserved;  // given back once the copies are freed
    }
    r->bufs[0] = {d, access_rw};
    r->nbuffers = 1;
    ++d->users;
    d->redux_reserved = 0;
    d->redux_copies = 0;
    d->fresh = false;
    infer_write(d, r, true);
    return head;  // launching it launches the chain (build_tree)
}

}  // namespace detail

void set_redux_tree(int copies, std::size_t bytes) noexcept {
    detail::g_tree_min.store(copies < 0 ? 0 : copies, std::memory_order_relaxed);
    detail::g_tree_bytes.store(bytes, std::memory_order_relaxed);
}

}  // namespace mpc::tg
