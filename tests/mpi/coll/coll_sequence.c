/* Long sequences of small collectives back to back (issue 6): Barrier, Bcast, Reduce,
 * Allreduce, Allgather(v) and Alltoall with rotating roots, and bursts of Bcasts and Reduces
 * from one root, mixed in an order that changes every iteration, with no other
 * synchronisation between them. Small calls on small communicators take a path of their own
 * (docs/collectives.md, "flat"): a member may run ahead of the others by one call, reusing its
 * buffers; this program checks every result of every call, so a member overwriting data another
 * still reads shows up as a wrong value. Runs on MPI_COMM_WORLD and on a communicator of the even
 * ranks in reverse order, while the odd ranks run their own sequence.
 *
 *   coll_sequence [ITERATIONS]     (default 3000)
 *
 * Exit status 0 on success. */
#include "coll_common.h"

/* The value member r contributes at iteration i, element j. */
static int value(int i, int r, int j) { return (i * 131 + r * 17 + j * 7) % 1009; }

static void one_iteration(tctx *t, MPI_Comm c, int i) {
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    enum { N = 5 };
    int x[N], y[N], expect[N], *g = malloc(sizeof(int) * (size_t)size * 2), *h = malloc(sizeof(int) * (size_t)size * 2);
    for (int j = 0; j < N; ++j) x[j] = value(i, rank, j);
    for (int s = 0; s < 6; ++s) {
        int step = (s + i) % 6; /* the order changes every iteration */
        int root = (i + s) % size;
        switch (step) {
        case 0:
            CALL(t, MPI_Barrier(c));
            break;
        case 1: { /* a count that varies: 1..N ints, from a rotating root */
            int n = 1 + i % N;
            for (int j = 0; j < N; ++j) y[j] = rank == root ? value(i, root, j) : -1;
            CALL(t, MPI_Bcast(y, n, MPI_INT, root, c));
            for (int j = 0; j < N; ++j) {
                int e = j < n ? value(i, root, j) : (rank == root ? value(i, root, j) : -1);
                if (y[j] != e) FAIL(t, "iteration %d: MPI_Bcast from %d: element %d: expected %d, got %d", i, root, j, e, y[j]);
            }
            break;
        }
        case 2: {
            for (int j = 0; j < N; ++j) {
                expect[j] = 0;
                for (int r = 0; r < size; ++r) expect[j] += value(i, r, j);
                y[j] = -7;
            }
            CALL(t, MPI_Reduce(x, y, N, MPI_INT, MPI_SUM, root, c));
            if (rank == root)
                for (int j = 0; j < N; ++j)
                    if (y[j] != expect[j])
                        FAIL(t, "iteration %d: MPI_Reduce to %d: element %d: expected %d, got %d", i, root, j, expect[j], y[j]);
            break;
        }
        case 3: {
            int m = -1;
            CALL(t, MPI_Allreduce(&x[i % N], &m, 1, MPI_INT, MPI_MAX, c));
            int e = 0;
            for (int r = 0; r < size; ++r) e = value(i, r, i % N) > e ? value(i, r, i % N) : e;
            if (m != e) FAIL(t, "iteration %d: MPI_Allreduce(MPI_MAX): expected %d, got %d", i, e, m);
            /* in place, doubles */
            double d[2] = {rank + 0.5, (double)i};
            CALL(t, MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE, MPI_SUM, c));
            double e0 = size * (size - 1) / 2.0 + 0.5 * size, e1 = (double)i * size;
            if (d[0] != e0 || d[1] != e1)
                FAIL(t, "iteration %d: MPI_Allreduce in place: expected %g %g, got %g %g", i, e0, e1, d[0], d[1]);
            break;
        }
        case 4: { /* allgather of 2 ints, then allgatherv of rank % 3 ints */
            int mine[2] = {value(i, rank, 0), value(i, rank, 1)}, cnt[64], dis[64];
            CALL(t, MPI_Allgather(mine, 2, MPI_INT, g, 2, MPI_INT, c));
            for (int r = 0; r < size; ++r)
                for (int j = 0; j < 2; ++j)
                    if (g[2 * r + j] != value(i, r, j))
                        FAIL(t, "iteration %d: MPI_Allgather: block %d element %d: expected %d, got %d", i, r, j, value(i, r, j), g[2 * r + j]);
            int total = 0;
            for (int r = 0; r < size && r < 64; ++r) cnt[r] = r % 3, dis[r] = total, total += cnt[r];
            for (int j = 0; j < total; ++j) g[j] = -3;
            if (size <= 64) {
                CALL(t, MPI_Allgatherv(mine, rank % 3, MPI_INT, g, cnt, dis, MPI_INT, c));
                for (int r = 0; r < size; ++r)
                    for (int j = 0; j < cnt[r]; ++j)
                        if (g[dis[r] + j] != value(i, r, j))
                            FAIL(t, "iteration %d: MPI_Allgatherv: block %d element %d: expected %d, got %d", i, r, j, value(i, r, j), g[dis[r] + j]);
            }
            break;
        }
        case 5: { /* alltoall of one int per pair: member r sends value(i, r, dest) to dest */
            for (int d = 0; d < size; ++d) g[d] = value(i, rank, d), h[d] = -5;
            CALL(t, MPI_Alltoall(g, 1, MPI_INT, h, 1, MPI_INT, c));
            for (int r = 0; r < size; ++r)
                if (h[r] != value(i, r, rank))
                    FAIL(t, "iteration %d: MPI_Alltoall: from %d: expected %d, got %d", i, r, value(i, r, rank), h[r]);
            break;
        }
        }
    }
    /* bursts from one root: a root that runs ahead of the others by several calls must not
     * overwrite data they have not read yet */
    int root = i % size;
    for (int j = 0; j < 8; ++j) {
        int v[2] = {rank == root ? value(i, j, 0) : -1, rank == root ? value(i, j, 1) : -1};
        CALL(t, MPI_Bcast(v, 2, MPI_INT, root, c));
        if (v[0] != value(i, j, 0) || v[1] != value(i, j, 1))
            FAIL(t, "iteration %d: burst MPI_Bcast %d from %d: expected %d %d, got %d %d", i, j, root, value(i, j, 0), value(i, j, 1), v[0], v[1]);
    }
    for (int j = 0; j < 8; ++j) {
        int v = value(i + j, rank, 0), sum = -1, e = 0;
        for (int r = 0; r < size; ++r) e += value(i + j, r, 0);
        CALL(t, MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, root, c));
        if (rank == root && sum != e) FAIL(t, "iteration %d: burst MPI_Reduce %d to %d: expected %d, got %d", i, j, root, e, sum);
    }
    free(g);
    free(h);
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_sequence", &argc, &argv);
    int iters = argc > 1 ? atoi(argv[1]) : 3000;
    if (iters <= 0) {
        if (t.rank == 0) fprintf(stderr, "usage: coll_sequence [ITERATIONS > 0]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm half;
    CALL(&t, MPI_Comm_split(MPI_COMM_WORLD, t.rank % 2, t.size - t.rank, &half));
    CALL(&t, MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    for (int i = 0; i < iters; ++i) {
        snprintf(t.where, sizeof t.where, "MPI_COMM_WORLD");
        one_iteration(&t, MPI_COMM_WORLD, i);
        snprintf(t.where, sizeof t.where, "half of the ranks (%s)", t.rank % 2 ? "odd" : "even");
        one_iteration(&t, half, i);
    }
    CALL(&t, MPI_Comm_free(&half));
    return coll_finish(&t);
}
