/* The MPI-1 functions MPI-3.0 removed (MPI_Address, MPI_Type_struct, MPI_Type_hvector,
 * MPI_Type_hindexed, MPI_Type_extent/lb/ub, MPI_Errhandler_create/set/get), declared by
 * MPC_ENABLE_MPI1_COMPAT, against their MPI-2 replacements: the same results, the same error
 * classes on bad arguments (under MPI_ERRORS_RETURN); and an HPL-style message (a struct type of
 * absolute addresses from MPI_BOTTOM) built by a file that calls MPI_Address and
 * MPI_Type_struct without any declaration (mpi1_implicit.c), as HPL and HPCC do. Any rank count;
 * rank 0 sends to every other rank. Exit status 0 on success. */
#define MPC_ENABLE_MPI1_COMPAT 1
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "rank %d: line %d: check failed: %s\n", rank, __LINE__, #cond); \
            ++fails;                                                                        \
        }                                                                                   \
    } while (0)

/* mpi1_implicit.c: MPI_Type of {n ints at a, n doubles at d} by absolute addresses. */
int mpi1_implicit_type(int *a, double *d, int n, MPI_Datatype *t);

static void count_calls(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
}

int main(int argc, char **argv) {
    int rank = -1, size = 0, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* MPI_Errhandler_create / set / get */
    MPI_Errhandler mine = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    CHECK(MPI_Errhandler_create(count_calls, &mine) == MPI_SUCCESS);
    CHECK(MPI_Errhandler_set(MPI_COMM_WORLD, mine) == MPI_SUCCESS);
    CHECK(MPI_Errhandler_get(MPI_COMM_WORLD, &got) == MPI_SUCCESS);
    MPI_Errhandler viaget = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &viaget);
    CHECK(got == viaget);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&viaget);
    CHECK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);
    MPI_Errhandler_free(&mine);

    /* MPI_Address against MPI_Get_address */
    double x[4];
    MPI_Aint a1 = 0, a2 = 0;
    CHECK(MPI_Address(&x[2], &a1) == MPI_SUCCESS);
    MPI_Get_address(&x[2], &a2);
    CHECK(a1 == a2);

    /* hvector, hindexed, struct against the create_ forms; extent, lb, ub against get_extent */
    int bl[3] = {2, 1, 3};
    MPI_Aint disp[3] = {8, 40, 64};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype t_old[3], t_new[3];
    CHECK(MPI_Type_hvector(3, 2, 24, MPI_INT, &t_old[0]) == MPI_SUCCESS);
    MPI_Type_create_hvector(3, 2, 24, MPI_INT, &t_new[0]);
    CHECK(MPI_Type_hindexed(3, bl, disp, MPI_INT, &t_old[1]) == MPI_SUCCESS);
    MPI_Type_create_hindexed(3, bl, disp, MPI_INT, &t_new[1]);
    CHECK(MPI_Type_struct(3, bl, disp, types, &t_old[2]) == MPI_SUCCESS);
    MPI_Type_create_struct(3, bl, disp, types, &t_new[2]);
    for (int i = 0; i < 3; ++i) {
        MPI_Aint lb = -1, ext = -1, lb2 = -2, ext2 = -2, ub = -3, ext3 = -3;
        int s1 = -1, s2 = -2;
        MPI_Type_commit(&t_old[i]);
        CHECK(MPI_Type_lb(t_old[i], &lb) == MPI_SUCCESS);
        CHECK(MPI_Type_extent(t_old[i], &ext) == MPI_SUCCESS);
        CHECK(MPI_Type_ub(t_old[i], &ub) == MPI_SUCCESS);
        MPI_Type_get_extent(t_new[i], &lb2, &ext2);
        CHECK(lb == lb2 && ext == ext2 && ub == lb2 + ext2);
        MPI_Type_extent(t_new[i], &ext3);
        CHECK(ext3 == ext2);
        MPI_Type_size(t_old[i], &s1);
        MPI_Type_size(t_new[i], &s2);
        CHECK(s1 == s2 && s1 > 0);
        MPI_Type_free(&t_old[i]);
        MPI_Type_free(&t_new[i]);
    }

    /* bad arguments: the replacements' error classes */
    MPI_Aint dummy = 0;
    int cls = -1, err;
    err = MPI_Type_extent(MPI_DATATYPE_NULL, &dummy);
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && cls == MPI_ERR_TYPE);
    err = MPI_Type_hvector(-1, 1, 8, MPI_INT, &t_old[0]);
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && cls == MPI_ERR_COUNT);
    err = MPI_Errhandler_set(MPI_COMM_NULL, MPI_ERRORS_RETURN);
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && cls == MPI_ERR_COMM);

    /* the HPL-style message */
    enum { N = 5 };
    int ai[N];
    double ad[N];
    MPI_Datatype ht;
    CHECK(mpi1_implicit_type(ai, ad, N, &ht) == MPI_SUCCESS);
    MPI_Type_commit(&ht);
    if (rank == 0) {
        for (int i = 0; i < N; ++i) {
            ai[i] = 100 + i;
            ad[i] = 0.5 * i;
        }
        for (int r = 1; r < size; ++r) MPI_Send(MPI_BOTTOM, 1, ht, r, 7, MPI_COMM_WORLD);
    } else {
        memset(ai, 0, sizeof ai);
        memset(ad, 0, sizeof ad);
        MPI_Recv(MPI_BOTTOM, 1, ht, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; ++i) CHECK(ai[i] == 100 + i && ad[i] == 0.5 * i);
    }
    MPI_Type_free(&ht);

    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(total == 0 ? "mpi1_removed: %d ranks OK\n" : "mpi1_removed: FAILED\n", size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
