/* heteroprio set up by the application (starpu_heteroprio.h), the way StarPU documents it: a
 * starpu_conf::sched_policy_init callback that declares the CPU workers' buckets and their
 * order with starpu_heteroprio_set_nb_prios / set_mapping (and a faster architecture and a slow
 * factor, which change nothing with CPUs only). The same file is built against MPC's headers and
 * against Debian's StarPU (user_sched.sh) and must print its OK line with both.
 *
 * Checks: the callback runs once, for context 0, with the workers counted and the context's
 * priorities 0 and 0 (StarPU's); starpu_sched_ctx_get_sched_policy_init gives it back; a task's
 * priority is its bucket; every task runs once. With one worker under MPC, the tasks run bucket
 * by bucket in the configured order (7, 2, 9, 0: neither ascending nor descending), FIFO within
 * a bucket. (StarPU's heteroprio prefetches two tasks into a worker queue sorted by priority,
 * which reorders neighbours, so the order is printed, not checked, there.) Then heteroprio
 * without the callback: the default buckets, STARPU_MAX_PRIO tasks run. */
#include <starpu.h>
#include <starpu_heteroprio.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTASKS 24
#define NBUCKETS 4

static const unsigned buckets[NBUCKETS] = {7, 2, 9, 0}; /* the CPUs' order */
static atomic_int go, nrun, inits, init_workers, init_minmax;
static int order[NTASKS + 1];
static atomic_int ran[NTASKS];

static void blocker(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
	while (!atomic_load(&go))
		;
}

static void record(void *buffers[], void *arg)
{
	int id;
	(void)buffers;
	starpu_codelet_unpack_args(arg, &id);
	order[atomic_fetch_add(&nrun, 1)] = id;
	atomic_fetch_add(&ran[id], 1);
}

static struct starpu_codelet block_cl = {.cpu_funcs = {blocker}, .nbuffers = 0, .name = "blocker"};
static struct starpu_codelet record_cl = {.cpu_funcs = {record}, .nbuffers = 0, .name = "record"};

static void init_buckets(unsigned ctx)
{
	unsigned i;
	atomic_fetch_add(&inits, 1);
	atomic_store(&init_workers, (int)starpu_cpu_worker_get_count());
	atomic_store(&init_minmax, starpu_sched_ctx_get_min_priority(ctx) == 0 && starpu_sched_ctx_get_max_priority(ctx) == 0);
	starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_IDX, NBUCKETS);
	for (i = 0; i < NBUCKETS; i++)
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, i, buckets[i]);
	starpu_heteroprio_set_faster_arch(ctx, STARPU_CPU_IDX, 7);
	starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_IDX, 2, 1.5f);
}

static int rank_of(int bucket)
{
	int i;
	for (i = 0; i < NBUCKETS; i++)
		if ((int)buckets[i] == bucket)
			return i;
	return -1;
}

static int fail(const char *what)
{
	fprintf(stderr, "heteroprio: FAILED: %s\n", what);
	return 1;
}

int main(void)
{
	struct starpu_conf conf;
	int prio[NTASKS], i, j, k, nworkers, ordered = 1;
	starpu_conf_init(&conf);
	conf.sched_policy_name = "heteroprio";
	conf.sched_policy_init = init_buckets;
	if (starpu_init(&conf) != 0)
		return fail("starpu_init");
	nworkers = (int)starpu_worker_get_count();
	if (atomic_load(&inits) != 1 || atomic_load(&init_workers) != nworkers || !atomic_load(&init_minmax))
		return fail("sched_policy_init: not called once with the workers counted and priorities 0..0");
	if (starpu_sched_ctx_get_sched_policy_init(0) != init_buckets)
		return fail("starpu_sched_ctx_get_sched_policy_init");
	if (starpu_task_insert(&block_cl, STARPU_PRIORITY, (int)buckets[0], 0) != 0)
		return fail("blocker");
	for (i = 0; i < NTASKS; i++) {
		prio[i] = (int)buckets[(i * 7 + i / 5) % NBUCKETS]; /* mixed, every bucket several times */
		if (starpu_task_insert(&record_cl, STARPU_PRIORITY, prio[i], STARPU_VALUE, &i, sizeof(i), 0) != 0)
			return fail("insert");
	}
	atomic_store(&go, 1);
	starpu_task_wait_for_all();
	if (atomic_load(&nrun) != NTASKS)
		return fail("not every task ran");
	for (i = 0; i < NTASKS; i++)
		if (atomic_load(&ran[i]) != 1)
			return fail("a task ran other than once");
	/* Expected with one worker: by bucket rank, submission order within a bucket. */
	for (k = 0, j = 0; k < NBUCKETS; k++)
		for (i = 0; i < NTASKS; i++)
			if (prio[i] == (int)buckets[k])
				ordered &= order[j++] == i;
	printf("heteroprio: order");
	for (i = 0; i < NTASKS; i++)
		printf(" %d", rank_of(prio[order[i]]));
	printf("\n");
#ifdef STARPU_MPC
	if (nworkers == 1 && !ordered)
		return fail("with one worker the buckets were not taken in the configured order");
#endif
	starpu_shutdown();

	/* Default buckets: no callback. */
	starpu_conf_init(&conf);
	conf.sched_policy_name = "heteroprio";
	if (starpu_init(&conf) != 0)
		return fail("starpu_init (default)");
	if (starpu_sched_ctx_get_sched_policy_init(0) != NULL)
		return fail("a callback without one");
	atomic_store(&nrun, 0);
	for (i = 0; i < NTASKS; i++) {
		atomic_store(&ran[i], 0);
		if (starpu_task_insert(&record_cl, STARPU_PRIORITY, i % 2 ? STARPU_MAX_PRIO : STARPU_MIN_PRIO, STARPU_VALUE, &i,
				       sizeof(i), 0) != 0)
			return fail("insert (default)");
	}
	starpu_task_wait_for_all();
	starpu_shutdown();
	if (atomic_load(&nrun) != NTASKS)
		return fail("default buckets: not every task ran");
#ifdef STARPU_MPC
	const char *how = nworkers == 1 ? "in the configured order" : "order not checked with 2 workers";
#else
	const char *how = ordered ? "in the configured order (not required)" : "in StarPU's prefetch order";
#endif
	printf("heteroprio: buckets 7, 2, 9, 0 and the default, %d tasks on %d workers (%s): OK\n", 2 * NTASKS, nworkers,
	       how);
	return 0;
}
