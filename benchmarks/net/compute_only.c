/* Each rank runs a fixed amount of arithmetic (no MPI call), timed; prints the max over ranks.
 * The cost of the event watcher's timed look (MPC_NET_PROGRESS_US) on computing ranks:
 *   mpc_cc -O2 compute_only.c -o compute_only
 *   MPC_NET_PROGRESS_US=0 mpc_run -n 2 -p 2 ./compute_only   (against the default)
 * Argument: the number of multiply-adds (default 4 x 10^8). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now_s(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    long iters = argc > 1 ? atol(argv[1]) : 400000000L;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s(), x = 1.0;
    for (long i = 0; i < iters; i++) x = x * 1.0000001 + 1e-9;
    double t = now_s() - t0, worst = 0;
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("%.4f s (x=%g)\n", worst, x);
    MPI_Finalize();
    return 0;
}
