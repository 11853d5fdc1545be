/* StarPU 1.3 API on MPC: the checked thread macros (STARPU_PTHREAD_*): each call that fails
 * stops the program with the call, the error and the place, as StarPU's do. */
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

#define STARPU_PTHREAD_MUTEX_INIT(mutex, attr) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_init(mutex, attr), "pthread_mutex_init")
#define STARPU_PTHREAD_MUTEX_DESTROY(mutex) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
#define STARPU_PTHREAD_MUTEX_LOCK(mutex) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_lock(mutex), "pthread_mutex_lock")
#define STARPU_PTHREAD_MUTEX_UNLOCK(mutex) MPC_STARPU_PTHREAD_CHECK(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
/** 0 when taken, EBUSY when another holds it (any other failure stops the program). */
#define STARPU_PTHREAD_MUTEX_TRYLOCK(mutex) mpc_starpu_mutex_trylock_(mutex, __FILE__, __LINE__)
#define STARPU_PTHREAD_COND_INIT(cond, attr) MPC_STARPU_PTHREAD_CHECK(pthread_cond_init(cond, attr), "pthread_cond_init")
#define STARPU_PTHREAD_COND_DESTROY(cond) MPC_STARPU_PTHREAD_CHECK(pthread_cond_destroy(cond), "pthread_cond_destroy")
#define STARPU_PTHREAD_COND_SIGNAL(cond) MPC_STARPU_PTHREAD_CHECK(pthread_cond_signal(cond), "pthread_cond_signal")
#define STARPU_PTHREAD_COND_BROADCAST(cond) MPC_STARPU_PTHREAD_CHECK(pthread_cond_broadcast(cond), "pthread_cond_broadcast")
#define STARPU_PTHREAD_COND_WAIT(cond, mutex) MPC_STARPU_PTHREAD_CHECK(pthread_cond_wait(cond, mutex), "pthread_cond_wait")
#define STARPU_PTHREAD_RWLOCK_INIT(lock, attr) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_init(lock, attr), "pthread_rwlock_init")
#define STARPU_PTHREAD_RWLOCK_DESTROY(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_destroy(lock), "pthread_rwlock_destroy")
#define STARPU_PTHREAD_RWLOCK_RDLOCK(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_rdlock(lock), "pthread_rwlock_rdlock")
#define STARPU_PTHREAD_RWLOCK_WRLOCK(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_wrlock(lock), "pthread_rwlock_wrlock")
#define STARPU_PTHREAD_RWLOCK_UNLOCK(lock) MPC_STARPU_PTHREAD_CHECK(pthread_rwlock_unlock(lock), "pthread_rwlock_unlock")

static inline int mpc_starpu_mutex_trylock_(pthread_mutex_t *m, const char *file, int line) {
    int r = pthread_mutex_trylock(m);
    if (r != 0 && r != EBUSY) {
        fprintf(stderr, "%s:%d: pthread_mutex_trylock failed: %s\n", file, line, strerror(r));
        abort();
    }
    return r;
}

#endif /* MPC_STARPU_THREAD_UTIL_H */
