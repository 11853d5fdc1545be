/* StarPU 1.3 API on MPC: worker queries. Workers are user-level threads on MPC's virtual
 * processors, one per VP by default (STARPU_NCPU / MPC_TG_NCPU). */
#ifndef MPC_STARPU_WORKER_H
#define MPC_STARPU_WORKER_H

#include <stddef.h>

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

enum starpu_worker_archtype {
    STARPU_CPU_WORKER = 0,
    STARPU_CUDA_WORKER = 1,
    STARPU_OPENCL_WORKER = 2,
    STARPU_ANY_WORKER = 6
};

/** Number of workers (all CPU workers). */
unsigned starpu_worker_get_count(void);
unsigned starpu_cpu_worker_get_count(void);
/** 0: no CUDA or OpenCL worker exists. */
unsigned starpu_cuda_worker_get_count(void);
unsigned starpu_opencl_worker_get_count(void);
int starpu_worker_get_count_by_type(enum starpu_worker_archtype type);
/** The calling worker's id, or -1 outside a worker. */
int starpu_worker_get_id(void);
enum starpu_worker_archtype starpu_worker_get_type(int id);
/** "CPU <id>" (with the VP it runs on), truncated to maxlen. */
void starpu_worker_get_name(int id, char *dst, size_t maxlen);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_WORKER_H */
