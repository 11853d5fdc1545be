/* What the tiled factorisation examples (lu.c, qr.c) share: their arguments, StarPU's start,
 * the test matrix's entries and the tiles registered as sub-matrices of one column-major
 * matrix. Plain StarPU 1.3 calls, so that the examples build against StarPU as well. */
#ifndef MPC_EXAMPLES_TILED_H
#define MPC_EXAMPLES_TILED_H
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>

/* Reads [NT [NB]] (default 6 x 6 tiles of 24) and starts StarPU; returns 0, or the exit status
 * (1 on bad arguments, 77 without a worker). */
static inline int tiled_start(int argc, char **argv, const char *name, int *nt, int *nb)
{
	int ret;
	*nt = argc > 1 ? atoi(argv[1]) : 6;
	*nb = argc > 2 ? atoi(argv[2]) : 24;
	if (*nt <= 0 || *nb <= 0 || *nt > 256 || *nb > 1024) {
		fprintf(stderr, "%s: usage: %s [NT [NB]] with 1 <= NT <= 256, 1 <= NB <= 1024\n", name, name);
		return 1;
	}
	ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	return 0;
}

/* A deterministic value in [-1, 1) for entry (i, j). */
static inline double tiled_value(size_t i, size_t j)
{
	unsigned long x = (unsigned long)(i * 7919 + j * 104729 + 12345) * 2654435761ul;
	return (double)((x >> 11) % 2000) / 1000.0 - 1.0;
}

/* Registers tile (ti, tj) of the n x n matrix a (n = nt * nb) as h[tj * nt + ti]. */
static inline void tiled_register(starpu_data_handle_t *h, double *a, int nt, int nb)
{
	size_t n = (size_t)nt * (size_t)nb, i, j;
	for (j = 0; j < (size_t)nt; j++)
		for (i = 0; i < (size_t)nt; i++)
			starpu_matrix_data_register(&h[j * (size_t)nt + i], STARPU_MAIN_RAM,
						    (uintptr_t)(a + i * (size_t)nb + j * (size_t)nb * n), n, nb, nb, sizeof(double));
}
#endif
