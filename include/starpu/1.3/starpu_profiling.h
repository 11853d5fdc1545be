/* StarPU 1.3 API on MPC: profiling (StarPU's starpu_profiling.h, with its struct layouts).
 *
 * Once starpu_profiling_status_set(STARPU_PROFILING_ENABLE) is called (or STARPU_PROFILING=1 /
 * MPC_TG_PROFILING=1 at starpu_init), every task submitted gets a starpu_task::profiling_info,
 * freed with the task (starpu_task_clean/destroy), and every worker accounts the time it spends
 * in codelets and parked for lack of work. Dates are relative to starpu_init (monotonic clock).
 *
 * Only main memory exists, so there is no bus: starpu_bus_get_count() is 0, and a bus id is
 * refused (-EINVAL, logged). The cycle, stall and energy counters of StarPU's simulator stay 0.
 * StarPU's trace file id (starpu_profiling_set_id) names FxT traces, which MPC does not write:
 * it is accepted and unused. */
#ifndef MPC_STARPU_PROFILING_H
#define MPC_STARPU_PROFILING_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "starpu_util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STARPU_PROFILING_DISABLE 0
#define STARPU_PROFILING_ENABLE 1

/** One task's life; dates relative to starpu_init. A stage the task did not go through (an
 * empty task is never pushed nor run) reads 0. */
struct starpu_profiling_task_info {
    struct timespec submit_time;
    /** Handed to the scheduler, and the scheduler done with it. */
    struct timespec push_start_time;
    struct timespec push_end_time;
    /** The worker's search for work that returned the task. */
    struct timespec pop_start_time;
    struct timespec pop_end_time;
    /** The task's data made ready on its worker. */
    struct timespec acquire_data_start_time;
    struct timespec acquire_data_end_time;
    /** The codelet ran. */
    struct timespec start_time;
    struct timespec end_time;
    /** The task's data given back. */
    struct timespec release_data_start_time;
    struct timespec release_data_end_time;
    /** The application's callback ran. */
    struct timespec callback_start_time;
    struct timespec callback_end_time;
    /** The worker that ran it (-1: none, an empty task). */
    int workerid;
    uint64_t used_cycles;
    uint64_t stall_cycles;
    double energy_consumed;
};

/** A worker since profiling was enabled or since the last starpu_profiling_worker_get_info(). */
struct starpu_profiling_worker_info {
    struct timespec start_time;
    struct timespec total_time;
    /** In codelets. */
    struct timespec executing_time;
    /** Parked for lack of work. */
    struct timespec sleeping_time;
    int executed_tasks;
    uint64_t used_cycles;
    uint64_t stall_cycles;
    double energy_consumed;
    /** The starpu_task::flops of the tasks it ran. */
    double flops;
};

struct starpu_profiling_bus_info {
    struct timespec start_time;
    struct timespec total_time;
    int long long transferred_bytes;
    int transfer_count;
};

/** Resets the counters, and enables profiling when STARPU_PROFILING is a positive number. */
void starpu_profiling_init(void);
/** The id of StarPU's FxT trace file names: accepted, unused (no FxT traces here). */
void starpu_profiling_set_id(int new_id);
/** STARPU_PROFILING_ENABLE or _DISABLE (before starpu_init too); enabling resets every
 * worker's counters. Returns the previous status, or -EINVAL for another value. */
int starpu_profiling_status_set(int status);
int starpu_profiling_status_get(void);
/** Worker workerid's counters into *worker_info (when not NULL), then resets them. 0, or
 * -EINVAL for a bad worker, -ENODEV when StarPU is not initialized. */
int starpu_profiling_worker_get_info(int workerid, struct starpu_profiling_worker_info *worker_info);

/** Buses between memory nodes: none (main memory only). */
int starpu_bus_get_count(void);
/** -1: no bus joins two nodes (there is one node). */
int starpu_bus_get_id(int src, int dst);
/** For a bad bus id (every id): -1 (logged). */
int starpu_bus_get_src(int busid);
int starpu_bus_get_dst(int busid);
void starpu_bus_set_direct(int busid, int direct);
int starpu_bus_get_direct(int busid);
void starpu_bus_set_ngpus(int busid, int ngpus);
int starpu_bus_get_ngpus(int busid);
/** -EINVAL (logged): no bus exists. */
int starpu_bus_get_profiling_info(int busid, struct starpu_profiling_bus_info *bus_info);

#define STARPU_NS_PER_S 1000000000

static __inline void starpu_timespec_clear(struct timespec *tsp) {
    tsp->tv_sec = 0;
    tsp->tv_nsec = 0;
}

/** *result = *a + *b. */
static __inline void starpu_timespec_add(struct timespec *a, struct timespec *b, struct timespec *result) {
    long ns = a->tv_nsec + b->tv_nsec;
    result->tv_sec = a->tv_sec + b->tv_sec + (ns >= STARPU_NS_PER_S ? 1 : 0);
    result->tv_nsec = ns >= STARPU_NS_PER_S ? ns - STARPU_NS_PER_S : ns;
}

/** *result += *a. */
static __inline void starpu_timespec_accumulate(struct timespec *result, struct timespec *a) {
    struct timespec sum;
    starpu_timespec_add(result, a, &sum);
    *result = sum;
}

/** *result = *a - *b. */
static __inline void starpu_timespec_sub(const struct timespec *a, const struct timespec *b,
                                         struct timespec *result) {
    long ns = a->tv_nsec - b->tv_nsec;
    result->tv_sec = a->tv_sec - b->tv_sec - (ns < 0 ? 1 : 0);
    result->tv_nsec = ns < 0 ? ns + STARPU_NS_PER_S : ns;
}

/** Compares two timespecs with the operator CMP (<, <=, ==, ...). */
#define starpu_timespec_cmp(a, b, CMP) \
    (((a)->tv_sec == (b)->tv_sec) ? ((a)->tv_nsec CMP(b)->tv_nsec) : ((a)->tv_sec CMP(b)->tv_sec))

/** Microseconds from *start to *end. */
double starpu_timing_timespec_delay_us(struct timespec *start, struct timespec *end);
/** *ts in microseconds. */
double starpu_timing_timespec_to_us(struct timespec *ts);

/** With STARPU_BUS_STATS set: the buses' transfers on stderr (none here). */
void starpu_profiling_bus_helper_display_summary(void);
/** With STARPU_WORKER_STATS set: each worker's tasks and times on stderr (profiling enabled:
 * executing and sleeping time too; STARPU_WORKER_STATS_FILE: to that file). At starpu_shutdown
 * MPC prints its own summary under STARPU_WORKER_STATS (per worker and per codelet). */
void starpu_profiling_worker_helper_display_summary(void);
/** StarPU prints the handles' memory statistics when built with --enable-memory-stats; like
 * such a StarPU without them, this prints nothing. */
void starpu_data_display_memory_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_PROFILING_H */
