/* The hardware floor of a 2-rank barrier: two kernel threads pinned to two cores meet at a
 * barrier made of nothing but shared memory (each thread writes its epoch to its own cache
 * line, then spins until the other's line shows the same epoch), and an "allreduce" of one
 * double the same way (value and epoch in one line). No MPI, no library: any MPI barrier
 * between ranks on two cores pays at least this, since each side must see a store the other
 * made after arriving: one transfer of a cache line from core to core.
 * Reported as the minimum over chunks of the mean per call (as coll_min.c), so that a chunk the
 * kernel preempted does not count.
 *
 *   hw_barrier [CHUNKS [CALLS_PER_CHUNK [CPU0 CPU1]]]   (defaults 200, 1000, 0 1)
 *   HW_BARRIER_FENCE=1: a full fence (mfence) after each store, as a publisher that must then
 *   read whether the other side sleeps has to.
 *
 * Build: cc -O2 -pthread hw_barrier.c -o hw_barrier (benchmarks/coll/run.sh does not run it;
 * benchmarks/RESULTS.md gives the command it was measured with). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct line {
    _Alignas(64) _Atomic unsigned long epoch;
    double value;
};

static struct line lines[2];
static int chunks = 200;
static int calls = 1000;
static int cpus[2] = {0, 1};
static int fenced;  /* HW_BARRIER_FENCE=1: a full fence after each store */
static double best[2][2];  /* [thread][op]: minimum over chunks, us per call */

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One barrier (or allreduce when sum != NULL): publish, then wait for the other's epoch. */
static unsigned long meet(int me, unsigned long epoch, double v, double* sum) {
    ++epoch;
    lines[me].value = v;
    atomic_store_explicit(&lines[me].epoch, epoch, memory_order_release);
    if (fenced) {  /* what a publisher that must then read a "sleepers" word pays */
        atomic_thread_fence(memory_order_seq_cst);
    }
    while (atomic_load_explicit(&lines[1 - me].epoch, memory_order_acquire) < epoch) {
        __builtin_ia32_pause();
    }
    if (sum != NULL) {
        *sum = v + lines[1 - me].value;
    }
    return epoch;
}

static void* run(void* arg) {
    int me = (int)(long)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[me], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "hw_barrier: cannot pin thread %d to cpu %d\n", me, cpus[me]);
        exit(1);
    }
    unsigned long epoch = 0;
    double check = 0;
    for (int op = 0; op < 2; ++op) {
        best[me][op] = 1e30;
        for (int c = 0; c < chunks; ++c) {
            epoch = meet(me, epoch, 0, NULL);
            double t0 = now_us();
            for (int i = 0; i < calls; ++i) {
                double s;
                epoch = meet(me, epoch, (double)(me + i), op == 1 ? &s : NULL);
                if (op == 1) {
                    check += s;
                }
            }
            double t = (now_us() - t0) / calls;
            if (t < best[me][op]) {
                best[me][op] = t;
            }
        }
    }
    if (check < 0) {  /* keeps the sums alive */
        printf("%f\n", check);
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) chunks = atoi(argv[1]);
    if (argc > 2) calls = atoi(argv[2]);
    if (argc > 4) {
        cpus[0] = atoi(argv[3]);
        cpus[1] = atoi(argv[4]);
    }
    fenced = getenv("HW_BARRIER_FENCE") != NULL && atoi(getenv("HW_BARRIER_FENCE")) != 0;
    if (chunks < 1 || calls < 1) {
        fprintf(stderr, "usage: hw_barrier [CHUNKS [CALLS_PER_CHUNK [CPU0 CPU1]]]\n");
        return 2;
    }
    pthread_t t[2];
    for (long i = 0; i < 2; ++i) {
        pthread_create(&t[i], NULL, run, (void*)i);
    }
    for (int i = 0; i < 2; ++i) {
        pthread_join(t[i], NULL);
    }
    printf("barrier %.4f us\nallreduce %.4f us\n", best[0][0] > best[1][0] ? best[0][0] : best[1][0],
           best[0][1] > best[1][1] ? best[0][1] : best[1][1]);
    return 0;
}
