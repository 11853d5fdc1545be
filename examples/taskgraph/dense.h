/* What the tiled factorisations with BLAS/LAPACKE kernels (cholesky_blas.c, lu_blas.c,
 * qr_blas.c) share: their arguments, StarPU's start with single-threaded OpenBLAS, the tiles of
 * one column-major matrix (the last row and column of tiles may be narrower), the failure flag
 * of the tile kernels, the timing and the result line. Plain StarPU 1.3 calls, so that the
 * examples build against StarPU as well. */
#ifndef MPC_EXAMPLES_DENSE_H
#define MPC_EXAMPLES_DENSE_H
#include <starpu.h>
#include <cblas.h>
#include <lapacke.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "tiled.h"

#define TILE(b) ((double *)STARPU_MATRIX_GET_PTR(b))
#define LD(b) ((int)STARPU_MATRIX_GET_LD(b))
#define ROWS(b) ((int)STARPU_MATRIX_GET_NX(b)) /* column-major: nx counts the rows */
#define COLS(b) ((int)STARPU_MATRIX_GET_NY(b))

/* The first failure a tile kernel reports (LAPACK's info, or a pivot that was not the
 * diagonal): tasks cannot return an error, main reads it after the wait. */
static atomic_int dense_kernel_error;
static inline void dense_fail(int info)
{
	int none = 0;
	atomic_compare_exchange_strong(&dense_kernel_error, &none, info);
}

struct dense {
	const char *name;
	int n, nb, nt; /* order, tile size, tiles per row and column (the last ones may be narrower) */
	int ld;        /* a's leading dimension: n, or n + 8 when n is a multiple of 64 (see dense_start) */
	double *a;     /* n x n, column-major, leading dimension ld */
	starpu_data_handle_t *h;
	double *x, *b, *y; /* the check: b = A x from the input, y a work vector (n entries each) */
	double anorm;      /* ||A||_F of the input */
	double t0;
};

/* Rows (and columns) of the k-th row (column) of tiles, and its first row. */
static inline int dense_size(const struct dense *d, int k) { return k < d->nt - 1 ? d->nb : d->n - k * d->nb; }
static inline double *dense_tile(const struct dense *d, int ti, int tj)
{
	return d->a + (size_t)ti * (size_t)d->nb + (size_t)tj * (size_t)d->nb * (size_t)d->ld;
}
#define DH(d, ti, tj) ((d)->h[(size_t)(tj) * (size_t)(d)->nt + (size_t)(ti)])

/* Reads [N [NB]] (default 480 and 96), starts StarPU and makes OpenBLAS single-threaded (the
 * tasks are the parallelism: one BLAS thread per worker), allocates the matrix and registers
 * its tiles. Returns 0, or the exit status (1 on bad arguments or no memory, 77 without a
 * worker). fill(i, j, n) gives entry (i, j). */
static inline int dense_start(struct dense *d, int argc, char **argv, const char *name, double (*fill)(size_t, size_t, size_t))
{
	int ret, ti, tj;
	size_t i, j, n, ld;
	d->name = name;
	d->n = argc > 1 ? atoi(argv[1]) : 480;
	d->nb = argc > 2 ? atoi(argv[2]) : 96;
	if (argc > 3 || d->n <= 0 || d->nb <= 0 || d->n > 32768 || d->nb > 2048) {
		fprintf(stderr, "%s: usage: %s [N [NB]] with 1 <= N <= 32768, 1 <= NB <= 2048\n", name, name);
		return 1;
	}
	d->nt = (d->n + d->nb - 1) / d->nb;
	n = (size_t)d->n;
	/* A column stride that is a multiple of 512 bytes (4096 doubles: 32 KiB) puts a tile's
	 * columns into the same few cache sets; 8 more doubles (one line) spread them, which the
	 * tile kernels measure 2-10% faster at n = 4096 (benchmarks/RESULTS.md). */
	d->ld = d->n % 64 == 0 ? d->n + 8 : d->n;
	ld = (size_t)d->ld;
#ifdef OPENBLAS_VERSION
	openblas_set_num_threads(1);
#endif
	LAPACKE_set_nancheck(0); /* the high-level calls would scan every tile for NaNs first */
	d->a = malloc(ld * n * sizeof(double));
	d->h = malloc((size_t)d->nt * (size_t)d->nt * sizeof(*d->h));
	d->x = malloc(3 * n * sizeof(double));
	if (d->a == NULL || d->h == NULL || d->x == NULL) {
		fprintf(stderr, "%s: out of memory for a %zu x %zu matrix\n", name, n, n);
		return 1;
	}
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++)
			d->a[i + j * ld] = fill(i, j, n);
	d->b = d->x + n;
	d->y = d->b + n;
	for (i = 0; i < n; i++)
		d->x[i] = 0.5 + (double)((unsigned)(i * 2654435761u) >> 8) / (double)(1u << 24);
	cblas_dgemv(CblasColMajor, CblasNoTrans, d->n, d->n, 1.0, d->a, d->ld, d->x, 1, 0.0, d->b, 1);
	d->anorm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'F', d->n, d->n, d->a, d->ld);
	ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	for (tj = 0; tj < d->nt; tj++)
		for (ti = 0; ti < d->nt; ti++)
			starpu_matrix_data_register(&DH(d, ti, tj), STARPU_MAIN_RAM, (uintptr_t)dense_tile(d, ti, tj), ld,
						    (uint32_t)dense_size(d, ti), (uint32_t)dense_size(d, tj), sizeof(double));
	d->t0 = starpu_timing_now();
	return 0;
}

/* Waits for the tasks, unregisters the tiles (the factor is back in d->a) and returns the
 * seconds since dense_start's end. */
static inline double dense_wait(struct dense *d)
{
	double s;
	int i;
	starpu_task_wait_for_all();
	s = (starpu_timing_now() - d->t0) / 1e6;
	for (i = 0; i < d->nt * d->nt; i++)
		starpu_data_unregister(d->h[i]);
	return s;
}

/* With y = (the factors' product) x: the scaled residual ||A x - y|| / (||A||_F ||x|| n eps),
 * LAPACK's test ratio (below 30 for a correct factorisation; a wrong one gives 1e10 and more). */
static inline double dense_ratio(const struct dense *d)
{
	cblas_daxpy(d->n, -1.0, d->b, 1, d->y, 1);
	return cblas_dnrm2(d->n, d->y, 1) / (d->anorm * cblas_dnrm2(d->n, d->x, 1) * d->n * DBL_EPSILON);
}

/* Prints the result line and frees; returns the exit status (0 when ok and no kernel failed). */
static inline int dense_finish(struct dense *d, int ok, const char *checks, double secs, double flops)
{
	const char *sched = getenv("STARPU_SCHED");
	int err = atomic_load(&dense_kernel_error);
	if (err != 0) {
		fprintf(stderr, "%s: a tile kernel failed (LAPACK info or pivot %d)\n", d->name, err);
		ok = 0;
	}
	printf("%s: %d x %d (tiles of %d) on %u workers (%s): %s (%s; %.3f s, %.2f GFlop/s)\n", d->name, d->n, d->n, d->nb,
	       starpu_worker_get_count(), sched != NULL ? sched : "default", ok ? "OK" : "WRONG", checks, secs,
	       flops / secs / 1e9);
	starpu_shutdown();
	free(d->a);
	free(d->h);
	free(d->x);
	return ok ? 0 : 1;
}

/* For a factorisation into two triangles T1 T2 (stored in d->a): checks A x against T1 (T2 x),
 * each triangle given as CBLAS's uplo, trans, diag of a trmv on d->a, then prints and frees as
 * dense_finish does. */
static inline int dense_finish_triangles(struct dense *d, double secs, double flops, enum CBLAS_UPLO u1,
					 enum CBLAS_TRANSPOSE t1, enum CBLAS_DIAG g1, enum CBLAS_UPLO u2,
					 enum CBLAS_TRANSPOSE t2, enum CBLAS_DIAG g2)
{
	char checks[64];
	double ratio;
	cblas_dcopy(d->n, d->x, 1, d->y, 1);
	cblas_dtrmv(CblasColMajor, u2, t2, g2, d->n, d->a, d->ld, d->y, 1);
	cblas_dtrmv(CblasColMajor, u1, t1, g1, d->n, d->a, d->ld, d->y, 1);
	ratio = dense_ratio(d);
	snprintf(checks, sizeof checks, "residual ratio %.2g", ratio);
	return dense_finish(d, ratio < 30, checks, secs, flops);
}
#endif
