/* Info objects and MPI_INFO_ENV: results and error classes. Any rank count. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int test_info(int rank, int size) {
    int fails = 0, flag = -1, n = -1, len = -1;
    char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    MPI_Info info, dup;

    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0);
    CHECK_OK(MPI_Info_set(info, "b_key", "first"));
    CHECK_OK(MPI_Info_set(info, "a_key", "second value"));
    CHECK_OK(MPI_Info_set(info, "b_key", "replaced")); /* keeps its place */
    CHECK_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2);
    CHECK_OK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "b_key") == 0);
    CHECK_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "a_key") == 0);
    CHECK_OK(MPI_Info_get(info, "b_key", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == 1 && strcmp(value, "replaced") == 0);
    CHECK_OK(MPI_Info_get(info, "a_key", 6, value, &flag)); /* truncated to valuelen */
    CHECK(flag == 1 && strcmp(value, "second") == 0);
    CHECK_OK(MPI_Info_get_valuelen(info, "a_key", &len, &flag));
    CHECK(flag == 1 && len == 12);
    CHECK_OK(MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == 0);
    CHECK_OK(MPI_Info_get_valuelen(info, "missing", &len, &flag));
    CHECK(flag == 0);

    CHECK_OK(MPI_Info_dup(info, &dup));
    CHECK_OK(MPI_Info_delete(info, "b_key"));
    CHECK_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1);
    CHECK_OK(MPI_Info_get_nkeys(dup, &n)); /* the copy is independent */
    CHECK(n == 2);
    CHECK_OK(MPI_Info_get(dup, "b_key", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == 1 && strcmp(value, "replaced") == 0);

    /* bad arguments */
    char long_key[MPI_MAX_INFO_KEY + 2];
    memset(long_key, 'k', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    char* long_value = malloc(MPI_MAX_INFO_VAL + 2);
    memset(long_value, 'v', MPI_MAX_INFO_VAL + 1);
    long_value[MPI_MAX_INFO_VAL + 1] = '\0';
    CHECK_CLASS(MPI_Info_set(info, long_key, "x"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, NULL, "x"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, "k", long_value), MPI_ERR_INFO_VALUE);
    CHECK_CLASS(MPI_Info_set(info, "k", NULL), MPI_ERR_INFO_VALUE);
    long_value[MPI_MAX_INFO_VAL] = '\0'; /* exactly MPI_MAX_INFO_VAL characters: fine */
    CHECK_OK(MPI_Info_set(info, "k", long_value));
    CHECK_CLASS(MPI_Info_delete(info, "missing"), MPI_ERR_INFO_NOKEY);
    CHECK_CLASS(MPI_Info_get_nthkey(info, 5, key), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get(info, "k", -1, value, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get(info, "k", 5, value, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_set(MPC_HANDLE(MPC_HANDLE_KIND_INFO, 99999), "k", "v"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_get_nkeys(MPI_COMM_WORLD, &n), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_create(NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_dup(info, NULL), MPI_ERR_ARG);
    free(long_value);

    CHECK_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);
    CHECK_CLASS(MPI_Info_free(&info), MPI_ERR_INFO);
    CHECK_OK(MPI_Info_free(&dup));

    /* MPI_INFO_ENV: read-only, with maxprocs and command */
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == 1 && atoi(value) == size);
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == 1 && strstr(value, "info") != NULL);
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag == 1 && strcmp(value, "MPI_THREAD_MULTIPLE") == 0);
    CHECK_CLASS(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_delete(MPI_INFO_ENV, "maxprocs"), MPI_ERR_INFO);
    info = MPI_INFO_ENV;
    CHECK_CLASS(MPI_Info_free(&info), MPI_ERR_INFO);
    CHECK_OK(MPI_Info_dup(MPI_INFO_ENV, &dup)); /* a copy can be changed */
    CHECK_OK(MPI_Info_set(dup, "maxprocs", "1"));
    CHECK_OK(MPI_Info_free(&dup));
    return fails;
}

int main(int argc, char** argv) {
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fails += test_info(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (fails == 0 && rank == 0) {
        printf("info: OK (%d ranks)\n", size);
    }
    return fails != 0;
}
