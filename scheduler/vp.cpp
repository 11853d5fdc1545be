/// \file
/// The per-VP scheduler: the switch protocol (see detail.hpp), picking the next ULT, the
/// scheduler loop with its idle policy (progress functions, stealing, spinning, then sleeping
/// on a futex), timers and polling waits.

#include <cerrno>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "lib/log.hpp"
#include "allocator/malloc.hpp"
#include "scheduler/detail.hpp"

namespace mpc::sched::detail {

namespace {

[[gnu::tls_model("initial-exec")]] thread_local vp* tls_vp = nullptr;

constexpr unsigned poll_every = 16;  // picks between visits to the scheduler loop when polling
constexpr std::uint64_t poll_backoff_max_ns = 1'000'000;

void futex_wait(std::atomic<std::uint32_t>* w, std::uint32_t val, std::uint64_t timeout_ns) noexcept {
    struct timespec ts;
    struct timespec* tsp = nullptr;
    if (timeout_ns != UINT64_MAX) {
        ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000ULL);
        ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000ULL);
        tsp = &ts;
    }
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), FUTEX_WAIT_PRIVATE, val, tsp, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* w) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void run_post(vp* v) noexcept;

/// First thing a context does when it (re)starts running; returns the VP it runs on.
inline vp* after_jump(boost::context::detail::transfer_t t) noexcept {
    static_cast<exec_ctx*>(t.data)->fctx = t.fctx;
    vp* v = this_vp();
    annotate_arrive(v->running);
    if (v->post.op != post_op::none) {
        run_post(v);
    }
    return v;
}

/// Leaves the running context `from` for `to`; returns when something jumps back to `from`.
inline void jump(vp* v, exec_ctx* from, exec_ctx* to, bool exiting) noexcept {
    v->running = to;
    // The allocator serves the task that is about to run (the scheduler context: nobody's).
    alloc::set_task_heap(v->current != nullptr ? v->current->heap : nullptr);
    annotate_leave(from, to, exiting);
    // errno belongs to the ULT, not to the kernel thread: a rank that blocks in MPI finds its
    // own again, whatever the others set meanwhile, on whichever VP it resumes.
    const int saved_errno = *v->errno_loc;
    vp* now = after_jump(boost::context::detail::jump_fcontext(to->fctx, from));
    *now->errno_loc = saved_errno;
}

/// A stealable ULT was queued on `home`, which now holds `queued` of them: when that is more
/// than its owner can take at once, or the ULT is offered (attr::offer: its owner is busy
/// computing), wake a sleeping VP so that it comes to steal.
void offer_to_thieves(vp* home, std::size_t queued, bool offered) noexcept {
    runtime& r = rt();
    if (!r.steal || (queued < 2 && !offered)) {
        return;
    }
    for (int k = 1; k < r.nr_vps; ++k) {
        vp* c = &r.vps[(home->index + k) % r.nr_vps];
        if (c->sleep_word.load(std::memory_order_seq_cst) == vp_sleeping) {
            wake_vp(c);
            return;
        }
    }
}

[[gnu::always_inline]] inline void push_runnable(vp* v, ult* u) noexcept {
    if (u->stealable) {
        const bool offered = u->offered;  // read before the push: a thief may run u at once
        offer_to_thieves(v, v->shared.push_back(u), offered);
    } else {
        v->ready.push_back(u);
    }
}

/// Hands u to the least loaded VP (rebalance); false if no VP is less loaded.
bool shed_one(vp* v, ult* u) noexcept {
    runtime& r = rt();
    vp* best = v;
    for (int i = 0; i < r.nr_vps; ++i) {
        vp* c = &r.vps[i];
        if (c->homed.load(std::memory_order_relaxed) < best->homed.load(std::memory_order_relaxed)) {
            best = c;
        }
    }
    v->shed.fetch_sub(1, std::memory_order_relaxed);
    if (best == v || best->homed.load(std::memory_order_relaxed) + 1 >= v->homed.load(std::memory_order_relaxed)) {
        return false;
    }
    v->homed.fetch_sub(1, std::memory_order_relaxed);
    best->homed.fetch_add(1, std::memory_order_relaxed);
    u->home.store(best, std::memory_order_relaxed);
    if (best->inbox.push(u)) {
        wake_vp(best);
    }
    return true;
}

/// The next ULT to run on v, or nullptr. Drains the inbox first. `running`: the ULT that is
/// switching out (nullptr from the scheduler loop); it may come back from the queues (woken
/// already, see park_publish_current) and is never shed to another VP, whose thread would
/// resume it before its context is saved.
ult* pick(vp* v, const ult* running) noexcept {
    if (v->inbox.maybe_nonempty()) {
        bump(v->n_remote, v->inbox.drain_to(v->ready));
    }
    for (;;) {
        ult* u = nullptr;
        if (v->shared.size_hint() != 0 && (v->ready.empty() || (++v->turn & 1U) != 0)) {
            u = v->shared.pop_front();
        }
        if (u == nullptr) {
            u = v->ready.pop_front();
        }
        if (u == nullptr) {
            return nullptr;
        }
        if (v->shed.load(std::memory_order_relaxed) > 0 && !u->pinned && !u->primary && u != running &&
            shed_one(v, u)) {
            continue;
        }
        return u;
    }
}

}  // namespace

/// Leaves the running ULT `cur` (post action already set) for the next ULT, or for the
/// scheduler loop when none is ready or when timers and pollers are due a visit.
void switch_out(vp* v, ult* cur, bool exiting) noexcept {
    if (cur->stack.canary != nullptr && *cur->stack.canary != stack_canary_value) {
        fatal_stack_overflow(cur);
    }
    ult* next = nullptr;
    const bool due = !v->pollers.empty() || !v->timers.empty() || rt().n_progress.load(std::memory_order_relaxed) > 0;
    bool visit_loop = due && (++v->pick_count % poll_every) == 0;
    if (!visit_loop) {
        next = pick(v, cur);
    }
    if (next == cur) {  // woken before it could leave (park_publish_current): carry on
        cur->state.store(ult_state::running, std::memory_order_relaxed);
        return;
    }
    if (next != nullptr) {
        v->current = next;
        next->state.store(ult_state::running, std::memory_order_relaxed);
        bump(v->n_switches, 1);
        jump(v, &cur->ctx, &next->ctx, exiting);
    } else {
        v->current = nullptr;
        jump(v, &cur->ctx, &v->sched_ctx, exiting);
    }
}

namespace {

void finish_exit(ult* u) noexcept {
    registry_remove(u);
    u->home.load(std::memory_order_relaxed)->homed.fetch_sub(1, std::memory_order_relaxed);
    u->join_lock.lock();
    u->state.store(ult_state::done, std::memory_order_relaxed);
    u->done = true;
    ult* joiner = u->joiner;
    bool detached = u->detached;
    u->join_lock.unlock();
    if (joiner != nullptr) {
        make_ready(joiner);
    }
    if (detached) {
        free_ult(u);
    }
    on_ult_gone();
}

void run_post(vp* v) noexcept {
    post_action p = v->post;
    v->post.op = post_op::none;
    switch (p.op) {
        case post_op::none: break;
        case post_op::requeue:
            p.u->state.store(ult_state::ready, std::memory_order_relaxed);
            push_runnable(v, p.u);
            break;
        case post_op::unlock: p.lock()->unlock(); break;
        case post_op::exit: finish_exit(p.u); break;
        case post_op::move:
            p.u->state.store(ult_state::ready, std::memory_order_relaxed);
            if (p.target()->inbox.push(p.u)) {
                wake_vp(p.target());
            }
            break;
        case post_op::publish:
            // From here on a waker may find u and call make_ready(u): u's context is saved.
            if (!p.publish(p.obj, p.u)) {
                p.u->state.store(ult_state::ready, std::memory_order_relaxed);
                push_runnable(v, p.u);
            }
            break;
    }
}

void expire_timers(vp* v) noexcept {
    if (v->timers.empty()) {
        return;
    }
    std::uint64_t now = now_ns();
    auto later = [](const timer& a, const timer& b) { return a.deadline_ns > b.deadline_ns; };
    while (!v->timers.empty() && v->timers.front().deadline_ns <= now) {
        std::pop_heap(v->timers.begin(), v->timers.end(), later);
        ult* u = v->timers.back().u;
        v->timers.pop_back();
        u->state.store(ult_state::ready, std::memory_order_relaxed);
        push_runnable(v, u);
    }
}

/// Checks the wait_until() conditions; returns how many ULTs became ready.
int poll_waiters(vp* v) noexcept {
    int woke = 0;
    std::size_t n = v->pollers.size();
    for (std::size_t i = 0; i < n; ++i) {
        ult* u = v->pollers.pop_front();
        if (u->poll != nullptr) {
            u->poll(u->poll_arg);
        }
        bump(v->n_polls, 1);
        if (u->cond(u->cond_arg)) {
            u->state.store(ult_state::ready, std::memory_order_relaxed);
            push_runnable(v, u);
            ++woke;
        } else {
            v->pollers.push_back(u);
        }
    }
    return woke;
}

int run_progress() noexcept {
    int work = 0;
    for (progress_slot& s : rt().progress) {
        progress_fn fn = s.fn.load(std::memory_order_acquire);
        if (fn != nullptr) {
            work += fn(s.arg.load(std::memory_order_relaxed));
        }
    }
    return work;
}

ult* try_steal(vp* v) noexcept {
    runtime& r = rt();
    if (!r.steal || r.nr_vps < 2) {
        return nullptr;
    }
    for (int k = 1; k < r.nr_vps; ++k) {
        vp* victim = &r.vps[(v->index + k) % r.nr_vps];
        if (victim->shared.size_hint() == 0) {
            continue;
        }
        if (ult* u = victim->shared.pop_front(); u != nullptr) {
            victim->homed.fetch_sub(1, std::memory_order_relaxed);
            v->homed.fetch_add(1, std::memory_order_relaxed);
            u->home.store(v, std::memory_order_relaxed);
            bump(v->n_steals, 1);
            return u;
        }
    }
    return nullptr;
}

bool any_stealable_elsewhere(vp* v) noexcept {
    runtime& r = rt();
    if (!r.steal) {
        return false;
    }
    for (int i = 0; i < r.nr_vps; ++i) {
        if (&r.vps[i] != v && !r.vps[i].shared.empty_seq_cst()) {
            return true;
        }
    }
    return false;
}

/// Nothing is ready on v: poll, steal, spin a while, then sleep until woken or a deadline.
void idle(vp* v) noexcept {
    runtime& r = rt();
    if (run_progress() > 0) {
        v->idle_since_ns = 0;
        return;
    }
    if (ult* u = try_steal(v); u != nullptr) {
        v->ready.push_back(u);
        v->idle_since_ns = 0;
        return;
    }
    std::uint64_t now = now_ns();
    if (v->idle_since_ns == 0) {
        v->idle_since_ns = now;
        v->poll_backoff_ns = 1000;
    }
    if (now - v->idle_since_ns < r.spin_ns) {
        // PAUSE costs ~100+ cycles on recent x86: watch the inbox between pauses. With a
        // progress function (a network), poll it again after one: an arrival waits for the
        // next poll (see spin_until_current).
        if (r.yield_idle) {  // the core is shared with other processes: let them run meanwhile
            ::sched_yield();
            return;
        }
        const int pauses = r.n_progress.load(std::memory_order_relaxed) > 0 ? 1 : 64;
        for (int i = 0; i < pauses && !v->inbox.maybe_nonempty(); ++i) {
            cpu_relax();
        }
        return;
    }
    // Sleep. Deadline: the nearest timer, a back-off while wait_until() conditions are pending,
    // forever otherwise (but see the deadlock check below).
    std::uint64_t timeout = UINT64_MAX;
    if (!v->timers.empty()) {
        std::uint64_t d = v->timers.front().deadline_ns;
        timeout = d > now ? d - now : 0;
    }
    if (!v->pollers.empty()) {
        timeout = std::min(timeout, v->poll_backoff_ns);
        v->poll_backoff_ns = std::min(v->poll_backoff_ns * 2, poll_backoff_max_ns);
    }
    v->sleep_word.store(vp_sleeping, std::memory_order_seq_cst);
    if (!v->inbox.empty() || !v->shared.empty_seq_cst() || any_stealable_elsewhere(v) ||
        (r.stopping.load() && v->index != 0)) {
        v->sleep_word.store(vp_awake, std::memory_order_relaxed);
        return;
    }
    bool deep = timeout == UINT64_MAX;
    bool watch = false;
    std::uint64_t epoch = 0;
    if (deep) {
        epoch = r.wake_epoch.load(std::memory_order_acquire);
        int n = r.deep_idle.fetch_add(1, std::memory_order_acq_rel) + 1;
        if (n == r.nr_vps && r.deadlock_timeout_ns != 0 && !r.external_events.load(std::memory_order_relaxed) &&
            r.blocking.load(std::memory_order_acquire) == 0 && r.outside_wakers.load(std::memory_order_acquire) == 0 &&
            (r.live.load(std::memory_order_acquire) > 0 || r.primary->state.load() == ult_state::blocked)) {
            watch = true;
            timeout = r.deadlock_timeout_ns;
        }
    }
    bump(v->n_sleeps, 1);
    std::uint64_t slept_from = watch ? now_ns() : 0;
    if (r.asleep.fetch_add(1, std::memory_order_acq_rel) + 1 == r.nr_vps) {
        if (auto* fn = r.all_asleep_fn.load(std::memory_order_acquire); fn != nullptr) {
            fn(r.all_asleep_arg.load(std::memory_order_relaxed));  // a transport's watcher takes over
        }
    }
    futex_wait(&v->sleep_word, vp_sleeping, timeout);
    r.asleep.fetch_sub(1, std::memory_order_acq_rel);
    bool woken = v->sleep_word.exchange(vp_awake, std::memory_order_acq_rel) == vp_awake;
    if (deep) {
        // A deadlock only if the whole timeout passed (futex_wait also returns on signals) and
        // nothing arrived meanwhile, in this VP's queues or anywhere else.
        if (watch && !woken && now_ns() - slept_from >= timeout && v->inbox.empty() &&
            v->shared.empty_seq_cst() && r.deep_idle.load() == r.nr_vps &&
            r.wake_epoch.load(std::memory_order_acquire) == epoch && !r.stopping.load()) {
            report_deadlock();
        }
        r.deep_idle.fetch_sub(1, std::memory_order_acq_rel);
        // Only a real wake-up counts as progress: two watchers whose timeouts expired must not
        // keep invalidating each other's observation.
        if (woken) {
            r.wake_epoch.fetch_add(1, std::memory_order_release);
        }
    }
    v->idle_since_ns = woken ? 0 : v->idle_since_ns;
}

}  // namespace

std::atomic<std::ptrdiff_t> g_tls_vp_offset{0};

// noinline, also under LTO: inlined, the compiler could keep the TLS block's address (the
// __tls_get_addr result) across a context switch, after which the ULT may run on another
// kernel thread. The inline this_vp() takes this path only before the first VP thread starts.
__attribute__((noinline)) vp* this_vp_slow() noexcept {
    vp* v = tls_vp;
    asm volatile("" ::: "memory");
    return v;
}
void set_this_vp(vp* v) noexcept {
    tls_vp = v;
    if (v != nullptr) {
        v->errno_loc = &errno;
#if defined(__x86_64__)
        if (g_tls_vp_offset.load(std::memory_order_relaxed) == 0) {
            char* tp;
            asm volatile("movq %%fs:0, %0" : "=r"(tp));  // the thread pointer (x86-64 TLS ABI)
            g_tls_vp_offset.store(reinterpret_cast<char*>(&tls_vp) - tp, std::memory_order_relaxed);
        }
#endif
    }
}

std::uint64_t now_ns() noexcept {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

void wake_vp(vp* v) noexcept {
    if (v->sleep_word.load(std::memory_order_seq_cst) == vp_sleeping &&
        v->sleep_word.exchange(vp_awake, std::memory_order_seq_cst) == vp_sleeping) {
        futex_wake(&v->sleep_word);
    }
}

void make_ready_slow(ult* u, vp* home) noexcept {
    if (u->stealable) {
        const bool offered = u->offered;  // read before the push: a thief may run u at once
        std::size_t queued = home->shared.push_back(u);
        wake_vp(home);  // nothing to do when home is the caller's VP (it is awake)
        offer_to_thieves(home, queued, offered);
        return;
    }
    if (home->inbox.push(u)) {
        wake_vp(home);
    }
}

void park(const post_action& p) noexcept {
    vp* v = this_vp();
    ult* cur = v->current;
    if (p.op != post_op::requeue) {
        cur->state.store(ult_state::blocked, std::memory_order_relaxed);
    }
    v->post = p;
    switch_out(v, cur, false);
    cur->wait_reason = nullptr;
}

void vp_loop(vp* v) noexcept {
    runtime& r = rt();
    for (;;) {
        v = this_vp();  // unchanged for a loop, but keep the rule
        expire_timers(v);
        if (!v->pollers.empty()) {
            poll_waiters(v);
        }
        // The progress functions (a network) on every visit too, not only when idle: a VP whose
        // ULTs never all wait (ranks that compute and yield, task workers) still delivers what
        // arrives for the ULTs waiting behind them.
        if (r.n_progress.load(std::memory_order_relaxed) > 0) {
            run_progress();
        }
        if (ult* u = pick(v, nullptr); u != nullptr) {
            v->idle_since_ns = 0;
            v->current = u;
            u->state.store(ult_state::running, std::memory_order_relaxed);
            bump(v->n_switches, 1);
            jump(v, &v->sched_ctx, &u->ctx, false);
            continue;
        }
        if (v->index != 0 && r.stopping.load(std::memory_order_acquire) && v->timers.empty() &&
            v->pollers.empty() && v->inbox.empty()) {
            return;
        }
        idle(v);
    }
}

void vp0_sched_entry(boost::context::detail::transfer_t t) noexcept {
    after_jump(t);
    vp_loop(this_vp());
    MPC_LOG(fatal, sched, "the scheduler loop of VP 0 returned");
    std::abort();
}

// ---- ULT-facing operations (the public API lives in runtime.cpp; these need the internals)

[[noreturn]] void exit_current() noexcept {
    vp* v = this_vp();
    ult* cur = v->current;
    run_key_destructors(cur);
    v = this_vp();  // destructors may have yielded
    v->post = {post_op::exit, cur, nullptr, nullptr};
    switch_out(v, cur, true);
    __builtin_unreachable();
}

void ult_entry(boost::context::detail::transfer_t t) noexcept {
    after_jump(t);
    ult* self = this_vp()->current;
    self->fn(self->arg);
    exit_current();
}

void yield_current() noexcept {
    vp* v = this_vp();
    if (v == nullptr || v->current == nullptr) {
        return;
    }
    ult* cur = v->current;
    // Every poll_every yields, the progress functions (see vp_loop): a ULT that yields in a loop
    // would otherwise keep the fast path below and starve the network of this VP.
    if (rt().n_progress.load(std::memory_order_relaxed) > 0 && (++v->pick_count % poll_every) == 0) {
        run_progress();
    }
    bool quiet = !v->inbox.maybe_nonempty() && v->shared.size_hint() == 0 && v->pollers.empty() &&
                 v->timers.empty() && v->shed.load(std::memory_order_relaxed) == 0 && !cur->stealable;
    if (quiet) {
        // Fast path: only this thread touches the private queue, and the ULT we switch to
        // cannot pick `cur` before after_jump() has saved its context, so cur may be queued
        // before the jump and no post action is needed.
        ult* next = v->ready.pop_front();
        if (next == nullptr) {
            return;
        }
        if (cur->stack.canary != nullptr && *cur->stack.canary != stack_canary_value) {
            fatal_stack_overflow(cur);
        }
        cur->state.store(ult_state::ready, std::memory_order_relaxed);
        v->ready.push_back(cur);
        v->current = next;
        next->state.store(ult_state::running, std::memory_order_relaxed);
        bump(v->n_switches);
        jump(v, &cur->ctx, &next->ctx, false);
        return;
    }
    if (v->ready.empty() && !v->inbox.maybe_nonempty() && v->shared.size_hint() == 0 && v->pollers.empty() &&
        v->timers.empty()) {
        return;
    }
    park({post_op::requeue, cur, nullptr, nullptr});
}

void sleep_current(std::uint64_t ns) noexcept {
    vp* v = this_vp();
    ult* cur = v->current;
    v->timers.push_back({now_ns() + ns, cur});
    std::push_heap(v->timers.begin(), v->timers.end(),
                   [](const timer& a, const timer& b) { return a.deadline_ns > b.deadline_ns; });
    park({post_op::none, cur, nullptr, nullptr});
}

void wait_until_current(bool (*cond)(void*), void* cond_arg, progress_fn poll, void* poll_arg) noexcept {
    if (poll != nullptr) {
        poll(poll_arg);
    }
    if (cond(cond_arg)) {
        return;
    }
    vp* v = this_vp();
    ult* cur = v->current;
    cur->cond = cond;
    cur->cond_arg = cond_arg;
    cur->poll = poll;
    cur->poll_arg = poll_arg;
    v->pollers.push_back(cur);
    park({post_op::none, cur, nullptr, nullptr});
}

bool spin_until_current(vp* v, bool (*cond)(void*), void* arg, std::uint64_t max_ns) noexcept {
    if (max_ns == 0 || vp_has_work(v)) {
        return cond(arg);
    }
    std::uint64_t start = 0;
    const bool yield = rt().yield_idle;  // MPC_SCHED_YIELD: see idle()
    // The progress functions (a network) every round when there are some: an arrival waits for
    // the next poll, and a PAUSE is ~40 ns here (polling every 4 rounds cost 0.04-0.05 us of
    // the 0.19 us 0-byte latency between two processes). The clock and other VPs' queues
    // every 64.
    const unsigned poll_mask = rt().n_progress.load(std::memory_order_relaxed) > 0 ? 0U : 63U;
    // With progress functions, the first polls without a PAUSE between them: a message that
    // arrives during a PAUSE (30-40 ns on this machine's VM, most of the loop's period) waits
    // for its end, on a 0-byte half round trip between two processes of about 0.1 us (Open
    // MPI's and MPICH's progress loops do not pause). Then a PAUSE per poll again for the rest
    // of the spin: a longer wait (a collective among many ranks on few cores) gains nothing
    // from polling faster, and a hypervisor recognises a spinning virtual CPU by its PAUSEs
    // (pause-loop exiting) and runs another, maybe the peer's: without them, 64 ranks in 2
    // processes on 2 loaded virtual cores took up to twice as long.
    constexpr unsigned eager_polls = 128;
    for (unsigned i = 0;; ++i) {
        if (cond(arg)) {
            return true;
        }
        if ((i & poll_mask) == poll_mask) {
            if ((i & 63U) == 63U) {
                std::uint64_t now = now_ns();
                if (start == 0) {
                    start = now;
                } else if (now - start >= max_ns) {
                    return cond(arg);
                }
                if (any_stealable_elsewhere(v)) {
                    return cond(arg);
                }
            }
            if (run_progress() > 0 && cond(arg)) {
                return true;
            }
        }
        if (vp_has_work(v)) {
            return cond(arg);
        }
        if (yield) {
            ::sched_yield();
        } else if (poll_mask != 0 || i >= eager_polls) {
            cpu_relax();
        }
    }
}

void move_current(vp* target) noexcept {
    vp* v = this_vp();
    ult* cur = v->current;
    if (target == v) {
        return;
    }
    v->homed.fetch_sub(1, std::memory_order_relaxed);
    target->homed.fetch_add(1, std::memory_order_relaxed);
    cur->home.store(target, std::memory_order_relaxed);
    park({post_op::move, cur, target, nullptr});
}

}  // namespace mpc::sched::detail
