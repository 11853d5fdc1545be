/* Calls the removed MPI-1 functions without a declaration, as HPL's HPL_packL.c does (C before
 * C23 allows it, with a warning, silenced here): mpi.h does not declare them unless
 * MPC_ENABLE_MPI1_COMPAT is defined, and the library must still provide them. */
#pragma GCC diagnostic ignored "-Wimplicit-function-declaration"
#include <mpi.h>

int mpi1_implicit_type(int *a, double *d, int n, MPI_Datatype *t) {
    int bl[2] = {n, n};
    MPI_Aint disp[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    int err = MPI_Address(a, &disp[0]);
    if (err == MPI_SUCCESS) err = MPI_Address(d, &disp[1]);
    if (err == MPI_SUCCESS) err = MPI_Type_struct(2, bl, disp, types, t);
    return err;
}
