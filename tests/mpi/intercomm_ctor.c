/* Communicator constructors and queries on intercommunicators (MPI 3.1 sections 6.4 and 6.6).
 * The even and the odd ranks of MPI_COMM_WORLD form the two groups of a base intercommunicator
 * (with 2 ranks, each group has one rank). Checked on every derived intercommunicator: sizes,
 * ranks, both groups, and point-to-point in both directions. Covered: MPI_Comm_dup (attribute
 * copy and delete callbacks, names), MPI_Comm_dup_with_info, MPI_Comm_idup, MPI_Comm_split
 * (several colors, keys, MPI_UNDEFINED, colors given on one side only), MPI_Comm_create (subsets,
 * reordered groups, one side empty), MPI_Comm_compare, MPI_Intercomm_merge of derived
 * intercommunicators, a user receive posted on the parent during the constructions, concurrent
 * constructions by two threads of each rank on different communicators, and error classes
 * under MPI_ERRORS_RETURN. Exit status 0 on success. No mutable globals (ranks are threads). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "rank %d: line %d: check failed: %s\n", e->rank, __LINE__, #cond); \
            ++fails;                                                                           \
        }                                                                                      \
    } while (0)

/* `call` must fail with error class `cls` (MPI_ERRORS_RETURN in effect). */
#define CHECK_CLASS(call, cls)                                                                                     \
    do {                                                                                                           \
        int e_ = (call), c_ = -1;                                                                                  \
        MPI_Error_class(e_, &c_);                                                                                  \
        if (c_ != (cls)) {                                                                                         \
            fprintf(stderr, "rank %d: line %d: %s returned class %d, expected %s\n", e->rank, __LINE__, #call, c_, \
                    #cls);                                                                                         \
            ++fails;                                                                                               \
        }                                                                                                          \
    } while (0)

#define ROUNDS 8 /* constructions per thread in the concurrency test */

/* What a rank knows about the base intercommunicator. Side 0: the even world ranks (local rank r
 * is world rank 2r), side 1: the odd ones (2r + 1). */
typedef struct {
    int rank, size;  /* in MPI_COMM_WORLD */
    int side, lrank; /* my side and my rank in it */
    int n[2];        /* sizes of the two sides */
    MPI_Group world; /* group of MPI_COMM_WORLD */
} env_t;

static int index_of(int n, const int* list, int v) {
    for (int i = 0; i < n; ++i)
        if (list[i] == v) return i;
    return -1;
}

/* The world ranks of group g must be list[0..n). */
static int check_group(const env_t* e, MPI_Group g, int n, const int* list) {
    int fails = 0, gn = -1;
    MPI_Group_size(g, &gn);
    CHECK(gn == n);
    if (gn != n) return fails;
    int *ranks = malloc(sizeof(int) * (size_t)n), *wr = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) ranks[i] = i;
    MPI_Group_translate_ranks(g, n, ranks, e->world, wr);
    for (int i = 0; i < n; ++i) CHECK(wr[i] == list[i]);
    free(ranks);
    free(wr);
    return fails;
}

/* ic must be an intercommunicator whose local group is lw[0..nl) and remote group rw[0..nr)
 * (world ranks in rank order). Point-to-point in both directions: local rank i sends to remote
 * rank i % nr, and receives from every remote rank j with j % nl == i, naming it. */
static int check_inter(const env_t* e, MPI_Comm ic, int nl, const int* lw, int nr, const int* rw) {
    int fails = 0, flag = 0, size = -1, rsize = -1, me = -1;
    CHECK(ic != MPI_COMM_NULL);
    if (ic == MPI_COMM_NULL) return fails;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &size);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &me);
    CHECK(flag == 1 && size == nl && rsize == nr && me == index_of(nl, lw, e->rank));
    if (size != nl || rsize != nr || me < 0) return fails;
    MPI_Group g;
    MPI_Comm_group(ic, &g);
    fails += check_group(e, g, nl, lw);
    MPI_Group_free(&g);
    MPI_Comm_remote_group(ic, &g);
    fails += check_group(e, g, nr, rw);
    MPI_Group_free(&g);

    int out = e->rank, in = -1;
    MPI_Request rq;
    MPI_Isend(&out, 1, MPI_INT, me % nr, 11, ic, &rq);
    for (int j = me; j < nr; j += nl) {
        MPI_Status st;
        MPI_Recv(&in, 1, MPI_INT, j, 11, ic, &st);
        CHECK(in == rw[j] && st.MPI_SOURCE == j);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    return fails;
}

/* ---- MPI_Comm_split: colors and keys of each side ------------------------------------------ */

/* Side 0: colors 0, 1, 2 (2 has no match on side 1), rank 3 undefined; side 1: colors 0, 1, 5
 * (5 has no match on side 0), ranks 2 mod 4 undefined. */
static int split_color(int side, int r) {
    if (side == 0) return r == 3 ? MPI_UNDEFINED : r % 3;
    return r % 4 == 2 ? MPI_UNDEFINED : r % 4 == 3 ? 5 : r % 4;
}
/* Side 0 reverses its order; side 1 gives equal keys (ties: rank order). */
static int split_key(const env_t* e, int side, int r) { return side == 0 ? e->n[0] - r : 0; }

/* The world ranks of `side` with color c, in their new rank order. */
static int split_members(const env_t* e, int side, int c, int* out) {
    int k = 0, n = e->n[side];
    for (int i = 0; i < n; ++i) {
        int r = side == 0 ? n - 1 - i : i;
        if (split_color(side, r) == c) out[k++] = 2 * r + side;
    }
    return k;
}

/* The world ranks of the whole of `side`, in order. */
static int side_members(const env_t* e, int side, int* out) {
    for (int r = 0; r < e->n[side]; ++r) out[r] = 2 * r + side;
    return e->n[side];
}

/* MPI_Intercomm_merge of ic (an intercommunicator between lw and rw) with side 0 "low" and side
 * 1 "high": an intra-communicator holding side 0's group first, then side 1's. */
static int check_merge(const env_t* e, MPI_Comm ic, int nl, const int* lw, int nr, const int* rw) {
    int fails = 0, size = -1, rank = -1, flag = 1, rs = 0;
    MPI_Comm m;
    MPI_Intercomm_merge(ic, e->side, &m);
    MPI_Comm_size(m, &size);
    MPI_Comm_rank(m, &rank);
    MPI_Comm_test_inter(m, &flag);
    int me = index_of(nl, lw, e->rank);
    CHECK(size == nl + nr && flag == 0 && rank == (e->side == 0 ? me : nr + me));
    int sum = 0, expect = 0;
    for (int i = 0; i < nl; ++i) expect += lw[i];
    for (int i = 0; i < nr; ++i) expect += rw[i];
    MPI_Allreduce(&e->rank, &sum, 1, MPI_INT, MPI_SUM, m);
    CHECK(sum == expect);
    MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Comm_remote_size(m, &rs), MPI_ERR_COMM);
    MPI_Comm_free(&m);
    return fails;
}

static int test_split(const env_t* e, MPI_Comm inter) {
    int fails = 0, n = e->n[0] + e->n[1];
    int *l = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
    int c = split_color(e->side, e->lrank);
    MPI_Comm s;
    MPI_Comm_split(inter, c, split_key(e, e->side, e->lrank), &s);
    if (c == MPI_UNDEFINED) {
        CHECK(s == MPI_COMM_NULL);
    } else {
        int nl = split_members(e, e->side, c, l), nr = split_members(e, 1 - e->side, c, r);
        if (nr == 0) {
            CHECK(s == MPI_COMM_NULL); /* the color is given on my side only */
        } else {
            fails += check_inter(e, s, nl, l, nr, r);
            int res = -1;
            MPI_Comm_compare(inter, s, &res);
            CHECK(res == (e->size == 2 ? MPI_CONGRUENT : MPI_UNEQUAL));
            fails += check_merge(e, s, nl, l, nr, r);
        }
    }
    if (s != MPI_COMM_NULL) MPI_Comm_free(&s);
    CHECK(s == MPI_COMM_NULL);
    free(l);
    free(r);
    return fails;
}

/* ---- MPI_Comm_create ----------------------------------------------------------------------- */

/* MPI_Comm_create(inter) with side 0 giving local ranks `sel0` (n0 of them, in that order) and
 * side 1 giving `sel1`; checks the result. */
static int create_case(const env_t* e, MPI_Comm inter, int n0, const int* sel0, int n1, const int* sel1) {
    int fails = 0;
    MPI_Group lg, g;
    MPI_Comm_group(inter, &lg);
    const int* mine = e->side == 0 ? sel0 : sel1;
    int nmine = e->side == 0 ? n0 : n1;
    MPI_Group_incl(lg, nmine, mine, &g);
    MPI_Comm c;
    MPI_Comm_create(inter, g, &c);
    int in = index_of(nmine, mine, e->lrank) >= 0;
    if (!in || n0 == 0 || n1 == 0) {
        CHECK(c == MPI_COMM_NULL);
    } else {
        int *l = malloc(sizeof(int) * (size_t)(n0 + n1)), *r = malloc(sizeof(int) * (size_t)(n0 + n1));
        const int* theirs = e->side == 0 ? sel1 : sel0;
        int ntheirs = e->side == 0 ? n1 : n0;
        for (int i = 0; i < nmine; ++i) l[i] = 2 * mine[i] + e->side;
        for (int i = 0; i < ntheirs; ++i) r[i] = 2 * theirs[i] + 1 - e->side;
        fails += check_inter(e, c, nmine, l, ntheirs, r);
        free(l);
        free(r);
    }
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Group_free(&lg);
    return fails;
}

static int test_create(const env_t* e, MPI_Comm inter) {
    int fails = 0, n0 = e->n[0], n1 = e->n[1];
    int *a = malloc(sizeof(int) * (size_t)n0), *b = malloc(sizeof(int) * (size_t)n1);
    int na = 0;
    for (int r = n0 - 1; r >= 0; r -= 1)
        if (r % 2 == 0) a[na++] = r; /* side 0: its even local ranks, in reverse order */
    for (int r = 0; r < n1; ++r) b[r] = r;
    fails += create_case(e, inter, na, a, n1, b);
    int first = 0; /* MPI 3.1 example: the first process of one side with the whole other side */
    fails += create_case(e, inter, 1, &first, n1, b);
    fails += create_case(e, inter, na, a, 0, b); /* side 1 empty: MPI_COMM_NULL everywhere */
    /* both sides whole, side 0 reversed: compares SIMILAR to the parent (CONGRUENT with 1 rank) */
    for (int r = 0; r < n0; ++r) a[r] = n0 - 1 - r;
    MPI_Group lg, g;
    MPI_Comm_group(inter, &lg);
    MPI_Group_incl(lg, e->side == 0 ? n0 : n1, e->side == 0 ? a : b, &g);
    MPI_Comm c;
    int res = -1;
    MPI_Comm_create(inter, g, &c);
    MPI_Comm_compare(inter, c, &res);
    CHECK(res == (n0 > 1 ? MPI_SIMILAR : MPI_CONGRUENT));
    MPI_Comm_compare(c, inter, &res);
    CHECK(res == (n0 > 1 ? MPI_SIMILAR : MPI_CONGRUENT));
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Group_free(&lg);
    free(a);
    free(b);
    return fails;
}

/* ---- MPI_Comm_dup, dup_with_info, idup, attributes ----------------------------------------- */

typedef struct {
    int copies, deletes;
} counters_t;

static int count_copy(MPI_Comm c, int kv, void* extra, void* in, void* out, int* flag) {
    (void)c;
    (void)kv;
    ((counters_t*)extra)->copies++;
    *(void**)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int kv, void* value, void* extra) {
    (void)c;
    (void)kv;
    (void)value;
    ((counters_t*)extra)->deletes++;
    return MPI_SUCCESS;
}

static int test_dup(const env_t* e, MPI_Comm inter, int nl, const int* lw, int nr, const int* rw) {
    int fails = 0, k1, k2, x1 = 1, x2 = 2, found = 0, len = -1, res = -1;
    counters_t cnt = {0, 0};
    void* v = NULL;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm_create_keyval(count_copy, count_delete, &k1, &cnt);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    MPI_Comm_set_attr(inter, k1, &x1);
    MPI_Comm_set_attr(inter, k2, &x2);
    MPI_Comm_set_name(inter, "base");

    MPI_Comm d;
    MPI_Comm_dup(inter, &d);
    fails += check_inter(e, d, nl, lw, nr, rw);
    CHECK(cnt.copies == 1);
    MPI_Comm_get_attr(d, k1, &v, &found);
    CHECK(found && v == &x1);
    MPI_Comm_get_attr(d, k2, &v, &found);
    CHECK(!found);
    MPI_Comm_set_name(d, "dup of base");
    MPI_Comm_get_name(d, name, &len);
    CHECK(strcmp(name, "dup of base") == 0 && len == (int)strlen("dup of base"));
    MPI_Comm_get_name(inter, name, &len);
    CHECK(strcmp(name, "base") == 0);
    MPI_Comm_compare(inter, d, &res);
    CHECK(res == MPI_CONGRUENT);
    MPI_Comm_compare(d, d, &res);
    CHECK(res == MPI_IDENT);
    /* the duplicate inherits MPI_ERRORS_RETURN: ranks name the remote group */
    CHECK_CLASS(MPI_Send(&x1, 1, MPI_INT, nr, 0, d), MPI_ERR_RANK);
    fails += check_merge(e, d, nl, lw, nr, rw);

    /* a duplicate of the duplicate, then free both: the delete callback runs once per copy */
    MPI_Comm d2;
    MPI_Comm_dup(d, &d2);
    fails += check_inter(e, d2, nl, lw, nr, rw);
    CHECK(cnt.copies == 2);
    MPI_Comm_free(&d);
    CHECK(d == MPI_COMM_NULL && cnt.deletes == 1);
    MPI_Comm_free(&d2);
    CHECK(cnt.deletes == 2);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpc_hint", "1");
    MPI_Comm_dup_with_info(inter, info, &d);
    fails += check_inter(e, d, nl, lw, nr, rw);
    CHECK(cnt.copies == 3);
    MPI_Comm_free(&d);
    CHECK(cnt.deletes == 3);
    MPI_Info_free(&info);
    CHECK_CLASS(MPI_Comm_dup_with_info(inter, (MPI_Info)MPI_COMM_WORLD, &d), MPI_ERR_INFO); /* not an info */

    MPI_Request rq;
    MPI_Comm_idup(inter, &d, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    fails += check_inter(e, d, nl, lw, nr, rw);
    MPI_Comm_get_attr(d, k1, &v, &found);
    CHECK(found && v == &x1 && cnt.copies == 4);
    MPI_Comm_free(&d);

    MPI_Comm_delete_attr(inter, k1);
    MPI_Comm_delete_attr(inter, k2);
    CHECK(cnt.deletes == 5);
    MPI_Comm_free_keyval(&k1);
    MPI_Comm_free_keyval(&k2);
    return fails;
}

/* ---- concurrency: two threads of each rank construct on different communicators ------------ */

typedef struct {
    const env_t* e;
    MPI_Comm comm;
    int nl, nr;
    const int *lw, *rw;
    int fails;
} job_t;

static void* dup_loop(void* p) {
    job_t* job = p;
    for (int i = 0; i < ROUNDS; ++i) {
        MPI_Comm d;
        MPI_Comm_dup(job->comm, &d);
        job->fails += check_inter(job->e, d, job->nl, job->lw, job->nr, job->rw);
        MPI_Comm_free(&d);
    }
    return NULL;
}

static int test_threads(const env_t* e, MPI_Comm inter, MPI_Comm half, int nl, const int* lw, int nr, const int* rw) {
    int fails = 0;
    MPI_Comm other;
    MPI_Comm_dup(inter, &other);
    job_t job = {e, other, nl, nr, lw, rw, 0};
    pthread_t th;
    pthread_create(&th, NULL, dup_loop, &job);
    for (int i = 0; i < ROUNDS; ++i) {
        fails += test_split(e, inter);
        MPI_Comm h;
        MPI_Comm_dup(half, &h);
        int hs = -1;
        MPI_Comm_size(h, &hs);
        CHECK(hs == nl);
        MPI_Comm_free(&h);
    }
    pthread_join(th, NULL);
    MPI_Comm_free(&other);
    return fails + job.fails;
}

/* ---- errors ---------------------------------------------------------------------------------- */

static int test_errors(const env_t* e, MPI_Comm inter) {
    int fails = 0, res = 0;
    MPI_Comm x = MPI_COMM_NULL;
    MPI_Group lg, rg;
    MPI_Comm_group(inter, &lg);
    MPI_Comm_remote_group(inter, &rg);
    CHECK_CLASS(MPI_Comm_create_group(inter, lg, 0, &x), MPI_ERR_COMM); /* intra-communicators only */
    CHECK_CLASS(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &x), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_create(inter, rg, &x), MPI_ERR_GROUP); /* not a subgroup of the local group */
    CHECK_CLASS(MPI_Comm_create(inter, MPI_GROUP_NULL, &x), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create(inter, lg, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_split(inter, -3, 0, &x), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_split(inter, 0, 0, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_dup(inter, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_compare(inter, MPI_COMM_NULL, &res), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_compare(inter, inter, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_free(&x), MPI_ERR_COMM); /* MPI_COMM_NULL */
    CHECK(x == MPI_COMM_NULL);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    return fails;
}

int main(int argc, char** argv) {
    int provided = -1, fails = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    env_t env, *e = &env;
    MPI_Comm_rank(MPI_COMM_WORLD, &env.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &env.size);
    MPI_Comm_group(MPI_COMM_WORLD, &env.world);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    env.side = env.rank % 2;
    env.lrank = env.rank / 2;
    env.n[0] = (env.size + 1) / 2;
    env.n[1] = env.size / 2;

    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, env.side, env.rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, env.side == 0 ? 1 : 0, 40, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int nl = env.n[env.side], nr = env.n[1 - env.side];
    int *lw = malloc(sizeof(int) * (size_t)nl), *rw = malloc(sizeof(int) * (size_t)nr);
    side_members(e, env.side, lw);
    side_members(e, 1 - env.side, rw);
    fails += check_inter(e, inter, nl, lw, nr, rw);

    /* A user receive posted on the parent before the constructions must get the user message
     * sent after them, not their internal traffic. */
    int user = -1;
    MPI_Request urq = MPI_REQUEST_NULL;
    if (env.lrank == 0) MPI_Irecv(&user, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &urq);

    int res = -1;
    MPI_Comm_compare(inter, inter, &res);
    CHECK(res == MPI_IDENT);
    MPI_Comm_compare(inter, half, &res);
    CHECK(res == MPI_UNEQUAL);
    MPI_Comm_compare(half, inter, &res);
    CHECK(res == MPI_UNEQUAL);

    fails += test_dup(e, inter, nl, lw, nr, rw);
    fails += test_split(e, inter);
    fails += test_create(e, inter);
    fails += test_threads(e, inter, half, nl, lw, nr, rw);
    fails += test_errors(e, inter);

    if (env.lrank == 0) {
        MPI_Status st;
        MPI_Send(&env.rank, 1, MPI_INT, 0, 77, inter);
        MPI_Wait(&urq, &st);
        CHECK(user == 1 - env.side && st.MPI_SOURCE == 0 && st.MPI_TAG == 77);
    }

    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Group_free(&env.world);
    free(lw);
    free(rw);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (fails != 0) {
        printf("intercomm_ctor: rank %d: %d checks failed\n", env.rank, fails);
        return 1;
    }
    if (env.rank == 0) printf("intercomm_ctor: %d ranks OK\n", env.size);
    return 0;
}
