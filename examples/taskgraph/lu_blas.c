/* Tiled LU factorisation without pivoting, with OpenBLAS and LAPACKE tile kernels, written as a
 * StarPU 1.3 program (the sequential task flow of StarPU's lu example), on a diagonally dominant
 * matrix so that no pivoting is needed. LAPACKE has no GETRF without pivoting: the diagonal
 * tile is factorised by LAPACKE_dgetrf (partial pivoting), and the kernel reports a failure when
 * it chose a pivot off the diagonal (never on this matrix: it stays column diagonally dominant).
 * TRSM (both sides) and GEMM are CBLAS calls. OpenBLAS runs single-threaded inside the tasks.
 *
 *   lu_blas [N [NB]]   factorises an N x N matrix (default 480) in tiles of NB (default 96) in
 *                      place into L (unit lower) and U, then checks L (U x) against A x.
 * Prints "lu_blas: <n> x <n> (tiles of <nb>) on <w> workers (<policy>): OK (residual ratio
 * ...; <s> s, <r> GFlop/s)"; exit 1 on a wrong factorisation or bad arguments, 77 without a
 * worker. */
#include "dense.h"

/* A_kk := L_kk U_kk in place; fails when a row exchange was needed. */
static void getrf(void *buffers[], void *arg)
{
	int n = ROWS(buffers[0]), i, info;
	lapack_int ipiv[2048];
	(void)arg;
	info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, TILE(buffers[0]), LD(buffers[0]), ipiv);
	if (info != 0)
		dense_fail(info);
	for (i = 0; i < n; i++)
		if (ipiv[i] != i + 1)
			dense_fail(-(i + 1));
}

/* A_kj := L_kk^-1 A_kj. */
static void trsm_left(void *buffers[], void *arg)
{
	(void)arg;
	cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, ROWS(buffers[1]), COLS(buffers[1]), 1.0,
		    TILE(buffers[0]), LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]));
}

/* A_ik := A_ik U_kk^-1. */
static void trsm_right(void *buffers[], void *arg)
{
	(void)arg;
	cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, ROWS(buffers[1]), COLS(buffers[1]),
		    1.0, TILE(buffers[0]), LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]));
}

/* A_ij := A_ij - A_ik A_kj. */
static void gemm(void *buffers[], void *arg)
{
	(void)arg;
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ROWS(buffers[0]), COLS(buffers[1]), COLS(buffers[0]), -1.0,
		    TILE(buffers[0]), LD(buffers[0]), TILE(buffers[1]), LD(buffers[1]), 1.0, TILE(buffers[2]), LD(buffers[2]));
}

#define FLOW_MODEL_PREFIX "mpc_example_blas_lu_"
#include "lu_flow.h"

/* Diagonally dominant: A(i, j) = n [i == j] + a value in [-1, 1). */
static double entry(size_t i, size_t j, size_t n)
{
	return (i == j ? (double)n : 0.0) + tiled_value(i, j);
}

int main(int argc, char **argv)
{
	struct dense d;
	int ret = dense_start(&d, argc, argv, "lu_blas", entry);

	if (ret != 0)
		return ret;
	lu_submit(d.h, (size_t)d.nt);
	/* A x against L (U x). */
	return dense_finish_triangles(&d, dense_wait(&d), 2.0 * d.n * d.n * d.n / 3.0, CblasLower, CblasNoTrans, CblasUnit,
				      CblasUpper, CblasNoTrans, CblasNonUnit);
}
