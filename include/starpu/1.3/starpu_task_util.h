/* StarPU 1.3 API on MPC: starpu_task_insert() and packed codelet arguments.
 *
 * The argument keys keep StarPU's values. Keys of features not implemented yet (worker order,
 * scheduling contexts, ...) are not declared: using one
 * does not compile. */
#ifndef MPC_STARPU_TASK_UTIL_H
#define MPC_STARPU_TASK_UTIL_H

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starpu_task.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STARPU_MODE_SHIFT 17
/** followed by a pointer and a size: a value packed into cl_arg (starpu_codelet_unpack_args) */
#define STARPU_VALUE (1 << STARPU_MODE_SHIFT)
/** followed by a function void (*)(void *): the callback */
#define STARPU_CALLBACK (2 << STARPU_MODE_SHIFT)
/** followed by a function and its argument, which is freed (free()) with the task, as with
 * StarPU (starpu_task::callback_arg_free set) */
#define STARPU_CALLBACK_WITH_ARG (3 << STARPU_MODE_SHIFT)
/** followed by the callback's argument, freed with the task */
#define STARPU_CALLBACK_ARG (4 << STARPU_MODE_SHIFT)
/** followed by an int: the MPI node to run on (accepted and ignored outside StarPU-MPI, as by
 * StarPU's starpu_task_insert) */
#define STARPU_EXECUTE_ON_NODE (6 << STARPU_MODE_SHIFT)
/** followed by a handle whose owner runs the task under StarPU-MPI (ignored here, as by StarPU) */
#define STARPU_EXECUTE_ON_DATA (7 << STARPU_MODE_SHIFT)
/** followed by a double: the task's floating-point operation count (starpu_task::flops) */
#define STARPU_FLOPS (12 << STARPU_MODE_SHIFT)
/** followed by a starpu_tag_t: the tag, without making the task depend on it or notify it
 * (starpu_task::tag_id only; use_tag stays 0) */
#define STARPU_TAG_ONLY (20 << STARPU_MODE_SHIFT)
/** followed by an int: StarPU-MPI's node selection policy (ignored here, as by StarPU) */
#define STARPU_NODE_SELECTION_POLICY (23 << STARPU_MODE_SHIFT)
/** as STARPU_CL_ARGS, but the buffer is not freed with the task */
#define STARPU_CL_ARGS_NFREE (26 << STARPU_MODE_SHIFT)
/** followed by an unsigned count and an array of tasks: starpu_task_declare_deps_array() */
#define STARPU_TASK_DEPS_ARRAY (27 << STARPU_MODE_SHIFT)
/** followed by an int: the task's colour in traces (starpu_task::color) */
#define STARPU_TASK_COLOR (28 << STARPU_MODE_SHIFT)
/** followed by an unsigned: the task's sequential consistency (starpu_task::sequential_consistency) */
#define STARPU_SEQUENTIAL_CONSISTENCY (34 << STARPU_MODE_SHIFT)
/** followed by an unsigned: do not number the task in submission order (no effect here: tasks
 * carry no submission number) */
#define STARPU_TASK_NO_SUBMITORDER (36 << STARPU_MODE_SHIFT)
/** as STARPU_CALLBACK_ARG, but the argument is not freed */
#define STARPU_CALLBACK_ARG_NFREE (37 << STARPU_MODE_SHIFT)
/** as STARPU_CALLBACK_WITH_ARG, but the argument is not freed */
#define STARPU_CALLBACK_WITH_ARG_NFREE (38 << STARPU_MODE_SHIFT)
/** followed by a void *: starpu_task::sched_data */
#define STARPU_TASK_SCHED_DATA (41 << STARPU_MODE_SHIFT)
/** followed by a function pointer and by its argument: starpu_task::prologue_callback_func
 * (run at submission) and prologue_callback_arg (_ARG: freed with the task; _ARG_NFREE: not) */
#define STARPU_PROLOGUE_CALLBACK (14 << STARPU_MODE_SHIFT)
#define STARPU_PROLOGUE_CALLBACK_ARG (15 << STARPU_MODE_SHIFT)
#define STARPU_PROLOGUE_CALLBACK_ARG_NFREE (39 << STARPU_MODE_SHIFT)
/** The same for starpu_task::prologue_callback_pop_func (run by the worker before the codelet) */
#define STARPU_PROLOGUE_CALLBACK_POP (16 << STARPU_MODE_SHIFT)
#define STARPU_PROLOGUE_CALLBACK_POP_ARG (17 << STARPU_MODE_SHIFT)
#define STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE (40 << STARPU_MODE_SHIFT)
/** followed by an unsigned long long: starpu_task::where */
#define STARPU_EXECUTE_WHERE (19 << STARPU_MODE_SHIFT)
/** followed by an unsigned char *: starpu_task::handles_sequential_consistency */
#define STARPU_HANDLES_SEQUENTIAL_CONSISTENCY (29 << STARPU_MODE_SHIFT)
/** followed by an unsigned and a struct starpu_task **: starpu_task_declare_end_deps_array() */
#define STARPU_TASK_END_DEPS_ARRAY (31 << STARPU_MODE_SHIFT)
/** followed by an int: starpu_task_end_dep_add() */
#define STARPU_TASK_END_DEP (32 << STARPU_MODE_SHIFT)
/** followed by an unsigned and a uint32_t *: starpu_task::workerids_len and workerids */
#define STARPU_TASK_WORKERIDS (33 << STARPU_MODE_SHIFT)
/** followed by an int: the priority */
#define STARPU_PRIORITY (5 << STARPU_MODE_SHIFT)
/** followed by a starpu_tag_t: the tag the task carries */
#define STARPU_TAG (10 << STARPU_MODE_SHIFT)
/** followed by an array of handles and their number (int), accessed in the codelet's modes */
#define STARPU_DATA_ARRAY (8 << STARPU_MODE_SHIFT)
/** followed by an array of struct starpu_data_descr and its length (int) */
#define STARPU_DATA_MODE_ARRAY (9 << STARPU_MODE_SHIFT)
/** followed by an int: the worker that must run the task (-1: any) */
#define STARPU_EXECUTE_ON_WORKER (18 << STARPU_MODE_SHIFT)
/** followed by a string: the task's name */
#define STARPU_NAME (24 << STARPU_MODE_SHIFT)
/** followed by a buffer made by starpu_codelet_pack_args() and its size: becomes cl_arg, freed
 * with the task */
#define STARPU_CL_ARGS (25 << STARPU_MODE_SHIFT)
/** followed by an int: the task is synchronous */
#define STARPU_TASK_SYNCHRONOUS (30 << STARPU_MODE_SHIFT)
/** followed by an unsigned: the scheduling context the task is submitted to */
#define STARPU_SCHED_CTX (13 << STARPU_MODE_SHIFT)
/** followed by an int: for StarPU's hypervisor, which does not exist here (accepted, unused) */
#define STARPU_HYPERVISOR_TAG (11 << STARPU_MODE_SHIFT)
/** followed by an unsigned: for parallel tasks, which do not exist here (accepted, unused) */
#define STARPU_POSSIBLY_PARALLEL (21 << STARPU_MODE_SHIFT)

struct starpu_data_descr {
    starpu_data_handle_t handle;
    enum starpu_data_access_mode mode;
};

/** Creates and submits a task of codelet cl. The arguments are access modes (STARPU_R,
 * STARPU_W, STARPU_RW, STARPU_SCRATCH, STARPU_REDUX, STARPU_W|STARPU_COMMUTE,
 * STARPU_RW|STARPU_COMMUTE) each followed by a handle, and the keys above with their values; a 0
 * ends the list. Returns what starpu_task_submit() returns, or -EINVAL (logged) for a malformed
 * list. */
int starpu_task_insert(struct starpu_codelet *cl, ...);
/** The former name of starpu_task_insert(). */
int starpu_insert_task(struct starpu_codelet *cl, ...);
/** Like starpu_task_insert() but returns the task without submitting it (NULL on error). */
struct starpu_task *starpu_task_build(struct starpu_codelet *cl, ...);
/** Fills task (made by starpu_task_create or starpu_task_init, not submitted) from the same
 * argument list as starpu_task_insert(), with codelet cl, without submitting it; 0, or -EINVAL
 * (logged) for a malformed list. STARPU_VALUE arguments make cl_arg_free 1. */
int starpu_task_set(struct starpu_task *task, struct starpu_codelet *cl, ...);

/** Helpers for building a task's buffers one by one (what a starpu_task_insert-like wrapper
 * does): current_buffer handles are stored so far and, when *allocated_buffers is not 0,
 * task->dyn_handles (and task->dyn_modes when the modes are the task's) hold that many.
 * make_room makes room for `room` more (moving to dyn_handles beyond STARPU_NMAXBUFS); the
 * process functions store one handle with mode arg_type, an array with the codelet's modes,
 * or an array of handle/mode pairs, advancing *current_buffer and task->nbuffers. A mode
 * differing from the one the codelet fixes stops the program with a message, as does a
 * handle beyond the codelet's nbuffers. */
void starpu_task_insert_data_make_room(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int current_buffer, int room);
void starpu_task_insert_data_process_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int *current_buffer, int arg_type, starpu_data_handle_t handle);
void starpu_task_insert_data_process_array_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int *current_buffer, int nb_handles, starpu_data_handle_t *handles);
void starpu_task_insert_data_process_mode_array_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int *current_buffer, int nb_descrs, struct starpu_data_descr *descrs);

/** Packs STARPU_VALUE, pointer, size triples (ended by 0) into a malloc'ed buffer. */
void starpu_codelet_pack_args(void **arg_buffer, size_t *arg_buffer_size, ...);
/** Copies the packed values, in order, to the given pointers; stops at a NULL pointer. */
void starpu_codelet_unpack_args(void *cl_arg, ...);
/** starpu_codelet_unpack_args(), and when it meets a NULL pointer, the values not read yet are
 * copied to buffer in the packed format (so that another unpack call reads them from there);
 * buffer_size must hold them (else the program stops with a message). */
void starpu_codelet_unpack_args_and_copyleft(void *cl_arg, void *buffer, size_t buffer_size, ...);

/** Incremental packing, value by value. */
struct starpu_codelet_pack_arg_data {
    char *arg_buffer;
    size_t arg_buffer_size;
    size_t current_offset;
    int nargs;
};
void starpu_codelet_pack_arg_init(struct starpu_codelet_pack_arg_data *state);
void starpu_codelet_pack_arg(struct starpu_codelet_pack_arg_data *state, const void *ptr, size_t ptr_size);
void starpu_codelet_pack_arg_fini(struct starpu_codelet_pack_arg_data *state, void **cl_arg, size_t *cl_arg_size);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_UTIL_H */
