/* MPC's <starpu.h> compiles as strict C99 (-std=c99 -pedantic -Werror), and a minimal program
 * written against it runs: a synchronous task built with STARPU_TASK_INITIALIZER. */
#include <starpu.h>
#include <starpu/1.3/starpu_sched_component.h>
#include <starpu/1.3/starpu_heteroprio.h>

static void set_one(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 1;
}

static struct starpu_codelet cl = { .cpu_funcs = { set_one }, .nbuffers = 1, .modes = { STARPU_W }, .name = "set_one" };

int main(void)
{
	int x = 0;
	starpu_data_handle_t h;
	struct starpu_task task = STARPU_TASK_INITIALIZER;
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	task.cl = &cl;
	task.handles[0] = h;
	task.synchronous = 1;
	ret = starpu_task_submit(&task);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_submit");
	starpu_task_clean(&task);
	starpu_data_unregister(h);
	starpu_shutdown();
	printf("starpu_h_c99: %s\n", x == 1 ? "OK" : "FAILED");
	return x == 1 ? 0 : 1;
}
