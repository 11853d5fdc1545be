/* The task flow of the tiled LU examples (lu.c with plain loops, lu_blas.c with BLAS/LAPACKE
 * kernels): their codelets and the submission of the tasks, StarPU's sequential task flow with
 * priorities along the critical path and a history model per codelet. The including file
 * defines the kernels getrf (A_kk RW), trsm_left (A_kk R, A_kj RW: L_kk^-1 A_kj), trsm_right
 * (A_kk R, A_ik RW: A_ik U_kk^-1), gemm (A_ik R, A_kj R, A_ij RW) and FLOW_MODEL_PREFIX, the
 * prefix of the models' symbols. Tile (i, j) is h[j * nt + i]. */
#ifndef MPC_EXAMPLES_LU_FLOW_H
#define MPC_EXAMPLES_LU_FLOW_H
#include <starpu.h>

static struct starpu_perfmodel getrf_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "getrf" };
static struct starpu_perfmodel trsml_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "trsm_left" };
static struct starpu_perfmodel trsmr_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "trsm_right" };
static struct starpu_perfmodel gemm_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "gemm" };
static struct starpu_codelet getrf_cl = { .cpu_funcs = { getrf }, .nbuffers = 1, .modes = { STARPU_RW }, .model = &getrf_model, .name = "getrf" };
static struct starpu_codelet trsml_cl = { .cpu_funcs = { trsm_left }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .model = &trsml_model, .name = "trsm_left" };
static struct starpu_codelet trsmr_cl = { .cpu_funcs = { trsm_right }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .model = &trsmr_model, .name = "trsm_right" };
static struct starpu_codelet gemm_cl = { .cpu_funcs = { gemm }, .nbuffers = 3, .modes = { STARPU_R, STARPU_R, STARPU_RW }, .model = &gemm_model, .name = "gemm" };

/* Submits the factorisation of the nt x nt tiles h into L (unit lower) and U, no pivoting. */
static void lu_submit(starpu_data_handle_t *h, size_t nt)
{
	size_t i, j, k;
	int ret;
	for (k = 0; k < nt; k++) {
		ret = starpu_task_insert(&getrf_cl, STARPU_RW, h[k * nt + k], STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert getrf");
		for (j = k + 1; j < nt; j++) {
			int prio = j == k + 1 ? STARPU_MAX_PRIO : STARPU_DEFAULT_PRIO;
			ret = starpu_task_insert(&trsml_cl, STARPU_R, h[k * nt + k], STARPU_RW, h[j * nt + k], STARPU_PRIORITY, prio, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert trsm_left");
			ret = starpu_task_insert(&trsmr_cl, STARPU_R, h[k * nt + k], STARPU_RW, h[k * nt + j], STARPU_PRIORITY, prio, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert trsm_right");
		}
		for (i = k + 1; i < nt; i++)
			for (j = k + 1; j < nt; j++) {
				ret = starpu_task_insert(&gemm_cl, STARPU_R, h[k * nt + i], STARPU_R, h[j * nt + k], STARPU_RW,
							 h[j * nt + i], 0);
				STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert gemm");
			}
	}
}
#endif
