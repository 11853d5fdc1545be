/* Neighborhood collectives (issue 6, MPI 3.1 section 7.6): MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v, w), blocking and non-blocking (MPI_Ineighbor_*, all five outstanding
 * at once on one communicator), on
 *
 *   - Cartesian topologies of 1, 2 and 3 dimensions (MPI_Dims_create), periodic, non-periodic
 *     (MPI_PROC_NULL neighbors: their receive blocks must stay untouched) and mixed; block 2d
 *     goes to / comes from the neighbor at -1 in dimension d, block 2d+1 the one at +1. In a
 *     periodic dimension of size 1 or 2 both neighbors are the same rank: what a rank sends to
 *     its +1 neighbor still arrives in that neighbor's block for its -1 neighbor, as in larger
 *     dimensions (MPI Forum erratum mpi-issues #153, in MPI 4.0 section 8.6; Open MPI 4.1 and
 *     MPICH 4.0's v and w variants pair the blocks the other way);
 *   - distributed graphs (MPI_Dist_graph_create_adjacent, MPI_UNWEIGHTED and weighted, with
 *     asymmetric in and out degrees, repeated edges, self loops, a rank without any edge, and
 *     reorder; MPI_Dist_graph_create with edges given by other ranks): neighbor order as
 *     MPI_Dist_graph_neighbors returns it, the k-th of several edges between two ranks matching
 *     the k-th (the equivalent point-to-point code of MPI 4.1 section 8.6 posts the receives in
 *     sources order);
 *   - a graph topology (MPI_Graph_create), neighbors in MPI_Graph_neighbors order.
 *
 * Counts 0, 2 and about 3000 per neighbor; MPI_INT and a vector with holes; per-edge counts and
 * displacements with gaps (v), per-edge types (w). A neighborhood collective on a communicator
 * without a topology gives MPI_ERR_TOPOLOGY; negative counts, null buffers with data, MPI_IN_PLACE,
 * invalid datatypes and null arrays or request pointers give their error classes, blocks larger
 * than the receive blocks MPI_ERR_TRUNCATE. Exit status 0 on success. */
#include "coll_common.h"

typedef struct {
    tctx *t;
    MPI_Comm comm;
    const char *name;
    int rank, world;          /* mine, in comm and in MPI_COMM_WORLD */
    int indeg, outdeg;
    int *src, *dst;           /* comm ranks or MPI_PROC_NULL */
    uint32_t *rkey, *skey;    /* the data expected on each in-edge, sent on each out-edge */
    int *srcw;                /* world rank of each source (-1: MPI_PROC_NULL) */
} topo_t;

static int *ints(int n) {
    int *p = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (p == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

static int world_of(MPI_Comm comm, int r) {
    if (r == MPI_PROC_NULL) return -1;
    MPI_Group g, wg;
    int w = -1;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(g, 1, &r, wg, &w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return w;
}

static uint32_t ekey(int sw, int dw, int k) { return coll_key((uint32_t)sw * 4099u + (uint32_t)dw, 80u + (uint32_t)k); }
static uint32_t ckey(int sw, int dim, int plus) { return coll_key((uint32_t)sw, 90u + (uint32_t)(2 * dim + plus)); }
/* How many times x occurs in a[0..i). */
static int ordinal(const int *a, int i, int x) {
    int k = 0;
    for (int j = 0; j < i; ++j) k += a[j] == x;
    return k;
}

/* Neighbor lists and edge keys of a communicator with a topology. */
static void topo_init(tctx *t, topo_t *g, MPI_Comm comm, const char *name) {
    memset(g, 0, sizeof(*g));
    g->t = t;
    g->comm = comm;
    g->name = name;
    CALL(t, MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MPI_Comm_rank(comm, &g->rank);
    g->world = t->rank;
    int status = MPI_UNDEFINED;
    CALL(t, MPI_Topo_test(comm, &status));
    if (status == MPI_CART) {
        int nd = 0;
        CALL(t, MPI_Cartdim_get(comm, &nd));
        g->indeg = g->outdeg = 2 * nd;
        g->src = ints(2 * nd);
        g->dst = ints(2 * nd);
        g->rkey = calloc((size_t)(2 * nd + 1), sizeof(uint32_t));
        g->skey = calloc((size_t)(2 * nd + 1), sizeof(uint32_t));
        for (int d = 0; d < nd; ++d) {
            int neg, pos;
            CALL(t, MPI_Cart_shift(comm, d, 1, &neg, &pos));
            g->src[2 * d] = g->dst[2 * d] = neg;
            g->src[2 * d + 1] = g->dst[2 * d + 1] = pos;
            g->skey[2 * d] = ckey(g->world, d, 0);
            g->skey[2 * d + 1] = ckey(g->world, d, 1);
            /* from the -1 neighbor: what it sent to its +1 neighbor, and the reverse */
            g->rkey[2 * d] = ckey(world_of(comm, neg), d, 1);
            g->rkey[2 * d + 1] = ckey(world_of(comm, pos), d, 0);
        }
    } else if (status == MPI_DIST_GRAPH || status == MPI_GRAPH) {
        if (status == MPI_DIST_GRAPH) {
            int weighted;
            CALL(t, MPI_Dist_graph_neighbors_count(comm, &g->indeg, &g->outdeg, &weighted));
            g->src = ints(g->indeg);
            g->dst = ints(g->outdeg);
            int *sw = ints(g->indeg), *dw = ints(g->outdeg);
            CALL(t, MPI_Dist_graph_neighbors(comm, g->indeg, g->src, weighted ? sw : MPI_UNWEIGHTED, g->outdeg,
                                             g->dst, weighted ? dw : MPI_UNWEIGHTED));
            free(sw);
            free(dw);
        } else {
            int n = 0;
            CALL(t, MPI_Graph_neighbors_count(comm, g->rank, &n));
            g->indeg = g->outdeg = n;
            g->src = ints(n);
            g->dst = ints(n);
            CALL(t, MPI_Graph_neighbors(comm, g->rank, n, g->src));
            memcpy(g->dst, g->src, sizeof(int) * (size_t)(n > 0 ? n : 1));
        }
        g->rkey = calloc((size_t)(g->indeg + 1), sizeof(uint32_t));
        g->skey = calloc((size_t)(g->outdeg + 1), sizeof(uint32_t));
        for (int i = 0; i < g->indeg; ++i)
            g->rkey[i] = ekey(world_of(comm, g->src[i]), g->world, ordinal(g->src, i, g->src[i]));
        for (int j = 0; j < g->outdeg; ++j)
            g->skey[j] = ekey(g->world, world_of(comm, g->dst[j]), ordinal(g->dst, j, g->dst[j]));
    } else {
        FAIL(t, "%s: no topology", name);
    }
    g->srcw = ints(g->indeg);
    for (int i = 0; i < g->indeg; ++i) g->srcw[i] = world_of(comm, g->src[i]);
}

static void topo_free(topo_t *g) {
    free(g->src);
    free(g->dst);
    free(g->rkey);
    free(g->skey);
    free(g->srcw);
}

/* Per-edge counts (v, w), the same on both sides of the edge (derived from the edge key). */
static int ecount(uint32_t key, int c) { return c == 0 ? 0 : (key % 4 == 1 ? 0 : c + (int)(key % 3)); }
/* Allgatherv: what a rank sends to all its out-neighbors. */
static int gcount(int world, int c) { return c == 0 ? 0 : (world % 3 == 1 ? 0 : c + world % 2); }

typedef struct {
    const layout_t *l;
    MPI_Datatype d;
} ty_t;

/* One neighborhood collective: buffers, expected results, arguments. */
typedef struct {
    int kind; /* 0 allgather, 1 allgatherv, 2 alltoall, 3 alltoallv, 4 alltoallw */
    buf_t s, r, x, s0;
    int scount, rcount;
    int *sc, *sd, *rc, *rd;
    MPI_Aint *swd, *rwd;
    MPI_Datatype *st, *rt;
} op_t;

static const char *const kname[5] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

static void op_setup(topo_t *g, op_t *o, int kind, ty_t T, ty_t I, int c) {
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    const layout_t *l = T.l;
    int ns = l->nslots, in = g->indeg, out = g->outdeg;
    o->rc = ints(in);
    o->rd = ints(in);
    o->sc = ints(out);
    o->sd = ints(out);
    if (kind == 0 || kind == 1) {
        int mine = kind == 0 ? c : gcount(g->world, c);
        o->scount = mine;
        o->s = buf_new(l, mine, COLL_SEND_HOLE);
        buf_fill(&o->s, 0, (long)mine * ns, GEN_PLAIN, coll_key((uint32_t)g->world, 81));
        for (int i = 0; i < in; ++i) o->rc[i] = kind == 0 ? c : (g->srcw[i] < 0 ? 1 : gcount(g->srcw[i], c));
        long span = kind == 1 ? coll_rev_displs(in, o->rc, o->rd) : (long)c * in;
        if (kind == 0)
            for (int i = 0; i < in; ++i) o->rd[i] = i * c;
        o->rcount = c;
        o->r = buf_new(l, span, COLL_SENTINEL);
        o->x = buf_new(l, span, COLL_SENTINEL);
        for (int i = 0; i < in; ++i)
            if (g->srcw[i] >= 0)
                buf_fill(&o->x, o->rd[i], (long)o->rc[i] * ns, GEN_PLAIN, coll_key((uint32_t)g->srcw[i], 81));
    } else if (kind == 2 || kind == 3) {
        for (int j = 0; j < out; ++j) o->sc[j] = kind == 2 ? c : ecount(g->skey[j], c);
        for (int i = 0; i < in; ++i) o->rc[i] = kind == 2 ? c : (g->srcw[i] < 0 ? 2 : ecount(g->rkey[i], c));
        long sspan = coll_rev_displs(out, o->sc, o->sd), rspan = coll_rev_displs(in, o->rc, o->rd);
        if (kind == 2) {
            for (int j = 0; j < out; ++j) o->sd[j] = j * c;
            for (int i = 0; i < in; ++i) o->rd[i] = i * c;
            sspan = (long)c * out;
            rspan = (long)c * in;
        }
        o->scount = o->rcount = c;
        o->s = buf_new(l, sspan, COLL_SEND_HOLE);
        o->r = buf_new(l, rspan, COLL_SENTINEL);
        o->x = buf_new(l, rspan, COLL_SENTINEL);
        for (int j = 0; j < out; ++j) buf_fill(&o->s, o->sd[j], (long)o->sc[j] * ns, GEN_PLAIN, g->skey[j]);
        for (int i = 0; i < in; ++i)
            if (g->srcw[i] >= 0) buf_fill(&o->x, o->rd[i], (long)o->rc[i] * ns, GEN_PLAIN, g->rkey[i]);
    } else {
        /* w: per edge, T or ns ints (chosen from the edge key, differently on the two sides) */
        o->swd = calloc((size_t)(out + 1), sizeof(MPI_Aint));
        o->rwd = calloc((size_t)(in + 1), sizeof(MPI_Aint));
        o->st = calloc((size_t)(out + 1), sizeof(MPI_Datatype));
        o->rt = calloc((size_t)(in + 1), sizeof(MPI_Datatype));
        long sb = 0, rb = 0;
        for (int j = out - 1; j >= 0; --j) {
            int u = ecount(g->skey[j], c), asT = g->skey[j] % 2 == 0;
            o->st[j] = asT ? T.d : I.d;
            o->sc[j] = asT ? u : u * ns;
            sb += 16;
            o->swd[j] = sb;
            sb += (long)u * l->extent;
        }
        for (int i = in - 1; i >= 0; --i) {
            int u = g->srcw[i] < 0 ? 1 : ecount(g->rkey[i], c), asT = (g->rkey[i] / 2) % 2 == 0;
            o->rt[i] = asT ? T.d : I.d;
            o->rc[i] = asT ? u : u * ns;
            rb += 16;
            o->rwd[i] = rb;
            rb += (long)u * l->extent;
        }
        o->s = buf_new(&L_INT, sb / 4 + 8, COLL_SEND_HOLE);
        o->r = buf_new(&L_INT, rb / 4 + 8, COLL_SENTINEL);
        o->x = buf_new(&L_INT, rb / 4 + 8, COLL_SENTINEL);
        for (int j = 0; j < out; ++j) {
            buf_t v = {o->st[j] == T.d ? l : &L_INT, 0, 0, NULL, o->s.base + o->swd[j]};
            buf_fill(&v, 0, (long)o->sc[j] * v.l->nslots, GEN_PLAIN, g->skey[j]);
        }
        for (int i = 0; i < in; ++i) {
            if (g->srcw[i] < 0) continue;
            buf_t v = {o->rt[i] == T.d ? l : &L_INT, 0, 0, NULL, o->x.base + o->rwd[i]};
            buf_fill(&v, 0, (long)o->rc[i] * v.l->nslots, GEN_PLAIN, g->rkey[i]);
        }
    }
    o->s0 = buf_copy(&o->s);
}

static int op_call(topo_t *g, op_t *o, ty_t T, MPI_Request *req) {
    MPI_Comm c = g->comm;
    void *s = o->s.base, *r = o->r.base;
    switch (o->kind) {
        case 0:
            return req ? MPI_Ineighbor_allgather(s, o->scount, T.d, r, o->rcount, T.d, c, req)
                       : MPI_Neighbor_allgather(s, o->scount, T.d, r, o->rcount, T.d, c);
        case 1:
            return req ? MPI_Ineighbor_allgatherv(s, o->scount, T.d, r, o->rc, o->rd, T.d, c, req)
                       : MPI_Neighbor_allgatherv(s, o->scount, T.d, r, o->rc, o->rd, T.d, c);
        case 2:
            return req ? MPI_Ineighbor_alltoall(s, o->scount, T.d, r, o->rcount, T.d, c, req)
                       : MPI_Neighbor_alltoall(s, o->scount, T.d, r, o->rcount, T.d, c);
        case 3:
            return req ? MPI_Ineighbor_alltoallv(s, o->sc, o->sd, T.d, r, o->rc, o->rd, T.d, c, req)
                       : MPI_Neighbor_alltoallv(s, o->sc, o->sd, T.d, r, o->rc, o->rd, T.d, c);
        default:
            return req ? MPI_Ineighbor_alltoallw(s, o->sc, o->swd, o->st, r, o->rc, o->rwd, o->rt, c, req)
                       : MPI_Neighbor_alltoallw(s, o->sc, o->swd, o->st, r, o->rc, o->rwd, o->rt, c);
    }
}

static void op_check(topo_t *g, op_t *o) {
    buf_check(g->t, "recvbuf", &o->r, &o->x);
    buf_check(g->t, "sendbuf (must not change)", &o->s, &o->s0);
}

static void op_free(op_t *o) {
    buf_free(&o->s);
    buf_free(&o->r);
    buf_free(&o->x);
    buf_free(&o->s0);
    free(o->sc);
    free(o->sd);
    free(o->rc);
    free(o->rd);
    free(o->swd);
    free(o->rwd);
    free(o->st);
    free(o->rt);
}

/* All five, blocking one after the other, then non-blocking all outstanding at once. */
static void run_topo(tctx *t, MPI_Comm comm, const char *name, ty_t *types, int ntypes) {
    topo_t g;
    topo_init(t, &g, comm, name);
    ty_t I = {&L_INT, MPI_INT};
    for (int ti = 0; ti < ntypes; ++ti) {
        ty_t T = types[ti];
        int counts[3] = {0, 2, 3000 / T.l->nslots};
        for (int ci = 0; ci < 3; ++ci) {
            int c = counts[ci];
            for (int k = 0; k < 5; ++k) {
                op_t o;
                op_setup(&g, &o, k, T, I, c);
                coll_where(t, "%s: MPI_Neighbor_%s %s count %d (indegree %d, outdegree %d)", name, kname[k], T.l->name,
                           c, g.indeg, g.outdeg);
                CALL(t, op_call(&g, &o, T, NULL));
                op_check(&g, &o);
                op_free(&o);
            }
            op_t os[5];
            MPI_Request req[5];
            for (int k = 0; k < 5; ++k) {
                op_setup(&g, &os[k], k, T, I, c);
                coll_where(t, "%s: MPI_Ineighbor_%s %s count %d (indegree %d, outdegree %d)", name, kname[k],
                           T.l->name, c, g.indeg, g.outdeg);
                CALL(t, op_call(&g, &os[k], T, &req[k]));
            }
            coll_where(t, "%s: MPI_Waitall on the five MPI_Ineighbor_* (%s count %d)", name, T.l->name, c);
            MPI_Status st[5];
            CALL(t, MPI_Waitall(5, req, st));
            for (int k = 0; k < 5; ++k) {
                coll_where(t, "%s: MPI_Ineighbor_%s %s count %d", name, kname[k], T.l->name, c);
                op_check(&g, &os[k]);
                op_free(&os[k]);
            }
        }
    }
    topo_free(&g);
}

/* ---- topologies --------------------------------------------------------------------------- */

static void cartesian(tctx *t, ty_t *types) {
    for (int nd = 1; nd <= 3; ++nd) {
        for (int p = 0; p < 3; ++p) {
            int dims[3] = {0, 0, 0}, periods[3];
            CALL(t, MPI_Dims_create(t->size, nd, dims));
            for (int d = 0; d < nd; ++d) periods[d] = p == 0 ? 1 : p == 1 ? 0 : d == 0;
            MPI_Comm cart;
            CALL(t, MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, p == 2, &cart));
            char name[128];
            snprintf(name, sizeof name, "Cartesian %d-d %dx%dx%d %s", nd, dims[0], nd > 1 ? dims[1] : 1,
                     nd > 2 ? dims[2] : 1, p == 0 ? "periodic" : p == 1 ? "non-periodic" : "mixed, reordered");
            run_topo(t, cart, name, types, p == 0 ? 2 : 1);
            CALL(t, MPI_Comm_free(&cart));
        }
    }
}

/* Out-edges of world rank r among n ranks: to r+1; to r+3 twice (even r); to (5r+2) % n (r % 3
 * == 0); to itself (r % 5 == 0); none from or to rank n-1 when n >= 5 (isolated). */
static int out_edges(int r, int n, int *e) {
    int k = 0, iso = n >= 5 ? n - 1 : -1;
    if (r == iso) return 0;
    int cand[5] = {(r + 1) % n, r % 2 == 0 ? (r + 3) % n : -1, r % 2 == 0 ? (r + 3) % n : -1,
                   r % 3 == 0 ? (5 * r + 2) % n : -1, r % 5 == 0 ? r : -1};
    for (int i = 0; i < 5; ++i)
        if (cand[i] >= 0 && cand[i] != iso) e[k++] = cand[i];
    return k;
}

static void dist_graphs(tctx *t, ty_t *types) {
    int n = t->size, me = t->rank;
    int out[8], nout = out_edges(me, n, out);
    /* in-edges: every rank's out-edges to me, by source rank and edge order */
    int *in = ints(8 * n), nin = 0;
    for (int s = 0; s < n; ++s) {
        int e[8], ne = out_edges(s, n, e);
        for (int k = 0; k < ne; ++k)
            if (e[k] == me) in[nin++] = s;
    }
    for (int variant = 0; variant < 3; ++variant) {
        MPI_Comm dg;
        int *sw = ints(nin), *dw = ints(nout);
        for (int i = 0; i < nin; ++i) sw[i] = 1 + i;
        for (int j = 0; j < nout; ++j) dw[j] = 1 + j;
        const char *name = variant == 0 ? "dist graph (adjacent, unweighted)"
                           : variant == 1 ? "dist graph (adjacent, weighted, reorder)"
                                          : "dist graph (MPI_Dist_graph_create, edges given by other ranks)";
        if (variant < 2) {
            CALL(t, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, variant == 0 ? MPI_UNWEIGHTED : sw, nout,
                                                   out, variant == 0 ? MPI_UNWEIGHTED : dw, MPI_INFO_NULL, variant,
                                                   &dg));
        } else {
            /* rank r gives the out-edges of rank (r + 1) % n */
            int src = (me + 1) % n, e[8], ne = out_edges(src, n, e), deg[1] = {ne};
            CALL(t, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, deg, e, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
        }
        run_topo(t, dg, name, types, variant == 0 ? 2 : 1);
        CALL(t, MPI_Comm_free(&dg));
        free(sw);
        free(dw);
    }
    free(in);
}

/* A graph topology: a ring (one edge each way; 2 ranks: one edge) with chords to rank + n/2
 * (even n >= 4), symmetric. */
static void graph(tctx *t, ty_t *types) {
    int n = t->size;
    int *index = ints(n), *edges = ints(4 * n), ne = 0;
    for (int r = 0; r < n; ++r) {
        if (n > 1) edges[ne++] = (r + 1) % n;
        if (n > 2) edges[ne++] = (r + n - 1) % n;
        if (n >= 4) edges[ne++] = (r + n / 2) % n; /* chord; for odd n not symmetric: skip */
        if (n >= 4 && n % 2 == 1) --ne;
        index[r] = ne;
    }
    MPI_Comm gc;
    CALL(t, MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &gc));
    run_topo(t, gc, "graph (ring with chords)", types, 1);
    CALL(t, MPI_Comm_free(&gc));
    free(index);
    free(edges);
}

/* Bad arguments on a ring (1-d periodic: two neighbors, both slots used even at 1 rank); each
 * call fails on every rank alike, so none leaves a message behind. */
static void bad_arguments(tctx *t) {
    int dims[1] = {t->size}, periods[1] = {1};
    MPI_Comm ring;
    CALL(t, MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    CALL(t, MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int x[4] = {1, 2, 3, 4}, y[4], c[2] = {1, 1}, neg[2] = {1, -1}, d[2] = {0, 1};
    MPI_Aint wd[2] = {0, sizeof(int)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT}, bad[2] = {MPI_INT, MPI_DATATYPE_NULL};
    MPI_Request r = MPI_REQUEST_NULL;
    coll_where(t, "neighborhood collectives: bad arguments");
    EXPECT_CLASS(t, MPI_Neighbor_allgather(x, -1, MPI_INT, y, 1, MPI_INT, ring), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Neighbor_alltoall(x, 1, MPI_INT, y, -1, MPI_INT, ring), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Neighbor_alltoallv(x, neg, d, MPI_INT, y, c, d, MPI_INT, ring), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Ineighbor_allgatherv(x, 1, MPI_INT, y, neg, d, MPI_INT, ring, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(t, MPI_Neighbor_allgather(NULL, 1, MPI_INT, y, 1, MPI_INT, ring), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Neighbor_alltoall(x, 1, MPI_INT, NULL, 1, MPI_INT, ring), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Ineighbor_alltoallw(NULL, c, wd, ty, y, c, wd, ty, ring, &r), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, ring), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Neighbor_alltoall(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, ring), MPI_ERR_BUFFER);
    EXPECT_CLASS(t, MPI_Neighbor_alltoall(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, ring), MPI_ERR_TYPE);
    EXPECT_CLASS(t, MPI_Neighbor_alltoallw(x, c, wd, ty, y, c, wd, bad, ring), MPI_ERR_TYPE);
    EXPECT_CLASS(t, MPI_Neighbor_alltoallv(x, NULL, d, MPI_INT, y, c, d, MPI_INT, ring), MPI_ERR_ARG);
    EXPECT_CLASS(t, MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, ring, NULL), MPI_ERR_ARG);
    if (r != MPI_REQUEST_NULL) FAIL(t, "a failed MPI_Ineighbor_* call set its request");
    /* blocks of 2 ints into blocks of 1: every receive is truncated (and consumes its message) */
    EXPECT_CLASS(t, MPI_Neighbor_alltoall(x, 2, MPI_INT, y, 1, MPI_INT, ring), MPI_ERR_TRUNCATE);
    CALL(t, MPI_Ineighbor_alltoall(x, 2, MPI_INT, y, 1, MPI_INT, ring, &r));
    EXPECT_CLASS(t, MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    /* the ring still works after the failed calls (nothing left behind) */
    CALL(t, MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, ring));
    CALL(t, MPI_Comm_free(&ring));
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_neighbor", &argc, &argv);
    ty_t types[2] = {{&L_INT, MPI_INT}, {&L_VECTOR, coll_make_type(&t, &L_VECTOR)}};
    cartesian(&t, types);
    dist_graphs(&t, types);
    graph(&t, types);
    coll_where(&t, "a communicator without a topology");
    int x = 0, y[4];
    EXPECT_CLASS(&t, MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    MPI_Request r = MPI_REQUEST_NULL;
    EXPECT_CLASS(&t, MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &r), MPI_ERR_TOPOLOGY);
    bad_arguments(&t);
    coll_free_type(&t, types[1].l, &types[1].d);
    return coll_finish(&t);
}
