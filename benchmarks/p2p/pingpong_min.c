/* 0-byte (or N-byte) ping-pong between ranks 0 and 1, reported as the MINIMUM over chunks of
 * round trips: a chunk that the kernel preempted (other work on the machine) only raises its
 * own time, so the figure stays put on a loaded machine, where a mean or median does not. It
 * measures the path's cost when it runs undisturbed; use p2p.c for the standard figures.
 * Plain MPI, compiled unchanged with mpc_cc, mpicc.openmpi and mpicc.mpich.
 *   pingpong_min [CHUNKS [ROUND_TRIPS_PER_CHUNK [BYTES]]]   (defaults 300, 2000, 0) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int chunks = argc > 1 ? atoi(argv[1]) : 300;
    int k = argc > 2 ? atoi(argv[2]) : 2000;
    int bytes = argc > 3 ? atoi(argv[3]) : 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || chunks < 1 || k < 1 || bytes < 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: pingpong_min [CHUNKS [ROUND_TRIPS [BYTES]]] with at least 2 ranks\n");
        }
        MPI_Finalize();
        return 2;
    }
    char* buf = calloc((size_t)bytes + 1, 1);
    double best = 1e30;
    for (int c = 0; c < chunks; c++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < k && rank < 2; i++) {
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t;
        if (t < best) {
            best = t;
        }
    }
    if (rank == 0) {
        printf("pingpong_min: %d B half round trip %.4f us (min over %d chunks of %d round trips)\n", bytes,
               best / k / 2 * 1e6, chunks, k);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
