/* The task flow of the tiled QR examples (qr.c with plain-loop Householder kernels, qr_blas.c
 * with LAPACKE kernels): the tile algorithm of PLASMA, its codelets and the submission of the
 * tasks with a history model per codelet. Each tile has a second handle for the factors of its
 * reflectors (taus, or the T factors). The including file defines the kernels geqrt (A_kk RW,
 * F_kk W), unmqr (A_kk R, F_kk R, A_kj RW), tsqrt (A_kk RW, A_ik RW, F_ik W), tsmqr (A_ik R,
 * F_ik R, A_kj RW, A_ij RW) and FLOW_MODEL_PREFIX, the prefix of the models' symbols. Tile
 * (i, j) is h[j * nt + i], its factors f[j * nt + i]. */
#ifndef MPC_EXAMPLES_QR_FLOW_H
#define MPC_EXAMPLES_QR_FLOW_H
#include <starpu.h>

static struct starpu_perfmodel geqrt_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "geqrt" };
static struct starpu_perfmodel unmqr_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "unmqr" };
static struct starpu_perfmodel tsqrt_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "tsqrt" };
static struct starpu_perfmodel tsmqr_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "tsmqr" };
static struct starpu_codelet geqrt_cl = { .cpu_funcs = { geqrt }, .nbuffers = 2, .modes = { STARPU_RW, STARPU_W }, .model = &geqrt_model, .name = "geqrt" };
static struct starpu_codelet unmqr_cl = { .cpu_funcs = { unmqr }, .nbuffers = 3, .modes = { STARPU_R, STARPU_R, STARPU_RW }, .model = &unmqr_model, .name = "unmqr" };
static struct starpu_codelet tsqrt_cl = { .cpu_funcs = { tsqrt }, .nbuffers = 3, .modes = { STARPU_RW, STARPU_RW, STARPU_W }, .model = &tsqrt_model, .name = "tsqrt" };
static struct starpu_codelet tsmqr_cl = { .cpu_funcs = { tsmqr }, .nbuffers = 4, .modes = { STARPU_R, STARPU_R, STARPU_RW, STARPU_RW }, .model = &tsmqr_model, .name = "tsmqr" };

/* Submits the factorisation of the nt x nt tiles h into R and the reflectors. */
static void qr_submit(starpu_data_handle_t *h, starpu_data_handle_t *f, size_t nt)
{
	size_t i, j, k;
	int ret;
	for (k = 0; k < nt; k++) {
		ret = starpu_task_insert(&geqrt_cl, STARPU_RW, h[k * nt + k], STARPU_W, f[k * nt + k], STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert geqrt");
		for (j = k + 1; j < nt; j++) {
			ret = starpu_task_insert(&unmqr_cl, STARPU_R, h[k * nt + k], STARPU_R, f[k * nt + k], STARPU_RW, h[j * nt + k], 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert unmqr");
		}
		for (i = k + 1; i < nt; i++) {
			ret = starpu_task_insert(&tsqrt_cl, STARPU_RW, h[k * nt + k], STARPU_RW, h[k * nt + i], STARPU_W, f[k * nt + i],
						 STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert tsqrt");
			for (j = k + 1; j < nt; j++) {
				ret = starpu_task_insert(&tsmqr_cl, STARPU_R, h[k * nt + i], STARPU_R, f[k * nt + i], STARPU_RW,
							 h[j * nt + k], STARPU_RW, h[j * nt + i], 0);
				STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert tsmqr");
			}
		}
	}
}
#endif
