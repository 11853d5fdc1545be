/// \file
/// StarPU 1.3 C API: the calls of starpu_thread.h that StarPU's library defines as functions
/// (the others are macros naming the pthread call). Spin locks are StarPU's one-word lock;
/// semaphores and mutexes are the C library's. Where a waiting StarPU thread would block its
/// kernel thread, a ULT (an MPC worker) lets its VP run the other ULTs instead: one of them may
/// be the one to release the lock or post the semaphore.

#include <starpu.h>

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

#include <time.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <unordered_map>

#include "lib/spinlock.hpp"
#include "lib/tsan.hpp"
#include "scheduler/sched.hpp"

namespace mpc::tg::starpu {
namespace {

/// PAUSEs between two tries of a contended spin lock before the waiter yields (the holder of a
/// short critical section on another core usually leaves it within them).
constexpr int spin_pauses = 128;

std::atomic_ref<unsigned> lock_word(starpu_pthread_spinlock_t* lock) noexcept {
    return std::atomic_ref<unsigned>(lock->taken);
}

/// Test and test-and-set: the exchange only when the word looks free.
bool try_take(starpu_pthread_spinlock_t* lock) noexcept {
    auto w = lock_word(lock);
    if (w.load(std::memory_order_relaxed) == 0 && w.exchange(1, std::memory_order_acquire) == 0) {
        tsan_acquire(&lock->taken);
        return true;
    }
    return false;
}

/// Gives the processor away: to the VP's other ULTs in a ULT, to the kernel's other threads
/// otherwise (sched_yield, which libmpc makes a ULT yield only for a rank's ULTs).
void yield_processor() noexcept {
    if (sched::self() != nullptr) {
        sched::yield();
    } else {
        ::sched_yield();
    }
}

/// sem_wait for a ULT: parked until sem_trywait succeeds, or fails otherwise than EAGAIN/EINTR.
int ult_sem_wait(sem_t* sem) noexcept {
    int err = 0;
    sched::wait_until([sem, &err] {
        if (::sem_trywait(sem) == 0) {
            return true;
        }
        if (errno == EAGAIN || errno == EINTR) {
            return false;
        }
        err = errno;
        return true;
    });
    if (err != 0) {
        errno = err;
        return -1;
    }
    return 0;
}

/// Signals sent through starpu_pthread_cond_signal/_broadcast, counted per condition, so that
/// a ULT's wait (which is not always inside pthread_cond_timedwait) cannot miss one.
struct cond_signals {
    std::mutex m;
    std::unordered_map<const void*, std::uint64_t> sent;
};
cond_signals& signals() noexcept {
    static cond_signals* s = new cond_signals;  // never destroyed: conditions outlive main
    return *s;
}
std::uint64_t signals_sent(const void* cond) noexcept {
    cond_signals& s = signals();
    std::lock_guard g(s.m);
    auto it = s.sent.find(cond);
    return it == s.sent.end() ? 0 : it->second;
}
void count_signal(const void* cond) noexcept {
    cond_signals& s = signals();
    std::lock_guard g(s.m);
    try {
        ++s.sent[cond];
    } catch (...) {
        // no memory for the count: a ULT waiting on cond still sees the signal in timedwait
    }
}

constexpr long slice_ns = 200'000;  ///< a ULT's wait inside pthread_cond_timedwait at a time

timespec later(const timespec& t, long ns) noexcept {
    timespec r = t;
    r.tv_nsec += ns;
    while (r.tv_nsec >= 1'000'000'000L) {
        r.tv_nsec -= 1'000'000'000L;
        ++r.tv_sec;
    }
    return r;
}
bool before(const timespec& a, const timespec& b) noexcept {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/// A ULT's condition wait: slices of pthread_cond_timedwait, and between them the mutex
/// released and the VP given to its other ULTs. Returns 0 when signalled, ETIMEDOUT past
/// abstime (nullptr: no limit), or pthread's error.
int ult_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex, const timespec* abstime) noexcept {
    const std::uint64_t seen = signals_sent(cond);
    for (;;) {
        timespec now{};
        ::clock_gettime(CLOCK_REALTIME, &now);  // pthread_cond_timedwait's default clock
        if (abstime != nullptr && !before(now, *abstime)) {
            return ETIMEDOUT;
        }
        timespec until = later(now, slice_ns);
        if (abstime != nullptr && before(*abstime, until)) {
            until = *abstime;
        }
        const int r = ::pthread_cond_timedwait(cond, mutex, &until);
        if (r == 0) {
            return 0;
        }
        if (r != ETIMEDOUT) {
            return r;
        }
        if (signals_sent(cond) != seen) {
            return 0;  // signalled while this ULT was not inside timedwait
        }
        ::pthread_mutex_unlock(mutex);
        sched::yield();  // the worker that shares this kernel thread runs meanwhile
        ::pthread_mutex_lock(mutex);
        if (signals_sent(cond) != seen) {
            return 0;
        }
    }
}

}  // namespace
}  // namespace mpc::tg::starpu

namespace sp = mpc::tg::starpu;

extern "C" {

int starpu_pthread_setname(const char* name) { return ::pthread_setname_np(::pthread_self(), name); }

int starpu_pthread_mutex_lock_sched(starpu_pthread_mutex_t* mutex) { return ::pthread_mutex_lock(mutex); }
int starpu_pthread_mutex_unlock_sched(starpu_pthread_mutex_t* mutex) { return ::pthread_mutex_unlock(mutex); }
int starpu_pthread_mutex_trylock_sched(starpu_pthread_mutex_t* mutex) { return ::pthread_mutex_trylock(mutex); }

void starpu_pthread_mutex_check_sched(starpu_pthread_mutex_t* mutex, char* file, int line) {
    (void)mutex;
    (void)file;
    (void)line;
}

int starpu_pthread_spin_init(starpu_pthread_spinlock_t* lock, int pshared) {
    (void)pshared;
    sp::lock_word(lock).store(0, std::memory_order_relaxed);
    return 0;
}

int starpu_pthread_spin_destroy(starpu_pthread_spinlock_t* lock) {
    (void)lock;
    return 0;
}

int starpu_pthread_spin_lock(starpu_pthread_spinlock_t* lock) {
    for (;;) {
        for (int i = 0; i < sp::spin_pauses; ++i) {
            if (sp::try_take(lock)) {
                return 0;
            }
            mpc::cpu_relax();
        }
        sp::yield_processor();
    }
}

int starpu_pthread_spin_trylock(starpu_pthread_spinlock_t* lock) { return sp::try_take(lock) ? 0 : EBUSY; }

int starpu_pthread_spin_unlock(starpu_pthread_spinlock_t* lock) {
    mpc::tsan_release(&lock->taken);
    sp::lock_word(lock).store(0, std::memory_order_release);
    return 0;
}

int starpu_sem_wait(starpu_sem_t* sem) {
    if (mpc::sched::self() != nullptr) {
        return sp::ult_sem_wait(sem);
    }
    int r = 0;
    while ((r = ::sem_wait(sem)) == -1 && errno == EINTR) {
    }
    return r;
}

int starpu_sem_trywait(starpu_sem_t* sem) { return ::sem_trywait(sem); }

int starpu_pthread_cond_signal(starpu_pthread_cond_t* cond) {
    sp::count_signal(cond);
    return ::pthread_cond_signal(cond);
}

int starpu_pthread_cond_broadcast(starpu_pthread_cond_t* cond) {
    sp::count_signal(cond);
    return ::pthread_cond_broadcast(cond);
}

int starpu_pthread_cond_wait(starpu_pthread_cond_t* cond, starpu_pthread_mutex_t* mutex) {
    if (mpc::sched::self() != nullptr) {
        return sp::ult_cond_wait(cond, mutex, nullptr);
    }
    return ::pthread_cond_wait(cond, mutex);
}

int starpu_pthread_cond_timedwait(starpu_pthread_cond_t* cond, starpu_pthread_mutex_t* mutex,
                                  const struct timespec* abstime) {
    if (mpc::sched::self() != nullptr) {
        return sp::ult_cond_wait(cond, mutex, abstime);
    }
    return ::pthread_cond_timedwait(cond, mutex, abstime);
}

int starpu_pthread_cond_destroy(starpu_pthread_cond_t* cond) {
    {
        sp::cond_signals& s = sp::signals();
        std::lock_guard g(s.m);
        s.sent.erase(cond);
    }
    return ::pthread_cond_destroy(cond);
}

}  // extern "C"
