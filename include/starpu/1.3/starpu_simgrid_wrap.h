/* StarPU 1.3 API on MPC's task-graph runtime: <starpu_simgrid_wrap.h>.
 *
 * StarPU declares everything of this header under STARPU_SIMGRID, which MPC leaves undefined: there are
 * no SimGrid simulation here, as in a StarPU built without them. The header exists so that programs that
 * include it unconditionally (and use it under STARPU_SIMGRID) compile unchanged. */
#ifndef MPC_STARPU_SIMGRID_WRAP_H
#define MPC_STARPU_SIMGRID_WRAP_H

#include "starpu_config.h"

#endif /* MPC_STARPU_SIMGRID_WRAP_H */
