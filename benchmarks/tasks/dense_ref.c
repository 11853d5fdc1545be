/* benchmarks/run tasks: the references of the tiled factorisations (examples/taskgraph/
 * *_blas.c): OpenBLAS's own multithreaded LAPACK on the whole matrix, and its DGEMM rate.
 *
 *   dense_ref --what cholesky|lu|qr|dgemm --n N --threads T [--reps R]
 *
 * Runs LAPACKE_dpotrf (lower), LAPACKE_dgetrf (partial pivoting), LAPACKE_dgeqrf or
 * cblas_dgemm (C := C - A B, N x N x N) on an N x N matrix with T OpenBLAS threads, once as a
 * warm-up then R times (default 3), and prints one ROW line (benchmarks/lib.sh) with the median
 * GFlop/s (n^3/3, 2n^3/3, 4n^3/3, 2n^3 flops) and the min and max. The matrices are those of
 * the examples (SPD, diagonally dominant, deterministic values in [-1, 1)). Exit 1 on bad
 * arguments or when LAPACK reports a failure. */
#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double value(size_t i, size_t j) /* tiled.h's tiled_value */
{
	unsigned long x = (unsigned long)(i * 7919 + j * 104729 + 12345) * 2654435761ul;
	return (double)((x >> 11) % 2000) / 1000.0 - 1.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *what = NULL;
	int n = 0, threads = 0, reps = 3, r, i, info = 0;
	size_t nn, row, col;
	double *a, *orig, *b = NULL, *c = NULL, *tau = NULL, flops, v[16];
	lapack_int *ipiv = NULL;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--what") == 0)
			what = argv[i + 1];
		else if (strcmp(argv[i], "--n") == 0)
			n = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--threads") == 0)
			threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--reps") == 0)
			reps = atoi(argv[i + 1]);
		else
			break;
	}
	if (i != argc || what == NULL || n <= 0 || n > 32768 || threads <= 0 || reps <= 0 || reps > 16 ||
	    (strcmp(what, "cholesky") != 0 && strcmp(what, "lu") != 0 && strcmp(what, "qr") != 0 && strcmp(what, "dgemm") != 0)) {
		fprintf(stderr, "usage: dense_ref --what cholesky|lu|qr|dgemm --n N --threads T [--reps R <= 16]\n");
		return 1;
	}
	openblas_set_num_threads(threads);
	nn = (size_t)n;
	a = malloc(nn * nn * sizeof(double));
	orig = malloc(nn * nn * sizeof(double));
	ipiv = malloc(nn * sizeof(*ipiv));
	tau = malloc(nn * sizeof(double));
	if (strcmp(what, "dgemm") == 0) {
		b = malloc(nn * nn * sizeof(double));
		c = malloc(nn * nn * sizeof(double));
	}
	if (a == NULL || orig == NULL || ipiv == NULL || tau == NULL || (strcmp(what, "dgemm") == 0 && (b == NULL || c == NULL))) {
		fprintf(stderr, "dense_ref: out of memory\n");
		return 1;
	}
	for (col = 0; col < nn; col++)
		for (row = 0; row < nn; row++) {
			double d = strcmp(what, "qr") == 0 || strcmp(what, "dgemm") == 0 ? 0.0 : row == col ? (double)n : 0.0;
			orig[row + col * nn] = d + (strcmp(what, "cholesky") == 0 && row < col ? value(col, row) : value(row, col));
			if (b != NULL) {
				b[row + col * nn] = value(col, row);
				c[row + col * nn] = 0;
			}
		}
	flops = strcmp(what, "cholesky") == 0 ? 1.0 / 3 : strcmp(what, "lu") == 0 ? 2.0 / 3 : strcmp(what, "qr") == 0 ? 4.0 / 3 : 2.0;
	flops *= (double)n * n * n;
	for (r = -1; r < reps; r++) { /* r = -1: the warm-up */
		double t0;
		memcpy(a, orig, nn * nn * sizeof(double));
		t0 = now();
		if (strcmp(what, "cholesky") == 0)
			info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a, n);
		else if (strcmp(what, "lu") == 0)
			info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, a, n, ipiv);
		else if (strcmp(what, "qr") == 0)
			info = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, a, n, tau);
		else
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, -1.0, a, n, b, n, 1.0, c, n);
		t0 = now() - t0;
		if (info != 0) {
			fprintf(stderr, "dense_ref: %s failed (LAPACK info %d)\n", what, info);
			return 1;
		}
		if (r >= 0)
			v[r] = flops / t0 / 1e9;
	}
	qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
	printf("ROW\t%s-%d\t%d\topenblas\t%.4f\tGFlop/s\t%.4f\t%.4f\t\"sched\": \"-\"\t%s\n", what, n, threads,
	       v[reps / 2], v[0], v[reps - 1],
	       strcmp(what, "dgemm") == 0 ? "cblas_dgemm on the whole matrix, OpenBLAS threads = workers"
					  : "LAPACKE on the whole matrix, OpenBLAS threads = workers");
	free(a);
	free(orig);
	free(b);
	free(c);
	free(ipiv);
	free(tau);
	return 0;
}
