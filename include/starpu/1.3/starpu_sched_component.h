/* StarPU 1.3 API on MPC: modular schedulers built by the application (StarPU's
 * starpu_sched_component.h; names, struct layouts and flags as in StarPU 1.3.10).
 *
 * A scheduler is a tree of components: ready tasks enter at the root through push_task and go
 * down, workers take them through pull_task at their worker component (a leaf) going up. The
 * tree is installed as a struct starpu_sched_policy whose methods are the starpu_sched_tree_*
 * functions below (and starpu_sched_component_worker_pre/post_exec_hook), with the tree as the
 * context's policy data. docs/taskgraph.md says how this maps onto MPC's runtime: a task pushed
 * into a worker component goes to that worker's own queue in the runtime, which the worker
 * serves before calling pop_task.
 *
 * Not provided (a program using them does not compile or link): combined and parallel workers,
 * the heteroprio component, starpu_sched_component_make_scheduler and struct
 * starpu_sched_component_specs (schedulers built from the hwloc topology),
 * starpu_initialize_prio_center_policy.
 * Misuse that StarPU asserts on (a NULL component, an edge added twice, a tree whose root
 * refuses a task or reaches no worker) is reported with a message naming the call. */
#ifndef MPC_STARPU_SCHED_COMPONENT_H
#define MPC_STARPU_SCHED_COMPONENT_H

#include <hwloc.h>

#include "starpu.h"
#include "starpu_bitmap.h"
#include "starpu_thread.h"
#include "starpu_thread_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flags of starpu_sched_component::properties (set by starpu_sched_tree_update_workers_in_ctx:
 * with CPUs only, every component is both). */
enum starpu_sched_component_properties {
    STARPU_SCHED_COMPONENT_HOMOGENEOUS = (1 << 0),
    STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE = (1 << 1)
};

#define STARPU_SCHED_COMPONENT_IS_HOMOGENEOUS(component) ((component)->properties & STARPU_SCHED_COMPONENT_HOMOGENEOUS)
#define STARPU_SCHED_COMPONENT_IS_SINGLE_MEMORY_NODE(component) \
    ((component)->properties & STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE)

struct starpu_sched_tree;

/** A component. Its methods are called as component->push_task(component, task):
 * - push_task: take a task from above: store it or pass it to a child; 0 when taken, non-zero
 *   when refused (a full queue), the caller then keeps it.
 * - pull_task(component, to): a task for child `to` (stored here, or pulled from the parents),
 *   or NULL.
 * - can_push(component, to): child `to` has room again: push held tasks down; non-zero when
 *   some task went down. The default asks the parents.
 * - can_pull(component): tasks arrived above: the children may pull (a worker component wakes
 *   its worker). The default asks the children until one answers non-zero.
 * - estimated_load: tasks below, divided by the workers' relative speed; estimated_end: the
 *   time (µs, starpu_timing_now()) at which the workers below would be idle.
 * - notify: not called by MPC. */
struct starpu_sched_component {
    struct starpu_sched_tree *tree;
    /** Workers below the component (starpu_sched_tree_update_workers). */
    struct starpu_bitmap *workers;
    /** Those of them in the context (starpu_sched_tree_update_workers_in_ctx). */
    struct starpu_bitmap *workers_in_ctx;
    void *data;
    char *name;
    unsigned nchildren;
    struct starpu_sched_component **children;
    unsigned nparents;
    struct starpu_sched_component **parents;
    void (*add_child)(struct starpu_sched_component *component, struct starpu_sched_component *child);
    void (*remove_child)(struct starpu_sched_component *component, struct starpu_sched_component *child);
    void (*add_parent)(struct starpu_sched_component *component, struct starpu_sched_component *parent);
    void (*remove_parent)(struct starpu_sched_component *component, struct starpu_sched_component *parent);
    int (*push_task)(struct starpu_sched_component *, struct starpu_task *);
    struct starpu_task *(*pull_task)(struct starpu_sched_component *from, struct starpu_sched_component *to);
    int (*can_push)(struct starpu_sched_component *from, struct starpu_sched_component *to);
    int (*can_pull)(struct starpu_sched_component *component);
    int (*notify)(struct starpu_sched_component *component, int message_ID, void *arg);
    double (*estimated_load)(struct starpu_sched_component *component);
    double (*estimated_end)(struct starpu_sched_component *component);
    /** Called by starpu_sched_component_destroy: frees data. */
    void (*deinit_data)(struct starpu_sched_component *component);
    /** Called when the workers below change (starpu_sched_tree_update_workers*). */
    void (*notify_change_workers)(struct starpu_sched_component *component);
    int properties;
    /** The part of the machine the component stands for (NULL: not said; the built-in
     * policies' components do not set it). */
    hwloc_obj_t obj;
};

/** A tree: its root and the context's workers. */
struct starpu_sched_tree {
    struct starpu_sched_component *root;
    struct starpu_bitmap *workers;
    unsigned sched_ctx_id;
    starpu_pthread_mutex_t lock;
};

/* ---- trees -------------------------------------------------------------------------------- */

/** An empty tree for the context (one per context: a second is refused, NULL). */
struct starpu_sched_tree *starpu_sched_tree_create(unsigned sched_ctx_id) STARPU_ATTRIBUTE_MALLOC;
/** Destroys the tree, its components (starpu_sched_component_destroy_rec from the root) and the
 * context's worker components. */
void starpu_sched_tree_destroy(struct starpu_sched_tree *tree);
/** Destroys the context's tree (its policy data): ready for starpu_sched_policy::deinit_sched. */
void starpu_sched_tree_deinitialize(unsigned sched_ctx_id);
/** The context's tree, or NULL. */
struct starpu_sched_tree *starpu_sched_tree_get(unsigned sched_ctx_id);
/** Sets every component's workers from its children, bottom up. A component other than a
 * worker without children is reported (tasks given to it could never reach a worker). */
void starpu_sched_tree_update_workers(struct starpu_sched_tree *t);
/** Sets every component's workers_in_ctx (its workers that are in the tree's). */
void starpu_sched_tree_update_workers_in_ctx(struct starpu_sched_tree *t);
/** starpu_sched_policy::push_task: pushes the task at the context's root. A root that refuses
 * the task, or a tree reaching no worker, is reported and the task returned refused (MPC's
 * runtime then runs it anyway: StarPU asserts). */
int starpu_sched_tree_push_task(struct starpu_task *task);
/** starpu_sched_policy::pop_task: pulls from the calling worker's component. */
struct starpu_task *starpu_sched_tree_pop_task(unsigned sched_ctx);
/** starpu_sched_policy::add_workers / remove_workers: the tree's workers, then
 * starpu_sched_tree_update_workers_in_ctx. Workers the tree's leaves do not reach are reported. */
void starpu_sched_tree_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);
void starpu_sched_tree_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

/** to->push_task(to, task). */
int starpu_sched_component_push_task(struct starpu_sched_component *from, struct starpu_sched_component *to,
                                     struct starpu_task *task);
/** from->pull_task(from, to). */
struct starpu_task *starpu_sched_component_pull_task(struct starpu_sched_component *from,
                                                     struct starpu_sched_component *to);
/** Pulls tasks from component and pushes them into `to` until one is refused (returned, for
 * the caller to keep) or none is left (NULL); *success is set to 1 when one went down. */
struct starpu_task *starpu_sched_component_pump_to(struct starpu_sched_component *component,
                                                   struct starpu_sched_component *to, int *success);
/** starpu_sched_component_pump_to the only child. */
struct starpu_task *starpu_sched_component_pump_downstream(struct starpu_sched_component *component, int *success);
/** Calls each parent's can_push until one answers non-zero; returns 1 then, else 0. */
int starpu_sched_component_send_can_push_to_parents(struct starpu_sched_component *component);
/** Makes child a child of parent and parent a parent of child (each edge once: a second
 * connection of the same pair is reported and ignored). */
void starpu_sched_component_connect(struct starpu_sched_component *parent, struct starpu_sched_component *child);

/* ---- generic components ------------------------------------------------------------------- */

typedef struct starpu_sched_component *(*starpu_sched_component_create_t)(struct starpu_sched_tree *tree, void *data);

/** A component with the default methods (pull from the parents, can_push to the parents, can_pull
 * to the children, load and end from the children) and no push_task (the caller sets it). */
struct starpu_sched_component *starpu_sched_component_create(struct starpu_sched_tree *tree,
                                                             const char *name) STARPU_ATTRIBUTE_MALLOC;
/** Unlinks the component from its parents and children, calls deinit_data and frees it. */
void starpu_sched_component_destroy(struct starpu_sched_component *component);
/** Destroys the component and every component below it, worker components excepted. */
void starpu_sched_component_destroy_rec(struct starpu_sched_component *component);
void starpu_sched_component_add_child(struct starpu_sched_component *component, struct starpu_sched_component *child);
/** Whether a worker below the component (in the context) can run the task. */
int starpu_sched_component_can_execute_task(struct starpu_sched_component *component, struct starpu_task *task);
/** Whether a worker below can run the task; *length: the shortest expected duration among
 * them (µs; NAN when a model is not calibrated, 0 without a model). */
int STARPU_WARN_UNUSED_RESULT starpu_sched_component_execute_preds(struct starpu_sched_component *component,
                                                                   struct starpu_task *task, double *length);
/** The average time to bring the task's data to the workers below: 0 (main memory only). */
double starpu_sched_component_transfer_length(struct starpu_sched_component *component, struct starpu_task *task);
/** Nothing to prefetch (main memory only): marks the task prefetched. */
void starpu_sched_component_prefetch_on_node(struct starpu_sched_component *component, struct starpu_task *task);

/* ---- worker components -------------------------------------------------------------------- */

/** The component of worker workerid in the context, made on first call (NULL, reported, for a bad
 * worker id). */
struct starpu_sched_component *starpu_sched_component_worker_get(unsigned sched_ctx, int workerid);
struct starpu_sched_component *starpu_sched_component_worker_new(unsigned sched_ctx, int workerid);
/** The worker id of a worker component (-1, reported, for another component). */
int starpu_sched_component_worker_get_workerid(struct starpu_sched_component *worker_component);
int starpu_sched_component_is_worker(struct starpu_sched_component *component);
int starpu_sched_component_is_simple_worker(struct starpu_sched_component *component);
/** 0: no combined workers. */
int starpu_sched_component_is_combined_worker(struct starpu_sched_component *component);
/** starpu_sched_policy::pre_exec_hook / post_exec_hook: keep the worker components' expected
 * ends up to date. */
void starpu_sched_component_worker_pre_exec_hook(struct starpu_task *task, unsigned sched_ctx_id);
void starpu_sched_component_worker_post_exec_hook(struct starpu_task *task, unsigned sched_ctx_id);

/* ---- default methods ---------------------------------------------------------------------- */

struct starpu_task *starpu_sched_component_parents_pull_task(struct starpu_sched_component *component,
                                                             struct starpu_sched_component *to);
int starpu_sched_component_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to);
int starpu_sched_component_can_pull(struct starpu_sched_component *component);
/** can_pull of every child. Returns 0. */
int starpu_sched_component_can_pull_all(struct starpu_sched_component *component);
double starpu_sched_component_estimated_load(struct starpu_sched_component *component);
double starpu_sched_component_estimated_end_min(struct starpu_sched_component *component);
/** The children's earliest end, plus exp_len (and the children's imbalance) spread over the
 * workers below. */
double starpu_sched_component_estimated_end_min_add(struct starpu_sched_component *component, double exp_len);
double starpu_sched_component_estimated_end_average(struct starpu_sched_component *component);

/* ---- queues ------------------------------------------------------------------------------- */

/** Bounds of a fifo or prio component: at most ntasks_threshold tasks and exp_len_threshold µs of
 * predicted work (0: no bound; an empty queue takes a task longer than exp_len_threshold, where
 * StarPU would refuse it for ever); `ready` is accepted (every task's data is always ready here). */
struct starpu_sched_component_fifo_data {
    unsigned ntasks_threshold;
    double exp_len_threshold;
    int ready;
};

/** A queue (priority order, first in first out among equals, as StarPU's fifo component sorts by
 * priority): push stores the task (refused beyond a bound) and calls can_pull; pull gives the
 * next task (or NULL, after asking the parents to push more with can_push); can_push pumps the
 * queue into the child. params may be NULL. */
struct starpu_sched_component *starpu_sched_component_fifo_create(struct starpu_sched_tree *tree,
                                                                  struct starpu_sched_component_fifo_data *fifo_data)
    STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_fifo(struct starpu_sched_component *component);

struct starpu_sched_component_prio_data {
    unsigned ntasks_threshold;
    double exp_len_threshold;
    int ready;
};

/** A priority queue (highest first), otherwise as the fifo component. */
struct starpu_sched_component *starpu_sched_component_prio_create(struct starpu_sched_tree *tree,
                                                                  struct starpu_sched_component_prio_data *prio_data)
    STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_prio(struct starpu_sched_component *component);

/* ---- decisions ---------------------------------------------------------------------------- */

/** Work stealing: one deque per child; a task pushed by a worker goes to that worker's child's
 * deque, the program's go round-robin; a child pulls its own deque's newest task, else steals
 * the oldest of another. arg is unused. */
struct starpu_sched_component *starpu_sched_component_work_stealing_create(struct starpu_sched_tree *tree,
                                                                           void *arg) STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_work_stealing(struct starpu_sched_component *component);
/** Pushes the task into the context's first work-stealing component (breadth first from the
 * root; reported and pushed at the root when there is none). */
int starpu_sched_tree_work_stealing_push_task(struct starpu_task *task);

/** A child drawn at random in proportion to the workers below it; the task is pushed there. */
struct starpu_sched_component *starpu_sched_component_random_create(struct starpu_sched_tree *tree,
                                                                    void *arg) STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_random(struct starpu_sched_component *);

/** The first child that takes the task (a worker child is woken to pull instead, and the task
 * refused: keep a queue above). can_push from a child pushes there first. */
struct starpu_sched_component *starpu_sched_component_eager_create(struct starpu_sched_tree *tree,
                                                                   void *arg) STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_eager(struct starpu_sched_component *);

/** Eager with its own priority queue: tasks wait here until a child takes them. */
struct starpu_sched_component *starpu_sched_component_eager_prio_create(struct starpu_sched_tree *tree,
                                                                        void *arg) STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_eager_prio(struct starpu_sched_component *);

/** Takes only tasks whose model needs calibration on some child's workers, and gives each to the
 * child, among those, that is idle first; refuses the others. */
struct starpu_sched_component *starpu_sched_component_eager_calibration_create(struct starpu_sched_tree *tree,
                                                                               void *arg) STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_eager_calibration(struct starpu_sched_component *);

/** Weights of the MCT and HEFT choices: alpha (expected end), beta (transfer), _gamma and
 * idle_power (energy: accepted, no energy is measured). NULL: STARPU_SCHED_ALPHA/BETA or 1. */
struct starpu_sched_component_mct_data {
    double alpha;
    double beta;
    double _gamma;
    double idle_power;
};

/** Minimum completion time: the child with the smallest alpha * (estimated_end + length) + beta *
 * transfer; an uncalibrated model sends the task to the child that is idle first among those
 * where it is uncalibrated. Sets task->predicted and predicted_transfer. Refuses the task when
 * the chosen child does. */
struct starpu_sched_component *starpu_sched_component_mct_create(struct starpu_sched_tree *tree,
                                                                 struct starpu_sched_component_mct_data *mct_data)
    STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_mct(struct starpu_sched_component *component);

/** MCT with a priority queue of its own: a task the chosen child refuses waits here (highest
 * priority first) until a child has room (can_push). */
struct starpu_sched_component *starpu_sched_component_heft_create(struct starpu_sched_tree *tree,
                                                                  struct starpu_sched_component_mct_data *mct_data)
    STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_heft(struct starpu_sched_component *component);

/** Above a worker: chooses the implementation (the first CPU one) and sets task->predicted, then
 * pushes to its child. */
struct starpu_sched_component *starpu_sched_component_best_implementation_create(struct starpu_sched_tree *tree,
                                                                                 void *arg) STARPU_ATTRIBUTE_MALLOC;

/** Sends a task without a model (or a model answering 0) to no_perfmodel_component, one whose model
 * is uncalibrated to calibrator_component, the others to perfmodel_component. The three must be
 * connected as its children. */
struct starpu_sched_component_perfmodel_select_data {
    struct starpu_sched_component *calibrator_component;
    struct starpu_sched_component *no_perfmodel_component;
    struct starpu_sched_component *perfmodel_component;
};
struct starpu_sched_component *starpu_sched_component_perfmodel_select_create(
    struct starpu_sched_tree *tree, struct starpu_sched_component_perfmodel_select_data *perfmodel_select_data)
    STARPU_ATTRIBUTE_MALLOC;
int starpu_sched_component_is_perfmodel_select(struct starpu_sched_component *component);

/* ---- simple schedulers -------------------------------------------------------------------- */

#define STARPU_SCHED_SIMPLE_DECIDE_MASK (3 << 0)
/** One branch below the decision per worker. */
#define STARPU_SCHED_SIMPLE_DECIDE_WORKERS (1 << 0)
/** One branch per memory node (one here: main memory). */
#define STARPU_SCHED_SIMPLE_DECIDE_MEMNODES (2 << 0)
/** One branch per kind of worker (one here: CPUs). */
#define STARPU_SCHED_SIMPLE_DECIDE_ARCHS (3 << 0)
/** Make the decision component even with one branch (else an eager one stands for it). */
#define STARPU_SCHED_SIMPLE_DECIDE_ALWAYS (1 << 3)
/** A perfmodel_select above the decision (eager_calibration and eager beside it). */
#define STARPU_SCHED_SIMPLE_PERFMODEL (1 << 4)
/** A best_implementation component above each worker. */
#define STARPU_SCHED_SIMPLE_IMPL (1 << 5)
/** A fifo above the decision (a prio one with FIFO_ABOVE_PRIO). */
#define STARPU_SCHED_SIMPLE_FIFO_ABOVE (1 << 6)
#define STARPU_SCHED_SIMPLE_FIFO_ABOVE_PRIO (1 << 7)
/** A fifo per branch below the decision (prio ones with FIFOS_BELOW_PRIO; bounded by
 * STARPU_NTASKS_THRESHOLD tasks, default 30 under mct/heft, else 2, and STARPU_EXP_LEN_THRESHOLD). */
#define STARPU_SCHED_SIMPLE_FIFOS_BELOW (1 << 8)
#define STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO (1 << 9)
#define STARPU_SCHED_SIMPLE_FIFOS_BELOW_READY (1 << 10)
/** Work stealing (instead of eager) between the workers of one branch. */
#define STARPU_SCHED_SIMPLE_WS_BELOW (1 << 11)
/** Not supported (no combined workers): reported and ignored. */
#define STARPU_SCHED_SIMPLE_COMBINED_WORKERS (1 << 12)
#define STARPU_SCHED_SIMPLE_PRE_DECISION (1 << 14)

/** Builds the context's tree around a decision component made by create_decision_component(tree,
 * data), as `flags` say, and sets it as the context's policy data: fifo above, perfmodel select,
 * the decision, fifos below, a distributing component per branch with several workers,
 * best_implementation, the worker components. */
void starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_create_t create_decision_component,
                                                        void *data, unsigned flags, unsigned sched_ctx_id);
/** The same with ndecisions decisions, given as ndecisions triples (create, data, flags) with the
 * same STARPU_SCHED_SIMPLE_DECIDE_* choice: a userchoice component at the root sends each task
 * to decision number (uintptr_t)task->sched_data, each decision gets its own branches, and a
 * stage component above each worker (or group of workers) lets it pull from every decision's
 * branch. STARPU_SCHED_SIMPLE_PERFMODEL is not supported with several decisions (as in StarPU;
 * reported and ignored), and IMPL follows the last decision's flags, as in StarPU. */
void starpu_sched_component_initialize_simple_schedulers(unsigned sched_ctx_id, unsigned ndecisions, ...);

/** A component above a worker (or group) with several parents, pulled from in their order; a task
 * pushed into it goes to its only child. */
struct starpu_sched_component *starpu_sched_component_stage_create(struct starpu_sched_tree *tree, void *arg);
int starpu_sched_component_is_stage(struct starpu_sched_component *component);
/** A component that pushes each task to its child number (uintptr_t)task->sched_data (an index
 * out of range stops the program with a message). */
struct starpu_sched_component *starpu_sched_component_userchoice_create(struct starpu_sched_tree *tree, void *arg);
int starpu_sched_component_is_userchoice(struct starpu_sched_component *component);

/* ---- composed components (recipes) ------------------------------------------------------- */

/** A list of (create, arg) pairs from which starpu_sched_component_composed_component_create
 * builds a chain of components, each under the previous one. */
struct starpu_sched_component_composed_recipe;

/** An empty recipe (to fill with starpu_sched_component_composed_recipe_add). */
struct starpu_sched_component_composed_recipe *starpu_sched_component_composed_recipe_create(void)
    STARPU_ATTRIBUTE_MALLOC;
/** A recipe of one component: create_component(tree, arg). */
struct starpu_sched_component_composed_recipe *starpu_sched_component_composed_recipe_create_singleton(
    struct starpu_sched_component *(*create_component)(struct starpu_sched_tree *tree, void *arg), void *arg)
    STARPU_ATTRIBUTE_MALLOC;
/** Adds create_component(tree, arg) under all the previous components of the recipe. */
void starpu_sched_component_composed_recipe_add(struct starpu_sched_component_composed_recipe *recipe,
                                                struct starpu_sched_component *(*create_component)(
                                                    struct starpu_sched_tree *tree, void *arg),
                                                void *arg);
/** Frees the recipe (the components made from it are not affected). NULL: nothing. */
void starpu_sched_component_composed_recipe_destroy(struct starpu_sched_component_composed_recipe *recipe);
/** A component that behaves as the recipe's components linked each under the previous one: a
 * task pushed into it enters the first, the last pushes to the composed component's children, a
 * child pulling from it pulls from the last (which pulls up the chain) and then from the
 * composed component's parents. Its estimated load and end are the first's; the workers it
 * reaches are given to every component of the chain; destroying it destroys the chain. With one
 * pair in the recipe, that component itself is returned. As in StarPU, the
 * starpu_sched_component_is_* tests do not see through a composed component. An empty recipe,
 * a create function returning NULL, or a worker component at the end of the chain stops the
 * program with a message (StarPU asserts). (StarPU 1.3.10's own composed component recurses
 * without end when a child is connected to it; this one does not.)
 * starpu_sched_component_make_scheduler and struct starpu_sched_component_specs are declared
 * by StarPU only when built with hwloc (STARPU_HAVE_HWLOC), which this starpu_config.h does not
 * define. */
struct starpu_sched_component *starpu_sched_component_composed_component_create(
    struct starpu_sched_tree *tree, struct starpu_sched_component_composed_recipe *recipe) STARPU_ATTRIBUTE_MALLOC;

/** A component's lock, taken while the worker counts as relaxed (nothing to relax here). */
#define STARPU_COMPONENT_MUTEX_LOCK(m) STARPU_PTHREAD_MUTEX_LOCK((m))
#define STARPU_COMPONENT_MUTEX_TRYLOCK(m) STARPU_PTHREAD_MUTEX_TRYLOCK((m))
#define STARPU_COMPONENT_MUTEX_UNLOCK(m) STARPU_PTHREAD_MUTEX_UNLOCK((m))

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_SCHED_COMPONENT_H */
