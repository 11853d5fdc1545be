/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): one communicator per node, holding exactly the
 * ranks whose MPI_Get_processor_name is the caller's, ordered by key, then by rank in the parent
 * (here the key reverses the order). MPI_UNDEFINED gives MPI_COMM_NULL; a bad split type is
 * MPI_ERR_ARG. Nodes can be simulated on one machine with MPC_NODE_NAME per process.
 *
 *   comm_shared [EXPECTED_NODES]   (checks the number of nodes when given)
 *
 * Exit status 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { printf("rank %d: check failed line %d: %s\n", rank, __LINE__, #c); fails++; } } while (0)

int main(int argc, char** argv) {
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len);
    char* names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);

    /* Expected members: the ranks on my node, in decreasing rank order (key = -rank). */
    int* expect = malloc(sizeof(int) * (size_t)size);
    int nexpect = 0, nodes = 0;
    for (int r = size - 1; r >= 0; --r) {
        if (strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0) expect[nexpect++] = r;
    }
    for (int r = 0; r < size; ++r) { /* a node counts at its first rank */
        int first = 1;
        for (int q = 0; q < r; ++q) {
            if (strcmp(names + (size_t)q * MPI_MAX_PROCESSOR_NAME, names + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0) first = 0;
        }
        nodes += first;
    }
    MPI_Comm shm;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &shm) == MPI_SUCCESS);
    int ssize = 0, srank = -1;
    MPI_Comm_size(shm, &ssize);
    MPI_Comm_rank(shm, &srank);
    CHECK(ssize == nexpect);
    int* members = malloc(sizeof(int) * (size_t)ssize);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, shm);
    for (int i = 0; i < ssize && i < nexpect; ++i) CHECK(members[i] == expect[i]);
    CHECK(srank >= 0 && srank < ssize && members[srank] == rank);
    /* The communicator works: a sum over the node. */
    int one = 1, count = 0;
    MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, shm);
    CHECK(count == nexpect);
    MPI_Comm_free(&shm);
    if (argc > 1) CHECK(nodes == atoi(argv[1]));

    MPI_Comm none = MPI_COMM_WORLD;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none) == MPI_SUCCESS);
    CHECK(none == MPI_COMM_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad = MPI_COMM_NULL;
    int err = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &bad), cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_ARG);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("comm_shared: %d ranks on %d node(s) OK\n", size, nodes);
    free(names); free(expect); free(members);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
