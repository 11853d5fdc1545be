/* 2-D heat diffusion (Jacobi iteration of the Laplace equation) on an N x N grid split into a
 * PX x PY grid of blocks, one per rank.
 *  - halo exchange with non-blocking point-to-point (MPI_Irecv / MPI_Isend / MPI_Waitall);
 *  - the west/east halos are matrix columns, sent and received with a derived datatype
 *    (MPI_Type_vector), without packing by hand;
 *  - a convergence test with MPI_Allreduce on the residual every CHECK_EVERY iterations.
 * Rank 0 then gathers the result and compares it with a serial run of the same iterations.
 * Exit status 0 when the parallel and serial solutions agree.
 *
 * Usage: heat [N [MAX_ITERS]]   (defaults: 128 20000; converges after about 16,000). The top edge is held at 100 degrees,
 * the other edges at 0. Written for any MPI: compile with mpc_cc, mpicc.openmpi, mpicc.mpich. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-4
#define CHECK_EVERY 50

/* One Jacobi sweep over the interior of a (rows+2) x (cols+2) block; returns the largest change. */
static double sweep(const double *u, double *v, int rows, int cols) {
    int w = cols + 2;
    double diff = 0.0;
    for (int i = 1; i <= rows; ++i) {
        for (int j = 1; j <= cols; ++j) {
            double x = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
            double d = fabs(x - u[i * w + j]);
            if (d > diff) diff = d;
            v[i * w + j] = x;
        }
    }
    return diff;
}

/* Fixed boundary: global row 0 (top) at 100, every other edge at 0. */
static void set_boundary(double *u, int rows, int cols, int top, int bottom, int left, int right) {
    int w = cols + 2;
    if (top)
        for (int j = 0; j < w; ++j) u[j] = 100.0;
    if (bottom)
        for (int j = 0; j < w; ++j) u[(rows + 1) * w + j] = 0.0;
    if (left)
        for (int i = 1; i <= rows; ++i) u[i * w] = 0.0;
    if (right)
        for (int i = 1; i <= rows; ++i) u[i * w + cols + 1] = 0.0;
}

/* Serial reference: the same iterations on the whole grid. Returns iterations run. */
static int serial(int n, int max_iters, double *out) {
    double *u = calloc((size_t)(n + 2) * (size_t)(n + 2), sizeof(double));
    double *v = calloc((size_t)(n + 2) * (size_t)(n + 2), sizeof(double));
    set_boundary(u, n, n, 1, 1, 1, 1);
    set_boundary(v, n, n, 1, 1, 1, 1);
    int it = 0;
    for (it = 1; it <= max_iters; ++it) {
        double d = sweep(u, v, n, n);
        double *t = u;
        u = v;
        v = t;
        if (it % CHECK_EVERY == 0 && d < TOL) break;
    }
    if (it > max_iters) it = max_iters;
    for (int i = 0; i < n; ++i) memcpy(&out[(size_t)i * (size_t)n], &u[(i + 1) * (n + 2) + 1], sizeof(double) * (size_t)n);
    free(u);
    free(v);
    return it;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 128;
    int max_iters = argc > 2 ? atoi(argv[2]) : 20000;

    /* process grid PX x PY, as square as possible, dividing N */
    int py = (int)sqrt((double)size);
    while (size % py != 0) --py;
    int px = size / py;
    if (n % px != 0 || n % py != 0 || n < 2) {
        if (rank == 0) fprintf(stderr, "heat: N=%d must be a multiple of the %dx%d rank grid\n", n, px, py);
        MPI_Finalize();
        return 2;
    }
    int rows = n / py, cols = n / px; /* my block */
    int prow = rank / px, pcol = rank % px;
    int north = prow > 0 ? rank - px : MPI_PROC_NULL, south = prow < py - 1 ? rank + px : MPI_PROC_NULL;
    int west = pcol > 0 ? rank - 1 : MPI_PROC_NULL, east = pcol < px - 1 ? rank + 1 : MPI_PROC_NULL;
    int w = cols + 2;
    double *u = calloc((size_t)(rows + 2) * (size_t)w, sizeof(double));
    double *v = calloc((size_t)(rows + 2) * (size_t)w, sizeof(double));
    set_boundary(u, rows, cols, north == MPI_PROC_NULL, south == MPI_PROC_NULL, west == MPI_PROC_NULL,
                 east == MPI_PROC_NULL);
    set_boundary(v, rows, cols, north == MPI_PROC_NULL, south == MPI_PROC_NULL, west == MPI_PROC_NULL,
                 east == MPI_PROC_NULL);

    MPI_Datatype column; /* one interior column of the block: rows doubles, stride w */
    MPI_Type_vector(rows, 1, w, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    if (rank == 0)
        printf("heat: %dx%d grid on %d ranks (%dx%d blocks of %dx%d), up to %d iterations\n", n, n, size, px, py, rows,
               cols, max_iters);
    double t0 = MPI_Wtime(), residual = 0.0;
    int it = 0;
    for (it = 1; it <= max_iters; ++it) {
        MPI_Request req[8];
        MPI_Irecv(&u[1], cols, MPI_DOUBLE, north, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&u[(rows + 1) * w + 1], cols, MPI_DOUBLE, south, 1, MPI_COMM_WORLD, &req[1]);
        MPI_Irecv(&u[w], 1, column, west, 2, MPI_COMM_WORLD, &req[2]);
        MPI_Irecv(&u[w + cols + 1], 1, column, east, 3, MPI_COMM_WORLD, &req[3]);
        MPI_Isend(&u[w + 1], cols, MPI_DOUBLE, north, 1, MPI_COMM_WORLD, &req[4]);
        MPI_Isend(&u[rows * w + 1], cols, MPI_DOUBLE, south, 0, MPI_COMM_WORLD, &req[5]);
        MPI_Isend(&u[w + 1], 1, column, west, 3, MPI_COMM_WORLD, &req[6]);
        MPI_Isend(&u[w + cols], 1, column, east, 2, MPI_COMM_WORLD, &req[7]);
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        double d = sweep(u, v, rows, cols);
        double *t = u;
        u = v;
        v = t;
        if (it % CHECK_EVERY == 0) {
            MPI_Allreduce(&d, &residual, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (rank == 0 && it % (CHECK_EVERY * 40) == 0) printf("heat: iteration %5d  residual %.6e\n", it, residual);
            if (residual < TOL) break;
        }
    }
    if (it > max_iters) it = max_iters;
    double elapsed = MPI_Wtime() - t0;

    /* gather the blocks on rank 0 (row by row of blocks: each rank sends its interior rows) */
    int ok = 1;
    if (rank == 0) {
        double *par = malloc(sizeof(double) * (size_t)n * (size_t)n);
        double *ref = malloc(sizeof(double) * (size_t)n * (size_t)n);
        double *blk = malloc(sizeof(double) * (size_t)rows * (size_t)cols);
        for (int r = 0; r < size; ++r) {
            if (r == 0) {
                for (int i = 0; i < rows; ++i) memcpy(&blk[i * cols], &u[(i + 1) * w + 1], sizeof(double) * (size_t)cols);
            } else {
                MPI_Recv(blk, rows * cols, MPI_DOUBLE, r, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            int r0 = (r / px) * rows, c0 = (r % px) * cols;
            for (int i = 0; i < rows; ++i) memcpy(&par[(size_t)(r0 + i) * (size_t)n + (size_t)c0], &blk[i * cols], sizeof(double) * (size_t)cols);
        }
        int sit = serial(n, max_iters, ref);
        double maxerr = 0.0;
        for (size_t i = 0; i < (size_t)n * (size_t)n; ++i) maxerr = fmax(maxerr, fabs(par[i] - ref[i]));
        ok = sit == it && maxerr < 1e-9;
        printf("heat: %d iterations in %.3f s, final residual %.6e\n", it, elapsed, residual);
        printf("heat: serial run: %d iterations, largest difference %.3e -> %s\n", sit, maxerr,
               ok ? "OK" : "MISMATCH");
        free(par);
        free(ref);
        free(blk);
    } else {
        double *blk = malloc(sizeof(double) * (size_t)rows * (size_t)cols);
        for (int i = 0; i < rows; ++i) memcpy(&blk[i * cols], &u[(i + 1) * w + 1], sizeof(double) * (size_t)cols);
        MPI_Send(blk, rows * cols, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
        free(blk);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Type_free(&column);
    free(u);
    free(v);
    MPI_Finalize();
    return ok ? 0 : 1;
}
