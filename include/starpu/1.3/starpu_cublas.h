/* StarPU 1.3 API on MPC: starpu_cublas.h. No CUDA worker exists (STARPU_USE_CUDA is undefined),
 * so there is no CUBLAS to set up: these calls do nothing, as in a StarPU built without CUDA,
 * where programs such as StarPU's axpy example call them unconditionally. */
#ifndef MPC_STARPU_CUBLAS_H
#define MPC_STARPU_CUBLAS_H

#ifdef __cplusplus
extern "C" {
#endif

/** Would initialise CUBLAS on every CUDA worker: none here. */
void starpu_cublas_init(void);
/** Would attach CUBLAS to the calling CUDA worker's stream: none here. */
void starpu_cublas_set_stream(void);
/** Would shut CUBLAS down on every CUDA worker: none here. */
void starpu_cublas_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_CUBLAS_H */
