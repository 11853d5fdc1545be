/* Bad arguments to the collectives (issue 6) under MPI_ERRORS_RETURN: every case is an error
 * every rank can see in its own arguments (all ranks pass the same bad value), so every rank
 * must return the error class, none may hang, and the job must go on correctly afterwards
 * (checked after every case group, on MPI_COMM_WORLD and on a duplicate).
 *
 *   coll_errors GROUP[,GROUP...]     (default: all of them)
 *
 *   root      root out of range (size, -1 = MPI_PROC_NULL, MPI_ROOT, huge) -> MPI_ERR_ROOT
 *   buffer    null buffers with count > 0 (MPI_BOTTOM is null too, so predefined types only)
 *             and send buffer = receive buffer without MPI_IN_PLACE -> MPI_ERR_BUFFER
 *   count     negative counts, negative entries of count arrays -> MPI_ERR_COUNT
 *   type      MPI_DATATYPE_NULL, an uncommitted derived type -> MPI_ERR_TYPE
 *   op        MPI_OP_NULL, MPI_BAND on MPI_DOUBLE -> MPI_ERR_OP
 *   inplace   MPI_IN_PLACE where the standard does not allow it -> MPI_ERR_BUFFER or MPI_ERR_ARG
 *   comm      MPI_COMM_NULL; Scan/Exscan on an intercommunicator -> MPI_ERR_COMM
 *   truncate  Allgather/Alltoall receiving fewer elements than each rank sends (the counts
 *             differ in each rank's own arguments) -> MPI_ERR_TRUNCATE
 *   handler   the communicator's own error handler is called, once per failed call, with the
 *             communicator and an error code of the right class
 *
 * Exit status 0 on success. */
#include "coll_common.h"

/* `call` must fail with class `cls` (or `alt`, when not MPI_SUCCESS). */
#define EXPECT2(t, call, cls, alt)                                                                                 \
    do {                                                                                                           \
        coll_trace_((t), __LINE__, #call);                                                                         \
        int e_ = (call), c_ = -1;                                                                                  \
        MPI_Error_class(e_, &c_);                                                                                  \
        if (c_ != (cls) && (c_ != (alt) || (alt) == MPI_SUCCESS))                                                  \
            FAIL((t), "%s: expected %s%s%s, got %s (%d)", #call, coll_class_name(cls), (alt) ? " or " : "",      \
                 (alt) ? coll_class_name(alt) : "", coll_class_name(c_), e_);                                      \
    } while (0)

enum { N = 4 };

/* After the errors: a few collectives on comm give the right results. */
static void still_works(tctx *t, MPI_Comm comm, const char *after) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    coll_where(t, "collectives after the %s errors", after);
    long long v = rank + 1, s = 0;
    CALL(t, MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, comm));
    if (s != (long long)size * (size + 1) / 2) FAIL(t, "MPI_Allreduce: %lld", s);
    int b[3] = {rank, rank, rank};
    if (rank == size - 1) b[0] = b[1] = b[2] = 4242;
    CALL(t, MPI_Bcast(b, 3, MPI_INT, size - 1, comm));
    if (b[0] != 4242 || b[2] != 4242) FAIL(t, "MPI_Bcast: %d %d", b[0], b[2]);
    int *a = malloc(sizeof(int) * (size_t)size), *r = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; ++i) a[i] = rank * 1000 + i;
    CALL(t, MPI_Alltoall(a, 1, MPI_INT, r, 1, MPI_INT, comm));
    for (int i = 0; i < size; ++i)
        if (r[i] != i * 1000 + rank) {
            FAIL(t, "MPI_Alltoall: element %d is %d", i, r[i]);
            break;
        }
    CALL(t, MPI_Gather(&rank, 1, MPI_INT, r, 1, MPI_INT, 0, comm));
    if (rank == 0)
        for (int i = 0; i < size; ++i)
            if (r[i] != i) {
                FAIL(t, "MPI_Gather: element %d is %d", i, r[i]);
                break;
            }
    CALL(t, MPI_Barrier(comm));
    /* nothing was left behind for point-to-point receives */
    int flag = 1;
    CALL(t, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
    if (flag) FAIL(t, "a message is waiting on the communicator after the errors");
    free(a);
    free(r);
}

static void g_root(tctx *t) {
    int size = t->size, x[N] = {0}, y[N * 64] = {0};
    int bad[4] = {size, MPI_PROC_NULL, MPI_ROOT, 1 << 30};
    int cnt[64], dis[64];
    for (int i = 0; i < 64; ++i) cnt[i] = 1, dis[i] = i;
    for (int k = 0; k < 4; ++k) {
        int root = bad[k];
        coll_where(t, "root %d", root);
        EXPECT_CLASS(t, MPI_Bcast(x, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
        EXPECT_CLASS(t, MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
        EXPECT_CLASS(t, MPI_Gatherv(x, 1, MPI_INT, y, cnt, dis, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
        EXPECT_CLASS(t, MPI_Scatter(y, 1, MPI_INT, x, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
        EXPECT_CLASS(t, MPI_Scatterv(y, cnt, dis, MPI_INT, x, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
        EXPECT_CLASS(t, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
    }
}

static void g_buffer(tctx *t) {
    int size = t->size, x[N] = {0}, *y = calloc((size_t)size * N, sizeof(int));
    int *cnt = calloc((size_t)size, sizeof(int)), *dis = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; ++i) cnt[i] = 1, dis[i] = i;
    coll_where(t, "null buffers");
    EXPECT_CLASS(t, MPI_Bcast(NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Reduce(NULL, y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Allreduce(NULL, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Allreduce(x, NULL, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Gather(NULL, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Gatherv(NULL, 1, MPI_INT, y, cnt, dis, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Scatter(y, 1, MPI_INT, NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Scatterv(y, cnt, dis, MPI_INT, NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Allgather(NULL, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Allgather(x, 1, MPI_INT, NULL, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Allgatherv(x, 1, MPI_INT, NULL, cnt, dis, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Alltoall(NULL, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Alltoall(y, 1, MPI_INT, NULL, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Alltoallv(NULL, cnt, dis, MPI_INT, y, cnt, dis, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Reduce_scatter_block(NULL, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Reduce_scatter(y, NULL, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Scan(NULL, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Scan(x, NULL, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Exscan(NULL, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Reduce_local(NULL, x, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Reduce_local(x, NULL, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    coll_where(t, "send buffer = receive buffer (not MPI_IN_PLACE)");
    EXPECT_CLASS(t, MPI_Allreduce(y, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Alltoall(y, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Scan(y, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Reduce_scatter_block(y, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    coll_where(t, "null buffers with count 0 (valid)");
    CALL(t, MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    CALL(t, MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CALL(t, MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
    CALL(t, MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
    /* MPI_BOTTOM (null) with a type of absolute addresses is a valid buffer */
    coll_where(t, "MPI_BOTTOM with absolute addresses (valid)");
    {
        int v[2] = {t->rank == 0 ? 41 : -1, t->rank == 0 ? 42 : -1}, blen[2] = {1, 1}, one = 1;
        MPI_Aint disp[2];
        MPI_Datatype types[2] = {MPI_INT, MPI_INT}, abs_t, one_t;
        MPI_Get_address(&v[0], &disp[0]);
        MPI_Get_address(&v[1], &disp[1]);
        CALL(t, MPI_Type_create_struct(2, blen, disp, types, &abs_t));
        CALL(t, MPI_Type_commit(&abs_t));
        CALL(t, MPI_Bcast(MPI_BOTTOM, 1, abs_t, 0, MPI_COMM_WORLD));
        if (v[0] != 41 || v[1] != 42) FAIL(t, "MPI_Bcast(MPI_BOTTOM, absolute type): got %d %d", v[0], v[1]);
        MPI_Get_address(&one, &disp[0]);
        CALL(t, MPI_Type_create_hindexed(1, blen, disp, MPI_INT, &one_t));
        CALL(t, MPI_Type_commit(&one_t));
        CALL(t, MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, one_t, MPI_SUM, MPI_COMM_WORLD));
        if (one != size) FAIL(t, "MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, absolute type): got %d, expected %d", one, size);
        CALL(t, MPI_Type_free(&abs_t));
        CALL(t, MPI_Type_free(&one_t));
    }
    free(y);
    free(cnt);
    free(dis);
}

static void g_count(tctx *t) {
    int size = t->size, x[N] = {0}, *y = calloc((size_t)size * N, sizeof(int));
    int *cnt = calloc((size_t)size, sizeof(int)), *dis = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; ++i) cnt[i] = 1, dis[i] = i;
    cnt[size - 1] = -1; /* a negative entry, in every rank's array */
    coll_where(t, "negative counts");
    EXPECT_CLASS(t, MPI_Bcast(x, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Reduce(x, y, -1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Gather(x, -1, MPI_INT, y, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Scatter(y, -1, MPI_INT, x, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Allgather(x, -1, MPI_INT, y, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Alltoall(y, -1, MPI_INT, x, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Scan(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Exscan(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Reduce_scatter_block(y, x, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Reduce_local(x, y, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    coll_where(t, "a negative entry in a count array");
    EXPECT_CLASS(t, MPI_Reduce_scatter(y, x, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Allgatherv(x, t->rank == size - 1 ? 0 : 1, MPI_INT, y, cnt, dis, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Alltoallv(y, cnt, dis, MPI_INT, x, cnt, dis, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    free(y);
    free(cnt);
    free(dis);
}

static void g_type(tctx *t) {
    int size = t->size, x[N] = {0}, *y = calloc((size_t)size * N * 2, sizeof(int));
    MPI_Datatype unc;
    CALL(t, MPI_Type_contiguous(2, MPI_INT, &unc)); /* not committed */
    MPI_Datatype bad[2] = {MPI_DATATYPE_NULL, unc};
    const char *names[2] = {"MPI_DATATYPE_NULL", "an uncommitted type"};
    for (int k = 0; k < 2; ++k) {
        MPI_Datatype d = bad[k];
        coll_where(t, "%s", names[k]);
        EXPECT_CLASS(t, MPI_Bcast(x, 1, d, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Reduce(x, y, 1, d, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Allreduce(x, y, 1, d, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Gather(x, 1, d, y, 1, d, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Scatter(y, 1, d, x, 1, d, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Allgather(x, 1, d, y, 1, d, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Allgather(x, 1, MPI_INT, y, 1, d, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Alltoall(y, 1, d, x, 1, d, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Scan(x, y, 1, d, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Exscan(x, y, 1, d, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Reduce_scatter_block(y, x, 1, d, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
        EXPECT_CLASS(t, MPI_Reduce_local(x, y, 1, d, MPI_SUM), MPI_ERR_TYPE);
    }
    CALL(t, MPI_Type_free(&unc));
    free(y);
}

static void g_op(tctx *t) {
    int size = t->size;
    double d[N] = {0}, *e = calloc((size_t)size * N, sizeof(double));
    int cnt[1] = {1};
    (void)cnt;
    MPI_Op bad[2] = {MPI_OP_NULL, MPI_BAND};
    const char *names[2] = {"MPI_OP_NULL", "MPI_BAND on MPI_DOUBLE"};
    int *rc = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; ++i) rc[i] = 1;
    for (int k = 0; k < 2; ++k) {
        coll_where(t, "%s", names[k]);
        EXPECT_CLASS(t, MPI_Reduce(d, e, 1, MPI_DOUBLE, bad[k], 0, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT_CLASS(t, MPI_Allreduce(d, e, 1, MPI_DOUBLE, bad[k], MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT_CLASS(t, MPI_Reduce_scatter_block(e, d, 1, MPI_DOUBLE, bad[k], MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT_CLASS(t, MPI_Reduce_scatter(e, d, rc, MPI_DOUBLE, bad[k], MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT_CLASS(t, MPI_Scan(d, e, 1, MPI_DOUBLE, bad[k], MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT_CLASS(t, MPI_Exscan(d, e, 1, MPI_DOUBLE, bad[k], MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT_CLASS(t, MPI_Reduce_local(d, e, 1, MPI_DOUBLE, bad[k]), MPI_ERR_OP);
    }
    free(e);
    free(rc);
}

static void g_inplace(tctx *t) {
    int size = t->size, rank = t->rank, x[N] = {0}, *y = calloc((size_t)size * N, sizeof(int));
    int *cnt = calloc((size_t)size, sizeof(int)), *dis = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; ++i) cnt[i] = 1, dis[i] = i;
    coll_where(t, "MPI_IN_PLACE where it is not allowed");
    EXPECT2(t, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Allreduce(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Allgather(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Alltoall(y, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
            MPI_ERR_ARG);
    EXPECT2(t, MPI_Alltoallv(y, cnt, dis, MPI_INT, MPI_IN_PLACE, cnt, dis, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
            MPI_ERR_ARG);
    EXPECT2(t, MPI_Scan(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Exscan(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Reduce_scatter_block(y, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER,
            MPI_ERR_ARG);
    EXPECT2(t, MPI_Reduce_local(MPI_IN_PLACE, x, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Reduce_local(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, MPI_ERR_ARG);
    /* rooted: MPI_IN_PLACE on the wrong side everywhere (the root's receive side, the others'
     * send side for Gather; the reverse for Scatter; the root's receive buffer for Reduce) */
    coll_where(t, "MPI_IN_PLACE on the wrong side of a rooted collective");
    EXPECT2(t, MPI_Gather(rank == 0 ? (void *)x : MPI_IN_PLACE, 1, MPI_INT, rank == 0 ? MPI_IN_PLACE : NULL, 1,
                          MPI_INT, 0, MPI_COMM_WORLD),
            MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Scatter(rank == 0 ? MPI_IN_PLACE : NULL, 1, MPI_INT, rank == 0 ? (void *)x : MPI_IN_PLACE, 1,
                           MPI_INT, 0, MPI_COMM_WORLD),
            MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Reduce(rank == 0 ? (void *)x : MPI_IN_PLACE, rank == 0 ? MPI_IN_PLACE : NULL, 1, MPI_INT,
                          MPI_SUM, 0, MPI_COMM_WORLD),
            MPI_ERR_BUFFER, MPI_ERR_ARG);
    free(y);
    free(cnt);
    free(dis);
}

static void g_comm(tctx *t) {
    int size = t->size, x[N] = {0}, *y = calloc((size_t)size * N, sizeof(int));
    int *cnt = calloc((size_t)size, sizeof(int)), *dis = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; ++i) cnt[i] = 1, dis[i] = i;
    MPI_Comm c = MPI_COMM_NULL;
    coll_where(t, "MPI_COMM_NULL");
    EXPECT_CLASS(t, MPI_Barrier(c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Bcast(x, 1, MPI_INT, 0, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, 0, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Gatherv(x, 1, MPI_INT, y, cnt, dis, MPI_INT, 0, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Scatter(y, 1, MPI_INT, x, 1, MPI_INT, 0, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Scatterv(y, cnt, dis, MPI_INT, x, 1, MPI_INT, 0, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Allgatherv(x, 1, MPI_INT, y, cnt, dis, MPI_INT, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Alltoall(y, 1, MPI_INT, x, 1, MPI_INT, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Alltoallv(y, cnt, dis, MPI_INT, x, cnt, dis, MPI_INT, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, 0, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Reduce_scatter_block(y, x, 1, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Reduce_scatter(y, x, cnt, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    EXPECT_CLASS(t, MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    if (size >= 2) {
        /* Scan and Exscan are not defined on intercommunicators */
        coll_where(t, "MPI_Scan / MPI_Exscan on an intercommunicator");
        MPI_Comm half, inter;
        int color = t->rank % 2;
        CALL(t, MPI_Comm_split(MPI_COMM_WORLD, color, t->rank, &half));
        CALL(t, MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter));
        CALL(t, MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        EXPECT_CLASS(t, MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
        EXPECT_CLASS(t, MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
        CALL(t, MPI_Comm_free(&inter));
        CALL(t, MPI_Comm_free(&half));
    }
    free(y);
    free(cnt);
    free(dis);
}

static void g_truncate(tctx *t) {
    int size = t->size, x[2] = {1, 2}, *y = calloc((size_t)size * 4, sizeof(int));
    coll_where(t, "receive count smaller than the send count");
    EXPECT_CLASS(t, MPI_Allgather(x, 2, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    int *z = calloc((size_t)size * 2, sizeof(int));
    EXPECT_CLASS(t, MPI_Alltoall(z, 2, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    free(y);
    free(z);
}

/* The error handler counts its calls in a struct whose address is in the communicator's name
 * (no globals: the ranks are threads of one process). */
typedef struct {
    int calls;
    int last_class;
    int same_comm;
    MPI_Comm comm;
} hcount;

static void counting_handler(MPI_Comm *comm, int *code, ...) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    void *p = NULL;
    MPI_Comm_get_name(*comm, name, &len);
    if (sscanf(name, "coll_errors counter %p", &p) != 1 || p == NULL) {
        fprintf(stderr, "coll_errors: the error handler was called with another communicator (%s)\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    hcount *h = p;
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(*comm, h->comm, &cmp);
    h->same_comm = cmp == MPI_IDENT;
    h->calls++;
    MPI_Error_class(*code, &h->last_class);
}

static void g_handler(tctx *t) {
    MPI_Comm dup;
    CALL(t, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    hcount hc = {0, -1, 0, dup};
    char name[MPI_MAX_OBJECT_NAME];
    snprintf(name, sizeof name, "coll_errors counter %p", (void *)&hc);
    CALL(t, MPI_Comm_set_name(dup, name));
    MPI_Errhandler eh;
    CALL(t, MPI_Comm_create_errhandler(counting_handler, &eh));
    CALL(t, MPI_Comm_set_errhandler(dup, eh));
    int size = t->size, x[N] = {0}, *y = calloc((size_t)size * N, sizeof(int));
    struct {
        const char *what;
        int expect;
    } cases[4] = {{"MPI_Bcast, root out of range", MPI_ERR_ROOT},
                  {"MPI_Allreduce, MPI_SUM on MPI_2INT", MPI_ERR_OP},
                  {"MPI_Alltoall, negative count", MPI_ERR_COUNT},
                  {"MPI_Gather, MPI_DATATYPE_NULL", MPI_ERR_TYPE}};
    for (int k = 0; k < 4; ++k) {
        coll_where(t, "a user error handler: %s", cases[k].what);
        int e = MPI_SUCCESS;
        switch (k) {
            case 0: e = MPI_Bcast(x, 1, MPI_INT, size, dup); break;
            case 1: e = MPI_Allreduce(x, y, 1, MPI_2INT, MPI_SUM, dup); break;
            case 2: e = MPI_Alltoall(y, -1, MPI_INT, x, -1, MPI_INT, dup); break;
            default: e = MPI_Gather(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_DATATYPE_NULL, 0, dup); break;
        }
        int cls = -1;
        MPI_Error_class(e, &cls);
        if (cls != cases[k].expect)
            FAIL(t, "returned %s, expected %s", coll_class_name(cls), coll_class_name(cases[k].expect));
        if (hc.calls != k + 1) FAIL(t, "the handler was called %d times in all, expected %d", hc.calls, k + 1);
        if (hc.calls > 0 && (!hc.same_comm || hc.last_class != cases[k].expect))
            FAIL(t, "the handler got %s on %s communicator", coll_class_name(hc.last_class),
                 hc.same_comm ? "the" : "another");
        hc.calls = k + 1;
    }
    CALL(t, MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    CALL(t, MPI_Errhandler_free(&eh));
    still_works(t, dup, "handler");
    CALL(t, MPI_Comm_free(&dup));
    free(y);
}

typedef struct {
    const char *name;
    void (*fn)(tctx *);
} group_t;

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_errors", &argc, &argv);
    const group_t groups[] = {{"root", g_root},       {"buffer", g_buffer},     {"count", g_count},
                              {"type", g_type},       {"op", g_op},             {"inplace", g_inplace},
                              {"comm", g_comm},       {"truncate", g_truncate}, {"handler", g_handler}};
    const int ngroups = (int)(sizeof(groups) / sizeof(groups[0]));
    const char *want = argc > 1 ? argv[1] : "all";
    MPI_Comm dup;
    CALL(&t, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int ran = 0;
    for (int g = 0; g < ngroups; ++g) {
        char list[256];
        snprintf(list, sizeof list, ",%s,", want);
        char item[64];
        snprintf(item, sizeof item, ",%s,", groups[g].name);
        if (strcmp(want, "all") != 0 && strstr(list, item) == NULL) continue;
        groups[g].fn(&t);
        still_works(&t, MPI_COMM_WORLD, groups[g].name);
        still_works(&t, dup, groups[g].name);
        ++ran;
    }
    CALL(&t, MPI_Comm_free(&dup));
    if (ran == 0) {
        if (t.rank == 0) fprintf(stderr, "coll_errors: no such group: %s\n", want);
        MPI_Finalize();
        return 2;
    }
    return coll_finish(&t);
}
