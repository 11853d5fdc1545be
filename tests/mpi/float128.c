/* MPC_FLOAT128 / MPC_COMPLEX_FLOAT128 (= MPI_REAL16 / MPI_COMPLEX32) from C: __float128
 * reductions whose results need more than double (and long double) precision, exact in
 * binary128, and the type's size, name and errors. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "groups/check.h"

struct c128 {
    __float128 re, im;
};

int main(int argc, char **argv) {
    int rank, size, fails = 0, n = 0, len = 0;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const __float128 step = 1.0Q / (1.0Q * (1ULL << 50) * (1ULL << 50)); /* 2**-100 */
    const int k = size * (size - 1) / 2;

    MPI_Type_size(MPC_FLOAT128, &n);
    CHECK(n == 16 && MPC_FLOAT128 == MPI_REAL16);
    MPI_Type_size(MPC_COMPLEX_FLOAT128, &n);
    CHECK(n == 32 && MPC_COMPLEX_FLOAT128 == MPI_COMPLEX32);
    MPI_Type_get_name(MPC_FLOAT128, name, &len);
    CHECK(strcmp(name, "MPI_REAL16") == 0);

    __float128 x[2] = {1 + rank * step, rank}, r[2] = {0, 0};
    MPI_Allreduce(x, r, 2, MPC_FLOAT128, MPI_SUM, MPI_COMM_WORLD);
    CHECK(r[0] == size + k * step && r[1] == k);
    CHECK(size == 1 || ((long double)r[0] == size && r[0] != size)); /* beyond long double too */
    MPI_Allreduce(x, r, 1, MPC_FLOAT128, MPI_MAX, MPI_COMM_WORLD);
    CHECK(r[0] == 1 + (size - 1) * step);
    MPI_Allreduce(x, r, 1, MPC_FLOAT128, MPI_MIN, MPI_COMM_WORLD);
    CHECK(r[0] == 1);
    x[0] = rank == 0 ? 1 + step * (1ULL << 40) : 2; /* 1 + 2**-60 */
    MPI_Allreduce(x, r, 1, MPC_FLOAT128, MPI_PROD, MPI_COMM_WORLD);
    CHECK(r[0] == (__float128)(1ULL << (size - 1)) * (1 + step * (1ULL << 40)));

    struct c128 z = {1 + rank * step, -rank * step}, zs = {0, 0};
    MPI_Allreduce(&z, &zs, 1, MPC_COMPLEX_FLOAT128, MPI_SUM, MPI_COMM_WORLD);
    CHECK(zs.re == size + k * step && zs.im == -k * step);
    /* rank 0: 3 + 2**-100 i, the others 2: product 2**(size-1) * (3 + 2**-100 i) */
    if (rank == 0) {
        z.re = 3;
        z.im = step;
    } else {
        z.re = 2;
        z.im = 0;
    }
    MPI_Allreduce(&z, &zs, 1, MPC_COMPLEX_FLOAT128, MPI_PROD, MPI_COMM_WORLD);
    CHECK(zs.re == 3 * (__float128)(1ULL << (size - 1)) && zs.im == step * (1ULL << (size - 1)));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Allreduce(&z, &zs, 1, MPC_COMPLEX_FLOAT128, MPI_MIN, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(x, r, 1, MPC_FLOAT128, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);

    MPI_Finalize();
    if (fails == 0 && rank == 0) {
        printf("float128: OK\n");
    }
    return fails != 0;
}
