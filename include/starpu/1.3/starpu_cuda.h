/* StarPU 1.3 API on MPC's task-graph runtime: <starpu_cuda.h>.
 *
 * StarPU declares everything of this header under STARPU_USE_CUDA, which MPC leaves undefined: there are
 * no CUDA workers here, as in a StarPU built without them. The header exists so that programs that
 * include it unconditionally (and use it under STARPU_USE_CUDA) compile unchanged. */
#ifndef MPC_STARPU_CUDA_H
#define MPC_STARPU_CUDA_H

#include "starpu_config.h"

#endif /* MPC_STARPU_CUDA_H */
