/* empty.c: MPI_Init and MPI_Finalize only, for the start-up time and memory per rank. */
#include <mpi.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
