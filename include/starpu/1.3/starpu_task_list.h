/* StarPU 1.3 API on MPC: doubly linked lists of tasks through starpu_task::prev and ::next, for
 * scheduling policies (struct starpu_sched_policy) that keep their own queues. The front is
 * the head; starpu_task_list_begin/next walk from the front to the back. A task is in at most
 * one list at a time. */
#ifndef MPC_STARPU_TASK_LIST_H
#define MPC_STARPU_TASK_LIST_H

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;

struct starpu_task_list {
    struct starpu_task *head;
    struct starpu_task *tail;
};

void starpu_task_list_init(struct starpu_task_list *list);
void starpu_task_list_push_front(struct starpu_task_list *list, struct starpu_task *task);
void starpu_task_list_push_back(struct starpu_task_list *list, struct starpu_task *task);
/** The front (back) task, or NULL when the list is empty; the task stays in the list. */
struct starpu_task *starpu_task_list_front(const struct starpu_task_list *list);
struct starpu_task *starpu_task_list_back(const struct starpu_task_list *list);
int starpu_task_list_empty(const struct starpu_task_list *list);
/** Removes task, which must be in list. */
void starpu_task_list_erase(struct starpu_task_list *list, struct starpu_task *task);
/** Removes and returns the front (back) task, or NULL when the list is empty. */
struct starpu_task *starpu_task_list_pop_front(struct starpu_task_list *list);
struct starpu_task *starpu_task_list_pop_back(struct starpu_task_list *list);
/** Iteration: for (t = starpu_task_list_begin(l); t != starpu_task_list_end(l); t = starpu_task_list_next(t)). */
struct starpu_task *starpu_task_list_begin(const struct starpu_task_list *list);
struct starpu_task *starpu_task_list_end(const struct starpu_task_list *list);
struct starpu_task *starpu_task_list_next(const struct starpu_task *task);
int starpu_task_list_ismember(const struct starpu_task_list *list, const struct starpu_task *look);
/** Moves every task of lsrc to ldst (whose contents are dropped) and empties lsrc. */
void starpu_task_list_move(struct starpu_task_list *ldst, struct starpu_task_list *lsrc);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_LIST_H */
