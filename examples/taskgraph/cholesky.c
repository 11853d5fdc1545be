/* Tiled Cholesky factorisation, written as a StarPU 1.3 program (the sequential task flow of
 * StarPU's cholesky example, with plain loops instead of BLAS so that it needs nothing else).
 *
 *   cholesky [NT [NB]]   factorises an SPD matrix of NT x NT tiles of NB x NB doubles (default
 *                        8 x 8 tiles of 24) in place into its lower factor L, with POTRF, TRSM,
 *                        SYRK and GEMM tasks (priorities along the critical path, history
 *                        models on every codelet), then checks L L^T against the input.
 * Prints "cholesky: <n> x <n> on <w> workers (<policy>): OK"; exit 1 on a wrong factor, 77
 * without a worker. */
#include <starpu.h>
#include <math.h>
#include <stdlib.h>

/* Tile (i, j) of the lower triangle, column-major, leading dimension nb. */
static void potrf(void *buffers[], void *arg)
{
	double *a = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ld = STARPU_MATRIX_GET_LD(buffers[0]), i, j, k;
	(void)arg;
	for (j = 0; j < n; j++) {
		for (k = 0; k < j; k++)
			for (i = j; i < n; i++)
				a[i + j * ld] -= a[i + k * ld] * a[j + k * ld];
		double d = sqrt(a[j + j * ld]);
		for (i = j; i < n; i++)
			a[i + j * ld] /= d;
	}
}

/* B := B L^-T (L lower triangular, from the diagonal tile). */
static void trsm(void *buffers[], void *arg)
{
	const double *l = (const double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	double *b = (double *)STARPU_MATRIX_GET_PTR(buffers[1]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ldl = STARPU_MATRIX_GET_LD(buffers[0]);
	unsigned ldb = STARPU_MATRIX_GET_LD(buffers[1]), i, j, k;
	(void)arg;
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			double s = b[i + j * ldb];
			for (k = 0; k < j; k++)
				s -= b[i + k * ldb] * l[j + k * ldl];
			b[i + j * ldb] = s / l[j + j * ldl];
		}
}

/* C := C - A B^T, on n x n tiles. */
static void update(const double *a, unsigned lda, const double *b, unsigned ldb, double *c, unsigned ldc, unsigned n)
{
	unsigned i, j, k;
	for (j = 0; j < n; j++)
		for (k = 0; k < n; k++)
			for (i = 0; i < n; i++)
				c[i + j * ldc] -= a[i + k * lda] * b[j + k * ldb];
}

static void syrk(void *buffers[], void *arg)
{
	(void)arg;
	update((const double *)STARPU_MATRIX_GET_PTR(buffers[0]), STARPU_MATRIX_GET_LD(buffers[0]),
	       (const double *)STARPU_MATRIX_GET_PTR(buffers[0]), STARPU_MATRIX_GET_LD(buffers[0]),
	       (double *)STARPU_MATRIX_GET_PTR(buffers[1]), STARPU_MATRIX_GET_LD(buffers[1]), STARPU_MATRIX_GET_NX(buffers[0]));
}

static void gemm(void *buffers[], void *arg)
{
	(void)arg;
	update((const double *)STARPU_MATRIX_GET_PTR(buffers[0]), STARPU_MATRIX_GET_LD(buffers[0]),
	       (const double *)STARPU_MATRIX_GET_PTR(buffers[1]), STARPU_MATRIX_GET_LD(buffers[1]),
	       (double *)STARPU_MATRIX_GET_PTR(buffers[2]), STARPU_MATRIX_GET_LD(buffers[2]), STARPU_MATRIX_GET_NX(buffers[0]));
}

#define FLOW_MODEL_PREFIX "mpc_example_"
#include "cholesky_flow.h"

int main(int argc, char **argv)
{
	unsigned nt = argc > 1 ? (unsigned)atoi(argv[1]) : 8, nb = argc > 2 ? (unsigned)atoi(argv[2]) : 24;
	size_t n = (size_t)nt * nb, tile = (size_t)nb * nb, i, j, m;
	double *tiles, err = 0;
	starpu_data_handle_t *h;
	const char *sched = getenv("STARPU_SCHED");
	int ret;

	if (nt == 0 || nb == 0)
		return 1;
	ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	tiles = malloc(nt * nt * tile * sizeof(double));
	h = malloc(nt * nt * sizeof(*h));
	/* A(r, c) = n [r == c] + 1 / (1 + |r - c|), tile (ti, tj) at tiles + (tj * nt + ti) * tile. */
#define A_AT(r, c) tiles[(((c) / nb) * nt + (r) / nb) * tile + ((c) % nb) * nb + (r) % nb]
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++)
			A_AT(i, j) = (i == j ? (double)n : 0.0) + 1.0 / (1.0 + fabs((double)i - (double)j));
	for (j = 0; j < nt; j++)
		for (i = 0; i < nt; i++)
			starpu_matrix_data_register(&h[j * nt + i], STARPU_MAIN_RAM, (uintptr_t)(tiles + (j * nt + i) * tile),
						    nb, nb, nb, sizeof(double));
	cholesky_submit(h, nt);
	starpu_task_wait_for_all();
	for (i = 0; i < nt * nt; i++)
		starpu_data_unregister(h[i]);
	/* (L L^T)(r, c) for r >= c against A, on every entry of the lower triangle. */
	for (j = 0; j < n; j++)
		for (i = j; i < n; i++) {
			double s = 0, want = (i == j ? (double)n : 0.0) + 1.0 / (1.0 + fabs((double)i - (double)j));
			for (m = 0; m <= j; m++)
				s += A_AT(i, m) * A_AT(j, m);
			err = fmax(err, fabs(s - want) / (double)n);
		}
	printf("cholesky: %zu x %zu on %u workers (%s): %s (error %.2g)\n", n, n, starpu_worker_get_count(),
	       sched != NULL ? sched : "default", err < 1e-12 ? "OK" : "WRONG", err);
	free(tiles);
	free(h);
	starpu_shutdown();
	return err < 1e-12 ? 0 : 1;
}
