/* StarPU 1.3 API on MPC: the checked thread macros (STARPU_PTHREAD_*): each call that fails
 * stops the program with the call, the error and the place, as StarPU's do (the key ones print
 * the same line and go on, as StarPU's). The TRY forms and COND_TIMEDWAIT give the call's
 * result: 0, or EBUSY (ETIMEDOUT) which is not a failure. */
#ifndef MPC_STARPU_THREAD_UTIL_H
#define MPC_STARPU_THREAD_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starpu_thread.h"

#define MPC_STARPU_PTHREAD_CHECK(call, what)                                                             \
    do {                                                                                                 \
        int p_ret_ = (call);                                                                             \
        if (p_ret_ != 0) {                                                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, what, strerror(p_ret_));       \
            abort();                                                                                     \
        }                                                                                                \
    } while (0)

/* The same line, without stopping. */
#define MPC_STARPU_PTHREAD_WARN(call, what)                                                              \
    do {                                                                                                 \
        int p_ret_ = (call);                                                                             \
        if (p_ret_ != 0) {                                                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, what, strerror(p_ret_));       \
        }                                                                                                \
    } while (0)

/* r when it is 0 or `ok` (a non-failure, such as EBUSY); otherwise stops the program naming what. */
static inline int mpc_starpu_try_check_(int r, int ok, const char *what, const char *file, int line) {
    if (r != 0 && r != ok) {
        fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, strerror(r));
        abort();
    }
    return r;
}

#define STARPU_PTHREAD_CREATE(thread, attr, routine, arg) MPC_STARPU_PTHREAD_CHECK(pthread_create(thread, attr, routine, arg), "pthread_create")
#define STARPU_PTHREAD_CREATE_ON(name, thread, attr, routine, arg, where) \
    MPC_STARPU_PTHREAD_CHECK(starpu_pthread_create_on(name, thread, attr, routine, arg, where), "starpu_pthread_create_on")
#define STARPU_PTHREAD_JOIN(thread, retval) MPC_STARPU_PTHREAD_CHECK(pthread_join(thread, retval), "pthread_join")
#define STARPU_PTHREAD_KEY_CREATE(key, destr) MPC_STARPU_PTHREAD_WARN(pthread_key_create(key, destr), "pthread_key_create")
#define STARPU_PTHREAD_KEY_DELETE(key) MPC_STARPU_PTHREAD_WARN(pthread_key_delete(key), "pthread_key_delete")
#define STARPU_PTHREAD_SETSPECIFIC(key, ptr) MPC_STARPU_PTHREAD_WARN(pthread_setspecific(key, ptr), "pthread_setspecific")
#define STARPU_PTHREAD_GETSPECIFIC(key) pthread_getspecific(key)

#define STARPU_PTHREAD_MUTEX_INIT(mutex, attr) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_init(mutex, attr), "pthread_mutex_init")
#define STARPU_PTHREAD_MUTEX_DESTROY(mutex) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
#define STARPU_PTHREAD_MUTEX_LOCK(mutex) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_lock(mutex), "pthread_mutex_lock")
#define STARPU_PTHREAD_MUTEX_UNLOCK(mutex) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
/** 0 when taken, EBUSY when another holds it (any other failure stops the program). */
#define STARPU_PTHREAD_MUTEX_TRYLOCK(mutex) mpc_starpu_try_check_(pthread_mutex_trylock(mutex), EBUSY, "pthread_mutex_trylock", __FILE__, __LINE__)
#define STARPU_PTHREAD_MUTEX_LOCK_SCHED(mutex) MPC_STARPU_PTHREAD_CHECK(starpu_pthread_mutex_lock_sched(mutex), "starpu_pthread_mutex_lock_sched")
#define STARPU_PTHREAD_MUTEX_UNLOCK_SCHED(mutex) MPC_STARPU_PTHREAD_CHECK(starpu_pthread_mutex_unlock_sched(mutex), "starpu_pthread_mutex_unlock_sched")
#define STARPU_PTHREAD_MUTEX_TRYLOCK_SCHED(mutex) \
    mpc_starpu_try_check_(starpu_pthread_mutex_trylock_sched(mutex), EBUSY, "starpu_pthread_mutex_trylock_sched", __FILE__, __LINE__)
#define STARPU_PTHREAD_COND_INIT(cond, attr) MPC_STARPU_PTHREAD_CHECK(pthread_cond_init(cond, attr), "pthread_cond_init")
#define STARPU_PTHREAD_COND_DESTROY(cond) MPC_STARPU_PTHREAD_CHECK(starpu_pthread_cond_destroy(cond), "pthread_cond_destroy")
#define STARPU_PTHREAD_COND_SIGNAL(cond) MPC_STARPU_PTHREAD_CHECK(starpu_pthread_cond_signal(cond), "pthread_cond_signal")
#define STARPU_PTHREAD_COND_BROADCAST(cond) MPC_STARPU_PTHREAD_CHECK(starpu_pthread_cond_broadcast(cond), "pthread_cond_broadcast")
#define STARPU_PTHREAD_COND_WAIT(cond, mutex) MPC_STARPU_PTHREAD_CHECK(starpu_pthread_cond_wait(cond, mutex), "pthread_cond_wait")
/** 0 when signalled, ETIMEDOUT when abstime passed first. */
#define STARPU_PTHREAD_COND_TIMEDWAIT(cond, mutex, abstime) \
    mpc_starpu_try_check_(starpu_pthread_cond_timedwait(cond, mutex, abstime), ETIMEDOUT, "pthread_cond_timedwait", __FILE__, __LINE__)
#define STARPU_PTHREAD_RWLOCK_INIT(lock, attr) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_init(lock, attr), "pthread_rwlock_init")
#define STARPU_PTHREAD_RWLOCK_DESTROY(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_destroy(lock), "pthread_rwlock_destroy")
#define STARPU_PTHREAD_RWLOCK_RDLOCK(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_rdlock(lock), "pthread_rwlock_rdlock")
#define STARPU_PTHREAD_RWLOCK_WRLOCK(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_wrlock(lock), "pthread_rwlock_wrlock")
#define STARPU_PTHREAD_RWLOCK_UNLOCK(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_unlock(lock), "pthread_rwlock_unlock")
/** 0 when taken, EBUSY when a writer (TRYRDLOCK) or anyone (TRYWRLOCK) holds it. */
#define STARPU_PTHREAD_RWLOCK_TRYRDLOCK(lock) mpc_starpu_try_check_(pthread_rwlock_tryrdlock(lock), EBUSY, "pthread_rwlock_tryrdlock", __FILE__, __LINE__)
#define STARPU_PTHREAD_RWLOCK_TRYWRLOCK(lock) mpc_starpu_try_check_(pthread_rwlock_trywrlock(lock), EBUSY, "pthread_rwlock_trywrlock", __FILE__, __LINE__)
#define STARPU_PTHREAD_BARRIER_INIT(barrier, attr, count) MPC_STARPU_PTHREAD_CHECK(pthread_barrier_init(barrier, attr, count), "pthread_barrier_init")
#define STARPU_PTHREAD_BARRIER_DESTROY(barrier) MPC_STARPU_PTHREAD_CHECK(pthread_barrier_destroy(barrier), "pthread_barrier_destroy")
/* 0 and STARPU_PTHREAD_BARRIER_SERIAL_THREAD are both success. */
#define STARPU_PTHREAD_BARRIER_WAIT(barrier)                                                            \
    do {                                                                                                \
        int p_bar_ = pthread_barrier_wait(barrier);                                                     \
        MPC_STARPU_PTHREAD_CHECK(p_bar_ == STARPU_PTHREAD_BARRIER_SERIAL_THREAD ? 0 : p_bar_, "pthread_barrier_wait"); \
    } while (0)

#endif /* MPC_STARPU_THREAD_UTIL_H */
