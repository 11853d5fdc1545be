/* A scheduling policy written by the application through StarPU 1.3's documented API (struct
 * starpu_sched_policy in starpu_conf::sched_policy): one FIFO queue of starpu_task_list under a
 * mutex, the workers woken through the context's worker collection, hooks that count. The
 * same file is built against MPC's <starpu.h> and against Debian's StarPU (user_sched.sh), and
 * must print its OK line with both.
 *
 * Checks: init_sched and add_workers (every worker) at starpu_init, deinit_sched at shutdown
 * with an empty queue; every task goes through push_task, pop_task, pre_exec_hook and
 * post_exec_hook once; with one worker the tasks run in submission order (the policy is a
 * FIFO); a read-write chain on a variable gives the right sum; the worker collection walks
 * every worker; starpu_sched_ctx_get_policy_data gives back what init_sched set. */
#include <starpu.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTASKS 300

struct fifo_data {
	struct starpu_task_list queue;
	pthread_mutex_t lock;
	unsigned long pushed, popped, pre, post, submitted;
	unsigned ncollection; /* workers seen walking the collection at the first push */
};

static unsigned inits, deinits, added, removed, deinit_left;

static void fifo_init(unsigned ctx)
{
	struct fifo_data *d = calloc(1, sizeof(*d));
	if (d == NULL)
		abort();
	starpu_task_list_init(&d->queue);
	pthread_mutex_init(&d->lock, NULL);
	starpu_sched_ctx_set_policy_data(ctx, d);
	inits++;
}

static void fifo_deinit(unsigned ctx)
{
	struct fifo_data *d = starpu_sched_ctx_get_policy_data(ctx);
	deinit_left = !starpu_task_list_empty(&d->queue);
	pthread_mutex_destroy(&d->lock);
	free(d);
	deinits++;
}

static void fifo_add_workers(unsigned ctx, int *ids, unsigned n)
{
	(void)ctx;
	(void)ids;
	added += n;
}

static void fifo_remove_workers(unsigned ctx, int *ids, unsigned n)
{
	(void)ctx;
	(void)ids;
	removed += n;
}

static int fifo_push(struct starpu_task *task)
{
	unsigned ctx = task->sched_ctx;
	struct fifo_data *d = starpu_sched_ctx_get_policy_data(ctx);
	struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(ctx);
	struct starpu_sched_ctx_iterator it;
	unsigned seen = 0;

	pthread_mutex_lock(&d->lock);
	starpu_task_list_push_front(&d->queue, task);
	d->pushed++;
	starpu_push_task_end(task);
	pthread_mutex_unlock(&d->lock);

	/* Wake every worker of the context: any of them may take the task. */
	workers->init_iterator(workers, &it);
	while (workers->has_next(workers, &it)) {
		int w = workers->get_next(workers, &it);
		starpu_wake_worker_relax_light(w);
		seen++;
	}
	pthread_mutex_lock(&d->lock);
	if (d->ncollection == 0)
		d->ncollection = seen;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static struct starpu_task *fifo_pop(unsigned ctx)
{
	struct fifo_data *d = starpu_sched_ctx_get_policy_data(ctx);
	struct starpu_task *t = NULL;
	pthread_mutex_lock(&d->lock);
	if (!starpu_task_list_empty(&d->queue)) {
		t = starpu_task_list_pop_back(&d->queue);
		d->popped++;
	}
	pthread_mutex_unlock(&d->lock);
	return t;
}

/* Counts one event in the policy's data (field: its offset in struct fifo_data). */
static void bump(unsigned ctx, size_t field)
{
	struct fifo_data *d = starpu_sched_ctx_get_policy_data(ctx);
	pthread_mutex_lock(&d->lock);
	(*(unsigned long *)((char *)d + field))++;
	pthread_mutex_unlock(&d->lock);
}

static void fifo_pre(struct starpu_task *task, unsigned ctx)
{
	(void)task;
	bump(ctx, offsetof(struct fifo_data, pre));
}

static void fifo_post(struct starpu_task *task, unsigned ctx)
{
	(void)task;
	bump(ctx, offsetof(struct fifo_data, post));
}

static void fifo_submit(struct starpu_task *task)
{
	bump(task->sched_ctx, offsetof(struct fifo_data, submitted));
}

static struct starpu_sched_policy fifo_policy = {
	.init_sched = fifo_init,
	.deinit_sched = fifo_deinit,
	.add_workers = fifo_add_workers,
	.remove_workers = fifo_remove_workers,
	.push_task = fifo_push,
	.pop_task = fifo_pop,
	.pre_exec_hook = fifo_pre,
	.post_exec_hook = fifo_post,
	.submit_hook = fifo_submit,
	.policy_name = "user-fifo",
	.policy_description = "a FIFO written by the application",
	.worker_type = STARPU_WORKER_LIST,
};

static int order[NTASKS];
static int next_slot;
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(void *buffers[], void *arg)
{
	int i;
	(void)buffers;
	starpu_codelet_unpack_args(arg, &i);
	pthread_mutex_lock(&order_lock);
	order[next_slot++] = i;
	pthread_mutex_unlock(&order_lock);
}

static void add(void *buffers[], void *arg)
{
	long *x = (long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	int i;
	starpu_codelet_unpack_args(arg, &i);
	*x += i;
}

static struct starpu_codelet record_cl = { .cpu_funcs = { record }, .nbuffers = 0, .name = "record" };
static struct starpu_codelet add_cl = { .cpu_funcs = { add }, .nbuffers = 1, .modes = { STARPU_RW }, .name = "add" };

#define CHECK(c)                                                                          \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "user_sched: check failed line %d: %s\n", __LINE__, #c); \
			return 1;                                                         \
		}                                                                         \
	} while (0)

int main(void)
{
	struct starpu_conf conf;
	struct fifo_data *d;
	starpu_data_handle_t h;
	long x = 0;
	unsigned nw;
	int i, ret;

	starpu_conf_init(&conf);
	conf.sched_policy = &fifo_policy;
	ret = starpu_init(&conf);
	if (ret == -ENODEV)
		return 77;
	CHECK(ret == 0);
	nw = starpu_worker_get_count();
	CHECK(inits == 1);
	CHECK(added == nw);
	d = starpu_sched_ctx_get_policy_data(0);
	CHECK(d != NULL);

	for (i = 0; i < NTASKS; i++)
		CHECK(starpu_task_insert(&record_cl, STARPU_VALUE, &i, sizeof(i), 0) == 0);
	CHECK(starpu_task_wait_for_all() == 0);
	CHECK(next_slot == NTASKS);
	if (nw == 1)
		for (i = 0; i < NTASKS; i++)
			CHECK(order[i] == i); /* one worker, a FIFO: submission order */

	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	for (i = 1; i <= NTASKS; i++)
		CHECK(starpu_task_insert(&add_cl, STARPU_RW, h, STARPU_VALUE, &i, sizeof(i), 0) == 0);
	CHECK(starpu_task_wait_for_all() == 0);
	starpu_data_unregister(h);
	CHECK(x == (long)NTASKS * (NTASKS + 1) / 2);

	pthread_mutex_lock(&d->lock);
	CHECK(d->pushed == 2 * NTASKS);
	CHECK(d->popped == 2 * NTASKS);
	CHECK(d->pre == 2 * NTASKS);
	CHECK(d->post == 2 * NTASKS);
	/* StarPU 1.3.10 submits one task of its own (seen: 601): at least ours. */
	CHECK(d->submitted >= 2 * NTASKS);
	CHECK(d->ncollection == nw);
	pthread_mutex_unlock(&d->lock);

	starpu_shutdown();
	CHECK(deinits == 1);
	CHECK(removed == nw);
	CHECK(!deinit_left);
	printf("user_sched: %d tasks on %u workers through policy %s: OK\n", 2 * NTASKS, nw, fifo_policy.policy_name);
	return 0;
}
