/* MPI_Intercomm_create with bad arguments under MPI_ERRORS_RETURN: every member of both groups
 * must return (none may be left waiting for its leader) with the expected error class, and
 * *newintercomm must be MPI_COMM_NULL. The even and the odd ranks of MPI_COMM_WORLD form the two
 * groups (leaders: world ranks 0 and 1). Covered: an invalid peer communicator, an invalid
 * remote leader and a remote leader inside the local group at both leaders; a null newintercomm
 * pointer at one member of one group (the other group fails too); an invalid local leader and a
 * negative tag; overlapping groups {0, 1} and {1, 2} (world rank 1 calls for both from two
 * threads). A valid call with the same tag must then still work. Needs 2 ranks or more; exit
 * status 0 on success. No mutable globals (ranks are threads of one process). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "rank %d: line %d: check failed: %s\n", rank, __LINE__, #cond); \
            ++fails;                                                                        \
        }                                                                                   \
    } while (0)

/* `call` must return error class `cls`. */
#define CHECK_CLASS(call, cls)                                                                                   \
    do {                                                                                                         \
        int e_ = (call), c_ = -1;                                                                                \
        MPI_Error_class(e_, &c_);                                                                                \
        if (c_ != (cls)) {                                                                                       \
            fprintf(stderr, "rank %d: line %d: %s returned class %d, expected %s\n", rank, __LINE__, #call, c_, \
                    #cls);                                                                                       \
            ++fails;                                                                                             \
        }                                                                                                        \
    } while (0)

#define TAG 7

/* One MPI_Intercomm_create call of the overlap case, run by a thread of world rank 1. */
typedef struct {
    MPI_Comm local;
    int local_leader, remote_leader, err;
    MPI_Comm out;
} create_args;

static void *create_thread(void *p) {
    create_args *a = p;
    a->err = MPI_Intercomm_create(a->local, a->local_leader, MPI_COMM_WORLD, a->remote_leader, TAG, &a->out);
    return NULL;
}

/* Groups {0, 1} and {1, 2} (leaders 0 and 2): both leaders see the overlap, and every call,
 * both of world rank 1's included, fails with MPI_ERR_COMM. Needs 3 ranks. */
static int overlap(int rank, int size) {
    int fails = 0;
    MPI_Comm a, b;
    MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &a);
    MPI_Comm_split(MPI_COMM_WORLD, rank >= 1 && rank <= 2 ? 0 : MPI_UNDEFINED, rank, &b);
    MPI_Comm out = MPI_COMM_WORLD;
    if (size < 3 || rank > 2) {
        /* not part of the case */
    } else if (rank == 0) {
        CHECK_CLASS(MPI_Intercomm_create(a, 0, MPI_COMM_WORLD, 2, TAG, &out), MPI_ERR_COMM);
        CHECK(out == MPI_COMM_NULL);
    } else if (rank == 2) {
        CHECK_CLASS(MPI_Intercomm_create(b, 1, MPI_COMM_WORLD, 0, TAG, &out), MPI_ERR_COMM);
        CHECK(out == MPI_COMM_NULL);
    } else {
        create_args in_b = {b, 1, 0, MPI_SUCCESS, MPI_COMM_WORLD};
        pthread_t t;
        int started = pthread_create(&t, NULL, create_thread, &in_b) == 0;
        CHECK(started);
        if (started) {
            CHECK_CLASS(MPI_Intercomm_create(a, 0, MPI_COMM_WORLD, 2, TAG, &out), MPI_ERR_COMM);
            pthread_join(t, NULL);
            CHECK_CLASS(in_b.err, MPI_ERR_COMM);
            CHECK(out == MPI_COMM_NULL && in_b.out == MPI_COMM_NULL);
        }
    }
    if (a != MPI_COMM_NULL) {
        MPI_Comm_free(&a);
    }
    if (b != MPI_COMM_NULL) {
        MPI_Comm_free(&b);
    }
    return fails;
}

int main(int argc, char **argv) {
    int provided = -1, rank = -1, size = 0, fails = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided != MPI_THREAD_MULTIPLE || size < 2) {
        fprintf(stderr, "needs MPI_THREAD_MULTIPLE and 2 ranks or more\n");
        return 1;
    }
    const int odd = rank % 2;
    const int lsize = odd ? size / 2 : (size + 1) / 2;
    const int remote = odd ? 0 : 1; /* the other leader's world rank */
    MPI_Comm half, inter = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, odd, rank, &half); /* inherits MPI_ERRORS_RETURN */

    /* Errors found at the leaders only: the peer communicator, the remote leader. */
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_NULL, remote, TAG, &inter), MPI_ERR_COMM);
    CHECK(inter == MPI_COMM_NULL);
    inter = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, size, TAG, &inter), MPI_ERR_RANK);
    CHECK(inter == MPI_COMM_NULL);
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, -1, TAG, &inter), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, odd, TAG, &inter), MPI_ERR_RANK); /* own group */
    CHECK_CLASS(MPI_Intercomm_create(half, 0, half, 0, TAG, &inter), MPI_ERR_RANK); /* peer: own group */

    /* A null newintercomm pointer at one member (the last odd rank; with 2 ranks, the odd leader),
     * then at the even leader: both groups fail. */
    int last_odd = size % 2 == 0 ? size - 1 : size - 2;
    inter = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, TAG, rank == last_odd ? NULL : &inter),
                MPI_ERR_ARG);
    CHECK(rank == last_odd || inter == MPI_COMM_NULL);
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, TAG, rank == 0 ? NULL : &inter), MPI_ERR_ARG);

    /* Errors every member finds on its own. */
    CHECK_CLASS(MPI_Intercomm_create(half, lsize, MPI_COMM_WORLD, remote, TAG, &inter), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Intercomm_create(half, -1, MPI_COMM_WORLD, remote, TAG, &inter), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, -3, &inter), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_NULL, 0, MPI_COMM_WORLD, remote, TAG, &inter), MPI_ERR_COMM);

    fails += overlap(rank, size);

    /* Nothing was left over: a valid call with the same tag works. */
    CHECK_CLASS(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, TAG, &inter), MPI_SUCCESS);
    int rsize = -1, lrank = -1;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &lrank);
    CHECK(rsize == size - lsize && lrank == rank / 2);
    if (lrank < rsize) {
        int out = rank, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, lrank, 1, &in, 1, MPI_INT, lrank, 1, inter, MPI_STATUS_IGNORE);
        CHECK(in == (odd ? rank - 1 : rank + 1));
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);

    /* Every rank's verdict: a failing rank must not leave the others waiting. */
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && all == 0) {
        printf("intercomm_errors: %d ranks OK\n", size);
    }
    return all != 0;
}
