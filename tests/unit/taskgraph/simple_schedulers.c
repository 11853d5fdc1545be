/* starpu_sched_component_initialize_simple_schedulers with two decisions, as StarPU documents it:
 * two decision components of the program's own (round robin over their children, counting),
 * each with a fifo per worker below it (DECIDE_WORKERS | DECIDE_ALWAYS | FIFOS_BELOW, the fifos
 * unbounded through STARPU_NTASKS_THRESHOLD), and each task choosing its decision in
 * starpu_task::sched_data.
 * The same file is built against MPC's headers and against Debian's StarPU (user_sched.sh) and
 * must print its OK line with both.
 *
 * Checks: the tree's root is a userchoice component and each worker component's parent a stage
 * component; each decision component receives exactly the tasks that chose it (their push is
 * wrapped to count); every task runs once; a read-write chain through both decisions gives the
 * sequential sum. */
#include <starpu.h>
#include <starpu_sched_component.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NTASKS 200

static atomic_int via[2], ran;
static int shape_ok;

/* A decision component of the program's own: counts the tasks pushed into it and hands them to
 * its children in turn (the first that accepts). */
struct rr {
	int idx;
	atomic_uint next;
};
static struct rr rrs[2];

static int rr_push(struct starpu_sched_component *c, struct starpu_task *t)
{
	struct rr *d = c->data;
	unsigned k, start = atomic_fetch_add(&d->next, 1);
	atomic_fetch_add(&via[d->idx], 1);
	for (k = 0; k < c->nchildren; k++)
		if (starpu_sched_component_push_task(c, c->children[(start + k) % c->nchildren], t) == 0)
			return 0;
	return 1;
}
static struct starpu_sched_component *make_rr(struct starpu_sched_tree *t, void *arg)
{
	struct starpu_sched_component *c = starpu_sched_component_create(t, "rr");
	c->data = arg;
	c->push_task = rr_push;
	return c;
}

static void init_two(unsigned ctx)
{
	unsigned flags = STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_DECIDE_ALWAYS | STARPU_SCHED_SIMPLE_FIFOS_BELOW;
	unsigned w;
	rrs[1].idx = 1;
	starpu_sched_component_initialize_simple_schedulers(ctx, 2, make_rr, &rrs[0], flags, make_rr, &rrs[1], flags);
	struct starpu_sched_tree *t = starpu_sched_ctx_get_policy_data(ctx);
	shape_ok = t != NULL && starpu_sched_component_is_userchoice(t->root) && t->root->nchildren == 2;
	for (w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_sched_component *wc = starpu_sched_component_worker_get(ctx, (int)w);
		shape_ok &= wc->nparents == 1 && starpu_sched_component_is_stage(wc->parents[0]) && wc->parents[0]->nparents == 2;
	}
}

static struct starpu_sched_policy two_decisions = {
    .init_sched = init_two,
    .deinit_sched = starpu_sched_tree_deinitialize,
    .add_workers = starpu_sched_tree_add_workers,
    .remove_workers = starpu_sched_tree_remove_workers,
    .push_task = starpu_sched_tree_push_task,
    .pop_task = starpu_sched_tree_pop_task,
    .pre_exec_hook = starpu_sched_component_worker_pre_exec_hook,
    .post_exec_hook = starpu_sched_component_worker_post_exec_hook,
    .policy_name = "two-decisions",
};

static void add_one(void *buffers[], void *arg)
{
	(void)arg;
	(*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]))++;
	atomic_fetch_add(&ran, 1);
}
static struct starpu_codelet add_cl = {.cpu_funcs = {add_one}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "add_one"};

int main(void)
{
	struct starpu_conf conf;
	starpu_data_handle_t h;
	long x = 0;
	int i, chose[2] = {0, 0};
	setenv("STARPU_NTASKS_THRESHOLD", "100000", 1); /* the round robin never meets a full fifo */
	starpu_conf_init(&conf);
	conf.sched_policy = &two_decisions;
	if (starpu_init(&conf) != 0)
		return 1;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	for (i = 0; i < NTASKS; i++) {
		struct starpu_task *t = starpu_task_create();
		int d = (i % 3) == 0; /* a third through the eager decision */
		t->cl = &add_cl;
		t->handles[0] = h;
		t->sched_data = (void *)(uintptr_t)d;
		chose[d]++;
		if (starpu_task_submit(t) != 0)
			return 1;
	}
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
	unsigned nworkers = starpu_worker_get_count();
	starpu_shutdown();
	if (!shape_ok || x != NTASKS || atomic_load(&ran) != NTASKS || atomic_load(&via[0]) != chose[0] ||
	    atomic_load(&via[1]) != chose[1]) {
		fprintf(stderr, "simple_schedulers: FAILED: shape %d, sum %ld, ran %d, decision 0 %d/%d, decision 1 %d/%d\n", shape_ok,
			x, atomic_load(&ran), atomic_load(&via[0]), chose[0], atomic_load(&via[1]), chose[1]);
		return 1;
	}
	printf("simple_schedulers: userchoice over two decisions, stages above the workers, %d tasks on %u workers "
	       "(%d and %d by each): OK\n", NTASKS, nworkers, chose[0], chose[1]);
	return 0;
}
