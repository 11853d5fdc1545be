/* Scheduling trees built by the application with StarPU 1.3's modular scheduler API
 * (starpu_sched_component.h), each installed through a struct starpu_sched_policy whose methods
 * are the starpu_sched_tree_* functions, and a task graph run under each:
 *   eager:  fifo -> eager -> one fifo (at most 2 tasks) per worker -> worker
 *   random: random -> one fifo per worker -> worker
 *   heft:   heft -> one fifo (at most 4 tasks) per worker -> worker
 *   mct:    prio -> mct -> one fifo (at most 2 tasks) per worker -> worker
 *   ws:     work_stealing -> worker
 *   eager-ws: eager -> work_stealing -> worker
 * and the same shapes with the top made from a recipe (starpu_sched_component_composed_*):
 *   composed-heft:  a recipe of one pair (heft), which gives the heft component itself
 *   composed-eager: composed(fifo, eager) -> one fifo (at most 2 tasks) per worker -> worker
 *   composed-mct:   composed(prio, mct) -> one fifo (at most 2 tasks) per worker -> worker
 *   composed-ws:    composed(fifo, work_stealing) -> worker
 * (StarPU 1.3.10's composed component of two or more pairs recurses without end when a child
 * is connected to it: with SCHED_TREE_NO_COMPOSED=1, which user_sched.sh sets for Debian's
 * StarPU, those three are skipped.)
 * Checked for each: a 400-task graph of read/read-write accesses on 8 variables gives exactly
 * the sequential replay's values; every task ran once and went through pre_exec_hook; under
 * random with several workers, each worker ran some of 200 independent tasks (random places
 * them into the workers' own fifos); the worker components' load is back to 0 at the end.
 * The ws and composed-ws trees push through starpu_sched_tree_work_stealing_push_task (as
 * StarPU's modular-ws policy): a task running on a worker inserts NSPAWN tasks, which go into
 * that worker's own deque of the work_stealing component (found above the worker's component,
 * inside the composed one's chain for composed-ws: not through the fifo above it), and each of
 * them waits until every worker has run one of them (at most 20 s): with several workers, the
 * others must steal from it.
 * The eager-ws tree pushes through starpu_sched_tree_push_task, so eager's push into the
 * work_stealing component is StarPU's plain push: round-robin over its children whoever pushes
 * (StarPU's last_push_child), not into the pushing worker's deque. Checked with every worker
 * held (worker 0 runs a task that inserts NPLACE tasks per worker while the others spin in
 * holder tasks): the component's estimated_load is then the tasks in its deques per worker
 * (NPLACE; StarPU counts its deques, not the load below it), and once released, the first
 * placed task each worker runs is one of the last nw inserted (each takes the newest of its
 * own deque first; with every task in worker 0's deque the others would steal an old one).
 * Built unchanged against MPC and against Debian's StarPU 1.3 (user_sched.sh). Prints
 * "sched_tree: ... on N workers ...: OK" or exits 1. */
#include <starpu.h>
#include <starpu_sched_component.h>
#include <stdio.h>
#include <stdlib.h>

#define NH 8
#define NDEP 400
#define NIND 200
#define NSPAWN 16
#define NPLACE 32 /* placed tasks per worker (eager-ws) */

enum kind { EAGER, RANDOM, HEFT, MCT, WS, EAGER_WS, C_HEFT, C_EAGER, C_MCT, C_WS, NKINDS };
static const char *kind_name[NKINDS] = {"eager",         "random",         "heft",         "mct",        "ws",
                                        "eager-ws",      "composed-heft", "composed-eager", "composed-mct",
                                        "composed-ws"};
static int g_kind;
static int g_pre;                       /* pre_exec_hook calls */
static int g_ran;                       /* kernels run */
static int g_on[STARPU_NMAXWORKERS];    /* independent tasks per worker */
static int g_spawn_on[STARPU_NMAXWORKERS]; /* spawned tasks per worker */
static int g_spawn_late;                /* spawned tasks that waited 20 s for the other workers */
static double g_spawn_queued;           /* composed-ws: tasks in the chain's fifo after the spawns */
static struct starpu_sched_component *g_ws; /* eager-ws: the work_stealing component */
static int g_holding;                   /* eager-ws: holder tasks spinning */
static int g_release;                   /* eager-ws: set once the placed tasks are in */
static int g_first[STARPU_NMAXWORKERS]; /* eager-ws: the first placed task each worker ran (-1) */
static double g_placed_load;            /* eager-ws: the ws component's estimated_load, all held */
static int g_hold_late;                 /* eager-ws: a wait that gave up after 20 s */

static struct starpu_sched_component *queue_of(struct starpu_sched_tree *t, unsigned limit) {
    struct starpu_sched_component_fifo_data d = {limit, 0.0, 0};
    return starpu_sched_component_fifo_create(t, &d);
}

/* decision -> (a queue of `limit` tasks, or none when limit < 0) -> worker, for every worker */
static void workers_under(struct starpu_sched_tree *t, struct starpu_sched_component *decision, int limit,
                          unsigned ctx) {
    unsigned w;
    for (w = 0; w < starpu_worker_get_count(); w++) {
        struct starpu_sched_component *leaf = starpu_sched_component_worker_get(ctx, (int)w);
        if (limit >= 0) {
            struct starpu_sched_component *q = queue_of(t, (unsigned)limit);
            starpu_sched_component_connect(decision, q);
            starpu_sched_component_connect(q, leaf);
        } else {
            starpu_sched_component_connect(decision, leaf);
        }
    }
}

/* The recipe's pairs: create functions of StarPU's signature around the predefined components. */
static struct starpu_sched_component *g_chain_fifo, *g_chain_ws; /* the last ones a recipe made */
static struct starpu_sched_component *make_fifo(struct starpu_sched_tree *t, void *arg) {
    (void)arg;
    return g_chain_fifo = starpu_sched_component_fifo_create(t, NULL);
}
static struct starpu_sched_component *make_prio(struct starpu_sched_tree *t, void *arg) {
    return starpu_sched_component_prio_create(t, arg);
}
static struct starpu_sched_component *make_eager(struct starpu_sched_tree *t, void *arg) {
    return starpu_sched_component_eager_create(t, arg);
}
static struct starpu_sched_component *make_mct(struct starpu_sched_tree *t, void *arg) {
    return starpu_sched_component_mct_create(t, arg);
}
static struct starpu_sched_component *make_ws(struct starpu_sched_tree *t, void *arg) {
    return g_chain_ws = starpu_sched_component_work_stealing_create(t, arg);
}
static struct starpu_sched_component *make_heft(struct starpu_sched_tree *t, void *arg) {
    return starpu_sched_component_heft_create(t, arg);
}

static int g_single_ok; /* the one-pair recipe gave the heft component itself */

/* composed(first, second): a recipe of two pairs, destroyed once used. */
static struct starpu_sched_component *composed(struct starpu_sched_tree *t,
                                               struct starpu_sched_component *(*first)(struct starpu_sched_tree *, void *),
                                               struct starpu_sched_component *(*second)(struct starpu_sched_tree *, void *)) {
    struct starpu_sched_component_composed_recipe *r = starpu_sched_component_composed_recipe_create();
    struct starpu_sched_component *c;
    starpu_sched_component_composed_recipe_add(r, first, NULL);
    starpu_sched_component_composed_recipe_add(r, second, NULL);
    c = starpu_sched_component_composed_component_create(t, r);
    starpu_sched_component_composed_recipe_destroy(r);
    return c;
}

static void init_tree(unsigned ctx) {
    struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);
    struct starpu_sched_component *top, *decision;
    struct starpu_sched_component_composed_recipe *r;
    switch (g_kind) {
    case EAGER:
        top = starpu_sched_component_fifo_create(t, NULL);
        decision = starpu_sched_component_eager_create(t, NULL);
        starpu_sched_component_connect(top, decision);
        workers_under(t, decision, 2, ctx);
        break;
    case RANDOM:
        top = decision = starpu_sched_component_random_create(t, NULL);
        workers_under(t, decision, 0, ctx);
        break;
    case HEFT:
        top = decision = starpu_sched_component_heft_create(t, NULL);
        workers_under(t, decision, 4, ctx);
        break;
    case MCT:
        top = starpu_sched_component_prio_create(t, NULL);
        decision = starpu_sched_component_mct_create(t, NULL);
        starpu_sched_component_connect(top, decision);
        workers_under(t, decision, 2, ctx);
        break;
    case WS:
        top = decision = starpu_sched_component_work_stealing_create(t, NULL);
        workers_under(t, decision, -1, ctx);
        break;
    case EAGER_WS:
        top = starpu_sched_component_eager_create(t, NULL);
        g_ws = decision = starpu_sched_component_work_stealing_create(t, NULL);
        starpu_sched_component_connect(top, decision);
        workers_under(t, decision, -1, ctx);
        break;
    case C_HEFT:
        r = starpu_sched_component_composed_recipe_create_singleton(make_heft, NULL);
        top = decision = starpu_sched_component_composed_component_create(t, r);
        starpu_sched_component_composed_recipe_destroy(r);
        g_single_ok = starpu_sched_component_is_heft(top);
        workers_under(t, decision, 4, ctx);
        break;
    case C_EAGER:
        top = decision = composed(t, make_fifo, make_eager);
        workers_under(t, decision, 2, ctx);
        break;
    case C_MCT:
        top = decision = composed(t, make_prio, make_mct);
        workers_under(t, decision, 2, ctx);
        break;
    default:
        top = decision = composed(t, make_fifo, make_ws);
        workers_under(t, decision, -1, ctx);
        break;
    }
    t->root = top;
    starpu_sched_tree_update_workers(t);
    starpu_sched_ctx_set_policy_data(ctx, t);
}

static void deinit_tree(unsigned ctx) {
    starpu_sched_tree_destroy((struct starpu_sched_tree *)starpu_sched_ctx_get_policy_data(ctx));
}

static void pre_exec(struct starpu_task *task, unsigned ctx) {
    __atomic_add_fetch(&g_pre, 1, __ATOMIC_RELAXED);
    starpu_sched_component_worker_pre_exec_hook(task, ctx);
}

static struct starpu_sched_policy tree_policy = {
    .init_sched = init_tree,
    .deinit_sched = deinit_tree,
    .add_workers = starpu_sched_tree_add_workers,
    .remove_workers = starpu_sched_tree_remove_workers,
    .push_task = starpu_sched_tree_push_task,
    .pop_task = starpu_sched_tree_pop_task,
    .pre_exec_hook = pre_exec,
    .post_exec_hook = starpu_sched_component_worker_post_exec_hook,
    .policy_name = "app-tree",
    .policy_description = "a tree built by the application",
    .worker_type = STARPU_WORKER_LIST,
};

static void update(void *buffers[], void *arg) {
    double *dst = (double *)STARPU_VARIABLE_GET_PTR(buffers[0]);
    const double *src = (const double *)STARPU_VARIABLE_GET_PTR(buffers[1]);
    (void)arg;
    *dst = *dst * 0.5 + *src + 1.0;
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}

static void busy(void *buffers[], void *arg) {
    double t0 = starpu_timing_now();
    int w = starpu_worker_get_id();
    (void)buffers;
    (void)arg;
    while (starpu_timing_now() - t0 < 20.0) {
    }
    if (w >= 0 && w < STARPU_NMAXWORKERS) {
        __atomic_add_fetch(&g_on[w], 1, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}

/* A spawned task: counts itself, then waits until every worker has run a spawned task. */
static void spawned(void *buffers[], void *arg) {
    double t0 = starpu_timing_now();
    unsigned nw = starpu_worker_get_count(), k, all = 0;
    int w = starpu_worker_get_id();
    (void)buffers;
    (void)arg;
    if (w >= 0 && w < STARPU_NMAXWORKERS) {
        __atomic_add_fetch(&g_spawn_on[w], 1, __ATOMIC_RELAXED);
    }
    while (!all) {
        all = 1;
        for (k = 0; k < nw; k++) {
            all &= __atomic_load_n(&g_spawn_on[k], __ATOMIC_RELAXED) > 0;
        }
        if (!all && starpu_timing_now() - t0 > 20e6) {
            __atomic_add_fetch(&g_spawn_late, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}
static struct starpu_codelet spawned_cl = {.cpu_funcs = {spawned}, .nbuffers = 0, .name = "spawned"};

/* Inserts the NSPAWN spawned tasks from the worker running it. */
static void spawner(void *buffers[], void *arg) {
    int i;
    (void)buffers;
    (void)arg;
    for (i = 0; i < NSPAWN; i++) {
        if (starpu_task_insert(&spawned_cl, 0) != 0) {
            fprintf(stderr, "sched_tree: starpu_task_insert from a task failed\n");
            exit(1);
        }
    }
    /* The fifo above the work_stealing component counts its own tasks plus the load below it:
     * the spawned tasks must have gone into the deque, not through the fifo (the root). */
    if (g_kind == C_WS) {
        g_spawn_queued = g_chain_fifo->estimated_load(g_chain_fifo) - g_chain_ws->estimated_load(g_chain_ws);
    }
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}
static struct starpu_codelet spawner_cl = {.cpu_funcs = {spawner}, .nbuffers = 0, .name = "spawner"};

/* eager-ws: spins (at most 20 s) until *flag reaches `want`. */
static void wait_for(int *flag, int want) {
    double t0 = starpu_timing_now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
        if (starpu_timing_now() - t0 > 20e6) {
            __atomic_add_fetch(&g_hold_late, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

/* eager-ws: keeps its worker busy until the placed tasks are in. */
static void holder(void *buffers[], void *arg) {
    (void)buffers;
    (void)arg;
    __atomic_add_fetch(&g_holding, 1, __ATOMIC_RELEASE);
    wait_for(&g_release, 1);
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}
static struct starpu_codelet holder_cl = {.cpu_funcs = {holder}, .nbuffers = 0, .name = "holder"};

/* eager-ws: a placed task (its index in cl_arg): the first one of its worker is recorded; 2 ms
 * long, so that no worker's own deque empties before every worker is back. */
static void placed(void *buffers[], void *arg) {
    double t0 = starpu_timing_now();
    int i, w = starpu_worker_get_id(), none = -1;
    (void)buffers;
    starpu_codelet_unpack_args(arg, &i);
    if (w >= 0 && w < STARPU_NMAXWORKERS) {
        __atomic_compare_exchange_n(&g_first[w], &none, i, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    while (starpu_timing_now() - t0 < 2000.0) {
    }
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}
static struct starpu_codelet placed_cl = {.cpu_funcs = {placed}, .nbuffers = 0, .name = "placed"};

/* eager-ws: on worker 0 while the others hold: inserts NPLACE tasks per worker through the
 * tree (eager's push into the work_stealing component), reads its load, releases the others. */
static void placer(void *buffers[], void *arg) {
    int i, n = (int)starpu_worker_get_count() * NPLACE;
    (void)buffers;
    (void)arg;
    wait_for(&g_holding, (int)starpu_worker_get_count() - 1);
    for (i = 0; i < n; i++) {
        if (starpu_task_insert(&placed_cl, STARPU_VALUE, &i, sizeof(i), 0) != 0) {
            fprintf(stderr, "sched_tree: starpu_task_insert from a task failed\n");
            exit(1);
        }
    }
    g_placed_load = g_ws->estimated_load(g_ws);
    __atomic_store_n(&g_release, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&g_ran, 1, __ATOMIC_RELAXED);
}
static struct starpu_codelet placer_cl = {.cpu_funcs = {placer}, .nbuffers = 0, .name = "placer"};

/* eager-ws: the placement run; 0 or fail()'s 1. */
static int fail(const char *what);
static int run_placement(unsigned nw) {
    unsigned w;
    g_holding = g_release = 0;
    for (w = 0; w < STARPU_NMAXWORKERS; w++) {
        g_first[w] = -1;
    }
    for (w = 1; w < nw; w++) {
        if (starpu_task_insert(&holder_cl, STARPU_EXECUTE_ON_WORKER, (int)w, 0) != 0) {
            return fail("starpu_task_insert failed");
        }
    }
    if (starpu_task_insert(&placer_cl, STARPU_EXECUTE_ON_WORKER, 0, 0) != 0) {
        return fail("starpu_task_insert failed");
    }
    starpu_task_wait_for_all();
    if (g_hold_late != 0) {
        return fail("a holder or the placer waited 20 s");
    }
    if (g_placed_load < NPLACE - 0.01 || g_placed_load > NPLACE + 0.01) {
        fprintf(stderr, "sched_tree: eager-ws tree: the work_stealing component's estimated_load is %g with %d tasks "
                        "per worker in its deques\n", g_placed_load, NPLACE);
        return 1;
    }
    for (w = 0; w < nw; w++) {
        if (g_first[w] < (int)(nw * NPLACE - nw)) {
            fprintf(stderr, "sched_tree: eager-ws tree: worker %u ran placed task %d of %u first (not one of the last "
                            "%u inserted: the push did not go round-robin over the deques)\n",
                    w, g_first[w], nw * NPLACE, nw);
            return 1;
        }
    }
    return 0;
}

static struct starpu_codelet update_cl = {
    .cpu_funcs = {update}, .nbuffers = 2, .modes = {STARPU_RW, STARPU_R}, .name = "update"};
static struct starpu_codelet busy_cl = {.cpu_funcs = {busy}, .nbuffers = 0, .name = "busy"};

static int fail(const char *what) {
    fprintf(stderr, "sched_tree: %s tree: %s\n", kind_name[g_kind], what);
    return 1;
}

static int run_kind(int kind) {
    struct starpu_conf conf;
    double x[NH], ref[NH];
    starpu_data_handle_t h[NH];
    unsigned seed = 12345u, i, w, nw;
    int with_work = 0, ws = kind == WS || kind == C_WS, expect;
    g_kind = kind;
    g_pre = g_ran = g_spawn_late = 0;
    g_spawn_queued = 0;
    g_chain_fifo = g_chain_ws = g_ws = NULL;
    g_hold_late = 0;
    for (i = 0; i < STARPU_NMAXWORKERS; i++) {
        g_on[i] = g_spawn_on[i] = 0;
    }
    starpu_conf_init(&conf);
    tree_policy.push_task = ws ? starpu_sched_tree_work_stealing_push_task : starpu_sched_tree_push_task;
    conf.sched_policy = &tree_policy;
    if (starpu_init(&conf) != 0) {
        return fail("starpu_init failed");
    }
    nw = starpu_worker_get_count();
    for (i = 0; i < NH; i++) {
        x[i] = ref[i] = (double)i;
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&x[i], sizeof(double));
    }
    for (i = 0; i < NDEP; i++) {
        unsigned d, s;
        seed = seed * 1103515245u + 12345u;
        d = (seed >> 16) % NH;
        s = (d + 1 + (seed >> 8) % (NH - 1)) % NH;
        ref[d] = ref[d] * 0.5 + ref[s] + 1.0;
        if (starpu_task_insert(&update_cl, STARPU_RW, h[d], STARPU_R, h[s], STARPU_PRIORITY, (int)(i % 3), 0) != 0) {
            return fail("starpu_task_insert failed");
        }
    }
    for (i = 0; i < NIND; i++) {
        if (starpu_task_insert(&busy_cl, 0) != 0) {
            return fail("starpu_task_insert failed");
        }
    }
    starpu_task_wait_for_all();
    if (ws) {
        if (starpu_task_insert(&spawner_cl, 0) != 0) {
            return fail("starpu_task_insert failed");
        }
        starpu_task_wait_for_all();
    }
    if (kind == EAGER_WS && run_placement(nw) != 0) {
        return 1;
    }
    for (i = 0; i < NH; i++) {
        starpu_data_unregister(h[i]);
        if (x[i] != ref[i]) {
            return fail("a variable differs from the sequential replay");
        }
    }
    expect = NDEP + NIND + (ws ? 1 + NSPAWN : 0) + (kind == EAGER_WS ? (int)nw * (NPLACE + 1) : 0);
    if (g_ran != expect || g_pre != expect) {
        fprintf(stderr, "sched_tree: %s tree: %d kernels, %d pre_exec_hook calls for %d tasks\n", kind_name[kind],
                g_ran, g_pre, expect);
        return 1;
    }
    if (g_spawn_late != 0) {
        return fail("a worker ran none of the tasks inserted by a task (nothing stolen from that worker's deque)");
    }
    if (g_spawn_queued > 0.5) {
        return fail("tasks inserted by a task went through the fifo above work_stealing, not into the worker's deque");
    }
    for (w = 0; w < nw; w++) {
        struct starpu_sched_component *c = starpu_sched_component_worker_get(0, (int)w);
        if (c->estimated_load(c) != 0.0) {
            return fail("a worker component still counts tasks");
        }
        with_work += g_on[w] > 0;
    }
    if (kind == RANDOM && with_work != (int)nw) {
        return fail("a worker got none of the independent tasks");
    }
    if (kind == C_HEFT && !g_single_ok) {
        return fail("a recipe of one pair did not give that component itself");
    }
    starpu_shutdown();
    return 0;
}

int main(void) {
    int k;
    unsigned nw = 0;
    const char *no_composed = getenv("SCHED_TREE_NO_COMPOSED");
    for (k = 0; k < NKINDS; k++) {
        if (k > C_HEFT && no_composed != NULL && no_composed[0] == '1') {
            continue;
        }
        if (run_kind(k) != 0) {
            return 1;
        }
    }
    {
        struct starpu_conf conf;
        starpu_conf_init(&conf);
        if (starpu_init(&conf) == 0) {
            nw = starpu_worker_get_count();
            starpu_shutdown();
        }
    }
    printf("sched_tree: eager, random, heft, mct, ws and eager-ws trees, and composed ones%s, on %u workers (%d tasks each): OK\n",
           no_composed != NULL && no_composed[0] == '1' ? " (one-pair recipe only)" : "", nw, NDEP + NIND);
    return 0;
}
