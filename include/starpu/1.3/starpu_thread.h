/* StarPU 1.3 API on MPC: StarPU's thread types and calls, which are POSIX threads' in a StarPU
 * built without SimGrid (as Debian's). MPC's workers are user-level threads on its VPs: a
 * mutex taken by a policy or a scheduling component must not be held across a blocking call
 * (none of StarPU's policy hooks blocks). */
#ifndef MPC_STARPU_THREAD_H
#define MPC_STARPU_THREAD_H

#include <pthread.h>

typedef pthread_t starpu_pthread_t;
typedef pthread_attr_t starpu_pthread_attr_t;
typedef pthread_mutex_t starpu_pthread_mutex_t;
typedef pthread_mutexattr_t starpu_pthread_mutexattr_t;
typedef pthread_cond_t starpu_pthread_cond_t;
typedef pthread_condattr_t starpu_pthread_condattr_t;
typedef pthread_key_t starpu_pthread_key_t;

#define STARPU_PTHREAD_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define STARPU_PTHREAD_COND_INITIALIZER PTHREAD_COND_INITIALIZER

#define starpu_pthread_create pthread_create
#define starpu_pthread_join pthread_join
#define starpu_pthread_self pthread_self
#define starpu_pthread_exit pthread_exit
#define starpu_pthread_attr_init pthread_attr_init
#define starpu_pthread_attr_destroy pthread_attr_destroy
#define starpu_pthread_mutex_init pthread_mutex_init
#define starpu_pthread_mutex_destroy pthread_mutex_destroy
#define starpu_pthread_mutex_lock pthread_mutex_lock
#define starpu_pthread_mutex_unlock pthread_mutex_unlock
#define starpu_pthread_mutex_trylock pthread_mutex_trylock
#define starpu_pthread_mutexattr_init pthread_mutexattr_init
#define starpu_pthread_mutexattr_destroy pthread_mutexattr_destroy
#define starpu_pthread_mutexattr_settype pthread_mutexattr_settype
#define starpu_pthread_cond_init pthread_cond_init
#define starpu_pthread_cond_destroy pthread_cond_destroy
#define starpu_pthread_cond_signal pthread_cond_signal
#define starpu_pthread_cond_broadcast pthread_cond_broadcast
#define starpu_pthread_cond_wait pthread_cond_wait
#define starpu_pthread_cond_timedwait pthread_cond_timedwait
/* Read-write locks exist where the C library declares them (not under strict C99 with glibc). */
#if defined(__USE_UNIX98) || defined(__USE_XOPEN2K) || !defined(__GLIBC__)
typedef pthread_rwlock_t starpu_pthread_rwlock_t;
typedef pthread_rwlockattr_t starpu_pthread_rwlockattr_t;
#endif
#define starpu_pthread_rwlock_init pthread_rwlock_init
#define starpu_pthread_rwlock_destroy pthread_rwlock_destroy
#define starpu_pthread_rwlock_rdlock pthread_rwlock_rdlock
#define starpu_pthread_rwlock_wrlock pthread_rwlock_wrlock
#define starpu_pthread_rwlock_unlock pthread_rwlock_unlock
#define starpu_pthread_key_create pthread_key_create
#define starpu_pthread_key_delete pthread_key_delete
#define starpu_pthread_setspecific pthread_setspecific
#define starpu_pthread_getspecific pthread_getspecific

#endif /* MPC_STARPU_THREAD_H */
