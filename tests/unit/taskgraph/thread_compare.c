/* StarPU's thread, atomic and utility API (starpu_thread.h, starpu_thread_util.h, starpu_util.h,
 * starpu_config.h), built and run with MPC's and with Debian's StarPU by compare_filters.sh,
 * which compares the output: spin locks under contention, barriers, semaphores (one waited for
 * by a task, posted by the program), rwlock and mutex try calls, the _sched mutex calls, thread
 * creation, join, keys, names, the atomics' results, strerror_r and the configure answers.
 * Every line is deterministic. Names StarPU declares only in other builds (starpu_atomic_add,
 * STARPU_PTHREAD_COND_TIMEDWAIT, starpu_pthread_mutex_check_sched) are used with MPC, and the
 * same line is printed from the call they stand for with StarPU. */
#define _GNU_SOURCE
#include <starpu.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#define ROUNDS 100000

static starpu_pthread_spinlock_t spin;
static long spin_counter;

static void *spin_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; ++i) {
        starpu_pthread_spin_lock(&spin);
        long v = spin_counter; /* a lost update shows if the lock does not exclude */
        spin_counter = v + 1;
        starpu_pthread_spin_unlock(&spin);
    }
    return NULL;
}

static void test_spin(void) {
    starpu_pthread_t t[2];
    printf("spin sizeof %zu init %d\n", sizeof(starpu_pthread_spinlock_t), starpu_pthread_spin_init(&spin, 0));
    int lock = starpu_pthread_spin_lock(&spin);
    int held = starpu_pthread_spin_trylock(&spin);
    int unlock = starpu_pthread_spin_unlock(&spin);
    int freed = starpu_pthread_spin_trylock(&spin);
    int unlock2 = starpu_pthread_spin_unlock(&spin);
    printf("spin lock %d trylock held %d unlock %d trylock free %d unlock %d\n", lock, held, unlock, freed, unlock2);
    for (int i = 0; i < 2; ++i) {
        STARPU_PTHREAD_CREATE(&t[i], NULL, spin_worker, NULL);
    }
    for (int i = 0; i < 2; ++i) {
        STARPU_PTHREAD_JOIN(t[i], NULL);
    }
    printf("spin counter %ld (expected %d) destroy %d\n", spin_counter, 2 * ROUNDS, starpu_pthread_spin_destroy(&spin));
}

static starpu_pthread_barrier_t barrier;
static unsigned serial_count, zero_count, other_count;

static void *barrier_worker(void *arg) {
    (void)arg;
    for (int round = 0; round < 2; ++round) {
        int r = starpu_pthread_barrier_wait(&barrier);
        if (r == STARPU_PTHREAD_BARRIER_SERIAL_THREAD) {
            (void)STARPU_ATOMIC_ADD(&serial_count, 1);
        } else if (r == 0) {
            (void)STARPU_ATOMIC_ADD(&zero_count, 1);
        } else {
            (void)STARPU_ATOMIC_ADD(&other_count, 1);
        }
        STARPU_PTHREAD_BARRIER_WAIT(&barrier); /* everyone counted before the next round */
    }
    return NULL;
}

static void test_barrier(void) {
    starpu_pthread_t t[3];
    printf("barrier serial value %d init %d\n", STARPU_PTHREAD_BARRIER_SERIAL_THREAD,
           starpu_pthread_barrier_init(&barrier, NULL, 3));
    for (int i = 0; i < 3; ++i) {
        STARPU_PTHREAD_CREATE_ON("barrier", &t[i], NULL, barrier_worker, NULL, i);
    }
    for (int i = 0; i < 3; ++i) {
        STARPU_PTHREAD_JOIN(t[i], NULL);
    }
    printf("barrier 2 rounds of 3: serial %u zero %u other %u destroy %d\n", serial_count, zero_count, other_count,
           starpu_pthread_barrier_destroy(&barrier));
    STARPU_PTHREAD_BARRIER_INIT(&barrier, NULL, 1);
    STARPU_PTHREAD_BARRIER_WAIT(&barrier);
    STARPU_PTHREAD_BARRIER_DESTROY(&barrier);
    printf("barrier of 1 through the checked macros: OK\n");
}

static starpu_sem_t started_sem, task_sem, done_sem;

static void sem_waiting_task(void *buffers[], void *arg) {
    (void)buffers;
    (void)arg;
    starpu_sem_post(&started_sem);
    int r = starpu_sem_wait(&task_sem); /* posted by the program once the task runs */
    starpu_sem_post(&done_sem);
    if (r != 0) {
        abort();
    }
}

static void test_sem(void) {
    starpu_sem_t s;
    int v = -1;
    printf("sem init %d\n", starpu_sem_init(&s, 0, 0));
    errno = 0;
    int r = starpu_sem_trywait(&s);
    printf("sem trywait on 0: %d errno %s\n", r, errno == EAGAIN ? "EAGAIN" : "other");
    printf("sem post %d %d\n", starpu_sem_post(&s), starpu_sem_post(&s));
    starpu_sem_getvalue(&s, &v);
    printf("sem value %d\n", v);
    r = starpu_sem_trywait(&s);
    int w = starpu_sem_wait(&s);
    starpu_sem_getvalue(&s, &v);
    printf("sem trywait %d wait %d value %d destroy %d\n", r, w, v, starpu_sem_destroy(&s));

    /* The program waits for a task to start, the task for the program to post, the program
     * for the task to end: with MPC on one VP (MPC_VPS=1), the program and the worker are ULTs
     * of the same kernel thread, and each wait must let the other run. */
    static struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = sem_waiting_task;
    cl.nbuffers = 0;
    starpu_sem_init(&started_sem, 0, 0);
    starpu_sem_init(&task_sem, 0, 0);
    starpu_sem_init(&done_sem, 0, 0);
    struct starpu_task *task = starpu_task_create();
    task->cl = &cl;
    int sub = starpu_task_submit(task);
    int started = starpu_sem_wait(&started_sem);
    starpu_sem_post(&task_sem);
    int got = starpu_sem_wait(&done_sem);
    starpu_task_wait_for_all();
    printf("sem task submit %d: started %d, waited in the task, posted back %d\n", sub, started, got);
    starpu_sem_destroy(&started_sem);
    starpu_sem_destroy(&task_sem);
    starpu_sem_destroy(&done_sem);
}

static starpu_pthread_rwlock_t rwlock = STARPU_PTHREAD_RWLOCK_INITIALIZER;
static int rw_try[2];

static void *rw_trier(void *arg) {
    (void)arg;
    rw_try[0] = STARPU_PTHREAD_RWLOCK_TRYRDLOCK(&rwlock);
    if (rw_try[0] == 0) {
        STARPU_PTHREAD_RWLOCK_UNLOCK(&rwlock);
    }
    rw_try[1] = STARPU_PTHREAD_RWLOCK_TRYWRLOCK(&rwlock);
    if (rw_try[1] == 0) {
        STARPU_PTHREAD_RWLOCK_UNLOCK(&rwlock);
    }
    return NULL;
}

static void rw_try_from_thread(const char *held) {
    starpu_pthread_t t;
    STARPU_PTHREAD_CREATE(&t, NULL, rw_trier, NULL);
    STARPU_PTHREAD_JOIN(t, NULL);
    printf("rwlock %s: tryrdlock %d trywrlock %d\n", held, rw_try[0], rw_try[1]);
}

static void test_rwlock(void) {
    rw_try_from_thread("free");
    STARPU_PTHREAD_RWLOCK_RDLOCK(&rwlock);
    rw_try_from_thread("read-held");
    STARPU_PTHREAD_RWLOCK_UNLOCK(&rwlock);
    STARPU_PTHREAD_RWLOCK_WRLOCK(&rwlock);
    rw_try_from_thread("write-held");
    STARPU_PTHREAD_RWLOCK_UNLOCK(&rwlock);
    int rd = starpu_pthread_rwlock_tryrdlock(&rwlock);
    int wr = starpu_pthread_rwlock_trywrlock(&rwlock);
    int un = starpu_pthread_rwlock_unlock(&rwlock);
    printf("rwlock direct: tryrdlock %d trywrlock while read %d unlock %d\n", rd, wr, un);
    STARPU_PTHREAD_RWLOCK_DESTROY(&rwlock);
}

static starpu_pthread_mutex_t sched_mutex;
static int other_trylock;

static void *mutex_trier(void *arg) {
    (void)arg;
    other_trylock = STARPU_PTHREAD_MUTEX_TRYLOCK_SCHED(&sched_mutex);
    if (other_trylock == 0) {
        STARPU_PTHREAD_MUTEX_UNLOCK_SCHED(&sched_mutex);
    }
    return NULL;
}

static void test_mutex(void) {
    starpu_pthread_mutexattr_t attr;
    int type = -1;
    starpu_pthread_mutexattr_init(&attr);
    starpu_pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    int gt = starpu_pthread_mutexattr_gettype(&attr, &type);
    printf("mutexattr gettype %d errorcheck %d\n", gt, type == PTHREAD_MUTEX_ERRORCHECK);
    STARPU_PTHREAD_MUTEX_INIT(&sched_mutex, &attr);
    starpu_pthread_mutexattr_destroy(&attr);

    int lock = starpu_pthread_mutex_lock_sched(&sched_mutex);
    int relock = starpu_pthread_mutex_lock_sched(&sched_mutex);
    int trylock = starpu_pthread_mutex_trylock_sched(&sched_mutex);
    int unlock = starpu_pthread_mutex_unlock_sched(&sched_mutex);
    int unlock2 = starpu_pthread_mutex_unlock_sched(&sched_mutex);
    printf("mutex sched: lock %d relock %s trylock %s unlock %d unlock again %s\n", lock,
           relock == EDEADLK ? "EDEADLK" : "other", trylock == EBUSY ? "EBUSY" : "other", unlock,
           unlock2 == EPERM ? "EPERM" : "other");

    starpu_pthread_t t;
    STARPU_PTHREAD_MUTEX_LOCK_SCHED(&sched_mutex);
    STARPU_PTHREAD_CREATE(&t, NULL, mutex_trier, NULL);
    STARPU_PTHREAD_JOIN(t, NULL);
    int held = other_trylock;
    STARPU_PTHREAD_MUTEX_UNLOCK_SCHED(&sched_mutex);
    STARPU_PTHREAD_CREATE(&t, NULL, mutex_trier, NULL);
    STARPU_PTHREAD_JOIN(t, NULL);
    printf("mutex sched macros: trylock from another thread held %s free %d\n", held == EBUSY ? "EBUSY" : "other",
           other_trylock);
#ifdef STARPU_MPC
    starpu_pthread_mutex_check_sched(&sched_mutex, (char *)__FILE__, __LINE__); /* StarPU's debug builds only */
#endif
    int tl = STARPU_PTHREAD_MUTEX_TRYLOCK(&sched_mutex);
    STARPU_PTHREAD_MUTEX_UNLOCK(&sched_mutex);
    printf("mutex trylock %d\n", tl);

    /* A timed wait that times out (StarPU declares STARPU_PTHREAD_COND_TIMEDWAIT in its SimGrid
     * build only). */
    starpu_pthread_cond_t cond = STARPU_PTHREAD_COND_INITIALIZER;
    struct timespec past = {0, 0};
    STARPU_PTHREAD_MUTEX_LOCK(&sched_mutex);
#ifdef STARPU_PTHREAD_COND_TIMEDWAIT
    int tw = STARPU_PTHREAD_COND_TIMEDWAIT(&cond, &sched_mutex, &past);
#else
    int tw = starpu_pthread_cond_timedwait(&cond, &sched_mutex, &past);
#endif
    STARPU_PTHREAD_MUTEX_UNLOCK(&sched_mutex);
    printf("cond timedwait in the past: %s\n", tw == ETIMEDOUT ? "ETIMEDOUT" : "other");
    STARPU_PTHREAD_COND_DESTROY(&cond);
    STARPU_PTHREAD_MUTEX_DESTROY(&sched_mutex);
}

static starpu_pthread_key_t key;
static unsigned destructor_calls;
static starpu_pthread_t main_thread;
static starpu_sem_t detached_done;

static void key_destructor(void *value) {
    if (value == (void *)&key) {
        (void)STARPU_ATOMIC_ADD(&destructor_calls, 1);
    }
}

static void *key_thread(void *arg) {
    int before = STARPU_PTHREAD_GETSPECIFIC(key) == NULL;
    STARPU_PTHREAD_SETSPECIFIC(key, &key);
    int after = starpu_pthread_getspecific(key) == (void *)&key;
    int self_equal = starpu_pthread_equal(starpu_pthread_self(), starpu_pthread_self()) != 0;
    int main_equal = starpu_pthread_equal(starpu_pthread_self(), main_thread) != 0;
    int named = starpu_pthread_setname("thr_compare");
    char name[32] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    int too_long = starpu_pthread_setname("a-name-longer-than-fifteen");
    printf("thread %d: key before %d after %d; equal self %d main %d; setname %d '%s' too long %s\n", (int)(intptr_t)arg,
           before, after, self_equal, main_equal, named, name, too_long == ERANGE ? "ERANGE" : "other");
    return (void *)((intptr_t)arg * 10 + 2);
}

static void *detached_thread(void *arg) {
    (void)arg;
    starpu_sem_post(&detached_done);
    return NULL;
}

static void test_threads(void) {
    main_thread = starpu_pthread_self();
    STARPU_PTHREAD_KEY_CREATE(&key, key_destructor);
    starpu_pthread_t t;
    void *ret = NULL;
    STARPU_PTHREAD_CREATE(&t, NULL, key_thread, (void *)(intptr_t)4);
    STARPU_PTHREAD_JOIN(t, &ret);
    printf("join returned %d, destructor calls %u\n", (int)(intptr_t)ret, destructor_calls);
    int c = starpu_pthread_create_on("named", &t, NULL, key_thread, (void *)(intptr_t)5, 0);
    int j = starpu_pthread_join(t, &ret);
    printf("create_on %d join %d returned %d, destructor calls %u\n", c, j, (int)(intptr_t)ret, destructor_calls);
    printf("main key %d\n", STARPU_PTHREAD_GETSPECIFIC(key) == NULL);
    STARPU_PTHREAD_KEY_DELETE(key);

    starpu_pthread_attr_t attr;
    starpu_sem_init(&detached_done, 0, 0);
    int ai = starpu_pthread_attr_init(&attr);
    int ad = starpu_pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    STARPU_PTHREAD_CREATE(&t, &attr, detached_thread, NULL);
    int ax = starpu_pthread_attr_destroy(&attr);
    int w = starpu_sem_wait(&detached_done);
    starpu_sem_destroy(&detached_done);
    printf("detached thread: attr init %d setdetachstate %d destroy %d, it posted %d\n", ai, ad, ax, w);
}

static void test_atomics(void) {
    unsigned u = 5;
    unsigned long ul = 100;
    uint64_t u64 = 1000;
    int add = STARPU_ATOMIC_ADD(&u, 3);
    unsigned long addl = STARPU_ATOMIC_ADDL(&ul, 7);
    uint64_t add64 = STARPU_ATOMIC_ADD64(&u64, 9);
    printf("ATOMIC_ADD %d (u %u) ADDL %lu ADD64 %llu\n", add, u, addl, (unsigned long long)add64);
    unsigned o = STARPU_ATOMIC_OR(&u, 0x10);
    unsigned long ol = STARPU_ATOMIC_ORL(&ul, 0x100);
    uint64_t o64 = STARPU_ATOMIC_OR64(&u64, 0x1000);
    printf("ATOMIC_OR %u (u %u) ORL %lu (ul %lu) OR64 %llu (u64 %llu)\n", o, u, ol, ul, (unsigned long long)o64,
           (unsigned long long)u64);

    /* starpu_atomic_add* and _or* give the new value; StarPU declares them only without the
     * __sync builtins, so with StarPU the line comes from the builtins' macros. */
    unsigned a = 1;
    unsigned long al = 2;
    uint64_t a64 = 3;
#ifdef STARPU_MPC
    unsigned r1 = starpu_atomic_add(&a, 4), r2 = starpu_atomic_or(&a, 8);
    unsigned long r3 = starpu_atomic_addl(&al, 4), r4 = starpu_atomic_orl(&al, 8);
    uint64_t r5 = starpu_atomic_add64(&a64, 4), r6 = starpu_atomic_or64(&a64, 8);
#else
    unsigned r1 = STARPU_ATOMIC_ADD(&a, 4), r2 = STARPU_ATOMIC_OR(&a, 8) | 8;
    unsigned long r3 = STARPU_ATOMIC_ADDL(&al, 4), r4 = STARPU_ATOMIC_ORL(&al, 8) | 8;
    uint64_t r5 = STARPU_ATOMIC_ADD64(&a64, 4), r6 = STARPU_ATOMIC_OR64(&a64, 8) | 8;
#endif
    printf("atomic_add %u or %u addl %lu orl %lu add64 %llu or64 %llu\n", r1, r2, r3, r4, (unsigned long long)r5,
           (unsigned long long)r6);

    unsigned cas = 7;
    int ok1 = STARPU_BOOL_COMPARE_AND_SWAP(&cas, 7, 8);
    int ok2 = STARPU_BOOL_COMPARE_AND_SWAP(&cas, 7, 9);
    uint32_t cas32 = 1;
    uint64_t cas64 = 2;
    int ok3 = STARPU_BOOL_COMPARE_AND_SWAP32(&cas32, 1, 11);
    int ok4 = STARPU_BOOL_COMPARE_AND_SWAP64(&cas64, 3, 12);
    printf("BOOL_CAS %d %d (cas %u) 32 %d (%u) 64 %d (%llu)\n", ok1, ok2, cas, ok3, cas32, ok4, (unsigned long long)cas64);
    unsigned v1 = STARPU_VAL_COMPARE_AND_SWAP(&cas, 8, 20);
    unsigned v2 = STARPU_VAL_COMPARE_AND_SWAP(&cas, 8, 30);
    uint32_t v3 = STARPU_VAL_COMPARE_AND_SWAP32(&cas32, 11, 21);
    uint64_t v4 = STARPU_VAL_COMPARE_AND_SWAP64(&cas64, 2, 22);
    printf("VAL_CAS %u %u (cas %u) 32 %u 64 %llu (%llu)\n", v1, v2, cas, v3, (unsigned long long)v4,
           (unsigned long long)cas64);
    int x = 1, y = 2;
    int *p = &x;
    int pok = STARPU_BOOL_COMPARE_AND_SWAP_PTR(&p, &x, &y);
    int *pv = STARPU_VAL_COMPARE_AND_SWAP_PTR(&p, &x, &x);
    printf("CAS_PTR %d to y %d, VAL_PTR saw y %d\n", pok, p == &y, pv == &y);
    unsigned ex = 40;
    unsigned exo = STARPU_VAL_EXCHANGE(&ex, 41);
    printf("VAL_EXCHANGE %u (ex %u)\n", exo, ex);
    unsigned flag = 0;
    unsigned t1 = STARPU_TEST_AND_SET(&flag, 1);
    unsigned t2 = STARPU_TEST_AND_SET(&flag, 1);
    STARPU_RELEASE(&flag);
    STARPU_SYNCHRONIZE();
    STARPU_RMB();
    STARPU_WMB();
    printf("TEST_AND_SET %u %u RELEASE %u\n", t1, t2, flag);

    unsigned w = 5;
    uint32_t w32 = 6;
    unsigned long wl = 7;
    uint64_t w64 = 8;
    unsigned c1 = _starpu_cmpxchg(&w, 5, 50), c2 = _starpu_cmpxchg(&w, 5, 55), x1 = _starpu_xchg(&w, 500);
    uint32_t c3 = _starpu_cmpxchg32(&w32, 6, 60), x2 = _starpu_xchg32(&w32, 600);
    unsigned long c4 = _starpu_cmpxchgl(&wl, 0, 70), x3 = _starpu_xchgl(&wl, 700);
    uint64_t c5 = _starpu_cmpxchg64(&w64, 8, 80), x4 = _starpu_xchg64(&w64, 800);
    printf("cmpxchg %u %u xchg %u (%u) 32 %u %u (%u) l %lu %lu (%lu) 64 %llu %llu (%llu)\n", c1, c2, x1, w, c3, x2, w32,
           c4, x3, wl, (unsigned long long)c5, (unsigned long long)x4, (unsigned long long)w64);
#if defined(STARPU_HAVE_CMPXCHG) && defined(STARPU_HAVE_XCHG) && defined(STARPU_HAVE_CMPXCHG32) && \
    defined(STARPU_HAVE_XCHG32) && defined(STARPU_HAVE_CMPXCHGL) && defined(STARPU_HAVE_XCHGL) && \
    defined(STARPU_HAVE_CMPXCHG64) && defined(STARPU_HAVE_XCHG64)
    printf("STARPU_HAVE_CMPXCHG* and XCHG*: all\n");
#endif
}

/* The attribute macros on declarations (a compile check: the calls below use them). */
static STARPU_INLINE int twice(int x) STARPU_ATTRIBUTE_PURE;
static STARPU_INLINE int twice(int x) { return 2 * x; }
static void *my_alloc(size_t n) STARPU_ATTRIBUTE_MALLOC STARPU_ATTRIBUTE_ALLOC_SIZE(1);
static void *my_alloc(size_t n) { return malloc(n); }
static void *my_calloc(size_t n, size_t s) STARPU_ATTRIBUTE_CALLOC_SIZE(1, 2);
static void *my_calloc(size_t n, size_t s) { return calloc(n, s); }
static int say(const char *fmt, ...) STARPU_ATTRIBUTE_FORMAT(printf, 1, 2);
#include <stdarg.h>
static int say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}
int thread_compare_internal(void) STARPU_ATTRIBUTE_INTERNAL;
int thread_compare_internal(void) { return 3; }

static void test_util(void) {
    char buf[64];
    char small[4];
    starpu_strerror_r(EINVAL, buf, sizeof buf);
    starpu_strerror_r(ENOENT, small, sizeof small);
    printf("strerror_r '%s' cut '%s'\n", buf, small);
    void *m = my_alloc(16);
    void *c = my_calloc(2, 8);
    say("attributes: twice %d internal %d alloc %d calloc %d\n", twice(21), thread_compare_internal(), m != NULL,
        c != NULL && ((char *)c)[15] == 0);
    free(m);
    free(c);
    printf("GNUC_PREREQ(3,0) %d (99,0) %d cacheline %d backtrace length %d poison %p\n", STARPU_GNUC_PREREQ(3, 0),
           STARPU_GNUC_PREREQ(99, 0), STARPU_CACHELINE_SIZE, STARPU_BACKTRACE_LENGTH, STARPU_POISON_PTR);
    STARPU_SIMGRID_ASSERT(1);
    /* The backtrace goes to the standard error, here /dev/null (its lines are not the same). */
    fflush(stderr);
    int saved = dup(2);
    int null_fd = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null_fd >= 0) {
        dup2(null_fd, 2);
        STARPU_DUMP_BACKTRACE();
        dup2(saved, 2);
    }
    if (null_fd >= 0) {
        close(null_fd);
    }
    if (saved >= 0) {
        close(saved);
    }
    printf("backtrace dumped\n");
}

static void test_config(void) {
    const char *have[] = {
#ifdef STARPU_HAVE_POSIX_MEMALIGN
        "POSIX_MEMALIGN",
#endif
#ifdef STARPU_HAVE_MEMALIGN
        "MEMALIGN",
#endif
#ifdef STARPU_HAVE_MALLOC_H
        "MALLOC_H",
#endif
#ifdef STARPU_HAVE_SETENV
        "SETENV",
#endif
#ifdef STARPU_HAVE_UNSETENV
        "UNSETENV",
#endif
#ifdef STARPU_HAVE_UNISTD_H
        "UNISTD_H",
#endif
#ifdef STARPU_HAVE_STRERROR_R
        "STRERROR_R",
#endif
#ifdef STARPU_HAVE_STRUCT_TIMESPEC
        "STRUCT_TIMESPEC",
#endif
#ifdef STARPU_HAVE_PTHREAD_BARRIER
        "PTHREAD_BARRIER",
#endif
#ifdef STARPU_HAVE_PTHREAD_SPIN_LOCK
        "PTHREAD_SPIN_LOCK",
#endif
#ifdef STARPU_HAVE_PTHREAD_SETNAME_NP
        "PTHREAD_SETNAME_NP",
#endif
#ifdef STARPU_LINUX_SYS
        "LINUX_SYS",
#endif
#ifdef STARPU_HAVE_LIBNUMA
        "LIBNUMA",
#endif
#ifdef STARPU_HAVE_SYNC_BOOL_COMPARE_AND_SWAP
        "SYNC_BOOL_COMPARE_AND_SWAP",
#endif
#ifdef STARPU_HAVE_SYNC_VAL_COMPARE_AND_SWAP
        "SYNC_VAL_COMPARE_AND_SWAP",
#endif
#ifdef STARPU_HAVE_SYNC_FETCH_AND_ADD
        "SYNC_FETCH_AND_ADD",
#endif
#ifdef STARPU_HAVE_SYNC_FETCH_AND_OR
        "SYNC_FETCH_AND_OR",
#endif
#ifdef STARPU_HAVE_SYNC_LOCK_TEST_AND_SET
        "SYNC_LOCK_TEST_AND_SET",
#endif
#ifdef STARPU_HAVE_SYNC_SYNCHRONIZE
        "SYNC_SYNCHRONIZE",
#endif
#ifdef STARPU_HAVE_ATOMIC_EXCHANGE_N
        "ATOMIC_EXCHANGE_N",
#endif
#ifdef STARPU_HAVE_STATEMENT_EXPRESSIONS
        "STATEMENT_EXPRESSIONS",
#endif
#ifdef STARPU_HAVE_CXX11
        "CXX11",
#endif
        NULL};
    printf("config:");
    for (int i = 0; have[i] != NULL; ++i) {
        printf(" %s", have[i]);
    }
    printf("\nconfig: MAXNUMANODES %d MAXCUDADEVS %d MAXOPENCLDEVS %d MAXMICDEVS %d\n", STARPU_MAXNUMANODES,
           STARPU_MAXCUDADEVS, STARPU_MAXOPENCLDEVS, STARPU_MAXMICDEVS);
    printf("config: __starpu_func__ %s\n", __starpu_func__);
}

static __starpu_inline int config_inline(void) { return 1; }

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (starpu_init(NULL) != 0) {
        return 1;
    }
    test_spin();
    test_barrier();
    test_sem();
    test_rwlock();
    test_mutex();
    test_threads();
    test_atomics();
    test_util();
    test_config();
    starpu_shutdown();
    printf("thread_compare: done %d\n", config_inline());
    return 0;
}
