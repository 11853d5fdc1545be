/* Tiled Cholesky factorisation with OpenBLAS and LAPACKE tile kernels (POTRF: LAPACKE_dpotrf,
 * TRSM, SYRK, GEMM: CBLAS), written as a StarPU 1.3 program: the sequential task flow of
 * StarPU's cholesky example, in double precision, with priorities along the critical path and
 * history models on every codelet. OpenBLAS runs single-threaded inside the tasks.
 *
 *   cholesky_blas [N [NB]]   factorises an N x N SPD matrix (default 480) in tiles of NB (default
 *                            96; the last row and column of tiles hold the rest) in place into
 *                            its lower factor L, then checks L (L^T x) against A x.
 * Prints "cholesky_blas: <n> x <n> (tiles of <nb>) on <w> workers (<policy>): OK (residual
 * ratio ...; <s> s, <r> GFlop/s)"; exit 1 on a wrong factor or bad arguments, 77 without a
 * worker. */
#include "dense.h"

/* A_kk := L_kk, its lower Cholesky factor. */
static void potrf(void *buffers[], void *arg)
{
	int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', ROWS(buffers[0]), TILE(buffers[0]), LD(buffers[0]));
	(void)arg;
	if (info != 0)
		dense_fail(info);
}

/* A_ik := A_ik L_kk^-T. */
static void trsm(void *buffers[], void *arg)
{
	(void)arg;
	cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, ROWS(buffers[1]), COLS(buffers[1]), 1.0,
		    TILE(buffers[0]), LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]));
}

/* A_ii := A_ii - A_ik A_ik^T (lower triangle). */
static void syrk(void *buffers[], void *arg)
{
	(void)arg;
	cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, ROWS(buffers[0]), COLS(buffers[0]), -1.0, TILE(buffers[0]),
		    LD(buffers[0]), 1.0, TILE(buffers[1]), LD(buffers[1]));
}

/* A_ij := A_ij - A_ik A_jk^T. */
static void gemm(void *buffers[], void *arg)
{
	(void)arg;
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, ROWS(buffers[0]), ROWS(buffers[1]), COLS(buffers[0]), -1.0,
		    TILE(buffers[0]), LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]), 1.0, TILE(buffers[2]), LD(buffers[2]));
}

#define FLOW_MODEL_PREFIX "mpc_example_blas_"
#include "cholesky_flow.h"

/* Symmetric and diagonally dominant, so SPD: A(i, j) = n [i == j] + a value in [-1, 1). */
static double entry(size_t i, size_t j, size_t n)
{
	return (i == j ? (double)n : 0.0) + (i >= j ? tiled_value(i, j) : tiled_value(j, i));
}

int main(int argc, char **argv)
{
	struct dense d;
	int ret = dense_start(&d, argc, argv, "cholesky_blas", entry);

	if (ret != 0)
		return ret;
	cholesky_submit(d.h, (unsigned)d.nt);
	/* A x against L (L^T x), from the lower triangle of a. */
	return dense_finish_triangles(&d, dense_wait(&d), (double)d.n * d.n * d.n / 3.0, CblasLower, CblasNoTrans,
				      CblasNonUnit, CblasLower, CblasTrans, CblasNonUnit);
}
