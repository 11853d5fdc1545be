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
        MPC_LOG(fatal, sched, "%s may block and must be called from a ULT", what);
        std::abort();
    }
    return v->current;
}
}  // namespace

void wake(ult* u) noexcept { detail::make_ready(u); }

void wait_queue::wait(spinlock& held) noexcept {
    ult* me = running_ult("wait_queue::wait");
    me->next = nullptr;
    if (tail_ != nullptr) {
        tail_->next = me;
    } else {
        head_ = me;
    }
    tail_ = me;
    park({post_op::unlock, me, &held, nullptr});
}

ult* wait_queue::pop_locked() noexcept {
    ult* u = head_;
    if (u != nullptr) {
        head_ = u->next;
        if (head_ == nullptr) {
            tail_ = nullptr;
        }
        u->next = nullptr;
    }
    return u;
}

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
    lk_.lock();
    if (!locked_) {
        locked_ = true;
        lk_.unlock();
        return;
    }
    set_wait_reason("mpc::sched::mutex::lock");
    waiters_.wait(lk_);  // ownership is handed to us by unlock()
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
    lk_.lock();
    m.unlock();  // notify() needs lk_, so no notification can slip between unlock and park
    set_wait_reason("mpc::sched::condition_variable::wait");
    waiters_.wait(lk_);
    m.lock();
}

void condition_variable::notify_one() noexcept {
    spin_guard g(lk_);
    waiters_.notify_one_locked();
}

void condition_variable::notify_all() noexcept {
    spin_guard g(lk_);
    waiters_.notify_all_locked();
}

// ---- barrier

bool barrier::arrive_and_wait() noexcept {
    lk_.lock();
    if (++arrived_ == count_) {
        arrived_ = 0;
        ++round_;
        waiters_.notify_all_locked();
        lk_.unlock();
        return true;
    }
    set_wait_reason("mpc::sched::barrier::arrive_and_wait");
    waiters_.wait(lk_);
    return false;
}

// ---- semaphore

void semaphore::acquire() noexcept {
    lk_.lock();
    if (count_ > 0) {
        --count_;
        lk_.unlock();
        return;
    }
    set_wait_reason("mpc::sched::semaphore::acquire");
    waiters_.wait(lk_);  // release() hands the unit to us directly
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
    lk_.lock();
    for (; n > 0; --n) {
        if (!waiters_.notify_one_locked()) {
            count_ += n;
            break;
        }
    }
    lk_.unlock();
}

}  // namespace mpc::sched
