/// \file
/// Tags: 64-bit names for completion points (StarPU's tags).
///
/// Each tag is a record with a `done` node, an empty task that nobody runs: it completes when
/// the task carrying the tag ends (it is submitted with a dependency on that task) or when the
/// application notifies the tag (submitted with none). Waiting for a tag waits for the node;
/// depending on a tag depends on the node, so tags reuse the tasks' dependency machinery. A
/// tag's own dependencies are recorded until a task carries it, which then waits for them.
/// Restart puts a fresh node in place; records live until removed (StarPU's behaviour too).

#include <unordered_map>
#include <vector>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

struct tag_rec {
    task* done = nullptr;      ///< the completion node (referenced)
    bool carried = false;      ///< a task carries it, or it was notified: done will be submitted
    std::vector<tag_t> deps;   ///< what its task waits for
};

spinlock g_lock;
std::unordered_map<tag_t, tag_rec>* g_tags = nullptr;  // made on first use, never freed

/// The record of id, made if needed, with its node. Caller holds g_lock.
tag_rec* rec_locked(tag_t id) noexcept {
    if (g_tags == nullptr) {
        g_tags = new (std::nothrow) std::unordered_map<tag_t, tag_rec>();
        if (g_tags == nullptr) {
            return nullptr;
        }
    }
    tag_rec& r = (*g_tags)[id];
    if (r.done == nullptr) {
        result<task*> t = task_create();
        if (!t) {
            return nullptr;
        }
        r.done = *t;
        r.done->name = "tag";
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

/// Submits a tag's node: it completes once its dependencies (the carrying task) have.
void submit_node(task* node) noexcept {
    task_desc d;
    d.name = "tag";
    if (status st = submit(node, d); !st.ok()) {
        MPC_LOG(error, tg, "tag: cannot submit its completion point: %s", st.reason());
    }
}

/// A referenced node of tag id (made if needed), or nullptr on no memory.
task* node_of(tag_t id) noexcept {
    spin_guard g(g_lock);
    tag_rec* r = rec_locked(id);
    if (r == nullptr) {
        return nullptr;
    }
    detail::task_ref(r->done);
    return r->done;
}

}  // namespace

namespace detail {

status tag_check(tag_t id, const char* task_name) noexcept {
    spin_guard g(g_lock);
    if (g_tags != nullptr) {
        if (auto it = g_tags->find(id); it != g_tags->end() && it->second.carried) {
            MPC_LOG(error, tg, "task %s: tag %llu is carried by another task or notified already (restart it first)",
                    task_name, static_cast<unsigned long long>(id));
            return {errc::busy, "tag already in use"};
        }
    }
    return {};
}

status tag_attach(task* t, tag_t id) noexcept {
    std::vector<task*> waits;
    task* node = nullptr;
    {
        spin_guard g(g_lock);
        tag_rec* r = rec_locked(id);
        if (r == nullptr) {
            return {errc::no_memory, "tag record"};
        }
        if (r->carried) {
            return {errc::busy, "tag already in use"};
        }
        r->carried = true;
        node = r->done;
        task_ref(node);
        for (tag_t dep : r->deps) {
            tag_rec* dr = rec_locked(dep);
            if (dr == nullptr) {
                return {errc::no_memory, "tag record"};
            }
            task_ref(dr->done);
            waits.push_back(dr->done);
        }
    }
    for (task* w : waits) {
        add_dependency(w, t);
        task_unref(w);
    }
    add_dependency(t, node);  // the tag is done when t is
    task_unref(node);
    return {};
}

void tag_attached(tag_t id) noexcept {
    if (task* node = node_of(id); node != nullptr) {
        submit_node(node);
        task_unref(node);
    }
}

}  // namespace detail

status tag_declare_deps(tag_t id, const tag_t* deps, int ndeps) noexcept {
    if (ndeps < 0 || (ndeps > 0 && deps == nullptr)) {
        return {errc::invalid_argument, "tag_declare_deps: bad arguments"};
    }
    return with_rec(id, [&](tag_rec& r) -> status {
        if (r.carried) {
            MPC_LOG(error, tg, "tag_declare_deps: tag %llu is already carried by a submitted task",
                    static_cast<unsigned long long>(id));
            return {errc::invalid_argument, "dependencies declared after the tag's task was submitted"};
        }
        r.deps.insert(r.deps.end(), deps, deps + ndeps);
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
        if (r.carried) {
            MPC_LOG(error, tg, "tag_notify: tag %llu is carried by a task or notified already",
                    static_cast<unsigned long long>(id));
            return {errc::busy, "tag already in use"};
        }
        r.carried = true;
        node = r.done;
        detail::task_ref(node);
        return {};
    });
    if (node != nullptr) {
        submit_node(node);
        detail::task_unref(node);
    }
    return st;
}

status tag_restart(tag_t id) noexcept {
    task* old = nullptr;
    status st = with_rec(id, [&](tag_rec& r) -> status {
        if (r.carried && !task_finished(r.done)) {
            MPC_LOG(error, tg, "tag_restart: tag %llu is not done yet", static_cast<unsigned long long>(id));
            return {errc::busy, "tag not done"};
        }
        old = r.done;
        r.done = nullptr;
        r.carried = false;
        return rec_locked(id) != nullptr ? status{} : status{errc::no_memory, "tag record"};  // a fresh node
    });
    if (old != nullptr) {
        task_release(old);
    }
    return st;
}

void tag_remove(tag_t id) noexcept {
    task* old = nullptr;
    {
        spin_guard g(g_lock);
        if (g_tags == nullptr) {
            return;
        }
        auto it = g_tags->find(id);
        if (it == g_tags->end()) {
            return;
        }
        old = it->second.done;
        g_tags->erase(it);
    }
    task_release(old);  // a submitted node lives on until it completes
}

}  // namespace mpc::tg
