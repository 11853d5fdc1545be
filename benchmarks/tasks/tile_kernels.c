/* The tile kernels of the tiled Cholesky (cblas_dgemm, dsyrk, dtrsm, single-threaded) on the
 * tiles of one n x n column-major matrix, at two leading dimensions, n and n + 8, and on the
 * same tiles stored contiguously (tile by tile, each nb x nb with leading dimension nb). Each sweep
 * walks the updates of every third step k of a Cholesky (trsm of the tiles below (k, k), syrk of
 * the diagonal tiles, gemm of the tiles below the diagonal), so that the tiles come from memory
 * as in the factorisation, once per leading dimension in turn. Time: the thread's CPU time,
 * which the other processes of a loaded machine do not inflate (their cache traffic still
 * does). Prints the GFlop/s of each kernel at each leading dimension.
 *   gcc -O2 -o tile_kernels tile_kernels.c -lopenblas
 *   OPENBLAS_NUM_THREADS=1 ./tile_kernels NB [SWEEPS [N]]   (defaults: 4 sweeps, N = 4096) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int nb = argc > 1 ? atoi(argv[1]) : 320, sweeps = argc > 2 ? atoi(argv[2]) : 4, n = argc > 3 ? atoi(argv[3]) : 4096;
	int ld[3], nt, s, v, k, i, j;
	double *m[3], tg[3] = { 0, 0, 0 }, ts[3] = { 0, 0, 0 }, tt[3] = { 0, 0, 0 }, f;
	long ng = 0, ns = 0, ntr = 0;
	if (nb <= 0 || sweeps <= 0 || n < nb) {
		fprintf(stderr, "usage: tile_kernels NB [SWEEPS [N]]\n");
		return 1;
	}
	nt = n / nb;
	ld[0] = n;
	ld[1] = n + 8;
	ld[2] = nb; /* contiguous tiles */
	for (v = 0; v < 3; v++) {
		size_t e, ne = v == 2 ? (size_t)nt * nt * nb * nb : (size_t)ld[v] * (size_t)n;
		m[v] = malloc(ne * sizeof(double));
		if (m[v] == NULL)
			return 1;
		for (e = 0; e < ne; e++)
			m[v][e] = (double)(e % 97) / 97.0 + (e % ((size_t)ld[v] + 1) == 0 ? n : 0); /* diagonal-heavy */
	}
	for (s = 0; s < sweeps; s++) {
		for (v = 0; v < 3; v++) {
			int l = ld[v];
			double *a = m[v], t;
#define T(ti, tj)                                                                                      \
	(v == 2 ? a + ((size_t)(tj) * (size_t)nt + (size_t)(ti)) * (size_t)nb * (size_t)nb                \
		: a + (size_t)(ti) * (size_t)nb + (size_t)(tj) * (size_t)nb * (size_t)l)
			for (k = 0; k < nt - 1; k += 3) {
				t = cpu_s();
				for (i = k + 1; i < nt; i++)
					cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, nb, nb, 1e-3,
						    T(k, k), l, T(i, k), l);
				tt[v] += cpu_s() - t;
				t = cpu_s();
				for (i = k + 1; i < nt; i++)
					cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, nb, nb, -1e-3, T(i, k), l, 1.0, T(i, i), l);
				ts[v] += cpu_s() - t;
				t = cpu_s();
				for (i = k + 1; i < nt; i++)
					for (j = k + 1; j < i; j++)
						cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, nb, nb, nb, -1e-3, T(i, k), l,
							    T(j, k), l, 1.0, T(i, j), l);
				tg[v] += cpu_s() - t;
				if (v == 0) {
					ntr += nt - k - 1;
					ns += nt - k - 1;
					ng += (long)(nt - k - 1) * (nt - k - 2) / 2;
				}
			}
#undef T
		}
	}
	f = (double)nb * nb * nb;
	for (v = 0; v < 3; v++)
		printf("n %d nb %d %s %d: gemm %.1f syrk %.1f trsm %.1f GFlop/s (thread CPU time, %d sweeps)\n", n, nb,
		       v == 2 ? "tiles, ld" : "ld", ld[v], 2 * f * (double)ng / tg[v] / 1e9, f * (double)ns / ts[v] / 1e9, f * (double)ntr / tt[v] / 1e9, sweeps);
	free(m[0]);
	free(m[1]);
	free(m[2]);
	return 0;
}
