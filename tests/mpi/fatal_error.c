/* Under MPI_ERRORS_ARE_FATAL (the default), an invalid destination ends the job with one line
 * naming the rank, the call and the reason; ctest checks the output and the non-zero status. */
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1) {
        MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD); /* never returns */
        return 0;
    }
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* would wait forever */
    MPI_Finalize();
    return 0;
}
