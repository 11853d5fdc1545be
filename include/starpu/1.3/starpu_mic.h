/* StarPU 1.3 API on MPC's task-graph runtime: <starpu_mic.h>.
 *
 * StarPU declares everything of this header under STARPU_USE_MIC, which MPC leaves undefined: there are
 * no MIC devices here, as in a StarPU built without them. The header exists so that programs that
 * include it unconditionally (and use it under STARPU_USE_MIC) compile unchanged. */
#ifndef MPC_STARPU_MIC_H
#define MPC_STARPU_MIC_H

#include "starpu_config.h"

#endif /* MPC_STARPU_MIC_H */
