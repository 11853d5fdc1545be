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
/* StarPU's OpenMP runtime support (starpu_openmp.h). */
#define STARPU_OPENMP 1
#define STARPU_NMAX_SCHED_CTXS 10  /* StarPU's count of scheduling contexts */
#define STARPU_MAXNODES 16          /* main memory (node 0) and up to 15 disks (starpu_disk.h) */

/* Built with hwloc (as Debian's StarPU): starpu_worker.h includes <hwloc.h> and declares
 * starpu_worker_get_hwloc_cpuset/_obj, starpu_helper.h starpu_get_hwloc_topology. Programs
 * built with mpc_cc or through starpu-1.3.pc link libhwloc. */
#define STARPU_HAVE_HWLOC 1

/* What the C library offers (StarPU's configure tests; glibc has all of them). */
#define STARPU_HAVE_NEARBYINTF 1
#define STARPU_HAVE_RINTF 1
#define STARPU_USE_DRAND48 1
#define STARPU_USE_ERAND48_R 1
#define STARPU_HAVE_POSIX_MEMALIGN 1
#define STARPU_HAVE_MEMALIGN 1
#define STARPU_HAVE_MALLOC_H 1
#define STARPU_HAVE_SETENV 1
#define STARPU_HAVE_UNSETENV 1
#define STARPU_HAVE_UNISTD_H 1
#define STARPU_HAVE_STRERROR_R 1
#define STARPU_HAVE_STRUCT_TIMESPEC 1
#define STARPU_HAVE_PTHREAD_BARRIER 1
#define STARPU_HAVE_PTHREAD_SPIN_LOCK 1
#define STARPU_HAVE_PTHREAD_SETNAME_NP 1
#define STARPU_LINUX_SYS 1
#define STARPU_HAVE_LIBNUMA 1 /* MPC's allocator places memory with it */

/* What the compiler offers (GCC and Clang have all of them; MPC needs one of those). */
#define STARPU_HAVE_SYNC_BOOL_COMPARE_AND_SWAP 1
#define STARPU_HAVE_SYNC_VAL_COMPARE_AND_SWAP 1
#define STARPU_HAVE_SYNC_FETCH_AND_ADD 1
#define STARPU_HAVE_SYNC_FETCH_AND_OR 1
#define STARPU_HAVE_SYNC_LOCK_TEST_AND_SET 1
#define STARPU_HAVE_SYNC_SYNCHRONIZE 1
#define STARPU_HAVE_ATOMIC_EXCHANGE_N 1
#define STARPU_HAVE_STATEMENT_EXPRESSIONS 1
#define STARPU_HAVE_CXX11 1

/* Sizes of StarPU's per-device tables, Debian's values (MPC has no such devices: a program
 * that sizes its own arrays with them gets StarPU's sizes). */
#define STARPU_MAXNUMANODES 2
#define STARPU_MAXCUDADEVS 4
#define STARPU_MAXOPENCLDEVS 8
#define STARPU_MAXMICDEVS 0

/* Not defined, as what they announce is not here: STARPU_HAVE_HWLOC (StarPU's hwloc calls,
 * starpu_worker_get_hwloc_obj and the like, are not declared), STARPU_NON_BLOCKING_DRIVERS (how
 * StarPU's driver loops wait, which MPC has none of), the
 * STARPU_HAVE_* of optional libraries and tools (BLAS, FFTW, GLPK, valgrind, X11). */

#define __starpu_func__ __func__
#if defined(__cplusplus)
#define __starpu_inline inline
#else
#define __starpu_inline __inline__
#endif

typedef ssize_t starpu_ssize_t;

#endif /* MPC_STARPU_CONFIG_H */
