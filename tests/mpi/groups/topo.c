/* Cartesian, graph and distributed graph topologies: results and error classes. Any rank count. */
#include <stdlib.h>

#include "check.h"

static int dims_case(int rank, int nnodes, int ndims, const int* in, const int* want) {
    int fails = 0;
    int d[8];
    for (int i = 0; i < ndims; ++i) {
        d[i] = in[i];
    }
    int rc = MPI_Dims_create(nnodes, ndims, d);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI_Dims_create(%d, %d) returned %d\n", rank, nnodes, ndims, rc);
        return 1;
    }
    for (int i = 0; i < ndims; ++i) {
        if (d[i] != want[i]) {
            fprintf(stderr, "rank %d: MPI_Dims_create(%d, %d): dims[%d] = %d, expected %d\n", rank, nnodes, ndims, i,
                    d[i], want[i]);
            ++fails;
        }
    }
    return fails;
}

static int test_dims(int rank) {
    int fails = 0;
    int z[4] = {0, 0, 0, 0};
    fails += dims_case(rank, 6, 2, z, (int[]){3, 2});
    fails += dims_case(rank, 7, 2, z, (int[]){7, 1});
    fails += dims_case(rank, 12, 3, z, (int[]){3, 2, 2});
    fails += dims_case(rank, 16, 3, z, (int[]){4, 2, 2});
    fails += dims_case(rank, 64, 3, z, (int[]){4, 4, 4});
    fails += dims_case(rank, 30, 2, z, (int[]){6, 5});
    fails += dims_case(rank, 1, 3, z, (int[]){1, 1, 1});
    fails += dims_case(rank, 24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
    fails += dims_case(rank, 6, 2, (int[]){2, 3}, (int[]){2, 3});
    fails += dims_case(rank, 2147483647, 2, z, (int[]){2147483647, 1});
    fails += dims_case(rank, 1, 0, z, z);
    CHECK_CLASS(MPI_Dims_create(5, 0, z), MPI_ERR_DIMS);
    int d[2] = {4, 0};
    CHECK_CLASS(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
    d[0] = 2;
    d[1] = 2;
    CHECK_CLASS(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
    d[0] = -1;
    CHECK_CLASS(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Dims_create(6, -1, d), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Dims_create(0, 2, z), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dims_create(6, 2, NULL), MPI_ERR_ARG);
    return fails;
}

static int test_cart(int rank, int size) {
    int fails = 0;
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2] = {-1, -1}, d2[2], p2[2], c2[2];
    int n = -1, r = -1, src = -2, dst = -2, st = -1;
    MPI_Comm cart, row, col, none, dup;
    MPI_Dims_create(size, 2, dims);
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    int me0 = rank / dims[1], me1 = rank % dims[1];
    CHECK_OK(MPI_Topo_test(cart, &st));
    CHECK(st == MPI_CART);
    CHECK_OK(MPI_Cartdim_get(cart, &n));
    CHECK(n == 2);
    CHECK_OK(MPI_Cart_get(cart, 2, d2, p2, c2));
    CHECK(d2[0] == dims[0] && d2[1] == dims[1] && p2[0] == 1 && p2[1] == 0);
    CHECK(c2[0] == me0 && c2[1] == me1);
    CHECK_OK(MPI_Cart_coords(cart, size - 1, 2, coords));
    CHECK(coords[0] == dims[0] - 1 && coords[1] == dims[1] - 1);
    CHECK_OK(MPI_Cart_rank(cart, c2, &r));
    CHECK(r == rank);
    coords[0] = me0 + 3 * dims[0]; /* periodic: wraps */
    coords[1] = me1;
    CHECK_OK(MPI_Cart_rank(cart, coords, &r));
    CHECK(r == rank);
    coords[0] = me0 - dims[0];
    CHECK_OK(MPI_Cart_rank(cart, coords, &r));
    CHECK(r == rank);
    coords[0] = me0;
    coords[1] = dims[1];
    CHECK_CLASS(MPI_Cart_rank(cart, coords, &r), MPI_ERR_ARG);

    /* shifts: dimension 0 periodic, dimension 1 not */
    CHECK_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == ((me0 + dims[0] - 1) % dims[0]) * dims[1] + me1);
    CHECK(dst == ((me0 + 1) % dims[0]) * dims[1] + me1);
    CHECK_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK(src == (me1 > 0 ? rank - 1 : MPI_PROC_NULL));
    CHECK(dst == (me1 < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL));
    CHECK_OK(MPI_Cart_shift(cart, 0, 0, &src, &dst));
    CHECK(src == rank && dst == rank);
    CHECK_OK(MPI_Cart_shift(cart, 0, -2 * dims[0] - 1, &src, &dst));
    CHECK(dst == ((me0 + dims[0] - 1) % dims[0]) * dims[1] + me1);
    /* a halo exchange along dimension 1 (MPI_PROC_NULL at the edges) */
    CHECK_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    int from = -7;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 0, &from, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE));
    CHECK(from == (src == MPI_PROC_NULL ? -7 : rank - 1));

    /* sub-grids */
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0}, keep_none[2] = {0, 0};
    CHECK_OK(MPI_Cart_sub(cart, keep_row, &row));
    CHECK_OK(MPI_Comm_size(row, &n));
    CHECK_OK(MPI_Comm_rank(row, &r));
    CHECK(n == dims[1] && r == me1);
    CHECK_OK(MPI_Cart_get(row, 1, d2, p2, c2));
    CHECK(d2[0] == dims[1] && p2[0] == 0 && c2[0] == me1);
    int v = r == 0 ? rank : -1;
    CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, 0, row));
    CHECK(v == me0 * dims[1]);
    CHECK_OK(MPI_Cart_sub(cart, keep_col, &col));
    CHECK_OK(MPI_Comm_size(col, &n));
    CHECK_OK(MPI_Comm_rank(col, &r));
    CHECK(n == dims[0] && r == me0);
    CHECK_OK(MPI_Cart_shift(col, 0, 1, &src, &dst));
    CHECK(dst == (me0 + 1) % dims[0]);
    CHECK_OK(MPI_Cart_sub(cart, keep_none, &none));
    CHECK_OK(MPI_Comm_size(none, &n));
    CHECK_OK(MPI_Cartdim_get(none, &st));
    CHECK(n == 1 && st == 0);

    /* a duplicate keeps the topology */
    CHECK_OK(MPI_Comm_dup(cart, &dup));
    CHECK_OK(MPI_Topo_test(dup, &st));
    CHECK(st == MPI_CART);
    CHECK_OK(MPI_Cart_get(dup, 2, d2, p2, c2));
    CHECK(d2[0] == dims[0] && c2[1] == me1);

    /* a grid smaller than the communicator */
    int small = size > 1 ? size - 1 : 1;
    MPI_Comm part;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &small, periods, 0, &part));
    if (rank < small) {
        CHECK_OK(MPI_Comm_size(part, &n));
        CHECK(n == small);
        MPI_Comm_free(&part);
    } else {
        CHECK(part == MPI_COMM_NULL);
    }
    CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &small, periods, &r));
    CHECK(r == (rank < small ? rank : MPI_UNDEFINED));

    /* bad arguments */
    int big = size + 1, zero = 0;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, periods, 0, &part), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &zero, periods, 0, &part), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &part), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_NULL, 2, dims, periods, 0, &part), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 1, &big, periods, &r), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_coords(cart, size, 2, coords), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_coords(cart, -1, 2, coords), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_coords(cart, 0, 1, coords), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_get(cart, 1, d2, p2, c2), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_shift(cart, 0, 1, NULL, &dst), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_sub(cart, NULL, &part), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_get(MPI_COMM_WORLD, 2, d2, p2, c2), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_SELF, &n), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graphdims_get(cart, &n, &r), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Topo_test(MPI_COMM_NULL, &st), MPI_ERR_COMM);
    CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED);

    MPI_Comm all[5] = {cart, row, col, none, dup};
    for (int i = 0; i < 5; ++i) {
        CHECK_OK(MPI_Comm_free(&all[i]));
    }
    return fails;
}

static int test_graph(int rank, int size) {
    int fails = 0;
    int* index = malloc(sizeof(int) * (size_t)size);
    int* edges = malloc(sizeof(int) * 2 * (size_t)size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int i = 0; i < size; ++i) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm g, part;
    int n = -1, m = -1, st = -1, nb[2] = {-1, -1};
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    CHECK_OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH);
    CHECK_OK(MPI_Graphdims_get(g, &n, &m));
    CHECK(n == size && m == 2 * size);
    CHECK_OK(MPI_Graph_neighbors_count(g, rank, &n));
    CHECK(n == 2);
    CHECK_OK(MPI_Graph_neighbors(g, rank, 2, nb));
    CHECK(nb[0] == left && nb[1] == right);
    int* gi = malloc(sizeof(int) * (size_t)size);
    int* ge = malloc(sizeof(int) * 2 * (size_t)size);
    CHECK_OK(MPI_Graph_get(g, size, 2 * size, gi, ge));
    CHECK(gi[size - 1] == 2 * size && ge[2 * size - 1] == 0 % size);
    /* ring exchange with the graph neighbours */
    int from = -1;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, nb[1], 1, &from, 1, MPI_INT, nb[0], 1, g, MPI_STATUS_IGNORE));
    CHECK(from == left);
    CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &n));
    CHECK(n == rank);
    /* the edges of a 1-node graph must stay in it: the ring's do not (unless size is 1) */
    CHECK_CLASS(MPI_Graph_map(MPI_COMM_WORLD, 1, index, edges, &n), size > 1 ? MPI_ERR_ARG : MPI_SUCCESS);
    int one_index = 0;
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, 1, &one_index, edges, 0, &part));
    if (rank == 0) {
        CHECK_OK(MPI_Graphdims_get(part, &n, &m));
        CHECK(n == 1 && m == 0);
        MPI_Comm_free(&part);
    } else {
        CHECK(part == MPI_COMM_NULL);
    }
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &part));
    CHECK(part == MPI_COMM_NULL);

    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &part), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &part), MPI_ERR_ARG);
    edges[0] = size;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &part), MPI_ERR_ARG);
    edges[0] = left;
    if (size > 1) {
        index[1] = 1;
        CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &part), MPI_ERR_ARG);
    }
    CHECK_CLASS(MPI_Graph_neighbors_count(g, size, &n), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_neighbors(g, -1, 2, nb), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_neighbors(g, 0, -1, nb), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_get(MPI_COMM_WORLD, 1, 1, gi, ge), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_shift(g, 0, 1, &n, &m), MPI_ERR_TOPOLOGY);
    CHECK_OK(MPI_Comm_free(&g));
    free(index);
    free(edges);
    free(gi);
    free(ge);
    return fails;
}

static int test_dist_graph(int rank, int size) {
    int fails = 0;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int in = -1, out = -1, w = -1, s[2] = {-1, -1}, sw[2] = {-1, -1}, d[2] = {-1, -1}, dw[2] = {-1, -1};
    int st = -1;
    MPI_Comm g;
    /* adjacent, weighted: in from left (weight left), out to right (weight rank) */
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &left, 1, &right, &rank, MPI_INFO_NULL, 0, &g));
    CHECK_OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_DIST_GRAPH);
    CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 1 && out == 1 && w == 1);
    CHECK_OK(MPI_Dist_graph_neighbors(g, 2, s, sw, 2, d, dw));
    CHECK(s[0] == left && sw[0] == left && d[0] == right && dw[0] == rank);
    CHECK_OK(MPI_Comm_free(&g));
    /* adjacent, unweighted, no in-edges */
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &g));
    CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 0 && out == 1 && w == 0);
    CHECK_OK(MPI_Comm_free(&g));

    /* general: rank 0 gives every edge i -> i+1 with weight i; the others give none */
    int* srcs = malloc(sizeof(int) * (size_t)size);
    int* degs = malloc(sizeof(int) * (size_t)size);
    int* dsts = malloc(sizeof(int) * (size_t)size);
    int* wts = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; ++i) {
        srcs[i] = i;
        degs[i] = 1;
        dsts[i] = (i + 1) % size;
        wts[i] = 100 + i;
    }
    if (rank == 0) {
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, size, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &g));
    } else {
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    }
    CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 1 && out == 1 && w == 1);
    CHECK_OK(MPI_Dist_graph_neighbors(g, 1, s, sw, 1, d, dw));
    CHECK(s[0] == left && sw[0] == 100 + left && d[0] == right && dw[0] == 100 + rank);
    int from = -1;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, d[0], 2, &from, 1, MPI_INT, s[0], 2, g, MPI_STATUS_IGNORE));
    CHECK(from == left);
    CHECK_OK(MPI_Comm_free(&g));
    /* general, unweighted: each rank gives its own out-edge and the in-edge from the right */
    int my_src[2] = {rank, right}, my_deg[2] = {1, 1}, my_dst[2] = {right, rank};
    CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, my_src, my_deg, my_dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 2 && out == 2 && w == 0);
    CHECK_OK(MPI_Dist_graph_neighbors(g, 2, s, MPI_UNWEIGHTED, 2, d, MPI_UNWEIGHTED));
    CHECK((s[0] == left && s[1] == right) || (s[0] == right && s[1] == left));
    CHECK((d[0] == left && d[1] == right) || (d[0] == right && d[1] == left));
    CHECK_OK(MPI_Comm_free(&g));

    /* no edges: weighted is each rank's own answer, false only for MPI_UNWEIGHTED; an empty
     * array, MPI_WEIGHTS_EMPTY and NULL (not MPI_UNWEIGHTED here) all mean weighted
     * (MPI 3.1 section 7.5.4: "MPI_WEIGHTS_EMPTY or any arbitrary array") */
    int* const no_edges[4] = {wts, MPI_WEIGHTS_EMPTY, NULL, MPI_UNWEIGHTED};
    for (int k = 0; k < 4; ++k) {
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, srcs, degs, dsts, no_edges[k], MPI_INFO_NULL, k % 2, &g));
        CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
        CHECK(in == 0 && out == 0 && w == (k < 3));
        CHECK_OK(MPI_Comm_free(&g));
    }
    /* rank 0 gives unweighted edges i -> i+1, the others nothing, with NULL weights */
    if (rank == 0) {
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, size, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    } else {
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, NULL, MPI_INFO_NULL, 0, &g));
    }
    CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 1 && out == 1 && w == (rank != 0));
    CHECK_OK(MPI_Comm_free(&g));

    int bad = size;
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, NULL, 0, NULL, NULL, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG);
    degs[0] = -1;
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG);
    degs[0] = 1;
    dsts[0] = -3;
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &w), MPI_ERR_TOPOLOGY);
    free(srcs);
    free(degs);
    free(dsts);
    free(wts);
    return fails;
}

int main(int argc, char** argv) {
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    fails += test_dims(rank);
    fails += test_cart(rank, size);
    fails += test_graph(rank, size);
    fails += test_dist_graph(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (fails == 0 && rank == 0) {
        printf("topo: OK (%d ranks)\n", size);
    }
    return fails != 0;
}
