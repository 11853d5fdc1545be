/* benchmarks/run tasks: the cost of the task-graph runtime, written as a StarPU 1.3 program and
 * built unchanged against MPC's starpu-1.3.pc and against Debian's StarPU 1.3.
 *
 *   tasks --impl NAME [--quick] [--cholesky] [--grain [--grain-kernel loop|clock] [--grain-length L]]
 *
 * Figures (median of the timed runs after one warm-up, with the min and the max):
 *   indep     N empty tasks (a codelet with no buffer and an empty body) inserted, then
 *             starpu_task_wait_for_all: µs per task, submission included.
 *   chain     N tasks in a read-write chain on one variable: µs per task.
 *   cholesky  (with --cholesky, built with -DTASKS_HAVE_CBLAS) a tiled Cholesky factorisation
 *             (POTRF on diagonal tiles, TRSM, SYRK, GEMM through CBLAS; the sequential task
 *             flow of StarPU's example): GFlop/s, the result checked against the input.
 *   grain     (with --grain, instead of the others) the task-size efficiency: N independent tasks that each
 *             compute for L µs (L = 1, 2, 4, ..., 256; --grain-length L: only that one; N =
 *             10,000 up to 16 µs, 10,000 x 16 / L above), efficiency = N L / (workers x
 *             elapsed) (StarPU's tests/microbenchs/tasks_size_overhead: the speed-up over the
 *             bare kernel run sequentially, divided by the workers), one row per L (percent; the
 *             median of 3 runs after a warm-up), and against the process's CPU time, then grain90:
 *             the smallest L whose efficiency reaches 90% (0 when none does). The kernel: see
 *             spin() (--grain-kernel clock: the CPU-clock spin of the first measurements).
 * The policy and the number of workers come from STARPU_SCHED and STARPU_NCPU (run.sh sets
 * them). One tab-separated line per figure on stdout, the format benchmarks/lib.sh reads:
 *   ROW <metric> <workers> <impl> <value> <unit> <min> <max> <extra json keys> <description>
 */
#include <starpu.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TASKS_HAVE_CBLAS
#include <cblas.h>
#endif

static void nop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static void incr(void *buffers[], void *arg)
{
	(void)arg;
	(*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]))++;
}

/* µs of CPU time used by the calling thread (CLOCK_THREAD_CPUTIME_ID) or the process. */
static double cpu_us(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The --grain task body: spin_us µs of work. By default a chain of integer multiply-adds
 * (an LCG step per iteration, which the compiler can neither vectorise nor fold), run for
 * spin_us x iters_per_us iterations, the rate measured once on the program's thread before the
 * runs (the fastest of 30 runs of 2^20 iterations: the undisturbed rate on a loaded machine).
 * With --grain-kernel clock, the kernel of the first measurements: spin until the worker's CPU
 * clock (CLOCK_THREAD_CPUTIME_ID) has advanced by spin_us; each read of that clock is a system
 * call (0.3-1 µs of CPU on the KVM machine of RESULTS.md), so a task of L µs costs L plus
 * about one to one and a half reads, which the efficiency N L / elapsed charges to the runtime
 * (about 5-12% at L = 8 µs, for StarPU and MPC alike). */
static double spin_us;
static double iters_per_us;
static int clock_kernel;
static unsigned long long burn_sink;

static void burn(long n)
{
	unsigned long long x = 88172645463325252ull;
	long i;
	for (i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	burn_sink += x;
}

static void calibrate_burn(void)
{
	const long n = 1L << 20;
	double best = 0;
	int r;
	for (r = 0; r < 30; r++) {
		double t0 = starpu_timing_now(), t;
		burn(n);
		t = starpu_timing_now() - t0;
		if (r == 0 || t < best)
			best = t;
	}
	iters_per_us = (double)n / (best > 0 ? best : 1.0);
	fprintf(stderr, "grain kernel: %.1f iterations per us\n", iters_per_us);
}

static void spin(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
	if (clock_kernel) {
		double end = cpu_us(CLOCK_THREAD_CPUTIME_ID) + spin_us;
		while (cpu_us(CLOCK_THREAD_CPUTIME_ID) < end)
			;
	} else {
		burn((long)(spin_us * iters_per_us));
	}
}

static struct starpu_codelet spin_cl = { .cpu_funcs = { spin }, .nbuffers = 0, .name = "spin" };
static struct starpu_codelet nop_cl = { .cpu_funcs = { nop }, .nbuffers = 0, .name = "nop" };
static struct starpu_codelet incr_cl = { .cpu_funcs = { incr }, .nbuffers = 1, .modes = { STARPU_RW }, .name = "incr" };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void row(const char *metric, const char *impl, double *v, int reps, const char *unit, const char *what)
{
	const char *sched = getenv("STARPU_SCHED");
	qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
	printf("ROW\t%s\t%u\t%s\t%.4f\t%s\t%.4f\t%.4f\t\"sched\": \"%s\"\t%s\n", metric, starpu_worker_get_count(), impl,
	       v[reps / 2], unit, v[0], v[reps - 1], sched != NULL ? sched : "eager", what);
	fflush(stdout);
	fprintf(stderr, "%-9s %-8s %10.4f %s [%.4f .. %.4f]\n", metric, impl, v[reps / 2], unit, v[0], v[reps - 1]);
}

/* µs per task of n tasks (chain: on one variable). */
static double run_tasks(long n, int chain)
{
	long counter = 0;
	starpu_data_handle_t h = NULL;
	double t0, t1;
	long i;
	if (chain)
		starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&counter, sizeof(counter));
	t0 = starpu_timing_now();
	for (i = 0; i < n; i++) {
		int ret = chain ? starpu_task_insert(&incr_cl, STARPU_RW, h, 0) : starpu_task_insert(&nop_cl, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
	starpu_task_wait_for_all();
	t1 = starpu_timing_now();
	if (chain) {
		starpu_data_unregister(h);
		if (counter != n) {
			fprintf(stderr, "tasks: the chain counted %ld of %ld\n", counter, n);
			exit(1);
		}
	}
	return (t1 - t0) / (double)n;
}

/* n independent tasks spinning spin_us µs each on all the workers: the efficiencies (percent)
 * against the elapsed time, N L / (workers x elapsed), and against the CPU time the whole
 * process used, N L / CPU (submission, scheduling and idle polling are the rest). */
static void run_spin(long n, double *wall, double *cpu)
{
	double t0, t1, c0, c1;
	long i;
	c0 = cpu_us(CLOCK_PROCESS_CPUTIME_ID);
	t0 = starpu_timing_now();
	for (i = 0; i < n; i++) {
		int ret = starpu_task_insert(&spin_cl, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
	starpu_task_wait_for_all();
	t1 = starpu_timing_now();
	c1 = cpu_us(CLOCK_PROCESS_CPUTIME_ID);
	*wall = 100.0 * (double)n * spin_us / ((double)starpu_worker_get_count() * (t1 - t0));
	*cpu = 100.0 * (double)n * spin_us / (c1 - c0);
}

/* The --grain rows: both efficiencies per task length, then for each the smallest length
 * whose median reaches 90%. Up to 16 µs every length runs n tasks; above, n 16 / L (the work
 * of n tasks of 16 µs: at 256 µs, 625 tasks in the full run, 80 ms on 2 workers, where a task's
 * imbalance at the end is 0.3%): the ladder computes 0.95 s per run instead of 5.1 s. */
static void grain(const char *impl, int quick, int only)
{
	int reps = quick ? 1 : 3, r, l, wall90 = 0, cpu90 = 0;
	long n0 = quick ? 2000 : 10000, n;
	double wall[16], cpu[16];
	char metric[32];
	if (!clock_kernel)
		calibrate_burn();
	for (l = only > 0 ? only : 1; l <= (only > 0 ? only : 256); l *= 2) {
		spin_us = l;
		n = l <= 16 ? n0 : n0 * 16 / l;
		run_spin(n / 10, &wall[0], &cpu[0]); /* warm-up */
		for (r = 0; r < reps; r++)
			run_spin(n, &wall[r], &cpu[r]);
		snprintf(metric, sizeof(metric), "grain_%dus", l);
		row(metric, impl, wall, reps, "%", "efficiency of independent tasks spinning L us: N L / (workers x elapsed)");
		snprintf(metric, sizeof(metric), "grain_cpu_%dus", l);
		row(metric, impl, cpu, reps, "%", "the same against the CPU time of the process: N L / CPU");
		if (wall90 == 0 && wall[reps / 2] >= 90.0)
			wall90 = l;
		if (cpu90 == 0 && cpu[reps / 2] >= 90.0)
			cpu90 = l;
	}
	wall[0] = wall90;
	row("grain90", impl, wall, 1, "us", "smallest task length L (1, 2, 4 .. 256 us) whose elapsed-time efficiency reaches 90% (0: none)");
	cpu[0] = cpu90;
	row("grain90_cpu", impl, cpu, 1, "us", "smallest task length L whose CPU-time efficiency reaches 90% (0: none)");
}

#ifdef TASKS_HAVE_CBLAS
/* Column-major tiles of nb x nb; the matrix is nt x nt tiles, tile (i, j) at A + (j*nt + i)*nb*nb. */

static void potrf_tile(void *buffers[], void *arg)
{
	double *a = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	unsigned n = STARPU_MATRIX_GET_NX(buffers[0]), ld = STARPU_MATRIX_GET_LD(buffers[0]), j, k;
	(void)arg;
	for (j = 0; j < n; j++) { /* unblocked left-looking Cholesky, lower */
		for (k = 0; k < j; k++)
			cblas_daxpy((int)(n - j), -a[j + k * ld], a + j + k * ld, 1, a + j + j * ld, 1);
		double d = sqrt(a[j + j * ld]);
		cblas_dscal((int)(n - j), 1.0 / d, a + j + j * ld, 1);
	}
}

static void trsm_tile(void *buffers[], void *arg)
{
	double *l = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	double *b = (double *)STARPU_MATRIX_GET_PTR(buffers[1]);
	int n = (int)STARPU_MATRIX_GET_NX(buffers[0]);
	(void)arg;
	cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, n, n, 1.0, l,
		    (int)STARPU_MATRIX_GET_LD(buffers[0]), b, (int)STARPU_MATRIX_GET_LD(buffers[1]));
}

static void syrk_tile(void *buffers[], void *arg)
{
	double *a = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	double *c = (double *)STARPU_MATRIX_GET_PTR(buffers[1]);
	int n = (int)STARPU_MATRIX_GET_NX(buffers[0]);
	(void)arg;
	cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, -1.0, a, (int)STARPU_MATRIX_GET_LD(buffers[0]), 1.0, c,
		    (int)STARPU_MATRIX_GET_LD(buffers[1]));
}

static void gemm_tile(void *buffers[], void *arg)
{
	double *a = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	double *b = (double *)STARPU_MATRIX_GET_PTR(buffers[1]);
	double *c = (double *)STARPU_MATRIX_GET_PTR(buffers[2]);
	int n = (int)STARPU_MATRIX_GET_NX(buffers[0]);
	(void)arg;
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, -1.0, a, (int)STARPU_MATRIX_GET_LD(buffers[0]), b,
		    (int)STARPU_MATRIX_GET_LD(buffers[1]), 1.0, c, (int)STARPU_MATRIX_GET_LD(buffers[2]));
}

static struct starpu_perfmodel potrf_model = { .type = STARPU_HISTORY_BASED, .symbol = "mpc_bench_potrf" };
static struct starpu_perfmodel trsm_model = { .type = STARPU_HISTORY_BASED, .symbol = "mpc_bench_trsm" };
static struct starpu_perfmodel syrk_model = { .type = STARPU_HISTORY_BASED, .symbol = "mpc_bench_syrk" };
static struct starpu_perfmodel gemm_model = { .type = STARPU_HISTORY_BASED, .symbol = "mpc_bench_gemm" };
static struct starpu_codelet potrf_cl = { .cpu_funcs = { potrf_tile }, .nbuffers = 1, .modes = { STARPU_RW }, .model = &potrf_model, .name = "potrf" };
static struct starpu_codelet trsm_cl = { .cpu_funcs = { trsm_tile }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .model = &trsm_model, .name = "trsm" };
static struct starpu_codelet syrk_cl = { .cpu_funcs = { syrk_tile }, .nbuffers = 2, .modes = { STARPU_R, STARPU_RW }, .model = &syrk_model, .name = "syrk" };
static struct starpu_codelet gemm_cl = { .cpu_funcs = { gemm_tile }, .nbuffers = 3, .modes = { STARPU_R, STARPU_R, STARPU_RW }, .model = &gemm_model, .name = "gemm" };

/* GFlop/s of one factorisation of an SPD matrix of nt x nt tiles of nb; exits on a wrong result. */
static double cholesky(unsigned nt, unsigned nb)
{
	size_t n = (size_t)nt * nb, tile = (size_t)nb * nb;
	double *a = malloc(n * n * sizeof(double)), *orig = malloc(n * n * sizeof(double));
	starpu_data_handle_t *h = malloc((size_t)nt * nt * sizeof(*h));
	unsigned i, j, k;
	double t0, t1, err = 0;
	/* A(i, j) = n [i == j] + 1 / (1 + |i - j|): symmetric, diagonally dominant, so SPD. Stored
	 * tile by tile; the full matrix is kept for the check. */
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++) {
			double s = (i == j ? (double)n : 0.0) + 1.0 / (1.0 + fabs((double)i - (double)j));
			a[((size_t)(j / nb) * nt + i / nb) * tile + (j % nb) * nb + i % nb] = s;
			orig[j * n + i] = s;
		}
	for (j = 0; j < nt; j++)
		for (i = 0; i < nt; i++)
			starpu_matrix_data_register(&h[j * nt + i], STARPU_MAIN_RAM, (uintptr_t)(a + ((size_t)j * nt + i) * tile),
						    nb, nb, nb, sizeof(double));
	t0 = starpu_timing_now();
	for (k = 0; k < nt; k++) {
		starpu_task_insert(&potrf_cl, STARPU_RW, h[k * nt + k], STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
		for (i = k + 1; i < nt; i++)
			starpu_task_insert(&trsm_cl, STARPU_R, h[k * nt + k], STARPU_RW, h[k * nt + i],
					   STARPU_PRIORITY, i == k + 1 ? STARPU_MAX_PRIO : STARPU_DEFAULT_PRIO, 0);
		for (i = k + 1; i < nt; i++) {
			starpu_task_insert(&syrk_cl, STARPU_R, h[k * nt + i], STARPU_RW, h[i * nt + i], 0);
			for (j = k + 1; j < i; j++)
				starpu_task_insert(&gemm_cl, STARPU_R, h[k * nt + i], STARPU_R, h[k * nt + j], STARPU_RW,
						   h[j * nt + i], 0);
		}
	}
	starpu_task_wait_for_all();
	t1 = starpu_timing_now();
	for (i = 0; i < nt * nt; i++)
		starpu_data_unregister(h[i]);
	/* Check (L L^T)(r, c) against the input on a few entries. */
	for (k = 0; k < 64; k++) {
		size_t r = (k * 2654435761u) % n, c = (k * 40503u + 17) % n, m;
		double s = 0;
		if (c > r) { size_t t = r; r = c; c = t; }
		for (m = 0; m <= c; m++)
			s += a[((m / nb) * nt + r / nb) * tile + (m % nb) * nb + r % nb] *
			     a[((m / nb) * nt + c / nb) * tile + (m % nb) * nb + c % nb];
		err = fmax(err, fabs(s - orig[c * n + r]) / fabs(orig[c * n + c]));
	}
	free(a);
	free(orig);
	free(h);
	if (!(err < 1e-10)) {
		fprintf(stderr, "tasks: the Cholesky factor is wrong (relative error %g)\n", err);
		exit(1);
	}
	return ((double)n * n * n / 3.0) / ((t1 - t0) * 1e3);
}
#endif

int main(int argc, char **argv)
{
	const char *impl = "mpc";
	int quick = 0, chol = 0, gr = 0, only = 0, reps, r, i;
	long n;
	double v[16];
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--cholesky") == 0)
			chol = 1;
		else if (strcmp(argv[i], "--grain") == 0)
			gr = 1;
		else if (strcmp(argv[i], "--grain-kernel") == 0 && i + 1 < argc && strcmp(argv[i + 1], "clock") == 0)
			clock_kernel = 1, i++;
		else if (strcmp(argv[i], "--grain-kernel") == 0 && i + 1 < argc && strcmp(argv[i + 1], "loop") == 0)
			clock_kernel = 0, i++;
		else if (strcmp(argv[i], "--grain-length") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
			only = atoi(argv[++i]);
		else if (strcmp(argv[i], "--impl") == 0 && i + 1 < argc)
			impl = argv[++i];
		else {
			fprintf(stderr, "usage: tasks --impl NAME [--quick] [--cholesky] [--grain [--grain-kernel loop|clock] [--grain-length L]]\n");
			return 2;
		}
	}
	if (starpu_init(NULL) != 0) {
		fprintf(stderr, "tasks: starpu_init failed\n");
		return 1;
	}
	if (gr) {
		grain(impl, quick, only);
		starpu_shutdown();
		return 0;
	}
	n = quick ? 20000 : 100000;
	reps = quick ? 3 : 7;
	run_tasks(n / 10, 0); /* warm-up */
	for (r = 0; r < reps; r++)
		v[r] = run_tasks(n, 0);
	row("indep", impl, v, reps, "us/task", "independent empty tasks, inserted then waited for");
	for (r = 0; r < reps; r++)
		v[r] = run_tasks(n, 1);
	row("chain", impl, v, reps, "us/task", "empty tasks in a read-write chain on one variable");
#ifdef TASKS_HAVE_CBLAS
	if (chol) {
		unsigned nt = quick ? 6 : 10, nb = 192;
		reps = quick ? 2 : 4;
		cholesky(nt, nb); /* warm-up, and model calibration */
		for (r = 0; r < reps; r++)
			v[r] = cholesky(nt, nb); /* a rate: the max is the best figure */
		row("cholesky", impl, v, reps, "GFlop/s", "tiled Cholesky (CBLAS tiles of 192, sequential task flow)");
	}
#else
	if (chol)
		fprintf(stderr, "tasks: built without CBLAS: no Cholesky\n");
#endif
	starpu_shutdown();
	return 0;
}
