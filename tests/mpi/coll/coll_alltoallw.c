/* MPI_Alltoallw (issue 6): every pair of ranks uses its own datatypes, counts and byte
 * displacements. The send type to a peer and the receive type from it differ (MPI_INT, MPI_2INT
 * and the all-int derived types of coll_common.h: a vector with holes, an indexed type out of
 * memory order, a resized type with a negative lb), only the type signatures match (12 u ints
 * for u units, u depending on the pair and zero for some). Blocks sit in reverse peer order with
 * gaps; receive buffers are compared byte for byte (gaps and holes must not change), send
 * buffers must not change. Also MPI_IN_PLACE (symmetric units), a large variant (about 100 KiB
 * per rank), a reversed split communicator, and intercommunicators (each member of one group
 * exchanging with every member of the other).
 *
 *   coll_alltoallw [intra|inter|all]     (default: all; inter needs 2 ranks or more)
 *
 * Exit status 0 on success. */
#include "coll_common.h"

static const layout_t *const wl[5] = {&L_INT, &L_2INT, &L_VECTOR, &L_INDEXED, &L_RESIZED};
#define UNIT 12 /* ints per unit: a multiple of every layout's slot count */

typedef struct {
    tctx *t;
    MPI_Datatype d[5];
} types_t;

/* The layouts used from s to d: on the send side and on the receive side. */
static int send_li(int s, int d) { return (s * 3 + d) % 5; }
static int recv_li(int s, int d) { return (s + 2 * d + 1) % 5; }

/* Units from world rank s to world rank d (symmetric when sym). */
static int units(int s, int d, int base, int sym) {
    if (base == 0) return 0;
    if (sym) return (s + d) % 4 == 2 ? 0 : base + (s * d) % 3;
    return (2 * s + d) % 5 == 3 ? 0 : base + (s + 2 * d) % 3;
}

/* Byte displacements: blocks in reverse order, each after a 24-byte gap (room for lb -4). */
static size_t layout_blocks(int n, const int *counts, const int *li, int *displs) {
    size_t at = 0;
    for (int i = n - 1; i >= 0; --i) {
        at += 24;
        displs[i] = (int)at;
        at += (size_t)counts[i] * (size_t)wl[li[i]]->extent;
        at = (at + 7) & ~(size_t)7;
    }
    return at + 24;
}

static char *bytes(size_t n, int fill) {
    char *p = malloc(n > 0 ? n : 1);
    if (p == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    memset(p, fill, n > 0 ? n : 1);
    return p;
}

/* Writes the data of `key` (n basic ints) as `count` elements of layout l at mem + displ. */
static void put_block(char *mem, int displ, const layout_t *l, int count, uint32_t key) {
    buf_t v = {l, count, 0, NULL, mem + displ};
    buf_fill(&v, 0, (long)count * l->nslots, GEN_PLAIN, key);
}

static void compare(tctx *t, const char *what, const char *got, const char *want, size_t n, int np,
                    const int *displs, const int *world) {
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            int blk = -1;
            for (int k = 0; k < np; ++k)
                if ((size_t)displs[k] <= i + 8 && (blk < 0 || displs[k] > displs[blk])) blk = k;
            FAIL(t, "%s: byte %zu differs (expected 0x%02x, got 0x%02x), in or after the block of peer %d (world rank %d)",
                 what, i, (unsigned char)want[i], (unsigned char)got[i], blk, blk >= 0 ? world[blk] : -1);
            return;
        }
    }
}

static uint32_t pair_key(int s, int d) { return coll_key((uint32_t)s * 4099u + (uint32_t)d, 71); }

/* One MPI_Alltoallw on comm: peers are the members of comm (intracommunicator) or of the remote
 * group (intercommunicator); world[] gives their world ranks. */
static void exchange(tctx *t, types_t *ty, MPI_Comm comm, const char *cname, int np, const int *world, int base,
                     int inplace) {
    int me = t->rank;
    coll_where(t, "%s: MPI_Alltoallw%s units %d", cname, inplace ? " (in place)" : "", base);
    int *sc = calloc((size_t)np, sizeof(int)), *sd = calloc((size_t)np, sizeof(int));
    int *rc = calloc((size_t)np, sizeof(int)), *rd = calloc((size_t)np, sizeof(int));
    int *sli = calloc((size_t)np, sizeof(int)), *rli = calloc((size_t)np, sizeof(int));
    MPI_Datatype *st = calloc((size_t)np, sizeof(MPI_Datatype)), *rt = calloc((size_t)np, sizeof(MPI_Datatype));
    for (int i = 0; i < np; ++i) {
        int p = world[i];
        sli[i] = send_li(me, p);
        rli[i] = recv_li(p, me);
        if (inplace) sli[i] = rli[i]; /* in place: sent from the receive blocks */
        sc[i] = units(me, p, base, inplace) * UNIT / wl[sli[i]]->nslots;
        rc[i] = units(p, me, base, inplace) * UNIT / wl[rli[i]]->nslots;
        st[i] = ty->d[sli[i]];
        rt[i] = ty->d[rli[i]];
    }
    size_t sbytes = layout_blocks(np, sc, sli, sd), rbytes = layout_blocks(np, rc, rli, rd);
    char *s = bytes(sbytes, COLL_SEND_HOLE), *s0, *r = bytes(rbytes, COLL_SENTINEL), *x = bytes(rbytes, COLL_SENTINEL);
    for (int i = 0; i < np; ++i) {
        put_block(s, sd[i], wl[sli[i]], sc[i], pair_key(me, world[i]));
        put_block(x, rd[i], wl[rli[i]], rc[i], pair_key(world[i], me));
        if (inplace) put_block(r, rd[i], wl[rli[i]], rc[i], pair_key(me, world[i]));
    }
    s0 = bytes(sbytes, 0);
    memcpy(s0, s, sbytes);
    if (inplace) {
        CALL(t, MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, rc, rd, rt, comm));
    } else {
        CALL(t, MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, comm));
        compare(t, "sendbuf (must not change)", s, s0, sbytes, np, sd, world);
    }
    compare(t, "recvbuf", r, x, rbytes, np, rd, world);
    free(s);
    free(s0);
    free(r);
    free(x);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sli);
    free(rli);
    free(st);
    free(rt);
}

static int *world_ranks(tctx *t, MPI_Comm comm, int remote, int *n) {
    MPI_Group wg, g;
    CALL(t, MPI_Comm_group(MPI_COMM_WORLD, &wg));
    if (remote) {
        CALL(t, MPI_Comm_remote_group(comm, &g));
        CALL(t, MPI_Comm_remote_size(comm, n));
    } else {
        CALL(t, MPI_Comm_group(comm, &g));
        CALL(t, MPI_Comm_size(comm, n));
    }
    int *idx = calloc((size_t)*n, sizeof(int)), *w = calloc((size_t)*n, sizeof(int));
    for (int i = 0; i < *n; ++i) idx[i] = i;
    CALL(t, MPI_Group_translate_ranks(g, *n, idx, wg, w));
    free(idx);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return w;
}

static void intra(tctx *t, types_t *ty, MPI_Comm comm, const char *cname, int large) {
    int n;
    int *w = world_ranks(t, comm, 0, &n);
    int bases[3] = {0, 1, 3};
    for (int k = 0; k < 3; ++k)
        for (int inpl = 0; inpl <= 1; ++inpl) exchange(t, ty, comm, cname, n, w, bases[k], inpl);
    if (large) {
        int b = 2048 / n > 0 ? 2048 / n : 1; /* about 100 KiB sent per rank in all */
        exchange(t, ty, comm, cname, n, w, b, 0);
        exchange(t, ty, comm, cname, n, w, b, 1);
    }
    free(w);
}

static void inter(tctx *t, types_t *ty, int in_a, const char *cname) {
    MPI_Comm local, ic;
    CALL(t, MPI_Comm_split(MPI_COMM_WORLD, in_a, t->rank, &local));
    /* the other group's leader: its lowest world rank */
    int *flags = calloc((size_t)t->size, sizeof(int));
    CALL(t, MPI_Allgather(&in_a, 1, MPI_INT, flags, 1, MPI_INT, MPI_COMM_WORLD));
    int lead = -1;
    for (int r = t->size - 1; r >= 0; --r)
        if (flags[r] != in_a) lead = r;
    free(flags);
    CALL(t, MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, lead, 98, &ic));
    CALL(t, MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int n;
    int *w = world_ranks(t, ic, 1, &n);
    int bases[3] = {0, 1, 3};
    for (int k = 0; k < 3; ++k) exchange(t, ty, ic, cname, n, w, bases[k], 0);
    free(w);
    CALL(t, MPI_Comm_free(&ic));
    CALL(t, MPI_Comm_free(&local));
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_alltoallw", &argc, &argv);
    const char *what = argc > 1 ? argv[1] : "all";
    int do_intra = strcmp(what, "intra") == 0 || strcmp(what, "all") == 0;
    int do_inter = strcmp(what, "inter") == 0 || strcmp(what, "all") == 0;
    if (!do_intra && !do_inter) {
        if (t.rank == 0) fprintf(stderr, "usage: coll_alltoallw [intra|inter|all]\n");
        MPI_Finalize();
        return 2;
    }
    types_t ty;
    ty.t = &t;
    for (int i = 0; i < 5; ++i) ty.d[i] = coll_make_type(&t, wl[i]);
    if (do_intra) {
        intra(&t, &ty, MPI_COMM_WORLD, "MPI_COMM_WORLD", 1);
        MPI_Comm rev;
        CALL(&t, MPI_Comm_split(MPI_COMM_WORLD, t.size >= 3 ? t.rank % 2 : 0, t.size - t.rank, &rev));
        intra(&t, &ty, rev, "reversed split", 0);
        CALL(&t, MPI_Comm_free(&rev));
    }
    if (do_inter && t.size >= 2) {
        inter(&t, &ty, t.rank == 0, "intercommunicator {0} | rest");
        if (t.size >= 3) inter(&t, &ty, t.rank % 3 == 1, "intercommunicator rank%3==1 | rest");
    }
    for (int i = 0; i < 5; ++i) coll_free_type(&t, wl[i], &ty.d[i]);
    return coll_finish(&t);
}
