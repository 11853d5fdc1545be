/* Every blocking collective of an intracommunicator (issue 6): Barrier, Bcast, Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v), Reduce, Allreduce, Reduce_scatter(_block), Scan and
 * Exscan, each result compared, byte for byte, with a reference computed serially from the
 * deterministic data of every rank (coll_common.h). MPI_Alltoallw is in coll_alltoallw.c.
 *
 *   coll_blocking [small|large|all] [predef|derived|all] [plain|inplace|all] [COLLECTIVE,...]
 *
 * small: counts 0, 1 and 7 (per rank or per block); large: 32768 basic elements per vector
 * (about 128 KiB; per block 32768 / ranks), to reach the long-message algorithms.
 * predef: MPI_INT, MPI_DOUBLE and MPI_2INT; reductions with MPI_SUM, a commutative user sum and a
 * non-commutative user operation (composition of affine maps mod a prime, checked in rank order).
 * derived: a vector with holes, an indexed type whose typemap is not in memory order, a struct
 * (int, double, shorts) resized with padding, and a resized type with a negative lb; for the
 * all-int ones also sent as the derived type and received as MPI_INT (and the reverse), the type
 * signatures matching; reductions with the two user operations (predefined operations are only
 * defined on predefined types, MPI 3.1 section 5.9.2).
 * plain: separate send and receive buffers; inplace: MPI_IN_PLACE wherever the standard allows it.
 * v-variants use uneven counts with zeros and displacements in reverse rank order with gaps;
 * rooted collectives run with roots 0, size-1 and size/2; small runs also on a split
 * communicator whose rank order is the reverse of MPI_COMM_WORLD's, and on one with the even
 * ranks first (under mpc_run -p, processes whose members are not consecutive ranks). Receive buffers (and the
 * send buffers, which are const) are checked whole: bytes outside the typemap must not change.
 * Buffers significant only at the root are NULL elsewhere. The optional last argument runs only
 * the collectives it names (lower case, comma-separated: "allreduce,reduce_scatter_block"; the
 * ctest entries that force an algorithm run the collective they force). Exit status 0 on success. */
#include "coll_common.h"

#define LARGE_BASIC 32768

typedef struct {
    const layout_t *l;
    MPI_Datatype d;
} ty_t;

typedef struct {
    tctx *t;
    MPI_Comm comm;
    const char *cname;
    int rank, size;
    int inplace;
    int roots[3], nroots;
    const char *only; /* comma-separated collective names, or NULL for all */
} env_t;

/* Whether collective `name` is to be run (the `only` argument). */
static int want(const env_t *e, const char *name) {
    if (e->only == NULL) return 1;
    size_t n = strlen(name);
    for (const char *p = e->only; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

/* ---- counts and displacements ------------------------------------------------------------ */

/* Element counts of a send type S and a receive type R for `u` units (a unit: one element of
 * the type with more slots; the other one is MPI_INT or the same type). */
static int cnt_of(const layout_t *x, const layout_t *s, const layout_t *r, int u) {
    int m = s->nslots > r->nslots ? s->nslots : r->nslots;
    return u * (m / x->nslots);
}

static int *ints(int n) {
    int *p = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (p == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

/* Checks that a send buffer (const for MPI) did not change. */
static void check_unchanged(env_t *e, const char *what, const buf_t *b, const buf_t *copy) {
    buf_check(e->t, what, b, copy);
}

/* ---- data movement ------------------------------------------------------------------------ */

static void t_bcast(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int cs = cnt_of(S.l, S.l, R.l, u), cr = cnt_of(R.l, S.l, R.l, u);
    long nb = (long)cs * S.l->nslots;
    for (int k = 0; k < e->nroots; ++k) {
        int root = e->roots[k], me = e->rank == root;
        coll_where(t, "%s: MPI_Bcast %s->%s units %d root %d", e->cname, S.l->name, R.l->name, u, root);
        ty_t my = me ? S : R;
        int cnt = me ? cs : cr;
        buf_t b = buf_new(my.l, cnt, me ? COLL_SEND_HOLE : COLL_SENTINEL);
        buf_t x = buf_new(my.l, cnt, me ? COLL_SEND_HOLE : COLL_SENTINEL);
        uint32_t key = coll_key((uint32_t)root, 1);
        if (me) buf_fill(&b, 0, nb, GEN_PLAIN, key);
        buf_fill(&x, 0, nb, GEN_PLAIN, key);
        CALL(t, MPI_Bcast(b.base, cnt, my.d, root, e->comm));
        buf_check(t, "buffer", &b, &x);
        buf_free(&b);
        buf_free(&x);
    }
}

static void t_gather(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size, cs = cnt_of(S.l, S.l, R.l, u), cr = cnt_of(R.l, S.l, R.l, u);
    long nb = (long)cs * S.l->nslots;
    for (int k = 0; k < e->nroots; ++k) {
        int root = e->roots[k], me = e->rank == root, inpl = e->inplace && me;
        coll_where(t, "%s: MPI_Gather%s %s->%s units %d root %d", e->cname, e->inplace ? " (in place)" : "",
                   S.l->name, R.l->name, u, root);
        buf_t s = buf_new(S.l, cs, COLL_SEND_HOLE);
        buf_fill(&s, 0, nb, GEN_PLAIN, coll_key((uint32_t)e->rank, 2));
        buf_t s0 = buf_copy(&s);
        buf_t r = buf_new(R.l, me ? (long)cr * n : 0, COLL_SENTINEL), x = buf_new(R.l, me ? (long)cr * n : 0, COLL_SENTINEL);
        if (me) {
            for (int i = 0; i < n; ++i) buf_fill(&x, (long)i * cr, nb, GEN_PLAIN, coll_key((uint32_t)i, 2));
            if (inpl) buf_fill(&r, (long)root * cr, nb, GEN_PLAIN, coll_key((uint32_t)root, 2));
        }
        if (inpl) {
            CALL(t, MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.base, cr, R.d, root, e->comm));
        } else if (me) {
            CALL(t, MPI_Gather(s.base, cs, S.d, r.base, cr, R.d, root, e->comm));
        } else {
            CALL(t, MPI_Gather(s.base, cs, S.d, NULL, 0, MPI_DATATYPE_NULL, root, e->comm));
        }
        if (me) buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&s);
        buf_free(&s0);
        buf_free(&r);
        buf_free(&x);
    }
}

static void t_gatherv(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size;
    int *rc = ints(n), *dis = ints(n);
    for (int i = 0; i < n; ++i) rc[i] = cnt_of(R.l, S.l, R.l, coll_vcount(i, u));
    long span = coll_rev_displs(n, rc, dis);
    int cs = cnt_of(S.l, S.l, R.l, coll_vcount(e->rank, u));
    for (int k = 0; k < e->nroots; ++k) {
        int root = e->roots[k], me = e->rank == root, inpl = e->inplace && me;
        coll_where(t, "%s: MPI_Gatherv%s %s->%s units %d root %d", e->cname, e->inplace ? " (in place)" : "",
                   S.l->name, R.l->name, u, root);
        buf_t s = buf_new(S.l, cs, COLL_SEND_HOLE);
        buf_fill(&s, 0, (long)cs * S.l->nslots, GEN_PLAIN, coll_key((uint32_t)e->rank, 3));
        buf_t s0 = buf_copy(&s);
        buf_t r = buf_new(R.l, me ? span : 0, COLL_SENTINEL), x = buf_new(R.l, me ? span : 0, COLL_SENTINEL);
        if (me) {
            for (int i = 0; i < n; ++i)
                buf_fill(&x, dis[i], (long)rc[i] * R.l->nslots, GEN_PLAIN, coll_key((uint32_t)i, 3));
            if (inpl) buf_fill(&r, dis[root], (long)rc[root] * R.l->nslots, GEN_PLAIN, coll_key((uint32_t)root, 3));
        }
        if (inpl) {
            CALL(t, MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.base, rc, dis, R.d, root, e->comm));
        } else if (me) {
            CALL(t, MPI_Gatherv(s.base, cs, S.d, r.base, rc, dis, R.d, root, e->comm));
        } else {
            CALL(t, MPI_Gatherv(s.base, cs, S.d, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, e->comm));
        }
        if (me) buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&s);
        buf_free(&s0);
        buf_free(&r);
        buf_free(&x);
    }
    free(rc);
    free(dis);
}

static void t_scatter(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size, cs = cnt_of(S.l, S.l, R.l, u), cr = cnt_of(R.l, S.l, R.l, u);
    long nb = (long)cs * S.l->nslots;
    for (int k = 0; k < e->nroots; ++k) {
        int root = e->roots[k], me = e->rank == root, inpl = e->inplace && me;
        coll_where(t, "%s: MPI_Scatter%s %s->%s units %d root %d", e->cname, e->inplace ? " (in place)" : "",
                   S.l->name, R.l->name, u, root);
        buf_t s = buf_new(S.l, me ? (long)cs * n : 0, COLL_SEND_HOLE);
        if (me)
            for (int i = 0; i < n; ++i)
                buf_fill(&s, (long)i * cs, nb, GEN_PLAIN, coll_key((uint32_t)i, 4 + 16 * (uint32_t)root));
        buf_t s0 = buf_copy(&s);
        buf_t r = buf_new(R.l, cr, COLL_SENTINEL), x = buf_new(R.l, cr, COLL_SENTINEL);
        buf_fill(&x, 0, nb, GEN_PLAIN, coll_key((uint32_t)e->rank, 4 + 16 * (uint32_t)root));
        if (inpl) {
            CALL(t, MPI_Scatter(s.base, cs, S.d, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, e->comm));
        } else if (me) {
            CALL(t, MPI_Scatter(s.base, cs, S.d, r.base, cr, R.d, root, e->comm));
        } else {
            CALL(t, MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, r.base, cr, R.d, root, e->comm));
        }
        if (!inpl) buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&s);
        buf_free(&s0);
        buf_free(&r);
        buf_free(&x);
    }
}

static void t_scatterv(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size;
    int *sc = ints(n), *dis = ints(n);
    for (int i = 0; i < n; ++i) sc[i] = cnt_of(S.l, S.l, R.l, coll_vcount(i, u));
    long span = coll_rev_displs(n, sc, dis);
    int cr = cnt_of(R.l, S.l, R.l, coll_vcount(e->rank, u));
    for (int k = 0; k < e->nroots; ++k) {
        int root = e->roots[k], me = e->rank == root, inpl = e->inplace && me;
        coll_where(t, "%s: MPI_Scatterv%s %s->%s units %d root %d", e->cname, e->inplace ? " (in place)" : "",
                   S.l->name, R.l->name, u, root);
        buf_t s = buf_new(S.l, me ? span : 0, COLL_SEND_HOLE);
        if (me)
            for (int i = 0; i < n; ++i)
                buf_fill(&s, dis[i], (long)sc[i] * S.l->nslots, GEN_PLAIN, coll_key((uint32_t)i, 5 + 16 * (uint32_t)root));
        buf_t s0 = buf_copy(&s);
        buf_t r = buf_new(R.l, cr, COLL_SENTINEL), x = buf_new(R.l, cr, COLL_SENTINEL);
        buf_fill(&x, 0, (long)cr * R.l->nslots, GEN_PLAIN, coll_key((uint32_t)e->rank, 5 + 16 * (uint32_t)root));
        if (inpl) {
            CALL(t, MPI_Scatterv(s.base, sc, dis, S.d, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, e->comm));
        } else if (me) {
            CALL(t, MPI_Scatterv(s.base, sc, dis, S.d, r.base, cr, R.d, root, e->comm));
        } else {
            CALL(t, MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, r.base, cr, R.d, root, e->comm));
        }
        if (!inpl) buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&s);
        buf_free(&s0);
        buf_free(&r);
        buf_free(&x);
    }
    free(sc);
    free(dis);
}

static void t_allgather(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size, cs = cnt_of(S.l, S.l, R.l, u), cr = cnt_of(R.l, S.l, R.l, u);
    long nb = (long)cs * S.l->nslots;
    coll_where(t, "%s: MPI_Allgather%s %s->%s units %d", e->cname, e->inplace ? " (in place)" : "", S.l->name,
               R.l->name, u);
    buf_t s = buf_new(S.l, cs, COLL_SEND_HOLE);
    buf_fill(&s, 0, nb, GEN_PLAIN, coll_key((uint32_t)e->rank, 6));
    buf_t s0 = buf_copy(&s);
    buf_t r = buf_new(R.l, (long)cr * n, COLL_SENTINEL), x = buf_new(R.l, (long)cr * n, COLL_SENTINEL);
    for (int i = 0; i < n; ++i) buf_fill(&x, (long)i * cr, nb, GEN_PLAIN, coll_key((uint32_t)i, 6));
    if (e->inplace) {
        buf_fill(&r, (long)e->rank * cr, nb, GEN_PLAIN, coll_key((uint32_t)e->rank, 6));
        CALL(t, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.base, cr, R.d, e->comm));
    } else {
        CALL(t, MPI_Allgather(s.base, cs, S.d, r.base, cr, R.d, e->comm));
    }
    buf_check(t, "recvbuf", &r, &x);
    check_unchanged(e, "sendbuf", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
}

static void t_allgatherv(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size;
    int *rc = ints(n), *dis = ints(n);
    for (int i = 0; i < n; ++i) rc[i] = cnt_of(R.l, S.l, R.l, coll_vcount(i, u));
    long span = coll_rev_displs(n, rc, dis);
    int cs = cnt_of(S.l, S.l, R.l, coll_vcount(e->rank, u));
    coll_where(t, "%s: MPI_Allgatherv%s %s->%s units %d", e->cname, e->inplace ? " (in place)" : "", S.l->name,
               R.l->name, u);
    buf_t s = buf_new(S.l, cs, COLL_SEND_HOLE);
    buf_fill(&s, 0, (long)cs * S.l->nslots, GEN_PLAIN, coll_key((uint32_t)e->rank, 7));
    buf_t s0 = buf_copy(&s);
    buf_t r = buf_new(R.l, span, COLL_SENTINEL), x = buf_new(R.l, span, COLL_SENTINEL);
    for (int i = 0; i < n; ++i) buf_fill(&x, dis[i], (long)rc[i] * R.l->nslots, GEN_PLAIN, coll_key((uint32_t)i, 7));
    if (e->inplace) {
        buf_fill(&r, dis[e->rank], (long)rc[e->rank] * R.l->nslots, GEN_PLAIN, coll_key((uint32_t)e->rank, 7));
        CALL(t, MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.base, rc, dis, R.d, e->comm));
    } else {
        CALL(t, MPI_Allgatherv(s.base, cs, S.d, r.base, rc, dis, R.d, e->comm));
    }
    buf_check(t, "recvbuf", &r, &x);
    check_unchanged(e, "sendbuf", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(rc);
    free(dis);
}

static uint32_t pair_key(int s, int d, uint32_t salt) { return coll_key((uint32_t)s * 4099u + (uint32_t)d, salt); }

static void t_alltoall(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size, cs = cnt_of(S.l, S.l, R.l, u), cr = cnt_of(R.l, S.l, R.l, u);
    long nb = (long)cs * S.l->nslots;
    coll_where(t, "%s: MPI_Alltoall%s %s->%s units %d", e->cname, e->inplace ? " (in place)" : "", S.l->name,
               R.l->name, u);
    buf_t s = buf_new(S.l, (long)cs * n, COLL_SEND_HOLE);
    for (int d = 0; d < n; ++d) buf_fill(&s, (long)d * cs, nb, GEN_PLAIN, pair_key(e->rank, d, 8));
    buf_t s0 = buf_copy(&s);
    buf_t r = buf_new(R.l, (long)cr * n, COLL_SENTINEL), x = buf_new(R.l, (long)cr * n, COLL_SENTINEL);
    for (int i = 0; i < n; ++i) buf_fill(&x, (long)i * cr, nb, GEN_PLAIN, pair_key(i, e->rank, 8));
    if (e->inplace) {
        for (int d = 0; d < n; ++d) buf_fill(&r, (long)d * cr, nb, GEN_PLAIN, pair_key(e->rank, d, 8));
        CALL(t, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.base, cr, R.d, e->comm));
    } else {
        CALL(t, MPI_Alltoall(s.base, cs, S.d, r.base, cr, R.d, e->comm));
    }
    buf_check(t, "recvbuf", &r, &x);
    check_unchanged(e, "sendbuf", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
}

static void t_alltoallv(env_t *e, ty_t S, ty_t R, int u) {
    tctx *t = e->t;
    int n = e->size, me = e->rank, sym = e->inplace;
    int *sc = ints(n), *sd = ints(n), *rc = ints(n), *rd = ints(n);
    for (int i = 0; i < n; ++i) {
        sc[i] = cnt_of(S.l, S.l, R.l, coll_acount(me, i, u, sym));
        rc[i] = cnt_of(R.l, S.l, R.l, coll_acount(i, me, u, sym));
    }
    long sspan = coll_rev_displs(n, sc, sd), rspan = coll_rev_displs(n, rc, rd);
    coll_where(t, "%s: MPI_Alltoallv%s %s->%s units %d", e->cname, e->inplace ? " (in place)" : "", S.l->name,
               R.l->name, u);
    buf_t s = buf_new(S.l, sspan, COLL_SEND_HOLE);
    for (int d = 0; d < n; ++d) buf_fill(&s, sd[d], (long)sc[d] * S.l->nslots, GEN_PLAIN, pair_key(me, d, 9));
    buf_t s0 = buf_copy(&s);
    buf_t r = buf_new(R.l, rspan, COLL_SENTINEL), x = buf_new(R.l, rspan, COLL_SENTINEL);
    for (int i = 0; i < n; ++i) buf_fill(&x, rd[i], (long)rc[i] * R.l->nslots, GEN_PLAIN, pair_key(i, me, 9));
    if (e->inplace) {
        /* symmetric counts: what goes to d sits where d's data will arrive */
        for (int d = 0; d < n; ++d) buf_fill(&r, rd[d], (long)rc[d] * R.l->nslots, GEN_PLAIN, pair_key(me, d, 9));
        CALL(t, MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r.base, rc, rd, R.d, e->comm));
    } else {
        CALL(t, MPI_Alltoallv(s.base, sc, sd, S.d, r.base, rc, rd, R.d, e->comm));
    }
    buf_check(t, "recvbuf", &r, &x);
    check_unchanged(e, "sendbuf", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ---- barrier ------------------------------------------------------------------------------ */

/* No rank leaves the barrier before the last one entered it: one late rank waits about 2 ms
 * before entering, every rank records when it left; checked when MPI_Wtime is global. */
static void t_barrier(env_t *e) {
    tctx *t = e->t;
    int *flag = NULL, global = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag, &global);
    global = global && flag != NULL && *flag;
    int lates[3] = {0, e->size - 1, e->size / 2};
    for (int k = 0; k < 3; ++k) {
        int late = lates[k];
        coll_where(t, "%s: MPI_Barrier (late rank %d)", e->cname, late);
        double entered = 0, left;
        if (e->rank == late) {
            double until = MPI_Wtime() + 0.002;
            while (MPI_Wtime() < until) {
                int f;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, e->comm, &f, MPI_STATUS_IGNORE); /* yields */
            }
            entered = MPI_Wtime();
        }
        CALL(t, MPI_Barrier(e->comm));
        left = MPI_Wtime();
        double times[2] = {entered, left}, *all = malloc(sizeof(double) * 2 * (size_t)e->size);
        CALL(t, MPI_Allgather(times, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, e->comm));
        if (global)
            for (int i = 0; i < e->size; ++i)
                if (all[2 * i + 1] < all[2 * late])
                    FAIL(t, "rank %d left the barrier %.6f s before rank %d entered it", i,
                         all[2 * late] - all[2 * i + 1], late);
        free(all);
    }
    for (int i = 0; i < 10; ++i) CALL(t, MPI_Barrier(e->comm));
}

/* ---- reductions --------------------------------------------------------------------------- */

typedef struct {
    ty_t ty;
    MPI_Op op;
    const char *opname;
    int gen;
} red_t;

static void put_all(buf_t *b, long first, const long long *v, long n) {
    for (long j = 0; j < n; ++j) buf_put(b, first, j, v[j]);
}

static void t_reduce_allreduce(env_t *e, red_t *R, int c) {
    tctx *t = e->t;
    const layout_t *l = R->ty.l;
    long nb = (long)c * l->nslots;
    uint32_t salt = 40;
    long long *ref = coll_ref_reduce(R->gen, salt, 0, e->size - 1, 0, nb);
    buf_t x = buf_new(l, c, COLL_SENTINEL);
    put_all(&x, 0, ref, nb);
    buf_t s = buf_new(l, c, COLL_SEND_HOLE);
    buf_fill(&s, 0, nb, R->gen, coll_key((uint32_t)e->rank, salt));
    buf_t s0 = buf_copy(&s);
    for (int k = 0; k < e->nroots; ++k) {
        int root = e->roots[k], me = e->rank == root;
        coll_where(t, "%s: MPI_Reduce%s %s %s count %d root %d", e->cname, e->inplace ? " (in place)" : "", l->name,
                   R->opname, c, root);
        buf_t r = buf_new(l, me ? c : 0, COLL_SENTINEL);
        if (me && e->inplace) {
            buf_fill(&r, 0, nb, R->gen, coll_key((uint32_t)e->rank, salt));
            CALL(t, MPI_Reduce(MPI_IN_PLACE, r.base, c, R->ty.d, R->op, root, e->comm));
        } else {
            CALL(t, MPI_Reduce(s.base, me ? r.base : NULL, c, R->ty.d, R->op, root, e->comm));
        }
        if (me) buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&r);
    }
    coll_where(t, "%s: MPI_Allreduce%s %s %s count %d", e->cname, e->inplace ? " (in place)" : "", l->name,
               R->opname, c);
    buf_t r = buf_new(l, c, COLL_SENTINEL);
    if (e->inplace) {
        buf_fill(&r, 0, nb, R->gen, coll_key((uint32_t)e->rank, salt));
        CALL(t, MPI_Allreduce(MPI_IN_PLACE, r.base, c, R->ty.d, R->op, e->comm));
    } else {
        CALL(t, MPI_Allreduce(s.base, r.base, c, R->ty.d, R->op, e->comm));
    }
    buf_check(t, "recvbuf", &r, &x);
    check_unchanged(e, "sendbuf", &s, &s0);
    buf_free(&r);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&x);
    free(ref);
}

static void t_reduce_scatter_block(env_t *e, red_t *R, int cb) {
    tctx *t = e->t;
    const layout_t *l = R->ty.l;
    int n = e->size;
    long nbb = (long)cb * l->nslots; /* basic elements per block */
    uint32_t salt = 41;
    coll_where(t, "%s: MPI_Reduce_scatter_block%s %s %s recvcount %d", e->cname, e->inplace ? " (in place)" : "",
               l->name, R->opname, cb);
    long long *ref = coll_ref_reduce(R->gen, salt, 0, n - 1, nbb * e->rank, nbb);
    buf_t x = buf_new(l, e->inplace ? (long)cb * n : cb, COLL_SENTINEL);
    put_all(&x, 0, ref, nbb);
    buf_t s = buf_new(l, (long)cb * n, COLL_SEND_HOLE);
    buf_fill(&s, 0, nbb * n, R->gen, coll_key((uint32_t)e->rank, salt));
    buf_t s0 = buf_copy(&s);
    if (e->inplace) {
        buf_t r = buf_new(l, (long)cb * n, COLL_SENTINEL);
        buf_fill(&r, 0, nbb * n, R->gen, coll_key((uint32_t)e->rank, salt));
        CALL(t, MPI_Reduce_scatter_block(MPI_IN_PLACE, r.base, cb, R->ty.d, R->op, e->comm));
        buf_check_elems(t, "recvbuf (first block)", &r, &x, 0, cb);
        buf_free(&r);
    } else {
        buf_t r = buf_new(l, cb, COLL_SENTINEL);
        CALL(t, MPI_Reduce_scatter_block(s.base, r.base, cb, R->ty.d, R->op, e->comm));
        buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&r);
    }
    buf_free(&s);
    buf_free(&s0);
    buf_free(&x);
    free(ref);
}

static void t_reduce_scatter(env_t *e, red_t *R, int cb) {
    tctx *t = e->t;
    const layout_t *l = R->ty.l;
    int n = e->size;
    int *rc = ints(n);
    long total = 0, mine = 0;
    for (int i = 0; i < n; ++i) {
        rc[i] = coll_vcount(i, cb);
        if (i < e->rank) mine += rc[i];
        total += rc[i];
    }
    uint32_t salt = 42;
    coll_where(t, "%s: MPI_Reduce_scatter%s %s %s counts ~%d", e->cname, e->inplace ? " (in place)" : "", l->name,
               R->opname, cb);
    long myn = (long)rc[e->rank] * l->nslots;
    long long *ref = coll_ref_reduce(R->gen, salt, 0, n - 1, mine * l->nslots, myn);
    buf_t x = buf_new(l, e->inplace ? total : rc[e->rank], COLL_SENTINEL);
    put_all(&x, 0, ref, myn);
    buf_t s = buf_new(l, total, COLL_SEND_HOLE);
    buf_fill(&s, 0, total * l->nslots, R->gen, coll_key((uint32_t)e->rank, salt));
    buf_t s0 = buf_copy(&s);
    if (e->inplace) {
        buf_t r = buf_new(l, total, COLL_SENTINEL);
        buf_fill(&r, 0, total * l->nslots, R->gen, coll_key((uint32_t)e->rank, salt));
        CALL(t, MPI_Reduce_scatter(MPI_IN_PLACE, r.base, rc, R->ty.d, R->op, e->comm));
        buf_check_elems(t, "recvbuf (first block)", &r, &x, 0, rc[e->rank]);
        buf_free(&r);
    } else {
        buf_t r = buf_new(l, rc[e->rank], COLL_SENTINEL);
        CALL(t, MPI_Reduce_scatter(s.base, r.base, rc, R->ty.d, R->op, e->comm));
        buf_check(t, "recvbuf", &r, &x);
        check_unchanged(e, "sendbuf", &s, &s0);
        buf_free(&r);
    }
    buf_free(&s);
    buf_free(&s0);
    buf_free(&x);
    free(ref);
    free(rc);
}

static void t_scan(env_t *e, red_t *R, int c, int exclusive) {
    tctx *t = e->t;
    const layout_t *l = R->ty.l;
    long nb = (long)c * l->nslots;
    uint32_t salt = exclusive ? 44 : 43;
    const char *name = exclusive ? "MPI_Exscan" : "MPI_Scan";
    coll_where(t, "%s: %s%s %s %s count %d", e->cname, name, e->inplace ? " (in place)" : "", l->name, R->opname, c);
    int hi = exclusive ? e->rank - 1 : e->rank;
    long long *ref = hi >= 0 ? coll_ref_reduce(R->gen, salt, 0, hi, 0, nb) : NULL;
    buf_t x = buf_new(l, c, COLL_SENTINEL);
    if (ref != NULL) put_all(&x, 0, ref, nb);
    buf_t s = buf_new(l, c, COLL_SEND_HOLE);
    buf_fill(&s, 0, nb, R->gen, coll_key((uint32_t)e->rank, salt));
    buf_t s0 = buf_copy(&s);
    buf_t r = buf_new(l, c, COLL_SENTINEL);
    if (e->inplace) {
        buf_fill(&r, 0, nb, R->gen, coll_key((uint32_t)e->rank, salt));
        CALL(t, exclusive ? MPI_Exscan(MPI_IN_PLACE, r.base, c, R->ty.d, R->op, e->comm)
                          : MPI_Scan(MPI_IN_PLACE, r.base, c, R->ty.d, R->op, e->comm));
    } else {
        CALL(t, exclusive ? MPI_Exscan(s.base, r.base, c, R->ty.d, R->op, e->comm)
                          : MPI_Scan(s.base, r.base, c, R->ty.d, R->op, e->comm));
        check_unchanged(e, "sendbuf", &s, &s0);
    }
    if (ref != NULL) buf_check(t, "recvbuf", &r, &x); /* Exscan: rank 0's recvbuf is undefined */
    buf_free(&r);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&x);
    free(ref);
}

/* ---- driver ------------------------------------------------------------------------------- */

static void movement(env_t *e, ty_t S, ty_t R, int u, int ub) {
    if (want(e, "bcast")) t_bcast(e, S, R, u);
    if (want(e, "gather")) t_gather(e, S, R, ub);
    if (want(e, "gatherv")) t_gatherv(e, S, R, ub);
    if (want(e, "scatter")) t_scatter(e, S, R, ub);
    if (want(e, "scatterv")) t_scatterv(e, S, R, ub);
    if (want(e, "allgather")) t_allgather(e, S, R, ub);
    if (want(e, "allgatherv")) t_allgatherv(e, S, R, ub);
    if (want(e, "alltoall")) t_alltoall(e, S, R, ub);
    if (want(e, "alltoallv")) t_alltoallv(e, S, R, ub);
}

static void reductions(env_t *e, red_t *R, int c, int cb) {
    if (want(e, "reduce") || want(e, "allreduce")) t_reduce_allreduce(e, R, c);
    if (want(e, "reduce_scatter_block")) t_reduce_scatter_block(e, R, cb);
    if (want(e, "reduce_scatter")) t_reduce_scatter(e, R, cb);
    if (want(e, "scan")) t_scan(e, R, c, 0);
    if (want(e, "exscan")) t_scan(e, R, c, 1);
}

/* Counts: small runs 0, 1 and 7 units; large ones LARGE_BASIC basic elements per vector. */
static int n_counts(int large) { return large ? 1 : 3; }
static void counts_of(int large, int i, const layout_t *l, int size, int *c, int *cb) {
    static const int small[3] = {0, 1, 7};
    if (!large) {
        *c = *cb = small[i];
        return;
    }
    *c = LARGE_BASIC / l->nslots;
    *cb = *c / size > 0 ? *c / size : 1;
}

static void run_mode(env_t *e, int large, int derived, MPI_Op usum, MPI_Op uaffine) {
    tctx *t = e->t;
    if (!derived) {
        const layout_t *mv[3] = {&L_INT, &L_DOUBLE, &L_2INT};
        for (int i = 0; i < 3; ++i) {
            ty_t ty = {mv[i], coll_make_type(t, mv[i])};
            for (int k = 0; k < n_counts(large); ++k) {
                int c, cb;
                counts_of(large, k, ty.l, e->size, &c, &cb);
                movement(e, ty, ty, c, cb);
            }
        }
        red_t reds[4] = {{{&L_INT, MPI_INT}, MPI_SUM, "MPI_SUM", GEN_PLAIN},
                         {{&L_DOUBLE, MPI_DOUBLE}, MPI_SUM, "MPI_SUM", GEN_PLAIN},
                         {{&L_INT, MPI_INT}, usum, "user sum (commutative)", GEN_PLAIN},
                         {{&L_2INT, MPI_2INT}, uaffine, "user affine (non-commutative)", GEN_AFFINE}};
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < n_counts(large); ++k) {
                int c, cb;
                counts_of(large, k, reds[i].ty.l, e->size, &c, &cb);
                reductions(e, &reds[i], c, cb);
            }
        return;
    }
    for (int i = 0; i < COLL_NDERIVED; ++i) {
        const layout_t *l = coll_derived_layouts[i];
        ty_t ty = {l, coll_make_type(t, l)}, in = {&L_INT, MPI_INT};
        for (int k = 0; k < n_counts(large); ++k) {
            int c, cb;
            counts_of(large, k, l, e->size, &c, &cb);
            movement(e, ty, ty, c, cb);
            if (layout_all_int(l) && !e->inplace) {
                movement(e, ty, in, c, cb); /* derived type in, MPI_INT out */
                movement(e, in, ty, c, cb); /* and the reverse */
            }
            red_t rs = {ty, usum, "user sum (commutative)", GEN_PLAIN};
            red_t ra = {ty, uaffine, "user affine (non-commutative)", GEN_AFFINE};
            reductions(e, &rs, c, cb);
            reductions(e, &ra, c, cb);
        }
        coll_free_type(t, l, &ty.d);
    }
}

static void run_comm(tctx *t, MPI_Comm comm, const char *cname, int large, int derived, int inplace, MPI_Op usum,
                     MPI_Op uaffine, const char *only) {
    env_t e;
    e.t = t;
    e.only = only;
    e.comm = comm;
    e.cname = cname;
    MPI_Comm_rank(comm, &e.rank);
    MPI_Comm_size(comm, &e.size);
    e.inplace = inplace;
    e.nroots = 0;
    int cand[3] = {0, e.size - 1, e.size / 2};
    for (int i = 0; i < (large ? 2 : 3); ++i) {
        int dup = 0;
        for (int k = 0; k < e.nroots; ++k) dup |= e.roots[k] == cand[i];
        if (!dup) e.roots[e.nroots++] = cand[i];
    }
    if (!inplace && !derived && want(&e, "barrier")) t_barrier(&e);
    run_mode(&e, large, derived, usum, uaffine);
}

/* Whether every name of a comma-separated list is a collective this program runs. */
static int known_names(const char *list) {
    static const char *names[] = {"barrier",   "bcast",    "gather",    "gatherv",    "scatter",
                                  "scatterv",  "allgather", "allgatherv", "alltoall",  "alltoallv",
                                  "reduce",    "allreduce", "reduce_scatter_block",   "reduce_scatter",
                                  "scan",      "exscan"};
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
            found |= strlen(names[i]) == len && strncmp(p, names[i], len) == 0;
        if (!found) return 0;
        if (!end) return 1;
        p = end + 1;
    }
}

static int parse(const char *arg, const char *a, const char *b, int *lo, int *hi) {
    if (strcmp(arg, a) == 0) {
        *lo = *hi = 0;
    } else if (strcmp(arg, b) == 0) {
        *lo = *hi = 1;
    } else if (strcmp(arg, "all") == 0) {
        *lo = 0;
        *hi = 1;
    } else {
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_blocking", &argc, &argv);
    int l0 = 0, l1 = 1, d0 = 0, d1 = 1, i0 = 0, i1 = 1;
    if ((argc > 1 && !parse(argv[1], "small", "large", &l0, &l1)) ||
        (argc > 2 && !parse(argv[2], "predef", "derived", &d0, &d1)) ||
        (argc > 3 && !parse(argv[3], "plain", "inplace", &i0, &i1)) || argc > 5) {
        if (t.rank == 0)
            fprintf(stderr, "usage: coll_blocking [small|large|all] [predef|derived|all] [plain|inplace|all] "
                            "[COLLECTIVE,...]\n");
        MPI_Finalize();
        return 2;
    }
    const char *only = argc > 4 ? argv[4] : NULL;
    if (only != NULL && !known_names(only)) {
        if (t.rank == 0) fprintf(stderr, "coll_blocking: unknown collective in '%s'\n", only);
        MPI_Finalize();
        return 2;
    }
    MPI_Op usum, uaffine;
    CALL(&t, MPI_Op_create(coll_usum, 1, &usum));
    CALL(&t, MPI_Op_create(coll_uaffine, 0, &uaffine));
    /* a communicator whose ranks are those of MPI_COMM_WORLD in reverse order, split in two */
    MPI_Comm rev;
    CALL(&t, MPI_Comm_split(MPI_COMM_WORLD, t.size >= 3 ? t.rank % 2 : 0, t.size - t.rank, &rev));
    /* every rank, the even ones first: under mpc_run -p the members of a process are no block
     * of consecutive ranks (the hierarchical collectives' non-contiguous case) */
    MPI_Comm inter;
    CALL(&t, MPI_Comm_split(MPI_COMM_WORLD, 0, (t.rank % 2) * t.size + t.rank, &inter));
    for (int large = l0; large <= l1; ++large)
        for (int derived = d0; derived <= d1; ++derived)
            for (int inplace = i0; inplace <= i1; ++inplace) {
                run_comm(&t, MPI_COMM_WORLD, "MPI_COMM_WORLD", large, derived, inplace, usum, uaffine, only);
                if (!large) run_comm(&t, rev, "reversed split", large, derived, inplace, usum, uaffine, only);
                if (!large) run_comm(&t, inter, "interleaved split", large, derived, inplace, usum, uaffine, only);
            }
    CALL(&t, MPI_Comm_free(&rev));
    CALL(&t, MPI_Comm_free(&inter));
    CALL(&t, MPI_Op_free(&usum));
    CALL(&t, MPI_Op_free(&uaffine));
    return coll_finish(&t);
}
