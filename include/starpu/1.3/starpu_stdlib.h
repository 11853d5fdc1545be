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

/** starpu_malloc_flags(): account the block against main memory's limit (STARPU_LIMIT_CPU_MEM,
 * or STARPU_LIMIT_CPU_NUMA_0_MEM / STARPU_LIMIT_CPU_NUMA_MEM), which the runtime's own data
 * allocations share. When it does not fit, the workers' cached buffers are freed first, then
 * -ENOMEM. Free such a block with starpu_free_flags() and the same flag and size. */
#define STARPU_MALLOC_COUNT ((1ULL) << 2)
/** With STARPU_MALLOC_COUNT: free nothing to make room; the block is taken beyond the limit
 * (or, with STARPU_MEMORY_WAIT, waits for room). */
#define STARPU_MALLOC_NORECLAIM ((1ULL) << 3)
/** starpu_memory_allocate() (and starpu_malloc_flags): wait for room while tasks in flight may
 * give memory back; -ENOMEM with a message when none can. */
#define STARPU_MEMORY_WAIT ((1ULL) << 4)
/** starpu_memory_allocate(): take the amount even beyond the limit. */
#define STARPU_MEMORY_OVERFLOW ((1ULL) << 5)
/** SimGrid's folded allocation: without SimGrid, a plain block (as in StarPU). */
#define STARPU_MALLOC_SIMULATION_FOLDED ((1ULL) << 6)

/** Accounts size bytes against main memory's limit without allocating them (node 0 only; no
 * limit: always fits). 0, or -ENOMEM when they do not fit (flags 0), unless flags has
 * STARPU_MEMORY_WAIT or STARPU_MEMORY_OVERFLOW. -EINVAL for another node. */
int starpu_memory_allocate(unsigned node, size_t size, int flags);
/** Gives back accounted memory (in one or several calls). */
void starpu_memory_deallocate(unsigned node, size_t size);
/** Waits until size bytes would fit under the limit (while tasks in flight may give memory
 * back; a message when none can). */
void starpu_memory_wait_available(unsigned node, size_t size);

/** Alignment of the blocks starpu_malloc() returns from now on (a power of two; default: that
 * of a pointer). */
void starpu_malloc_set_align(size_t align);
/** The application's allocator for starpu_malloc()/starpu_malloc_flags() and for the memory of
 * the built-in handles the runtime allocates: malloc_hook(node, &p, size, flags) returns 0 and
 * sets p, or -ENOMEM; free_hook(node, p, size, flags) frees it (size 0 from starpu_free(), as
 * in StarPU). Give both or neither (NULL, NULL: the runtime's own again), before starpu_init:
 * otherwise nothing changes and the error is logged. */
typedef int (*starpu_malloc_hook)(unsigned dst_node, void **A, size_t dim, int flags);
typedef int (*starpu_free_hook)(unsigned dst_node, void *A, size_t dim, int flags);
void starpu_malloc_set_hooks(starpu_malloc_hook malloc_hook, starpu_free_hook free_hook);
/** *A receives a block of dim bytes. Returns 0 or -ENOMEM. */
int starpu_malloc(void **A, size_t dim);
/** Frees a block of starpu_malloc(). Returns 0. */
int starpu_free(void *A);
/** starpu_malloc() with flags (STARPU_MALLOC_PINNED, _COUNT, _NORECLAIM, _SIMULATION_FOLDED,
 * STARPU_MEMORY_WAIT; others: -EINVAL). */
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
