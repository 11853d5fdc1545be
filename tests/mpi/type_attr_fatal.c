/* Under MPI_ERRORS_ARE_FATAL (the default), a datatype call with a communicator keyval ends the
 * job with one line naming the rank, the call and the class (datatype calls raise their errors
 * on MPI_COMM_WORLD); ctest checks the output and the non-zero status. */
#include <mpi.h>

int main(int argc, char** argv) {
    int rank, size, key = MPI_KEYVAL_INVALID, flag = 0;
    void* value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, 0);
        MPI_Type_get_attr(MPI_INT, key, &value, &flag); /* never returns */
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* would wait forever */
    MPI_Finalize();
    return 0;
}
