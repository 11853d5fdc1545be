/* StarPU 1.3 API on MPC: StarPU's thread types and calls, which are POSIX threads' in a StarPU
 * built without SimGrid (as Debian's). MPC's workers are user-level threads on its VPs: a
 * mutex taken by a policy or a scheduling component must not be held across a blocking call
 * (none of StarPU's policy hooks blocks). A mutex, condition, rwlock or barrier wait blocks the
 * worker's VP as it blocks a kernel thread; starpu_sem_wait and a contended spin lock let the
 * VP run its other ULTs meanwhile.
 *
 * What a program can see is StarPU's: the same names are macros (the pthread call itself) or
 * functions of the library (libmpc here), starpu_pthread_spinlock_t is StarPU's own lock word,
 * and the same calls return the same values. */
#ifndef MPC_STARPU_THREAD_H
#define MPC_STARPU_THREAD_H

#include <pthread.h>
#include <semaphore.h>

#include "starpu_config.h"
#include "starpu_util.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/* Creates a thread for worker `where` (a place to run on, in StarPU's SimGrid build): a plain
 * thread, name and where unused (not even evaluated), as StarPU's. */
#define starpu_pthread_create_on(name, thread, attr, routine, arg, where) starpu_pthread_create(thread, attr, routine, arg)
#define starpu_pthread_join pthread_join
#define starpu_pthread_self pthread_self
#define starpu_pthread_equal pthread_equal
#define starpu_pthread_exit pthread_exit
#define starpu_pthread_attr_init pthread_attr_init
#define starpu_pthread_attr_destroy pthread_attr_destroy
#define starpu_pthread_attr_setdetachstate pthread_attr_setdetachstate

/** Names the calling thread (pthread_setname_np: 0, or ERANGE for a name over 15 characters);
 * a function, so that it needs no _GNU_SOURCE in the program. Does not block. */
int starpu_pthread_setname(const char *name);

#define starpu_pthread_mutex_init pthread_mutex_init
#define starpu_pthread_mutex_destroy pthread_mutex_destroy
#define starpu_pthread_mutex_lock pthread_mutex_lock
#define starpu_pthread_mutex_unlock pthread_mutex_unlock
#define starpu_pthread_mutex_trylock pthread_mutex_trylock
#define starpu_pthread_mutexattr_init pthread_mutexattr_init
#define starpu_pthread_mutexattr_destroy pthread_mutexattr_destroy
#define starpu_pthread_mutexattr_settype pthread_mutexattr_settype
#define starpu_pthread_mutexattr_gettype pthread_mutexattr_gettype

/** A scheduling mutex's lock, unlock, trylock (StarPU traces them apart from the others):
 * pthread_mutex_lock, _unlock and _trylock's results. The lock may block. */
int starpu_pthread_mutex_lock_sched(starpu_pthread_mutex_t *mutex);
int starpu_pthread_mutex_unlock_sched(starpu_pthread_mutex_t *mutex);
int starpu_pthread_mutex_trylock_sched(starpu_pthread_mutex_t *mutex);
/** StarPU's debug check that `mutex` is not the calling worker's scheduling mutex taken without
 * the _sched calls. MPC's workers have no such mutex: nothing to check, it does nothing. */
void starpu_pthread_mutex_check_sched(starpu_pthread_mutex_t *mutex, char *file, int line);

#define starpu_pthread_cond_init pthread_cond_init
/** Condition variables: pthread's, with one difference for the program's main and the task
 * workers, which are user-level threads of MPC sharing kernel threads: a wait there does not
 * hold the kernel thread, so that a worker on the same one can run the task whose callback
 * will signal (a wait in plain pthread_cond_wait would block it: the program hangs). Such a
 * wait returns when signalled through these functions (or STARPU_PTHREAD_COND_SIGNAL /
 * _BROADCAST), and, most of the time, when signalled by pthread_cond_signal directly; on
 * other threads they are pthread_cond_*. */
int starpu_pthread_cond_destroy(starpu_pthread_cond_t *cond);
int starpu_pthread_cond_signal(starpu_pthread_cond_t *cond);
int starpu_pthread_cond_broadcast(starpu_pthread_cond_t *cond);
int starpu_pthread_cond_wait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex);
int starpu_pthread_cond_timedwait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex,
                                  const struct timespec *abstime);

/* Read-write locks and barriers exist where the C library declares them (not under strict C99
 * with glibc). */
#if defined(__USE_UNIX98) || defined(__USE_XOPEN2K) || !defined(__GLIBC__)
typedef pthread_rwlock_t starpu_pthread_rwlock_t;
typedef pthread_rwlockattr_t starpu_pthread_rwlockattr_t;
#endif
#if defined(__USE_XOPEN2K) || !defined(__GLIBC__)
typedef pthread_barrier_t starpu_pthread_barrier_t;
typedef pthread_barrierattr_t starpu_pthread_barrierattr_t;
#endif
#define STARPU_PTHREAD_RWLOCK_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
#define starpu_pthread_rwlock_init pthread_rwlock_init
#define starpu_pthread_rwlock_destroy pthread_rwlock_destroy
#define starpu_pthread_rwlock_rdlock pthread_rwlock_rdlock
#define starpu_pthread_rwlock_tryrdlock pthread_rwlock_tryrdlock
#define starpu_pthread_rwlock_wrlock pthread_rwlock_wrlock
#define starpu_pthread_rwlock_trywrlock pthread_rwlock_trywrlock
#define starpu_pthread_rwlock_unlock pthread_rwlock_unlock

/* starpu_pthread_barrier_wait gives STARPU_PTHREAD_BARRIER_SERIAL_THREAD to one of the threads
 * of each round, 0 to the others. */
#define STARPU_PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_BARRIER_SERIAL_THREAD
#define starpu_pthread_barrier_init pthread_barrier_init
#define starpu_pthread_barrier_destroy pthread_barrier_destroy
#define starpu_pthread_barrier_wait pthread_barrier_wait

#define starpu_pthread_key_create pthread_key_create
#define starpu_pthread_key_delete pthread_key_delete
#define starpu_pthread_setspecific pthread_setspecific
#define starpu_pthread_getspecific pthread_getspecific

/** StarPU's spin lock (its Linux build's: one word, 0 when free), for short critical sections.
 * The calls return 0; trylock returns EBUSY when the lock is held. A contended lock spins a
 * while, then yields the processor between tries (a ULT: to its VP's other ULTs, one of which
 * may hold the lock). Not recursive; pshared is ignored (the word works between processes that
 * share it anyway). */
typedef struct {
    unsigned taken STARPU_ATTRIBUTE_ALIGNED(16);
} starpu_pthread_spinlock_t;
int starpu_pthread_spin_init(starpu_pthread_spinlock_t *lock, int pshared);
int starpu_pthread_spin_destroy(starpu_pthread_spinlock_t *lock);
int starpu_pthread_spin_lock(starpu_pthread_spinlock_t *lock);
int starpu_pthread_spin_trylock(starpu_pthread_spinlock_t *lock);
int starpu_pthread_spin_unlock(starpu_pthread_spinlock_t *lock);

/* POSIX semaphores. starpu_sem_wait waits for the count to be positive and takes one (0; a
 * signal does not end the wait), may yield or block: a ULT waits parked, its VP running the
 * others. starpu_sem_trywait takes one when the count is positive (0), else returns -1 with
 * errno EAGAIN; does not block. */
typedef sem_t starpu_sem_t;
#define starpu_sem_init sem_init
#define starpu_sem_destroy sem_destroy
#define starpu_sem_post sem_post
#define starpu_sem_getvalue sem_getvalue
int starpu_sem_wait(starpu_sem_t *sem);
int starpu_sem_trywait(starpu_sem_t *sem);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_THREAD_H */
