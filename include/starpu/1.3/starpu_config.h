/* StarPU 1.3 API on MPC's task-graph runtime: build-time constants.
 *
 * MPC implements a subset of StarPU 1.3's C API (see docs/taskgraph.md). Only CPU workers exist:
 * STARPU_USE_CUDA, STARPU_USE_OPENCL, STARPU_USE_MPI stay undefined, so that programs leave their
 * GPU and MPI code out, as they do with a StarPU built without those drivers. */
#ifndef MPC_STARPU_CONFIG_H
#define MPC_STARPU_CONFIG_H

#include <sys/types.h>

/* The API level of the subset: StarPU 1.3.10 (the version Debian 12 ships). */
#define STARPU_MAJOR_VERSION 1
#define STARPU_MINOR_VERSION 3
#define STARPU_RELEASE_VERSION 10

/* Implemented by MPC, not by StarPU: lets a program tell the two apart when it must. */
#define STARPU_MPC 1

#define STARPU_USE_CPU 1

/* starpu_conf has callback_worker_going_to_sleep / callback_worker_waking_up, which MPC calls
 * (Debian's StarPU is built without them). */
#define STARPU_WORKER_CALLBACKS 1

#define STARPU_NMAXBUFS 8           /* buffers held in starpu_task::handles (more: dyn_handles) */
#define STARPU_MAXIMPLEMENTATIONS 4 /* entries of starpu_codelet::cpu_funcs */
#define STARPU_MAXCPUS 256
#define STARPU_NMAXWORKERS 256
#define STARPU_NMAX_SCHED_CTXS 10  /* one context exists; the value is StarPU's */
#define STARPU_MAXNODES 1           /* main memory only */

/* What the C library offers (StarPU's configure tests; glibc has all of them). */
#define STARPU_HAVE_NEARBYINTF 1
#define STARPU_HAVE_RINTF 1
#define STARPU_USE_DRAND48 1
#define STARPU_USE_ERAND48_R 1

typedef ssize_t starpu_ssize_t;

#endif /* MPC_STARPU_CONFIG_H */
