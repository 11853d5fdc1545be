/* Rank 1 overflows its stack (which lives in its address slice, above a guard page) while the
 * other ranks wait in a barrier: the job must end with one line naming the rank and the stack,
 * never hang. */
#include <mpi.h>

static int recurse(int n, int limit) {
    volatile char frame[4096];
    frame[0] = (char)n;
    return n < limit ? recurse(n + 1, limit) + frame[0] : 0;  /* limit: far beyond any stack */
}

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        recurse(0, 1 << 30);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
