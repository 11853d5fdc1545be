/* <starpu.h> for programs compiled with mpc_cc (-I<prefix>/include): MPC's StarPU 1.3 API, whose
 * headers live in starpu/1.3/ as StarPU installs them (pkg-config starpu-1.3 points there). */
#ifndef MPC_STARPU_FORWARD_H
#define MPC_STARPU_FORWARD_H
#include "starpu/1.3/starpu.h"
#endif
