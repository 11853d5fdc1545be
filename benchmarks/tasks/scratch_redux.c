/* The cost of the runtime's data buffers, written as a StarPU 1.3 program and built unchanged
 * against MPC's starpu-1.3.pc and against Debian's StarPU 1.3:
 *
 *   scratch_redux IMPL [TASKS [METRIC]]   (METRIC: only that figure)
 *
 *   scratch4k  independent tasks, each with one STARPU_SCRATCH vector of 4 KiB (a handle
 *              registered on node -1) whose pages the task touches: µs per task, insertion and
 *              wait_for_all included.
 *   scratch1m  the same with 1 MiB.
 *   redux4k    phases of 4 tasks per worker adding into a 4 KiB vector in STARPU_REDUX, each
 *              phase closed by an acquisition in read mode: µs per phase.
 *   redux1m    the same with 1 MiB (fewer phases).
 * Each figure: the minimum and the median over 7 chunks after one warm-up chunk (the machine
 * is shared: the minimum is the figure to compare). One tab-separated line per figure:
 *   ROW <metric> <workers> <impl> <min> <median> us
 */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static long touched;
static void touch(void *buffers[], void *arg)
{
	__atomic_fetch_add(&touched, 1, __ATOMIC_RELAXED);
	char *p = (char *)STARPU_VECTOR_GET_PTR(buffers[0]);
	size_t n = STARPU_VECTOR_GET_NX(buffers[0]) * STARPU_VECTOR_GET_ELEMSIZE(buffers[0]);
	(void)arg;
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (char)i;
}

static void add(void *buffers[], void *arg)
{
	double *x = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	(void)arg;
	for (unsigned i = 0; i < n; i++)
		x[i] += 1.0;
}

static void zero(void *buffers[], void *arg)
{
	(void)arg;
	memset((void *)STARPU_VECTOR_GET_PTR(buffers[0]), 0,
	       STARPU_VECTOR_GET_NX(buffers[0]) * STARPU_VECTOR_GET_ELEMSIZE(buffers[0]));
}

static void fold(void *buffers[], void *arg)
{
	double *x = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const double *y = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	(void)arg;
	for (unsigned i = 0; i < n; i++)
		x[i] += y[i];
}

static struct starpu_codelet touch_cl = { .cpu_funcs = { touch }, .nbuffers = 1, .modes = { STARPU_SCRATCH }, .name = "touch" };
static struct starpu_codelet add_cl = { .cpu_funcs = { add }, .nbuffers = 1, .modes = { STARPU_REDUX }, .name = "add" };
static struct starpu_codelet zero_cl = { .cpu_funcs = { zero }, .nbuffers = 1, .modes = { STARPU_W }, .name = "zero" };
static struct starpu_codelet fold_cl = { .cpu_funcs = { fold }, .nbuffers = 2, .modes = { STARPU_RW, STARPU_R }, .name = "fold" };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define CHUNKS 7

static void report(const char *metric, const char *impl, double *v)
{
	qsort(v, CHUNKS, sizeof(v[0]), cmp_double);
	printf("ROW\t%s\t%u\t%s\t%.3f\t%.3f\tus\n", metric, starpu_worker_get_count(), impl, v[0], v[CHUNKS / 2]);
	fflush(stdout);
}

static void scratch(const char *metric, const char *impl, unsigned nx, int tasks)
{
	starpu_data_handle_t h;
	double v[CHUNKS];
	starpu_vector_data_register(&h, -1, 0, nx, sizeof(double));
	for (int c = -1; c < CHUNKS; c++) {
		double t0 = now_us();
		for (int i = 0; i < tasks; i++)
			if (starpu_task_insert(&touch_cl, STARPU_SCRATCH, h, 0) != 0)
				abort();
		starpu_task_wait_for_all();
		if (c >= 0)
			v[c] = (now_us() - t0) / tasks;
	}
	starpu_data_unregister(h);
	if (touched != (long)tasks * (CHUNKS + 1)) {
		fprintf(stderr, "%s: %ld tasks ran, not %d\n", metric, touched, tasks * (CHUNKS + 1));
		exit(1);
	}
	touched = 0;
	report(metric, impl, v);
}

static void redux(const char *metric, const char *impl, unsigned nx, int phases)
{
	starpu_data_handle_t h;
	double v[CHUNKS];
	double *x = calloc(nx, sizeof(double));
	const int per_phase = 4 * (int)starpu_worker_get_count();
	double want = 0;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)x, nx, sizeof(double));
	starpu_data_set_reduction_methods(h, &fold_cl, &zero_cl);
	for (int c = -1; c < CHUNKS; c++) {
		double t0 = now_us();
		for (int p = 0; p < phases; p++) {
			for (int i = 0; i < per_phase; i++)
				if (starpu_task_insert(&add_cl, STARPU_REDUX, h, 0) != 0)
					abort();
			starpu_data_acquire(h, STARPU_R);
			starpu_data_release(h);
		}
		if (c >= 0)
			v[c] = (now_us() - t0) / phases;
		want += (double)phases * per_phase;
	}
	starpu_data_unregister(h);
	if (x[0] != want || x[nx - 1] != want) {
		fprintf(stderr, "%s: wrong sum %g (want %g)\n", metric, x[0], want);
		exit(1);
	}
	free(x);
	report(metric, impl, v);
}

int main(int argc, char **argv)
{
	const char *impl = argc > 1 ? argv[1] : "mpc";
	const int tasks = argc > 2 ? atoi(argv[2]) : 2000;
	if (starpu_init(NULL) != 0)
		return 77;
	const char *only = argc > 3 ? argv[3] : "";
	if (strstr("scratch4k", only))
		scratch("scratch4k", impl, 512, tasks);
	if (strstr("scratch1m", only))
		scratch("scratch1m", impl, 131072, tasks / 4);
	if (strstr("redux4k", only))
		redux("redux4k", impl, 512, tasks / 20);
	if (strstr("redux1m", only))
		redux("redux1m", impl, 131072, tasks / 100);
	starpu_shutdown();
	return 0;
}
