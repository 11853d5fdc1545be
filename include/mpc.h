/**
 * \file mpc.h
 * MPC extensions for C and C++ programs (plain C99). The MPI interface is in <mpi.h>; this
 * header holds what MPI does not have: the runtime's user-level thread engine and, with later
 * layers, MPC_Migrate() and MPC_Checkpoint().
 */
#ifndef MPC_H_INCLUDED
#define MPC_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

#define MPC_VERSION_MAJOR 0
#define MPC_VERSION_MINOR 1
#define MPC_VERSION_PATCH 0

/** Return codes of the MPC_ calls below. */
#define MPC_SUCCESS 0
#define MPC_ERR_ARG 1          /**< invalid argument */
#define MPC_ERR_NOT_INIT 2     /**< the runtime is not running */
#define MPC_ERR_NOT_IN_ULT 3   /**< the call must be made from a user-level thread */
#define MPC_ERR_NO_MEM 4
#define MPC_ERR_OTHER 5

/** Version string of the library ("0.1.0"); never NULL. */
const char *MPC_Version(void);

/** Number of virtual processors (VPs) of this process, 0 if the runtime is not running. */
int MPC_Vp_count(void);

/** VP the calling thread runs on, or -1 outside the runtime's threads. */
int MPC_Vp_self(void);

/** Yields the VP to the other ready user-level threads; does nothing outside one. May yield. */
void MPC_Yield(void);

/** Moves the calling user-level thread to VP vp (0 <= vp < MPC_Vp_count()); it continues
 *  there. May yield. Returns MPC_SUCCESS or an MPC_ERR_ code. */
int MPC_Move_to_vp(int vp);

/** The task (MPI rank) whose address slice holds p: every block a rank allocates (malloc, C++
 *  new, ...) and its stack live there. -1 when p is in no rank's slice (memory of plain
 *  threads and of MPC_Task_create() tasks, whose slices are not ranks' slices; of the runtime;
 *  static data; or MPC_ALLOCATOR=system). Does not block. */
int MPC_Allocator_slice_of(const void *p);

/** 1 when libmpc's allocator serves malloc and new in this process; 0 under
 *  MPC_ALLOCATOR=system and in sanitizer builds (then the system's does). */
int MPC_Allocator_active(void);

/* ---- tasks ------------------------------------------------------------------------------ */

/** A task made by MPC_Task_create(); valid until MPC_Task_join() returns. */
typedef struct MPC_Task_s *MPC_Task;

/** Runs fn(arg) as a new MPC task: a user-level thread with a heap of its own, in an address
 *  slice of its own (every block fn allocates with malloc, C++ new, ... comes from there; other
 *  tasks and threads may free them). Its stack comes from the runtime as any ULT's. A task that
 *  ends gives its slice, with the blocks still live in it, to the next task (or thread) that
 *  needs one. Tasks are not MPI ranks: MPI calls made by fn do not act for any rank.
 *
 *  Placement: the new task goes to the least loaded VP; it may move itself with
 *  MPC_Move_to_vp(). A task that blocks in the kernel (a pthread mutex or condition variable, a
 *  blocking read) blocks its whole VP: tasks that wait for each other that way must run on VPs
 *  of their own.
 *
 *  Starts the runtime on first use when it is not running (a program that links libmpc but is
 *  not run by mpc_run), with the VP count of MPC_VPS (default: one per allowed core); the
 *  calling thread then becomes VP 0 and stays a user-level thread of it. May be called from a
 *  rank (under mpc_run), from another task, from the thread that started the runtime, and from
 *  plain threads once the runtime runs. With MPC_ALLOCATOR=system (and in sanitizer builds) the
 *  task runs with the system's heap. Does not yield.
 *
 *  Returns MPC_SUCCESS and sets *task; MPC_ERR_ARG when task or fn is NULL; MPC_ERR_NO_MEM when
 *  no slice or no stack is left (*task untouched); MPC_ERR_OTHER when the runtime cannot start
 *  (a malformed MPC_* variable: its error is logged). */
int MPC_Task_create(MPC_Task *task, void *(*fn)(void *), void *arg);

/** Waits until task has ended, stores what its fn returned in *result (when result is not
 *  NULL) and frees the task. Called from a user-level thread (a rank, a task, the thread that
 *  started the runtime), it parks: its VP runs other ULTs meanwhile; from a plain thread it
 *  sleeps in the kernel. May yield.
 *
 *  Returns MPC_SUCCESS; MPC_ERR_ARG when task is NULL, is not a task, was joined already (found
 *  until its record is reused by a later MPC_Task_create()), is being joined by someone else, or
 *  is the caller itself; MPC_ERR_NOT_INIT when the runtime was stopped before the join. */
int MPC_Task_join(MPC_Task task, void **result);

#ifdef __cplusplus
}
#endif

#endif /* MPC_H_INCLUDED */
