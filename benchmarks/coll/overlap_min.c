/* Overlap of a non-blocking collective with computation, from minimums over chunks (robust on a
 * loaded machine, as pingpong_min.c): t_comm, the call + MPI_Wait alone; t_compute, the loop
 * alone (a chain of dependent multiply-adds, no memory traffic, no MPI call); t_total, the
 * call, the loop, then MPI_Wait. overlap = 1 - (t_total - t_compute) / t_comm, clamped to
 * [0, 1] (OSU's definition): 1 when the whole communication hides behind the loop, 0 when it
 * all happens in MPI_Wait. The loop is calibrated on rank 0 to last FACTOR x t_comm.
 * With WORK "sleep" the rank's work is a raw nanosleep system call of that length instead (work
 * done off this core: an accelerator, I/O, another program; the raw call blocks the kernel
 * thread, which MPC's interposed nanosleep would not: it lets the rank's VP run other threads):
 * on a machine with no core to spare (2 cores, 2 computing ranks) that is the only way to see
 * whether the library progresses the call meanwhile, since progress on a core the ranks
 * compute on only takes time from them.
 * Plain MPI, compiled unchanged with mpc_cc, mpicc.openmpi and mpicc.mpich.
 *
 *   overlap_min [OP [BYTES [CHUNKS [CALLS [FACTOR [WORK]]]]]]
 *     OP iallreduce (MPI_SUM of doubles) or ibcast (root 0); WORK spin or sleep;
 *     defaults iallreduce 1048576 30 10 2 spin */
#define _GNU_SOURCE /* syscall */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double compute(long iters, double x) {
    for (long i = 0; i < iters; i++) {
        x = x * 1.0000001 + 1e-9;
    }
    return x;
}

static int sleep_work;
static double sleep_s;

static double work(long iters, double x) {
    if (!sleep_work) {
        return compute(iters, x);
    }
    struct timespec ts = {(time_t)sleep_s, (long)((sleep_s - (double)(time_t)sleep_s) * 1e9)};
    syscall(SYS_nanosleep, &ts, NULL);
    return x;
}

static int bcast_op;
static double* sbuf;
static double* rbuf;
static int count;
static volatile double sink;

static void start(MPI_Request* r) {
    if (bcast_op) {
        MPI_Ibcast(rbuf, count, MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
    } else {
        MPI_Iallreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, r);
    }
}

/* Minimum over chunks of the mean time of `calls` repetitions: mode 0 comm, 1 compute, 2 both. */
static double measure(int mode, long iters, int chunks, int calls) {
    double best = 1e30;
    for (int c = 0; c < chunks; c++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < calls; i++) {
            MPI_Request r = MPI_REQUEST_NULL;
            if (mode != 1) {
                start(&r);
            }
            if (mode != 0) {
                sink = work(iters, sink);
            }
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        t = (MPI_Wtime() - t) / calls;
        double tmax = 0;  /* the slowest rank's */
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        best = tmax < best ? tmax : best;
    }
    return best;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const char* op = argc > 1 ? argv[1] : "iallreduce";
    long bytes = argc > 2 ? atol(argv[2]) : 1048576;
    int chunks = argc > 3 ? atoi(argv[3]) : 30;
    int calls = argc > 4 ? atoi(argv[4]) : 10;
    double factor = argc > 5 ? atof(argv[5]) : 2.0;
    sleep_work = argc > 6 && strcmp(argv[6], "sleep") == 0;
    int rank;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bcast_op = strcmp(op, "ibcast") == 0;
    if ((!bcast_op && strcmp(op, "iallreduce") != 0) || bytes < 8 || chunks < 1 || calls < 1 || factor <= 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: overlap_min [iallreduce|ibcast [BYTES [CHUNKS [CALLS [FACTOR [spin|sleep]]]]]]\n");
        }
        MPI_Finalize();
        return 2;
    }
    count = (int)(bytes / 8);
    sbuf = malloc((size_t)count * 8);
    rbuf = malloc((size_t)count * 8);
    if (sbuf == NULL || rbuf == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < count; i++) {
        sbuf[i] = rank + i;
        rbuf[i] = rank == 0 ? i : 0;
    }
    sink = 1.0;
    double t_comm = measure(0, 0, chunks, calls);
    /* Calibrate on rank 0: iterations per second of the loop, alone. */
    long iters = 0;
    if (rank == 0) {
        long probe = 1000000;
        double best = 1e30;
        for (int k = 0; k < 5; k++) {
            double t = MPI_Wtime();
            sink = compute(probe, sink);
            t = MPI_Wtime() - t;
            best = t < best ? t : best;
        }
        iters = (long)(factor * t_comm / best * (double)probe);
        iters = iters < 1 ? 1 : iters;
    }
    MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    sleep_s = factor * t_comm;
    MPI_Bcast(&sleep_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double t_compute = measure(1, iters, chunks, calls);
    double t_total = measure(2, iters, chunks, calls);
    double overlap = 1.0 - (t_total - t_compute) / t_comm;
    overlap = overlap < 0 ? 0 : (overlap > 1 ? 1 : overlap);
    if (rank == 0) {
        printf("%s %ld B  %d ranks  %s: comm %.1f us  compute %.1f us  comm+compute %.1f us  overlap %.0f %%\n", op, bytes,
               size, sleep_work ? "sleep" : "spin", t_comm * 1e6, t_compute * 1e6, t_total * 1e6, overlap * 100);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
