/// \file
/// A wait point usable from ULTs and from plain threads: the runtime's one way to block.
///
/// A condition is protected by the gate's spinlock. A waiter checks it under the lock and, if
/// false, parks (a ULT: the engine's wait queue, whose park protocol releases the lock only once
/// the waiter is switched out) or sleeps on a futex word (a plain thread, e.g. a program thread
/// the engine does not run). Whoever makes the condition true does so under the lock, takes the
/// waiters with notify_locked(), unlocks, and only then wakes them (deliver()): a woken waiter
/// may free the object holding the gate at once, so after the unlock the notifier touches nothing
/// but the waiters' ULT records and, for plain threads, the futex address in a system call (a
/// wake on freed memory is a harmless no-op there).
#pragma once

#include <atomic>
#include <cstdint>

#include "lib/spinlock.hpp"
#include "scheduler/sync.hpp"

namespace mpc::tg::detail {

class gate {
public:
    /// Guards the condition.
    spinlock lock;

    /// Wakes to deliver after unlocking.
    struct wakeups {
        sched::ult* chain = nullptr;
        std::atomic<std::uint32_t>* futex = nullptr;
    };

    /// Caller holds `lock`. Returns, with `lock` released, once cond() was true under it.
    /// May block. `what` names the wait in deadlock reports.
    template <class Cond>
    void wait_locked(Cond&& cond, const char* what) noexcept {
        while (!cond()) {
            if (sched::self() != nullptr) {
                queue_.wait(lock, what);  // releases the lock once parked
                lock.lock();
            } else {
                ++plain_waiters_;
                std::uint32_t seen = futex_.load(std::memory_order_relaxed);
                lock.unlock();
                futex_wait(seen);  // returns at once if a notify changed the word meanwhile
                lock.lock();
                --plain_waiters_;
            }
        }
        lock.unlock();
    }

    /// Caller holds `lock` and has just made the condition true.
    wakeups notify_locked() noexcept {
        wakeups w;
        w.chain = queue_.take_all_locked();
        if (plain_waiters_ != 0) {
            futex_.fetch_add(1, std::memory_order_relaxed);
            w.futex = &futex_;
        }
        return w;
    }

    /// Wakes what notify_locked() took; call after unlocking.
    static void deliver(const wakeups& w) noexcept;

private:
    void futex_wait(std::uint32_t seen) noexcept;

    sched::wait_queue queue_;
    std::atomic<std::uint32_t> futex_{0};
    std::uint32_t plain_waiters_ = 0;  // under lock
};

/// A mutex for sections that may block (a ULT waiting for it parks, a plain thread sleeps).
/// `what` names the wait in deadlock reports.
class blocking_mutex {
public:
    explicit constexpr blocking_mutex(const char* what = "mpc::tg blocking mutex") noexcept : what_(what) {}
    void lock() noexcept {
        g_.lock.lock();
        g_.wait_locked(
            [this] {
                if (held_) {
                    return false;
                }
                held_ = true;
                return true;
            },
            what_);
    }
    bool try_lock() noexcept {
        spin_guard sg(g_.lock);
        if (held_) {
            return false;
        }
        held_ = true;
        return true;
    }
    void unlock() noexcept {
        g_.lock.lock();
        held_ = false;
        gate::wakeups w = g_.notify_locked();
        g_.lock.unlock();
        gate::deliver(w);
    }

private:
    gate g_;
    bool held_ = false;  // under g_.lock
    const char* what_;
};

}  // namespace mpc::tg::detail
