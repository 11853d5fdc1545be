/* exit_status.c R S: rank R returns S from main (after MPI_Finalize), every other rank 0;
 * mpc_run must exit with S. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int failing = argc > 1 ? atoi(argv[1]) : 3;
    const int code = argc > 2 ? atoi(argv[2]) : 5;
    MPI_Finalize();
    return rank == failing ? code : 0;
}
