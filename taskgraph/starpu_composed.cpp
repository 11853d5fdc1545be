/// \file
/// StarPU 1.3 C API: composed components (starpu_sched_component.h, "Recipe Component API").
///
/// A recipe is a list of (create, arg) pairs; the composed component made from it owns a chain
/// of the components they create, each the only child of the previous one (the chain's top
/// receives what is pushed into the composed component, its bottom pushes to the composed
/// component's children). The chain is not part of the tree's walk: the composed component
/// stands for it. Its methods forward:
/// - push_task: into the top;
/// - pull_task(to): the bottom's pull_task(to) (which goes up the chain through the members'
///   parents), then the composed component's own parents;
/// - can_push(to): the bottom's (which pumps into `to` or tells the chain above), then the
///   composed component's parents;
/// - add_child / remove_child: the composed component's list and the bottom's (the bottom's own
///   method, so that a work_stealing bottom makes a deque for each child);
/// - notify_change_workers: the composed component's workers, workers in context and
///   properties given to every member, bottom first, each member then notified;
/// - estimated_load / estimated_end: the top's (queued work in the chain counts);
/// - deinit_data: the chain destroyed.
/// StarPU's component_composed.c shares its children and parents arrays with the bottom and its
/// add_child calls itself (StarPU 1.3.10 crashes when a child is connected to a composed
/// component of two or more pairs); this file keeps the lists apart and follows the documented
/// behaviour: "a component that behaves as all the components of the recipe linked".

#include <starpu.h>
#include <starpu_sched_component.h>

#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "taskgraph/starpu_glue.hpp"

struct starpu_sched_component_composed_recipe {
    std::vector<std::pair<starpu_sched_component* (*)(starpu_sched_tree*, void*), void*>> steps;
};

namespace mpc::tg::starpu {
namespace {

/// The chain of a composed component, top first.
struct composed_data {
    std::vector<starpu_sched_component*> chain;
    starpu_sched_component* top() const noexcept { return chain.front(); }
    starpu_sched_component* bottom() const noexcept { return chain.back(); }
};

composed_data* cdata(starpu_sched_component* c) noexcept { return static_cast<composed_data*>(c->data); }

int composed_push(starpu_sched_component* c, starpu_task* t) {
    return starpu_sched_component_push_task(c, cdata(c)->top(), t);
}

starpu_task* composed_pull(starpu_sched_component* c, starpu_sched_component* to) {
    starpu_sched_component* b = cdata(c)->bottom();
    if (starpu_task* t = b->pull_task(b, to); t != nullptr) {
        return t;
    }
    return starpu_sched_component_parents_pull_task(c, c);
}

int composed_can_push(starpu_sched_component* c, starpu_sched_component* to) {
    starpu_sched_component* b = cdata(c)->bottom();
    const int done = b->can_push(b, to);
    return starpu_sched_component_can_push(c, to) != 0 || done != 0 ? 1 : 0;
}

void composed_add_child(starpu_sched_component* c, starpu_sched_component* child) {
    starpu_sched_component_add_child(c, child);
    starpu_sched_component* b = cdata(c)->bottom();
    b->add_child(b, child);
}

void composed_remove_child(starpu_sched_component* c, starpu_sched_component* child) {
    for (unsigned i = 0; i < c->nchildren; ++i) {
        if (c->children[i] == child) {
            c->children[i] = c->children[--c->nchildren];
            break;
        }
    }
    starpu_sched_component* b = cdata(c)->bottom();
    b->remove_child(b, child);
}

void composed_notify_change_workers(starpu_sched_component* c) {
    const std::vector<starpu_sched_component*>& chain = cdata(c)->chain;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        starpu_sched_component* m = *it;
        starpu_bitmap_unset_all(m->workers);
        starpu_bitmap_or(m->workers, c->workers);
        starpu_bitmap_unset_all(m->workers_in_ctx);
        starpu_bitmap_or(m->workers_in_ctx, c->workers_in_ctx);
        m->properties = c->properties;
        if (m->notify_change_workers != nullptr) {
            m->notify_change_workers(m);
        }
    }
}

double composed_estimated_load(starpu_sched_component* c) {
    starpu_sched_component* t = cdata(c)->top();
    return t->estimated_load(t);
}

double composed_estimated_end(starpu_sched_component* c) {
    starpu_sched_component* t = cdata(c)->top();
    return t->estimated_end(t);
}

void composed_deinit(starpu_sched_component* c) {
    composed_data* d = cdata(c);
    if (d == nullptr) {
        return;
    }
    starpu_sched_component* b = d->bottom();
    while (b->nchildren != 0) {  // the composed component's children: not the chain's to destroy
        b->remove_child(b, b->children[0]);
    }
    for (starpu_sched_component* m : d->chain) {
        starpu_sched_component_destroy(m);  // unlinks it from the next one down
    }
    delete d;
    c->data = nullptr;
}

starpu_sched_component* make(starpu_sched_tree* tree, starpu_sched_component* (*create)(starpu_sched_tree*, void*),
                             void* arg) {
    starpu_sched_component* m = create(tree, arg);
    if (m == nullptr) {
        fatal("starpu_sched_component_composed_component_create", "a create function of the recipe returned NULL");
    }
    return m;
}

}  // namespace

const std::vector<starpu_sched_component*>* composed_chain(starpu_sched_component* c) noexcept {
    return c != nullptr && c->push_task == &composed_push ? &cdata(c)->chain : nullptr;
}

}  // namespace mpc::tg::starpu

namespace sp = mpc::tg::starpu;

struct starpu_sched_component_composed_recipe* starpu_sched_component_composed_recipe_create(void) {
    auto* r = new (std::nothrow) starpu_sched_component_composed_recipe;
    if (r == nullptr) {
        sp::fatal("starpu_sched_component_composed_recipe_create", "out of memory");
    }
    return r;
}

struct starpu_sched_component_composed_recipe* starpu_sched_component_composed_recipe_create_singleton(
    struct starpu_sched_component* (*create_component)(struct starpu_sched_tree* tree, void* arg), void* arg) {
    starpu_sched_component_composed_recipe* r = starpu_sched_component_composed_recipe_create();
    starpu_sched_component_composed_recipe_add(r, create_component, arg);
    return r;
}

void starpu_sched_component_composed_recipe_add(
    struct starpu_sched_component_composed_recipe* recipe,
    struct starpu_sched_component* (*create_component)(struct starpu_sched_tree* tree, void* arg), void* arg) {
    if (recipe == nullptr || create_component == nullptr) {
        sp::fatal("starpu_sched_component_composed_recipe_add", "NULL recipe or create function");
    }
    recipe->steps.emplace_back(create_component, arg);
}

void starpu_sched_component_composed_recipe_destroy(struct starpu_sched_component_composed_recipe* recipe) {
    delete recipe;
}

struct starpu_sched_component* starpu_sched_component_composed_component_create(
    struct starpu_sched_tree* tree, struct starpu_sched_component_composed_recipe* recipe) {
    const char* call = "starpu_sched_component_composed_component_create";
    if (recipe == nullptr || recipe->steps.empty()) {
        sp::fatal(call, "NULL or empty recipe");
    }
    if (recipe->steps.size() == 1) {
        return sp::make(tree, recipe->steps[0].first, recipe->steps[0].second);
    }
    auto* d = new (std::nothrow) sp::composed_data;
    if (d == nullptr) {
        sp::fatal(call, "out of memory");
    }
    for (const auto& [create, arg] : recipe->steps) {
        starpu_sched_component* m = sp::make(tree, create, arg);
        if (!d->chain.empty()) {
            starpu_sched_component_connect(d->bottom(), m);
        }
        d->chain.push_back(m);
    }
    if (starpu_sched_component_is_worker(d->bottom()) != 0) {
        sp::fatal(call, "the recipe ends with a worker component (connect worker components below the composed one)");
    }
    starpu_sched_component* c = starpu_sched_component_create(tree, "composed");
    c->data = d;
    c->push_task = &sp::composed_push;
    c->pull_task = &sp::composed_pull;
    c->can_push = &sp::composed_can_push;
    c->add_child = &sp::composed_add_child;
    c->remove_child = &sp::composed_remove_child;
    c->notify_change_workers = &sp::composed_notify_change_workers;
    c->estimated_load = &sp::composed_estimated_load;
    c->estimated_end = &sp::composed_estimated_end;
    c->deinit_data = &sp::composed_deinit;
    return c;
}
