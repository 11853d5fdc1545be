/* Per-task cost of a scheduling tree built by the application (starpu_sched_component.h): a fifo
 * component above the worker components, installed through struct starpu_sched_policy ("tree"),
 * against the built-in policy named by STARPU_SCHED (any other first argument). 5 chunks of
 * 20,000 empty tasks through starpu_task_insert, end to end; prints the best chunk's µs per
 * task. The same source builds against MPC and against Debian's StarPU 1.3 (commands in
 * benchmarks/RESULTS.md, "Scheduling trees built by the application"). */
#include <starpu.h>
#include <starpu_sched_component.h>
#include <stdio.h>
#include <string.h>
static void init_tree(unsigned ctx) {
    struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);
    t->root = starpu_sched_component_fifo_create(t, NULL);
    for (unsigned w = 0; w < starpu_worker_get_count(); w++)
        starpu_sched_component_connect(t->root, starpu_sched_component_worker_get(ctx, (int)w));
    starpu_sched_tree_update_workers(t);
    starpu_sched_ctx_set_policy_data(ctx, t);
}
static void deinit_tree(unsigned ctx) { starpu_sched_tree_destroy(starpu_sched_ctx_get_policy_data(ctx)); }
static struct starpu_sched_policy pol = {.init_sched = init_tree, .deinit_sched = deinit_tree,
    .add_workers = starpu_sched_tree_add_workers, .remove_workers = starpu_sched_tree_remove_workers,
    .push_task = starpu_sched_tree_push_task, .pop_task = starpu_sched_tree_pop_task,
    .pre_exec_hook = starpu_sched_component_worker_pre_exec_hook,
    .post_exec_hook = starpu_sched_component_worker_post_exec_hook, .policy_name = "fifo-tree"};
static void nop(void *b[], void *a) { (void)b; (void)a; }
static struct starpu_codelet cl = {.cpu_funcs = {nop}, .nbuffers = 0};
int main(int argc, char **argv) {
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    if (argc > 1 && strcmp(argv[1], "tree") == 0) conf.sched_policy = &pol;
    if (starpu_init(&conf)) return 1;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = starpu_timing_now();
        for (int i = 0; i < 20000; i++) starpu_task_insert(&cl, 0);
        starpu_task_wait_for_all();
        double us = (starpu_timing_now() - t0) / 20000;
        if (us < best) best = us;
    }
    printf("%s %u workers: %.3f us/task (min of 5 x 20000)\n", argc > 1 ? argv[1] : "builtin", starpu_worker_get_count(), best);
    starpu_shutdown();
    return 0;
}
