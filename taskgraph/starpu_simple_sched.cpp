/// \file
/// StarPU 1.3 API: the simple scheduler builders of starpu_sched_component.h
/// (starpu_sched_component_initialize_simple_scheduler(s)) and the two components the
/// several-decision form needs: userchoice (the root: each task goes to the decision the
/// application chose in starpu_task::sched_data) and stage (above a worker or a group of
/// workers: it has one parent per decision and pulls from them in turn). The shape of the tree
/// is StarPU's (docs/taskgraph.md, "Scheduling trees from the application").

#include <starpu.h>
#include <starpu_sched_component.h>

#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/modular.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace mpc::tg::starpu {
namespace {

/// A decision of initialize_simple_schedulers: how to make it, and the tree around it.
struct decision_spec {
    starpu_sched_component_create_t create;
    void* data;
    unsigned flags;
};

unsigned env_unsigned(const char* var, unsigned dflt) noexcept {
    const char* s = std::getenv(var);
    if (s == nullptr || *s == '\0') {
        return dflt;
    }
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > INT_MAX) {
        MPC_LOG(warn, tg, "%s=%s is not a non-negative integer: %u is used", var, s, dflt);
        return dflt;
    }
    return static_cast<unsigned>(v);
}

int stage_push(starpu_sched_component* c, starpu_task* t) {
    if (c->nchildren != 1) {
        fatal("stage component", "pushed a task with other than one child");
    }
    return starpu_sched_component_push_task(c, c->children[0], t);
}

int userchoice_push(starpu_sched_component* c, starpu_task* t) {
    const auto target = reinterpret_cast<std::uintptr_t>(t->sched_data);
    if (target >= c->nchildren) {
        char why[160];
        std::snprintf(why, sizeof why, "task %s chose child %lu (starpu_task::sched_data) of %u",
                      t->name != nullptr ? t->name : "(unnamed)", static_cast<unsigned long>(target), c->nchildren);
        fatal("userchoice component", why);
    }
    return starpu_sched_component_push_task(c, c->children[target], t);
}

/// The queues and the distribution of one decision's branch i: what its workers pull from.
starpu_sched_component* make_branch(starpu_sched_tree* t, starpu_sched_component* decision, unsigned flags,
                                    unsigned decide, int nworkers, unsigned ntasks, double exp_len) {
    starpu_sched_component* b = decision;
    if ((flags & STARPU_SCHED_SIMPLE_FIFOS_BELOW) != 0) {
        starpu_sched_component* q = nullptr;
        if ((flags & STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO) != 0) {
            starpu_sched_component_prio_data pd{ntasks, exp_len, 0};
            q = starpu_sched_component_prio_create(t, &pd);
        } else {
            starpu_sched_component_fifo_data fd{ntasks, exp_len, 0};
            q = starpu_sched_component_fifo_create(t, &fd);
        }
        starpu_sched_component_connect(b, q);
        b = q;
    }
    if (decide != STARPU_SCHED_SIMPLE_DECIDE_WORKERS && nworkers > 1) {
        starpu_sched_component* dist = (flags & STARPU_SCHED_SIMPLE_WS_BELOW) != 0
                                           ? starpu_sched_component_work_stealing_create(t, nullptr)
                                           : starpu_sched_component_eager_create(t, nullptr);
        starpu_sched_component_connect(b, dist);
        b = dist;
    }
    return b;
}

/// StarPU's simple scheduler tree around `specs` (one or more decisions).
void build(unsigned ctx, std::vector<decision_spec>& specs, const char* call) {
    if (ctx != 0) {
        MPC_LOG(error, tg, "%s: scheduling context %u does not exist (there is one context, 0)", call, ctx);
        return;
    }
    const unsigned decide = specs[0].flags & STARPU_SCHED_SIMPLE_DECIDE_MASK;
    for (decision_spec& d : specs) {
        if (d.create == nullptr) {
            fatal(call, "NULL create_decision_component");
        }
        if ((d.flags & STARPU_SCHED_SIMPLE_DECIDE_MASK) == 0) {
            fatal(call, "flags name no STARPU_SCHED_SIMPLE_DECIDE_* choice");
        }
        if ((d.flags & STARPU_SCHED_SIMPLE_DECIDE_MASK) != decide) {
            fatal(call, "the decisions' STARPU_SCHED_SIMPLE_DECIDE_* choices differ");
        }
        if ((d.flags & (STARPU_SCHED_SIMPLE_COMBINED_WORKERS | STARPU_SCHED_SIMPLE_PRE_DECISION)) != 0) {
            MPC_LOG(error, tg, "%s: STARPU_SCHED_SIMPLE_COMBINED_WORKERS and STARPU_SCHED_SIMPLE_PRE_DECISION are not "
                               "supported (ignored)", call);
        }
        if (specs.size() > 1 && (d.flags & STARPU_SCHED_SIMPLE_PERFMODEL) != 0) {
            MPC_LOG(error, tg, "%s: STARPU_SCHED_SIMPLE_PERFMODEL with several decisions is not supported (as in "
                               "StarPU): ignored", call);
            d.flags &= ~static_cast<unsigned>(STARPU_SCHED_SIMPLE_PERFMODEL);
        }
    }
    starpu_sched_tree* t = starpu_sched_tree_create(ctx);
    if (t == nullptr) {
        return;
    }
    starpu_sched_ctx_set_policy_data(ctx, t);
    const int nworkers = static_cast<int>(starpu_worker_get_count());
    // One branch per worker, else one: every worker is a CPU in main memory.
    const int nbelow = decide == STARPU_SCHED_SIMPLE_DECIDE_WORKERS ? nworkers : 1;
    const bool several = specs.size() > 1;
    starpu_sched_component* userchoice = several ? starpu_sched_component_userchoice_create(t, nullptr) : nullptr;
    t->root = userchoice;
    std::vector<starpu_sched_component*> below(static_cast<std::size_t>(nbelow), nullptr);
    if (several) {
        for (starpu_sched_component*& b : below) {
            b = starpu_sched_component_stage_create(t, nullptr);
        }
    }
    starpu_sched_component* no_model = nullptr;
    starpu_sched_component* calibrator = nullptr;
    unsigned flags = 0;
    for (const decision_spec& d : specs) {
        flags = d.flags;
        starpu_sched_component* decision = nullptr;
        if (nbelow == 1 && (flags & STARPU_SCHED_SIMPLE_DECIDE_ALWAYS) == 0) {
            // No choice to make: eager stands for the decision, with a queue above it.
            decision = starpu_sched_component_eager_create(t, nullptr);
            flags |= STARPU_SCHED_SIMPLE_FIFO_ABOVE;
        } else {
            decision = d.create(t, d.data);
            if (decision == nullptr) {
                fatal(call, "create_decision_component returned NULL");
            }
        }
        starpu_sched_component* last = userchoice;
        auto chain = [&](starpu_sched_component* c) {
            if (last == nullptr) {
                t->root = c;
            } else {
                starpu_sched_component_connect(last, c);
            }
            last = c;
        };
        if ((flags & STARPU_SCHED_SIMPLE_FIFO_ABOVE) != 0) {
            chain((flags & STARPU_SCHED_SIMPLE_FIFO_ABOVE_PRIO) != 0 ? starpu_sched_component_prio_create(t, nullptr)
                                                                     : starpu_sched_component_fifo_create(t, nullptr));
        }
        if ((flags & STARPU_SCHED_SIMPLE_PERFMODEL) != 0) {
            no_model = starpu_sched_component_eager_create(t, nullptr);
            calibrator = starpu_sched_component_eager_calibration_create(t, nullptr);
            starpu_sched_component_perfmodel_select_data sel{calibrator, no_model, decision};
            chain(starpu_sched_component_perfmodel_select_create(t, &sel));
            starpu_sched_component_connect(last, decision);
            starpu_sched_component_connect(last, calibrator);
            starpu_sched_component_connect(last, no_model);
        } else {
            chain(decision);
        }
        const bool models = starpu_sched_component_is_heft(decision) || starpu_sched_component_is_mct(decision);
        const unsigned ntasks = env_unsigned("STARPU_NTASKS_THRESHOLD", models ? 30 : 2);
        double exp_len = 1e9;
        if (const char* s = std::getenv("STARPU_EXP_LEN_THRESHOLD"); s != nullptr && *s != '\0') {
            exp_len = modular::weight("STARPU_EXP_LEN_THRESHOLD");
        }
        for (int i = 0; i < nbelow; ++i) {
            starpu_sched_component* b = make_branch(t, decision, flags, decide, nworkers, ntasks, exp_len);
            if (several) {
                starpu_sched_component_connect(b, below[static_cast<std::size_t>(i)]);
            } else {
                below[static_cast<std::size_t>(i)] = b;
            }
        }
    }
    for (int w = 0; w < nworkers; ++w) {  // the last decision's flags, as StarPU
        starpu_sched_component* worker = starpu_sched_component_worker_new(ctx, w);
        starpu_sched_component* top = worker;
        if ((flags & STARPU_SCHED_SIMPLE_IMPL) != 0) {
            top = starpu_sched_component_best_implementation_create(t, nullptr);
            starpu_sched_component_connect(top, worker);
        }
        starpu_sched_component_connect(below[static_cast<std::size_t>(nbelow == nworkers ? w : 0)], top);
        if (no_model != nullptr) {
            starpu_sched_component_connect(no_model, top);
            starpu_sched_component_connect(calibrator, worker);
        }
    }
    starpu_sched_tree_update_workers(t);
    starpu_sched_tree_update_workers_in_ctx(t);
}

}  // namespace
}  // namespace mpc::tg::starpu

namespace sp = mpc::tg::starpu;

extern "C" {

struct starpu_sched_component* starpu_sched_component_stage_create(struct starpu_sched_tree* tree, void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "stage");
    c->push_task = &sp::stage_push;  // pull_task: the default, from each parent in turn
    return c;
}
int starpu_sched_component_is_stage(struct starpu_sched_component* c) { return c->push_task == &sp::stage_push; }

struct starpu_sched_component* starpu_sched_component_userchoice_create(struct starpu_sched_tree* tree,
                                                                        void* /*arg*/) {
    starpu_sched_component* c = starpu_sched_component_create(tree, "userchoice");
    c->push_task = &sp::userchoice_push;
    return c;
}
int starpu_sched_component_is_userchoice(struct starpu_sched_component* c) {
    return c->push_task == &sp::userchoice_push;
}

void starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_create_t create_decision_component,
                                                        void* data, unsigned flags, unsigned sched_ctx_id) {
    std::vector<sp::decision_spec> specs{{create_decision_component, data, flags}};
    sp::build(sched_ctx_id, specs, "starpu_sched_component_initialize_simple_scheduler");
}

void starpu_sched_component_initialize_simple_schedulers(unsigned sched_ctx_id, unsigned ndecisions, ...) {
    const char* call = "starpu_sched_component_initialize_simple_schedulers";
    if (ndecisions == 0) {
        sp::fatal(call, "no decision (ndecisions is 0)");
    }
    std::vector<sp::decision_spec> specs;
    va_list ap;
    va_start(ap, ndecisions);
    for (unsigned i = 0; i < ndecisions; ++i) {
        sp::decision_spec d{};
        d.create = va_arg(ap, starpu_sched_component_create_t);
        d.data = va_arg(ap, void*);
        d.flags = va_arg(ap, unsigned);
        specs.push_back(d);
    }
    va_end(ap);
    sp::build(sched_ctx_id, specs, call);
}

}  // extern "C"
