/* The non-blocking collectives (issue 6, MPI 3.1 section 5.12): MPI_Ibarrier, MPI_Ibcast,
 * MPI_Igather(v), MPI_Iscatter(v), MPI_Iallgather(v), MPI_Ialltoall(v, w), MPI_Ireduce,
 * MPI_Iallreduce, MPI_Ireduce_scatter(_block), MPI_Iscan, MPI_Iexscan, each checked against a
 * serial reference (coll_common.h), in these scenarios:
 *
 *   each      every operation alone (MPI_IN_PLACE variants too), completed with MPI_Wait, and
 *             again with an MPI_Test loop
 *   same      all of them started back to back on one communicator, with point-to-point
 *             traffic on the same communicator (a ring of small and large messages, and an
 *             MPI_ANY_SOURCE / MPI_ANY_TAG receive posted before the collectives, which must
 *             get only the message sent after them), completed by one MPI_Waitall over the
 *             mixed requests in shuffled order; then again completed with MPI_Testall loops
 *   comms     each operation on its own communicator, started in a rank-dependent order (odd
 *             ranks reversed), completed with MPI_Waitany or MPI_Waitsome; blocking
 *             collectives on other communicators while they are outstanding
 *   many      64 MPI_Iallreduce outstanding on one communicator (distinct data: a mix-up
 *             shows), completed one by one in reverse order
 *   mixed     Ibarrier, Ibcast, Ireduce, Iallreduce, Igather(v), Iscatterv and Iallgather(v) outstanding on
 *             one communicator while blocking Allreduce, Barrier and Bcast run on it, three
 *             rounds, completed in reverse order (with ranks in several processes these take
 *             the hierarchical path, whose shared-memory phases share the communicator's
 *             sequence in each process)
 *   free      the communicator, a derived datatype and a user operation freed while an
 *             operation that uses them is outstanding; MPI_Request_get_status polling
 *   inter     MPI_Ibarrier, MPI_Ibcast, MPI_Iallreduce and MPI_Ialltoall on an intercommunicator
 *   eager     the small calls that MPC completes in the last member's call (Ibarrier, and small
 *             Ibcast, Ireduce, Iallreduce): 4 rounds of 7 of them outstanding at once (more
 *             than a communicator's 4 slots), an Ibcast whose members describe the message
 *             with different datatypes of one signature (MPI_INT x 6 at even ranks, a
 *             contiguous type of 3 MPI_INT x 2 at odd ones), and requests freed with
 *             MPI_Request_free before completion (MPI_Ibarrier then MPI_Barrier)
 *   remote    the same small calls between processes (mpc_run -p): several outstanding with
 *             different roots among point-to-point, MPI_Waitall / MPI_Testany over the mixed
 *             requests, and reductions of doubles bit for bit against the blocking calls
 *
 *   coll_nonblocking [scenario[,scenario...]]   (default: all)
 *
 * Concurrent operations carry different data (a per-instance salt), so a message matched by the
 * wrong operation changes a result. Exit status 0 on success. */
#include "coll_common.h"

enum {
    K_BARRIER, K_BCAST, K_GATHER, K_GATHERV, K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV, K_ALLTOALL,
    K_ALLTOALLV, K_ALLTOALLW, K_REDUCE, K_ALLREDUCE, K_RSB, K_RS, K_SCAN, K_EXSCAN, K_COUNT
};
static const char *const knames[K_COUNT] = {
    "MPI_Ibarrier", "MPI_Ibcast", "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv",
    "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ialltoallw", "MPI_Ireduce",
    "MPI_Iallreduce", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter", "MPI_Iscan", "MPI_Iexscan"};

/* One non-blocking collective: its arguments, buffers and expected results. */
typedef struct {
    tctx *t;
    int kind, count, root, inplace;
    uint32_t salt;
    MPI_Comm comm;
    int rank, size;
    const layout_t *l;
    MPI_Datatype d;
    MPI_Op op;
    int gen;
    buf_t s, r, x, s0; /* send, receive, expected receive, copy of send */
    long check_from, check_n; /* elements of r to compare (check_n < 0: all of r) */
    int *sc, *sd, *rc, *rd;
    MPI_Datatype *st, *rt;
    char what[96];
} nb_t;

static int *ints(int n) {
    int *p = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (p == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

static uint32_t k1(int r, uint32_t salt) { return coll_key((uint32_t)r, salt); }
static uint32_t k2(int s, int d, uint32_t salt) { return coll_key((uint32_t)s * 4099u + (uint32_t)d, salt); }

static void put_all(buf_t *b, long first, const long long *v, long n) {
    for (long j = 0; j < n; ++j) buf_put(b, first, j, v[j]);
}

/* Sets up operation `kind` on comm (type l/d; reductions: op, gen). */
static void nb_setup(nb_t *o, tctx *t, int kind, MPI_Comm comm, const layout_t *l, MPI_Datatype d, MPI_Op op,
                     int gen, int count, int root, int inplace, uint32_t salt) {
    memset(o, 0, sizeof(*o));
    o->t = t;
    o->kind = kind;
    o->comm = comm;
    o->l = l;
    o->d = d;
    o->op = op;
    o->gen = gen;
    o->count = count;
    o->root = root;
    o->inplace = inplace;
    o->salt = salt;
    o->check_n = -1;
    MPI_Comm_rank(comm, &o->rank);
    MPI_Comm_size(comm, &o->size);
    snprintf(o->what, sizeof o->what, "%s%s %s count %d root %d salt %u", knames[kind], inplace ? " (in place)" : "",
             l->name, count, root, (unsigned)salt);
    int n = o->size, me = o->rank, c = count, ns = l->nslots;
    int isroot = me == root;
    long nb = (long)c * ns;
    switch (kind) {
        case K_BARRIER:
            o->s = buf_new(l, 0, 0);
            o->r = buf_new(l, 0, 0);
            o->x = buf_new(l, 0, 0);
            break;
        case K_BCAST:
            o->s = buf_new(l, 0, 0);
            o->r = buf_new(l, c, isroot ? COLL_SEND_HOLE : COLL_SENTINEL);
            o->x = buf_new(l, c, isroot ? COLL_SEND_HOLE : COLL_SENTINEL);
            if (isroot) buf_fill(&o->r, 0, nb, GEN_PLAIN, k1(root, salt));
            buf_fill(&o->x, 0, nb, GEN_PLAIN, k1(root, salt));
            break;
        case K_GATHER:
        case K_GATHERV: {
            int v = kind == K_GATHERV;
            o->rc = ints(n);
            o->rd = ints(n);
            for (int i = 0; i < n; ++i) o->rc[i] = v ? coll_vcount(i, c) : c;
            long span = v ? coll_rev_displs(n, o->rc, o->rd) : (long)c * n;
            if (!v)
                for (int i = 0; i < n; ++i) o->rd[i] = i * c;
            o->s = buf_new(l, o->rc[me], COLL_SEND_HOLE);
            buf_fill(&o->s, 0, (long)o->rc[me] * ns, GEN_PLAIN, k1(me, salt));
            o->r = buf_new(l, isroot ? span : 0, COLL_SENTINEL);
            o->x = buf_new(l, isroot ? span : 0, COLL_SENTINEL);
            if (isroot) {
                for (int i = 0; i < n; ++i) buf_fill(&o->x, o->rd[i], (long)o->rc[i] * ns, GEN_PLAIN, k1(i, salt));
                if (inplace) buf_fill(&o->r, o->rd[me], (long)o->rc[me] * ns, GEN_PLAIN, k1(me, salt));
            }
            break;
        }
        case K_SCATTER:
        case K_SCATTERV: {
            int v = kind == K_SCATTERV;
            o->sc = ints(n);
            o->sd = ints(n);
            for (int i = 0; i < n; ++i) o->sc[i] = v ? coll_vcount(i, c) : c;
            long span = v ? coll_rev_displs(n, o->sc, o->sd) : (long)c * n;
            if (!v)
                for (int i = 0; i < n; ++i) o->sd[i] = i * c;
            o->s = buf_new(l, isroot ? span : 0, COLL_SEND_HOLE);
            if (isroot)
                for (int i = 0; i < n; ++i) buf_fill(&o->s, o->sd[i], (long)o->sc[i] * ns, GEN_PLAIN, k1(i, salt));
            o->r = buf_new(l, o->sc[me], COLL_SENTINEL);
            o->x = buf_new(l, o->sc[me], COLL_SENTINEL);
            buf_fill(&o->x, 0, (long)o->sc[me] * ns, GEN_PLAIN, k1(me, salt));
            if (isroot && inplace) o->check_n = 0;
            break;
        }
        case K_ALLGATHER:
        case K_ALLGATHERV: {
            int v = kind == K_ALLGATHERV;
            o->rc = ints(n);
            o->rd = ints(n);
            for (int i = 0; i < n; ++i) o->rc[i] = v ? coll_vcount(i, c) : c;
            long span = v ? coll_rev_displs(n, o->rc, o->rd) : (long)c * n;
            if (!v)
                for (int i = 0; i < n; ++i) o->rd[i] = i * c;
            o->s = buf_new(l, o->rc[me], COLL_SEND_HOLE);
            buf_fill(&o->s, 0, (long)o->rc[me] * ns, GEN_PLAIN, k1(me, salt));
            o->r = buf_new(l, span, COLL_SENTINEL);
            o->x = buf_new(l, span, COLL_SENTINEL);
            for (int i = 0; i < n; ++i) buf_fill(&o->x, o->rd[i], (long)o->rc[i] * ns, GEN_PLAIN, k1(i, salt));
            if (inplace) buf_fill(&o->r, o->rd[me], (long)o->rc[me] * ns, GEN_PLAIN, k1(me, salt));
            break;
        }
        case K_ALLTOALL:
        case K_ALLTOALLV: {
            int v = kind == K_ALLTOALLV;
            o->sc = ints(n);
            o->sd = ints(n);
            o->rc = ints(n);
            o->rd = ints(n);
            for (int i = 0; i < n; ++i) {
                o->sc[i] = v ? coll_acount(me, i, c, inplace) : c;
                o->rc[i] = v ? coll_acount(i, me, c, inplace) : c;
            }
            long sspan = coll_rev_displs(n, o->sc, o->sd), rspan = coll_rev_displs(n, o->rc, o->rd);
            if (!v) {
                for (int i = 0; i < n; ++i) o->sd[i] = o->rd[i] = i * c;
                sspan = rspan = (long)n * c;
            }
            o->s = buf_new(l, sspan, COLL_SEND_HOLE);
            o->r = buf_new(l, rspan, COLL_SENTINEL);
            o->x = buf_new(l, rspan, COLL_SENTINEL);
            for (int i = 0; i < n; ++i) {
                buf_fill(&o->s, o->sd[i], (long)o->sc[i] * ns, GEN_PLAIN, k2(me, i, salt));
                buf_fill(&o->x, o->rd[i], (long)o->rc[i] * ns, GEN_PLAIN, k2(i, me, salt));
                if (inplace) buf_fill(&o->r, o->rd[i], (long)o->rc[i] * ns, GEN_PLAIN, k2(me, i, salt));
            }
            break;
        }
        case K_ALLTOALLW: {
            /* to even peers as l, to odd peers as MPI_INT (same signature: ns ints per unit); byte
             * displacements; received from even peers as MPI_INT, from odd ones as l */
            o->sc = ints(n);
            o->sd = ints(n);
            o->rc = ints(n);
            o->rd = ints(n);
            o->st = calloc((size_t)n, sizeof(MPI_Datatype));
            o->rt = calloc((size_t)n, sizeof(MPI_Datatype));
            long sbytes = 0, rbytes = 0;
            for (int i = n - 1; i >= 0; --i) {
                int su = coll_acount(me, i, c, inplace), ru = coll_acount(i, me, c, inplace);
                int s_l = inplace ? (i % 2 == 1) : (i % 2 == 0), r_l = i % 2 == 1;
                o->st[i] = s_l ? d : MPI_INT;
                o->rt[i] = r_l ? d : MPI_INT;
                o->sc[i] = s_l ? su : su * ns;
                o->rc[i] = r_l ? ru : ru * ns;
                sbytes += 16;
                o->sd[i] = (int)sbytes;
                sbytes += (long)su * l->extent;
                rbytes += 16;
                o->rd[i] = (int)rbytes;
                rbytes += (long)ru * l->extent;
            }
            /* byte buffers (as MPI_INT buffers of enough elements) */
            o->s = buf_new(&L_INT, sbytes / 4 + 8, COLL_SEND_HOLE);
            o->r = buf_new(&L_INT, rbytes / 4 + 8, COLL_SENTINEL);
            o->x = buf_new(&L_INT, rbytes / 4 + 8, COLL_SENTINEL);
            for (int i = 0; i < n; ++i) {
                int s_l = o->st[i] == d, r_l = o->rt[i] == d;
                buf_t sv = {s_l ? l : &L_INT, 0, 0, NULL, o->s.base + o->sd[i]};
                buf_t xv = {r_l ? l : &L_INT, 0, 0, NULL, o->x.base + o->rd[i]};
                buf_t rv = {r_l ? l : &L_INT, 0, 0, NULL, o->r.base + o->rd[i]};
                buf_fill(&sv, 0, (long)o->sc[i] * sv.l->nslots, GEN_PLAIN, k2(me, i, salt));
                buf_fill(&xv, 0, (long)o->rc[i] * xv.l->nslots, GEN_PLAIN, k2(i, me, salt));
                if (inplace) buf_fill(&rv, 0, (long)o->rc[i] * rv.l->nslots, GEN_PLAIN, k2(me, i, salt));
            }
            break;
        }
        case K_REDUCE:
        case K_ALLREDUCE:
        case K_SCAN:
        case K_EXSCAN: {
            int hi = kind == K_SCAN ? me : kind == K_EXSCAN ? me - 1 : n - 1;
            int mine = kind == K_ALLREDUCE || kind == K_SCAN || kind == K_EXSCAN || isroot;
            o->s = buf_new(l, c, COLL_SEND_HOLE);
            buf_fill(&o->s, 0, nb, gen, k1(me, salt));
            o->r = buf_new(l, mine ? c : 0, COLL_SENTINEL);
            o->x = buf_new(l, mine ? c : 0, COLL_SENTINEL);
            if (mine && hi >= 0) {
                long long *ref = coll_ref_reduce(gen, salt, 0, hi, 0, nb);
                put_all(&o->x, 0, ref, nb);
                free(ref);
            }
            if (mine && inplace) buf_fill(&o->r, 0, nb, gen, k1(me, salt));
            if (kind == K_EXSCAN && me == 0) o->check_n = 0; /* undefined on rank 0 */
            break;
        }
        case K_RSB:
        case K_RS: {
            o->rc = ints(n);
            long total = 0, before = 0;
            for (int i = 0; i < n; ++i) {
                o->rc[i] = kind == K_RSB ? c : coll_vcount(i, c);
                if (i < me) before += o->rc[i];
                total += o->rc[i];
            }
            o->s = buf_new(l, total, COLL_SEND_HOLE);
            buf_fill(&o->s, 0, total * ns, gen, k1(me, salt));
            o->r = buf_new(l, inplace ? total : o->rc[me], COLL_SENTINEL);
            o->x = buf_new(l, inplace ? total : o->rc[me], COLL_SENTINEL);
            long long *ref = coll_ref_reduce(gen, salt, 0, n - 1, before * ns, (long)o->rc[me] * ns);
            put_all(&o->x, 0, ref, (long)o->rc[me] * ns);
            free(ref);
            if (inplace) {
                buf_fill(&o->r, 0, total * ns, gen, k1(me, salt));
                o->check_from = 0;
                o->check_n = o->rc[me];
            }
            break;
        }
    }
    o->s0 = buf_copy(&o->s);
}

static int nb_start(nb_t *o, MPI_Request *req) {
    int me = o->rank, isroot = me == o->root, c = o->count, ip = o->inplace;
    void *sb = o->s.base, *rb = o->r.base;
    MPI_Datatype d = o->d;
    MPI_Comm cm = o->comm;
    switch (o->kind) {
        case K_BARRIER: return MPI_Ibarrier(cm, req);
        case K_BCAST: return MPI_Ibcast(rb, c, d, o->root, cm, req);
        case K_GATHER:
            if (isroot) return MPI_Igather(ip ? MPI_IN_PLACE : sb, c, d, rb, c, d, o->root, cm, req);
            return MPI_Igather(sb, c, d, NULL, 0, MPI_DATATYPE_NULL, o->root, cm, req);
        case K_GATHERV:
            if (isroot) return MPI_Igatherv(ip ? MPI_IN_PLACE : sb, o->rc[me], d, rb, o->rc, o->rd, d, o->root, cm, req);
            return MPI_Igatherv(sb, o->rc[me], d, NULL, NULL, NULL, MPI_DATATYPE_NULL, o->root, cm, req);
        case K_SCATTER:
            if (isroot) return MPI_Iscatter(sb, c, d, ip ? MPI_IN_PLACE : rb, c, d, o->root, cm, req);
            return MPI_Iscatter(NULL, 0, MPI_DATATYPE_NULL, rb, c, d, o->root, cm, req);
        case K_SCATTERV:
            if (isroot) return MPI_Iscatterv(sb, o->sc, o->sd, d, ip ? MPI_IN_PLACE : rb, o->sc[me], d, o->root, cm, req);
            return MPI_Iscatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, rb, o->sc[me], d, o->root, cm, req);
        case K_ALLGATHER:
            if (ip) return MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, c, d, cm, req);
            return MPI_Iallgather(sb, c, d, rb, c, d, cm, req);
        case K_ALLGATHERV:
            if (ip) return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, o->rc, o->rd, d, cm, req);
            return MPI_Iallgatherv(sb, o->rc[me], d, rb, o->rc, o->rd, d, cm, req);
        case K_ALLTOALL:
            if (ip) return MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, c, d, cm, req);
            return MPI_Ialltoall(sb, c, d, rb, c, d, cm, req);
        case K_ALLTOALLV:
            if (ip) return MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, o->rc, o->rd, d, cm, req);
            return MPI_Ialltoallv(sb, o->sc, o->sd, d, rb, o->rc, o->rd, d, cm, req);
        case K_ALLTOALLW:
            if (ip) return MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rb, o->rc, o->rd, o->rt, cm, req);
            return MPI_Ialltoallw(sb, o->sc, o->sd, o->st, rb, o->rc, o->rd, o->rt, cm, req);
        case K_REDUCE:
            if (isroot) return MPI_Ireduce(ip ? MPI_IN_PLACE : sb, rb, c, d, o->op, o->root, cm, req);
            return MPI_Ireduce(sb, NULL, c, d, o->op, o->root, cm, req);
        case K_ALLREDUCE: return MPI_Iallreduce(ip ? MPI_IN_PLACE : sb, rb, c, d, o->op, cm, req);
        case K_RSB: return MPI_Ireduce_scatter_block(ip ? MPI_IN_PLACE : sb, rb, c, d, o->op, cm, req);
        case K_RS: return MPI_Ireduce_scatter(ip ? MPI_IN_PLACE : sb, rb, o->rc, d, o->op, cm, req);
        case K_SCAN: return MPI_Iscan(ip ? MPI_IN_PLACE : sb, rb, c, d, o->op, cm, req);
        default: return MPI_Iexscan(ip ? MPI_IN_PLACE : sb, rb, c, d, o->op, cm, req);
    }
}

static void nb_begin(nb_t *o, MPI_Request *req) {
    tctx *t = o->t;
    coll_where(t, "%s", o->what);
    CALL(t, nb_start(o, req));
    if (*req == MPI_REQUEST_NULL) FAIL(t, "%s returned MPI_REQUEST_NULL", knames[o->kind]);
}

/* After completion: the results, and the send buffer unchanged. */
static void nb_check(nb_t *o) {
    tctx *t = o->t;
    coll_where(t, "%s (%s)", o->what, "after completion");
    if (o->check_n < 0) buf_check(t, "recvbuf", &o->r, &o->x);
    else buf_check_elems(t, "recvbuf", &o->r, &o->x, o->check_from, o->check_n);
    buf_check(t, "sendbuf (must not change)", &o->s, &o->s0);
}

static void nb_free(nb_t *o) {
    buf_free(&o->s);
    buf_free(&o->r);
    buf_free(&o->x);
    buf_free(&o->s0);
    free(o->sc);
    free(o->sd);
    free(o->rc);
    free(o->rd);
    free(o->st);
    free(o->rt);
}

/* ---- the set of operations used by the scenarios ----------------------------------------- */

typedef struct {
    MPI_Datatype vec; /* L_VECTOR */
    MPI_Op uaffine;
} ctx_t;

/* Sets up operation number i of the standard list on comm: every kind, with (i / K_COUNT)
 * selecting variants: 0 plain MPI_INT / MPI_SUM, 1 in place / derived / non-commutative. */
static int nb_variant(nb_t *o, tctx *t, ctx_t *cx, int i, MPI_Comm comm, int count, uint32_t salt) {
    int kind = i % K_COUNT, var = i / K_COUNT, size;
    MPI_Comm_size(comm, &size);
    int root = (int)((salt + (uint32_t)kind) % (uint32_t)size);
    int red = kind == K_REDUCE || kind == K_ALLREDUCE || kind == K_RSB || kind == K_RS || kind == K_SCAN ||
              kind == K_EXSCAN;
    if (var == 0) {
        nb_setup(o, t, kind, comm, &L_INT, MPI_INT, MPI_SUM, GEN_PLAIN, count, root, 0, salt);
    } else if (red) {
        nb_setup(o, t, kind, comm, &L_2INT, MPI_2INT, cx->uaffine, GEN_AFFINE, count, root, 1, salt);
    } else {
        int ip = kind != K_BCAST && kind != K_BARRIER;
        nb_setup(o, t, kind, comm, &L_VECTOR, cx->vec, MPI_OP_NULL, GEN_PLAIN, count, root, ip, salt);
    }
    return 1;
}
#define NVARIANTS (2 * K_COUNT)

/* Point-to-point traffic around the collectives: a ring of a small (tag 7, to the right) and a
 * large (tag 8, to the left) message, and a wildcard receive that must get only the message
 * sent to it after the collectives (tag 9, from rank + 2... i.e. to rank - 2). */
typedef struct {
    int small_out[16], small_in[16];
    int *large_out, *large_in;
    int wild_in[4], wild_out[4];
    MPI_Request req[5]; /* recv small, recv large, recv wildcard, send small, send large */
} p2p_t;

enum { LARGE = 1 << 16 };

static void p2p_start(tctx *t, p2p_t *p, MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    p->large_out = malloc(sizeof(int) * LARGE);
    p->large_in = calloc(LARGE, sizeof(int));
    for (int i = 0; i < 16; ++i) p->small_out[i] = rank * 100 + i, p->small_in[i] = -1;
    for (int i = 0; i < LARGE; ++i) p->large_out[i] = rank ^ (i * 7);
    for (int i = 0; i < 4; ++i) p->wild_in[i] = -1, p->wild_out[i] = 1000 * rank + i;
    coll_where(t, "point-to-point traffic");
    CALL(t, MPI_Irecv(p->small_in, 16, MPI_INT, left, 7, comm, &p->req[0]));
    CALL(t, MPI_Irecv(p->large_in, LARGE, MPI_INT, right, 8, comm, &p->req[1]));
    CALL(t, MPI_Irecv(p->wild_in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &p->req[2]));
    CALL(t, MPI_Isend(p->small_out, 16, MPI_INT, right, 7, comm, &p->req[3]));
    CALL(t, MPI_Isend(p->large_out, LARGE, MPI_INT, left, 8, comm, &p->req[4]));
}

/* The message for the wildcard receive: after every collective completed. */
static void p2p_finish(tctx *t, p2p_t *p, MPI_Comm comm, MPI_Status *wild_status) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    coll_where(t, "point-to-point traffic (after the collectives)");
    int to = (rank + size - 2 % size) % size, from = (rank + 2) % size;
    CALL(t, MPI_Send(p->wild_out, 4, MPI_INT, to, 9, comm));
    if (p->req[2] != MPI_REQUEST_NULL) CALL(t, MPI_Wait(&p->req[2], wild_status));
    if (wild_status->MPI_SOURCE != from || wild_status->MPI_TAG != 9 || p->wild_in[0] != 1000 * from)
        FAIL(t, "the wildcard receive got source %d tag %d value %d, expected %d, 9, %d", wild_status->MPI_SOURCE,
             wild_status->MPI_TAG, p->wild_in[0], from, 1000 * from);
    for (int i = 0; i < 16; ++i)
        if (p->small_in[i] != left * 100 + i) {
            FAIL(t, "small ring message: element %d is %d", i, p->small_in[i]);
            break;
        }
    for (int i = 0; i < LARGE; ++i)
        if (p->large_in[i] != (right ^ (i * 7))) {
            FAIL(t, "large ring message: element %d is %d", i, p->large_in[i]);
            break;
        }
    free(p->large_out);
    free(p->large_in);
}

/* ---- scenarios ---------------------------------------------------------------------------- */

static void s_each(tctx *t, ctx_t *cx) {
    int counts[3] = {0, 1, 5};
    for (int ci = 0; ci < 3; ++ci)
        for (int i = 0; i < NVARIANTS; ++i) {
            nb_t o;
            MPI_Request r = MPI_REQUEST_NULL;
            nb_variant(&o, t, cx, i, MPI_COMM_WORLD, counts[ci], (uint32_t)(100 + i));
            nb_begin(&o, &r);
            CALL(t, MPI_Wait(&r, MPI_STATUS_IGNORE));
            if (r != MPI_REQUEST_NULL) FAIL(t, "MPI_Wait left the request non-null");
            nb_check(&o);
            nb_free(&o);
            /* the same with a test loop */
            nb_variant(&o, t, cx, i, MPI_COMM_WORLD, counts[ci], (uint32_t)(200 + i));
            nb_begin(&o, &r);
            int flag = 0;
            long spins = 0;
            while (!flag) {
                CALL(t, MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                ++spins;
            }
            if (r != MPI_REQUEST_NULL) FAIL(t, "MPI_Test left the request non-null");
            nb_check(&o);
            nb_free(&o);
        }
    /* a large one of each */
    for (int i = 0; i < NVARIANTS; ++i) {
        nb_t o;
        MPI_Request r = MPI_REQUEST_NULL;
        nb_variant(&o, t, cx, i, MPI_COMM_WORLD, 12000 / t->size + 1, (uint32_t)(300 + i));
        nb_begin(&o, &r);
        CALL(t, MPI_Wait(&r, MPI_STATUS_IGNORE));
        nb_check(&o);
        nb_free(&o);
    }
}

/* Everything on one communicator, with point-to-point traffic on it; completion by MPI_Waitall
 * (shuffled) or by MPI_Testall loops. */
static void s_same(tctx *t, ctx_t *cx) {
    MPI_Comm comm;
    CALL(t, MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (int pass = 0; pass < 2; ++pass) {
        nb_t ops[NVARIANTS];
        MPI_Request req[NVARIANTS + 5];
        MPI_Status st[NVARIANTS + 5];
        p2p_t p;
        p2p_start(t, &p, comm);
        for (int i = 0; i < NVARIANTS; ++i) {
            nb_variant(&ops[i], t, cx, i, comm, 3 + i % 4, (uint32_t)(1000 * (pass + 1) + i));
            nb_begin(&ops[i], &req[i]);
        }
        /* the point-to-point requests (not the wildcard receive) mixed in */
        req[NVARIANTS] = p.req[0];
        req[NVARIANTS + 1] = p.req[1];
        req[NVARIANTS + 2] = p.req[3];
        req[NVARIANTS + 3] = p.req[4];
        int n = NVARIANTS + 4;
        /* shuffle (the same permutation on every rank is not needed: completion order is free) */
        MPI_Request sh[NVARIANTS + 5];
        int perm[NVARIANTS + 5];
        for (int i = 0; i < n; ++i) perm[i] = (int)((i * 7u + (uint32_t)t->rank * 3u) % (uint32_t)n);
        int used[NVARIANTS + 5] = {0};
        for (int i = 0; i < n; ++i) {
            while (used[perm[i]]) perm[i] = (perm[i] + 1) % n;
            used[perm[i]] = 1;
            sh[perm[i]] = req[i];
        }
        coll_where(t, pass == 0 ? "MPI_Waitall over collective and point-to-point requests"
                                : "MPI_Testall loop over collective and point-to-point requests");
        if (pass == 0) {
            CALL(t, MPI_Waitall(n, sh, st));
        } else {
            int flag = 0;
            while (!flag) CALL(t, MPI_Testall(n, sh, &flag, st));
        }
        for (int i = 0; i < n; ++i)
            if (sh[i] != MPI_REQUEST_NULL) FAIL(t, "request %d not null after completion", i);
        for (int i = 0; i < NVARIANTS; ++i) {
            nb_check(&ops[i]);
            nb_free(&ops[i]);
        }
        p.req[0] = p.req[1] = p.req[3] = p.req[4] = MPI_REQUEST_NULL;
        MPI_Status ws;
        p2p_finish(t, &p, comm, &ws);
        /* nobody starts the next pass (whose messages a pending wildcard receive would match)
         * before every wildcard receive of this one completed */
        CALL(t, MPI_Barrier(comm));
    }
    CALL(t, MPI_Comm_free(&comm));
}

/* Each operation on its own communicator, started in a rank-dependent order; completed with
 * MPI_Waitany (first pass) or MPI_Waitsome (second pass); blocking collectives on
 * MPI_COMM_WORLD in between. */
static void s_comms(tctx *t, ctx_t *cx) {
    MPI_Comm comms[NVARIANTS];
    for (int i = 0; i < NVARIANTS; ++i) CALL(t, MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    for (int pass = 0; pass < 2; ++pass) {
        nb_t ops[NVARIANTS];
        MPI_Request req[NVARIANTS];
        for (int k = 0; k < NVARIANTS; ++k) {
            int i = t->rank % 2 ? NVARIANTS - 1 - k : k;
            nb_variant(&ops[i], t, cx, i, comms[i], 2 + i % 3, (uint32_t)(5000 + 100 * pass + i));
            nb_begin(&ops[i], &req[i]);
            if (k == NVARIANTS / 2) {
                /* a blocking collective on another communicator meanwhile */
                coll_where(t, "MPI_Allreduce on MPI_COMM_WORLD with non-blocking ones outstanding");
                int one = 1, all = 0;
                CALL(t, MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
                if (all != t->size) FAIL(t, "MPI_Allreduce: %d", all);
            }
        }
        int left = NVARIANTS;
        coll_where(t, pass == 0 ? "MPI_Waitany over operations on different communicators"
                                : "MPI_Waitsome over operations on different communicators");
        while (left > 0) {
            if (pass == 0) {
                int idx = -1;
                CALL(t, MPI_Waitany(NVARIANTS, req, &idx, MPI_STATUS_IGNORE));
                if (idx < 0 || idx >= NVARIANTS) {
                    FAIL(t, "MPI_Waitany index %d", idx);
                    break;
                }
                nb_check(&ops[idx]);
                --left;
            } else {
                int outc = 0, idx[NVARIANTS];
                CALL(t, MPI_Waitsome(NVARIANTS, req, &outc, idx, MPI_STATUSES_IGNORE));
                if (outc <= 0 || outc == MPI_UNDEFINED) {
                    FAIL(t, "MPI_Waitsome outcount %d with %d requests active", outc, left);
                    break;
                }
                for (int k = 0; k < outc; ++k) nb_check(&ops[idx[k]]);
                left -= outc;
            }
        }
        for (int i = 0; i < NVARIANTS; ++i) nb_free(&ops[i]);
    }
    for (int i = 0; i < NVARIANTS; ++i) CALL(t, MPI_Comm_free(&comms[i]));
}

/* Many operations of the same shape outstanding on one communicator; completed one by one in
 * reverse order. */
static void s_many(tctx *t, ctx_t *cx) {
    (void)cx;
    enum { M = 64 };
    nb_t *ops = calloc(M, sizeof(nb_t));
    MPI_Request req[M];
    for (int i = 0; i < M; ++i) {
        nb_setup(&ops[i], t, K_ALLREDUCE, MPI_COMM_WORLD, &L_INT, MPI_INT, MPI_SUM, GEN_PLAIN, 4 + (i % 2) * 3000, 0,
                 0, (uint32_t)(9000 + i));
        nb_begin(&ops[i], &req[i]);
    }
    for (int i = M - 1; i >= 0; --i) {
        coll_where(t, "MPI_Wait on operation %d of %d outstanding MPI_Iallreduce", i, M);
        CALL(t, MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        nb_check(&ops[i]);
        nb_free(&ops[i]);
    }
    free(ops);
}

static void s_mixed(tctx *t, ctx_t *cx) {
    (void)cx;
    static const int kinds[] = {K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_ALLGATHER, K_ALLGATHERV,
                                K_GATHERV, K_SCATTERV};
    enum { NK = sizeof(kinds) / sizeof(kinds[0]), ROUNDS = 3, M = NK * ROUNDS };
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nb_t *ops = calloc(M, sizeof(nb_t));
    MPI_Request req[M];
    for (int i = 0; i < M; ++i) {
        int kind = kinds[i % NK];
        nb_setup(&ops[i], t, kind, MPI_COMM_WORLD, &L_INT, MPI_INT, MPI_SUM, GEN_PLAIN, 3 + (i % 3) * 700,
                 (i * 5) % size, 0, (uint32_t)(7000 + i));
        nb_begin(&ops[i], &req[i]);
        /* Blocking calls on the same communicator while the non-blocking ones are outstanding. */
        int x = rank + i, sum = 0, b = rank == i % size ? 1000 + i : -1;
        coll_where(t, "blocking MPI_Allreduce after %d outstanding operations", i + 1);
        CALL(t, MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (sum != size * (size - 1) / 2 + size * i) {
            FAIL(t, "blocking MPI_Allreduce among %d outstanding operations: %d, expected %d", i + 1, sum,
                      size * (size - 1) / 2 + size * i);
        }
        CALL(t, MPI_Barrier(MPI_COMM_WORLD));
        CALL(t, MPI_Bcast(&b, 1, MPI_INT, i % size, MPI_COMM_WORLD));
        if (b != 1000 + i) {
            FAIL(t, "blocking MPI_Bcast among %d outstanding operations: %d, expected %d", i + 1, b, 1000 + i);
        }
    }
    for (int i = M - 1; i >= 0; --i) {
        coll_where(t, "MPI_Wait on %s, operation %d of %d outstanding", knames[ops[i].kind], i, M);
        CALL(t, MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        nb_check(&ops[i]);
        nb_free(&ops[i]);
    }
    free(ops);
}

/* Objects freed while an operation using them is outstanding; MPI_Request_get_status. */
static void s_free(tctx *t, ctx_t *cx) {
    (void)cx;
    MPI_Comm comm;
    MPI_Datatype vec = coll_make_type(t, &L_VECTOR), vecw = coll_make_type(t, &L_VECTOR);
    MPI_Op uaff;
    CALL(t, MPI_Op_create(coll_uaffine, 0, &uaff));
    CALL(t, MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    nb_t a, b, c, w;
    MPI_Request ra, rb, rc, rw;
    nb_setup(&a, t, K_ALLGATHER, comm, &L_VECTOR, vec, MPI_OP_NULL, GEN_PLAIN, 3, 0, 0, 7001);
    nb_setup(&b, t, K_ALLREDUCE, comm, &L_2INT, MPI_2INT, uaff, GEN_AFFINE, 5, 0, 0, 7002);
    nb_setup(&c, t, K_BCAST, comm, &L_VECTOR, vec, MPI_OP_NULL, GEN_PLAIN, 2, t->size - 1, 0, 7003);
    nb_begin(&a, &ra);
    nb_begin(&b, &rb);
    /* Alltoallw takes its types as an array of handles: vecw is in it, for the odd peers */
    nb_setup(&w, t, K_ALLTOALLW, comm, &L_VECTOR, vecw, MPI_OP_NULL, GEN_PLAIN, 2, 0, 0, 7004);
    nb_begin(&c, &rc);
    nb_begin(&w, &rw);
    coll_where(t, "freeing the communicator, datatype and operation of outstanding operations");
    CALL(t, MPI_Type_free(&vec));
    CALL(t, MPI_Type_free(&vecw));
    CALL(t, MPI_Op_free(&uaff));
    CALL(t, MPI_Comm_free(&comm));
    int flag = 0;
    coll_where(t, "MPI_Request_get_status polling");
    while (!flag) CALL(t, MPI_Request_get_status(rb, &flag, MPI_STATUS_IGNORE));
    if (rb == MPI_REQUEST_NULL) FAIL(t, "MPI_Request_get_status freed the request");
    MPI_Request all[4] = {ra, rb, rc, rw};
    CALL(t, MPI_Waitall(4, all, MPI_STATUSES_IGNORE));
    nb_check(&a);
    nb_check(&b);
    nb_check(&c);
    nb_check(&w);
    nb_free(&a);
    nb_free(&b);
    nb_free(&c);
    nb_free(&w);
}

/* Intercommunicator: even | odd world ranks. */
static void s_inter(tctx *t, ctx_t *cx) {
    (void)cx;
    if (t->size < 2) return;
    MPI_Comm local, ic;
    int in_a = t->rank % 2 == 0;
    CALL(t, MPI_Comm_split(MPI_COMM_WORLD, in_a, t->rank, &local));
    CALL(t, MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 1 : 0, 97, &ic));
    CALL(t, MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int lrank, lsize, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Request req[4];
    /* Ibcast from A's local rank 0; Iallreduce: each group gets the sum of the other's world
     * ranks; Ialltoall: one int from each to each (world ranks) */
    int bc[3] = {-1, -1, -1};
    if (in_a && lrank == 0) bc[0] = bc[1] = bc[2] = 4711;
    int root = in_a ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int v = t->rank, sum = -1;
    int *a2a_in = calloc((size_t)rsize, sizeof(int)), *a2a_out = calloc((size_t)rsize, sizeof(int));
    for (int i = 0; i < rsize; ++i) a2a_out[i] = t->rank * 1000 + i;
    coll_where(t, "non-blocking collectives on an intercommunicator");
    CALL(t, MPI_Ibarrier(ic, &req[0]));
    CALL(t, MPI_Ibcast(bc, 3, MPI_INT, root, ic, &req[1]));
    CALL(t, MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic, &req[2]));
    CALL(t, MPI_Ialltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, ic, &req[3]));
    MPI_Status sts[4];
    CALL(t, MPI_Waitall(4, req, sts));
    int expect_sum = 0;
    for (int r = 0; r < t->size; ++r)
        if ((r % 2 == 0) != in_a) expect_sum += r;
    if (sum != expect_sum) FAIL(t, "MPI_Iallreduce: %d, expected %d", sum, expect_sum);
    if (root != MPI_PROC_NULL && bc[2] != 4711) FAIL(t, "MPI_Ibcast: %d", bc[2]);
    if (root == MPI_PROC_NULL && bc[0] != -1) FAIL(t, "MPI_Ibcast changed a buffer at MPI_PROC_NULL");
    for (int i = 0; i < rsize; ++i) {
        int from = in_a ? 2 * i + 1 : 2 * i; /* world rank of remote rank i */
        if (a2a_in[i] != from * 1000 + lrank) {
            FAIL(t, "MPI_Ialltoall: element %d is %d, expected %d", i, a2a_in[i], from * 1000 + lrank);
            break;
        }
    }
    free(a2a_in);
    free(a2a_out);
    CALL(t, MPI_Comm_free(&ic));
    CALL(t, MPI_Comm_free(&local));
    (void)lsize;
}

typedef struct {
    const char *name;
    void (*fn)(tctx *, ctx_t *);
} scen_t;

/* The eager small calls (see the file comment). */
static void s_eager(tctx *t, ctx_t *cx) {
    (void)cx;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int kinds[] = {K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_BCAST, K_ALLREDUCE, K_BARRIER};
    enum { NK = sizeof(kinds) / sizeof(kinds[0]) };
    for (int round = 0; round < 4; ++round) {
        nb_t ops[NK];
        MPI_Request req[NK];
        for (int i = 0; i < NK; ++i) {
            nb_setup(&ops[i], t, kinds[i], MPI_COMM_WORLD, &L_INT, MPI_INT, MPI_SUM, GEN_PLAIN, 1 + i % 5,
                     (i + round) % size, 0, (uint32_t)(5000 + 100 * round + i));
            nb_begin(&ops[i], &req[i]);
        }
        for (int i = (round % 2 ? 0 : NK - 1); round % 2 ? i < NK : i >= 0; i += round % 2 ? 1 : -1) {
            coll_where(t, "round %d: MPI_Wait on %s, operation %d of %d outstanding", round, knames[ops[i].kind], i, NK);
            CALL(t, MPI_Wait(&req[i], MPI_STATUS_IGNORE));
            nb_check(&ops[i]);
            nb_free(&ops[i]);
        }
    }
    /* One message, two descriptions: 6 MPI_INT, or 2 of a contiguous type of 3 MPI_INT. */
    MPI_Datatype three;
    CALL(t, MPI_Type_contiguous(3, MPI_INT, &three));
    CALL(t, MPI_Type_commit(&three));
    for (int root = 0; root < size && root < 3; ++root) {
        int buf[6];
        for (int j = 0; j < 6; ++j) buf[j] = rank == root ? 1000 * root + j : -1;
        MPI_Request r;
        coll_where(t, "MPI_Ibcast from %d, MPI_INT x 6 or a contiguous type x 2", root);
        if (rank % 2 == 0) {
            CALL(t, MPI_Ibcast(buf, 6, MPI_INT, root, MPI_COMM_WORLD, &r));
        } else {
            CALL(t, MPI_Ibcast(buf, 2, three, root, MPI_COMM_WORLD, &r));
        }
        CALL(t, MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int j = 0; j < 6; ++j) {
            if (buf[j] != 1000 * root + j) {
                FAIL(t, "MPI_Ibcast from %d with mixed datatypes: element %d is %d, expected %d", root, j, buf[j],
                     1000 * root + j);
                break;
            }
        }
    }
    CALL(t, MPI_Type_free(&three));
    /* Requests freed before completion: the last member completes them all the same. */
    for (int i = 0; i < 8; ++i) {
        MPI_Request r;
        coll_where(t, "MPI_Ibarrier %d, freed with MPI_Request_free", i);
        CALL(t, MPI_Ibarrier(MPI_COMM_WORLD, &r));
        CALL(t, MPI_Request_free(&r));
        if (r != MPI_REQUEST_NULL) FAIL(t, "MPI_Request_free left the request non-null");
    }
    CALL(t, MPI_Barrier(MPI_COMM_WORLD));
}

/* Small calls between processes (mpc_run -p: thread-less there too, docs/collectives.md): 4
 * rounds of 10 Ibarrier, Ibcast, Ireduce and Iallreduce with different roots outstanding at once
 * (more than a local view's 4 slots), point-to-point between them (a ring, started before, among
 * and after the collectives), completed by one MPI_Waitall over the mixed requests (even rounds)
 * or an MPI_Testany loop (odd rounds); then Iallreduce and Ireduce of doubles against their
 * blocking calls, bit for bit (the same association for a given layout), on MPI_COMM_WORLD and on
 * the even ranks (another membership per process). */
static double pow2i(int e) {
    double p = 1.0;
    for (; e > 0; --e) p *= 2.0;
    for (; e < 0; ++e) p /= 2.0;
    return p;
}

static void remote_bits(tctx *t, MPI_Comm comm, const char *cname) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { N = 5 };
    double x[N], nb[N], bl[N];
    for (int j = 0; j < N; ++j) {
        x[j] = (1.0 + 0.37 * rank + 0.11 * j) * pow2i((rank * 7 + j * 13) % 50 - 25) * ((rank + j) % 2 ? -1.0 : 1.0);
    }
    MPI_Request r;
    coll_where(t, "MPI_Iallreduce of doubles on %s against MPI_Allreduce", cname);
    CALL(t, MPI_Iallreduce(x, nb, N, MPI_DOUBLE, MPI_SUM, comm, &r));
    CALL(t, MPI_Wait(&r, MPI_STATUS_IGNORE));
    CALL(t, MPI_Allreduce(x, bl, N, MPI_DOUBLE, MPI_SUM, comm));
    if (memcmp(nb, bl, sizeof nb) != 0) FAIL(t, "MPI_Iallreduce of doubles on %s: not the bits of MPI_Allreduce", cname);
    for (int root = 0; root < size && root < 4; ++root) {
        memset(nb, 0, sizeof nb);
        memset(bl, 0, sizeof bl);
        coll_where(t, "MPI_Ireduce of doubles to %d on %s against MPI_Reduce", root, cname);
        CALL(t, MPI_Ireduce(x, nb, N, MPI_DOUBLE, MPI_SUM, root, comm, &r));
        CALL(t, MPI_Wait(&r, MPI_STATUS_IGNORE));
        CALL(t, MPI_Reduce(x, bl, N, MPI_DOUBLE, MPI_SUM, root, comm));
        if (rank == root && memcmp(nb, bl, sizeof nb) != 0) {
            FAIL(t, "MPI_Ireduce of doubles to %d on %s: not the bits of MPI_Reduce", root, cname);
        }
    }
}

static void s_remote(tctx *t, ctx_t *cx) {
    (void)cx;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int kinds[] = {K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_BCAST,
                                K_REDUCE,  K_ALLREDUCE, K_BARRIER, K_BCAST, K_ALLREDUCE};
    enum { NK = sizeof(kinds) / sizeof(kinds[0]), NP = 4 };
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int round = 0; round < 4; ++round) {
        nb_t ops[NK];
        MPI_Request req[NK + NP];
        int in[2] = {-1, -1}, out[2] = {rank * 10 + round, rank * 10 + round + 5};
        coll_where(t, "round %d: starting %d small collectives among point-to-point", round, NK);
        CALL(t, MPI_Irecv(&in[0], 1, MPI_INT, left, 40 + round, MPI_COMM_WORLD, &req[NK]));
        for (int i = 0; i < NK; ++i) {
            nb_setup(&ops[i], t, kinds[i], MPI_COMM_WORLD, &L_INT, MPI_INT, MPI_SUM, GEN_PLAIN,
                     1 + i % 5, (i * 3 + round) % size, 0, (uint32_t)(6000 + 100 * round + i));
            nb_begin(&ops[i], &req[i]);
            if (i == NK / 2) {
                CALL(t, MPI_Isend(&out[0], 1, MPI_INT, right, 40 + round, MPI_COMM_WORLD, &req[NK + 1]));
                CALL(t, MPI_Irecv(&in[1], 1, MPI_INT, left, 60 + round, MPI_COMM_WORLD, &req[NK + 2]));
            }
        }
        CALL(t, MPI_Isend(&out[1], 1, MPI_INT, right, 60 + round, MPI_COMM_WORLD, &req[NK + 3]));
        if (round % 2 == 0) {
            coll_where(t, "round %d: MPI_Waitall over %d collective and %d point-to-point requests", round, NK, NP);
            CALL(t, MPI_Waitall(NK + NP, req, MPI_STATUSES_IGNORE));
            for (int i = 0; i < NK; ++i) nb_check(&ops[i]);
        } else {
            coll_where(t, "round %d: MPI_Testany loop over %d collective and %d point-to-point requests", round, NK, NP);
            for (int done = 0; done < NK + NP;) {
                int idx = MPI_UNDEFINED, flag = 0;
                CALL(t, MPI_Testany(NK + NP, req, &idx, &flag, MPI_STATUS_IGNORE));
                if (flag && idx == MPI_UNDEFINED) {
                    FAIL(t, "MPI_Testany: no active request left after %d of %d", done, NK + NP);
                    break;
                }
                if (flag) {
                    if (idx < NK) nb_check(&ops[idx]);
                    ++done;
                }
            }
        }
        for (int i = 0; i < NK; ++i) nb_free(&ops[i]);
        const int from = (left * 10 + round);
        if (in[0] != from || in[1] != from + 5) {
            FAIL(t, "round %d: point-to-point among the collectives got %d %d, expected %d %d", round, in[0], in[1],
                 from, from + 5);
        }
    }
    remote_bits(t, MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm even;
    CALL(t, MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &even));
    remote_bits(t, even, rank % 2 ? "the odd ranks" : "the even ranks");
    CALL(t, MPI_Comm_free(&even));
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_nonblocking", &argc, &argv);
    ctx_t cx;
    cx.vec = coll_make_type(&t, &L_VECTOR);
    CALL(&t, MPI_Op_create(coll_uaffine, 0, &cx.uaffine));
    const scen_t sc[] = {{"each", s_each}, {"same", s_same}, {"comms", s_comms},
                         {"many", s_many}, {"mixed", s_mixed}, {"free", s_free}, {"inter", s_inter}, {"eager", s_eager},
                         {"remote", s_remote}};
    const char *want = argc > 1 ? argv[1] : "all";
    int ran = 0;
    for (int i = 0; i < (int)(sizeof(sc) / sizeof(sc[0])); ++i) {
        char list[256], item[64];
        snprintf(list, sizeof list, ",%s,", want);
        snprintf(item, sizeof item, ",%s,", sc[i].name);
        if (strcmp(want, "all") != 0 && strstr(list, item) == NULL) continue;
        sc[i].fn(&t, &cx);
        ++ran;
    }
    CALL(&t, MPI_Op_free(&cx.uaffine));
    CALL(&t, MPI_Type_free(&cx.vec));
    if (ran == 0) {
        if (t.rank == 0) fprintf(stderr, "coll_nonblocking: no such scenario: %s\n", want);
        MPI_Finalize();
        return 2;
    }
    return coll_finish(&t);
}
