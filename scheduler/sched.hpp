/// \file
/// The user-level thread engine: virtual processors (VPs) and user-level threads (ULTs).
///
/// A VP is a kernel thread pinned to one core. A ULT is a function running on its own stack,
/// switched in user space (Boost.Context fcontext). Scheduling has two levels:
///  1. placement: the process decides on which VP a ULT lives (at spawn: least-loaded VP, or
///     the one asked for; later: move_to(), rebalance(), and work stealing for stealable ULTs);
///  2. each VP runs its ULTs from a private FIFO (no atomics), fed by a lock-free inbound queue
///     for wake-ups coming from other VPs.
///
/// init() turns the calling thread into VP 0 and its flow into the *primary ULT*, so that the
/// code that called init() can spawn, join and block like any ULT. finalize() waits until every
/// other ULT has ended, stops the VPs and turns the thread back into a plain thread.
///
/// "May yield" below means the call can suspend the calling ULT and run others on its VP.
/// Calls that may yield must be made from a ULT (the primary ULT counts).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "lib/status.hpp"
#include "lib/topology.hpp"

namespace mpc::sched {

struct ult;  // opaque
struct vp;   // opaque

/// Limits of the engine (also checked by mpc_run before it starts a program).
inline constexpr int max_vps = 4096;
inline constexpr std::size_t min_stack_size = 16 * 1024;

/// Runtime options; zero / empty values mean "take the MPC_* variable or its default".
struct options {
    int nr_vps = 0;                  ///< MPC_VPS; default one per allowed core
    int placement = -1;              ///< MPC_BIND: 0 compact, 1 scatter
    std::size_t stack_size = 0;      ///< MPC_STACK_SIZE, default 1 MiB
    bool bind = true;                ///< pin VPs to cores (MPC_SCHED_BIND)
};

/// Starts the VPs; the caller becomes the primary ULT on VP 0. Not thread-safe; once per
/// process at a time (init after finalize is allowed).
status init(const options& opts = {}) noexcept;
/// Waits (may yield) until every other ULT has ended, then stops the VPs. Call from the
/// primary ULT.
status finalize() noexcept;
bool initialized() noexcept;

int nr_vps() noexcept;
/// VP the caller is running on, or -1 outside the runtime's threads.
int current_vp() noexcept;
/// Default stack size in bytes.
std::size_t default_stack_size() noexcept;

/// Where the VP runs.
topo::place vp_place(int vp) noexcept;

/// Per-VP counters (approximate when read while running).
struct vp_stats {
    std::uint64_t switches = 0;      ///< context switches into ULTs
    std::uint64_t spawned = 0;       ///< ULTs created on this VP
    std::uint64_t remote_wakeups = 0;  ///< ULTs received through the inbound queue
    std::uint64_t steals = 0;        ///< ULTs this VP took from another VP
    std::uint64_t sleeps = 0;        ///< times the VP slept on its futex
    std::uint64_t polls = 0;         ///< wait_until condition checks
    std::int64_t homed = 0;          ///< live ULTs assigned to this VP now
};
vp_stats stats(int vp) noexcept;

// --------------------------------------------------------------------------------------------
// ULTs

/// How to create a ULT.
struct attr {
    int vp = -1;                 ///< VP to start on; -1: the placer chooses (least loaded)
    std::size_t stack_size = 0;  ///< 0: default_stack_size()
    bool pinned = false;         ///< never moved by rebalance() or stealing (move_to() still works)
    bool stealable = false;      ///< idle VPs may take it (work stealing); implies !pinned
    /// With stealable: whenever it is queued, a sleeping VP (if any) is woken to steal it, so
    /// that it runs while its VP's current ULT computes (the jobs of non-blocking collectives).
    /// Without it a sleeping VP comes to steal only when a VP queues two stealable ULTs.
    bool offer = false;
    bool detached = false;       ///< nobody joins it; its resources go when it ends
    const char* name = nullptr;  ///< label for faults, logs and deadlock reports (copied)
    int owner = -1;              ///< task id whose address slice holds the stack (-1: none)
    void* heap = nullptr;        ///< task heap its allocations come from (see set_heap())
};

using ult_fn = void (*)(void*);

/// Creates a ULT running fn(arg). Does not yield. The handle stays valid until join().
result<ult*> spawn(ult_fn fn, void* arg, const attr& a = {}) noexcept;

/// Creates a ULT running a callable (moved into the new ULT's stack; no heap allocation).
template <class F>
result<ult*> spawn(F&& f, const attr& a = {}) noexcept;

/// Waits for u to end and frees it (may yield). Joining a detached ULT, oneself, the primary
/// ULT, or a ULT another ULT is joining is an error (errc::invalid_argument / errc::busy).
/// As with pthread_join, using a handle after join() is undefined; a second join() is detected
/// (errc::invalid_argument) only while the ULT's stack sits in its VP's stack cache.
status join(ult* u) noexcept;
/// Lets u's resources go when it ends; u must not be used afterwards.
status detach(ult* u) noexcept;

/// Gives the VP to the other ready ULTs (may yield). Outside a ULT it does nothing.
void yield() noexcept;
/// Ends the calling ULT (not the primary one). Never returns.
[[noreturn]] void exit() noexcept;
/// Suspends the calling ULT for at least d (may yield; the VP runs other ULTs meanwhile).
void sleep_for(std::chrono::nanoseconds d) noexcept;
/// Moves the calling ULT to VP `vp` (may yield); it continues there.
status move_to(int vp) noexcept;

/// The calling ULT, or nullptr outside a ULT.
ult* self() noexcept;
std::uint64_t id(const ult* u) noexcept;
/// The VP u is assigned to.
int vp_of(const ult* u) noexcept;
/// Sets the label used in fault, log and deadlock messages ("rank 3"); copied, 31 chars max.
void set_name(ult* u, const char* name) noexcept;
const char* name(const ult* u) noexcept;

/// The task (MPI rank) a ULT runs for: an opaque pointer owned by the layer above (nullptr by
/// default). current_task() is one TLS load and two dependent loads.
void set_task(ult* u, void* task) noexcept;
/// The task heap (allocator/heap.hpp) u's allocations come from: the scheduler hands it to the
/// allocator whenever u is switched in (nullptr: the kernel thread's own heap). Set it before u
/// first runs.
void set_heap(ult* u, void* heap) noexcept;
/// The VP's NUMA node of u (0 without NUMA), for binding its task's memory.
int numa_node_of(const ult* u) noexcept;
void* current_task() noexcept;
/// A word owned by the layer above for the calling ULT (nullptr outside a ULT), nullptr
/// initially: the privatized program's thread-local variables of the rank (mpi_compat). It
/// follows the ULT from VP to VP. Two dependent loads after the VP's TLS load.
void** user_tls_slot() noexcept;

/// Asks overloaded VPs to hand their movable (non-pinned) ULTs to underloaded ones so that
/// every VP has about the same number. Moves happen lazily when each ULT next gets scheduled.
/// Returns the number of moves requested.
int rebalance() noexcept;

// --------------------------------------------------------------------------------------------
// ULT-local storage

using key = int;
/// A new key; `destructor(value)` runs at ULT exit for non-null values. At most 256 keys.
result<key> key_create(void (*destructor)(void*) = nullptr) noexcept;
status key_delete(key k) noexcept;
status set_specific(key k, void* value) noexcept;
/// nullptr when unset or invalid.
void* get_specific(key k) noexcept;

// --------------------------------------------------------------------------------------------
// Polling

/// A progress function called by VPs that have nothing else to do, and between ULTs that wait
/// in wait_until(); returns the amount of work it did (0: none). Must be thread-safe (several
/// VPs may call it at once). At most 16.
using progress_fn = int (*)(void* arg) noexcept;
result<int> register_progress(progress_fn fn, void* arg) noexcept;
status unregister_progress(int handle) noexcept;

/// Suspends the calling ULT until cond(cond_arg) is true (may yield). The ULT's VP evaluates the
/// condition between ULTs and when idle, calling poll(poll_arg) first when poll is not null.
/// Use it for conditions made true by polling (network completion); for conditions another
/// ULT makes true, a wait_queue wakes faster.
void wait_until(bool (*cond)(void*), void* cond_arg, progress_fn poll = nullptr, void* poll_arg = nullptr) noexcept;

template <class Cond>
void wait_until(Cond&& cond) noexcept {
    using C = std::remove_reference_t<Cond>;
    wait_until([](void* c) { return static_cast<bool>((*static_cast<C*>(c))()); },
               const_cast<void*>(static_cast<const void*>(&cond)));
}

/// Runs fn(arg), a call that blocks in the kernel (a file's read or write), on a helper kernel
/// thread while the calling ULT parks, so that its VP runs its other ULTs meanwhile; returns
/// when fn has returned, its effects visible. Outside a ULT, or with MPC_SCHED_IO_THREADS=0,
/// fn runs on the calling thread. fn runs on another kernel thread: it must not depend on the
/// caller's thread-local state (errno included: return it in arg). `what` names the wait in
/// deadlock reports. May yield.
void blocking_call(void (*fn)(void*), void* arg, const char* what) noexcept;
/// Starts fn(arg) on a helper thread and returns at once (fn tells its own end to whoever
/// waits for it: a wait_list, say); while it runs, the deadlock check does not count ULTs as
/// blocked for good. False, and nothing started, when no helper may run it
/// (MPC_SCHED_IO_THREADS=0, the engine not running, no thread or memory): the caller does it
/// otherwise. Does not yield.
bool blocking_start(void (*fn)(void*), void* arg) noexcept;

/// Wakes every VP that sleeps (used by transports when a network event arrives).
void notify_all_vps() noexcept;
/// fn(arg) runs on the VP whose sleep leaves no VP awake, just before it sleeps (null: none).
/// While a VP is awake it polls the progress functions; once all sleep, a transport's event
/// watcher (a thread sleeping on the network's event fd) takes over: this tells it when.
/// fn must be quick and must not block (write to an eventfd, say).
void set_all_asleep_hook(void (*fn)(void*) noexcept, void* arg) noexcept;
/// Whether every VP sleeps on its futex now (with or without a deadline).
bool all_vps_asleep() noexcept;
/// Tells the deadlock check that blocked ULTs may be woken from outside this process (a
/// transport to other processes is running): every VP idle with ULTs blocked is then not
/// reported as a deadlock, since a message may still arrive.
void set_external_events(bool on) noexcept;
/// Counts (up or down by delta) threads outside the VPs that may wake blocked ULTs at any time
/// (an application thread that runs a task worker: StarPU's driver API). While the count is
/// above 0, VPs all idle with ULTs blocked are not reported as a deadlock.
void outside_wakers(int delta) noexcept;

// --------------------------------------------------------------------------------------------
// Deadlock and blocked-state reporting

/// Records what the calling ULT is about to block on ("MPI_Recv from 3 tag 7"); shown in
/// deadlock reports. The string must outlive the wait. Cleared when the ULT runs again.
void set_wait_reason(const char* what) noexcept;

namespace detail {
template <class F>
struct closure {
    F f;
    static void run(void* p) noexcept {
        auto* self = static_cast<closure*>(p);
        if constexpr (std::is_nothrow_invocable_v<F&>) {
            self->f();
        } else {
            try {
                self->f();
            } catch (...) {
                uncaught_exception();
            }
        }
        self->~closure();
    }
    [[noreturn]] static void uncaught_exception() noexcept;
};
[[noreturn]] void report_uncaught_exception() noexcept;
template <class F>
void closure<F>::uncaught_exception() noexcept {
    report_uncaught_exception();
}
/// Spawns with `size` bytes reserved at the top of the new stack; *slot receives their address
/// before the ULT can run.
result<ult*> spawn_with_slot(ult_fn fn, std::size_t size, std::size_t align, void** slot, const attr& a,
                             void (*construct)(void* dst, void* src), void* src) noexcept;
}  // namespace detail

template <class F>
result<ult*> spawn(F&& f, const attr& a) noexcept {
    using C = detail::closure<std::decay_t<F>>;
    void* slot = nullptr;
    return detail::spawn_with_slot(
        &C::run, sizeof(C), alignof(C), &slot, a,
        [](void* dst, void* src) { new (dst) C{std::forward<F>(*static_cast<std::remove_reference_t<F>*>(src))}; },
        const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace mpc::sched
