/* StarPU 1.3 API on MPC's task-graph runtime: <starpu_opencl.h>.
 *
 * StarPU declares everything of this header under STARPU_USE_OPENCL, which MPC leaves undefined: there are
 * no OpenCL workers here, as in a StarPU built without them. The header exists so that programs that
 * include it unconditionally (and use it under STARPU_USE_OPENCL) compile unchanged. */
#ifndef MPC_STARPU_OPENCL_H
#define MPC_STARPU_OPENCL_H

#include "starpu_config.h"

#endif /* MPC_STARPU_OPENCL_H */
