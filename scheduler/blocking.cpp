/// \file
/// Calls that block in the kernel (file I/O), run off the VPs: sched::blocking_call().
///
/// A ULT that calls read() or write() on a file blocks its VP's kernel thread, and with it
/// every other ULT of the VP (a worker of the task layer, the program's primary ULT, ranks)
/// for as long as the disk takes. blocking_call() hands the call to a helper kernel thread
/// and parks the ULT instead; its VP runs the others meanwhile, and the helper wakes the ULT
/// when the call has returned.
///
/// The job lives on the caller's stack. Its word says where it stands: 0 pending, 1 done, or
/// the parked caller. The caller publishes itself with a compare-and-swap 0 -> self (after
/// its context is saved: sched::park_publish); the helper, once fn has returned, exchanges
/// the word with 1 and wakes what it found. Whichever comes second sees the other's value:
/// a call that ended before the caller parked lets it continue at once, and the helper
/// touches the job no more after its exchange (the caller may have returned by then).
///
/// blocking_start() queues a job nobody waits for (the helper frees it once fn has returned;
/// fn signals its own end).
///
/// Helpers start on demand, up to MPC_SCHED_IO_THREADS, and then wait on a condition
/// variable for the next job; they never end (a process exits with them asleep). While a job
/// is out, the deadlock check does not count the ULT waiting for it as blocked for good
/// (runtime::blocking): a slow disk is not a deadlock; and sched::finalize() waits until every
/// job is over, wake-up included (a woken caller may end before its waker has left its VP).
/// After fork() the child starts with none (their threads did not survive) and makes them
/// again when it needs them.

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "scheduler/detail.hpp"
#include "scheduler/sync.hpp"

namespace mpc::sched {
namespace {

constexpr std::uintptr_t job_pending = 0;
constexpr std::uintptr_t job_done = 1;

struct job {
    void (*fn)(void*);
    void* arg;
    bool detached = false;  ///< blocking_start(): nobody waits, the helper frees it
    std::atomic<std::uintptr_t> word{job_pending};
    job* next = nullptr;
};

struct pool {
    std::mutex m;
    std::condition_variable cv;
    job* head = nullptr;
    job* tail = nullptr;
    int threads = 0;  ///< helpers started (under m)
    int idle = 0;     ///< helpers waiting for a job (under m)
};

/// Never destroyed: helpers may still wait on its condition variable when the process exits.
pool* g_pool = nullptr;
std::once_flag g_pool_once;

void fork_child() noexcept {
    if (g_pool != nullptr) {
        g_pool = new (g_pool) pool;  // the parent's helpers are not in the child: none started
    }
}

pool& the_pool() noexcept {
    std::call_once(g_pool_once, [] {
        g_pool = new pool;
        ::pthread_atfork(nullptr, nullptr, &fork_child);
    });
    return *g_pool;
}

/// The job's end: the word to done, the caller (if parked) woken. The job is not touched after.
/// Counted out last: until then sched::finalize() waits, as the wake-up (here, or fn's own for
/// a detached job) may still be touching the caller's VP after the caller went on.
void finish(job* j) noexcept {
    if (j->detached) {
        delete j;
    } else if (const std::uintptr_t w = j->word.exchange(job_done, std::memory_order_acq_rel); w != job_pending) {
        wake(reinterpret_cast<ult*>(w));
    }
    detail::rt().blocking.fetch_sub(1, std::memory_order_acq_rel);
}

void helper_main(pool* p) noexcept {
    // Started from a VP, the thread inherited its core: a helper may run on any core the
    // program was given (the affinity of init()'s caller).
    if (cpu_set_t cpus; detail::caller_affinity(&cpus)) {
        ::sched_setaffinity(0, sizeof cpus, &cpus);
    }
    std::unique_lock<std::mutex> lk(p->m);
    for (;;) {
        while (p->head == nullptr) {
            ++p->idle;
            p->cv.wait(lk);
            --p->idle;
        }
        job* j = p->head;
        p->head = j->next;
        if (p->head == nullptr) {
            p->tail = nullptr;
        }
        lk.unlock();
        j->fn(j->arg);
        finish(j);
        lk.lock();
    }
}

/// Queues j; starts a helper when none waits and the limit allows. False: no helper can run
/// it (none could be started), the caller runs it itself.
bool enqueue(pool& p, job* j, int limit) noexcept {
    std::lock_guard<std::mutex> g(p.m);
    if (p.idle == 0 && p.threads < limit) {  // else j waits for the first helper free
        try {
            std::thread(&helper_main, &p).detach();
            ++p.threads;
        } catch (...) {
            if (p.threads == 0) {
                MPC_LOG(warn, sched, "no helper thread for blocking calls could be started: they run on the VPs");
                return false;
            }
        }
    }
    (p.tail != nullptr ? p.tail->next : p.head) = j;
    p.tail = j;
    p.cv.notify_one();
    return true;
}

}  // namespace

bool blocking_start(void (*fn)(void*), void* arg) noexcept {
    const int limit = detail::rt().io_threads;
    if (limit == 0 || !detail::rt().running.load(std::memory_order_acquire)) {
        return false;
    }
    job* j = new (std::nothrow) job{fn, arg, true};
    if (j == nullptr) {
        return false;
    }
    detail::rt().blocking.fetch_add(1, std::memory_order_acq_rel);
    if (!enqueue(the_pool(), j, limit)) {
        detail::rt().blocking.fetch_sub(1, std::memory_order_acq_rel);
        delete j;
        return false;
    }
    return true;
}

void blocking_call(void (*fn)(void*), void* arg, const char* what) noexcept {
    vp* v = detail::this_vp();
    const int limit = detail::rt().io_threads;
    if (v == nullptr || v->current == nullptr || limit == 0) {
        fn(arg);  // a plain thread (blocking it blocks nobody else), or no helpers wanted
        return;
    }
    pool& p = the_pool();
    job j{fn, arg};
    detail::rt().blocking.fetch_add(1, std::memory_order_acq_rel);
    if (!enqueue(p, &j, limit)) {
        detail::rt().blocking.fetch_sub(1, std::memory_order_acq_rel);
        fn(arg);
        return;
    }
    // Not stealable while it parks: it publishes after its switch, reading j on its stack, and
    // a thief must not run it meanwhile (as wait_list::wait).
    ult* me = v->current;
    const bool stealable = me->stealable;
    me->stealable = false;
    set_wait_reason(what);
    park_publish(
        [](void* a, ult* self) noexcept {
            std::uintptr_t expect = job_pending;
            return static_cast<job*>(a)->word.compare_exchange_strong(expect, reinterpret_cast<std::uintptr_t>(self),
                                                                      std::memory_order_acq_rel,
                                                                      std::memory_order_acquire);
        },
        &j, what);
    me->stealable = stealable;
    // The helper's exchange (release) before its wake-up, or before our failed CAS (acquire):
    // fn's effects are visible here.
    while (j.word.load(std::memory_order_acquire) != job_done) {
        cpu_relax();  // not reached: parked until the exchange, or the CAS saw done
    }
}

}  // namespace mpc::sched
