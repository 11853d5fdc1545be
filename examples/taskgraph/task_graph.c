/* A chain and a DAG, written as a StarPU 1.3 program; checks that the runtime orders tasks as
 * their data accesses and declared dependencies require.
 *
 *   task_graph [N]     (default 1000)
 *
 * 1. Chain: N tasks increment one variable (STARPU_RW); each also receives its index by value
 *    and checks that the variable equals it when it runs (read-after-write order).
 * 2. Readers and writers: on each of 8 vectors, a writer, 4 readers that copy it into their own
 *    output, another writer: readers must see the first writer's values, never the second's
 *    (write-after-read), and the second writer must run after all of them.
 * 3. Explicit dependencies: a diamond of tasks without data (starpu_task_declare_deps_array),
 *    repeated N/10 times; each task records its position in a global sequence.
 * 4. starpu_data_acquire in read mode sees the chain's final value; callbacks ran once per task.
 * Prints "task_graph: OK" and exits 0, or names what went wrong and exits 1; 77 without workers. */
#include <starpu.h>

#define NVEC 8
#define VLEN 256
#define NREADERS 4

static int failures = 0;
static unsigned long callbacks = 0; /* updated with __atomic builtins: callbacks run on any worker */

static void fail(const char *what, long a, long b)
{
	if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < 10)
		fprintf(stderr, "task_graph: %s (%ld vs %ld)\n", what, a, b);
}

static void count_callback(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
}

/* ---- 1. chain ---- */
static void incr(void *buffers[], void *cl_arg)
{
	long expect;
	long *v = (long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	starpu_codelet_unpack_args(cl_arg, &expect);
	if (*v != expect)
		fail("chain: a task ran out of order", *v, expect);
	*v += 1;
}
static struct starpu_codelet incr_cl = { .cpu_funcs = { incr }, .nbuffers = 1, .modes = { STARPU_RW }, .name = "incr" };

/* ---- 2. readers and writers ---- */
static void fill(void *buffers[], void *cl_arg)
{
	int value;
	unsigned i;
	starpu_codelet_unpack_args(cl_arg, &value);
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] = value;
}
static void copy(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	const int *src = (const int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	int *dst = (int *)STARPU_VECTOR_GET_PTR(buffers[1]);
	unsigned i;
	for (i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		dst[i] = src[i];
}
static struct starpu_codelet fill_cl = { .cpu_funcs = { fill }, .nbuffers = 1, .modes = { STARPU_W }, .name = "fill" };
static struct starpu_codelet copy_cl = { .cpu_funcs = { copy }, .nbuffers = 2, .modes = { STARPU_R, STARPU_W }, .name = "copy" };

/* ---- 3. explicit dependencies ---- */
static unsigned long sequence = 0;
static void stamp(void *buffers[], void *cl_arg)
{
	(void)buffers;
	*(unsigned long *)cl_arg = __atomic_add_fetch(&sequence, 1, __ATOMIC_SEQ_CST);
}
static struct starpu_codelet stamp_cl = { .cpu_funcs = { stamp }, .nbuffers = 0, .name = "stamp" };

static struct starpu_task *stamp_task(unsigned long *slot)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = &stamp_cl;
	t->cl_arg = slot;
	t->callback_func = count_callback;
	return t;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long i;
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	/* 1. chain */
	long counter = 0;
	starpu_data_handle_t counter_h;
	starpu_variable_data_register(&counter_h, STARPU_MAIN_RAM, (uintptr_t)&counter, sizeof(counter));
	for (i = 0; i < n; i++)
	{
		ret = starpu_task_insert(&incr_cl, STARPU_RW, counter_h, STARPU_VALUE, &i, sizeof(i),
					 STARPU_CALLBACK, count_callback, STARPU_NAME, "incr", 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}

	/* 2. readers and writers */
	static int vec[NVEC][VLEN], out[NVEC][NREADERS][VLEN];
	starpu_data_handle_t vec_h[NVEC], out_h[NVEC][NREADERS];
	int v, r;
	for (v = 0; v < NVEC; v++)
	{
		starpu_vector_data_register(&vec_h[v], STARPU_MAIN_RAM, (uintptr_t)vec[v], VLEN, sizeof(int));
		for (r = 0; r < NREADERS; r++)
			starpu_vector_data_register(&out_h[v][r], STARPU_MAIN_RAM, (uintptr_t)out[v][r], VLEN, sizeof(int));
		int first = 100 + v, second = 200 + v;
		ret = starpu_task_insert(&fill_cl, STARPU_W, vec_h[v], STARPU_VALUE, &first, sizeof(first), 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
		for (r = 0; r < NREADERS; r++)
		{
			ret = starpu_task_insert(&copy_cl, STARPU_R, vec_h[v], STARPU_W, out_h[v][r], 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
		}
		ret = starpu_task_insert(&fill_cl, STARPU_W, vec_h[v], STARPU_VALUE, &second, sizeof(second), 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}

	/* 3. diamonds: a -> (b, c) -> d, declared explicitly, submitted in reverse order */
	long ndiamonds = n / 10 + 1, k;
	unsigned long (*seq)[4] = calloc((size_t)ndiamonds, sizeof(*seq));
	for (k = 0; k < ndiamonds; k++)
	{
		struct starpu_task *a = stamp_task(&seq[k][0]), *b = stamp_task(&seq[k][1]);
		struct starpu_task *c = stamp_task(&seq[k][2]), *d = stamp_task(&seq[k][3]);
		struct starpu_task *bc[2] = { b, c };
		starpu_task_declare_deps_array(b, 1, &a);
		starpu_task_declare_deps_array(c, 1, &a);
		starpu_task_declare_deps_array(d, 2, bc);
		STARPU_CHECK_RETURN_VALUE(starpu_task_submit(d), "starpu_task_submit");
		STARPU_CHECK_RETURN_VALUE(starpu_task_submit(c), "starpu_task_submit");
		STARPU_CHECK_RETURN_VALUE(starpu_task_submit(b), "starpu_task_submit");
		STARPU_CHECK_RETURN_VALUE(starpu_task_submit(a), "starpu_task_submit");
	}

	/* 4. the chain's result through an acquisition: waits for the chain's tasks only */
	ret = starpu_data_acquire(counter_h, STARPU_R);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_data_acquire");
	if (counter != n)
		fail("chain: final value", counter, n);
	starpu_data_release(counter_h);

	starpu_task_wait_for_all();
	for (v = 0; v < NVEC; v++)
	{
		for (r = 0; r < NREADERS; r++)
		{
			if (out[v][r][0] != 100 + v || out[v][r][VLEN - 1] != 100 + v)
				fail("readers: a reader did not see the first writer's values", out[v][r][0], 100 + v);
			starpu_data_unregister(out_h[v][r]);
		}
		if (vec[v][0] != 200 + v)
			fail("writers: the second writer did not run last", vec[v][0], 200 + v);
		starpu_data_unregister(vec_h[v]);
	}
	for (k = 0; k < ndiamonds; k++)
	{
		if (!(seq[k][0] < seq[k][1] && seq[k][0] < seq[k][2] && seq[k][1] < seq[k][3] && seq[k][2] < seq[k][3]))
			fail("diamond: order broken", (long)k, 0);
	}
	unsigned long expect_callbacks = (unsigned long)n + 4 * (unsigned long)ndiamonds;
	if (__atomic_load_n(&callbacks, __ATOMIC_RELAXED) != expect_callbacks)
		fail("callbacks", (long)callbacks, (long)expect_callbacks);
	starpu_data_unregister(counter_h);
	free(seq);
	printf("task_graph: %ld chained tasks, %d vectors, %ld diamonds on %u workers: %s\n", n, NVEC, ndiamonds,
	       starpu_worker_get_count(), failures ? "FAILED" : "OK");
	starpu_shutdown();
	return failures ? 1 : 0;
}
