/* StarPU 1.3 API on MPC: memory for data. With CPU workers only, pinning is a no-op. */
#ifndef MPC_STARPU_STDLIB_H
#define MPC_STARPU_STDLIB_H

#include <stddef.h>

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** starpu_malloc_flags(): page-locked memory for GPU transfers (no GPU here: plain memory). */
#define STARPU_MALLOC_PINNED ((1ULL) << 1)

/** Alignment of the blocks starpu_malloc() returns from now on (a power of two; default: that
 * of a pointer). */
void starpu_malloc_set_align(size_t align);
/** *A receives a block of dim bytes. Returns 0 or -ENOMEM. */
int starpu_malloc(void **A, size_t dim);
/** Frees a block of starpu_malloc(). Returns 0. */
int starpu_free(void *A);
/** starpu_malloc() with flags (STARPU_MALLOC_PINNED or 0; others: -EINVAL). */
int starpu_malloc_flags(void **A, size_t dim, int flags);
int starpu_free_flags(void *A, size_t dim, int flags);
/** Page-locks [addr, addr + size) for GPU transfers: with no GPU, nothing to do; returns 0 (as a
 * StarPU built without CUDA). */
int starpu_memory_pin(void *addr, size_t size);
/** Undoes starpu_memory_pin(); returns 0. */
int starpu_memory_unpin(void *addr, size_t size);
/** Suspends the caller for nb_sec seconds (nb_micro_sec microseconds). From a task the worker
 * stays busy, as in StarPU; the VP runs its other user-level threads meanwhile. */
void starpu_sleep(float nb_sec);
void starpu_usleep(float nb_micro_sec);

/** Main memory's size in bytes (node 0, the only one): the runtime's memory limit
 * (STARPU_LIMIT_CPU_MEM) when one is set, else the machine's memory, as StarPU counts it; and
 * what the runtime's own allocations (scratch, redux copies, handles registered without
 * memory) leave of it. -1 for another node. The _all_nodes forms: the same (one node). */
starpu_ssize_t starpu_memory_get_total(unsigned node);
starpu_ssize_t starpu_memory_get_available(unsigned node);
starpu_ssize_t starpu_memory_get_total_all_nodes(void);
starpu_ssize_t starpu_memory_get_available_all_nodes(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_STDLIB_H */
