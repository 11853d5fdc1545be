/// \file
/// Blocking primitives for ULTs. Blocking parks the calling ULT; its VP runs other ULTs. Every
/// primitive may be used by ULTs on different VPs at once; wake-ups are never lost: a waiter is
/// queued under the primitive's lock, and that lock is released only after the waiter's context
/// has been saved (the scheduler's park protocol), so a waker on another VP can never resume a
/// ULT that has not finished switching out. wait_list is lock-free and relies on park_publish
/// instead (see there).
///
/// The unlock / notify / post operations may also be called from plain threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lib/spinlock.hpp"
#include "scheduler/queues.hpp"
#include "scheduler/sched.hpp"

namespace mpc::sched {

/// FIFO of parked ULTs; the building block of the others.
class wait_queue {
public:
    wait_queue() = default;
    wait_queue(const wait_queue&) = delete;
    wait_queue& operator=(const wait_queue&) = delete;

    /// Parks the caller (may yield). `held` must be locked by the caller; it is released once the
    /// caller is queued and switched out, and is NOT re-acquired on return. `what` names the
    /// blocking call in deadlock reports and in the error for a call made outside a ULT.
    void wait(spinlock& held, const char* what = "mpc::sched::wait_queue::wait") noexcept;
    /// Wakes the oldest waiter; false if none. Caller must hold the lock passed to wait().
    bool notify_one_locked() noexcept;
    /// Wakes every waiter; returns how many. Caller must hold the lock passed to wait().
    std::size_t notify_all_locked() noexcept;
    bool empty() const noexcept { return q_.empty(); }
    /// Removes and returns the oldest waiter without waking it (direct hand-off); null if none.
    /// Wake it with wake() after releasing the lock: a woken ULT may return and destroy the
    /// primitive (and its lock) at once, so primitives wake nobody while holding their lock.
    ult* pop_locked() noexcept;
    /// Removes every waiter; returns them as a chain for wake_all() after unlocking.
    ult* take_all_locked() noexcept;

private:
    detail::fifo<ult> q_;
};

/// Makes a parked ULT runnable again (on its VP). For use with wait_queue::pop_locked().
void wake(ult* u) noexcept;
/// Wakes a chain returned by wait_queue::take_all_locked(); returns how many.
std::size_t wake_all(ult* chain) noexcept;

/// The building block of lock-free one-shot events (an MPI request's completion): calls
/// publish(arg, self) and parks the calling ULT. publish installs `self` where the waker will
/// find it (typically with a CAS) and returns true; the waker then calls wake(self), from any
/// thread, possibly before the caller has left its VP: the caller is resumed only after its
/// context is saved (or continues without leaving). If publish returns false (the event has
/// already happened) the call returns at once. Must be called from a ULT.
void park_publish(bool (*publish)(void* arg, ult* self), void* arg, const char* what) noexcept;

/// Busy-waits for cond(arg) for at most max_ns, but only while the calling ULT's VP has
/// nothing else to do (no other ready ULT, pending wake-up, poller, timer, or stealable work
/// elsewhere); the runtime's progress functions are polled meanwhile. Returns cond's last value.
/// Outside a ULT: one check. A waiter spins briefly before parking when the event is expected
/// soon: the wake-up of a parked ULT from another VP costs several cross-core cache transfers.
bool spin_until(bool (*cond)(void* arg), void* arg, std::uint64_t max_ns) noexcept;

/// Mutual exclusion with FIFO hand-off to parked waiters.
class mutex {
public:
    void lock() noexcept;  ///< may yield
    bool try_lock() noexcept;
    void unlock() noexcept;

private:
    spinlock lk_;
    bool locked_ = false;
    wait_queue waiters_;
};

/// Lock-free list of parked ULTs for waits on a condition that other threads make true with
/// their own atomic stores (a collective's arrival count): a waiter queues itself with one
/// compare-and-swap and parks, a waker takes the whole list with one exchange. No lock is held
/// across the waiter's switch, so wakers and waiters on other VPs never spin on one (a
/// spinlock + wait_queue holds its lock until the waiter's context is saved).
///
/// The condition must become true before the wake_all() that should see it (a store, then
/// wake_all); a waiter that queues itself and then finds the condition true takes the list and
/// wakes it itself (itself included), so no wake-up is lost whichever comes first. Wake-ups may
/// be spurious (every waiter of the list is woken, whatever it waits for): wait in a loop.
class wait_list {
public:
    wait_list() = default;
    wait_list(const wait_list&) = delete;
    wait_list& operator=(const wait_list&) = delete;

    /// Parks the calling ULT until a wake_all() that follows its queuing, or returns at once
    /// when cond(arg) holds once it is queued. Must be called from a ULT; `what` names the wait
    /// in deadlock reports. A stealable ULT is not stealable while it waits here: it is resumed
    /// on the VP it waited on.
    void wait_unless(bool (*cond)(void* arg), void* arg, const char* what) noexcept;
    /// Wakes every queued waiter (any thread); returns how many.
    std::size_t wake_all() noexcept;

private:
    std::atomic<ult*> head_{nullptr};
};

/// Condition variable for sched::mutex.
class condition_variable {
public:
    /// Releases m, parks until notified, re-acquires m (may yield). Spurious wake-ups do not
    /// happen, but use a predicate anyway.
    void wait(mutex& m) noexcept;
    template <class Pred>
    void wait(mutex& m, Pred pred) noexcept {
        while (!pred()) {
            wait(m);
        }
    }
    void notify_one() noexcept;
    void notify_all() noexcept;

private:
    spinlock lk_;
    wait_queue waiters_;
};

/// Reusable barrier for a fixed number of ULTs.
class barrier {
public:
    explicit barrier(std::size_t count) noexcept : count_(count) {}
    /// Parks until `count` ULTs have arrived (may yield). Returns true in exactly one of them
    /// (the last to arrive) per round.
    bool arrive_and_wait() noexcept;

private:
    spinlock lk_;
    std::size_t count_;
    std::size_t arrived_ = 0;
    wait_queue waiters_;
};

/// Counting semaphore with FIFO hand-off.
class semaphore {
public:
    explicit semaphore(std::size_t initial = 0) noexcept : count_(initial) {}
    void acquire() noexcept;  ///< may yield
    bool try_acquire() noexcept;
    void release(std::size_t n = 1) noexcept;
    std::size_t value() const noexcept { return count_; }

private:
    spinlock lk_;
    std::size_t count_;
    wait_queue waiters_;
};

}  // namespace mpc::sched
