/* StarPU 1.3 API on MPC: sets of worker ids (struct starpu_bitmap is opaque, as in StarPU),
 * used by scheduling components (starpu_sched_component.h) for the workers below them. Ids run
 * from 0 to STARPU_NMAXWORKERS - 1; an id outside that range is ignored by set/unset and reads
 * as absent. */
#ifndef MPC_STARPU_BITMAP_H
#define MPC_STARPU_BITMAP_H

#include "starpu_util.h"

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_bitmap;

/** An empty set (free it with starpu_bitmap_destroy). */
struct starpu_bitmap *starpu_bitmap_create(void) STARPU_ATTRIBUTE_MALLOC;
void starpu_bitmap_destroy(struct starpu_bitmap *b);
void starpu_bitmap_set(struct starpu_bitmap *b, int e);
void starpu_bitmap_unset(struct starpu_bitmap *b, int e);
void starpu_bitmap_unset_all(struct starpu_bitmap *b);
/** 1 when e is in b, else 0. */
int starpu_bitmap_get(struct starpu_bitmap *b, int e);
/** a = b AND c. */
void starpu_bitmap_unset_and(struct starpu_bitmap *a, struct starpu_bitmap *b, struct starpu_bitmap *c);
/** a = a OR b. */
void starpu_bitmap_or(struct starpu_bitmap *a, struct starpu_bitmap *b);
/** 1 when e is in both. */
int starpu_bitmap_and_get(struct starpu_bitmap *b1, struct starpu_bitmap *b2, int e);
/** The number of elements. */
int starpu_bitmap_cardinal(struct starpu_bitmap *b);
/** The smallest / largest element, -1 when empty. */
int starpu_bitmap_first(struct starpu_bitmap *b);
int starpu_bitmap_last(struct starpu_bitmap *b);
/** The smallest element above e, -1 when none. */
int starpu_bitmap_next(struct starpu_bitmap *b, int e);
/** 1 when an element above e exists. */
int starpu_bitmap_has_next(struct starpu_bitmap *b, int e);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_BITMAP_H */
