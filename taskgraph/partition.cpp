/// \file
/// Partitioning: a handle cut into children (StarPU's filters), each a handle with its own
/// history, so that tasks on different children run in parallel.
///
/// A handle may have several plans (StarPU's asynchronous partitioning). Planning makes a
/// plan's children (their interfaces filled by the filter from the parent's); they are not
/// usable yet. Submitting a plan is an internal empty task that accesses the parent as a writer
/// (read-only plans: a reader) and becomes every child's last writer, so that each child's first
/// access follows every access to the parent submitted before. Unpartitioning is the mirror: an
/// internal task writing each child (reading it, when the plan stays read-only) that becomes
/// the parent's last writer. Upgrading a read-only plan writes the parent and its children.
/// At most one plan is on read-write, or several read-only; the flags on the handles (partitioned,
/// ro_partitioned, child_off, child_ro) make submission refuse what the state forbids. An access
/// to a child of a plan that is off, or to a parent with plans on, first switches the plans the
/// way StarPU 1.3 does (partition_access(), called at submission): the ancestors first, then
/// the other plans off where the access needs it, then the target's on. Switches are made under
/// one lock (g_plans) and their tasks launched after it. Nothing blocks but clean, which waits
/// until no task uses the children and frees them; the synchronous partition/unpartition
/// (StarPU's starpu_data_partition) are plan + submit and unpartition + clean of a plan that
/// never switches implicitly. Children may be partitioned in turn (tiles).
///
/// A child is of its parent's kind (its interface starts as a copy of the parent's, which the
/// filter adjusts), or of the kind child_kind_fn gives (a dense matrix for each block of a BCSR
/// matrix): a handle of that kind, built-in or custom, whose zeroed interface the filter fills
/// from the parent's. Nothing else differs: the children point into the parent's memory, so
/// (un)partitioning moves no data whatever the kinds.

#include <algorithm>
#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

/// Frees a plan's children once no task uses them (may block).
void free_children(const std::vector<data*>& kids) noexcept {
    for (data* c : kids) {
        c->g.lock.lock();
        c->g.wait_locked([c] { return c->users == 0; }, "mpc::tg partition clean");
        detail::destroy_data(c);
    }
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
    case interface_id::void_: return false;        // nothing to partition
    case interface_id::multiformat: return false;  // no filter for it (as in StarPU)
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
    if (custom_storage(static_cast<int>(k->id))) {
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
        const bool custom = custom_storage(static_cast<int>(k.id));
        c = new_child_handle(k.id, custom ? &k.ops : nullptr);
        if (c != nullptr && !custom) {
            c->iface.var.id = k.id;  // every built-in layout starts with its id
        }
    }
    if (c == nullptr) {
        return nullptr;
    }
    fill(ctx, parent->ifp, c->ifp, i, n);
    if (!same && !custom_storage(static_cast<int>(k.id))) {
        c->iface.var.id = k.id;  // whatever the filter wrote there (StarPU's filters need not)
    }
    c->parent = parent;
    c->child_off = true;
    c->seq = parent->seq;
    detail::enlist(c);
    cpu_fn redux = nullptr;
    cpu_fn init = nullptr;
    void* redux_arg = nullptr;
    void* init_arg = nullptr;
    {
        spin_guard g(parent->g.lock);
        redux = parent->redux_fn;
        init = parent->init_fn;
        redux_arg = parent->redux_arg;
        init_arg = parent->init_arg;
    }
    if ((redux != nullptr || init != nullptr) && !set_reduction(c, redux, redux_arg, init, init_arg).ok()) {
        return nullptr;  // no memory: as a child that could not be made
    }
    return c;  // a child inherits its parent's reduction methods, as in StarPU
}


/// Switches of plans are made under this lock (the states of every plan and the order of
/// their internal tasks); handles' own locks nest inside it. Internal tasks made under it are
/// launched once it is released (a task's end may run callbacks that submit).
spinlock g_plans;

using plan = partition_plan_rec;
using launches = std::vector<task*>;

void add_launch(launches& l, task* t) {
    if (t != nullptr) {
        l.push_back(t);
    }
}

void launch_all(launches& l) noexcept {
    for (task* t : l) {
        detail::launch_internal(t);
    }
}

/// The plan of `parent` that `which` (one of its children) belongs to, or its only plan when
/// `which` is null; nullptr (logged) when there is none such.
plan* find_plan(data* parent, data* which, const char* call) noexcept {
    if (which == nullptr) {
        if (parent->plans.size() == 1) {
            return parent->plans.front().get();
        }
        MPC_LOG(error, tg, "%s: the handle has %zu partition plans; name one by its children", call,
                parent->plans.size());
        return nullptr;
    }
    for (const auto& p : parent->plans) {
        if (p.get() == which->sibs) {
            return p.get();
        }
    }
    MPC_LOG(error, tg, "%s: the children given are not a partition plan of this handle", call);
    return nullptr;
}

/// Switches plan `pl` of `parent` on, read-only or read-write (g_plans held): an internal task
/// reading (ro) or writing the parent, after its history when parent_seq, that becomes each
/// child's last writer.
status switch_on(data* parent, plan* pl, bool ro, bool parent_seq, launches& l) noexcept {
    if (pl->st != plan::state::off) {
        MPC_LOG(error, tg, "partition_submit: this partition plan is submitted already");
        return {errc::busy, "plan on already"};
    }
    if (parent->partitioned || (!ro && parent->nactive != 0)) {
        MPC_LOG(error, tg, "partition_submit: another partition plan of the handle is submitted%s (unpartition it "
                           "first; only read-only plans may be submitted together)",
                parent->partitioned ? " read-write" : " read-only");
        return {errc::busy, "another plan is on"};
    }
    task* p = detail::make_internal(ro ? "partition (read-only)" : "partition");
    parent->g.lock.lock();
    add_launch(l, detail::close_phases(parent, ro ? access_read : access_rw));
    parent->fresh = false;
    if (parent_seq) {
        detail::infer_access(parent, ro ? access_read : access_rw, p);
    }
    ++parent->nactive;
    parent->partitioned = !ro;
    parent->ro_partitioned = ro;
    parent->g.lock.unlock();
    for (data* c : pl->kids) {
        spin_guard g(c->g.lock);
        detail::infer_write(c, p, true);  // what came before (an earlier unpartition) goes first
        c->child_off = false;
        c->child_ro = ro;
    }
    pl->st = ro ? plan::state::ro : plan::state::rw;
    l.push_back(p);
    return {};
}

/// Plan `pl`, the only one on (read-only), becomes read-write (g_plans held): an internal task
/// writing the parent and the children after their readers.
status upgrade(data* parent, plan* pl, launches& l) noexcept {
    if (pl->st != plan::state::ro || parent->nactive != 1) {
        MPC_LOG(error, tg, "partition_readwrite_upgrade: %s",
                pl->st != plan::state::ro ? "the plan is not submitted read-only"
                                          : "other read-only plans of the handle are submitted (unpartition them first)");
        return {errc::busy, "cannot upgrade"};
    }
    task* p = detail::make_internal("partition upgrade");
    parent->g.lock.lock();
    add_launch(l, detail::close_phases(parent, access_rw));
    detail::infer_access(parent, access_rw, p);
    parent->partitioned = true;
    parent->ro_partitioned = false;
    parent->g.lock.unlock();
    for (data* c : pl->kids) {
        spin_guard g(c->g.lock);
        add_launch(l, detail::close_phases(c, access_rw));
        detail::infer_write(c, p, true);
        c->child_ro = false;
    }
    pl->st = plan::state::rw;
    l.push_back(p);
    return {};
}

/// Switches plan `pl` off, or to read-only when `to_ro` (g_plans held): an internal task after
/// every access to the children (reading them when to_ro) that writes the parent.
status switch_off(data* parent, plan* pl, bool to_ro, bool parent_seq, callback_fn cb, void* arg,
                  launches& l) noexcept {
    if (pl->st == plan::state::off) {
        MPC_LOG(error, tg, "unpartition: this partition plan is not submitted (partition_submit first)");
        return {errc::invalid_argument, "plan not submitted"};
    }
    for (data* c : pl->kids) {
        if (!to_ro && c->nactive != 0) {
            MPC_LOG(error, tg, "unpartition: a child is partitioned itself (unpartition it first)");
            return {errc::busy, "child partitioned"};
        }
    }
    task* u = detail::make_internal(to_ro ? "unpartition (read-only)" : "unpartition");
    u->callback = cb;
    u->callback_arg = arg;
    for (data* c : pl->kids) {
        spin_guard g(c->g.lock);
        add_launch(l, detail::close_phases(c, to_ro ? access_read : access_rw));
        if (to_ro) {
            detail::infer_access(c, access_read, u);
        } else {
            detail::infer_write(c, u, true);
            c->child_off = true;
        }
        c->child_ro = to_ro;
    }
    parent->g.lock.lock();
    if (parent_seq) {
        detail::infer_write(parent, u, true);
    }
    const bool was_rw = pl->st == plan::state::rw;
    if (to_ro) {
        pl->st = plan::state::ro;
    } else {
        pl->st = plan::state::off;
        --parent->nactive;
    }
    parent->partitioned = parent->partitioned && !was_rw;
    parent->ro_partitioned = parent->nactive != 0 && !parent->partitioned;
    parent->g.lock.unlock();
    l.push_back(u);
    return {};
}

/// Switches off every plan of d and, first, of its children (g_plans held).
status all_off(data* d, launches& l) noexcept {
    for (const auto& p : d->plans) {
        if (p->st == plan::state::off) {
            continue;
        }
        for (data* c : p->kids) {
            if (status st = all_off(c, l); !st.ok()) {
                return st;
            }
        }
        if (status st = switch_off(d, p.get(), false, true, nullptr, nullptr, l); !st.ok()) {
            return st;
        }
    }
    return {};
}

/// Whether a child of a plan made by partition_plan() may not be accessed so yet.
bool child_not_ready(const data* d, bool write) noexcept {
    return d->sibs != nullptr && !d->sibs->sync &&
           (d->sibs->st == plan::state::off || (write && d->sibs->st == plan::state::ro));
}

/// Switches `anc`'s plans so that `target`'s plan is on (read-write when `write`), its own
/// ancestors first (g_plans held). StarPU's rules: writing needs the target's plan alone on
/// read-write (a lone read-only one is upgraded); reading needs no read-write plan but the
/// target's, and adds the target's plan read-only beside the others.
status toward(data* anc, data* target, bool write, launches& l) noexcept {
    if (child_not_ready(anc, write)) {
        if (status st = toward(anc->parent, anc, write, l); !st.ok()) {
            return st;
        }
    }
    plan* pl = target->sibs;
    if (anc->nactive != 0) {
        if (write && pl->st == plan::state::ro && anc->nactive == 1) {
            return upgrade(anc, pl, l);
        }
        if (write || anc->partitioned) {
            if (status st = all_off(anc, l); !st.ok()) {
                return st;
            }
        }
    }
    return switch_on(anc, pl, !write, true, l);
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
    // Pinned (with disks) until the plan is the parent's, which keeps eviction away from it:
    // the children point into its memory.
    bool pinned = false;
    if (status st = detail::ensure_memory(parent, &pinned); !st.ok()) {
        return st;
    }
    auto unpin_locked = [parent, &pinned] {
        parent->pins -= pinned ? 1 : 0;
        pinned = false;
    };
    auto unpin = [parent, &unpin_locked] {
        spin_guard g(parent->g.lock);
        unpin_locked();
    };
    {
        spin_guard g(parent->g.lock);
        if (!parent->plans.empty() && parent->plans.front()->sync) {
            MPC_LOG(error, tg, "partition_plan: the handle is partitioned by starpu_data_partition already "
                               "(unpartition it first)");
            unpin_locked();
            return {errc::busy, "handle partitioned already"};
        }
        if (parent->unregistering) {
            unpin_locked();
            return {errc::busy, "handle being unregistered"};
        }
        // The children write into the parent's memory, its disk copy cannot follow them: the
        // main-memory copy becomes the only current one, as for a writing access (and a
        // write-behind under way is not current either).
        parent->disk_valid = false;
        ++parent->writers;
    }
    std::vector<data*> made;
    auto undo = [&made] {
        for (data* x : made) {
            detail::destroy_data(x);
        }
    };
    auto pl = std::unique_ptr<plan>(new (std::nothrow) plan);
    if (pl == nullptr) {
        unpin();
        return {errc::no_memory, "partition plan"};
    }
    for (int i = 0; i < n; ++i) {
        child_kind k;
        bool same = true;
        if (!kind_of_child(kind, ctx, i, &k, &same)) {
            undo();
            unpin();
            return {errc::invalid_argument, "child interface kind"};
        }
        data* c = new_child(parent, fill, ctx, i, n, k, same);
        if (c == nullptr) {
            undo();
            unpin();
            return {errc::no_memory, "child handles"};
        }
        c->sibs = pl.get();
        c->plan_involved.store(true, std::memory_order_relaxed);
        made.push_back(c);
    }
    pl->kids = made;
    if (children != nullptr) {
        for (int i = 0; i < n; ++i) {
            children[i] = made[static_cast<std::size_t>(i)];
        }
    }
    spin_guard gp(g_plans);
    spin_guard g(parent->g.lock);
    parent->plans.push_back(std::move(pl));
    parent->plan_involved.store(true, std::memory_order_release);
    unpin_locked();
    return {};
}

namespace {

/// Runs op(plan, launches) on the plan `which` names under g_plans, then launches its tasks.
template <class Op>
status on_plan(data* parent, data* which, const char* call, Op op) noexcept {
    if (status st = detail::live(parent, call); !st.ok()) {
        return st;
    }
    launches l;
    status st;
    {
        spin_guard gp(g_plans);
        plan* pl = find_plan(parent, which, call);
        st = pl == nullptr ? status{errc::invalid_argument, "no such plan"} : op(pl, l);
    }
    launch_all(l);
    return st;
}

}  // namespace

status partition_submit(data* parent, data* which, bool readonly, bool parent_seq) noexcept {
    return on_plan(parent, which, "partition_submit",
                   [&](plan* pl, launches& l) { return switch_on(parent, pl, readonly, parent_seq, l); });
}

status partition_upgrade(data* parent, data* which) noexcept {
    return on_plan(parent, which, "partition_readwrite_upgrade",
                   [&](plan* pl, launches& l) { return upgrade(parent, pl, l); });
}

status unpartition_submit(data* parent, data* which, const unpartition_options& o) noexcept {
    return on_plan(parent, which, "unpartition_submit", [&](plan* pl, launches& l) {
        return switch_off(parent, pl, o.to_readonly, o.parent_seq, o.callback, o.callback_arg, l);
    });
}

status partition_clean(data* parent, data* which) noexcept {
    if (status st = detail::live(parent, "partition_clean"); !st.ok()) {
        return st;
    }
    if (detail::in_task()) {
        return {errc::busy, "blocking call from a task"};
    }
    launches l;
    std::unique_ptr<plan> gone;
    {
        spin_guard gp(g_plans);
        plan* pl = find_plan(parent, which, "partition_clean");
        if (pl == nullptr) {
            return {errc::invalid_argument, "no such plan"};
        }
        for (data* c : pl->kids) {
            if (!c->plans.empty()) {
                MPC_LOG(error, tg, "partition clean: a child has partition plans of its own (clean them first)");
                return {errc::busy, "child partitioned"};
            }
        }
        if (pl->st != plan::state::off) {  // StarPU unpartitions a plan still submitted
            if (status st = switch_off(parent, pl, false, true, nullptr, nullptr, l); !st.ok()) {
                return st;
            }
        }
        spin_guard g(parent->g.lock);
        for (auto it = parent->plans.begin(); it != parent->plans.end(); ++it) {
            if (it->get() == pl) {
                gone = std::move(*it);
                parent->plans.erase(it);
                break;
            }
        }
        parent->plan_involved.store(!parent->plans.empty() || parent->sibs != nullptr, std::memory_order_release);
        // The children's tasks write into the parent's memory without counting as its users,
        // and may run until free_children() has seen them end: pinned until then, so that
        // neither eviction nor write-behind takes the parent's memory under them.
        ++parent->pins;
    }
    launch_all(l);
    free_children(gone->kids);
    detail::unpin(parent);
    return {};
}

status partition(data* parent, int n, fill_child_fn fill, void* ctx, child_kind_fn kind) noexcept {
    if (status st = detail::live(parent, "partition"); !st.ok()) {
        return st;
    }
    {
        spin_guard g(parent->g.lock);
        if (!parent->plans.empty()) {
            MPC_LOG(error, tg, "partition: the handle has children already (unpartition and clean first)");
            return {errc::busy, "handle partitioned already"};
        }
    }
    data* first = nullptr;
    if (status st = partition_plan(parent, n, fill, ctx, nullptr, kind); !st.ok()) {
        return st;
    }
    {
        spin_guard gp(g_plans);
        plan* pl = parent->plans.back().get();
        pl->sync = true;  // StarPU's synchronous partitioning: no implicit switches
        for (data* c : pl->kids) {
            c->plan_involved.store(false, std::memory_order_relaxed);
        }
        first = pl->kids.front();
        spin_guard g(parent->g.lock);
        parent->plan_involved.store(parent->sibs != nullptr && !parent->sibs->sync, std::memory_order_release);
    }
    return partition_submit(parent, first);
}

status unpartition(data* parent) noexcept {
    if (status st = unpartition_submit(parent); !st.ok()) {
        return st;
    }
    return partition_clean(parent);
}

void detail::partition_access(data* d, bool write) noexcept {
    launches l;
    status st;
    {
        spin_guard gp(g_plans);
        if (child_not_ready(d, write)) {
            st = toward(d->parent, d, write, l);
        }
        if (st.ok() && d->nactive != 0 && (write || d->partitioned)) {
            bool sync = false;
            for (const auto& p : d->plans) {
                sync = sync || p->sync;
            }
            if (!sync) {
                st = all_off(d, l);  // the handle itself: its plans off first
            }
        }
    }
    launch_all(l);
    if (!st.ok()) {
        MPC_LOG(error, tg, "implicit partitioning for an access to a handle failed: %s", st.reason());
    }
}

int nchildren(const data* d) noexcept {
    return d->plans.empty() ? 0 : static_cast<int>(d->plans.front()->kids.size());
}

data* child(const data* d, int i) noexcept {
    return i >= 0 && i < nchildren(d) ? d->plans.front()->kids[static_cast<std::size_t>(i)] : nullptr;
}

int nplans(const data* d) noexcept { return static_cast<int>(d->plans.size()); }

bool is_plan(const data* parent, data* const* kids, int n) noexcept {
    spin_guard gp(g_plans);
    if (n <= 0 || kids == nullptr || kids[0] == nullptr || kids[0]->parent != parent || kids[0]->sibs == nullptr) {
        return false;
    }
    const std::vector<data*>& k = kids[0]->sibs->kids;
    return static_cast<int>(k.size()) == n && std::equal(k.begin(), k.end(), kids);
}

status unpartition_all(data* d) noexcept {
    if (status st = detail::live(d, "unpartition_submit_r"); !st.ok()) {
        return st;
    }
    launches l;
    status st;
    {
        spin_guard gp(g_plans);
        st = all_off(d, l);
    }
    launch_all(l);
    return st;
}

status detail::check_unpartitioned(data* d, const char* call) noexcept {
    spin_guard g(d->g.lock);
    if (!d->plans.empty()) {
        MPC_LOG(error, tg, "%s of a handle with children: unpartition (and clean its plans) first", call);
        return {errc::busy, "handle partitioned"};
    }
    if (d->parent != nullptr) {
        MPC_LOG(error, tg, "%s of a child handle: unpartition its parent instead", call);
        return {errc::busy, "child handle"};
    }
    return {};
}

}  // namespace mpc::tg
