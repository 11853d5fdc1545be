/* Vector scaling, written as a StarPU 1.3 program (the shape of StarPU's own vector_scal
 * example): it compiles unchanged against MPC's <starpu.h> and against StarPU's.
 *
 *   vector_scal [NX]      scales a vector of NX floats (default 2048) by 3.14 in one task,
 *                         then by 2 in a chain of tasks on slices, and checks every element.
 * Exit status: 0 and "vector_scal: OK" when every element is right, 1 otherwise, 77 when no
 * worker is available (the automake convention for a skipped test, as StarPU's examples do). */
#include <starpu.h>
#include <math.h>

#define FPRINTF(ofile, fmt, ...) do { if (!getenv("STARPU_SSILENT")) {fprintf(ofile, fmt, ## __VA_ARGS__); }} while(0)

static struct starpu_perfmodel vector_scal_model = {
	.type = STARPU_HISTORY_BASED,
	.symbol = "vector_scal"
};

void scal_cpu_func(void *buffers[], void *cl_arg)
{
	unsigned i;
	float *factor = cl_arg;
	struct starpu_vector_interface *vector = buffers[0];
	unsigned n = STARPU_VECTOR_GET_NX(vector);
	float *val = (float *)STARPU_VECTOR_GET_PTR(vector);

	for (i = 0; i < n; i++)
		val[i] *= *factor;
}

static struct starpu_codelet cl = {
	.cpu_funcs = { scal_cpu_func },
	.cpu_funcs_name = { "scal_cpu_func" },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.model = &vector_scal_model,
	.name = "vector_scal"
};

/* The same kernel, with the factor passed by value through starpu_task_insert. */
void scal_value_func(void *buffers[], void *cl_arg)
{
	float factor;
	unsigned i;
	starpu_codelet_unpack_args(cl_arg, &factor);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	float *val = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (i = 0; i < n; i++)
		val[i] *= factor;
}

static struct starpu_codelet cl_value = {
	.cpu_funcs = { scal_value_func },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.name = "vector_scal_value"
};

int main(int argc, char **argv)
{
	unsigned nx = argc > 1 ? (unsigned)atoi(argv[1]) : 2048;
	float *vector;
	unsigned i;
	int ret;

	ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	starpu_malloc((void **)&vector, nx * sizeof(vector[0]));
	for (i = 0; i < nx; i++)
		vector[i] = 1.0f + (float)i;

	starpu_data_handle_t vector_handle;
	starpu_vector_data_register(&vector_handle, STARPU_MAIN_RAM, (uintptr_t)vector, nx, sizeof(vector[0]));

	float factor = 3.14f;
	struct starpu_task *task = starpu_task_create();
	task->synchronous = 1;
	task->cl = &cl;
	task->handles[0] = vector_handle;
	task->cl_arg = &factor;
	task->cl_arg_size = sizeof(factor);
	ret = starpu_task_submit(task);
	if (ret == -ENODEV)
	{
		starpu_data_unregister(vector_handle);
		starpu_free(vector);
		starpu_shutdown();
		return 77;
	}
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_submit");

	/* Then 4 times by 2 with starpu_task_insert: the tasks depend on each other through the
	 * handle (read-write after read-write) and run in order. */
	float two = 2.0f;
	int k;
	for (k = 0; k < 4; k++)
	{
		ret = starpu_task_insert(&cl_value, STARPU_RW, vector_handle, STARPU_VALUE, &two, sizeof(two), 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
	starpu_task_wait_for_all();
	starpu_data_unregister(vector_handle);

	int errors = 0;
	for (i = 0; i < nx; i++)
	{
		float expect = (1.0f + (float)i) * 3.14f * 16.0f;
		if (fabsf(vector[i] - expect) > 1e-5f * expect)
		{
			if (errors++ < 5)
				FPRINTF(stderr, "vector[%u] = %f, expected %f\n", i, vector[i], expect);
		}
	}
	FPRINTF(stdout, "vector_scal: %u elements on %u workers: %s\n", nx, starpu_worker_get_count(), errors ? "FAILED" : "OK");
	starpu_free(vector);
	starpu_shutdown();
	return errors ? 1 : 0;
}
