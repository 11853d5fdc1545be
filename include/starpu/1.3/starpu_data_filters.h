/* StarPU 1.3 API on MPC: partitioning data with filters.
 *
 * A partitioned handle's children are handles of their own, with their own dependencies, so
 * tasks on different children run in parallel; while partitioned by starpu_data_partition,
 * tasks may not name the parent (starpu_task_submit returns -EINVAL, with the reason logged).
 * The synchronous calls (starpu_data_partition, starpu_data_unpartition) and the asynchronous
 * ones (plans, read-only plans, implicit switches) are implemented. A filter's get_child_ops gives its children another interface than their
 * parent's (a built-in table such as starpu_interface_vector_ops, or an application's): the
 * child's interface starts zeroed and filter_func fills it. */
#ifndef MPC_STARPU_DATA_FILTERS_H
#define MPC_STARPU_DATA_FILTERS_H

#include <stdarg.h>

#include "starpu_data.h"
#include "starpu_data_interfaces.h"

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_data_interface_ops;

/** How to cut a handle (StarPU's layout). filter_func fills child `id` of `nparts` from the
 * parent's interface (the child's interface is a copy of the parent's on entry). */
struct starpu_data_filter {
    void (*filter_func)(void *father_interface, void *child_interface, struct starpu_data_filter *, unsigned id,
                        unsigned nparts);
    unsigned nchildren;
    /** When set, the number of children (instead of nchildren). */
    unsigned (*get_nchildren)(struct starpu_data_filter *, starpu_data_handle_t initial_handle);
    /** Not supported: must be NULL (children have the parent's interface). */
    struct starpu_data_interface_ops *(*get_child_ops)(struct starpu_data_filter *, unsigned id);
    unsigned filter_arg;
    void *filter_arg_ptr;
};

/** Cuts the handle into children; tasks submitted from now on use the children, after every
 * access to the parent submitted before. Does not block. The program stops with a message for
 * a handle partitioned already. */
void starpu_data_partition(starpu_data_handle_t initial_handle, struct starpu_data_filter *f);
/** Gathers the children back (after every task submitted on them, which it waits for) and
 * frees them, the children's own children first. gathering_node must be STARPU_MAIN_RAM. */
void starpu_data_unpartition(starpu_data_handle_t root_data, unsigned gathering_node);
/** Child i of a partitioned handle; the number of children. */
starpu_data_handle_t starpu_data_get_child(starpu_data_handle_t handle, unsigned i);
int starpu_data_get_nb_children(starpu_data_handle_t handle);
/** The handle `depth` levels down: starpu_data_get_sub_data(A, 2, i, j) is child j of child i. */
starpu_data_handle_t starpu_data_get_sub_data(starpu_data_handle_t root_data, unsigned depth, ...);
starpu_data_handle_t starpu_data_vget_sub_data(starpu_data_handle_t root_data, unsigned depth, va_list pa);
/** Applies nfilters filters (struct starpu_data_filter *) recursively: the first to the root,
 * the second to each of its children, and so on (tiles of a matrix with two filters). */
void starpu_data_map_filters(starpu_data_handle_t root_data, unsigned nfilters, ...);
void starpu_data_vmap_filters(starpu_data_handle_t root_data, unsigned nfilters, va_list pa);

/** Asynchronous partitioning, StarPU 1.3's: plan makes the children (into children[], f's
 * number of them), not usable yet; a handle may have several plans. partition_submit switches
 * to one (after every access to the parent submitted before), unpartition_submit back to the
 * parent (after every access to the children); clean unpartitions the plan if submitted and
 * frees its children once no task uses them (may block). A task or acquisition naming a child
 * of a plan not submitted, or the parent while a plan is, makes these switches itself first,
 * in submission order (StarPU's implicit partitioning). At most one plan is submitted
 * read-write; several may be submitted read-only (then the parent and those children may be
 * read concurrently, not written). Misuse (unpartitioning a plan not submitted, submitting a
 * second plan read-write) stops the program with a message, as StarPU asserts. */
void starpu_data_partition_plan(starpu_data_handle_t initial_handle, struct starpu_data_filter *f,
                                starpu_data_handle_t *children);
void starpu_data_partition_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                  starpu_data_handle_t *children);
/** The children may only be read, and so may the parent; other read-only plans may be on. */
void starpu_data_partition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                           starpu_data_handle_t *children);
/** The plan submitted read-only, the only one submitted, becomes read-write. */
void starpu_data_partition_readwrite_upgrade_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                                    starpu_data_handle_t *children);
void starpu_data_unpartition_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                    starpu_data_handle_t *children, int gathering_node);
/** Unpartitions every plan submitted under the handle, the deepest first. */
void starpu_data_unpartition_submit_r(starpu_data_handle_t initial_handle, int gathering_node);
/** Back to the parent, the plan staying submitted read-only. */
void starpu_data_unpartition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                             starpu_data_handle_t *children, int gathering_node);
void starpu_data_partition_clean(starpu_data_handle_t root_data, unsigned nparts, starpu_data_handle_t *children);
/** The same with sequential_consistency 0: the switch is not ordered with the parent's other
 * accesses (the children's stay ordered); the callback runs when the unpartition is done. */
void starpu_data_unpartition_submit_sequential_consistency_cb(starpu_data_handle_t initial_handle, unsigned nparts,
                                                              starpu_data_handle_t *children, int gather_node,
                                                              int sequential_consistency,
                                                              void (*callback_func)(void *), void *callback_arg);
void starpu_data_partition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts,
                                                         starpu_data_handle_t *children, int sequential_consistency);
void starpu_data_unpartition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts,
                                                           starpu_data_handle_t *children, int gathering_node,
                                                           int sequential_consistency);

/* Standard filters (StarPU's: parts as equal as possible, the first ones one element larger). */
/** Vector into nparts contiguous pieces. */
void starpu_vector_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                unsigned id, unsigned nparts);
/** The same with (uintptr_t)filter_arg_ptr elements of overlap on each side (StarPU's way of
 * passing the shadow; the pieces share them). */
void starpu_vector_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                       unsigned id, unsigned nparts);
/** Vector into parts of the lengths in filter_arg_ptr (nparts uint32_t; long for _long). */
void starpu_vector_filter_list(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                               unsigned id, unsigned nparts);
void starpu_vector_filter_list_long(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                    unsigned id, unsigned nparts);
/** Vector into 2 parts: the first filter_arg elements, and the rest (nchildren must be 2). */
void starpu_vector_filter_divide_in_2(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                      unsigned id, unsigned nparts);
/** CSR matrix into blocks of rows (as equal as possible, the first ones one row larger): each
 * child's rowptr and colind point into the father's arrays, its nzval at its first entry, and its
 * firstentry is its first entry's index in the father's numbering. */
void starpu_csr_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                      unsigned id, unsigned nparts);
/** BCSR matrix into blocks of block rows (as equal as possible, the first ones one larger), the
 * children's arrays pointing into the father's as with CSR. */
void starpu_bcsr_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                       unsigned id, unsigned nparts);
/** BCSR matrix into its blocks, each an r x c dense matrix (ld = c) over the father's values:
 * get_child_ops must be starpu_bcsr_filter_canonical_block_child_ops and get_nchildren
 * starpu_bcsr_filter_canonical_block_get_nchildren (one child per block, in nzval order). */
void starpu_bcsr_filter_canonical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                        unsigned id, unsigned nparts);
/** The number of blocks (nnz) of a BCSR handle: the canonical block filter's children. */
unsigned starpu_bcsr_filter_canonical_block_get_nchildren(struct starpu_data_filter *f, starpu_data_handle_t handle);
/** The interface of the canonical block filter's children: starpu_interface_matrix_ops. */
struct starpu_data_interface_ops *starpu_bcsr_filter_canonical_block_child_ops(struct starpu_data_filter *f,
                                                                               unsigned child);
/** Matrix into blocks along x (the contiguous dimension: nx / nparts by ny). */
void starpu_matrix_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                unsigned id, unsigned nparts);
/** Matrix into blocks along y (nx by ny / nparts). */
void starpu_matrix_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                         unsigned id, unsigned nparts);
/** 3-D block into blocks along x, y, z. */
void starpu_block_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                               unsigned id, unsigned nparts);
void starpu_block_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                        unsigned id, unsigned nparts);
void starpu_block_filter_depth_block(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                     unsigned id, unsigned nparts);
/** The same cuts with (uintptr_t)filter_arg_ptr elements of overlap on each side of each part. */
void starpu_matrix_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                       unsigned id, unsigned nparts);
void starpu_matrix_filter_vertical_block_shadow(void *father_interface, void *child_interface,
                                                struct starpu_data_filter *f, unsigned id, unsigned nparts);
void starpu_block_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f,
                                      unsigned id, unsigned nparts);
void starpu_block_filter_vertical_block_shadow(void *father_interface, void *child_interface,
                                               struct starpu_data_filter *f, unsigned id, unsigned nparts);
void starpu_block_filter_depth_block_shadow(void *father_interface, void *child_interface,
                                            struct starpu_data_filter *f, unsigned id, unsigned nparts);

/** For a filter of one's own: part id of n elements cut in nparts gets *chunk_size elements (the
 * first n % nparts parts one more) starting *offset bytes in (elements of elemsize bytes, ld
 * apart; offset may be NULL). */
void starpu_filter_nparts_compute_chunk_size_and_offset(unsigned n, unsigned nparts, size_t elemsize, unsigned id,
                                                        unsigned ld, unsigned *chunk_size, size_t *offset);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DATA_FILTERS_H */
