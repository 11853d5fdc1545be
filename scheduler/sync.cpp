/// \file
/// Blocking primitives (see sync.hpp). Each keeps its state under a spinlock and parks waiters
/// with the post-switch unlock of the park protocol; releases hand ownership directly to the
/// oldest waiter, so there is no thundering herd and no barging.

#include "scheduler/sync.hpp"

#include <cstdlib>

#include "lib/log.hpp"
#include "scheduler/detail.hpp"

namespace mpc::sched {

using detail::park;
using detail::post_action;
using detail::post_op;

namespace {
ult* running_ult(const char* what) noexcept {
    vp* v = detail::this_vp();
    if (v == nullptr || v->current == nullptr) {
        MPC_LOG(fatal, sched, "%s may block and must be called from a ULT, not from a plain thread", what);
        std::abort();
    }
    return v->current;
}
}  // namespace

void wake(ult* u) noexcept { detail::make_ready(u); }

void park_publish(bool (*publish)(void*, ult*), void* arg, const char* what) noexcept {
    ult* me = running_ult(what);
    detail::park_publish_current(detail::this_vp(), me, publish, arg, what);
}

bool spin_until(bool (*cond)(void*), void* arg, std::uint64_t max_ns) noexcept {
    vp* v = detail::this_vp();
    if (v == nullptr || v->current == nullptr) {
        return cond(arg);
    }
    return detail::spin_until_current(v, cond, arg, max_ns);
}

std::size_t wake_all(ult* chain) noexcept {
    std::size_t n = 0;
    while (chain != nullptr) {
        ult* nx = chain->next;
        chain->next = nullptr;
        detail::make_ready(chain);
        chain = nx;
        ++n;
    }
    return n;
}

// ---- wait_list

namespace {
struct wait_list_publish {
    std::atomic<ult*>* head;
    bool (*cond)(void*);
    void* arg;
};
}  // namespace

void wait_list::wait_unless(bool (*cond)(void*), void* arg, const char* what) noexcept {
    // The publish below runs cond after the waiter is on the list, where a waker may resume it
    // at once: a stealable ULT would publish after its switch (park_publish), and a thief
    // could then run it, return and reuse the stack that holds p and cond's argument while the
    // publish still reads them. While it waits here it is therefore not stealable: it
    // publishes before leaving its VP, which alone resumes it (its inbox, its queues).
    ult* me = running_ult(what);
    const bool stealable = me->stealable;
    me->stealable = false;
    wait_list_publish p{&head_, cond, arg};
    park_publish(
        [](void* a, ult* self) noexcept {
            auto* q = static_cast<wait_list_publish*>(a);
            ult* h = q->head->load(std::memory_order_relaxed);
            do {
                self->next = h;
            } while (!q->head->compare_exchange_weak(h, self, std::memory_order_acq_rel, std::memory_order_relaxed));
            // Queued. A waker's exchange is ordered with this CAS on head: either it comes after
            // (and wakes self), or it came before, and then what it published is visible here;
            // then wake the list (self in it, unless a later waker has taken it already).
            if (q->cond(q->arg)) {
                sched::wake_all(q->head->exchange(nullptr, std::memory_order_acq_rel));
            }
            return true;
        },
        &p, what);
    me->stealable = stealable;
}

std::size_t wait_list::wake_all() noexcept { return sched::wake_all(head_.exchange(nullptr, std::memory_order_acq_rel)); }

void wait_queue::wait(spinlock& held, const char* what) noexcept {
    ult* me = running_ult(what);
    if (me->wait_reason == nullptr) {  // keep a reason the caller gave (set_wait_reason)
        me->wait_reason = what;
    }
    q_.push_back(me);
    park({post_op::unlock, me, &held, nullptr});
}

ult* wait_queue::pop_locked() noexcept { return q_.pop_front(); }

ult* wait_queue::take_all_locked() noexcept { return q_.take_all(); }

bool wait_queue::notify_one_locked() noexcept {
    ult* u = pop_locked();
    if (u != nullptr) {
        detail::make_ready(u);
    }
    return u != nullptr;
}

std::size_t wait_queue::notify_all_locked() noexcept {
    std::size_t n = 0;
    while (notify_one_locked()) {
        ++n;
    }
    return n;
}

// ---- mutex

void mutex::lock() noexcept {
    running_ult("mpc::sched::mutex::lock");
    lk_.lock();
    if (!locked_) {
        locked_ = true;
        lk_.unlock();
        return;
    }
    waiters_.wait(lk_, "mpc::sched::mutex::lock");  // unlock() hands ownership to us
}

bool mutex::try_lock() noexcept {
    spin_guard g(lk_);
    if (locked_) {
        return false;
    }
    locked_ = true;
    return true;
}

void mutex::unlock() noexcept {
    lk_.lock();
    ult* next = waiters_.pop_locked();
    if (next == nullptr) {
        locked_ = false;
    }
    lk_.unlock();
    if (next != nullptr) {
        detail::make_ready(next);
    }
}

// ---- condition variable

void condition_variable::wait(mutex& m) noexcept {
    running_ult("mpc::sched::condition_variable::wait");
    lk_.lock();
    m.unlock();  // notify() needs lk_, so no notification can slip between unlock and park
    waiters_.wait(lk_, "mpc::sched::condition_variable::wait");
    m.lock();
}

void condition_variable::notify_one() noexcept {
    lk_.lock();
    ult* u = waiters_.pop_locked();
    lk_.unlock();
    if (u != nullptr) {
        wake(u);
    }
}

void condition_variable::notify_all() noexcept {
    lk_.lock();
    ult* chain = waiters_.take_all_locked();
    lk_.unlock();
    wake_all(chain);
}

// ---- barrier

bool barrier::arrive_and_wait() noexcept {
    running_ult("mpc::sched::barrier::arrive_and_wait");
    lk_.lock();
    if (++arrived_ >= count_) {
        arrived_ = 0;
        ult* chain = waiters_.take_all_locked();
        lk_.unlock();
        wake_all(chain);
        return true;
    }
    waiters_.wait(lk_, "mpc::sched::barrier::arrive_and_wait");
    return false;
}

// ---- semaphore

void semaphore::acquire() noexcept {
    running_ult("mpc::sched::semaphore::acquire");
    lk_.lock();
    if (count_ > 0) {
        --count_;
        lk_.unlock();
        return;
    }
    waiters_.wait(lk_, "mpc::sched::semaphore::acquire");  // release() hands us the unit
}

bool semaphore::try_acquire() noexcept {
    spin_guard g(lk_);
    if (count_ == 0) {
        return false;
    }
    --count_;
    return true;
}

void semaphore::release(std::size_t n) noexcept {
    ult* chain = nullptr;
    ult* last = nullptr;
    lk_.lock();
    for (; n > 0; --n) {
        ult* u = waiters_.pop_locked();
        if (u == nullptr) {
            count_ += n;
            break;
        }
        (last != nullptr ? last->next : chain) = u;
        last = u;
    }
    lk_.unlock();
    wake_all(chain);  // after unlocking: a woken waiter may destroy the semaphore at once
}

}  // namespace mpc::sched
