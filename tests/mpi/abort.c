/* abort.c R C: rank R calls MPI_Abort(MPI_COMM_WORLD, C) while the others wait in MPI_Recv for a
 * message that never comes; mpc_run must exit with C. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int aborting = argc > 1 ? atoi(argv[1]) : 1;
    const int code = argc > 2 ? atoi(argv[2]) : 7;
    if (rank == aborting) {
        MPI_Abort(MPI_COMM_WORLD, code);
        fprintf(stderr, "abort: MPI_Abort returned\n");
        return 100;
    }
    int x = 0;
    MPI_Recv(&x, 1, MPI_INT, aborting, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "abort: rank %d received a message nobody sent\n", rank);
    MPI_Finalize();
    return 101;
}
