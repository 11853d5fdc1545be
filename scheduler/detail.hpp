/// \file
/// Internal structures of the engine: the ULT and VP records, the runtime's global state and the
/// switch protocol. Not part of the API.
///
/// Switch protocol. Every stack switch goes through jump(): it records which context is
/// being left, calls jump_fcontext, and the context that lands runs after_jump() first. That
/// stores the suspended context of the one we left (only now is it safe to resume it) and
/// then runs the *post action* the leaving side left in its VP record: requeue it (yield),
/// release a wait-queue lock (park), hand it to another VP (move_to), or retire it (exit).
/// Because the post action runs after the save, a ULT that parks can never be resumed by a
/// waker on another VP before its registers are saved: no lost or early wake-ups.
///
/// Jumps never cross kernel threads, so the post action always lives in the VP record of the
/// thread doing the jump. Code must re-read this_vp() after anything that may switch: the
/// ULT may have moved to another VP (another kernel thread) meanwhile. this_vp() reads the
/// thread-local pointer anew on every call (see there).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "lib/spinlock.hpp"
#include "lib/topology.hpp"
#include "scheduler/context.hpp"
#include "scheduler/queues.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/stack.hpp"

namespace mpc::alloc {
class heap;
}

namespace mpc::sched {

enum class ult_state : std::uint8_t { ready, running, blocked, done };

inline constexpr std::uint32_t ult_magic_live = 0x554c5421;  // "ULT!"
inline constexpr std::uint32_t ult_magic_dead = 0xdead0017;

struct ult {
    detail::exec_ctx ctx;
    std::uint32_t magic = ult_magic_live;
    ult* next = nullptr;  ///< link of whichever queue holds the ULT
    /// VP the ULT runs on / will be woken on. Written by the VP thread that moves it (move_to,
    /// rebalance, a steal); atomic (relaxed) so that other threads may read it (vp_of()).
    std::atomic<vp*> home{nullptr};
    ult_fn fn = nullptr;
    void* arg = nullptr;
    std::uint64_t id = 0;
    std::atomic<ult_state> state{ult_state::ready};
    bool primary = false;
    bool pinned = false;
    bool stealable = false;
    bool offered = false;  ///< attr::offer: a sleeping VP is woken to steal it whenever it is queued
    // join / detach, under join_lock
    spinlock join_lock;
    bool done = false;
    bool detached = false;
    ult* joiner = nullptr;
    // wait_until
    bool (*cond)(void*) = nullptr;
    void* cond_arg = nullptr;
    progress_fn poll = nullptr;
    void* poll_arg = nullptr;
    // registry of live ULTs (deadlock reports, finalize)
    vp* registry = nullptr;
    ult* reg_prev = nullptr;
    ult* reg_next = nullptr;
    const char* wait_reason = nullptr;
    void* task = nullptr;  ///< set_task(): the MPI rank (or other task) this ULT runs for
    alloc::heap* heap = nullptr;  ///< set_heap(): the task heap its allocations come from
    void* user_tls = nullptr;     ///< user_tls_slot(): thread-local state of a privatized program
    void** keys = nullptr;
    stack_region stack;
    stack_allocator* stack_alloc = nullptr;
    char name[32] = {};
};

namespace detail {

enum class post_op : std::uint8_t { none, requeue, unlock, exit, move, publish };

/// 32 bytes: it is copied twice per switch.
struct post_action {
    post_op op = post_op::none;
    ult* u = nullptr;
    void* obj = nullptr;  ///< unlock: the spinlock; move: the target vp; publish: the argument
    bool (*publish)(void*, ult*) = nullptr;  ///< post_op::publish: false -> requeue u at once

    spinlock* lock() const noexcept { return static_cast<spinlock*>(obj); }
    vp* target() const noexcept { return static_cast<vp*>(obj); }
};

struct timer {
    std::uint64_t deadline_ns;
    ult* u;
};

/// Adds to a counter that only its VP writes: a plain load and store, no locked instruction.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

inline constexpr std::uint32_t vp_awake = 0;
inline constexpr std::uint32_t vp_sleeping = 1;

}  // namespace detail

struct alignas(64) vp {
    int index = 0;
    topo::place place;
    ult* current = nullptr;
    detail::exec_ctx* running = nullptr;  ///< context executing now (a ULT's or sched_ctx)
    detail::exec_ctx sched_ctx;            ///< the VP's scheduler loop
    detail::fifo<ult> ready;               ///< private run queue
    detail::fifo<ult> pollers;             ///< ULTs in wait_until()
    std::vector<detail::timer> timers;     ///< min-heap of sleeping ULTs
    std::vector<stack_region> stack_cache;
    detail::post_action post;
    int* errno_loc = nullptr;              ///< the VP thread's errno (set_this_vp())
    unsigned pick_count = 0;
    unsigned turn = 0;
    std::uint64_t idle_since_ns = 0;
    std::uint64_t poll_backoff_ns = 0;
    // counters (written by the owner, read racily by stats())
    std::atomic<std::uint64_t> n_switches{0}, n_spawned{0}, n_remote{0}, n_steals{0}, n_sleeps{0}, n_polls{0};

    alignas(64) detail::mpsc_inbox<ult> inbox;  ///< wake-ups from other VPs
    alignas(64) std::atomic<std::uint32_t> sleep_word{detail::vp_awake};
    std::atomic<std::int64_t> homed{0};  ///< live ULTs assigned here
    std::atomic<std::int64_t> shed{0};   ///< ULTs to hand off (rebalance)
    alignas(64) detail::locked_fifo<ult> shared;  ///< stealable ULTs
    spinlock registry_lock;
    ult* registry_head = nullptr;
    std::thread thread;
    void* altstack = nullptr;
    std::size_t altstack_size = 0;
};

namespace detail {

struct progress_slot {
    std::atomic<progress_fn> fn{nullptr};
    std::atomic<void*> arg{nullptr};
};

struct runtime {
    std::atomic<bool> running{false};
    std::atomic<bool> stopping{false};
    int nr_vps = 0;
    vp* vps = nullptr;  ///< array of nr_vps
    ult* primary = nullptr;
    std::size_t stack_size = 0;
    std::size_t stack_cache_max = 0;
    std::uint64_t spin_ns = 0;
    bool yield_idle = false;  ///< MPC_SCHED_YIELD: sched_yield() instead of PAUSE while spinning
    std::uint64_t deadlock_timeout_ns = 0;
    /// Wake-ups may come from other processes (set_external_events): no local deadlock check.
    std::atomic<bool> external_events{false};
    /// Calls out on a helper thread (blocking_call()): their callers are parked, not deadlocked.
    std::atomic<int> blocking{0};
    /// Threads outside the VPs that may wake blocked ULTs (outside_wakers()): no deadlock check.
    std::atomic<int> outside_wakers{0};
    int io_threads = 0;  ///< MPC_SCHED_IO_THREADS: at most this many helpers for blocking_call()
    bool steal = true;
    stack_region vp0_sched_stack;
    stack_allocator* vp0_sched_alloc = nullptr;
    std::atomic<std::uint64_t> next_id{1};
    std::atomic<std::int64_t> live{0};  ///< live ULTs, the primary excluded
    std::atomic<int> deep_idle{0};      ///< VPs asleep with nothing that could wake them by time
    std::atomic<int> asleep{0};         ///< VPs asleep on their futex, with or without a deadline
    /// set_all_asleep_hook(): called by the VP whose sleep makes `asleep` reach nr_vps.
    std::atomic<void (*)(void*) noexcept> all_asleep_fn{nullptr};
    std::atomic<void*> all_asleep_arg{nullptr};
    std::atomic<std::uint64_t> wake_epoch{0};
    spinlock done_lock;
    spinlock progress_lock;
    progress_slot progress[16];
    std::atomic<int> n_progress{0};  ///< registered progress functions
};

runtime& rt() noexcept;
/// The CPU affinity of the thread that called init(), before it became VP 0 (false: unknown).
bool caller_affinity(cpu_set_t* out) noexcept;

/// this_vp() through a call (the thread-local variable read in vp.cpp, where the call keeps the
/// compiler from reusing its address across a switch).
vp* this_vp_slow() noexcept;
/// Offset of the thread-local VP pointer from the thread pointer: the same in every thread
/// (initial-exec TLS lives in the static TLS block); 0 until the first VP thread starts.
[[gnu::visibility("hidden")]] extern std::atomic<std::ptrdiff_t> g_tls_vp_offset;  // hidden: no GOT load

/// The VP of the calling kernel thread (nullptr outside the runtime's threads). Inline: one
/// load through %fs, which the compiler cannot hoist across a switch or reuse from an earlier
/// read (volatile asm with a memory clobber; a plain TLS read could keep the thread-local
/// block's address in a register while the ULT moves to another kernel thread). The call it
/// replaced was 5% of the instructions of an in-process 0-byte message.
[[gnu::always_inline]] inline vp* this_vp() noexcept {
#if defined(__x86_64__)
    const std::ptrdiff_t off = g_tls_vp_offset.load(std::memory_order_relaxed);
    if (off != 0) [[likely]] {
        vp* v;
        asm volatile("movq %%fs:(%1), %0" : "=r"(v) : "r"(off) : "memory");
        return v;
    }
#endif
    return this_vp_slow();
}
void set_this_vp(vp* v) noexcept;

/// sched::current_task() inline, for the message path.
[[gnu::always_inline]] inline void* current_task_inline() noexcept {
    vp* v = this_vp();
    return v != nullptr && v->current != nullptr ? v->current->task : nullptr;
}

std::uint64_t now_ns() noexcept;

/// Suspends the calling ULT with post action p (parks it unless p requeues it).
void park(const post_action& p) noexcept;
/// Leaves cur, the ULT running on v (its post action, if any, set in v->post), for the next
/// ready ULT or the scheduler loop; returns when cur runs again. Returns at once, without a
/// switch, if the next ULT to run is cur itself (woken meanwhile: park_publish_current).
void switch_out(vp* v, ult* cur, bool exiting) noexcept;

/// sched::park_publish() for cur, the ULT running on v (the caller): publishes cur, then parks
/// it; returns false without parking when publish returned false. `what` names the wait in
/// deadlock reports (a reason the caller set already is kept). Inline: the MPI requests' waits
/// take it on every in-process message.
[[gnu::always_inline]] inline bool park_publish_current(vp* v, ult* cur, bool (*publish)(void*, ult*), void* arg,
                                                        const char* what) noexcept {
    if (cur->wait_reason == nullptr) {
        cur->wait_reason = what;
    }
    if (cur->stealable) {
        // Woken, a stealable ULT may be taken by a thief at once: publish after the save.
        park({post_op::publish, cur, arg, publish});  // clears wait_reason when resumed
        return true;
    }
    // Only this VP resumes cur (a wake-up goes to its queues or its inbox, which only this
    // thread drains, and pick() does not shed a ULT that is switching out), and it does so
    // only after the switch has saved cur's context, or without a switch when the next ULT
    // to run is cur itself. So cur may publish itself before leaving: no post action, and no
    // switch at all when the event has happened meanwhile.
    cur->state.store(ult_state::blocked, std::memory_order_relaxed);
    const bool parked = publish(arg, cur);
    if (parked) {
        switch_out(v, cur, false);
    } else {
        cur->state.store(ult_state::running, std::memory_order_relaxed);
    }
    cur->wait_reason = nullptr;
    return parked;
}
/// Anything on v that the running ULT would delay by spinning instead of switching out.
inline bool vp_has_work(const vp* v) noexcept {
    return !v->ready.empty() || v->inbox.maybe_nonempty() || v->shared.size_hint() != 0 || !v->pollers.empty() ||
           !v->timers.empty() || v->shed.load(std::memory_order_relaxed) != 0;
}
/// Spins while cond(arg) is false, at most max_ns, giving up as soon as v (the caller's VP) has
/// other work (see sched::spin_until).
bool spin_until_current(vp* v, bool (*cond)(void*), void* arg, std::uint64_t max_ns) noexcept;
/// make_ready() of u, already marked ready, when it is stealable (its VP's shared queue, and
/// a thief may be woken) or lives on another VP than the caller's (that VP's inbox).
void make_ready_slow(ult* u, vp* home) noexcept;
/// Makes u runnable on its home VP (any thread). Inline: the common case, a ULT of the
/// caller's VP that is not stealable (the other rank of a ping-pong on one VP), joins the VP's
/// private run queue in a few instructions.
[[gnu::always_inline]] inline void make_ready(ult* u) noexcept {
    vp* home = u->home.load(std::memory_order_relaxed);
    u->state.store(ult_state::ready, std::memory_order_relaxed);
    if (home == this_vp() && !u->stealable) [[likely]] {
        home->ready.push_back(u);
        return;
    }
    make_ready_slow(u, home);
}
/// Wakes v if it sleeps.
void wake_vp(vp* v) noexcept;
/// The VP thread body (VP 1..n-1) and the scheduler loop.
void vp_thread_main(vp* v) noexcept;
void vp_loop(vp* v) noexcept;
/// Entry of VP 0's scheduler context (it runs on a stack of its own).
void vp0_sched_entry(boost::context::detail::transfer_t t) noexcept;

/// Frees a finished ULT (stack to the VP's cache or its allocator).
void free_ult(ult* u) noexcept;
/// Wakes finalize() when the last ULT has ended.
void on_ult_gone() noexcept;

void registry_add(vp* v, ult* u) noexcept;
void registry_remove(ult* u) noexcept;

/// Runs the key destructors of u (at exit, in u's context; may yield).
void run_key_destructors(ult* u) noexcept;
void free_keys(ult* u) noexcept;

/// Installs / removes the fault handlers; per-thread alternate signal stack.
void install_fault_handlers() noexcept;
void remove_fault_handlers() noexcept;
status setup_altstack(vp* v) noexcept;
void teardown_altstack(vp* v) noexcept;
[[noreturn]] void fatal_stack_overflow(const ult* u) noexcept;
/// Reports a deadlock (all VPs idle, ULTs blocked) and ends the process.
[[noreturn]] void report_deadlock() noexcept;


}  // namespace detail
}  // namespace mpc::sched
