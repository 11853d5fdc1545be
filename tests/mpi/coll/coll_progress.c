/* Progress of a non-blocking collective while every rank computes (issue 6: "progressing while
 * the caller computes"): each rank starts an MPI_Iallreduce of a large vector (a thread of its
 * own in MPC, not the small calls' eager path) and then computes without making any MPI call
 * until it sees the reduction done, bounded in time; only then does it call MPI_Wait.
 *
 * What the ranks watch is set only by the operation's side: the user operation, applied by
 * whoever progresses the reduction, counts its calls in a word of shared memory (the ranks of an
 * MPC job share one address space: rank 0 allocates the word and broadcasts its address, and
 * every element of every vector carries that address, so any chunk of the vector reaches it).
 * The shared-memory Allreduce applies the operation once per member's chunk (n - 1 times per
 * chunk in general); the ranks wait until `size` calls have been counted.
 *
 * Mode "thread" (a large vector): run with more VPs than ranks (MPC_VPS=3 with 2 ranks): the
 * free VP must take the calls' threads while the ranks compute. Mode "eager" (a vector of 4
 * elements, which MPC completes in the last member's call, without a thread): run with as many
 * VPs as ranks; the last member to call applies the operation size - 1 times, which the others
 * must see while they compute. Without progress the count stays 0; after `LIMIT` seconds
 * (default 20) each rank reports the failure, completes the call with MPI_Wait (which runs it)
 * and the program exits 1. It cannot hang on the progress it tests.
 *
 * Mode "remote" (ranks in several processes: mpc_run -p): the ranks cannot share a counter, so
 * each watches its own receive buffer: an MPI_Iallreduce (MPI_SUM of MPI_LONG, rank + 1 in every
 * element) whose rounds between processes must go on while every rank computes, with no VP of
 * the process polling the transport (the event watcher's timed progress, MPC_NET_PROGRESS_US).
 * The ranks read the buffer with atomic loads while the call is pending: not something MPI
 * lets a program rely on, only a probe of when the data landed. Those loads race with the
 * library's copy into the buffer, as they must, so under TSan they are hidden from it
 * (AnnotateIgnoreReadsBegin/End around the probe only): the library's own accesses, and the
 * program's reads after MPI_Wait, stay checked.
 *
 *   coll_progress [thread|eager|remote [ELEMENTS [LIMIT_SECONDS]]]   (defaults thread, 65536 or 4
 *   or 1, 20) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* TSan: the probe's reads are not recorded (see the top). */
#if defined(__SANITIZE_THREAD__)
#define PROBE_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROBE_UNDER_TSAN 1
#endif
#endif
#ifdef PROBE_UNDER_TSAN
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
#define PROBE_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define PROBE_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define PROBE_BEGIN() ((void)0)
#define PROBE_END() ((void)0)
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* inout = in (every element is the counter's address); counts its call in the counter. */
static void count_calls(void* in, void* inout, int* len, MPI_Datatype* t) {
    (void)t;
    intptr_t* a = in;
    intptr_t* b = inout;
    if (*len > 0) {
        __atomic_fetch_add((long*)a[0], 1L, __ATOMIC_RELEASE);
    }
    for (int i = 0; i < *len; i++) {
        b[i] = a[i];
    }
}

/* Mode "remote": see the comment at the top. */
static int remote_progress(int rank, int size, long n, double limit) {
    long* in = malloc((size_t)n * sizeof(long));
    long* out = malloc((size_t)n * sizeof(long));
    if (in == NULL || out == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < n; i++) {
        in[i] = rank + 1;
        out[i] = 0;
    }
    const long want = (long)size * (size + 1) / 2;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
    double t0 = now_s();
    double x = 1.0;
    PROBE_BEGIN();
    while ((__atomic_load_n(&out[0], __ATOMIC_ACQUIRE) != want ||
            __atomic_load_n(&out[n - 1], __ATOMIC_ACQUIRE) != want) &&
           now_s() - t0 < limit) {
        for (int i = 0; i < 1000; i++) {
            x = x * 1.0000001 + 1e-9;
        }
    }
    double waited = now_s() - t0;
    int ok = __atomic_load_n(&out[0], __ATOMIC_ACQUIRE) == want && __atomic_load_n(&out[n - 1], __ATOMIC_ACQUIRE) == want;
    PROBE_END();
    if (!ok) {
        fprintf(stderr, "coll_progress: rank %d: no progress while computing: the sum is not there after %.1f s (x=%g)\n",
                rank, waited, x);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (long i = 0; i < n; i++) {
        if (out[i] != want) {
            fprintf(stderr, "coll_progress: rank %d: element %ld is %ld, expected %ld\n", rank, i, out[i], want);
            ok = 0;
            break;
        }
    }
    double worst = 0;
    MPI_Reduce(&waited, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_progress: %d ranks, %ld elements between processes: %s (the last rank saw the sum after %.3f ms "
               "of computing)\n",
               size, n, all_ok ? "progress while computing" : "FAILED", worst * 1e3);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int eager = argc > 1 && strcmp(argv[1], "eager") == 0;
    int remote = argc > 1 && strcmp(argv[1], "remote") == 0;
    long n = argc > 2 ? atol(argv[2]) : eager ? 4 : remote ? 1 : 65536;
    double limit = argc > 3 ? atof(argv[3]) : 20.0;
    /* the operation's calls that mean "done": one per member's chunk, or size - 1 reductions */
    long target = eager ? size - 1 : size;
    if (size < 2 || n < (remote ? 1 : size) || limit <= 0 ||
        (argc > 1 && !eager && !remote && strcmp(argv[1], "thread") != 0)) {
        if (rank == 0) {
            fprintf(stderr, "usage: coll_progress [thread|eager|remote [ELEMENTS >= ranks (remote: >= 1) [LIMIT_SECONDS]]] "
                            "on 2 ranks or more\n");
        }
        MPI_Finalize();
        return 2;
    }
    if (remote) {
        return remote_progress(rank, size, n, limit);
    }
    long* counter = NULL;
    if (rank == 0) {
        counter = calloc(1, sizeof(long));
        if (counter == NULL) {
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    intptr_t addr = (intptr_t)counter;
    MPI_Bcast(&addr, (int)sizeof(addr), MPI_BYTE, 0, MPI_COMM_WORLD);
    counter = (long*)addr;
    intptr_t* in = malloc((size_t)n * sizeof(intptr_t));
    intptr_t* out = malloc((size_t)n * sizeof(intptr_t));
    if (in == NULL || out == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < n; i++) {
        in[i] = addr;
        out[i] = 0;
    }
    MPI_Op op;
    MPI_Op_create(count_calls, 1, &op);
    MPI_Datatype t = sizeof(intptr_t) == sizeof(long) ? MPI_LONG : MPI_LONG_LONG;

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)n, t, op, MPI_COMM_WORLD, &r);
    /* Compute: no MPI call until the operation's side has counted `target` calls, or LIMIT. */
    double t0 = now_s();
    double x = 1.0;
    long seen = 0;
    unsigned long spins = 0;
    while ((seen = __atomic_load_n(counter, __ATOMIC_ACQUIRE)) < target && now_s() - t0 < limit) {
        for (int i = 0; i < 1000; i++) {
            x = x * 1.0000001 + 1e-9;
        }
        ++spins;
    }
    double waited = now_s() - t0;
    int ok = seen >= target;
    if (!ok) {
        fprintf(stderr,
                "coll_progress: rank %d: no progress while computing: %ld of %ld operation calls after %.1f s "
                "(x=%g)\n",
                rank, seen, target, waited, x);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (long i = 0; i < n; i++) {
        if (out[i] != addr) {
            fprintf(stderr, "coll_progress: rank %d: element %ld is %ld, expected %ld\n", rank, i, (long)out[i],
                    (long)addr);
            ok = 0;
            break;
        }
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("coll_progress: %d ranks, %ld elements: %s (rank 0 saw the reduction done after %.3f ms of "
               "computing, %lu loops)\n",
               size, n, all_ok ? "progress while computing" : "FAILED", waited * 1e3, spins);
    }
    MPI_Op_free(&op);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        free(counter);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
