/* The task flow of the tiled Cholesky examples (cholesky.c with plain loops, cholesky_blas.c
 * with BLAS kernels): their codelets and the submission of the tasks, StarPU's sequential task
 * flow with priorities along the critical path as StarPU's cholesky example sets them (the
 * maximum for potrf, for the trsm below the diagonal tile and for the syrk that updates the next
 * diagonal tile: potrf(k) -> trsm(k+1, k) -> syrk(k+1, k+1) -> potrf(k+1)) and a history model
 * per codelet. The including
 * file defines the kernels potrf (1 buffer: A_kk, RW), trsm (L_kk R, A_ik RW), syrk (A_ik R,
 * A_ii RW), gemm (A_ik R, A_jk R, A_ij RW) and FLOW_MODEL_PREFIX, the prefix of the models'
 * symbols. Tile (i, j) is h[j * nt + i]. */
#ifndef MPC_EXAMPLES_CHOLESKY_FLOW_H
#define MPC_EXAMPLES_CHOLESKY_FLOW_H
#include <starpu.h>

static struct starpu_perfmodel potrf_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "potrf" };
static struct starpu_perfmodel trsm_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "trsm" };
static struct starpu_perfmodel syrk_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "syrk" };
static struct starpu_perfmodel gemm_model = { .type = STARPU_HISTORY_BASED, .symbol = FLOW_MODEL_PREFIX "gemm" };
static struct starpu_codelet potrf_cl = { .cpu_funcs = { potrf }, .nbuffers = 1, .modes = { STARPU_RW }, .model = &potrf_model, .name = "potrf" };
static struct starpu_codelet trsm_cl = { .cpu_funcs = { trsm }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .model = &trsm_model, .name = "trsm" };
static struct starpu_codelet syrk_cl = { .cpu_funcs = { syrk }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .model = &syrk_model, .name = "syrk" };
static struct starpu_codelet gemm_cl = { .cpu_funcs = { gemm }, .nbuffers = 3, .modes = { STARPU_R, STARPU_R, STARPU_RW }, .model = &gemm_model, .name = "gemm" };

/* Submits the factorisation of the nt x nt tiles h (lower triangle) into L. */
static void cholesky_submit(starpu_data_handle_t *h, unsigned nt)
{
	unsigned i, j, k;
	int ret;
	for (k = 0; k < nt; k++) {
		ret = starpu_task_insert(&potrf_cl, STARPU_RW, h[k * nt + k], STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert potrf");
		for (i = k + 1; i < nt; i++) {
			ret = starpu_task_insert(&trsm_cl, STARPU_R, h[k * nt + k], STARPU_RW, h[k * nt + i], STARPU_PRIORITY,
						 i == k + 1 ? STARPU_MAX_PRIO : STARPU_DEFAULT_PRIO, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert trsm");
		}
		for (i = k + 1; i < nt; i++) {
			ret = starpu_task_insert(&syrk_cl, STARPU_R, h[k * nt + i], STARPU_RW, h[i * nt + i], STARPU_PRIORITY,
						 i == k + 1 ? STARPU_MAX_PRIO : STARPU_DEFAULT_PRIO, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert syrk");
			for (j = k + 1; j < i; j++) {
				ret = starpu_task_insert(&gemm_cl, STARPU_R, h[k * nt + i], STARPU_R, h[k * nt + j], STARPU_RW,
							 h[j * nt + i], 0);
				STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert gemm");
			}
		}
	}
}
#endif
