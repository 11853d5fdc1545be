/* StarPU 1.3 API on MPC: performance models.
 *
 * The structure is accepted so that codelets that name a model compile; the eager and prio
 * policies, the only ones implemented so far, do not use models (as in StarPU), and nothing is
 * measured or stored yet. Cost functions and the other fields are not declared: a program that
 * sets them does not compile. */
#ifndef MPC_STARPU_PERFMODEL_H
#define MPC_STARPU_PERFMODEL_H

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

enum starpu_perfmodel_type {
    STARPU_PERFMODEL_INVALID = 0,
    STARPU_PER_ARCH,
    STARPU_COMMON,
    STARPU_HISTORY_BASED,
    STARPU_REGRESSION_BASED,
    STARPU_NL_REGRESSION_BASED,
    STARPU_MULTIPLE_REGRESSION_BASED
};

struct starpu_perfmodel {
    enum starpu_perfmodel_type type;
    /** Name of the model (its file, once models are stored). */
    const char *symbol;
};

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_PERFMODEL_H */
