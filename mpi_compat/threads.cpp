/// \file
/// Threads and blocking calls of ranks.
/// - MPI_THREAD_MULTIPLE for threads that ranks create themselves (pthreads, OpenMP,
///   std::thread): libmpc interposes pthread_create so that a new thread inherits the rank of the
///   code that created it; MPI calls from that thread then act for that rank. Such a thread is a
///   plain kernel thread, not a ULT: its blocking MPI calls poll instead of parking.
/// - pthread_join, sleep, usleep, nanosleep and sched_yield called by a ULT become ULT waits.

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>

#include <cstdlib>
#include <cstring>
#include <new>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
namespace {
[[gnu::tls_model("initial-exec")]] thread_local task* tls_task = nullptr;

struct start_args {
    void* (*fn)(void*);
    void* arg;
    task* t;
};

// Under a sanitizer, its interceptor has wrapped `fn` in its own thread-start trampoline, which
// sets the thread up for the sanitizer: nothing here may run instrumented code (nor call
// intercepted functions such as free) before it.
__attribute__((no_sanitize("address", "thread", "undefined"))) void* thread_start(void* p) {
    auto* a = static_cast<start_args*>(p);
    tls_task = a->t;
    void* rc = a->fn(a->arg);
    std::free(p);  // not reached if the thread calls pthread_exit: a few bytes leak then
    return rc;
}

using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

/// The next definition of an interposed function after libmpc: glibc's. (A sanitizer's
/// interceptor, when one is loaded, comes before libmpc in lookup order and has already run.)
template <class Fn>
Fn next_definition(const char* name) noexcept {
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

/// The next definition of one function: looked up while the library loads (a dynamic
/// initialiser below), or on the first call when that comes earlier: from the constructor of a
/// library initialised before libmpc, or from a thread it started there (OpenBLAS starts its
/// threads in its constructor, and they call sched_yield). Atomic, so that such a thread and
/// libmpc's initialiser may both store it (the same value).
template <class Fn>
class next_fn {
public:
    constexpr explicit next_fn(const char* name) noexcept : name_(name) {}
    Fn get() noexcept {
        Fn f = fn_.load(std::memory_order_relaxed);
        if (f == nullptr) {
            f = next_definition<Fn>(name_);
            fn_.store(f, std::memory_order_relaxed);
        }
        return f;
    }

private:
    std::atomic<Fn> fn_{nullptr};
    const char* name_;
};

using join_fn = int (*)(pthread_t, void**);
using sleep_fn = int (*)(const struct timespec*, struct timespec*);
using yield_fn = int (*)(void);
constinit next_fn<create_fn> next_create("pthread_create");
constinit next_fn<join_fn> next_join("pthread_join");
constinit next_fn<join_fn> next_tryjoin("pthread_tryjoin_np");  // not the sanitizer's
constinit next_fn<sleep_fn> next_nanosleep("nanosleep");
constinit next_fn<yield_fn> next_yield("sched_yield");
/// Resolved while the library loads, before the program's own threads exist.
[[maybe_unused]] const bool resolved_at_load = (next_create.get(), next_join.get(), next_tryjoin.get(),
                                                next_nanosleep.get(), next_yield.get(), true);
}  // namespace

task* thread_task() noexcept { return tls_task; }

}  // namespace mpc::mpi

extern "C" int pthread_create(pthread_t* th, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
    using namespace mpc::mpi;
    create_fn next = next_create.get();
    task* t = current();
    if (t == nullptr) {  // not created by a rank: nothing to inherit
        return next(th, attr, fn, arg);
    }
    auto* a = static_cast<start_args*>(std::malloc(sizeof(start_args)));
    if (a == nullptr) {
        return EAGAIN;
    }
    *a = {fn, arg, t};
    int rc = next(th, attr, &thread_start, a);
    if (rc != 0) {
        std::free(a);
    }
    return rc;
}

// ---- blocking calls made by ranks ------------------------------------------------------------
// A rank is a ULT: a call that blocks its kernel thread blocks every rank of that VP, and can
// deadlock the job (rank 0 joins a thread that waits for a message from a rank on the same VP).
// The common ones are turned into ULT waits when called from a ULT; elsewhere they pass through.

namespace {
/// A rank's own ULT (not a thread it created, nor the runtime's primary ULT in finalize).
bool in_ult() noexcept { return mpc::sched::self() != nullptr && mpc::mpi::current() != nullptr; }

void ult_sleep_ns(long long ns) noexcept {
    mpc::sched::sleep_for(std::chrono::nanoseconds(ns > 0 ? ns : 0));
}
}  // namespace

extern "C" {
int pthread_join(pthread_t th, void** ret) {
    if (!in_ult()) {
        return mpc::mpi::next_join.get()(th, ret);
    }
    // Poll with growing pauses; the VP runs the other ULTs meanwhile.
    for (long long pause = 1000;; pause = pause < 1'000'000 ? pause * 2 : pause) {
        int rc = mpc::mpi::next_tryjoin.get()(th, ret);
        if (rc != EBUSY) {
            return rc;
        }
        ult_sleep_ns(pause);
    }
}

int nanosleep(const struct timespec* req, struct timespec* rem) {
    if (!in_ult() || req == nullptr || req->tv_nsec < 0 || req->tv_nsec >= 1'000'000'000L) {
        return mpc::mpi::next_nanosleep.get()(req, rem);
    }
    ult_sleep_ns(static_cast<long long>(req->tv_sec) * 1'000'000'000LL + req->tv_nsec);
    if (rem != nullptr) {
        rem->tv_sec = 0;
        rem->tv_nsec = 0;
    }
    return 0;
}

int usleep(useconds_t us) {
    struct timespec ts = {static_cast<time_t>(us / 1'000'000), static_cast<long>(us % 1'000'000) * 1000};
    return nanosleep(&ts, nullptr);
}

unsigned int sleep(unsigned int seconds) {
    struct timespec ts = {static_cast<time_t>(seconds), 0};
    return nanosleep(&ts, nullptr) == 0 ? 0 : seconds;
}

int sched_yield(void) {
    if (in_ult()) {
        mpc::sched::yield();
        return 0;
    }
    return mpc::mpi::next_yield.get()();
}
}
