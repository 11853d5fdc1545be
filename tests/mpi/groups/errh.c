/* User error handlers (create, set, get, call, free; invoked by failing calls) and user error
 * classes, codes and strings. Any rank count up to MAX_RANKS. */
#include <string.h>

#include "check.h"

#define MAX_RANKS 1024

/* What the handler saw, one slot per rank: each rank writes only its own slot. */
struct seen {
    int calls;
    int code;
    MPI_Comm comm;
};
static struct seen g_seen[MAX_RANKS];

static void record(MPI_Comm* comm, int* code, ...) {
    int r = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    g_seen[r].calls++;
    g_seen[r].code = *code;
    g_seen[r].comm = *comm;
}

static int test_handlers(int rank, int size) {
    int fails = 0, cls = -1, x = 0;
    struct seen* me = &g_seen[rank];
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    MPI_Comm c, c2;

    CHECK_OK(MPI_Comm_create_errhandler(record, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL);
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_OK(MPI_Comm_set_errhandler(c, eh));
    CHECK_OK(MPI_Errhandler_free(&eh)); /* still attached to c */
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_OK(MPI_Comm_get_errhandler(c, &got));
    CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL);
    CHECK_OK(MPI_Errhandler_free(&got));

    /* a failing call invokes the handler with the communicator and the error, then returns it */
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK);
    CHECK(me->calls == 1 && me->code == rc && me->comm == c);
    rc = MPI_Cart_shift(c, 0, 1, &x, &x);
    CHECK(me->calls == 2 && me->code == rc && rc == MPI_ERR_TOPOLOGY);

    /* MPI_Comm_call_errhandler */
    CHECK_OK(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
    CHECK(me->calls == 3 && me->code == MPI_ERR_OTHER && me->comm == c);
    CHECK_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER)); /* ERRORS_RETURN: nothing */
    CHECK(me->calls == 3);

    /* duplicates inherit the handler */
    CHECK_OK(MPI_Comm_dup(c, &c2));
    CHECK_CLASS(MPI_Bcast(&x, 1, MPI_INT, -5, c2), MPI_ERR_ROOT);
    CHECK(me->calls == 4 && me->comm == c2);

    /* on MPI_COMM_WORLD, errors not tied to a communicator reach it too */
    CHECK_OK(MPI_Comm_get_errhandler(c, &got));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, got));
    CHECK_OK(MPI_Errhandler_free(&got));
    CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &x), MPI_ERR_GROUP);
    CHECK(me->calls == 5 && me->code == MPI_ERR_GROUP && me->comm == MPI_COMM_WORLD);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* back to ERRORS_RETURN on c: no more calls */
    CHECK_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, c), MPI_ERR_RANK);
    CHECK(me->calls == 5);

    /* bad arguments */
    eh = MPI_ERRHANDLER_NULL;
    CHECK_CLASS(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_errhandler(record, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Errhandler_free(&eh), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Errhandler_free(NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_set_errhandler(c, MPC_HANDLE(MPC_HANDLE_KIND_ERRHANDLER, 999999)), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM);
    eh = MPI_ERRORS_RETURN;
    CHECK_OK(MPI_Errhandler_free(&eh)); /* predefined: a no-op */
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_OK(MPI_Comm_free(&c2));
    CHECK_OK(MPI_Comm_free(&c));
    return fails;
}

static int test_codes(int rank) {
    int fails = 0, cls = -1, code = -1, code2 = -1, cls_b = -1, len = -1, flag = 0;
    char text[MPI_MAX_ERROR_STRING];
    int* last = NULL;

    CHECK_OK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE);
    CHECK_OK(MPI_Add_error_code(cls, &code));
    CHECK(code > MPI_ERR_LASTCODE && code != cls);
    CHECK_OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(code2 != code && code2 != cls);
    CHECK_OK(MPI_Add_error_class(&cls_b));
    CHECK(cls_b != cls && cls_b != code && cls_b != code2);
    int got = -1;
    CHECK_OK(MPI_Error_class(code, &got));
    CHECK(got == cls);
    CHECK_OK(MPI_Error_class(cls, &got));
    CHECK(got == cls);
    CHECK_OK(MPI_Error_class(code2, &got));
    CHECK(got == MPI_ERR_ARG);
    /* (the codes are shared by the ranks that add them in the same order, strings included) */
    CHECK_OK(MPI_Add_error_string(code, "my own error"));
    CHECK_OK(MPI_Add_error_string(cls, "my own class"));
    CHECK_OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "my own error") == 0 && len == 12);
    CHECK_OK(MPI_Error_string(cls, text, &len));
    CHECK(strcmp(text, "my own class") == 0);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag == 1 && *last >= cls_b && *last >= code2);

    /* every rank added the same things in the same order: the same values everywhere */
    int mine[4] = {cls, code, code2, cls_b}, root[4];
    memcpy(root, mine, sizeof(root));
    CHECK_OK(MPI_Bcast(root, 4, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(memcmp(root, mine, sizeof(root)) == 0);

    CHECK_CLASS(MPI_Add_error_code(123456, &code), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_code(code2, &code), MPI_ERR_ARG); /* a code, not a class */
    CHECK_CLASS(MPI_Add_error_code(cls, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_class(NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_ARG, "not mine"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_string(cls, NULL), MPI_ERR_ARG);
    char long_text[MPI_MAX_ERROR_STRING + 1];
    memset(long_text, 'e', MPI_MAX_ERROR_STRING);
    long_text[MPI_MAX_ERROR_STRING] = '\0';
    CHECK_CLASS(MPI_Add_error_string(cls, long_text), MPI_ERR_ARG);
    return fails;
}

int main(int argc, char** argv) {
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS) {
        if (rank == 0) {
            fprintf(stderr, "errh: at most %d ranks\n", MAX_RANKS);
        }
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fails += test_handlers(rank, size);
    fails += test_codes(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (fails == 0 && rank == 0) {
        printf("errh: OK (%d ranks)\n", size);
    }
    return fails != 0;
}
