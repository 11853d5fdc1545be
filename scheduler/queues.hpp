/// \file
/// Intrusive queues of the scheduler. Elements are any type with a `T* next` member; an element
/// is in at most one queue at a time.
///  - fifo: private to one VP, no atomics (the ready queue's fast path);
///  - mpsc_inbox: lock-free multi-producer / single-consumer; producers push one element with a
///    CAS (Treiber), the consumer takes the whole list with one exchange and restores FIFO order.
///    There is no ABA problem: the consumer never pops single elements.
///  - locked_fifo: a spinlock-protected FIFO with a relaxed size hint, for queues that other VPs
///    steal from.
#pragma once

#include <atomic>
#include <cstddef>

#include "lib/spinlock.hpp"
#include "lib/tsan.hpp"

namespace mpc::sched::detail {

template <class T>
class fifo {
public:
    bool empty() const noexcept { return head_ == nullptr; }
    std::size_t size() const noexcept { return size_; }
    void push_back(T* e) noexcept {
        e->next = nullptr;
        if (tail_ != nullptr) {
            tail_->next = e;
        } else {
            head_ = e;
        }
        tail_ = e;
        ++size_;
    }
    void push_front(T* e) noexcept {
        e->next = head_;
        head_ = e;
        if (tail_ == nullptr) {
            tail_ = e;
        }
        ++size_;
    }
    /// Appends a null-terminated chain of `n` elements whose last element is `last`.
    void append_chain(T* first, T* last, std::size_t n) noexcept {
        if (first == nullptr) {
            return;
        }
        last->next = nullptr;
        if (tail_ != nullptr) {
            tail_->next = first;
        } else {
            head_ = first;
        }
        tail_ = last;
        size_ += n;
    }
    T* pop_front() noexcept {
        T* e = head_;
        if (e != nullptr) {
            head_ = e->next;
            if (head_ == nullptr) {
                tail_ = nullptr;
            }
            e->next = nullptr;
            --size_;
        }
        return e;
    }
    T* front() const noexcept { return head_; }
    /// Empties the queue; returns its elements as a null-terminated chain, oldest first.
    T* take_all() noexcept {
        T* chain = head_;
        head_ = tail_ = nullptr;
        size_ = 0;
        return chain;
    }
    /// Removes e if present (O(n)); true if it was there.
    bool remove(T* e) noexcept {
        T* prev = nullptr;
        for (T* c = head_; c != nullptr; prev = c, c = c->next) {
            if (c == e) {
                (prev ? prev->next : head_) = c->next;
                if (tail_ == c) {
                    tail_ = prev;
                }
                c->next = nullptr;
                --size_;
                return true;
            }
        }
        return false;
    }

private:
    T* head_ = nullptr;
    T* tail_ = nullptr;
    std::size_t size_ = 0;
};

template <class T>
class mpsc_inbox {
public:
    /// Any thread. Returns true when the inbox was empty before (the consumer may be asleep).
    bool push(T* e) noexcept {
        T* old = head_.load(std::memory_order_relaxed);
        tsan_release(&head_);  // see lib/tsan.hpp
        do {
            e->next = old;
        } while (!head_.compare_exchange_weak(old, e, std::memory_order_seq_cst, std::memory_order_relaxed));
        return old == nullptr;
    }
    /// Cheap check for the consumer's loop (also used in the sleep protocol, hence seq_cst).
    bool empty() const noexcept { return head_.load(std::memory_order_seq_cst) == nullptr; }
    bool maybe_nonempty() const noexcept { return head_.load(std::memory_order_relaxed) != nullptr; }
    /// Consumer only: moves everything, oldest first, to the end of `out`. Returns the count.
    std::size_t drain_to(fifo<T>& out) noexcept {
        T* lifo = head_.exchange(nullptr, std::memory_order_acquire);
        if (lifo == nullptr) {
            return 0;
        }
        tsan_acquire(&head_);
        T* first = nullptr;
        T* last = lifo;
        std::size_t n = 0;
        while (lifo != nullptr) {  // reverse: LIFO -> FIFO
            T* nx = lifo->next;
            lifo->next = first;
            first = lifo;
            lifo = nx;
            ++n;
        }
        out.append_chain(first, last, n);
        return n;
    }

private:
    std::atomic<T*> head_{nullptr};
};

template <class T>
class locked_fifo {
public:
    /// Returns the queue length after the push.
    std::size_t push_back(T* e) noexcept {
        spin_guard g(lock_);
        q_.push_back(e);
        std::size_t n = q_.size();
        size_.store(n, std::memory_order_seq_cst);  // pairs with a sleeping VP's re-check
        return n;
    }
    T* pop_front() noexcept {
        if (size_.load(std::memory_order_relaxed) == 0) {
            return nullptr;
        }
        spin_guard g(lock_);
        T* e = q_.pop_front();
        size_.store(q_.size(), std::memory_order_relaxed);
        return e;
    }
    /// Racy hint, good enough to decide whether to take the lock.
    std::size_t size_hint() const noexcept { return size_.load(std::memory_order_relaxed); }
    /// The same, ordered for the sleep protocol (store sleeping; then this load).
    bool empty_seq_cst() const noexcept { return size_.load(std::memory_order_seq_cst) == 0; }

private:
    spinlock lock_;
    fifo<T> q_;
    std::atomic<std::size_t> size_{0};
};

}  // namespace mpc::sched::detail
