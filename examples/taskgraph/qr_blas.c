/* Tiled QR factorisation with LAPACKE tile kernels (the tile algorithm of PLASMA: GEQRT, UNMQR
 * as LAPACKE_dgemqrt, TSQRT as LAPACKE_dtpqrt, TSMQR as LAPACKE_dtpmqrt, each with an inner
 * block of IB = 32 and its IB x NB triangular factors T kept in a matrix handle per tile),
 * written as a StarPU 1.3 program. OpenBLAS runs single-threaded inside the tasks.
 *
 *   qr_blas [N [NB]]   factorises an N x N matrix (default 480) in tiles of NB (default 96) in
 *                      place into R (upper triangle) and the reflectors, then checks Q (R x)
 *                      against A x, and that Q^T (Q x) = x and ||Q x|| = ||x|| (Q applied with
 *                      the same LAPACKE kernels from the reflectors and the T factors).
 * Prints "qr_blas: <n> x <n> (tiles of <nb>) on <w> workers (<policy>): OK (residual ratio
 * ..., orthogonality ratio ...; <s> s, <r> GFlop/s)"; exit 1 on a wrong factorisation or bad
 * arguments, 77 without a worker. */
#include "dense.h"
#include <string.h>

#define IB 32
#define IBK(n) ((n) < IB ? (n) : IB) /* inner block of a tile with n columns of reflectors */

/* A_kk := R_kk and its reflectors, T_kk their factors. */
static void geqrt(void *buffers[], void *arg)
{
	int n = ROWS(buffers[0]), info;
	(void)arg;
	info = LAPACKE_dgeqrt(LAPACK_COL_MAJOR, n, n, IBK(n), TILE(buffers[0]), LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]));
	if (info != 0)
		dense_fail(info);
}

/* A_kj := Q_kk^T A_kj. */
static void unmqr(void *buffers[], void *arg)
{
	int k = ROWS(buffers[0]), info;
	(void)arg;
	info = LAPACKE_dgemqrt(LAPACK_COL_MAJOR, 'L', 'T', ROWS(buffers[2]), COLS(buffers[2]), k, IBK(k), TILE(buffers[0]),
			       LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]), TILE(buffers[2]), LD(buffers[2]));
	if (info != 0)
		dense_fail(info);
}

/* [R_kk; A_ik] := QR of R_kk on top of A_ik: the reflectors into A_ik, T_ik their factors. */
static void tsqrt(void *buffers[], void *arg)
{
	int k = COLS(buffers[0]), info;
	(void)arg;
	info = LAPACKE_dtpqrt(LAPACK_COL_MAJOR, ROWS(buffers[1]), k, 0, IBK(k), TILE(buffers[0]), LD(buffers[0]),
			      TILE(buffers[1]), LD(buffers[1]), TILE(buffers[2]), LD(buffers[2]));
	if (info != 0)
		dense_fail(info);
}

/* [A_kj; A_ij] := Q_ik^T [A_kj; A_ij]. */
static void tsmqr(void *buffers[], void *arg)
{
	int k = COLS(buffers[0]), info;
	(void)arg;
	info = LAPACKE_dtpmqrt(LAPACK_COL_MAJOR, 'L', 'T', ROWS(buffers[3]), COLS(buffers[3]), k, 0, IBK(k), TILE(buffers[0]),
			       LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]), TILE(buffers[2]), LD(buffers[2]),
			       TILE(buffers[3]), LD(buffers[3]));
	if (info != 0)
		dense_fail(info);
}

#define FLOW_MODEL_PREFIX "mpc_example_blas_qr_"
#include "qr_flow.h"

static double entry(size_t i, size_t j, size_t n)
{
	(void)n;
	return tiled_value(i, j);
}

/* The T factors of tile (ti, tj): IB x (columns of tile tj), leading dimension IB. */
#define TF(ti, tj) (t + ((size_t)(tj) * (size_t)d.nt + (size_t)(ti)) * IB * (size_t)d.nb)

int main(int argc, char **argv)
{
	struct dense d;
	int i, j, k, ret = dense_start(&d, argc, argv, "qr_blas", entry), ok;
	double secs, ratio, orth, qnorm, *t, *v;
	starpu_data_handle_t *ht;
	char checks[96];

	if (ret != 0)
		return ret;
	t = calloc((size_t)d.nt * (size_t)d.nt * IB * (size_t)d.nb, sizeof(double));
	v = malloc((size_t)d.n * sizeof(double));
	ht = malloc((size_t)d.nt * (size_t)d.nt * sizeof(*ht));
	if (t == NULL || v == NULL || ht == NULL) {
		fprintf(stderr, "qr_blas: out of memory\n");
		return 1;
	}
#define HT(ti, tj) ht[(size_t)(tj) * (size_t)d.nt + (size_t)(ti)]
	for (j = 0; j < d.nt; j++)
		for (i = 0; i < d.nt; i++)
			starpu_matrix_data_register(&HT(i, j), STARPU_MAIN_RAM, (uintptr_t)TF(i, j), IB, IB,
						    (uint32_t)dense_size(&d, j), sizeof(double));
	qr_submit(d.h, ht, (size_t)d.nt);
	secs = dense_wait(&d);
	for (i = 0; i < d.nt * d.nt; i++)
		starpu_data_unregister(ht[i]);
	/* Q = prod over k of (Q_kk Q_k+1,k ... Q_nt-1,k): apply_q(w, 'N') is Q w (the tiles' Q in
	 * the reverse order of the tasks), apply_q(w, 'T') is Q^T w (in the order of the tasks). */
#define APPLY_GE(k, tr, w)                                                                                              \
	LAPACKE_dgemqrt(LAPACK_COL_MAJOR, 'L', tr, dense_size(&d, k), 1, dense_size(&d, k), IBK(dense_size(&d, k)),       \
			dense_tile(&d, k, k), d.ld, TF(k, k), IB, (w) + (size_t)(k) * d.nb, d.n)
#define APPLY_TS(i, k, tr, w)                                                                                           \
	LAPACKE_dtpmqrt(LAPACK_COL_MAJOR, 'L', tr, dense_size(&d, i), 1, dense_size(&d, k), 0, IBK(dense_size(&d, k)),    \
			dense_tile(&d, i, k), d.ld, TF(i, k), IB, (w) + (size_t)(k) * d.nb, d.n, (w) + (size_t)(i) * d.nb, d.n)
	/* y := Q (R x): the residual. */
	cblas_dcopy(d.n, d.x, 1, d.y, 1);
	cblas_dtrmv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, d.n, d.a, d.ld, d.y, 1);
	for (k = d.nt - 1; k >= 0; k--) {
		for (i = d.nt - 1; i > k; i--)
			APPLY_TS(i, k, 'N', d.y);
		APPLY_GE(k, 'N', d.y);
	}
	ratio = dense_ratio(&d);
	/* v := Q^T (Q x) against x, and ||Q x|| against ||x||, in units of n eps ||x||. */
	cblas_dcopy(d.n, d.x, 1, v, 1);
	for (k = d.nt - 1; k >= 0; k--) {
		for (i = d.nt - 1; i > k; i--)
			APPLY_TS(i, k, 'N', v);
		APPLY_GE(k, 'N', v);
	}
	qnorm = cblas_dnrm2(d.n, v, 1);
	for (k = 0; k < d.nt; k++) {
		APPLY_GE(k, 'T', v);
		for (i = k + 1; i < d.nt; i++)
			APPLY_TS(i, k, 'T', v);
	}
	cblas_daxpy(d.n, -1.0, d.x, 1, v, 1);
	orth = fmax(cblas_dnrm2(d.n, v, 1), fabs(qnorm - cblas_dnrm2(d.n, d.x, 1))) /
	       (cblas_dnrm2(d.n, d.x, 1) * d.n * DBL_EPSILON);
	ok = ratio < 30 && orth < 30;
	snprintf(checks, sizeof checks, "residual ratio %.2g, orthogonality ratio %.2g", ratio, orth);
	free(t);
	free(v);
	free(ht);
	return dense_finish(&d, ok, checks, secs, 4.0 * d.n * d.n * d.n / 3.0);
}
