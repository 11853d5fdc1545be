/* hello.c [N]: every rank prints "rank R of N" (and the processor name). With an argument, also
 * checks that MPI_COMM_WORLD has N ranks and returns 1 if not. Also used to test the compiler
 * wrappers and FindMPI (tests/mpi/CMakeLists.txt). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    int rank = -1;
    int size = -1;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "hello: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d\n", rank, size);
    fflush(stdout);
    int status = 0;
    if (argc > 1 && atoi(argv[1]) != size) {
        fprintf(stderr, "hello: rank %d: MPI_Comm_size is %d, expected %s\n", rank, size, argv[1]);
        status = 1;
    }
    if (rank < 0 || rank >= size) {
        fprintf(stderr, "hello: rank %d out of range [0, %d)\n", rank, size);
        status = 1;
    }
    MPI_Finalize();
    return status;
}
