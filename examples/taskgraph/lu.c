/* Tiled LU factorisation without pivoting, written as a StarPU 1.3 program (the sequential task
 * flow of StarPU's lu example, with plain loops instead of BLAS/LAPACK so that it needs nothing
 * else), on a diagonally dominant matrix so that no pivoting is needed.
 *
 *   lu [NT [NB]]   factorises a matrix of NT x NT tiles of NB x NB doubles (default 6 x 6 tiles
 *                  of 24), column-major with the tiles registered as sub-matrices of it (leading
 *                  dimension NT * NB), in place into L (unit lower) and U with GETRF, TRSM
 *                  (both sides) and GEMM tasks, then checks ||A - L U||_F / ||A||_F.
 * Prints "lu: <n> x <n> on <w> workers (<policy>): OK (residual ...)"; exit 1 on a wrong
 * factorisation or bad arguments, 77 without a worker. */
#include <starpu.h>
#include <math.h>
#include <stdlib.h>
#include "tiled.h"

#define TILE(b) ((double *)STARPU_MATRIX_GET_PTR(b))
#define LD(b) STARPU_MATRIX_GET_LD(b)

/* A := L U in place (L unit lower), no pivoting. */
static void getrf(void *buffers[], void *arg)
{
	double *a = TILE(buffers[0]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ld = LD(buffers[0]), i, j, k;
	(void)arg;
	for (k = 0; k < n; k++) {
		for (i = k + 1; i < n; i++)
			a[i + k * ld] /= a[k + k * ld];
		for (j = k + 1; j < n; j++)
			for (i = k + 1; i < n; i++)
				a[i + j * ld] -= a[i + k * ld] * a[k + j * ld];
	}
}

/* B := L^-1 B, L the unit lower triangle of the diagonal tile (a tile right of it). */
static void trsm_left(void *buffers[], void *arg)
{
	const double *l = TILE(buffers[0]);
	double *b = TILE(buffers[1]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ldl = LD(buffers[0]), ldb = LD(buffers[1]), i, j, k;
	(void)arg;
	for (j = 0; j < n; j++)
		for (k = 0; k < n; k++)
			for (i = k + 1; i < n; i++)
				b[i + j * ldb] -= l[i + k * ldl] * b[k + j * ldb];
}

/* B := B U^-1, U the upper triangle of the diagonal tile (a tile below it). */
static void trsm_right(void *buffers[], void *arg)
{
	const double *u = TILE(buffers[0]);
	double *b = TILE(buffers[1]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ldu = LD(buffers[0]), ldb = LD(buffers[1]), i, j, k;
	(void)arg;
	for (j = 0; j < n; j++) {
		for (k = 0; k < j; k++)
			for (i = 0; i < n; i++)
				b[i + j * ldb] -= b[i + k * ldb] * u[k + j * ldu];
		for (i = 0; i < n; i++)
			b[i + j * ldb] /= u[j + j * ldu];
	}
}

/* C := C - A B. */
static void gemm(void *buffers[], void *arg)
{
	const double *a = TILE(buffers[0]), *b = TILE(buffers[1]);
	double *c = TILE(buffers[2]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), lda = LD(buffers[0]), ldb = LD(buffers[1]), ldc = LD(buffers[2]), i, j, k;
	(void)arg;
	for (j = 0; j < n; j++)
		for (k = 0; k < n; k++)
			for (i = 0; i < n; i++)
				c[i + j * ldc] -= a[i + k * lda] * b[k + j * ldb];
}

#define FLOW_MODEL_PREFIX "mpc_example_lu_"
#include "lu_flow.h"

/* Diagonally dominant: A(i, j) = n [i == j] + a deterministic value in [-1, 1). */
static double entry(size_t i, size_t j, size_t n)
{
	return (i == j ? (double)n : 0.0) + tiled_value(i, j);
}

int main(int argc, char **argv)
{
	int nt, nb, ret = tiled_start(argc, argv, "lu", &nt, &nb);
	size_t n, i, j, m;
	double *a, num = 0, den = 0, res;
	starpu_data_handle_t *h;
	const char *sched = getenv("STARPU_SCHED");

	if (ret != 0)
		return ret;
	n = (size_t)nt * (size_t)nb;
	a = malloc(n * n * sizeof(double));
	h = malloc((size_t)nt * (size_t)nt * sizeof(*h));
	if (a == NULL || h == NULL) {
		fprintf(stderr, "lu: out of memory\n");
		return 1;
	}
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++)
			a[i + j * n] = entry(i, j, n);
	/* Tile (ti, tj) is h[tj * nt + ti], a sub-matrix of a. */
#define H(ti, tj) h[(tj) * (size_t)nt + (ti)]
	tiled_register(h, a, nt, nb);
	lu_submit(h, (size_t)nt);
	starpu_task_wait_for_all();
	for (i = 0; i < (size_t)nt * (size_t)nt; i++)
		starpu_data_unregister(h[i]);
	/* ||A - L U||_F / ||A||_F, (L U)(i, j) = sum over m <= min(i, j) of L(i, m) U(m, j). */
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++) {
			double s = 0, want = entry(i, j, n);
			for (m = 0; m <= (i < j ? i : j); m++)
				s += (m == i ? 1.0 : a[i + m * n]) * a[m + j * n];
			num += (s - want) * (s - want);
			den += want * want;
		}
	res = sqrt(num / den);
	printf("lu: %zu x %zu on %u workers (%s): %s (residual %.2g)\n", n, n, starpu_worker_get_count(),
	       sched != NULL ? sched : "default", res < 1e-13 ? "OK" : "WRONG", res);
	free(a);
	free(h);
	starpu_shutdown();
	return res < 1e-13 ? 0 : 1;
}
