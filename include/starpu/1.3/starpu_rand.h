/* StarPU 1.3 API on MPC: starpu_rand.h, the random-number macros of StarPU's examples and tests,
 * on the C library's drand48 family (STARPU_USE_DRAND48 and STARPU_USE_ERAND48_R are defined, as
 * in a StarPU built on glibc). In a privatized MPI program each rank has its own drand48 state
 * (docs/privatization.md). */
#ifndef MPC_STARPU_RAND_H
#define MPC_STARPU_RAND_H

#include <stdlib.h>

#include "starpu_config.h"
#include "starpu_helper.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The seed a program asks for, or STARPU_RAND_SEED when that is set (as StarPU's). */
#define starpu_seed(seed) starpu_get_env_number_default("STARPU_RAND_SEED", (seed))
#define starpu_srand48(seed) srand48(starpu_seed(seed))
#define starpu_drand48() drand48()
#define starpu_lrand48() lrand48()
#define starpu_erand48(xsubi) erand48(xsubi)

/* The reentrant forms, on a state of the caller's. */
typedef struct drand48_data starpu_drand48_data;
#define starpu_srand48_r(seed, buffer) srand48_r(starpu_seed(seed), buffer)
#define starpu_drand48_r(buffer, result) drand48_r(buffer, result)
#define starpu_lrand48_r(buffer, result) lrand48_r(buffer, result)
#define starpu_erand48_r(xsubi, buffer, result) erand48_r(xsubi, buffer, result)

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_RAND_H */
