/* StarPU 1.3 API on MPC: the heteroprio policy's configuration (docs/taskgraph.md, "heteroprio").
 *
 * Under STARPU_SCHED=heteroprio (or sched_policy_name "heteroprio"), starpu_init() calls
 * starpu_conf::sched_policy_init(0) once the workers are known; there the application calls
 * these functions to set up the buckets. A task's priority is then the number of its bucket
 * (0 to STARPU_HETEROPRIO_MAX_PRIO - 1), and each architecture takes tasks from its buckets in
 * the order of their mapping: priority 0 of the architecture first. Without sched_policy_init
 * heteroprio keeps one bucket per priority level and takes the highest first.
 *
 * Misuse stops the program with a message naming the call, as StarPU asserts: an argument out
 * of range, a call outside sched_policy_init or for another context. A configuration that
 * StarPU would refuse at initialisation (a bucket mapped beyond the architecture's
 * nb_prios, an architecture with workers and no bucket) makes starpu_init() return -EINVAL with
 * the reason logged; a task whose priority is no bucket a worker takes stops the program when it
 * becomes ready. Only CPU workers exist: the other architectures' rows are checked and kept, and
 * the faster architecture and slow factors (which only hold a slower architecture back) change
 * nothing with one architecture. No task is prefetched into a worker's queue
 * (STARPU_HETEROPRIO_MAX_PREFETCH is StarPU's value, for programs that read it). */
#ifndef MPC_STARPU_HETEROPRIO_H
#define MPC_STARPU_HETEROPRIO_H

#include "starpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STARPU_HETEROPRIO_MAX_PRIO 100
#define STARPU_HETEROPRIO_MAX_PREFETCH 2

/** Architectures, as heteroprio indexes them. */
enum starpu_heteroprio_types {
    STARPU_CPU_IDX,
    STARPU_CUDA_IDX,
    STARPU_OPENCL_IDX,
    STARPU_MIC_IDX,
    STARPU_MPI_MS_IDX,
    STARPU_NB_TYPES
};

/** The STARPU_CPU... bit of each architecture index (0 after the last). */
static const unsigned starpu_heteroprio_types_to_arch[STARPU_NB_TYPES + 1] = {
    STARPU_CPU, STARPU_CUDA, STARPU_OPENCL, STARPU_MIC, STARPU_MPI_MS, 0};

/** arch takes its buckets from its priorities 0 .. max_prio - 1 (max_prio < STARPU_HETEROPRIO_MAX_PRIO). */
void starpu_heteroprio_set_nb_prios(unsigned sched_ctx_id, enum starpu_heteroprio_types arch, unsigned max_prio);
/** arch's priority source_prio is bucket dest_bucket_id (< STARPU_HETEROPRIO_MAX_PRIO), which
 * arch then takes tasks from. */
void starpu_heteroprio_set_mapping(unsigned sched_ctx_id, enum starpu_heteroprio_types arch, unsigned source_prio,
                                   unsigned dest_bucket_id);
/** arch is the fastest on the tasks of bucket bucket_id (optional). */
void starpu_heteroprio_set_faster_arch(unsigned sched_ctx_id, enum starpu_heteroprio_types arch, unsigned bucket_id);
/** arch is slow_factor times slower than the fastest on bucket bucket_id's tasks (optional): it
 * takes one only while the bucket holds at least slow_factor tasks per worker of the fastest. */
void starpu_heteroprio_set_arch_slow_factor(unsigned sched_ctx_id, enum starpu_heteroprio_types arch,
                                            unsigned bucket_id, float slow_factor);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_HETEROPRIO_H */
