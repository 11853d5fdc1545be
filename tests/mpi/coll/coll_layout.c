/* Small blocking collectives on layouts where several members share a VP (run with MPC_VPS=1:
 * every member on one VP, the one-VP path of docs/collectives.md; or with more VPs: flat or
 * slots), checked against a serial reference computed here, bit for bit:
 *
 *   coll_layout mixed [ITER]     Allreduce / Reduce / Bcast / Barrier in turn, ITER rounds, on
 *                                MPI_COMM_WORLD, a duplicate and the odd/even split: every op of
 *                                a few types (double sums whose rounding depends on the order,
 *                                MAX/MIN/SUM/PROD, a non-commutative user op), every root, and
 *                                members that mix MPI_IN_PLACE (the general path) with separate
 *                                buffers (the Allreduce fast path) in the same call
 *   coll_layout threads [ITER]   the same on MPI_COMM_WORLD, each rank's calls made by a plain
 *                                thread of it (MPI_THREAD_MULTIPLE): plain threads poll
 *   coll_layout moves [ITER]     the mixed rounds, every rank moving itself to another VP
 *                                between rounds (MPC_Move_to_vp; MPC only): all members on VP
 *                                0, one VP each, pairs per VP, in turn. The path of a call is
 *                                fixed when the communicator's state is made (flat when it has
 *                                at most as many members as the process has VPs): these rounds
 *                                run the flat path with members that share a VP, whose waits
 *                                must then let the other members of their VP run
 *
 * The reference is the order the standard's non-commutative ops need and the library
 * documents for all: x_0 op (x_1 op (... op x_{n-1})). */
#include <pthread.h>

#include "coll_common.h"
#ifdef MPC_MPI
#include <mpc.h>
#endif

#define NELEM 5 /* 40 bytes of double: fits the flat lines */

/* Input of rank r in round it, element i: doubles of very different magnitudes, so that a sum
 * in another order rounds differently. */
static double dval(int r, int it, int i) {
    const double mag[4] = {1e16, 1.0, -1e16, 3.25e-3};
    return mag[(r + i + it) % 4] * (1.0 + 0.125 * ((r * 7 + it * 3 + i) % 9));
}
static long lval(int r, int it, int i) { return ((long)(r + 1) * 1000003L + it * 31L + i) % 2000003L - 1000001L; }

/* x -> a x + b mod P over pairs of longs: associative, not commutative (coll_common.h). */
static void uaffine_long(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    long *a = in, *b = inout;
    for (int j = 0; j + 1 < *len; j += 2) {
        long long a2 = b[j], b2 = b[j + 1];
        coll_affine_apply(a[j], a[j + 1], &a2, &b2);
        b[j] = (long)a2;
        b[j + 1] = (long)b2;
    }
}

/* The serial reference, x_0 op (x_1 op ... op x_{n-1}), of members ranks[0..n) (world ranks
 * of the communicator's members in its rank order). */
static void ref_double(MPI_Op op, const int *ranks, int n, int it, double *out) {
    for (int i = 0; i < NELEM; ++i) {
        double acc = dval(ranks[n - 1], it, i);
        for (int k = n - 2; k >= 0; --k) {
            double x = dval(ranks[k], it, i);
            acc = op == MPI_SUM    ? x + acc
                  : op == MPI_PROD ? x * acc
                  : op == MPI_MAX  ? (x > acc ? x : acc)
                                   : (x < acc ? x : acc);
        }
        out[i] = acc;
    }
}
static void ref_affine(const int *ranks, int n, int it, long *out) {
    for (int i = 0; i < NELEM - 1; ++i) out[i] = lval(ranks[n - 1], it, i) % COLL_P + COLL_P;
    for (int k = n - 2; k >= 0; --k) {
        long x[NELEM - 1];
        for (int i = 0; i < NELEM - 1; ++i) x[i] = lval(ranks[k], it, i) % COLL_P + COLL_P;
        int len = NELEM - 1;
        uaffine_long(x, out, &len, NULL);
    }
}

typedef struct {
    tctx *t;
    int iters;
    int split; /* also the duplicate and the odd/even split */
    int moves; /* each rank moves to another VP before each round */
} job_t;

#ifdef MPC_MPI
/* Round it's VP of world rank r: every rank on VP 0; one VP each (as far as there are VPs); two
 * consecutive ranks per VP. */
static int round_vp(int r, int it, int nvps) {
    switch (it % 3) {
        case 0: return 0;
        case 1: return r % nvps;
        default: return (r / 2) % nvps;
    }
}
static void move_for_round(tctx *t, int it) {
    const int nvps = MPC_Vp_count();
    const int vp = round_vp(t->rank, it, nvps);
    coll_where(t, "round %d: MPC_Move_to_vp(%d)", it, vp);
    CHECK(t, MPC_Move_to_vp(vp) == MPC_SUCCESS);
    CHECK(t, MPC_Vp_self() == vp);
}
#endif

static void check_doubles(tctx *t, const char *what, const double *got, const double *want, int n) {
    for (int i = 0; i < n; ++i) {
        if (memcmp(&got[i], &want[i], sizeof(double)) != 0) {
            FAIL(t, "%s: element %d: expected %.17g, got %.17g", what, i, want[i], got[i]);
            return;
        }
    }
}

static void run_comm(tctx *t, MPI_Comm c, int it, MPI_Op uop) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    int ranks[64];
    MPI_Group wg, cg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(c, &cg);
    int idx[64];
    for (int k = 0; k < n; ++k) idx[k] = k;
    MPI_Group_translate_ranks(cg, n, idx, wg, ranks);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    const int me = ranks[rank];

    const MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    const MPI_Op op = ops[it % 4];
    double in[NELEM], out[NELEM], want[NELEM];
    for (int i = 0; i < NELEM; ++i) in[i] = dval(me, it, i);
    ref_double(op, ranks, n, it, want);

    /* Allreduce: in place on members whose rank and round have the same parity (the general
     * path), separate buffers on the others (the fast path), in the same call. */
    coll_where(t, "round %d: Allreduce double op %d", it, it % 4);
    if ((rank + it) % 2 == 0) {
        memcpy(out, in, sizeof(in));
        CALL(t, MPI_Allreduce(MPI_IN_PLACE, out, NELEM, MPI_DOUBLE, op, c));
    } else {
        CALL(t, MPI_Allreduce(in, out, NELEM, MPI_DOUBLE, op, c));
    }
    check_doubles(t, "Allreduce", out, want, NELEM);
    /* one element, the benchmark's call */
    CALL(t, MPI_Allreduce(in, out, 1, MPI_DOUBLE, op, c));
    check_doubles(t, "Allreduce 1", out, want, 1);

    /* Reduce to a root that moves with the round; the user op (non-commutative) */
    const int root = it % n;
    coll_where(t, "round %d: Reduce root %d", it, root);
    for (int i = 0; i < NELEM; ++i) out[i] = -7.0;
    CALL(t, MPI_Reduce(in, out, NELEM, MPI_DOUBLE, op, root, c));
    if (rank == root) check_doubles(t, "Reduce", out, want, NELEM);
    long lin[NELEM - 1], lout[NELEM - 1], lwant[NELEM - 1];
    for (int i = 0; i < NELEM - 1; ++i) lin[i] = lval(me, it, i) % COLL_P + COLL_P;
    ref_affine(ranks, n, it, lwant);
    coll_where(t, "round %d: Allreduce user op", it);
    CALL(t, MPI_Allreduce(lin, lout, NELEM - 1, MPI_LONG, uop, c));
    for (int i = 0; i < NELEM - 1; ++i) {
        if (lout[i] != lwant[i]) {
            FAIL(t, "user op: element %d: expected %ld, got %ld", i, lwant[i], lout[i]);
            break;
        }
    }
    /* int MAX/SUM through the fast path's inline fold */
    int iin = (me * 37 + it) % 11, iout = -1, isum = 0, imax = -1;
    for (int k = 0; k < n; ++k) {
        int v = (ranks[k] * 37 + it) % 11;
        isum += v;
        imax = v > imax ? v : imax;
    }
    CALL(t, MPI_Allreduce(&iin, &iout, 1, MPI_INT, MPI_SUM, c));
    CHECK(t, iout == isum);
    CALL(t, MPI_Allreduce(&iin, &iout, 1, MPI_INT, MPI_MAX, c));
    CHECK(t, iout == imax);

    /* Bcast from the root, as doubles on even members and as one contiguous type of NELEM
     * doubles on odd ones (the same signature) */
    coll_where(t, "round %d: Bcast root %d", it, root);
    double b[NELEM];
    for (int i = 0; i < NELEM; ++i) b[i] = rank == root ? dval(me, it + 1, i) : -1.0;
    if (rank % 2 == 0) {
        CALL(t, MPI_Bcast(b, NELEM, MPI_DOUBLE, root, c));
    } else {
        MPI_Datatype ct;
        MPI_Type_contiguous(NELEM, MPI_DOUBLE, &ct);
        MPI_Type_commit(&ct);
        CALL(t, MPI_Bcast(b, 1, ct, root, c));
        MPI_Type_free(&ct);
    }
    for (int i = 0; i < NELEM; ++i) want[i] = dval(ranks[root], it + 1, i);
    check_doubles(t, "Bcast", b, want, NELEM);

    coll_where(t, "round %d: Barrier", it);
    CALL(t, MPI_Barrier(c));
}

static void *run_job(void *p) {
    job_t *j = p;
    tctx *t = j->t;
    MPI_Op uop;
    MPI_Op_create(uaffine_long, 0, &uop);
    MPI_Comm dup = MPI_COMM_NULL, half = MPI_COMM_NULL;
    if (j->split) {
        CALL(t, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        CALL(t, MPI_Comm_split(MPI_COMM_WORLD, t->rank % 2, t->size - t->rank, &half));
    }
    for (int it = 0; it < j->iters; ++it) {
#ifdef MPC_MPI
        if (j->moves) move_for_round(t, it);
#endif
        run_comm(t, MPI_COMM_WORLD, it, uop);
        if (j->split) {
            run_comm(t, dup, it, uop);
            int hs;
            MPI_Comm_size(half, &hs);
            if (hs > 1) run_comm(t, half, it, uop);
        }
    }
    if (j->split) {
        MPI_Comm_free(&dup);
        MPI_Comm_free(&half);
    }
    MPI_Op_free(&uop);
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "mixed";
    const int threads = strcmp(mode, "threads") == 0;
    const int moves = strcmp(mode, "moves") == 0;
#ifndef MPC_MPI
    if (moves) {
        fprintf(stderr, "coll_layout moves: needs MPC (MPC_Move_to_vp)\n");
        return 2;
    }
#endif
    if (!threads && !moves && strcmp(mode, "mixed") != 0) {
        fprintf(stderr, "usage: coll_layout [mixed|threads|moves] [ITER]\n");
        return 2;
    }
    tctx t;
    if (threads) {
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        memset(&t, 0, sizeof(t));
        t.prog = "coll_layout threads";
        MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &t.size);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(&t, provided == MPI_THREAD_MULTIPLE);
    } else {
        coll_init(&t, moves ? "coll_layout moves" : "coll_layout mixed", &argc, &argv);
    }
    job_t j = {&t, argc > 2 ? atoi(argv[2]) : 40, !threads, moves};
    if (t.size > 64) {
        if (t.rank == 0) fprintf(stderr, "coll_layout: at most 64 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (threads) {
        /* half the rounds from a plain thread of each rank, the rest from the rank itself */
        j.iters /= 2;
        pthread_t th;
        pthread_create(&th, NULL, run_job, &j);
        pthread_join(th, NULL);
    }
    run_job(&j);
    return coll_finish(&t);
}
