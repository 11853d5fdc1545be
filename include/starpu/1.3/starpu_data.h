/* StarPU 1.3 API on MPC: data handles, access modes, acquisition, sequential consistency.
 *
 * Access modes: R, W and RW. SCRATCH, REDUX and COMMUTE are not implemented yet and therefore not
 * declared: a program that uses them does not compile. */
#ifndef MPC_STARPU_DATA_H
#define MPC_STARPU_DATA_H

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mpc_starpu_data;
/** A registered piece of data. */
typedef struct mpc_starpu_data *starpu_data_handle_t;

/* The values are StarPU's. */
enum starpu_data_access_mode {
    STARPU_NONE = 0,
    STARPU_R = (1 << 0),
    STARPU_W = (1 << 1),
    STARPU_RW = (STARPU_R | STARPU_W)
};

/** Waits until no submitted task uses the handle (may block), then forgets it; the memory
 * goes back to the application, up to date. Unregistering a handle that the application holds
 * acquired, or from inside a task, is an error: the program stops with a message. */
void starpu_data_unregister(starpu_data_handle_t handle);

/** starpu_data_unregister() without bringing the data back to main memory: the same here, main
 * memory being the only one. */
void starpu_data_unregister_no_coherency(starpu_data_handle_t handle);
/** Forgets the handle once no submitted task uses it any more; does not wait. No task may name
 * it afterwards. */
void starpu_data_unregister_submit(starpu_data_handle_t handle);

/** Takes the data for the application in the given mode, in submission order: waits until
 * every earlier conflicting task has finished. Returns 0, or -EDEADLK when called from a task
 * or callback. */
int starpu_data_acquire(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/** Ends the latest starpu_data_acquire() of the handle. */
void starpu_data_release(starpu_data_handle_t handle);

/** Inferred dependencies for the handle (1, the default) or not (0). */
void starpu_data_set_sequential_consistency_flag(starpu_data_handle_t handle, unsigned flag);
unsigned starpu_data_get_sequential_consistency_flag(starpu_data_handle_t handle);
/** The flag handles registered from now on get. */
void starpu_data_set_default_sequential_consistency_flag(unsigned flag);
unsigned starpu_data_get_default_sequential_consistency_flag(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DATA_H */
