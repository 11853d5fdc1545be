/* Point-to-point with derived datatypes (one copy layout to layout in-process): a matrix
 * column (MPI_Type_vector) sent to a contiguous buffer and to another column, eager and
 * rendezvous sizes, receive before and after the send, holes of the receive layout left
 * untouched, a struct type, truncation, MPI_Get_count / MPI_Get_elements, and an uncommitted
 * type rejected with MPI_ERR_TYPE. Exit status 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            printf("rank %d: line %d: check failed: %s\n", rank, __LINE__, #c); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

static int column_exchange(int rank, int size, int n) {
    /* n rows x W columns of doubles (the row stride is what makes it a column, W keeps the
     * memory small at 64 ranks); send column 1, receive into column 2 of the neighbour's */
    enum { W = 5 };
    double *a = malloc(sizeof(double) * (size_t)n * W);
    for (int i = 0; i < n * W; ++i) a[i] = -1.0;
    for (int i = 0; i < n; ++i) a[i * W + 1] = rank * 1e6 + i;
    MPI_Datatype col;
    MPI_Type_vector(n, 1, W, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r;
    MPI_Irecv(&a[2], 1, col, left, n, MPI_COMM_WORLD, &r); /* posted before the send */
    MPI_Send(&a[1], 1, col, right, n, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int cnt = -1;
    MPI_Get_count(&st, col, &cnt);
    CHECK(cnt == 1);
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == n);
    for (int i = 0; i < n; ++i) {
        CHECK(a[i * W + 2] == left * 1e6 + i); /* received column */
        CHECK(a[i * W + 0] == -1.0 && a[i * W + 3] == -1.0 && a[i * W + 4] == -1.0); /* holes untouched */
    }
    /* column into a contiguous buffer, receive posted after the send (eager or rendezvous; a
     * large standard send may wait for its receive, hence Isend) */
    double *c = malloc(sizeof(double) * (size_t)n);
    MPI_Isend(&a[1], 1, col, right, n + 1, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(c, n, MPI_DOUBLE, left, n + 1, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; ++i) CHECK(c[i] == left * 1e6 + i);
    MPI_Type_free(&col);
    CHECK(col == MPI_DATATYPE_NULL);
    free(a);
    free(c);
    return 0;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* a 4-double column is eager; a 4096-double column (32 KiB) goes rendezvous */
    if (column_exchange(rank, size, 4) || column_exchange(rank, size, 4096)) return 1;

    /* struct {int; double} x 3 -> bytes and back */
    struct rec { int i; double d; } out[3] = {{rank, rank + 0.5}, {2 * rank, 1.5}, {3, 2.5}}, in[3];
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, sizeof(int) <= 4 ? 8 : sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, rt, rt_resized;
    MPI_Type_create_struct(2, bl, disp, types, &rt);
    MPI_Type_create_resized(rt, 0, sizeof(struct rec), &rt_resized);
    MPI_Type_commit(&rt_resized);
    MPI_Sendrecv(out, 3, rt_resized, right, 5, in, 3, rt_resized, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(in[0].i == left && in[0].d == left + 0.5 && in[1].i == 2 * left && in[2].d == 2.5);
    MPI_Status st;
    unsigned char packed[3 * 12];
    MPI_Sendrecv(out, 3, rt_resized, right, 6, packed, (int)sizeof(packed), MPI_BYTE, left, 6, MPI_COMM_WORLD, &st);
    int cnt = -1;
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == 36);
    MPI_Get_elements(&st, rt_resized, &cnt);
    CHECK(cnt == 6); /* 3 ints + 3 doubles */

    /* truncation with a derived receive type: room for 2 records, 3 sent */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct rec small[3] = {{-1, -1}, {-1, -1}, {-7, -7}};
    MPI_Request r;
    MPI_Irecv(small, 2, rt_resized, left, 7, MPI_COMM_WORLD, &r);
    MPI_Send(out, 3, rt_resized, right, 7, MPI_COMM_WORLD);
    int e = MPI_Wait(&r, &st);
    CHECK(e == MPI_ERR_TRUNCATE || st.MPI_ERROR == MPI_ERR_TRUNCATE);
    CHECK(small[1].i == 2 * left && small[2].i == -7 && small[2].d == -7);
    MPI_Type_free(&rt);
    MPI_Type_free(&rt_resized);

    /* an uncommitted type cannot communicate */
    MPI_Datatype raw;
    MPI_Type_contiguous(2, MPI_INT, &raw);
    int two[2] = {0, 0};
    CHECK(MPI_Send(two, 1, raw, right, 8, MPI_COMM_WORLD) == MPI_ERR_TYPE);
    MPI_Type_free(&raw);
    CHECK(MPI_Send(two, 1, raw, right, 8, MPI_COMM_WORLD) == MPI_ERR_TYPE); /* freed handle */

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("p2p_datatypes: %d ranks OK\n", size);
    return 0;
}
