/* Datatype names (MPI_Type_set_name / MPI_Type_get_name). Predefined and f90 types are one object
 * per rank in MPI's model: the even ranks rename MPI_INT, MPI_DOUBLE_INT and an f90 type, each
 * with a name of its own, and every rank must then see its own name, or the MPI name where it
 * gave none. Derived types keep the name set on them; long names are truncated to
 * MPI_MAX_OBJECT_NAME - 1 characters; the error classes. Any rank count; exit status 0 on
 * success. No mutable globals (ranks are threads of one process). */
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

/* The name `rank` sees on t must be `want`. */
#define CHECK_NAME(t, want)                                                                                   \
    do {                                                                                                      \
        char got_[MPI_MAX_OBJECT_NAME] = "?";                                                                 \
        int len_ = -1;                                                                                        \
        int rc_ = MPI_Type_get_name((t), got_, &len_);                                                        \
        if (rc_ != MPI_SUCCESS || strcmp(got_, (want)) != 0 || len_ != (int)strlen(want)) {                  \
            fprintf(stderr, "rank %d: line %d: name of %s is \"%s\" (%d), expected \"%s\"\n", rank, __LINE__, \
                    #t, got_, len_, (want));                                                                  \
            ++fails;                                                                                          \
        }                                                                                                     \
    } while (0)

int main(int argc, char **argv) {
    int rank = -1, size = 0, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int renames = rank % 2 == 0;
    char mine[MPI_MAX_OBJECT_NAME], mine_pair[MPI_MAX_OBJECT_NAME], mine_f90[MPI_MAX_OBJECT_NAME];
    snprintf(mine, sizeof mine, "int of rank %d", rank);
    snprintf(mine_pair, sizeof mine_pair, "pair of rank %d", rank);
    snprintf(mine_f90, sizeof mine_f90, "real of rank %d", rank);

    MPI_Datatype f90 = MPI_DATATYPE_NULL, vec = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f90) == MPI_SUCCESS);
    char f90_name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Type_get_name(f90, f90_name, &len); /* the name of the type it stands for */
    CHECK(len > 0 && strncmp(f90_name, "MPI_", 4) == 0);

    /* Every rank's derived type is its own object, with its own name. */
    CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec) == MPI_SUCCESS);
    CHECK_NAME(vec, "");
    char vec_name[MPI_MAX_OBJECT_NAME];
    snprintf(vec_name, sizeof vec_name, "vector of rank %d", rank);
    CHECK(MPI_Type_set_name(vec, vec_name) == MPI_SUCCESS);

    if (renames) {
        CHECK(MPI_Type_set_name(MPI_INT, "first name") == MPI_SUCCESS);
        CHECK_NAME(MPI_INT, "first name");
        CHECK(MPI_Type_set_name(MPI_INT, mine) == MPI_SUCCESS);
        CHECK(MPI_Type_set_name(MPI_DOUBLE_INT, mine_pair) == MPI_SUCCESS);
        CHECK(MPI_Type_set_name(f90, mine_f90) == MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every renaming is done before anyone looks */
    CHECK_NAME(MPI_INT, renames ? mine : "MPI_INT");
    CHECK_NAME(MPI_DOUBLE_INT, renames ? mine_pair : "MPI_DOUBLE_INT");
    CHECK_NAME(f90, renames ? mine_f90 : f90_name);
    CHECK_NAME(MPI_FLOAT, "MPI_FLOAT");
    CHECK_NAME(vec, vec_name);
    MPI_Barrier(MPI_COMM_WORLD);

    /* An empty name is a name; a long one is truncated. */
    char longname[2 * MPI_MAX_OBJECT_NAME];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char cut[MPI_MAX_OBJECT_NAME];
    memcpy(cut, longname, MPI_MAX_OBJECT_NAME - 1);
    cut[MPI_MAX_OBJECT_NAME - 1] = '\0';
    CHECK(MPI_Type_set_name(MPI_SHORT, longname) == MPI_SUCCESS);
    CHECK_NAME(MPI_SHORT, cut);
    CHECK(MPI_Type_set_name(MPI_SHORT, "") == MPI_SUCCESS);
    CHECK_NAME(MPI_SHORT, "");
    CHECK(MPI_Type_set_name(vec, longname) == MPI_SUCCESS);
    CHECK_NAME(vec, cut);

    /* Errors. */
    int cls = -1;
    MPI_Error_class(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), &cls);
    CHECK(cls == MPI_ERR_TYPE);
    MPI_Error_class(MPI_Type_set_name(MPI_INT, NULL), &cls);
    CHECK(cls == MPI_ERR_ARG);
    MPI_Error_class(MPI_Type_get_name(MPI_INT, NULL, &len), &cls);
    CHECK(cls == MPI_ERR_ARG);
    MPI_Type_free(&vec);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && all == 0) {
        printf("type_names: %d ranks OK\n", size);
    }
    return all != 0;
}
