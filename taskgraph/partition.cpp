/// \file
/// Partitioning: a handle cut into children (StarPU's filters), each a handle with its own
/// history, so that tasks on different children run in parallel.
///
/// Planning makes the children (their interfaces filled by the filter from the parent's); they
/// are not usable yet. Submitting the partition is an internal empty task that accesses the
/// parent as a writer (so it follows every access to the parent submitted before) and becomes
/// every child's last writer (so each child's first access follows it); from then on tasks may
/// not name the parent. Unpartitioning is the mirror: an internal empty task that accesses each
/// child as a writer and becomes the parent's last writer; the children may not be named any
/// more. Neither blocks. Cleaning waits until no task uses the children and frees them
/// (StarPU's starpu_data_partition_clean); the synchronous starpu_data_partition/unpartition
/// are plan + submit and unpartition + clean. Children may be partitioned in turn (tiles).
///
/// A child is of its parent's kind (its interface starts as a copy of the parent's, which the
/// filter adjusts), or of the kind child_kind_fn gives (a dense matrix for each block of a BCSR
/// matrix): a handle of that kind, built-in or custom, whose zeroed interface the filter fills
/// from the parent's. Nothing else differs: the children point into the parent's memory, so
/// (un)partitioning moves no data whatever the kinds.

#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

/// Frees planned children that no task uses any more (may block).
void free_children(data* parent) noexcept {
    for (data* c : parent->children) {
        c->g.lock.lock();
        c->g.wait_locked([c] { return c->users == 0; }, "mpc::tg partition clean");
        detail::destroy_data(c);
    }
    parent->children.clear();
}

bool builtin_kind(interface_id id) noexcept {
    switch (id) {
    case interface_id::matrix:
    case interface_id::block:
    case interface_id::vector:
    case interface_id::csr:
    case interface_id::bcsr:
    case interface_id::variable:
    case interface_id::coo: return true;
    }
    return false;
}

/// Child i's kind into *k (the parent's when `kind` is null or says so); false, logged, when
/// the kind given is not one a handle can have.
bool kind_of_child(child_kind_fn kind, void* ctx, int i, child_kind* k, bool* same) noexcept {
    *same = kind == nullptr || !kind(ctx, i, k);
    if (*same) {
        return true;
    }
    if (static_cast<int>(k->id) >= first_custom_id) {
        const interface_ops& o = k->ops;
        if (o.interface_size == 0 || o.allocate == nullptr || o.release == nullptr || o.size == nullptr) {
            MPC_LOG(error, tg, "partition: child %d is of custom kind %d, whose ops lack the interface size, "
                               "allocate, release or size", i, static_cast<int>(k->id));
            return false;
        }
        return true;
    }
    if (!builtin_kind(k->id)) {
        MPC_LOG(error, tg, "partition: child %d is of unknown interface kind %d", i, static_cast<int>(k->id));
        return false;
    }
    return true;
}

/// A handle of kind `id` with a zeroed interface: of `ops`' size (a custom kind, whose ops it
/// copies) or the built-in union (ops null).
data* new_child_handle(interface_id id, const interface_ops* ops) noexcept {
    data* c = nullptr;
    if (!detail::new_handle(&c, id).ok()) {
        return nullptr;
    }
    if (ops != nullptr) {
        c->custom.reset(new (std::nothrow) std::byte[2 * ops->interface_size]());
        if (!c->custom) {
            delete c;
            return nullptr;
        }
        c->custom_ops = *ops;
        c->ops = &c->custom_ops;
        c->ifp = c->custom.get();
    }
    return c;
}

data* new_child(data* parent, fill_child_fn fill, void* ctx, int i, int n, const child_kind& k, bool same) noexcept {
    data* c = nullptr;
    if (same) {
        c = new_child_handle(parent->id, parent->custom ? &parent->custom_ops : nullptr);
        if (c != nullptr) {
            std::memcpy(c->ifp, parent->ifp, parent->ops->interface_size);
        }
    } else {
        const bool custom = static_cast<int>(k.id) >= first_custom_id;
        c = new_child_handle(k.id, custom ? &k.ops : nullptr);
        if (c != nullptr && !custom) {
            c->iface.var.id = k.id;  // every built-in layout starts with its id
        }
    }
    if (c == nullptr) {
        return nullptr;
    }
    fill(ctx, parent->ifp, c->ifp, i, n);
    if (!same && static_cast<int>(k.id) < first_custom_id) {
        c->iface.var.id = k.id;  // whatever the filter wrote there (StarPU's filters need not)
    }
    c->parent = parent;
    c->child_off = true;
    c->seq = parent->seq;
    return c;
}

}  // namespace

status partition_plan(data* parent, int n, fill_child_fn fill, void* ctx, data** children,
                      child_kind_fn kind) noexcept {
    if (status st = detail::live(parent, "partition"); !st.ok()) {
        return st;
    }
    if (n <= 0 || fill == nullptr) {
        MPC_LOG(error, tg, "partition: %d children asked for (at least 1, and a filter function)", n);
        return {errc::invalid_argument, "bad partition"};
    }
    if (status st = detail::ensure_memory(parent); !st.ok()) {
        return st;  // the children point into it
    }
    {
        spin_guard g(parent->g.lock);
        if (!parent->children.empty()) {
            MPC_LOG(error, tg, "partition: the handle has children already (unpartition and clean first)");
            return {errc::busy, "handle partitioned already"};
        }
        if (parent->unregistering) {
            return {errc::busy, "handle being unregistered"};
        }
    }
    std::vector<data*> made;
    auto undo = [&made] {
        for (data* x : made) {
            detail::destroy_data(x);
        }
    };
    for (int i = 0; i < n; ++i) {
        child_kind k;
        bool same = true;
        if (!kind_of_child(kind, ctx, i, &k, &same)) {
            undo();
            return {errc::invalid_argument, "child interface kind"};
        }
        data* c = new_child(parent, fill, ctx, i, n, k, same);
        if (c == nullptr) {
            undo();
            return {errc::no_memory, "child handles"};
        }
        made.push_back(c);
    }
    spin_guard g(parent->g.lock);
    parent->children = made;
    if (children != nullptr) {
        for (int i = 0; i < n; ++i) {
            children[i] = made[static_cast<std::size_t>(i)];
        }
    }
    return {};
}

status partition_submit(data* parent) noexcept {
    if (status st = detail::live(parent, "partition_submit"); !st.ok()) {
        return st;
    }
    parent->g.lock.lock();
    if (parent->children.empty() || parent->partitioned) {
        parent->g.lock.unlock();
        MPC_LOG(error, tg, "partition_submit: %s", parent->partitioned ? "the handle is partitioned already"
                                                                       : "no children planned (partition_plan)");
        return {errc::invalid_argument, "nothing to partition"};
    }
    task* p = detail::make_internal("partition");
    task* closer = detail::close_phases(parent, access_rw);
    parent->fresh = false;
    detail::infer_write(parent, p, true);
    parent->partitioned = true;
    std::vector<data*> kids = parent->children;
    parent->g.lock.unlock();
    for (data* c : kids) {
        spin_guard g(c->g.lock);
        detail::drop_history(c);  // what came before is behind p
        detail::task_ref(p);
        c->last_writer = p;
        c->child_off = false;
    }
    if (closer != nullptr) {
        detail::launch_internal(closer);
    }
    detail::launch_internal(p);
    return {};
}

status unpartition_submit(data* parent) noexcept {
    if (status st = detail::live(parent, "unpartition_submit"); !st.ok()) {
        return st;
    }
    parent->g.lock.lock();
    bool ok = parent->partitioned;
    std::vector<data*> kids = parent->children;
    parent->g.lock.unlock();
    if (!ok) {
        MPC_LOG(error, tg, "unpartition: the handle is not partitioned");
        return {errc::invalid_argument, "not partitioned"};
    }
    for (data* c : kids) {
        spin_guard g(c->g.lock);
        if (c->partitioned) {
            MPC_LOG(error, tg, "unpartition: a child is partitioned itself (unpartition it first)");
            return {errc::busy, "child partitioned"};
        }
    }
    task* u = detail::make_internal("unpartition");
    for (data* c : kids) {
        c->g.lock.lock();
        task* closer = detail::close_phases(c, access_rw);
        detail::infer_write(c, u, true);
        c->child_off = true;
        c->g.lock.unlock();
        if (closer != nullptr) {
            detail::launch_internal(closer);
        }
    }
    parent->g.lock.lock();
    detail::drop_history(parent);  // p, behind which everything earlier was
    detail::task_ref(u);
    parent->last_writer = u;
    parent->partitioned = false;
    parent->g.lock.unlock();
    detail::launch_internal(u);
    return {};
}

status partition_clean(data* parent) noexcept {
    if (status st = detail::live(parent, "partition_clean"); !st.ok()) {
        return st;
    }
    if (detail::in_task()) {
        return {errc::busy, "blocking call from a task"};
    }
    parent->g.lock.lock();
    bool busy = parent->partitioned;
    for (data* c : parent->children) {
        busy = busy || !c->children.empty();
    }
    parent->g.lock.unlock();
    if (busy) {
        MPC_LOG(error, tg, "partition clean: the handle is still partitioned, or a child has children");
        return {errc::busy, "still partitioned"};
    }
    free_children(parent);
    return {};
}

status partition(data* parent, int n, fill_child_fn fill, void* ctx, child_kind_fn kind) noexcept {
    if (status st = partition_plan(parent, n, fill, ctx, nullptr, kind); !st.ok()) {
        return st;
    }
    return partition_submit(parent);
}

status unpartition(data* parent) noexcept {
    if (status st = unpartition_submit(parent); !st.ok()) {
        return st;
    }
    return partition_clean(parent);
}

int nchildren(const data* d) noexcept { return static_cast<int>(d->children.size()); }

data* child(const data* d, int i) noexcept {
    return i >= 0 && i < nchildren(d) ? d->children[static_cast<std::size_t>(i)] : nullptr;
}

status detail::check_unpartitioned(data* d, const char* call) noexcept {
    spin_guard g(d->g.lock);
    if (!d->children.empty()) {
        MPC_LOG(error, tg, "%s of a handle with children: unpartition it first", call);
        return {errc::busy, "handle partitioned"};
    }
    if (d->parent != nullptr) {
        MPC_LOG(error, tg, "%s of a child handle: unpartition its parent instead", call);
        return {errc::busy, "child handle"};
    }
    return {};
}

}  // namespace mpc::tg
