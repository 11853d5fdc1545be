/* StarPU 1.3 API on MPC: data handles, access modes, acquisition, sequential consistency,
 * reductions.
 *
 * Access modes: R, W, RW, SCRATCH, REDUX, and COMMUTE with W or RW. (SSEND, LOCALITY and NOPLAN
 * are not implemented and not declared.) */
#ifndef MPC_STARPU_DATA_H
#define MPC_STARPU_DATA_H

#include <stdint.h>

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
    STARPU_RW = (STARPU_R | STARPU_W),
    /** A buffer of the handle's shape for the task alone, contents undefined on entry; no
     * dependency. Register such handles with home node -1 and a NULL pointer. */
    STARPU_SCRATCH = (1 << 2),
    /** A contribution to a reduction: tasks in this mode run in parallel on per-worker copies
     * (set up by the handle's init codelet); the next other access folds them into the data
     * with its reduction codelet (starpu_data_set_reduction_methods()). */
    STARPU_REDUX = (1 << 3),
    /** With STARPU_W or STARPU_RW: consecutive such accesses run in any order, one at a time,
     * and stay ordered against the other accesses before and after them. */
    STARPU_COMMUTE = (1 << 4),
    /** StarPU-MPI's synchronous send of the handle; without StarPU-MPI a hint that changes
     * nothing, as in StarPU. */
    STARPU_SSEND = (1 << 5),
    /** "The data that matters most to the task": a scheduling hint that StarPU 1.3's built
     * policies do not use (only a rebuilt ws/lws does); accepted and ignored. */
    STARPU_LOCALITY = (1 << 6),
    STARPU_ACCESS_MODE_MAX = (1 << 9)
};

/** A data access arbiter: the handles assigned to one are taken by a task all at once or not
 * at all (the centralised solution to the dining philosophers), for their STARPU_COMMUTE
 * accesses and for accesses without sequential consistency; handles without an arbiter are
 * taken one by one in address order. Several arbiters split the centralisation: a task takes
 * its handles arbiter by arbiter. */
typedef struct starpu_arbiter *starpu_arbiter_t;
starpu_arbiter_t starpu_arbiter_create(void);
/** Before any access to the handle (a later call stops the program with a message). */
void starpu_data_assign_arbiter(starpu_data_handle_t handle, starpu_arbiter_t arbiter);
/** Once every handle assigned to it has been unregistered (otherwise the program stops with
 * a message). */
void starpu_arbiter_destroy(starpu_arbiter_t arbiter);

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
/** The data's coordinates (a tile's place in a matrix, say), at most 4 kept. */
void starpu_data_set_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[]);
void starpu_data_set_coordinates(starpu_data_handle_t handle, unsigned dimensions, ...);
/** The coordinates set (the first `dimensions` in dims); returns how many were set. */
unsigned starpu_data_get_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[]);
int starpu_data_acquire(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/** Ends the latest starpu_data_acquire() of the handle (or starpu_data_acquire_cb(), whose
 * callback may call it). */
void starpu_data_release(starpu_data_handle_t handle);

/** Memory nodes for the _on_node variants: main memory (STARPU_MAIN_RAM, 0) is the only node;
 * these two ask for no particular node, which is the same here. */
#define STARPU_ACQUIRE_NO_NODE -1
#define STARPU_ACQUIRE_NO_NODE_LOCK_ALL -2

/** starpu_data_acquire() only if every access submitted before that it would wait for has
 * finished: returns 0 (acquired: release it), or -EAGAIN without waiting. */
int starpu_data_acquire_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
int starpu_data_acquire_on_node_try(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode);
/** starpu_data_acquire() for a memory node (only those above). Returns -EINVAL for another. */
int starpu_data_acquire_on_node(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode);
/** Asynchronous acquisition: returns at once; callback(arg) runs once the data is the
 * application's (on a worker, or on the caller when nothing is in the way); release it with
 * starpu_data_release(), from the callback or later. May be called from tasks and callbacks.
 * Returns 0, or -EINVAL for a bad handle or mode. */
int starpu_data_acquire_cb(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *),
                           void *arg);
int starpu_data_acquire_on_node_cb(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
                                   void (*callback)(void *), void *arg);
/** starpu_data_acquire_cb(); sequential_consistency 0: no order against the tasks submitted
 * before (only exclusion from conflicting ones). */
int starpu_data_acquire_cb_sequential_consistency(starpu_data_handle_t handle, enum starpu_data_access_mode mode,
                                                  void (*callback)(void *), void *arg, int sequential_consistency);
int starpu_data_acquire_on_node_cb_sequential_consistency(starpu_data_handle_t handle, int node,
                                                          enum starpu_data_access_mode mode, void (*callback)(void *),
                                                          void *arg, int sequential_consistency);
/** The same; `quick` changes nothing (one memory node: no fetch to skip). */
int starpu_data_acquire_on_node_cb_sequential_consistency_quick(starpu_data_handle_t handle, int node,
                                                                enum starpu_data_access_mode mode,
                                                                void (*callback)(void *), void *arg,
                                                                int sequential_consistency, int quick);
/** The same, and *pre_sync_jobid / *post_sync_jobid receive job numbers (unique among
 * starpu_task_get_job_id's) for the acquisition's grant and its release (NULL: not wanted). */
int starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(starpu_data_handle_t handle, int node,
                                                                      enum starpu_data_access_mode mode,
                                                                      void (*callback)(void *), void *arg,
                                                                      int sequential_consistency, int quick,
                                                                      long *pre_sync_jobid, long *post_sync_jobid);
/** Ends an acquisition made for `node`. */
void starpu_data_release_on_node(starpu_data_handle_t handle, int node);

/** Declares the data's contents useless (a write access in submission order that writes
 * nothing): invalidate waits for the accesses before it, invalidate_submit does not wait. */
void starpu_data_invalidate(starpu_data_handle_t handle);
void starpu_data_invalidate_submit(starpu_data_handle_t handle);
/** Data movement hints. Main memory (node 0) is the only node and holds the data: fetch with
 * async = 0 waits until the writers submitted before have finished, the others do nothing.
 * Return 0, or -EINVAL for another node. */
int starpu_data_fetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async);
int starpu_data_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async);
/** Makes the handle's main-memory copy (node 0) now if it has none (memory the runtime makes,
 * or evicted: its value is then read back on a helper thread, the next access waiting for
 * it); 0 for a disk node (eviction makes that copy), -ENOMEM without room, -EINVAL for a node
 * that does not exist. */
int starpu_data_request_allocation(starpu_data_handle_t handle, unsigned node);
/** Frees the buffers the workers keep for reuse (scratch and reduction copies) on node 0. */
void starpu_memchunk_tidy(unsigned memory_node);
/** STARPU_PREFETCH (default 1). */
int starpu_get_prefetch_flag(void);
int starpu_data_idle_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async);
/** 1 for main memory (a handle the memory limit evicted to disk is read back at its next use),
 * for a disk node whether its copy there holds the current value, else 0. */
unsigned starpu_data_is_on_node(starpu_data_handle_t handle, unsigned node);
/** A hint that the data will not be used soon: the handle is the first candidate for eviction
 * to disk (starpu_disk.h) until a task or acquisition names it again. */
void starpu_data_wont_use(starpu_data_handle_t handle);
/** The same hints with a priority (only node 0 exists: nothing to move). */
int starpu_data_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int prio);
int starpu_data_idle_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int prio);
/** The handle's state on memory_node (any pointer may be NULL): allocated and valid when its
 * memory exists (a handle registered on node -1 has none before its first use) and holds a
 * value; requested is 0 (transfers are synchronous: none is ever pending). A disk node: whether
 * the handle has a copy there (evicted, or its home) and whether that copy is current. */
void starpu_data_query_status(starpu_data_handle_t handle, int memory_node, int *is_allocated, int *is_valid,
                              int *is_requested);
/** Eviction hint: an important handle is evicted to disk (starpu_disk.h) after every other
 * candidate. */
void starpu_data_advise_as_important(starpu_data_handle_t handle, unsigned is_important);
/** Whether the handle may be evicted to disk (default 1; starpu_disk.h): 0 keeps its
 * main-memory copy whatever the memory limit. */
void starpu_data_set_ooc_flag(starpu_data_handle_t handle, unsigned flag);
unsigned starpu_data_get_ooc_flag(starpu_data_handle_t handle);
/** A name for the handle (copied), for MPC's trace (MPC_TG_TRACE): its "data_names" metadata
 * maps the handle addresses that the tasks' "handles" list to these names. */
void starpu_data_set_name(starpu_data_handle_t handle, const char *name);

struct starpu_codelet;
/** The codelets of STARPU_REDUX accesses: init_cl (one buffer, STARPU_W) sets a worker's copy
 * to the neutral value; redux_cl (two buffers: STARPU_RW|STARPU_COMMUTE, STARPU_R) folds the
 * second into the first. Their first CPU implementation runs. */
void starpu_data_set_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet *redux_cl,
                                       struct starpu_codelet *init_cl);

/** An application pointer attached to the handle. */
void starpu_data_set_user_data(starpu_data_handle_t handle, void *user_data);
void *starpu_data_get_user_data(starpu_data_handle_t handle);

/** Inferred dependencies for the handle (1, the default) or not (0). */
void starpu_data_set_sequential_consistency_flag(starpu_data_handle_t handle, unsigned flag);
/** The nodes a written copy is also written back to at once: main memory is the only node
 * here, so every write is already there; the mask is accepted and has nothing to do. */
void starpu_data_set_wt_mask(starpu_data_handle_t handle, uint32_t wt_mask);
unsigned starpu_data_get_sequential_consistency_flag(starpu_data_handle_t handle);
/** The flag handles registered from now on get. */
void starpu_data_set_default_sequential_consistency_flag(unsigned flag);
unsigned starpu_data_get_default_sequential_consistency_flag(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DATA_H */
