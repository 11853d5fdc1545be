/* A deliberate heap overrun in every rank: under Valgrind's memcheck (tests mpi.valgrind.*)
 * the job must fail with memcheck's error status, which shows that errors in a rank's code are
 * seen through MPC's user-level threads and allocator. Outside Valgrind it runs cleanly
 * enough (the read stays inside malloc's rounding) and exits 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    volatile char* p = malloc(13);
    for (int i = 0; i < 13; ++i) {
        p[i] = (char)i;
    }
    volatile int end = 13;
    int past = p[end]; /* one byte past the block */
    int sum = 0;
    MPI_Allreduce(&past, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free((void*)p);
    if (rank == 0) {
        printf("valgrind_bad: done\n");
    }
    MPI_Finalize();
    return 0;
}
