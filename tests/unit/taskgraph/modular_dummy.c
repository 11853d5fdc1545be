/* A scheduling decision component written by the application (a central list of tasks under a
 * mutex, in the shape of StarPU's dummy_modular_sched example, written for MPC), put in a tree by
 * starpu_sched_component_initialize_simple_scheduler with one prio queue per worker below it.
 * Checked: with several workers every task goes through the component's push_task and leaves it
 * through pull_task (pumped into the queues below by can_push); with one worker there is no
 * choice to make and StarPU's rule puts an eager component (and a fifo above) in its place, so
 * the component is never made; a 300-task chain on one variable gives its exact sum; the
 * component is destroyed once, empty, at shutdown. Built unchanged against MPC and Debian's
 * StarPU 1.3 (user_sched.sh). Prints "modular_dummy: ... on N workers ...: OK" or exits 1. */
#include <starpu.h>
#include <starpu_sched_component.h>
#include <stdio.h>
#include <stdlib.h>

#define NTASKS 300

struct central {
    struct starpu_task_list list;
    starpu_pthread_mutex_t mutex;
    int pushed, pulled, made, destroyed, left;
};
static struct central g;

static int central_push(struct starpu_sched_component *c, struct starpu_task *task) {
    struct central *d = c->data;
    STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
    starpu_task_list_push_front(&d->list, task);
    d->pushed++;
    STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
    c->can_pull(c); /* the queues below may pull */
    return 0;
}

static struct starpu_task *central_pull(struct starpu_sched_component *c, struct starpu_sched_component *to) {
    struct central *d = c->data;
    struct starpu_task *task = NULL;
    (void)to;
    STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
    if (!starpu_task_list_empty(&d->list)) {
        task = starpu_task_list_pop_back(&d->list);
        d->pulled++;
    }
    STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
    return task;
}

/* A queue below has room: give it tasks until it refuses one, which comes back here. */
static int central_can_push(struct starpu_sched_component *c, struct starpu_sched_component *to) {
    struct central *d = c->data;
    int didwork = 0;
    struct starpu_task *task = starpu_sched_component_pump_to(c, to, &didwork);
    if (task) {
        STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
        starpu_task_list_push_back(&d->list, task);
        d->pulled--;
        STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
    }
    return didwork || starpu_sched_component_can_push(c, to);
}

static void central_deinit(struct starpu_sched_component *c) {
    struct central *d = c->data;
    d->destroyed++;
    d->left = !starpu_task_list_empty(&d->list);
    STARPU_PTHREAD_MUTEX_DESTROY(&d->mutex);
}

static struct starpu_sched_component *central_create(struct starpu_sched_tree *tree, void *arg) {
    struct starpu_sched_component *c = starpu_sched_component_create(tree, "central");
    struct central *d = arg;
    STARPU_PTHREAD_MUTEX_INIT(&d->mutex, NULL);
    starpu_task_list_init(&d->list);
    d->made++;
    c->data = d;
    c->push_task = central_push;
    c->pull_task = central_pull;
    c->can_push = central_can_push;
    c->deinit_data = central_deinit;
    return c;
}

static void init_central(unsigned ctx) {
    starpu_sched_component_initialize_simple_scheduler(
        central_create, &g,
        STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_FIFOS_BELOW | STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO, ctx);
}

static void deinit_central(unsigned ctx) {
    starpu_sched_tree_destroy((struct starpu_sched_tree *)starpu_sched_ctx_get_policy_data(ctx));
}

static struct starpu_sched_policy central_policy = {
    .init_sched = init_central,
    .deinit_sched = deinit_central,
    .add_workers = starpu_sched_tree_add_workers,
    .remove_workers = starpu_sched_tree_remove_workers,
    .push_task = starpu_sched_tree_push_task,
    .pop_task = starpu_sched_tree_pop_task,
    .pre_exec_hook = starpu_sched_component_worker_pre_exec_hook,
    .post_exec_hook = starpu_sched_component_worker_post_exec_hook,
    .policy_name = "central",
    .policy_description = "a central list chosen from by the application's component",
    .worker_type = STARPU_WORKER_LIST,
};

static void add_one(void *buffers[], void *arg) {
    long *v = (long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
    (void)arg;
    *v += 1;
}

static struct starpu_codelet add_cl = {.cpu_funcs = {add_one}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "add"};

int main(void) {
    struct starpu_conf conf;
    starpu_data_handle_t h;
    long sum = 0;
    unsigned nw;
    int i, expect;
    starpu_conf_init(&conf);
    conf.sched_policy = &central_policy;
    if (starpu_init(&conf) != 0) {
        fprintf(stderr, "modular_dummy: starpu_init failed\n");
        return 1;
    }
    nw = starpu_worker_get_count();
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&sum, sizeof(sum));
    for (i = 0; i < NTASKS; i++) {
        if (starpu_task_insert(&add_cl, STARPU_RW, h, STARPU_PRIORITY, i % 4, 0) != 0) {
            fprintf(stderr, "modular_dummy: starpu_task_insert failed\n");
            return 1;
        }
    }
    starpu_task_wait_for_all();
    starpu_data_unregister(h);
    starpu_shutdown();
    expect = nw > 1 ? NTASKS : 0;
    if (sum != NTASKS || g.pushed != expect || g.pulled != expect || g.made != (nw > 1) ||
        g.destroyed != (nw > 1) || g.left) {
        fprintf(stderr, "modular_dummy: sum %ld, component made %d destroyed %d (left tasks: %d), %d pushed, "
                        "%d pulled (%d expected)\n", sum, g.made, g.destroyed, g.left, g.pushed, g.pulled, expect);
        return 1;
    }
    printf("modular_dummy: %d tasks through the central component on %u workers (%d pushed into it): OK\n", NTASKS,
           nw, g.pushed);
    return 0;
}
