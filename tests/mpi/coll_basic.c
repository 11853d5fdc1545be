/* The basic collectives: results checked against values each rank can compute, MPI_IN_PLACE,
 * a non-commutative user operation (rank order), MINLOC/MAXLOC, and error classes (bad root,
 * an operation not defined on the datatype). Exit status 0 on success. */
#include <mpi.h>
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

/* 2x2 integer matrix product modulo a prime (inout = in * inout): not commutative. len counts ints. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    int *a = in, *b = inout;
    for (int i = 0; i < *len / 4; ++i, a += 4, b += 4) {
        const long long p = 1000003; /* modulo a prime: no overflow, still not commutative */
        int c[4] = {(int)((1LL * a[0] * b[0] + 1LL * a[1] * b[2]) % p), (int)((1LL * a[0] * b[1] + 1LL * a[1] * b[3]) % p),
                    (int)((1LL * a[2] * b[0] + 1LL * a[3] * b[2]) % p), (int)((1LL * a[2] * b[1] + 1LL * a[3] * b[3]) % p)};
        memcpy(b, c, sizeof(c));
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long sum_ranks = (long long)size * (size - 1) / 2;

    /* Reduce / Allreduce */
    long long v = rank, r = -1;
    MPI_Reduce(&v, &r, 1, MPI_LONG_LONG, MPI_SUM, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1) CHECK(r == sum_ranks);
    double d[3] = {rank, -rank, 1.0}, dr[3];
    MPI_Allreduce(d, dr, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(dr[0] == size - 1 && dr[1] == 0 && dr[2] == 1.0);
    int iv = rank + 1;
    MPI_Allreduce(MPI_IN_PLACE, &iv, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
    if (size <= 10) {
        int f = 1;
        for (int i = 2; i <= size; ++i) f *= i;
        CHECK(iv == f);
    }
    struct { double v; int i; } loc = {(double)(size - 1 - rank), rank}, lr;
    MPI_Allreduce(&loc, &lr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(lr.v == size - 1 && lr.i == 0);
    MPI_Allreduce(&loc, &lr, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(lr.v == 0 && lr.i == size - 1);
    loc.v = 5; /* ties: the lowest index wins */
    MPI_Allreduce(&loc, &lr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(lr.v == 5 && lr.i == 0);

    /* non-commutative user op: the result must be M0 * M1 * ... * M(size-1), in rank order */
    MPI_Op mop;
    MPI_Op_create(matmul, 0, &mop);
    int m[4] = {1, rank % 3, rank % 2, 1}, mr[4] = {0, 0, 0, 0};
    MPI_Reduce(m, mr, 4, MPI_INT, mop, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int acc[4] = {1, (size - 1) % 3, (size - 1) % 2, 1}, four = 4;
        for (int r2 = size - 2; r2 >= 0; --r2) {
            int mm[4] = {1, r2 % 3, r2 % 2, 1};
            matmul(mm, acc, &four, NULL);
        }
        CHECK(memcmp(acc, mr, sizeof(acc)) == 0);
    }
    int comm_flag = 1;
    MPI_Op_commutative(mop, &comm_flag);
    CHECK(comm_flag == 0);
    MPI_Op_free(&mop);
    CHECK(mop == MPI_OP_NULL);

    /* Gather / Scatter / Allgather / Alltoall */
    int *all = malloc(sizeof(int) * (size_t)size * 2);
    int two[2] = {rank, -rank};
    MPI_Gather(two, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < size; ++i) CHECK(all[2 * i] == i && all[2 * i + 1] == -i);
    int got[2] = {-9, -9};
    MPI_Scatter(all, 2, MPI_INT, got, 2, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(got[0] == rank && got[1] == -rank);
    memset(all, 0, sizeof(int) * (size_t)size * 2);
    MPI_Allgather(two, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) CHECK(all[2 * i] == i && all[2 * i + 1] == -i);
    for (int i = 0; i < size; ++i) all[i] = rank * 1000 + i;
    int *a2 = malloc(sizeof(int) * (size_t)size);
    MPI_Alltoall(all, 1, MPI_INT, a2, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) CHECK(a2[i] == i * 1000 + rank);
    MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) CHECK(all[i] == i * 1000 + rank);

    /* Gatherv with gaps, Allgatherv in place */
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int i = 0; i < size; ++i) {
        counts[i] = i % 3;
        displs[i] = total + 1; /* one-int gap before each block */
        total += counts[i] + 1;
    }
    int *vbuf = malloc(sizeof(int) * (size_t)(total + 1));
    for (int i = 0; i <= total; ++i) vbuf[i] = -1;
    int mine[2] = {rank, rank};
    for (int i = 0; i < counts[rank]; ++i) vbuf[displs[rank] + i] = rank;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, vbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) {
        CHECK(vbuf[displs[i] - 1] == -1);
        for (int j = 0; j < counts[i]; ++j) CHECK(vbuf[displs[i] + j] == i);
    }
    (void)mine;

    /* Reduce_scatter_block, Scan, Exscan */
    for (int i = 0; i < size; ++i) all[i] = i + rank;
    int rs = -1;
    MPI_Reduce_scatter_block(all, &rs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rs == size * rank + (int)sum_ranks);
    int sc = -1, ex = -1, one = rank;
    MPI_Scan(&one, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sc == rank * (rank + 1) / 2);
    MPI_Exscan(&one, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0) CHECK(ex == rank * (rank - 1) / 2);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Bcast(&one, 1, MPI_INT, size, MPI_COMM_WORLD) == MPI_ERR_ROOT);
    CHECK(MPI_Reduce(&one, &sc, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD) == MPI_ERR_ROOT);
    CHECK(MPI_Allreduce(d, dr, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD) == MPI_ERR_OP);
    CHECK(MPI_Allreduce(&one, &sc, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD) == MPI_ERR_OP);
    CHECK(MPI_Allreduce(&one, &sc, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_ERR_COUNT);
    int lo = 3, hi = 0;
    CHECK(MPI_Reduce_local(&lo, &hi, 1, MPI_INT, MPI_MAX) == MPI_SUCCESS && hi == 3);

    free(all);
    free(a2);
    free(counts);
    free(displs);
    free(vbuf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("coll_basic: %d ranks OK\n", size);
    return 0;
}
