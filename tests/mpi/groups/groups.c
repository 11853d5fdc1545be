/* Groups, communicators from groups, split_type, idup and the intercommunicator queries:
 * results and error classes. Any rank count. */
#include <limits.h>
#include <stdlib.h>

#include "check.h"

static int test_group_ops(int rank, int size) {
    int fails = 0;
    int n = -1, r = -1, cmp = -1;
    int* ranks = malloc(sizeof(int) * (size_t)size);
    MPI_Group world, rev, odd, even, even2, u, x, empty;

    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_OK(MPI_Group_size(world, &n));
    CHECK(n == size);
    CHECK_OK(MPI_Group_rank(world, &r));
    CHECK(r == rank);

    for (int i = 0; i < size; ++i) {
        ranks[i] = size - 1 - i;
    }
    CHECK_OK(MPI_Group_incl(world, size, ranks, &rev));
    CHECK_OK(MPI_Group_rank(rev, &r));
    CHECK(r == size - 1 - rank);
    CHECK_OK(MPI_Group_compare(world, rev, &cmp));
    CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT));
    CHECK_OK(MPI_Group_compare(world, world, &cmp));
    CHECK(cmp == MPI_IDENT);

    /* excl of the even ranks leaves the odd ones */
    int neven = (size + 1) / 2;
    for (int i = 0; i < neven; ++i) {
        ranks[i] = 2 * i;
    }
    CHECK_OK(MPI_Group_excl(world, neven, ranks, &odd));
    CHECK_OK(MPI_Group_size(odd, &n));
    CHECK(n == size / 2);
    CHECK_OK(MPI_Group_rank(odd, &r));
    CHECK(r == (rank % 2 ? rank / 2 : MPI_UNDEFINED));
    CHECK_OK(MPI_Group_incl(world, neven, ranks, &even));

    /* ranges: (0, size-1, 2) are the evens; excluding (1, size-1, 2) leaves them too */
    int rg[2][3] = {{0, size - 1, 2}, {0, 0, 1}};
    CHECK_OK(MPI_Group_range_incl(world, 1, rg, &even2));
    CHECK_OK(MPI_Group_compare(even, even2, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&even2);
    if (size > 1) {
        rg[0][0] = 1;
        CHECK_OK(MPI_Group_range_excl(world, 1, rg, &even2));
        CHECK_OK(MPI_Group_compare(even, even2, &cmp));
        CHECK(cmp == MPI_IDENT);
        MPI_Group_free(&even2);
    }
    rg[0][0] = size - 1;
    rg[0][1] = 0;
    rg[0][2] = -1;
    CHECK_OK(MPI_Group_range_incl(world, 1, rg, &x));
    CHECK_OK(MPI_Group_compare(x, rev, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&x);

    /* set operations */
    CHECK_OK(MPI_Group_union(odd, even, &u));
    CHECK_OK(MPI_Group_size(u, &n));
    CHECK(n == size);
    CHECK_OK(MPI_Group_rank(u, &r));
    CHECK(r == (rank % 2 ? rank / 2 : size / 2 + rank / 2));
    CHECK_OK(MPI_Group_compare(u, world, &cmp));
    CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT));
    CHECK_OK(MPI_Group_intersection(world, odd, &x));
    CHECK_OK(MPI_Group_compare(x, odd, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&x);
    CHECK_OK(MPI_Group_difference(world, odd, &x));
    CHECK_OK(MPI_Group_compare(x, even, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&x);
    CHECK_OK(MPI_Group_intersection(odd, even, &empty));
    CHECK(empty == MPI_GROUP_EMPTY);
    CHECK_OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    CHECK(n == 0);
    CHECK_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(r == MPI_UNDEFINED);
    CHECK_OK(MPI_Group_compare(odd, even, &cmp));
    CHECK(cmp == MPI_UNEQUAL);

    /* translate: world -> reversed, world -> odd */
    int in[3] = {0, size - 1, MPI_PROC_NULL}, out[3] = {-5, -5, -5};
    CHECK_OK(MPI_Group_translate_ranks(world, 3, in, rev, out));
    CHECK(out[0] == size - 1 && out[1] == 0 && out[2] == MPI_PROC_NULL);
    CHECK_OK(MPI_Group_translate_ranks(world, 2, in, odd, out));
    CHECK(out[0] == MPI_UNDEFINED);
    CHECK(out[1] == ((size - 1) % 2 ? (size - 1) / 2 : MPI_UNDEFINED));

    /* bad arguments */
    int bad = size;
    int twice[2] = {0, 0};
    CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_rank(MPC_HANDLE(MPC_HANDLE_KIND_GROUP, 99999), &n), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_size(MPI_COMM_WORLD, &n), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_size(world, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_incl(world, 1, &bad, &x), MPI_ERR_RANK);
    bad = -1;
    CHECK_CLASS(MPI_Group_incl(world, 1, &bad, &x), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_excl(world, 1, &bad, &x), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_incl(world, -1, ranks, &x), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_incl(world, size + 1, ranks, &x), MPI_ERR_ARG);
    if (size > 1) {
        CHECK_CLASS(MPI_Group_incl(world, 2, twice, &x), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_excl(world, 2, twice, &x), MPI_ERR_RANK);
        int wrong_way[1][3] = {{size - 1, 0, 1}};
        CHECK_CLASS(MPI_Group_range_incl(world, 1, wrong_way, &x), MPI_ERR_ARG);
        int overlap[2][3] = {{0, 1, 1}, {1, 1, 1}};
        CHECK_CLASS(MPI_Group_range_incl(world, 2, overlap, &x), MPI_ERR_RANK);
    }
    int zero_stride[1][3] = {{0, 0, 0}};
    CHECK_CLASS(MPI_Group_range_incl(world, 1, zero_stride, &x), MPI_ERR_ARG);
    int outside[1][3] = {{0, size, 1}};
    CHECK_CLASS(MPI_Group_range_excl(world, 1, outside, &x), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_range_incl(world, -2, outside, &x), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &x), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_intersection(world, world, NULL), MPI_ERR_ARG);
    in[0] = size;
    CHECK_CLASS(MPI_Group_translate_ranks(world, 1, in, rev, out), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_translate_ranks(world, -1, in, rev, out), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_compare(world, MPI_GROUP_NULL, &cmp), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_compare(world, world, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_group(MPI_COMM_NULL, &x), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_group(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    x = MPI_GROUP_NULL;
    CHECK_CLASS(MPI_Group_free(&x), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_free(NULL), MPI_ERR_ARG);

    /* MPI_COMM_SELF's group is the caller */
    CHECK_OK(MPI_Comm_group(MPI_COMM_SELF, &x));
    CHECK_OK(MPI_Group_size(x, &n));
    CHECK_OK(MPI_Group_rank(x, &r));
    CHECK(n == 1 && r == 0);
    in[0] = 0;
    CHECK_OK(MPI_Group_translate_ranks(x, 1, in, world, out));
    CHECK(out[0] == rank);
    CHECK_OK(MPI_Group_free(&x));

    MPI_Group all[5] = {world, rev, odd, even, u};
    for (int i = 0; i < 5; ++i) {
        CHECK_OK(MPI_Group_free(&all[i]));
        CHECK(all[i] == MPI_GROUP_NULL);
    }
    CHECK_OK(MPI_Group_free(&empty));                         /* MPI_GROUP_EMPTY may be freed */
    CHECK(empty == MPI_GROUP_NULL);
    free(ranks);
    return fails;
}

/* Checks a communicator: its size and rank, a broadcast and a ring exchange on it. */
static int check_comm(int rank, MPI_Comm c, int want_size, int want_rank) {
    int fails = 0, n = -1, r = -1;
    CHECK_OK(MPI_Comm_size(c, &n));
    CHECK_OK(MPI_Comm_rank(c, &r));
    CHECK(n == want_size && r == want_rank);
    if (n != want_size || r != want_rank) {
        return fails;
    }
    int v = r == 0 ? 1000 + rank : -1;
    CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, 0, c));
    int from = -1;
    CHECK_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 3, &from, 1, MPI_INT, (r + n - 1) % n, 3, c,
                          MPI_STATUS_IGNORE));
    CHECK(from == (r + n - 1) % n);
    return fails;
}

static int test_comm_create(int rank, int size) {
    int fails = 0;
    MPI_Group world, odd, even, rev, mine;
    MPI_Comm c = MPI_COMM_NULL, c2 = MPI_COMM_NULL;
    int* ranks = malloc(sizeof(int) * (size_t)size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int neven = (size + 1) / 2;
    for (int i = 0; i < neven; ++i) {
        ranks[i] = 2 * i;
    }
    MPI_Group_incl(world, neven, ranks, &even);
    MPI_Group_excl(world, neven, ranks, &odd);
    for (int i = 0; i < size; ++i) {
        ranks[i] = size - 1 - i;
    }
    MPI_Group_incl(world, size, ranks, &rev);

    /* the same group everywhere: non-members get MPI_COMM_NULL */
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, odd, &c));
    if (rank % 2) {
        fails += check_comm(rank, c, size / 2, rank / 2);
        CHECK_OK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL);
    }
    /* disjoint groups (MPI 2.2): everybody gets a communicator */
    mine = rank % 2 ? odd : even;
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, mine, &c));
    fails += check_comm(rank, c, rank % 2 ? size / 2 : neven, rank / 2);
    /* a group that is not a subgroup of c */
    CHECK_CLASS(MPI_Comm_create(c, world, &c2), size > 1 ? MPI_ERR_GROUP : MPI_SUCCESS);
    if (size == 1) {
        MPI_Comm_free(&c2);
    }
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL);
    /* from a derived communicator: reversed ranks */
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    CHECK_OK(MPI_Comm_create(c2, rev, &c));
    fails += check_comm(rank, c, size, size - 1 - rank);
    CHECK_OK(MPI_Comm_free(&c));

    /* create_group: only the members call */
    if (rank % 2) {
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odd, 7, &c));
        fails += check_comm(rank, c, size / 2, rank / 2);
        CHECK_OK(MPI_Comm_free(&c));
    }
    CHECK_OK(MPI_Comm_create_group(c2, rev, INT_MAX, &c));
    fails += check_comm(rank, c, size, size - 1 - rank);
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, rank % 2 ? even : odd, 1, &c)); /* not a member */
    CHECK(c == MPI_COMM_NULL);

    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_NULL, world, &c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, world, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, 12345, 0, &c), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_SELF, world, 0, &c), size > 1 ? MPI_ERR_GROUP : MPI_SUCCESS);
    if (size == 1) {
        MPI_Comm_free(&c);
    }

    /* split_type: every rank shares this process's memory */
    CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c));
    fails += check_comm(rank, c, size, size - 1 - rank);
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Comm_split_type(c2, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL);
    } else {
        fails += check_comm(rank, c, neven, rank / 2);
        CHECK_OK(MPI_Comm_free(&c));
    }
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 42, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPC_HANDLE(MPC_HANDLE_KIND_INFO, 9999),
                                    &c),
                MPI_ERR_INFO);
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_NULL, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c), MPI_ERR_COMM);

    /* idup */
    MPI_Request req = MPI_REQUEST_NULL;
    int cmp = -1, flag = -1;
    CHECK_OK(MPI_Comm_idup(c2, &c, &req));
    CHECK(req != MPI_REQUEST_NULL);
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL);
    fails += check_comm(rank, c, size, rank);
    CHECK_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    CHECK_OK(MPI_Comm_free(&c));
    /* idup does not block: the other ranks start three duplications (and a blocking dup in
     * between), then send synchronously to rank 0, which calls its duplications only once it
     * has received from all of them (MPICH's comm_idup); each result must pair with the same
     * call on every rank: a different sum on each. */
    {
        MPI_Comm d[4];
        MPI_Request rq[3];
        int token = rank;
        if (rank == 0) {
            for (int i = 1; i < size; ++i) {
                CHECK_OK(MPI_Recv(&token, 1, MPI_INT, i, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(token == i);
            }
        }
        CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &rq[0]));
        CHECK_OK(MPI_Comm_idup(c2, &d[1], &rq[1]));
        if (rank != 0) {
            CHECK_OK(MPI_Ssend(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
        }
        CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d[3]));
        CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[2], &rq[2]));
        CHECK_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 4; ++k) {
            int in = rank + 1000 * k, sum = -1;
            CHECK_OK(MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, d[k]));
            CHECK(sum == size * (size - 1) / 2 + 1000 * k * size);
            fails += check_comm(rank, d[k], size, rank);
            CHECK_OK(MPI_Comm_free(&d[k]));
        }
    }
    CHECK_CLASS(MPI_Comm_idup(MPI_COMM_WORLD, &c, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_idup(MPI_COMM_NULL, &c, &req), MPI_ERR_COMM);

    /* dup_with_info, set/get_info */
    MPI_Info info;
    int nkeys = -1;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    CHECK_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    fails += check_comm(rank, c, size, rank);
    CHECK_OK(MPI_Comm_set_info(c, info));
    MPI_Info used;
    CHECK_OK(MPI_Comm_get_info(c, &used));
    CHECK_OK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys == 0);
    MPI_Info_free(&used);
    CHECK_CLASS(MPI_Comm_set_info(c, MPI_INFO_NULL), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPC_HANDLE(MPC_HANDLE_KIND_INFO, 9999), &c2), MPI_ERR_INFO);
    CHECK_OK(MPI_Comm_free(&c));
    MPI_Info_free(&info);

    /* no intercommunicators */
    CHECK_OK(MPI_Comm_test_inter(c2, &flag));
    CHECK(flag == 0);
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &flag), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &mine), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_test_inter(MPI_COMM_NULL, &flag), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_test_inter(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);

    CHECK_OK(MPI_Comm_free(&c2));
    MPI_Group_free(&world);
    MPI_Group_free(&odd);
    MPI_Group_free(&even);
    MPI_Group_free(&rev);
    free(ranks);
    return fails;
}

int main(int argc, char** argv) {
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    fails += test_group_ops(rank, size);
    fails += test_comm_create(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (fails == 0 && rank == 0) {
        printf("groups: OK (%d ranks)\n", size);
    }
    return fails != 0;
}
