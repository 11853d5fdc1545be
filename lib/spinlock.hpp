/// \file
/// Test-and-test-and-set spinlock for very short critical sections shared between VPs
/// (a wait queue's list update). Never held across a context switch except by the
/// scheduler's park protocol, which releases it after the switch has saved the context.
#pragma once

#include <atomic>

#include "lib/tsan.hpp"

namespace mpc {

/// Tells the CPU that we are spinning (PAUSE on x86, YIELD on arm).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

class spinlock {
public:
    /// Inline: the uncontended exchange is the whole cost on the message path (the out-of-line
    /// lock the compiler made of the loop cost a call per message).
    [[gnu::always_inline]] void lock() noexcept {
        if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]] {
            tsan_acquire(&locked_);
            return;
        }
        lock_contended();
    }
    bool try_lock() noexcept {
        if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire)) {
            tsan_acquire(&locked_);
            return true;
        }
        return false;
    }
    void unlock() noexcept {
        tsan_release(&locked_);
        locked_.store(false, std::memory_order_release);
    }
    bool is_locked() const noexcept { return locked_.load(std::memory_order_relaxed); }

private:
    [[gnu::noinline]] void lock_contended() noexcept {
        for (;;) {
            while (locked_.load(std::memory_order_relaxed)) {
                cpu_relax();
            }
            if (!locked_.exchange(true, std::memory_order_acquire)) {
                tsan_acquire(&locked_);
                return;
            }
        }
    }

    std::atomic<bool> locked_{false};
};

/// RAII guard for spinlock (std::lock_guard works too; this one is noexcept and tiny).
class spin_guard {
public:
    explicit spin_guard(spinlock& l) noexcept : l_(l) { l_.lock(); }
    ~spin_guard() { l_.unlock(); }
    spin_guard(const spin_guard&) = delete;
    spin_guard& operator=(const spin_guard&) = delete;

private:
    spinlock& l_;
};

}  // namespace mpc
