/* StarPU 1.3 API on MPC's task-graph runtime: running drivers (workers) in the application's
 * own threads.
 *
 * A CPU worker listed in starpu_conf::not_launched_drivers (type STARPU_CPU_WORKER, id.cpu_id
 * the worker's number, 0 .. ncpus - 1) gets no thread of the runtime: its tasks run when a
 * thread of the application drives it, with starpu_driver_run() (until
 * starpu_drivers_request_termination() or starpu_shutdown()) or with starpu_driver_init(),
 * starpu_driver_run_once() in a loop and starpu_driver_deinit(), as in StarPU. Each returns 0,
 * or -EINVAL (logged) for a NULL driver, a type other than STARPU_CPU_WORKER (no other worker
 * exists here), a worker the runtime runs itself, or run_once/deinit from a thread that did
 * not call starpu_driver_init. Unlike StarPU, starpu_shutdown() runs the tasks left to a
 * worker that no thread drives any more (StarPU waits for them forever). A not-launched driver
 * of another type is ignored with a warning (no such worker, as in a StarPU built without its
 * driver); one naming a CPU worker that does not exist makes starpu_init() fail with -EINVAL. */
#ifndef MPC_STARPU_DRIVER_H
#define MPC_STARPU_DRIVER_H

#include "starpu_config.h"
#include "starpu_worker.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A driver: StarPU's layout (STARPU_USE_OPENCL is undefined, so the union has no
 * cl_device_id member). */
struct starpu_driver {
    enum starpu_worker_archtype type;
    union {
        unsigned cpu_id;
        unsigned cuda_id;
    } id;
};

/** Initialises driver d in the calling thread, runs its tasks until a termination request,
 * deinitialises it; 0 on success. */
int starpu_driver_run(struct starpu_driver *d);
/** Makes every starpu_driver_run() return (once it has finished the task it runs). */
void starpu_drivers_request_termination(void);
/** Makes the calling thread d's driver. */
int starpu_driver_init(struct starpu_driver *d);
/** Runs one task of d's worker if one is ready for it, then returns (0 also when there was
 * none). */
int starpu_driver_run_once(struct starpu_driver *d);
/** Ends the calling thread's driving of d. */
int starpu_driver_deinit(struct starpu_driver *d);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DRIVER_H */
