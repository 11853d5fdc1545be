/* Error handlers applied by a call that fails inside a locked table: rank 0 makes error handlers
 * until their 2^24 handle space is spent. MPI_Comm_create_errhandler must then fail with
 * MPI_ERR_NO_MEM under MPI_ERRORS_RETURN, and call a user error handler that itself calls MPI
 * (handler table included) instead of deadlocking on the table's lock. Exit status 0 on success.
 * No mutable globals (ranks are threads of one process). */
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

/* Handle indices of error handlers: 0 null, 1 and 2 predefined, user ones below 2^24 - 1. */
#define HANDLER_SLOTS (0xffffff - 3)

/* Records the error in the communicator's name (per rank), using MPI on the way: the handler
 * table (get, free) and the error codes. */
static void on_error(MPI_Comm *comm, int *code, ...) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int cls = -1;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm_get_errhandler(*comm, &eh);
    MPI_Errhandler_free(&eh);
    MPI_Error_class(*code, &cls);
    snprintf(name, sizeof name, "handled class %d", cls);
    MPI_Comm_set_name(*comm, name);
}

int main(int argc, char **argv) {
    int rank = -1, size = 0, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler user = MPI_ERRHANDLER_NULL;
    CHECK(MPI_Comm_create_errhandler(on_error, &user) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's handler is made: rank 0 knows how many are left */
    if (rank == 0) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        long made = 0;
        int rc = MPI_SUCCESS, cls = -1;
        while (made <= HANDLER_SLOTS && (rc = MPI_Comm_create_errhandler(on_error, &eh)) == MPI_SUCCESS) {
            ++made;
        }
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_NO_MEM && made == HANDLER_SLOTS - size);

        /* The same failure with a user handler on MPI_COMM_WORLD (errors of calls that have no
         * communicator go there): it runs, calls MPI, and the call returns the class. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, user);
        rc = MPI_Comm_create_errhandler(on_error, &eh);
        MPI_Error_class(rc, &cls);
        char name[MPI_MAX_OBJECT_NAME] = "", want[MPI_MAX_OBJECT_NAME];
        int len = 0;
        MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
        snprintf(want, sizeof want, "handled class %d", MPI_ERR_NO_MEM);
        CHECK(cls == MPI_ERR_NO_MEM && strcmp(name, want) == 0);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    MPI_Errhandler_free(&user);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && all == 0) {
        printf("errhandler_exhaustion: %d ranks OK\n", size);
    }
    return all != 0;
}
