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
 *  threads, of the runtime, static data, or MPC_ALLOCATOR=system). Does not block. */
int MPC_Allocator_slice_of(const void *p);

/** 1 when libmpc's allocator serves malloc and new in this process; 0 under
 *  MPC_ALLOCATOR=system and in sanitizer builds (then the system's does). */
int MPC_Allocator_active(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_H_INCLUDED */
