/* Intercommunicators: the even and the odd ranks of MPI_COMM_WORLD form two groups joined by
 * MPI_Intercomm_create; sizes, remote sizes and groups, point-to-point between the groups
 * (ranks name the remote group), MPI_Intercomm_merge in both orders, and errors (collectives on
 * intercommunicators: tests/mpi/coll/coll_inter.c). Needs 2 ranks or more. Exit status 0 on
 * success. */
#include <mpi.h>
#include <stdio.h>

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            printf("rank %d: line %d: check failed: %s\n", rank, __LINE__, #c); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int odd = rank % 2;
    int evens = (size + 1) / 2, odds = size / 2;
    MPI_Comm half, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, odd, rank, &half);
    /* leaders: world rank 0 (even group) and world rank 1 (odd group) */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, odd ? 0 : 1, 77, &inter);
    int flag = 0, lsize = -1, rsize = -1, lrank = -1;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &lrank);
    CHECK(flag == 1 && lsize == (odd ? odds : evens) && rsize == (odd ? evens : odds) && lrank == rank / 2);
    MPI_Group rg;
    MPI_Comm_remote_group(inter, &rg);
    int gsize = -1;
    MPI_Group_size(rg, &gsize);
    CHECK(gsize == rsize);
    MPI_Group_free(&rg);

    /* point-to-point across: my local rank r talks to remote rank r (when it exists) */
    if (lrank < rsize) {
        int out = rank, in = -1;
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_INT, lrank, 5, &in, 1, MPI_INT, lrank, 5, inter, &st);
        CHECK(in == (odd ? 2 * lrank : 2 * lrank + 1) && st.MPI_SOURCE == lrank);
    }
    /* every remote rank sends to remote rank 0 of the other side: receive with MPI_ANY_SOURCE */
    int one = rank;
    MPI_Request rq;
    MPI_Isend(&one, 1, MPI_INT, 0, 6, inter, &rq);
    if (lrank == 0) {
        for (int i = 0; i < rsize; ++i) {
            int v = -1;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 6, inter, &st);
            CHECK(v == (odd ? 2 * st.MPI_SOURCE : 2 * st.MPI_SOURCE + 1));
        }
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    /* merge: the odd group high (evens first), then the even group high (odds first) */
    int mrank = -1, msize = -1;
    MPI_Intercomm_merge(inter, odd, &merged);
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size && mrank == (odd ? evens + rank / 2 : rank / 2));
    int sum = 0;
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(sum == size * (size - 1) / 2);
    MPI_Comm_free(&merged);
    MPI_Intercomm_merge(inter, !odd, &merged);
    MPI_Comm_rank(merged, &mrank);
    CHECK(mrank == (odd ? rank / 2 : odds + rank / 2));
    MPI_Comm_free(&merged);

    /* errors */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    CHECK(MPI_Send(&one, 1, MPI_INT, rsize, 0, inter) == MPI_ERR_RANK); /* ranks name the remote group */
    CHECK(MPI_Bcast(&one, 1, MPI_INT, rsize, inter) == MPI_ERR_ROOT);   /* roots name the remote group */
    CHECK(MPI_Scan(&one, &flag, 1, MPI_INT, MPI_SUM, inter) == MPI_ERR_COMM); /* not on intercommunicators */
    CHECK(MPI_Barrier(inter) == MPI_SUCCESS);                           /* collectives are (coll/coll_inter.c) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_remote_size(MPI_COMM_WORLD, &rsize) == MPI_ERR_COMM);
    CHECK(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &merged) == MPI_ERR_COMM);

    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("intercomm: %d ranks OK\n", size);
    return 0;
}
