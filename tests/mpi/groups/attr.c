/* Attribute caching: keyvals, copy callbacks on MPI_Comm_dup, delete callbacks on
 * MPI_Comm_delete_attr / set / MPI_Comm_free / MPI_Finalize (MPI_COMM_SELF), predefined
 * attributes, the MPI-1 names, and error classes. Any rank count. */
#include <limits.h>

#include "check.h"

/* What the callbacks saw; one per rank, passed as extra_state (no globals). */
struct calls {
    int copies;
    int deletes;
    void* last_deleted;
    int fail_copy;
    int fail_delete;
};

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
    struct calls* c = extra;
    (void)oldcomm;
    (void)keyval;
    c->copies++;
    if (c->fail_copy) {
        return MPI_ERR_OTHER;
    }
    *(void**)out = (char*)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
    struct calls* c = extra;
    (void)comm;
    (void)keyval;
    if (c->fail_delete) {
        return MPI_ERR_ACCESS;
    }
    c->deletes++;
    c->last_deleted = value;
    return MPI_SUCCESS;
}

static int test_user_attrs(int rank) {
    int fails = 0, flag = -1;
    struct calls a = {0, 0, NULL, 0, 0}, b = {0, 0, NULL, 0, 0};
    char base[4];
    void* got = NULL;
    int ka = MPI_KEYVAL_INVALID, kb = MPI_KEYVAL_INVALID, kn = MPI_KEYVAL_INVALID, kd = MPI_KEYVAL_INVALID;
    MPI_Comm c1, c2, c3;

    CHECK_OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &ka, &a));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kn, &b));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kd, NULL));
    CHECK(ka != MPI_KEYVAL_INVALID && kn != ka && kd != kn);
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));

    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Comm_set_attr(c1, ka, base));
    CHECK_OK(MPI_Comm_set_attr(c1, kn, base + 1));
    CHECK_OK(MPI_Comm_set_attr(c1, kd, base + 2));
    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag));
    CHECK(flag == 1 && got == base);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, ka, &got, &flag)); /* not on another communicator */
    CHECK(flag == 0);

    /* replacing a value deletes the old one */
    CHECK_OK(MPI_Comm_set_attr(c1, ka, base + 3));
    CHECK(a.deletes == 1 && a.last_deleted == base);
    CHECK_OK(MPI_Comm_set_attr(c1, ka, base));
    CHECK(a.deletes == 2 && a.last_deleted == base + 3);

    /* dup: ka copied as value + 1, kn not copied, kd copied as is */
    CHECK_OK(MPI_Comm_dup(c1, &c2));
    CHECK(a.copies == 1);
    CHECK_OK(MPI_Comm_get_attr(c2, ka, &got, &flag));
    CHECK(flag == 1 && got == base + 1);
    CHECK_OK(MPI_Comm_get_attr(c2, kn, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Comm_get_attr(c2, kd, &got, &flag));
    CHECK(flag == 1 && got == base + 2);
    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag)); /* the original is unchanged */
    CHECK(flag == 1 && got == base);

    /* delete_attr calls the delete callback; deleting again is a no-op */
    CHECK_OK(MPI_Comm_delete_attr(c2, ka));
    CHECK(a.deletes == 3 && a.last_deleted == base + 1);
    CHECK_OK(MPI_Comm_get_attr(c2, ka, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Comm_delete_attr(c2, ka));
    CHECK(a.deletes == 3);

    /* a failing delete callback fails the call and keeps the attribute */
    a.fail_delete = 1;
    CHECK_CLASS(MPI_Comm_delete_attr(c1, ka), MPI_ERR_ACCESS);
    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag));
    CHECK(flag == 1 && got == base);
    a.fail_delete = 0;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c3));
    CHECK_OK(MPI_Comm_set_attr(c3, ka, base));
    a.fail_delete = 1;
    CHECK_CLASS(MPI_Comm_free(&c3), MPI_ERR_ACCESS); /* the communicator stays */
    CHECK(c3 != MPI_COMM_NULL);
    a.fail_delete = 0;
    CHECK_OK(MPI_Comm_free(&c3));
    CHECK(c3 == MPI_COMM_NULL);

    /* a failing copy callback fails the duplication */
    a.fail_copy = 1;
    c3 = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_dup(c1, &c3), MPI_ERR_OTHER);
    CHECK(c3 == MPI_COMM_NULL);
    a.fail_copy = 0;

    /* freeing a keyval keeps the callbacks of attributes that use it */
    CHECK_OK(MPI_Comm_free_keyval(&kn));
    CHECK(kn == MPI_KEYVAL_INVALID);
    int deletes_before = b.deletes;
    CHECK_OK(MPI_Comm_free(&c1)); /* deletes ka (base) and kn (base + 1) */
    CHECK(c1 == MPI_COMM_NULL);
    CHECK(b.deletes == deletes_before + 1 && b.last_deleted == base + 1);
    CHECK(a.last_deleted == base);

    /* an attribute keeps its freed keyval alive (MPI 3.1 section 6.7.2): get and delete still
     * find it through the keyval's old value, as in Open MPI and MPICH (MPICH's fkeyval) */
    int kf = MPI_KEYVAL_INVALID;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kf, &b));
    int saved = kf;
    CHECK_OK(MPI_Comm_set_attr(c2, kf, base + 3));
    CHECK_OK(MPI_Comm_free_keyval(&kf));
    CHECK(kf == MPI_KEYVAL_INVALID);
    CHECK_OK(MPI_Comm_get_attr(c2, saved, &got, &flag));
    CHECK(flag == 1 && got == base + 3);
    deletes_before = b.deletes;
    CHECK_OK(MPI_Comm_delete_attr(c2, saved));
    CHECK(b.deletes == deletes_before + 1 && b.last_deleted == base + 3);
    /* once its last attribute is gone, the freed keyval is invalid */
    CHECK_CLASS(MPI_Comm_get_attr(c2, saved, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(c2, saved), MPI_ERR_KEYVAL);

    /* errors */
    CHECK_CLASS(MPI_Comm_get_attr(c2, kn, &got, &flag), MPI_ERR_KEYVAL); /* freed */
    CHECK_CLASS(MPI_Comm_set_attr(c2, MPI_KEYVAL_INVALID, base), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(c2, 12345, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(c2, 12345), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(c2, MPI_TAG_UB, base), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(c2, MPI_TAG_UB), MPI_ERR_KEYVAL);
    kb = MPI_TAG_UB;
    CHECK_CLASS(MPI_Comm_free_keyval(&kb), MPI_ERR_KEYVAL);
    kb = 12345;
    CHECK_CLASS(MPI_Comm_free_keyval(&kb), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_keyval(copy_plus_one, count_delete, NULL, &a), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, ka, base), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_get_attr(c2, ka, NULL, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_get_attr(c2, ka, &got, NULL), MPI_ERR_ARG);

    /* the MPI-1 names */
    CHECK_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kb, NULL));
    CHECK_OK(MPI_Attr_put(c2, kb, base + 2));
    CHECK_OK(MPI_Attr_get(c2, kb, &got, &flag));
    CHECK(flag == 1 && got == base + 2);
    CHECK_OK(MPI_Attr_delete(c2, kb));
    CHECK_OK(MPI_Attr_get(c2, kb, &got, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Keyval_free(&kb));
    CHECK(kb == MPI_KEYVAL_INVALID);
    CHECK_CLASS(MPI_Attr_put(c2, MPI_KEYVAL_INVALID, base), MPI_ERR_KEYVAL);

    CHECK_OK(MPI_Comm_free(&c2)); /* deletes kd (no callback) */
    CHECK_OK(MPI_Comm_free_keyval(&ka));
    CHECK_OK(MPI_Comm_free_keyval(&kd));
    return fails;
}

static int test_predefined(int rank, int size) {
    int fails = 0, flag = 0;
    int* v = NULL;
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 1 && v != NULL && *v == INT_MAX);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag == 1 && *v == MPI_PROC_NULL);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag == 1 && *v == MPI_ANY_SOURCE);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag == 1 && *v == 1);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(flag == 1 && *v == size);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag == 1 && *v == 0);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag == 1 && *v >= MPI_ERR_LASTCODE);
    CHECK_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 1 && *v == INT_MAX);
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Comm_get_attr(dup, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 1 && *v == INT_MAX);
    CHECK_OK(MPI_Comm_free(&dup));
    return fails;
}

/* Records that MPI_Finalize deleted the attribute on MPI_COMM_SELF (before finalizing). */
static int at_finalize(MPI_Comm comm, int keyval, void* value, void* extra) {
    int finalized = 1;
    (void)keyval;
    (void)value;
    MPI_Finalized(&finalized);
    *(int*)extra = comm == MPI_COMM_SELF && !finalized ? 1 : -1;
    return MPI_SUCCESS;
}

int main(int argc, char** argv) {
    int rank, size, fails = 0, finalize_seen = 0, key = MPI_KEYVAL_INVALID;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fails += test_user_attrs(rank);
    fails += test_predefined(rank, size);
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key, &finalize_seen));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    CHECK(finalize_seen == 1);
    if (fails == 0 && rank == 0) {
        printf("attr: OK (%d ranks)\n", size);
    }
    return fails != 0;
}
