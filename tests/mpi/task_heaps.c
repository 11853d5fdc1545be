/* Every rank's allocations come from its own address slice (issue 4): malloc, calloc,
 * realloc, posix_memalign, aligned_alloc and the stack-adjacent big blocks all land in the slice
 * of the calling rank, and so does its stack; a block freed by another rank (same process) is given back to its owner
 * and reused; a plain thread of a rank allocates outside the slices. Under MPC_ALLOCATOR=system
 * (or a sanitizer build) every block is outside the slices. Exit status 0 on success. */
#define _GNU_SOURCE
#include <mpc.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            printf("rank %d: line %d: check failed: %s\n", rank, __LINE__, #c); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

static void *thread_body(void *arg) {
    void **out = arg;
    *out = malloc(1000);
    return NULL;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int active = MPC_Allocator_active();
    int expect = active ? rank : -1;

    size_t sizes[] = {1, 24, 100, 1000, 5000, 70000, 3 << 20};
    void *blocks[7];
    for (int i = 0; i < 7; ++i) {
        blocks[i] = malloc(sizes[i]);
        CHECK(blocks[i] != NULL);
        memset(blocks[i], rank & 0xff, sizes[i]);
        CHECK(MPC_Allocator_slice_of(blocks[i]) == expect);
    }
    char *z = calloc(100, 100);
    CHECK(z != NULL && z[9999] == 0 && MPC_Allocator_slice_of(z) == expect);
    z = realloc(z, 1 << 22);
    CHECK(z != NULL && z[9999] == 0 && MPC_Allocator_slice_of(z) == expect);
    void *al = NULL;
    CHECK(posix_memalign(&al, 4096, 100) == 0 && ((uintptr_t)al & 4095) == 0);
    CHECK(MPC_Allocator_slice_of(al) == expect);
    void *aa = aligned_alloc(256, 512);
    CHECK(aa != NULL && ((uintptr_t)aa & 255) == 0 && MPC_Allocator_slice_of(aa) == expect);
    int local = 0;
    CHECK(MPC_Allocator_slice_of(&local) == expect); /* the rank's stack is in its slice too */

    /* Cross-rank frees: rank r hands 100 blocks to rank r+1, which frees them. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    void *give[100], *got[100];
    for (int i = 0; i < 100; ++i) {
        give[i] = malloc(64 + (size_t)i * 10);
        memset(give[i], 0x5a, 64);
    }
    MPI_Sendrecv(give, (int)sizeof give, MPI_BYTE, right, 1, got, (int)sizeof got, MPI_BYTE, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 100; ++i) {
        CHECK(((unsigned char *)got[i])[63] == 0x5a);
        CHECK(MPC_Allocator_slice_of(got[i]) == (active ? left : -1));
        free(got[i]); /* a remote free for the left rank's heap */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* The returned blocks are reused: many more rounds stay within the slice. */
    for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < 100; ++i) {
            give[i] = malloc(64 + (size_t)i * 10);
            CHECK(MPC_Allocator_slice_of(give[i]) == expect);
        }
        MPI_Sendrecv(give, (int)sizeof give, MPI_BYTE, right, 2, got, (int)sizeof got, MPI_BYTE, left, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 100; ++i) {
            free(got[i]);
        }
    }

    /* A plain thread of the rank: its own heap, outside the slices. */
    void *from_thread = NULL;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, thread_body, &from_thread) == 0);
    pthread_join(th, NULL);
    CHECK(from_thread != NULL && MPC_Allocator_slice_of(from_thread) == -1);
    free(from_thread);

    for (int i = 0; i < 7; ++i) {
        CHECK(((unsigned char *)blocks[i])[sizes[i] - 1] == (rank & 0xff));
        free(blocks[i]);
    }
    free(z);
    free(al);
    free(aa);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("task_heaps: %d ranks OK (allocator %s)\n", size, active ? "mpc" : "system");
    MPI_Finalize();
    return 0;
}
