/* Small collectives at a few ranks, reported as the MINIMUM over chunks of calls: a chunk the
 * kernel preempted (other work on the machine) only raises its own time, so the figure stays
 * put on a loaded machine where a mean or a median does not (as benchmarks/p2p/pingpong_min.c).
 * It measures the path's cost when it runs undisturbed; coll.c gives the standard figures.
 * Plain MPI, compiled unchanged with mpc_cc, mpicc.openmpi and mpicc.mpich.
 *
 *   coll_min [CHUNKS [CALLS_PER_CHUNK [OPS]]]   (defaults 200, 1000, all)
 *
 * OPS: a comma-separated subset of barrier, allreduce, bcast, ibarrier, iallreduce, ibcast, ireduce
 * (8 B: one double; non-blocking ones + MPI_Wait). Prints one line per op: the minimum over
 * chunks of rank 0's mean time per call, in us. Each chunk starts with an MPI_Barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BARRIER, ALLREDUCE, BCAST, IBARRIER, IALLREDUCE, IBCAST, IREDUCE, NOPS };
static const char* const names[NOPS] = {"barrier", "allreduce", "bcast", "ibarrier", "iallreduce", "ibcast", "ireduce"};

static double bcast_buf; /* Bcast's own buffer: the reductions' input stays each rank's */

static void call(int op, double* in, double* out) {
    MPI_Request r = MPI_REQUEST_NULL;
    switch (op) {
        case BARRIER: MPI_Barrier(MPI_COMM_WORLD); return;
        case ALLREDUCE: MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); return;
        case BCAST: MPI_Bcast(&bcast_buf, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); return;
        case IBARRIER: MPI_Ibarrier(MPI_COMM_WORLD, &r); break;
        case IALLREDUCE: MPI_Iallreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); break;
        case IBCAST: MPI_Ibcast(in, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r); break;
        default: MPI_Ireduce(in, out, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &r); break;
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int chunks = argc > 1 ? atoi(argv[1]) : 200;
    int k = argc > 2 ? atoi(argv[2]) : 1000;
    const char* ops = argc > 3 ? argv[3] : "barrier,allreduce,bcast,ibarrier,iallreduce,ibcast,ireduce";
    int rank;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (chunks < 1 || k < 1) {
        if (rank == 0) {
            fprintf(stderr, "usage: coll_min [CHUNKS [CALLS_PER_CHUNK [OPS]]]\n");
        }
        MPI_Finalize();
        return 2;
    }
    double in = rank + 1.0;
    double out = 0;
    for (int op = 0; op < NOPS; op++) {
        const char* hit = strstr(ops, names[op]);
        size_t len = strlen(names[op]);
        /* a whole word of the list ("allreduce" is not found inside "iallreduce") */
        while (hit != NULL && !((hit == ops || hit[-1] == ',') && (hit[len] == ',' || hit[len] == '\0'))) {
            hit = strstr(hit + 1, names[op]);
        }
        if (hit == NULL) {
            continue;
        }
        for (int i = 0; i < k; i++) {
            call(op, &in, &out); /* warm-up */
        }
        double best = 1e30;
        for (int c = 0; c < chunks; c++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < k; i++) {
                call(op, &in, &out);
            }
            t = (MPI_Wtime() - t) / k;
            best = t < best ? t : best;
        }
        if ((op == ALLREDUCE || op == IALLREDUCE) && out != size * (size + 1) / 2.0) {
            fprintf(stderr, "coll_min: rank %d: %s gave %g, expected %g\n", rank, names[op], out,
                    size * (size + 1) / 2.0);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0) {
            printf("%-11s %d ranks  min over %d chunks of %d: %.4f us\n", names[op], size, chunks, k, best * 1e6);
        }
    }
    MPI_Finalize();
    return 0;
}
