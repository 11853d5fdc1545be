/* Collectives on intercommunicators as MPI 3.1 section 5.2.2 defines them (issue 6): Barrier,
 * Bcast / Gather(v) / Scatter(v) / Reduce with MPI_ROOT and MPI_PROC_NULL in the root's group,
 * Allgather(v), Alltoall(v), Allreduce, Reduce_scatter_block and Reduce_scatter, where each group
 * gets the data (or the reduction, in the remote group's rank order) of the other. The two
 * groups have different sizes and send different counts; results are checked against the data
 * every rank can compute. MPI_Alltoallw is in coll_alltoallw.c.
 *
 * Intercommunicators: {world rank 0} with the rest, even with odd world ranks, and the first
 * third with the rest in reverse order. Counts: 0, 3 and a large one (24000 ints per block, or
 * in all for the rooted and reduction ones). Types: MPI_INT, a vector with holes (coll_common.h),
 * MPI_2INT with a non-commutative user operation. Also: an out-of-range root gives MPI_ERR_ROOT
 * and MPI_IN_PLACE (not allowed on intercommunicators) MPI_ERR_BUFFER or MPI_ERR_ARG, on every
 * rank. Needs 2 ranks or more (1 rank: nothing to test, exit 0). Exit status 0 on success. */
#include "coll_common.h"

typedef struct {
    tctx *t;
    MPI_Comm inter, local;
    const char *name;
    int is_a;         /* in the first group */
    int lrank, lsize; /* in my group */
    int rsize;        /* the other group's size */
    int *rworld;      /* the world rank of each member of the other group */
    int *lworld;      /* ... of each member of mine */
} ic_t;

typedef struct {
    const layout_t *l;
    MPI_Datatype d;
} ty_t;

static int *ints(int n) {
    int *p = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (p == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

/* The counts a member of group A (a = 1) or B sends, for base count c. */
static int gcount(int a, int c) { return c == 0 ? 0 : (a ? c : c + 2); }
static int vcount(int lr, int c) { return c == 0 ? 0 : (lr % 3 == 1 ? 0 : c + lr % 2); }

/* ---- rooted ------------------------------------------------------------------------------- */

/* The root: local rank `rl` of group A (root_a) or B. */
static int root_arg(ic_t *g, int root_a, int rl) {
    if (g->is_a == root_a) return g->lrank == rl ? MPI_ROOT : MPI_PROC_NULL;
    return rl;
}

static void t_bcast(ic_t *g, ty_t T, int c, int root_a, int rl) {
    tctx *t = g->t;
    int root = root_arg(g, root_a, rl);
    int rworld = root_a == g->is_a ? g->lworld[rl] : g->rworld[rl];
    coll_where(t, "%s: MPI_Bcast %s count %d, root %d of group %s", g->name, T.l->name, c, rl, root_a ? "A" : "B");
    uint32_t key = coll_key((uint32_t)rworld, 61);
    long nb = (long)c * T.l->nslots;
    buf_t b = buf_new(T.l, c, COLL_SENTINEL), x = buf_new(T.l, c, COLL_SENTINEL);
    if (root == MPI_ROOT) buf_fill(&b, 0, nb, GEN_PLAIN, key);
    if (root != MPI_PROC_NULL) buf_fill(&x, 0, nb, GEN_PLAIN, key); /* PROC_NULL: untouched */
    CALL(t, MPI_Bcast(b.base, c, T.d, root, g->inter));
    buf_check(t, "buffer", &b, &x);
    buf_free(&b);
    buf_free(&x);
}

static void t_gather(ic_t *g, ty_t T, int c, int root_a, int rl, int v) {
    tctx *t = g->t;
    int root = root_arg(g, root_a, rl);
    coll_where(t, "%s: MPI_Gather%s %s count %d, root %d of group %s", g->name, v ? "v" : "", T.l->name, c, rl,
               root_a ? "A" : "B");
    /* senders: the other group, each its own count (Gatherv) or the same */
    int mine = v ? vcount(g->lrank, c) : c;
    buf_t s = buf_new(T.l, mine, COLL_SEND_HOLE);
    buf_fill(&s, 0, (long)mine * T.l->nslots, GEN_PLAIN, coll_key((uint32_t)t->rank, 62));
    buf_t s0 = buf_copy(&s);
    int n = g->rsize, *rc = ints(n), *dis = ints(n);
    for (int i = 0; i < n; ++i) rc[i] = v ? vcount(i, c) : c;
    long span = v ? coll_rev_displs(n, rc, dis) : (long)c * n;
    if (!v)
        for (int i = 0; i < n; ++i) dis[i] = i * c;
    int me = root == MPI_ROOT;
    buf_t r = buf_new(T.l, me ? span : 0, COLL_SENTINEL), x = buf_new(T.l, me ? span : 0, COLL_SENTINEL);
    if (me)
        for (int i = 0; i < n; ++i)
            buf_fill(&x, dis[i], (long)rc[i] * T.l->nslots, GEN_PLAIN, coll_key((uint32_t)g->rworld[i], 62));
    if (me) {
        if (v) CALL(t, MPI_Gatherv(NULL, 0, MPI_DATATYPE_NULL, r.base, rc, dis, T.d, root, g->inter));
        else CALL(t, MPI_Gather(NULL, 0, MPI_DATATYPE_NULL, r.base, c, T.d, root, g->inter));
        buf_check(t, "recvbuf", &r, &x);
    } else if (root == MPI_PROC_NULL) {
        if (v) CALL(t, MPI_Gatherv(NULL, 0, MPI_DATATYPE_NULL, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, g->inter));
        else CALL(t, MPI_Gather(NULL, 0, MPI_DATATYPE_NULL, NULL, 0, MPI_DATATYPE_NULL, root, g->inter));
    } else {
        if (v) CALL(t, MPI_Gatherv(s.base, mine, T.d, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, g->inter));
        else CALL(t, MPI_Gather(s.base, mine, T.d, NULL, 0, MPI_DATATYPE_NULL, root, g->inter));
        buf_check(t, "sendbuf (unchanged)", &s, &s0);
    }
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(rc);
    free(dis);
}

static void t_scatter(ic_t *g, ty_t T, int c, int root_a, int rl, int v) {
    tctx *t = g->t;
    int root = root_arg(g, root_a, rl);
    int rootw = root_a == g->is_a ? g->lworld[rl] : g->rworld[rl];
    coll_where(t, "%s: MPI_Scatter%s %s count %d, root %d of group %s", g->name, v ? "v" : "", T.l->name, c, rl,
               root_a ? "A" : "B");
    int n = g->rsize, *sc = ints(n), *dis = ints(n);
    for (int i = 0; i < n; ++i) sc[i] = v ? vcount(i, c) : c;
    long span = v ? coll_rev_displs(n, sc, dis) : (long)c * n;
    if (!v)
        for (int i = 0; i < n; ++i) dis[i] = i * c;
    int me = root == MPI_ROOT;
    buf_t s = buf_new(T.l, me ? span : 0, COLL_SEND_HOLE);
    if (me)
        for (int i = 0; i < n; ++i)
            buf_fill(&s, dis[i], (long)sc[i] * T.l->nslots, GEN_PLAIN,
                     coll_key((uint32_t)g->rworld[i], 63 + 64 * (uint32_t)rootw));
    buf_t s0 = buf_copy(&s);
    int mine = v ? vcount(g->lrank, c) : c;
    buf_t r = buf_new(T.l, mine, COLL_SENTINEL), x = buf_new(T.l, mine, COLL_SENTINEL);
    buf_fill(&x, 0, (long)mine * T.l->nslots, GEN_PLAIN, coll_key((uint32_t)t->rank, 63 + 64 * (uint32_t)rootw));
    if (me) {
        if (v) CALL(t, MPI_Scatterv(s.base, sc, dis, T.d, NULL, 0, MPI_DATATYPE_NULL, root, g->inter));
        else CALL(t, MPI_Scatter(s.base, c, T.d, NULL, 0, MPI_DATATYPE_NULL, root, g->inter));
        buf_check(t, "sendbuf (unchanged)", &s, &s0);
    } else if (root == MPI_PROC_NULL) {
        if (v) CALL(t, MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, NULL, 0, MPI_DATATYPE_NULL, root, g->inter));
        else CALL(t, MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, NULL, 0, MPI_DATATYPE_NULL, root, g->inter));
    } else {
        if (v) CALL(t, MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, r.base, mine, T.d, root, g->inter));
        else CALL(t, MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, r.base, c, T.d, root, g->inter));
        buf_check(t, "recvbuf", &r, &x);
    }
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(sc);
    free(dis);
}

/* ---- all-to-all ---------------------------------------------------------------------------- */

static void t_allgather(ic_t *g, ty_t T, int c, int v) {
    tctx *t = g->t;
    coll_where(t, "%s: MPI_Allgather%s %s count ~%d", g->name, v ? "v" : "", T.l->name, c);
    /* group A members send gcount(1, c) (Allgatherv: vcount of it by local rank), B gcount(0, c) */
    int base_me = gcount(g->is_a, c), base_rem = gcount(!g->is_a, c);
    int mine = v ? vcount(g->lrank, base_me) : base_me;
    buf_t s = buf_new(T.l, mine, COLL_SEND_HOLE);
    buf_fill(&s, 0, (long)mine * T.l->nslots, GEN_PLAIN, coll_key((uint32_t)t->rank, 64));
    buf_t s0 = buf_copy(&s);
    int n = g->rsize, *rc = ints(n), *dis = ints(n);
    for (int i = 0; i < n; ++i) rc[i] = v ? vcount(i, base_rem) : base_rem;
    long span = v ? coll_rev_displs(n, rc, dis) : (long)base_rem * n;
    if (!v)
        for (int i = 0; i < n; ++i) dis[i] = i * base_rem;
    buf_t r = buf_new(T.l, span, COLL_SENTINEL), x = buf_new(T.l, span, COLL_SENTINEL);
    for (int i = 0; i < n; ++i)
        buf_fill(&x, dis[i], (long)rc[i] * T.l->nslots, GEN_PLAIN, coll_key((uint32_t)g->rworld[i], 64));
    if (v) CALL(t, MPI_Allgatherv(s.base, mine, T.d, r.base, rc, dis, T.d, g->inter));
    else CALL(t, MPI_Allgather(s.base, mine, T.d, r.base, base_rem, T.d, g->inter));
    buf_check(t, "recvbuf", &r, &x);
    buf_check(t, "sendbuf (unchanged)", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(rc);
    free(dis);
}

/* Alltoall(v) count from world rank s to world rank d. */
static int pcount(int s, int d, int c, int v, int s_is_a) {
    if (c == 0) return 0;
    if (!v) return gcount(s_is_a, c);
    return (s + 2 * d) % 5 == 1 ? 0 : c + (s + d) % 3;
}

static uint32_t pair_key(int s, int d) { return coll_key((uint32_t)s * 4099u + (uint32_t)d, 65); }

static void t_alltoall(ic_t *g, ty_t T, int c, int v) {
    tctx *t = g->t;
    int me = t->rank, n = g->rsize;
    coll_where(t, "%s: MPI_Alltoall%s %s count ~%d", g->name, v ? "v" : "", T.l->name, c);
    int *sc = ints(n), *sd = ints(n), *rc = ints(n), *rd = ints(n);
    for (int i = 0; i < n; ++i) {
        sc[i] = pcount(me, g->rworld[i], c, v, g->is_a);
        rc[i] = pcount(g->rworld[i], me, c, v, !g->is_a);
    }
    long sspan = coll_rev_displs(n, sc, sd), rspan = coll_rev_displs(n, rc, rd);
    if (!v) {
        for (int i = 0; i < n; ++i) sd[i] = i * sc[0], rd[i] = i * rc[0];
        sspan = (long)n * sc[0];
        rspan = (long)n * rc[0];
    }
    buf_t s = buf_new(T.l, sspan, COLL_SEND_HOLE);
    for (int i = 0; i < n; ++i) buf_fill(&s, sd[i], (long)sc[i] * T.l->nslots, GEN_PLAIN, pair_key(me, g->rworld[i]));
    buf_t s0 = buf_copy(&s);
    buf_t r = buf_new(T.l, rspan, COLL_SENTINEL), x = buf_new(T.l, rspan, COLL_SENTINEL);
    for (int i = 0; i < n; ++i) buf_fill(&x, rd[i], (long)rc[i] * T.l->nslots, GEN_PLAIN, pair_key(g->rworld[i], me));
    if (v) CALL(t, MPI_Alltoallv(s.base, sc, sd, T.d, r.base, rc, rd, T.d, g->inter));
    else CALL(t, MPI_Alltoall(s.base, sc[0], T.d, r.base, rc[0], T.d, g->inter));
    buf_check(t, "recvbuf", &r, &x);
    buf_check(t, "sendbuf (unchanged)", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ---- reductions --------------------------------------------------------------------------- */

typedef struct {
    ty_t ty;
    MPI_Op op;
    const char *opname;
    int gen;
} red_t;

/* The reduction over the members of the other group, in their rank order, of basic elements
 * [j0, j0 + n) of their data for `salt`. */
static long long *ref_remote(ic_t *g, int gen, uint32_t salt, long j0, long n) {
    long long *acc = malloc(sizeof(long long) * (size_t)(n > 0 ? n : 1));
    for (long j = 0; j < n; j += gen == GEN_AFFINE ? 2 : 1) {
        long long a = coll_val(gen, coll_key((uint32_t)g->rworld[0], salt), j0 + j);
        long long b = gen == GEN_AFFINE ? coll_val(gen, coll_key((uint32_t)g->rworld[0], salt), j0 + j + 1) : 0;
        for (int r = 1; r < g->rsize; ++r) {
            uint32_t k = coll_key((uint32_t)g->rworld[r], salt);
            if (gen == GEN_PLAIN) {
                a += coll_val(gen, k, j0 + j);
            } else {
                long long a2 = coll_val(gen, k, j0 + j), b2 = coll_val(gen, k, j0 + j + 1);
                coll_affine_apply(a, b, &a2, &b2);
                a = a2;
                b = b2;
            }
        }
        acc[j] = a;
        if (gen == GEN_AFFINE) acc[j + 1] = b;
    }
    return acc;
}

static void put_all(buf_t *b, const long long *v, long n) {
    for (long j = 0; j < n; ++j) buf_put(b, 0, j, v[j]);
}

static void t_reduce(ic_t *g, red_t *R, int c, int root_a, int rl) {
    tctx *t = g->t;
    const layout_t *l = R->ty.l;
    int root = root_arg(g, root_a, rl);
    coll_where(t, "%s: MPI_Reduce %s %s count %d, root %d of group %s", g->name, l->name, R->opname, c, rl,
               root_a ? "A" : "B");
    long nb = (long)c * l->nslots;
    buf_t s = buf_new(l, c, COLL_SEND_HOLE);
    buf_fill(&s, 0, nb, R->gen, coll_key((uint32_t)t->rank, 66));
    buf_t s0 = buf_copy(&s);
    if (root == MPI_ROOT) {
        long long *ref = ref_remote(g, R->gen, 66, 0, nb);
        buf_t r = buf_new(l, c, COLL_SENTINEL), x = buf_new(l, c, COLL_SENTINEL);
        put_all(&x, ref, nb);
        CALL(t, MPI_Reduce(NULL, r.base, c, R->ty.d, R->op, root, g->inter));
        buf_check(t, "recvbuf", &r, &x);
        buf_free(&r);
        buf_free(&x);
        free(ref);
    } else if (root == MPI_PROC_NULL) {
        CALL(t, MPI_Reduce(NULL, NULL, c, R->ty.d, R->op, root, g->inter));
    } else {
        CALL(t, MPI_Reduce(s.base, NULL, c, R->ty.d, R->op, root, g->inter));
        buf_check(t, "sendbuf (unchanged)", &s, &s0);
    }
    buf_free(&s);
    buf_free(&s0);
}

static void t_allreduce(ic_t *g, red_t *R, int c) {
    tctx *t = g->t;
    const layout_t *l = R->ty.l;
    coll_where(t, "%s: MPI_Allreduce %s %s count %d", g->name, l->name, R->opname, c);
    long nb = (long)c * l->nslots;
    buf_t s = buf_new(l, c, COLL_SEND_HOLE);
    buf_fill(&s, 0, nb, R->gen, coll_key((uint32_t)t->rank, 67));
    buf_t s0 = buf_copy(&s);
    long long *ref = ref_remote(g, R->gen, 67, 0, nb);
    buf_t r = buf_new(l, c, COLL_SENTINEL), x = buf_new(l, c, COLL_SENTINEL);
    put_all(&x, ref, nb);
    CALL(t, MPI_Allreduce(s.base, r.base, c, R->ty.d, R->op, g->inter));
    buf_check(t, "recvbuf", &r, &x);
    buf_check(t, "sendbuf (unchanged)", &s, &s0);
    buf_free(&s);
    buf_free(&s0);
    buf_free(&r);
    buf_free(&x);
    free(ref);
}

/* Reduce_scatter_block: both groups reduce vectors of T = nA * nB * k elements; group A's members
 * get blocks of nB * k elements of the reduction of group B's vectors, and the reverse. */
static void t_reduce_scatter_block(ic_t *g, red_t *R, int k) {
    tctx *t = g->t;
    const layout_t *l = R->ty.l;
    coll_where(t, "%s: MPI_Reduce_scatter_block %s %s k %d", g->name, l->name, R->opname, k);
    int total = g->lsize * g->rsize * k, rcount = g->rsize * k;
    buf_t s = buf_new(l, total, COLL_SEND_HOLE);
    buf_fill(&s, 0, (long)total * l->nslots, R->gen, coll_key((uint32_t)t->rank, 68));
    long nbb = (long)rcount * l->nslots;
    long long *ref = ref_remote(g, R->gen, 68, nbb * g->lrank, nbb);
    buf_t r = buf_new(l, rcount, COLL_SENTINEL), x = buf_new(l, rcount, COLL_SENTINEL);
    put_all(&x, ref, nbb);
    CALL(t, MPI_Reduce_scatter_block(s.base, r.base, rcount, R->ty.d, R->op, g->inter));
    buf_check(t, "recvbuf", &r, &x);
    buf_free(&s);
    buf_free(&r);
    buf_free(&x);
    free(ref);
}

/* Counts of a group of n for Reduce_scatter, summing to T = 3 (nA + nB) in both groups. */
static void rs_counts(int n, int total, int *c) {
    int sum = 0;
    for (int i = 0; i < n - 1; ++i) {
        c[i] = total == 0 || i % 3 == 1 ? 0 : 2 + i % 2;
        sum += c[i];
    }
    c[n - 1] = total - sum;
}

static void t_reduce_scatter(ic_t *g, red_t *R, int k) {
    tctx *t = g->t;
    const layout_t *l = R->ty.l;
    coll_where(t, "%s: MPI_Reduce_scatter %s %s k %d", g->name, l->name, R->opname, k);
    int total = 3 * (g->lsize + g->rsize) * k;
    int *rc = ints(g->lsize);
    rs_counts(g->lsize, total, rc);
    long before = 0;
    for (int i = 0; i < g->lrank; ++i) before += rc[i];
    buf_t s = buf_new(l, total, COLL_SEND_HOLE);
    buf_fill(&s, 0, (long)total * l->nslots, R->gen, coll_key((uint32_t)t->rank, 69));
    long nmine = (long)rc[g->lrank] * l->nslots;
    long long *ref = ref_remote(g, R->gen, 69, before * l->nslots, nmine);
    buf_t r = buf_new(l, rc[g->lrank], COLL_SENTINEL), x = buf_new(l, rc[g->lrank], COLL_SENTINEL);
    put_all(&x, ref, nmine);
    CALL(t, MPI_Reduce_scatter(s.base, r.base, rc, R->ty.d, R->op, g->inter));
    buf_check(t, "recvbuf", &r, &x);
    buf_free(&s);
    buf_free(&r);
    buf_free(&x);
    free(ref);
    free(rc);
}

/* ---- barrier ------------------------------------------------------------------------------ */

/* No member of one group leaves before the late member of the other group entered. */
static void t_barrier(ic_t *g) {
    tctx *t = g->t;
    int *flag = NULL, global = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag, &global);
    global = global && flag != NULL && *flag;
    int lates[2] = {g->is_a ? g->lworld[g->lsize - 1] : g->rworld[g->rsize - 1],
                    g->is_a ? g->rworld[0] : g->lworld[0]};
    for (int k = 0; k < 2; ++k) {
        int late = lates[k];
        coll_where(t, "%s: MPI_Barrier (late world rank %d)", g->name, late);
        double entered = 0;
        if (t->rank == late) {
            double until = MPI_Wtime() + 0.002;
            while (MPI_Wtime() < until) {
                int f;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
            }
            entered = MPI_Wtime();
        }
        CALL(t, MPI_Barrier(g->inter));
        double times[2] = {entered, MPI_Wtime()}, *all = malloc(sizeof(double) * 2 * (size_t)t->size);
        CALL(t, MPI_Allgather(times, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD));
        int late_in_mine = 0;
        for (int i = 0; i < g->lsize; ++i) late_in_mine |= g->lworld[i] == late;
        if (global && !late_in_mine && all[2 * t->rank + 1] < all[2 * late])
            FAIL(t, "left the barrier %.6f s before world rank %d (other group) entered it",
                 all[2 * late] - all[2 * t->rank + 1], late);
        free(all);
    }
}

/* ---- errors ------------------------------------------------------------------------------- */

#define EXPECT2(t, call, cls, alt)                                                                         \
    do {                                                                                                   \
        coll_trace_((t), __LINE__, #call);                                                                 \
        int e_ = (call), c_ = -1;                                                                          \
        MPI_Error_class(e_, &c_);                                                                          \
        if (c_ != (cls) && c_ != (alt))                                                                    \
            FAIL((t), "%s: expected %s or %s, got %s (%d)", #call, coll_class_name(cls), coll_class_name(alt), \
                 coll_class_name(c_), e_);                                                                 \
    } while (0)

static void t_errors(ic_t *g) {
    tctx *t = g->t;
    int x[4] = {0}, y[256] = {0};
    coll_where(t, "%s: root out of range", g->name);
    int bad = g->lsize > g->rsize ? g->lsize + 3 : g->rsize + 3;
    EXPECT_CLASS(t, MPI_Bcast(x, 1, MPI_INT, bad, g->inter), MPI_ERR_ROOT);
    EXPECT_CLASS(t, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, bad, g->inter), MPI_ERR_ROOT);
    EXPECT_CLASS(t, MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, bad, g->inter), MPI_ERR_ROOT);
    coll_where(t, "%s: MPI_IN_PLACE", g->name);
    EXPECT2(t, MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_INT, MPI_SUM, g->inter), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, y, 1, MPI_INT, g->inter), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(t, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, y, 1, MPI_INT, g->inter), MPI_ERR_BUFFER, MPI_ERR_ARG);
}

/* ---- driver ------------------------------------------------------------------------------- */

static void run_inter(tctx *t, ic_t *g, int large_ok, MPI_Op uaffine) {
    t_barrier(g);
    t_errors(g);
    const layout_t *ls[2] = {&L_INT, &L_VECTOR};
    for (int li = 0; li < 2; ++li) {
        ty_t T = {ls[li], coll_make_type(t, ls[li])};
        int counts[3] = {0, 3, large_ok ? 24000 / T.l->nslots : 3};
        for (int ci = 0; ci < 3; ++ci) {
            int c = counts[ci];
            for (int ra = 1; ra >= 0; --ra) {
                int n = ra == g->is_a ? g->lsize : g->rsize;
                int rls[2] = {0, n - 1};
                for (int k = 0; k < (n > 1 ? 2 : 1); ++k) {
                    t_bcast(g, T, c, ra, rls[k]);
                    t_gather(g, T, c, ra, rls[k], 0);
                    t_gather(g, T, c, ra, rls[k], 1);
                    t_scatter(g, T, c, ra, rls[k], 0);
                    t_scatter(g, T, c, ra, rls[k], 1);
                }
            }
            int cb = ci == 2 ? (c / t->size > 0 ? c / t->size : 1) : c;
            t_allgather(g, T, cb, 0);
            t_allgather(g, T, cb, 1);
            t_alltoall(g, T, cb, 0);
            t_alltoall(g, T, cb, 1);
        }
        coll_free_type(t, T.l, &T.d);
    }
    red_t reds[2] = {{{&L_INT, MPI_INT}, MPI_SUM, "MPI_SUM", GEN_PLAIN},
                     {{&L_2INT, MPI_2INT}, uaffine, "user affine (non-commutative)", GEN_AFFINE}};
    for (int i = 0; i < 2; ++i) {
        int counts[3] = {0, 3, large_ok ? 24000 / reds[i].ty.l->nslots : 3};
        for (int ci = 0; ci < 3; ++ci) {
            for (int ra = 1; ra >= 0; --ra) {
                int n = ra == g->is_a ? g->lsize : g->rsize;
                t_reduce(g, &reds[i], counts[ci], ra, 0);
                if (n > 1) t_reduce(g, &reds[i], counts[ci], ra, n - 1);
            }
            t_allreduce(g, &reds[i], counts[ci]);
        }
        for (int k = 0; k <= 2; ++k) {
            t_reduce_scatter_block(g, &reds[i], k);
            t_reduce_scatter(g, &reds[i], k);
        }
    }
}

/* Builds the intercommunicator between the ranks with in_a set and the others (local leader:
 * each group's lowest world rank; local ranks ordered by key). */
static int make_inter(tctx *t, ic_t *g, const char *name, int in_a, int key) {
    memset(g, 0, sizeof(*g));
    g->t = t;
    g->name = name;
    g->is_a = in_a;
    CALL(t, MPI_Comm_split(MPI_COMM_WORLD, in_a, key, &g->local));
    /* the other group's leader: its member with the lowest key, found through MPI_COMM_WORLD */
    int *keys = malloc(sizeof(int) * 2 * (size_t)t->size), mine[2] = {in_a, key};
    CALL(t, MPI_Allgather(mine, 2, MPI_INT, keys, 2, MPI_INT, MPI_COMM_WORLD));
    int lead[2] = {-1, -1};
    for (int r = 0; r < t->size; ++r) {
        int a = keys[2 * r];
        if (lead[a] < 0 || keys[2 * r + 1] < keys[2 * lead[a] + 1]) lead[a] = r;
    }
    free(keys);
    if (lead[0] < 0 || lead[1] < 0) FAIL(t, "%s: an empty group", name);
    CALL(t, MPI_Intercomm_create(g->local, 0, MPI_COMM_WORLD, lead[!in_a], 99, &g->inter));
    CALL(t, MPI_Comm_set_errhandler(g->inter, MPI_ERRORS_RETURN));
    CALL(t, MPI_Comm_rank(g->inter, &g->lrank));
    CALL(t, MPI_Comm_size(g->inter, &g->lsize));
    CALL(t, MPI_Comm_remote_size(g->inter, &g->rsize));
    /* world ranks of both groups, through the groups */
    MPI_Group wg, lg, rg;
    CALL(t, MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CALL(t, MPI_Comm_group(g->inter, &lg));
    CALL(t, MPI_Comm_remote_group(g->inter, &rg));
    int n = g->lsize > g->rsize ? g->lsize : g->rsize, *idx = ints(n);
    for (int i = 0; i < n; ++i) idx[i] = i;
    g->lworld = ints(g->lsize);
    g->rworld = ints(g->rsize);
    CALL(t, MPI_Group_translate_ranks(lg, g->lsize, idx, wg, g->lworld));
    CALL(t, MPI_Group_translate_ranks(rg, g->rsize, idx, wg, g->rworld));
    free(idx);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    return 1;
}

static void free_inter(tctx *t, ic_t *g) {
    CALL(t, MPI_Comm_free(&g->inter));
    CALL(t, MPI_Comm_free(&g->local));
    free(g->lworld);
    free(g->rworld);
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_inter", &argc, &argv);
    if (t.size < 2) {
        if (t.rank == 0) printf("coll_inter: needs 2 ranks or more, nothing to test\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Op uaffine;
    CALL(&t, MPI_Op_create(coll_uaffine, 0, &uaffine));
    ic_t g;
    make_inter(&t, &g, "{0} | rest", t.rank == 0, t.rank);
    run_inter(&t, &g, 1, uaffine);
    free_inter(&t, &g);
    if (t.size > 2) {
        make_inter(&t, &g, "even | odd", t.rank % 2 == 0, t.rank);
        run_inter(&t, &g, 1, uaffine);
        free_inter(&t, &g);
        make_inter(&t, &g, "first third | rest reversed", t.rank < t.size / 3, t.rank < t.size / 3 ? t.rank : -t.rank);
        run_inter(&t, &g, 0, uaffine);
        free_inter(&t, &g);
    }
    CALL(&t, MPI_Op_free(&uaffine));
    return coll_finish(&t);
}
