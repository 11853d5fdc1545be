/* StarPU 1.3 API on MPC: helpers (the subset of StarPU's starpu_helper.h that exists here;
 * starpu_timing_now is declared in starpu_util.h). */
#ifndef MPC_STARPU_HELPER_H
#define MPC_STARPU_HELPER_H

#include <stdio.h>
#include <stdlib.h>

#include <hwloc.h>

#include "starpu_data.h"
#include "starpu_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/** getenv(), as StarPU's (which SimGrid builds redirect). */
static inline char *starpu_getenv(const char *str) { return getenv(str); }

/** The integer value of environment variable str, -1 when it is not set; a value that is not
 * an integer, or a negative one, stops the program with a message (as StarPU does). */
static inline int starpu_get_env_number(const char *str) {
    char *v = starpu_getenv(str);
    if (v == NULL) {
        return -1;
    }
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0') {
        fprintf(stderr, "The %s environment variable must contain an integer\n", str);
        STARPU_ABORT();
    }
    STARPU_ASSERT_MSG(n >= 0, "The value for the environment variable '%s' cannot be negative", str);
    return (int)n;
}

/** starpu_get_env_number(), defval when the variable is not set. */
static inline int starpu_get_env_number_default(const char *str, int defval) {
    int n = starpu_get_env_number(str);
    return n == -1 ? defval : n;
}

/** The floating-point value of environment variable str, defval when it is not set. */
static inline float starpu_get_env_float_default(const char *str, float defval) {
    char *v = starpu_getenv(str);
    if (v == NULL) {
        return defval;
    }
    char *end = NULL;
    float f = strtof(v, &end);
    if (end == v || *end != '\0') {
        fprintf(stderr, "The %s environment variable must contain a float\n", str);
        STARPU_ABORT();
    }
    return f;
}

/** The position in strings (NULL-terminated) of environment variable str's value, compared
 * without case; defvalue when str is not set. A value not in the list stops the program with
 * the list of valid ones (as StarPU does). */
int starpu_get_env_string_var_default(const char *str, const char *strings[], int defvalue);
/** A size in bytes from environment variable str ("12", "12K", "3M", "1G", "512B"; a number
 * alone is in KiB, as in StarPU; spaces ignored); defval when str is unset or empty. A
 * malformed value stops the program with a message. */
int starpu_get_env_size_default(const char *str, int defval);

/** Copies src_handle's contents into dst_handle, as a task that reads src and writes dst
 * (ordered after the tasks submitted before on either, with sequential consistency). The
 * handles need the same interface and shape: dense built-ins may differ in leading
 * dimensions; a custom interface needs copy_methods->ram_to_ram (or any_to_any), and its
 * compare method, when set, must accept the pair. asynchronous = 0 waits for the copy;
 * callback_func(callback_arg) runs once it is done. Returns 0, -EINVAL (different interfaces or
 * shapes, a null handle), -ENOSYS (no copy method); logged. */
int starpu_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
                    void (*callback_func)(void *), void *callback_arg);

/** Calls func(arg) once on each worker whose type is in where (STARPU_CPU: every worker here;
 * a mask without STARPU_CPU calls nothing), the workers in parallel; returns once every call
 * has. Not from a task or a callback (it waits). */
void starpu_execute_on_each_worker(void (*func)(void *), void *arg, uint32_t where);
/** starpu_execute_on_each_worker() with name as the tasks' name (traces). */
void starpu_execute_on_each_worker_ex(void (*func)(void *), void *arg, uint32_t where, const char *name);
/** Calls func(arg) once on each of the num_workers workers listed, in parallel; returns once
 * every call has. */
void starpu_execute_on_specific_workers(void (*func)(void *), void *arg, unsigned num_workers, unsigned *workers,
                                        const char *name);

/** The machine's hwloc topology as the runtime loaded it: to read, never to change or destroy. */
hwloc_topology_t starpu_get_hwloc_topology(void);
/** The OS index of the PU of hwloc logical index logical_index (the index itself when hwloc
 * does not know it). */
int starpu_get_pu_os_index(unsigned logical_index);
/** Prints (stdout) where each worker runs: its VP, PU, core and NUMA node (StarPU runs hwloc-ps). */
void starpu_display_bindings(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_HELPER_H */
