/// \file
/// Tags: 64-bit names for completion points (StarPU's tags, with StarPU 1.3.10's semantics).
///
/// A tag is a record whose current *instance* is a `node`: an empty task that nobody runs.
/// The instance fires (its node is submitted with no dependency, so it completes at once) when
/// the first task carrying it ends or when the application notifies the tag; firing twice does
/// nothing (StarPU: a done tag stays done). Waiting for a tag waits for the current node;
/// depending on a tag depends on it, so tags reuse the tasks' dependency machinery.
///
/// Several tasks may carry one tag: they attach to the same pending instance, and the first to
/// end fires it (StarPU's tag_example4). A task carrying a tag that is done already leaves it
/// done, unless it is the same task submitted again (task_desc::tag_again): then, as StarPU
/// does for a resubmitted task, a fresh instance starts, with no starpu_tag_restart needed
/// (tag_restartable). tag_restart() starts a fresh instance of a done tag.
///
/// A tag's dependencies (other tags) are kept with the generation of each one's instance that
/// the tag's task last waited for: the next task carrying it waits for a later instance, so a
/// dependency counts once per use, as StarPU's completion groups re-arm after each use.

#include <unordered_map>
#include <vector>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

struct tag_dep {
    tag_t id;
    std::uint64_t used_gen = 0;  ///< the instance of `id` the tag's last task waited for
};

struct tag_rec {
    task* node = nullptr;       ///< the current instance's completion point (referenced)
    std::uint64_t gen = 0;      ///< the current instance's number (from 1)
    task* carrier = nullptr;    ///< the last task that carried the tag (referenced), or nullptr
    std::vector<tag_dep> deps;  ///< what its task waits for
};

spinlock g_lock;
std::unordered_map<tag_t, tag_rec>* g_tags = nullptr;  // made on first use, never freed

/// Gives r a fresh instance (a new node, not fired). Caller holds g_lock. false: no memory.
bool new_instance(tag_rec& r) noexcept {
    result<task*> t = task_create();
    if (!t) {
        return false;
    }
    if (r.node != nullptr) {
        detail::task_unref(r.node);  // dependents and waiters hold their own references
    }
    r.node = *t;
    r.node->name = "tag";
    ++r.gen;
    return true;
}

/// The record of id, made if needed, with an instance. Caller holds g_lock.
tag_rec* rec_locked(tag_t id) noexcept {
    if (g_tags == nullptr) {
        g_tags = new (std::nothrow) std::unordered_map<tag_t, tag_rec>();
        if (g_tags == nullptr) {
            return nullptr;
        }
    }
    tag_rec& r = (*g_tags)[id];
    if (r.node == nullptr && !new_instance(r)) {
        return nullptr;
    }
    return &r;
}

/// Runs f(record) under the lock with tag id's record (made if needed); no_memory without one.
template <class F>
status with_rec(tag_t id, F&& f) noexcept {
    spin_guard g(g_lock);
    tag_rec* r = rec_locked(id);
    if (r == nullptr) {
        return {errc::no_memory, "tag record"};
    }
    return f(*r);
}

/// Marks node fired (caller holds g_lock); true when it was not yet: the caller submits it.
bool claim_fire(task* node) noexcept {
    if (node->tag_fired) {
        return false;
    }
    node->tag_fired = true;
    return true;
}

/// Submits a claimed node: it completes at once, releasing the tag's dependents and waiters.
void submit_node(task* node) noexcept {
    task_desc d;
    d.name = "tag";
    if (status st = submit(node, d); !st.ok()) {
        MPC_LOG(error, tg, "tag: cannot submit its completion point: %s", st.reason());
    }
}

/// After a restart (new_instance) of a tag the application fired while a task carrying it
/// had not ended: that task's end fires the new instance (StarPU: the task notifies the tag,
/// whatever instance is current; tag_cycle's "break the loop" with notify_restart). Caller
/// holds g_lock; `old` is the instance before the restart.
void move_carrier(tag_rec& r, task* old) noexcept {
    task* c = r.carrier;
    if (c == nullptr || c->tag_node != old || task_ending(c)) {
        return;
    }
    detail::task_ref(r.node);
    c->tag_node = r.node;
    detail::task_unref(old);
}

/// A fresh instance of r, the pending carrier moved to it (move_carrier). Caller holds g_lock.
status restart_locked(tag_rec& r) noexcept {
    task* old = r.node;
    detail::task_ref(old);
    const bool made = new_instance(r);
    if (made) {
        move_carrier(r, old);
    }
    detail::task_unref(old);
    return made ? status{} : status{errc::no_memory, "tag record"};
}

/// A referenced node of tag id's current instance (made if needed), or nullptr on no memory.
task* node_of(tag_t id) noexcept {
    spin_guard g(g_lock);
    tag_rec* r = rec_locked(id);
    if (r == nullptr) {
        return nullptr;
    }
    detail::task_ref(r->node);
    return r->node;
}

/// The nodes (referenced, into waits) that a task carrying r waits for: for each dependency,
/// an instance later than the one r's previous task waited for. Caller holds g_lock.
bool dep_nodes_locked(tag_rec& r, std::vector<task*>& waits) noexcept {
    for (tag_dep& dep : r.deps) {
        tag_rec* dr = rec_locked(dep.id);
        if (dr == nullptr) {
            return false;
        }
        if (dr->gen <= dep.used_gen && dr->node->tag_fired && !new_instance(*dr)) {
            return false;  // that instance was used already: wait for the next one
        }
        dep.used_gen = dr->gen;
        detail::task_ref(dr->node);
        waits.push_back(dr->node);
    }
    return true;
}

}  // namespace

namespace detail {

status tag_attach(task* t, tag_t id, bool again) noexcept {
    std::vector<task*> waits;
    {
        spin_guard g(g_lock);
        tag_rec* r = rec_locked(id);
        if (r == nullptr) {
            return {errc::no_memory, "tag record"};
        }
        // Submitted again: a fresh instance once the last one fired, or while the task that
        // carries it is ending (resubmitted from its callback, or regenerated): that end fires
        // the instance it carries, this submission the next one.
        const bool carrier_ending = r->carrier != nullptr && r->carrier != t && r->carrier->tag_node == r->node &&
                                    task_ending(r->carrier);
        if (again && (r->node->tag_fired || carrier_ending) && !new_instance(*r)) {
            return {errc::no_memory, "tag record"};
        }
        if (!r->node->tag_fired) {  // t's end fires it, unless another carrier's does first
            task_ref(r->node);
            t->tag_node = r->node;
        }
        task_ref(t);
        if (r->carrier != nullptr) {
            task_unref(r->carrier);
        }
        r->carrier = t;
        if (!dep_nodes_locked(*r, waits)) {
            for (task* w : waits) {
                task_unref(w);
            }
            return {errc::no_memory, "tag record"};
        }
    }
    for (task* w : waits) {
        add_dependency(w, t);
        task_unref(w);
    }
    return {};
}

void tag_task_ended(task* t) noexcept {
    task* node = nullptr;
    bool fire = false;
    {
        spin_guard g(g_lock);  // a restart may move t to a new instance (move_carrier)
        node = t->tag_node;
        t->tag_node = nullptr;
        fire = claim_fire(node);
    }
    if (fire) {
        submit_node(node);
    }
    task_unref(node);
}

}  // namespace detail

status tag_declare_deps(tag_t id, const tag_t* deps, int ndeps) noexcept {
    if (ndeps < 0 || (ndeps > 0 && deps == nullptr)) {
        return {errc::invalid_argument, "tag_declare_deps: bad arguments"};
    }
    return with_rec(id, [&](tag_rec& r) -> status {
        for (int i = 0; i < ndeps; ++i) {
            if (deps[i] == id) {
                MPC_LOG(error, tg, "tag_declare_deps: tag %llu cannot depend on itself",
                        static_cast<unsigned long long>(id));
                return {errc::invalid_argument, "a tag depending on itself"};
            }
            r.deps.push_back(tag_dep{deps[i], 0});
        }
        return {};
    });
}

status tag_wait(tag_t id) noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "tag_wait called from inside a task or callback: it would wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    task* node = node_of(id);
    if (node == nullptr) {
        return {errc::no_memory, "tag record"};
    }
    detail::wait_done(node);
    detail::task_unref(node);
    return {};
}

status tag_notify(tag_t id) noexcept {
    task* node = nullptr;
    status st = with_rec(id, [&](tag_rec& r) -> status {
        if (claim_fire(r.node)) {  // a done tag stays done (StarPU: nothing happens)
            node = r.node;
            detail::task_ref(node);
        }
        return {};
    });
    if (node != nullptr) {
        submit_node(node);
        detail::task_unref(node);
    }
    return st;
}

status tag_notify_restart(tag_t id) noexcept {
    task* node = nullptr;
    status st = with_rec(id, [&](tag_rec& r) -> status {
        if (claim_fire(r.node)) {
            node = r.node;
            detail::task_ref(node);
        }
        return restart_locked(r);
    });
    if (node != nullptr) {
        submit_node(node);
        detail::task_unref(node);
    }
    return st;
}

status tag_restart(tag_t id) noexcept {
    return with_rec(id, [&](tag_rec& r) -> status {
        if (!r.node->tag_fired) {
            return {};  // not done: its next end is waited for already
        }
        return restart_locked(r);
    });
}

task* tag_task(tag_t id) noexcept {
    spin_guard g(g_lock);
    if (g_tags == nullptr) {
        return nullptr;
    }
    auto it = g_tags->find(id);
    return it != g_tags->end() ? it->second.carrier : nullptr;
}

void tag_remove(tag_t id) noexcept {
    task* node = nullptr;
    task* carrier = nullptr;
    {
        spin_guard g(g_lock);
        if (g_tags == nullptr) {
            return;
        }
        auto it = g_tags->find(id);
        if (it == g_tags->end()) {
            return;
        }
        node = it->second.node;
        carrier = it->second.carrier;
        g_tags->erase(it);
    }
    task_release(node);  // a submitted node lives on until it completes
    task_release(carrier);
}

void tags_clear() noexcept {
    std::unordered_map<tag_t, tag_rec> old;
    {
        spin_guard g(g_lock);
        if (g_tags == nullptr) {
            return;
        }
        old.swap(*g_tags);
    }
    for (auto& [id, r] : old) {
        task_release(r.node);
        task_release(r.carrier);
    }
}

}  // namespace mpc::tg
