/* ring.c: a token goes around the ranks twice with MPI_Send/MPI_Recv, each rank adding its rank
 * number; rank 0 checks the sum. Shows that the ranks of one process really exchange messages. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int next = (rank + 1) % size;
    const int prev = (rank + size - 1) % size;
    long token = 0;
    for (int lap = 0; lap < 2; ++lap) {
        if (rank == 0) {
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
        }
    }
    int status = 0;
    if (rank == 0) {
        const long expected = 2L * size * (size - 1) / 2;
        if (token != expected) {
            fprintf(stderr, "ring: token %ld, expected %ld\n", token, expected);
            status = 1;
        } else {
            printf("ring of %d ranks: OK\n", size);
        }
    }
    MPI_Finalize();
    return status;
}
