/* Tiled QR factorisation (the tile algorithm of PLASMA: GEQRT, UNMQR, TSQRT, TSMQR tasks),
 * written as a StarPU 1.3 program with plain-loop Householder kernels (one reflector at a time,
 * its scalar factor tau kept in a vector handle per tile) so that it needs nothing else.
 *
 *   qr [NT [NB]]   factorises a matrix of NT x NT tiles of NB x NB doubles (default 6 x 6 tiles
 *                  of 24), column-major with the tiles registered as sub-matrices of it, in
 *                  place into R (upper triangle) and the reflectors (below it in the diagonal
 *                  tiles, whole tiles below the diagonal), then forms Q^T by applying the
 *                  reflectors to the identity in task order and checks ||A - Q R||_F / ||A||_F
 *                  and ||Q^T Q - I||_F.
 * Prints "qr: <n> x <n> on <w> workers (<policy>): OK (residual ..., orthogonality ...)"; exit 1
 * on a wrong factorisation or bad arguments, 77 without a worker. */
#include <starpu.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tiled.h"

#define TILE(b) ((double *)STARPU_MATRIX_GET_PTR(b))
#define LD(b) STARPU_MATRIX_GET_LD(b)
#define TAU(b) ((double *)STARPU_VECTOR_GET_PTR(b))

/* The reflector H = I - tau v v^T (v = [1; x]) with H [alpha; x] = [beta; 0]: alpha := beta,
 * x := the tail of v, returns tau (0 when x is already 0). */
static double house(double *alpha, double *x, unsigned len)
{
	double sigma = 0, norm, beta, tau;
	unsigned i;
	for (i = 0; i < len; i++)
		sigma += x[i] * x[i];
	if (sigma == 0)
		return 0;
	norm = sqrt(*alpha * *alpha + sigma);
	beta = *alpha <= 0 ? norm : -norm;
	tau = (beta - *alpha) / beta;
	for (i = 0; i < len; i++)
		x[i] /= *alpha - beta;
	*alpha = beta;
	return tau;
}

/* Applies H = I - tau [1; v] [1; v]^T to ncols columns made of one entry of the row top
 * (stride ldt) on top of len entries of c (leading dimension ldc). */
static void apply1(double tau, const double *v, unsigned len, double *top, size_t ldt, double *c, size_t ldc, size_t ncols)
{
	size_t i, j;
	for (j = 0; j < ncols; j++) {
		double w = top[j * ldt];
		for (i = 0; i < len; i++)
			w += v[i] * c[i + j * ldc];
		w *= tau;
		top[j * ldt] -= w;
		for (i = 0; i < len; i++)
			c[i + j * ldc] -= w * v[i];
	}
}

/* C := Q^T C for the reflectors of a diagonal tile (below its diagonal). */
static void apply_ge(const double *v, size_t ldv, const double *tau, unsigned nb, double *c, size_t ldc, size_t ncols)
{
	unsigned r;
	for (r = 0; r < nb; r++)
		apply1(tau[r], v + r + 1 + r * ldv, nb - r - 1, c + r, ldc, c + r + 1, ldc, ncols);
}

/* [C1; C2] := Q^T [C1; C2] for the reflectors of a tile below the diagonal (whole columns). */
static void apply_ts(const double *v, size_t ldv, const double *tau, unsigned nb, double *c1, size_t ldc1, double *c2,
		     size_t ldc2, size_t ncols)
{
	unsigned r;
	for (r = 0; r < nb; r++)
		apply1(tau[r], v + r * ldv, nb, c1 + r, ldc1, c2, ldc2, ncols);
}

/* A_kk := R and its reflectors. */
static void geqrt(void *buffers[], void *arg)
{
	double *a = TILE(buffers[0]), *tau = TAU(buffers[1]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ld = LD(buffers[0]), c;
	(void)arg;
	for (c = 0; c < n; c++) {
		tau[c] = house(&a[c + c * ld], &a[c + 1 + c * ld], n - c - 1);
		apply1(tau[c], &a[c + 1 + c * ld], n - c - 1, &a[c + (c + 1) * ld], ld, &a[c + 1 + (c + 1) * ld], ld, n - c - 1);
	}
}

/* A_kj := Q_kk^T A_kj. */
static void unmqr(void *buffers[], void *arg)
{
	(void)arg;
	apply_ge(TILE(buffers[0]), LD(buffers[0]), TAU(buffers[1]), STARPU_MATRIX_GET_NX(buffers[0]), TILE(buffers[2]),
		 LD(buffers[2]), STARPU_MATRIX_GET_NY(buffers[2]));
}

/* [R_kk; A_ik] := QR of the upper triangle R_kk on top of A_ik, the reflectors into A_ik. */
static void tsqrt(void *buffers[], void *arg)
{
	double *r = TILE(buffers[0]), *b = TILE(buffers[1]), *tau = TAU(buffers[2]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ldr = LD(buffers[0]), ldb = LD(buffers[1]), c;
	(void)arg;
	for (c = 0; c < n; c++) {
		tau[c] = house(&r[c + c * ldr], &b[c * ldb], n);
		apply1(tau[c], &b[c * ldb], n, &r[c + (c + 1) * ldr], ldr, &b[(c + 1) * ldb], ldb, n - c - 1);
	}
}

/* [A_kj; A_ij] := Q_ik^T [A_kj; A_ij]. */
static void tsmqr(void *buffers[], void *arg)
{
	(void)arg;
	apply_ts(TILE(buffers[0]), LD(buffers[0]), TAU(buffers[1]), STARPU_MATRIX_GET_NX(buffers[0]), TILE(buffers[2]),
		 LD(buffers[2]), TILE(buffers[3]), LD(buffers[3]), STARPU_MATRIX_GET_NY(buffers[2]));
}

#define FLOW_MODEL_PREFIX "mpc_example_qr_"
#include "qr_flow.h"

int main(int argc, char **argv)
{
	int nt, nb, ret = tiled_start(argc, argv, "qr", &nt, &nb), ok;
	size_t n, i, j, k, m;
	double *a, *tau, *q, num = 0, den = 0, orth = 0, res;
	starpu_data_handle_t *h, *ht;
	const char *sched = getenv("STARPU_SCHED");

	if (ret != 0)
		return ret;
	n = (size_t)nt * (size_t)nb;
	a = malloc(n * n * sizeof(double));
	q = malloc(n * n * sizeof(double));
	tau = malloc((size_t)nt * n * sizeof(double));
	h = malloc((size_t)nt * (size_t)nt * sizeof(*h));
	ht = malloc((size_t)nt * (size_t)nt * sizeof(*ht));
	if (a == NULL || q == NULL || tau == NULL || h == NULL || ht == NULL) {
		fprintf(stderr, "qr: out of memory\n");
		return 1;
	}
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++)
			a[i + j * n] = tiled_value(i, j);
	/* Tile (ti, tj) is h[tj * nt + ti], a sub-matrix of a; its taus ht[tj * nt + ti]. */
#define H(ti, tj) h[(tj) * (size_t)nt + (ti)]
#define HT(ti, tj) ht[(tj) * (size_t)nt + (ti)]
#define TAUS(ti, tj) (tau + ((tj) * (size_t)nt + (ti)) * (size_t)nb)
	for (j = 0; j < (size_t)nt; j++)
		for (i = 0; i < (size_t)nt; i++)
			starpu_vector_data_register(&HT(i, j), STARPU_MAIN_RAM, (uintptr_t)TAUS(i, j), nb, sizeof(double));
	tiled_register(h, a, nt, nb);
	qr_submit(h, ht, (size_t)nt);
	starpu_task_wait_for_all();
	for (i = 0; i < (size_t)nt * (size_t)nt; i++) {
		starpu_data_unregister(h[i]);
		starpu_data_unregister(ht[i]);
	}
	/* q := Q^T, the reflectors applied to the identity in the order of the tasks. */
	memset(q, 0, n * n * sizeof(double));
	for (i = 0; i < n; i++)
		q[i + i * n] = 1;
	for (k = 0; k < (size_t)nt; k++) {
		apply_ge(a + k * nb * (n + 1), n, TAUS(k, k), (unsigned)nb, q + k * nb, n, n);
		for (i = k + 1; i < (size_t)nt; i++)
			apply_ts(a + i * nb + k * nb * n, n, TAUS(i, k), (unsigned)nb, q + k * nb, n, q + i * nb, n, n);
	}
	/* ||A - Q R||_F / ||A||_F (R the upper triangle of a, Q = q^T) and ||Q^T Q - I||_F. */
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++) {
			double s = 0, p = 0, want = tiled_value(i, j);
			for (m = 0; m <= j; m++)
				s += q[m + i * n] * a[m + j * n];
			num += (s - want) * (s - want);
			den += want * want;
			for (m = 0; m < n; m++)
				p += q[i + m * n] * q[j + m * n];
			p -= i == j;
			orth += p * p;
		}
	res = sqrt(num / den);
	orth = sqrt(orth);
	ok = res < 1e-13 && orth < 1e-12;
	printf("qr: %zu x %zu on %u workers (%s): %s (residual %.2g, orthogonality %.2g)\n", n, n, starpu_worker_get_count(),
	       sched != NULL ? sched : "default", ok ? "OK" : "WRONG", res, orth);
	free(a);
	free(q);
	free(tau);
	free(h);
	free(ht);
	starpu_shutdown();
	return ok ? 0 : 1;
}
