/* StarPU 1.3 API on MPC's task-graph runtime: <starpu_mpi_ms.h>.
 *
 * StarPU declares everything of this header under STARPU_USE_MPI_MASTER_SLAVE, which MPC leaves undefined: there are
 * no MPI master-slave devices here, as in a StarPU built without them. The header exists so that programs that
 * include it unconditionally (and use it under STARPU_USE_MPI_MASTER_SLAVE) compile unchanged. */
#ifndef MPC_STARPU_MPI_MS_H
#define MPC_STARPU_MPI_MS_H

#include "starpu_config.h"

#endif /* MPC_STARPU_MPI_MS_H */
