/* StarPU 1.3 API on MPC: helpers (the subset of StarPU's starpu_helper.h that exists here;
 * starpu_timing_now is declared in starpu_util.h). */
#ifndef MPC_STARPU_HELPER_H
#define MPC_STARPU_HELPER_H

#include "starpu_data.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Copies src_handle's contents into dst_handle, as a task that reads src and writes dst
 * (ordered after the tasks submitted before on either, with sequential consistency). The
 * handles need the same interface and shape: dense built-ins may differ in leading
 * dimensions; a custom interface needs copy_methods->ram_to_ram (or any_to_any), and its
 * compare method, when set, must accept the pair. asynchronous = 0 waits for the copy;
 * callback_func(callback_arg) runs once it is done. Returns 0, -EINVAL (different interfaces or
 * shapes, a null handle), -ENOSYS (no copy method); logged. */
int starpu_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
                    void (*callback_func)(void *), void *callback_arg);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_HELPER_H */
