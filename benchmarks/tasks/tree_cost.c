/* Per-task cost of a scheduling tree built by the application (starpu_sched_component.h): a fifo
 * component above the worker components, installed through struct starpu_sched_policy ("tree"),
 * against the built-in policy named by STARPU_SCHED (any other first argument). 5 chunks of
 * 20,000 empty tasks through starpu_task_insert, end to end; prints the best chunk's µs per
 * task. A second argument "chain" makes the tasks a read-write chain on one variable (each
 * task made ready by the end of the previous one, on a worker: one task runs at a time, so
 * waking workers that find nothing is pure overhead); "sparse" submits 2,000 independent tasks
 * 100 µs apart (longer than a worker spins before sleeping: each push finds the workers asleep). The same source builds against MPC and against Debian's StarPU 1.3 (commands in
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
static struct starpu_codelet chain_cl = {.cpu_funcs = {nop}, .nbuffers = 1, .modes = {STARPU_RW}};
int main(int argc, char **argv) {
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    if (argc > 1 && strcmp(argv[1], "tree") == 0) conf.sched_policy = &pol;
    if (starpu_init(&conf)) return 1;
    const int chain = argc > 2 && strcmp(argv[2], "chain") == 0;
    const int sparse = argc > 2 && strcmp(argv[2], "sparse") == 0;
    const int ntasks = sparse ? 2000 : 20000;
    int x = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = starpu_timing_now();
        for (int i = 0; i < ntasks; i++) {
            if (chain) starpu_task_insert(&chain_cl, STARPU_RW, h, 0);
            else starpu_task_insert(&cl, 0);
            for (double s0 = starpu_timing_now(); sparse && starpu_timing_now() - s0 < 100;) {
            }
        }
        starpu_task_wait_for_all();
        double us = (starpu_timing_now() - t0) / ntasks;
        if (us < best) best = us;
    }
    printf("%s%s %u workers: %.3f us/task (min of 5 x %d)\n", argc > 1 ? argv[1] : "builtin",
           chain ? " chain" : sparse ? " sparse" : "", starpu_worker_get_count(), best, ntasks);
    starpu_data_unregister(h);
    starpu_shutdown();
    return 0;
}
