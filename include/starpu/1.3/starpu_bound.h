/* StarPU 1.3 API on MPC: the theoretical lower bound of a run's execution time
 * (taskgraph/starpu_bound.cpp). Between starpu_bound_start and _stop, each submitted task is
 * recorded with its codelet, footprint and expected length (its performance model's, on a
 * CPU worker). The bound is the area bound: the recorded work spread over the CPU workers,
 * which with one kind of worker is also the linear program's and the integer program's optimum.
 * Dependencies are not recorded (deps is accepted: the bound ignores the critical path, as
 * StarPU's does without deps); starpu_bound_print_dot prints the recorded tasks' classes. */
#ifndef MPC_STARPU_BOUND_H
#define MPC_STARPU_BOUND_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Starts recording (clearing what was recorded). */
void starpu_bound_start(int deps, int prio);
void starpu_bound_stop(void);
void starpu_bound_print_dot(FILE *output);
/** The bound in ms in *res and *integer_res (the same here); 0 when a recorded task had no
 * calibrated model, as StarPU. */
void starpu_bound_compute(double *res, double *integer_res, int integer);
/** The linear program of the recorded tasks, in lp_solve's lp format / in MPS. */
void starpu_bound_print_lp(FILE *output);
void starpu_bound_print_mps(FILE *output);
/** The bound and, per task class, how many tasks and how much work. */
void starpu_bound_print(FILE *output, int integer);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_BOUND_H */
