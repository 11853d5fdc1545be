/* Attribute caching on datatypes (copy callbacks on MPI_Type_dup, delete callbacks on
 * MPI_Type_free / MPI_Type_delete_attr / overwrite, extra_state, keyval life cycle, attributes of
 * predefined types kept per rank), the f90 parameterized types (sizes, envelope and contents,
 * caching, use in communication and reductions, MPI_Type_match_size), MPI_Pcontrol,
 * MPI_Comm_get_parent, the status conversions, and the error classes of all of these.
 *
 * Any rank count. No mutable globals (the ranks are threads of one process): every callback
 * counts into a rank-local struct given as extra_state or as the attribute value. */
#include <float.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                                                       \
    do {                                                                                                  \
        if (!(cond)) {                                                                                    \
            fprintf(stderr, "FAIL: rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond); \
            ++fails;                                                                                      \
        }                                                                                                 \
    } while (0)

/* `call` must return error class `cls` (MPI_ERRORS_RETURN is set on MPI_COMM_WORLD). */
#define CHECK_CLASS(call, cls)                                                                                \
    do {                                                                                                      \
        int e_ = (call);                                                                                      \
        int c_ = -1;                                                                                          \
        MPI_Error_class(e_, &c_);                                                                             \
        if (c_ != (cls)) {                                                                                    \
            fprintf(stderr, "FAIL: rank %d: %s:%d: %s returned %d (class %d), expected %s\n", rank, __FILE__, \
                    __LINE__, #call, e_, c_, #cls);                                                           \
            ++fails;                                                                                          \
        }                                                                                                     \
    } while (0)

#define CHECK_OK(call) CHECK_CLASS(call, MPI_SUCCESS)

/* What the callbacks of one keyval family saw (extra_state). */
struct log {
    int copies;
    MPI_Datatype copy_type; /* arguments of the last copy */
    int copy_keyval;
    void* copy_in;
    int copy_flag; /* the flag the copy callback returns */
    int fail_copy;
    int deletes;
    MPI_Datatype delete_type; /* arguments of the last delete */
    int deleted_keyval[32];   /* keyvals and values, in the order deleted */
    void* deleted[32];
    int fail_delete;
};

static void log_init(struct log* l) {
    memset(l, 0, sizeof *l);
    l->copy_flag = 1;
}

/* Copies the value + 1 (flag from the log). */
static int copy_cb(MPI_Datatype oldtype, int keyval, void* extra, void* in, void* out, int* flag) {
    struct log* l = extra;
    l->copies++;
    l->copy_type = oldtype;
    l->copy_keyval = keyval;
    l->copy_in = in;
    if (l->fail_copy) {
        return MPI_ERR_OTHER;
    }
    *(void**)out = (char*)in + 1;
    *flag = l->copy_flag;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Datatype type, int keyval, void* value, void* extra) {
    struct log* l = extra;
    if (l->fail_delete) {
        return MPI_ERR_ACCESS;
    }
    if (l->deletes < 32) {
        l->deleted_keyval[l->deletes] = keyval;
        l->deleted[l->deletes] = value;
    }
    l->deletes++;
    l->delete_type = type;
    return MPI_SUCCESS;
}

/* A delete callback that counts into the attribute value itself (for keyvals shared by ranks). */
static int count_in_value(MPI_Datatype type, int keyval, void* value, void* extra) {
    (void)type;
    (void)keyval;
    (void)extra;
    ++*(int*)value;
    return MPI_SUCCESS;
}

static int test_callbacks(int rank) {
    int fails = 0, flag = -1, size = 0;
    struct log la, lx;
    char base[8];
    void* got = NULL;
    int ka = MPI_KEYVAL_INVALID, kn = MPI_KEYVAL_INVALID, kd = MPI_KEYVAL_INVALID, kx = MPI_KEYVAL_INVALID;
    MPI_Datatype t, d, d2, d3, u;
    log_init(&la);
    log_init(&lx);

    CHECK_OK(MPI_Type_create_keyval(copy_cb, delete_cb, &ka, &la));
    CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_cb, &kn, &la));
    CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kd, NULL));
    CHECK(ka != MPI_KEYVAL_INVALID && kn != ka && kd != kn && kd != ka);
    CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));

    CHECK_OK(MPI_Type_get_attr(t, ka, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_set_attr(t, ka, base));
    CHECK_OK(MPI_Type_set_attr(t, kn, base + 1));
    CHECK_OK(MPI_Type_set_attr(t, kd, base + 2));
    CHECK_OK(MPI_Type_get_attr(t, ka, &got, &flag));
    CHECK(flag == 1 && got == base);
    CHECK_OK(MPI_Type_get_attr(MPI_INT, ka, &got, &flag)); /* not on another type */
    CHECK(flag == 0);

    /* overwriting a value deletes the old one */
    CHECK_OK(MPI_Type_set_attr(t, ka, base + 3));
    CHECK(la.deletes == 1 && la.deleted[0] == base && la.deleted_keyval[0] == ka && la.delete_type == t);
    CHECK_OK(MPI_Type_set_attr(t, ka, base));
    CHECK(la.deletes == 2 && la.deleted[1] == base + 3);
    CHECK_OK(MPI_Type_commit(&t)); /* committing keeps the attributes */
    CHECK_OK(MPI_Type_get_attr(t, ka, &got, &flag));
    CHECK(flag == 1 && got == base);

    /* dup: ka copied as value + 1 (with the callback's arguments), kn not copied (null copy
     * function), kd copied as is */
    CHECK_OK(MPI_Type_dup(t, &d));
    CHECK(la.copies == 1 && la.copy_type == t && la.copy_keyval == ka && la.copy_in == base);
    CHECK_OK(MPI_Type_get_attr(d, ka, &got, &flag));
    CHECK(flag == 1 && got == base + 1);
    CHECK_OK(MPI_Type_get_attr(d, kn, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_get_attr(d, kd, &got, &flag));
    CHECK(flag == 1 && got == base + 2);
    CHECK_OK(MPI_Type_get_attr(t, ka, &got, &flag)); /* the original is unchanged */
    CHECK(flag == 1 && got == base);
    CHECK_OK(MPI_Type_size(d, &size)); /* a committed type's dup is committed */
    CHECK(size == 2 * (int)sizeof(int));

    /* a copy callback that returns flag = 0 does not copy */
    la.copy_flag = 0;
    CHECK_OK(MPI_Type_dup(t, &d2));
    CHECK(la.copies == 2);
    CHECK_OK(MPI_Type_get_attr(d2, ka, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_get_attr(d2, kd, &got, &flag));
    CHECK(flag == 1 && got == base + 2);
    la.copy_flag = 1;

    /* delete_attr calls the delete callback; deleting again is a no-op */
    CHECK_OK(MPI_Type_delete_attr(d, ka));
    CHECK(la.deletes == 3 && la.deleted[2] == base + 1 && la.delete_type == d);
    CHECK_OK(MPI_Type_get_attr(d, ka, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_delete_attr(d, ka));
    CHECK(la.deletes == 3);

    /* a failing delete callback fails the call and keeps the attribute, and the type */
    la.fail_delete = 1;
    CHECK_CLASS(MPI_Type_delete_attr(t, ka), MPI_ERR_ACCESS);
    CHECK_OK(MPI_Type_get_attr(t, ka, &got, &flag));
    CHECK(flag == 1 && got == base);
    CHECK_CLASS(MPI_Type_set_attr(t, ka, base + 4), MPI_ERR_ACCESS);
    CHECK_OK(MPI_Type_get_attr(t, ka, &got, &flag));
    CHECK(flag == 1 && got == base);
    d3 = t;
    CHECK_CLASS(MPI_Type_free(&d3), MPI_ERR_ACCESS);
    CHECK(d3 == t);
    CHECK_OK(MPI_Type_size(t, &size));
    la.fail_delete = 0;
    CHECK(la.deletes == 3);

    /* a failing copy callback fails the dup and deletes what was already copied */
    CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, delete_cb, &kx, &lx));
    CHECK_OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &u));
    CHECK_OK(MPI_Type_set_attr(u, kx, base + 5)); /* copied first */
    CHECK_OK(MPI_Type_set_attr(u, ka, base + 6)); /* its copy fails */
    la.fail_copy = 1;
    d3 = MPI_INT;
    CHECK_CLASS(MPI_Type_dup(u, &d3), MPI_ERR_OTHER);
    CHECK(d3 == MPI_DATATYPE_NULL);
    CHECK(lx.deletes == 1 && lx.deleted[0] == base + 5 && lx.delete_type != u);
    la.fail_copy = 0;
    CHECK_OK(MPI_Type_get_attr(u, kx, &got, &flag)); /* the original keeps its attributes */
    CHECK(flag == 1 && got == base + 5);

    /* MPI_Type_free deletes the attributes, last set first */
    la.deletes = 0;
    lx.deletes = 0;
    CHECK_OK(MPI_Type_free(&u));
    CHECK(u == MPI_DATATYPE_NULL);
    CHECK(la.deletes == 1 && la.deleted[0] == base + 6 && lx.deletes == 1 && lx.deleted[0] == base + 5);
    la.deletes = 0;
    CHECK_OK(MPI_Type_free(&t)); /* kd (no callback), then kn (base + 1), then ka (base) */
    CHECK(t == MPI_DATATYPE_NULL);
    CHECK(la.deletes == 2 && la.deleted_keyval[0] == kn && la.deleted[0] == base + 1 && la.deleted_keyval[1] == ka &&
          la.deleted[1] == base);

    /* freeing a keyval keeps the callbacks of the attributes that use it */
    CHECK_OK(MPI_Type_set_attr(d2, kn, base + 7));
    int kn_saved = kn;
    CHECK_OK(MPI_Type_free_keyval(&kn));
    CHECK(kn == MPI_KEYVAL_INVALID);
    /* ... and get finds the attribute through the freed keyval's value (MPI 3.1 section 6.7.2) */
    CHECK_OK(MPI_Type_get_attr(d2, kn_saved, &got, &flag));
    CHECK(flag == 1 && got == base + 7);
    la.deletes = 0;
    CHECK_OK(MPI_Type_free(&d2));
    CHECK(la.deletes == 1 && la.deleted[0] == base + 7);
    CHECK_CLASS(MPI_Type_get_attr(d, kn_saved, &got, &flag), MPI_ERR_KEYVAL); /* no attribute left */

    /* errors: keyvals */
    {
        int freed = kx, kc = MPI_KEYVAL_INVALID, k = 0;
        CHECK_OK(MPI_Type_free_keyval(&freed));
        CHECK_CLASS(MPI_Type_get_attr(d, kx, &got, &flag), MPI_ERR_KEYVAL); /* freed */
        CHECK_CLASS(MPI_Type_set_attr(d, kx, base), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_set_attr(d, MPI_KEYVAL_INVALID, base), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_get_attr(d, 12345, &got, &flag), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_delete_attr(d, 12345), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_get_attr(d, MPI_TAG_UB, &got, &flag), MPI_ERR_KEYVAL);
        /* communicator and datatype keyvals are not interchangeable */
        CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kc, NULL));
        CHECK_CLASS(MPI_Type_set_attr(d, kc, base), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_get_attr(d, kc, &got, &flag), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_delete_attr(d, kc), MPI_ERR_KEYVAL);
        k = kc;
        CHECK_CLASS(MPI_Type_free_keyval(&k), MPI_ERR_KEYVAL);
        CHECK(k == kc);
        CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, ka, base), MPI_ERR_KEYVAL);
        k = ka;
        CHECK_CLASS(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL);
        CHECK(k == ka);
        CHECK_OK(MPI_Comm_free_keyval(&kc));
        k = kx; /* already freed */
        CHECK_CLASS(MPI_Type_free_keyval(&k), MPI_ERR_KEYVAL);
        k = MPI_KEYVAL_INVALID;
        CHECK_CLASS(MPI_Type_free_keyval(&k), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Type_free_keyval(NULL), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_keyval(copy_cb, delete_cb, NULL, &la), MPI_ERR_ARG);
    }
    /* errors: datatypes and pointers */
    {
        MPI_Datatype gone;
        CHECK_OK(MPI_Type_dup(MPI_INT, &gone));
        d3 = gone;
        CHECK_OK(MPI_Type_free(&d3));
        CHECK_CLASS(MPI_Type_set_attr(MPI_DATATYPE_NULL, ka, base), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_get_attr(MPI_DATATYPE_NULL, ka, &got, &flag), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_delete_attr(MPI_DATATYPE_NULL, ka), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_set_attr(gone, ka, base), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_get_attr(gone, ka, &got, &flag), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_set_attr(MPI_COMM_WORLD, ka, base), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_get_attr(d, ka, NULL, &flag), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_get_attr(d, ka, &got, NULL), MPI_ERR_ARG);
    }
    {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        CHECK_OK(MPI_Error_string(MPI_ERR_KEYVAL, text, &len));
        CHECK(len > 0 && strstr(text, "MPI_ERR_KEYVAL") != NULL);
    }

    la.deletes = 0;
    CHECK_OK(MPI_Type_free(&d)); /* kd only: ka was deleted */
    CHECK(la.deletes == 0);
    CHECK_OK(MPI_Type_free_keyval(&ka));
    CHECK_OK(MPI_Type_free_keyval(&kd));
    CHECK(ka == MPI_KEYVAL_INVALID && kd == MPI_KEYVAL_INVALID);
    return fails;
}

/* Predefined (and f90) types are one object per rank in MPI's model: with one keyval shared by
 * every rank, each rank sees and deletes only its own values. */
static int test_predefined(int rank) {
    int fails = 0, flag = 0, kp = MPI_KEYVAL_INVALID;
    int mine = 0, mine2 = 0, on_f90 = 0;
    void* got = NULL;
    MPI_Datatype d, f;
    if (rank == 0) {
        CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_in_value, &kp, NULL));
    }
    MPI_Bcast(&kp, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &f));

    CHECK_OK(MPI_Type_set_attr(MPI_DOUBLE, kp, &mine));
    CHECK_OK(MPI_Type_set_attr(f, kp, &on_f90));
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has set its value */
    CHECK_OK(MPI_Type_get_attr(MPI_DOUBLE, kp, &got, &flag));
    CHECK(flag == 1 && got == &mine);
    CHECK_OK(MPI_Type_get_attr(f, kp, &got, &flag));
    CHECK(flag == 1 && got == &on_f90);
    CHECK_OK(MPI_Type_get_attr(MPI_FLOAT, kp, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_set_attr(MPI_DOUBLE, kp, &mine2)); /* deletes this rank's old value only */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mine == 1 && mine2 == 0);

    CHECK_OK(MPI_Type_dup(MPI_DOUBLE, &d));
    CHECK_OK(MPI_Type_get_attr(d, kp, &got, &flag));
    CHECK(flag == 1 && got == &mine2);
    CHECK_OK(MPI_Type_free(&d));
    CHECK(mine2 == 1);
    CHECK_OK(MPI_Type_delete_attr(MPI_DOUBLE, kp));
    CHECK(mine2 == 2);
    CHECK_OK(MPI_Type_get_attr(MPI_DOUBLE, kp, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Type_delete_attr(f, kp));
    CHECK(on_f90 == 1);

    MPI_Barrier(MPI_COMM_WORLD); /* nobody uses kp any more */
    if (rank == 0) {
        CHECK_OK(MPI_Type_free_keyval(&kp));
    }
    return fails;
}

/* The predefined type MPI_Type_create_f90_* should stand for, by size and class. */
static int f90_size(MPI_Datatype t) {
    int size = -1;
    MPI_Type_size(t, &size);
    return size;
}

static int check_envelope(int rank, MPI_Datatype t, int combiner, int p, int r) {
    int fails = 0, ni = -1, na = -1, nd = -1, comb = -1, ints[2] = {0, 0};
    MPI_Aint addr[1];
    MPI_Datatype types[1];
    CHECK_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == combiner && na == 0 && nd == 0);
    CHECK(ni == (combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2));
    CHECK_OK(MPI_Type_get_contents(t, 2, 0, 0, ints, addr, types));
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        CHECK(ints[0] == r);
    } else {
        CHECK(ints[0] == p && ints[1] == r);
    }
    return fails;
}

static int test_f90(int rank, int size) {
    int fails = 0, n = 0;
    MPI_Datatype t, t2, c, m;

    /* reals: the smallest kind with that precision and range */
    CHECK_OK(MPI_Type_create_f90_real(FLT_DIG, MPI_UNDEFINED, &t));
    CHECK(f90_size(t) == (int)sizeof(float));
    fails += check_envelope(rank, t, MPI_COMBINER_F90_REAL, FLT_DIG, MPI_UNDEFINED);
    CHECK_OK(MPI_Type_create_f90_real(FLT_DIG, MPI_UNDEFINED, &t2)); /* cached */
    CHECK(t2 == t);
    CHECK(t != MPI_REAL && t != MPI_FLOAT);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, f90_size(t), &m));
    CHECK(m == MPI_FLOAT);
    CHECK_OK(MPI_Type_create_f90_real(FLT_DIG + 1, 0, &t));
    CHECK(f90_size(t) == (int)sizeof(double));
    fails += check_envelope(rank, t, MPI_COMBINER_F90_REAL, FLT_DIG + 1, 0);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, f90_size(t), &m));
    CHECK(m == MPI_DOUBLE);
    CHECK_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, DBL_MAX_10_EXP - 1, &t));
    CHECK(f90_size(t) == (int)sizeof(double));
    CHECK_OK(MPI_Type_create_f90_real(DBL_DIG, DBL_MAX_10_EXP - 1, &t2));
    CHECK(t2 != t); /* one handle per (p, r) */
    CHECK(f90_size(t2) == (int)sizeof(double));
    if (LDBL_DIG > DBL_DIG) {
        CHECK_OK(MPI_Type_create_f90_real(LDBL_DIG, MPI_UNDEFINED, &t));
        CHECK(f90_size(t) == (int)sizeof(long double));
    }
    /* past long double: binary128 (MPI_REAL16, gfortran's REAL(16): precision 33), then none */
    CHECK_OK(MPI_Type_create_f90_real(LDBL_DIG + 1, MPI_UNDEFINED, &t));
    CHECK(f90_size(t) == 16);
    CHECK_OK(MPI_Type_create_f90_real(33, 4931, &t));
    CHECK(f90_size(t) == 16);
    CHECK_CLASS(MPI_Type_create_f90_real(34, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_f90_real(MPI_UNDEFINED, 6000, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_f90_real(40, 40, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_f90_real(6, 30, NULL), MPI_ERR_ARG);

    /* complex: pairs of those reals */
    CHECK_OK(
        MPI_Type_create_f90_complex(FLT_DIG, FLT_MIN_10_EXP < -FLT_MAX_10_EXP ? FLT_MAX_10_EXP : -FLT_MIN_10_EXP, &c));
    CHECK(f90_size(c) == 2 * (int)sizeof(float));
    CHECK_OK(MPI_Type_create_f90_complex(DBL_DIG, MPI_UNDEFINED, &c));
    CHECK(f90_size(c) == 2 * (int)sizeof(double));
    fails += check_envelope(rank, c, MPI_COMBINER_F90_COMPLEX, DBL_DIG, MPI_UNDEFINED);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, f90_size(c), &m));
    CHECK(m == MPI_C_DOUBLE_COMPLEX);
    CHECK_OK(MPI_Type_create_f90_complex(LDBL_DIG + 1, MPI_UNDEFINED, &c));
    CHECK(f90_size(c) == 32);
    CHECK_CLASS(MPI_Type_create_f90_complex(34, MPI_UNDEFINED, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &c), MPI_ERR_ARG);

    /* integers: the smallest kind holding every integer of r digits */
    {
        const int ranges[] = {1, 2, 3, 4, 5, 9, 10, 18};
        const int sizes[] = {1, 1, 2, 2, 4, 4, 8, 8};
        for (int i = 0; i < 8; ++i) {
            CHECK_OK(MPI_Type_create_f90_integer(ranges[i], &t));
            CHECK(f90_size(t) == sizes[i]);
        }
        CHECK_OK(MPI_Type_create_f90_integer(9, &t));
        fails += check_envelope(rank, t, MPI_COMBINER_F90_INTEGER, 0, 9);
        CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, f90_size(t), &m));
        CHECK(m == MPI_INT32_T);
        CHECK_CLASS(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_f90_integer(4, NULL), MPI_ERR_ARG);
    }

    /* f90 types cannot be freed, are committed, and work like the type they stand for */
    CHECK_OK(MPI_Type_create_f90_real(DBL_DIG, MPI_UNDEFINED, &t));
    t2 = t;
    CHECK_CLASS(MPI_Type_free(&t2), MPI_ERR_TYPE);
    CHECK(t2 == t);
    CHECK_OK(MPI_Type_commit(&t2));
    {
        double out[3], in[3] = {0, 0, 0}, sum = 0;
        MPI_Status st;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        for (int i = 0; i < 3; ++i) {
            out[i] = rank * 10.0 + i;
        }
        CHECK_OK(MPI_Sendrecv(out, 3, t, right, 7, in, 3, t, left, 7, MPI_COMM_WORLD, &st));
        CHECK(in[0] == left * 10.0 && in[2] == left * 10.0 + 2);
        CHECK_OK(MPI_Get_count(&st, t, &n));
        CHECK(n == 3);
        CHECK_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECK(n == 3);
        double mine = rank;
        CHECK_OK(MPI_Allreduce(&mine, &sum, 1, t, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == (double)size * (size - 1) / 2);
        CHECK_OK(MPI_Type_create_f90_integer(9, &m));
        int one = 1, count = 0;
        CHECK_OK(MPI_Allreduce(&one, &count, 1, m, MPI_SUM, MPI_COMM_WORLD));
        CHECK(count == size);
        CHECK_CLASS(MPI_Allreduce(&one, &count, 1, m, MPI_MINLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    }
    /* as part of a derived type: the contents name the predefined type (not to be freed) */
    {
        int ni, na, nd, comb, ints[1];
        MPI_Aint addr[1];
        MPI_Datatype parts[1], dup;
        CHECK_OK(MPI_Type_contiguous(4, t, &c));
        CHECK_OK(MPI_Type_get_envelope(c, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_CONTIGUOUS && nd == 1);
        CHECK_OK(MPI_Type_get_contents(c, 1, 0, 1, ints, addr, parts));
        CHECK(ints[0] == 4 && parts[0] == MPI_DOUBLE_PRECISION);
        CHECK_OK(MPI_Type_free(&c));
        CHECK_OK(MPI_Type_dup(t, &dup)); /* a dup is an ordinary derived type */
        CHECK_OK(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_DUP && f90_size(dup) == (int)sizeof(double));
        CHECK_OK(MPI_Type_free(&dup));
    }
    /* a predefined type's contents stay an error */
    {
        int ints[2];
        MPI_Aint addr[1];
        MPI_Datatype parts[1];
        CHECK_CLASS(MPI_Type_get_contents(MPI_DOUBLE, 2, 0, 0, ints, addr, parts), MPI_ERR_ARG);
    }
    return fails;
}

/* Many ranks setting, copying and deleting attributes at once on their own types and on a
 * shared predefined one. */
static int test_concurrent(int rank) {
    int fails = 0, flag = 0, k = MPI_KEYVAL_INVALID, on_int = 0;
    struct log l;
    char base[4];
    void* got = NULL;
    log_init(&l);
    CHECK_OK(MPI_Type_create_keyval(copy_cb, delete_cb, &k, &l));
    for (int i = 0; i < 200; ++i) {
        MPI_Datatype t, d;
        CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
        CHECK_OK(MPI_Type_set_attr(t, k, base));
        CHECK_OK(MPI_Type_set_attr(MPI_INT, k, &on_int));
        CHECK_OK(MPI_Type_dup(t, &d));
        CHECK_OK(MPI_Type_get_attr(d, k, &got, &flag));
        CHECK(flag == 1 && got == base + 1);
        CHECK_OK(MPI_Type_get_attr(MPI_INT, k, &got, &flag));
        CHECK(flag == 1 && got == &on_int);
        CHECK_OK(MPI_Type_free(&t));
        CHECK_OK(MPI_Type_free(&d));
        CHECK_OK(MPI_Type_delete_attr(MPI_INT, k));
    }
    CHECK(l.copies == 200 && l.deletes == 600);
    CHECK_OK(MPI_Type_free_keyval(&k));
    return fails;
}

static int test_env(int rank) {
    int fails = 0;
    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK_OK(MPI_Pcontrol(0));
    CHECK_OK(MPI_Pcontrol(1));
    CHECK_OK(MPI_Pcontrol(2, "extra", 3));
    CHECK_OK(PMPI_Pcontrol(1));
    CHECK_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);
    CHECK_CLASS(MPI_Comm_get_parent(NULL), MPI_ERR_ARG);
    {
        int buf[5] = {1, 2, 3, 4, 5}, in[5], n = 0;
        MPI_Status st, back;
        MPI_Fint f[MPI_STATUS_SIZE];
        st.MPI_ERROR = MPI_SUCCESS; /* receives leave it as it is (MPI 3.1 section 3.2.5) */
        CHECK_OK(
            MPI_Sendrecv(buf, 5, MPI_INT, MPI_PROC_NULL, 3, in, 5, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
        CHECK_OK(MPI_Sendrecv(buf, 3, MPI_INT, 0, 9, in, 5, MPI_INT, 0, 9, MPI_COMM_SELF, &st));
        CHECK_OK(MPI_Status_c2f(&st, f));
        CHECK_OK(MPI_Status_f2c(f, &back));
        CHECK(back.MPI_SOURCE == 0 && back.MPI_TAG == 9 && in[2] == 3);
        CHECK_OK(MPI_Get_count(&back, MPI_INT, &n));
        CHECK(n == 3);
        CHECK_CLASS(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Status_f2c(NULL, &back), MPI_ERR_ARG);
        /* the mpi_f08 form (MPI_F08_status): C -> f08 -> Fortran INTEGER -> f08 -> C */
        MPI_F08_status f08, f08b;
        MPI_Fint f2[MPI_STATUS_SIZE];
        MPI_Status back2;
        CHECK_OK(MPI_Status_c2f08(&st, &f08));
        CHECK(f08.MPI_SOURCE == 0 && f08.MPI_TAG == 9);
        CHECK_OK(MPI_Status_f082f(&f08, f2));
        CHECK_OK(MPI_Status_f2f08(f2, &f08b));
        CHECK_OK(MPI_Status_f082c(&f08b, &back2));
        CHECK(back2.MPI_SOURCE == 0 && back2.MPI_TAG == 9 && back2.MPI_ERROR == st.MPI_ERROR);
        CHECK_OK(MPI_Get_count(&back2, MPI_INT, &n));
        CHECK(n == 3);
        CHECK_CLASS(MPI_Status_c2f08(MPI_STATUS_IGNORE, &f08), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Status_f082c(NULL, &back2), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Status_f2f08(f2, NULL), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Status_f082f(NULL, f2), MPI_ERR_ARG);
    }
    {
        /* the handle conversions: macros, and functions of both names for tools (a name in
         * parentheses calls the function, not the macro) */
        MPI_Fint (*c2f)(MPI_Comm) = &PMPI_Comm_c2f;
        MPI_Message (*f2c)(MPI_Fint) = &MPI_Message_f2c;
        CHECK(c2f(MPI_COMM_WORLD) == MPI_Comm_c2f(MPI_COMM_WORLD));
        CHECK((MPI_Comm_f2c)((MPI_Comm_c2f)(MPI_COMM_SELF)) == MPI_COMM_SELF);
        CHECK((PMPI_Type_f2c)((PMPI_Type_c2f)(MPI_DOUBLE)) == MPI_DOUBLE);
        CHECK(f2c((PMPI_Message_c2f)(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL);
        CHECK((MPI_Request_f2c)(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL);
        CHECK((MPI_Op_f2c)((MPI_Op_c2f)(MPI_SUM)) == MPI_SUM && (MPI_Info_f2c)((MPI_Info_c2f)(MPI_INFO_NULL)) == MPI_INFO_NULL);
        CHECK((MPI_Group_f2c)((MPI_Group_c2f)(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY);
        CHECK((MPI_Errhandler_f2c)((MPI_Errhandler_c2f)(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN);
        CHECK((MPI_Win_f2c)((MPI_Win_c2f)(MPI_WIN_NULL)) == MPI_WIN_NULL);
    }
    return fails;
}

int main(int argc, char** argv) {
    int rank, size, fails = 0, total = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fails += test_callbacks(rank);
    fails += test_predefined(rank);
    fails += test_f90(rank, size);
    fails += test_concurrent(rank);
    fails += test_env(rank);
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) {
        if (total == 0) {
            printf("type_attrs: OK (%d ranks)\n", size);
        } else {
            printf("type_attrs: FAIL (%d failed checks)\n", total);
        }
    }
    return fails != 0;
}
