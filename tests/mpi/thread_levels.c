/* MPI_Init_thread gives the level asked for (up to MPI_THREAD_MULTIPLE), MPI_Query_thread
 * reports it, and non-blocking traffic works at every level (below MULTIPLE the rank's request
 * pool takes no lock). The level asked for is argv[1]: 0 SINGLE .. 3 MULTIPLE. Exit status 0
 * on success. */
#include <mpi.h>
#include <stdio.h>

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            printf("rank %d: line %d: check failed: %s\n", rank, __LINE__, #c); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

int main(int argc, char **argv) {
    int rank = -1, size = 0, provided = -1, queried = -1, is_main = 0;
    /* The level comes from argv[1] (0..3): ctest runs the program once per level. */
    const int levels[4] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
    int want = argc > 1 ? levels[(argv[1][0] - '0') & 3] : MPI_THREAD_SERIALIZED;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == want);
    MPI_Query_thread(&queried);
    CHECK(queried == provided);
    MPI_Is_thread_main(&is_main);
    CHECK(is_main == 1);
    /* Windows of non-blocking messages around the ring. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 100; ++round) {
        int out[16], in[16];
        MPI_Request reqs[32];
        for (int i = 0; i < 16; ++i) {
            out[i] = rank * 1000 + round * 16 + i;
            MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &reqs[i]);
        }
        for (int i = 0; i < 16; ++i) {
            MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &reqs[16 + i]);
        }
        MPI_Waitall(32, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 16; ++i) {
            CHECK(in[i] == left * 1000 + round * 16 + i);
        }
    }
    MPI_Finalize();
    return 0;
}
