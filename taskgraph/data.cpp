/// \file
/// Data handles: registration of the variable, vector, matrix and block interfaces, the per-handle
/// access history that turns the submission order into dependencies, acquisition by the
/// application, and unregistration.
///
/// Inferred dependencies (sequential consistency): each handle remembers its last writer and
/// the readers submitted since. A reader waits for the last writer (read after write). A writer
/// waits for those readers (write after read) or, with none, for the last writer (write after
/// write); every reader already waits for that writer, so the order is complete without a
/// quadratic number of edges. Finished tasks are dropped from the reader list when it grows, so
/// a handle that is only read does not keep every reader alive.
///
/// Without sequential consistency a handle is arbitrated instead (arbiter.cpp): tasks on it run
/// in any order, but never at the same time in conflicting modes.
///
/// Acquisition by the application is a task without a function (task_kind::acquire): it takes
/// dependencies like any task, is "granted" instead of being scheduled, and completes at
/// release(), which lets the tasks that wait for it go.

#include <algorithm>
#include <atomic>
#include <new>
#include <vector>

#include "lib/log.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

std::atomic<bool> g_default_seq{true};

/// Every live handle, oldest first (find_handle).
struct registry {
    spinlock lock;
    data* first = nullptr;
    data* last = nullptr;
};
constinit registry g_registry;

std::atomic<std::uint64_t> g_use_clock{0};         ///< data::last_use stamps
std::atomic<const detail::spill_ops*> g_spill{nullptr};
std::atomic<unsigned> g_spill_epoch{0};
std::atomic<int> g_spill_waiters{0};
std::atomic<int> g_cleaning{0};  ///< write-behind jobs out (clean_job)

}  // namespace

std::atomic<const void* (*)()> detail::g_data_scope{nullptr};

void detail::enlist(data* d) noexcept {
    const void* (*scope)() = g_data_scope.load(std::memory_order_acquire);
    d->scope = scope != nullptr ? scope() : nullptr;
    spin_guard g(g_registry.lock);
    d->reg_listed = true;
    d->reg_prev = g_registry.last;
    (g_registry.last != nullptr ? g_registry.last->reg_next : g_registry.first) = d;
    g_registry.last = d;
}

namespace {

void delist(data* d) noexcept {
    spin_guard g(g_registry.lock);
    if (!d->reg_listed) {
        return;  // made and freed again before it was complete
    }
    d->reg_listed = false;
    (d->reg_prev != nullptr ? d->reg_prev->reg_next : g_registry.first) = d->reg_next;
    (d->reg_next != nullptr ? d->reg_next->reg_prev : g_registry.last) = d->reg_prev;
    d->reg_prev = d->reg_next = nullptr;
}

}  // namespace

data* find_handle(bool (*match)(data* d, const void* key), const void* key) noexcept {
    spin_guard g(g_registry.lock);
    for (data* d = g_registry.first; d != nullptr; d = d->reg_next) {
        if (d->needs_memory.load(std::memory_order_acquire)) {
            continue;  // no memory yet (or being made): no pointer to match
        }
        bool usable = false;
        {
            spin_guard dg(d->g.lock);
            usable = !d->partitioned && !d->child_off;
        }
        if (usable && match(d, key)) {
            return d;
        }
    }
    return nullptr;
}

status detail::new_handle(data** out, interface_id id) noexcept {
    if (out == nullptr) {
        return {errc::invalid_argument, "null handle pointer"};
    }
    data* d = new (std::nothrow) data;
    if (d == nullptr) {
        return {errc::no_memory, "data handle"};
    }
    d->id = id;
    d->ops = detail::builtin_ops(id);
    d->seq = g_default_seq.load(std::memory_order_relaxed);
    *out = d;
    return {};
}

namespace {

/// Readers that have finished no longer order anything (later writers wait for the live ones,
/// and finished ones impose nothing): drop them. Caller holds d->g.lock.
void prune_readers(data* d) noexcept {
    auto keep = std::remove_if(d->readers.begin(), d->readers.end(), [](task* r) {
        if (task_finished(r)) {
            detail::task_unref(r);
            return true;
        }
        return false;
    });
    d->readers.erase(keep, d->readers.end());
}

/// Records access `mode` of t to d and adds t's dependencies. Caller holds d->g.lock.
void infer(data* d, access_mode mode, task* t) noexcept {
    if ((mode & access_write) != 0) {
        detail::infer_write(d, t, true);
    } else {
        if (d->last_writer != nullptr) {
            detail::add_dependency(d->last_writer, t);
        }
        if (d->readers.size() >= 16 && (d->readers.size() & (d->readers.size() - 1)) == 0) {
            prune_readers(d);  // at powers of two: amortised constant time per reader
        }
        detail::task_ref(t);
        d->readers.push_back(t);
    }
}

}  // namespace

void detail::infer_access(data* d, access_mode mode, task* t) noexcept { infer(d, mode, t); }

void detail::drop_history(data* d) noexcept {
    if (d->last_writer != nullptr) {
        detail::task_unref(d->last_writer);
        d->last_writer = nullptr;
    }
    for (task* r : d->readers) {
        detail::task_unref(r);
    }
    d->readers.clear();
}

namespace {

/// Whether d looks like a registered handle (the check reads d: it catches a handle unregistered
/// while its memory is still mapped, not every stale pointer).
status live(const data* d, const char* call) noexcept {
    if (d == nullptr || d->magic != data::live_magic) {
        MPC_LOG(error, tg, "%s: not a registered handle (unregistered already?)", call);
        return {errc::invalid_argument, "not a registered handle"};
    }
    return {};
}

}  // namespace

namespace {
bool evictable(const data* d) noexcept;  // below, "Eviction"
}  // namespace

namespace detail {

status live(const data* d, const char* call) noexcept { return ::mpc::tg::live(d, call); }

void infer_write(data* d, task* t, bool become_writer) noexcept {
    if (!d->readers.empty()) {
        for (task* r : d->readers) {
            add_dependency(r, t);
            if (become_writer) {
                task_unref(r);
            }
        }
        if (become_writer) {
            d->readers.clear();
        }
    } else if (d->last_writer != nullptr) {
        add_dependency(d->last_writer, t);
    }
    if (become_writer) {
        task_ref(t);
        if (d->last_writer != nullptr) {
            task_unref(d->last_writer);
        }
        d->last_writer = t;
    }
}

void destroy_data(data* d) noexcept {
    delist(d);  // first: find_handle takes the registry's lock, then the handle's
    d->g.lock.lock();  // the last detach_buffers() may still be unlocking
    while (d->evicting || d->cleaning) {  // picked by spill_evict() or write-behind: its write ends soon
        d->g.lock.unlock();
        sched::yield();
        d->g.lock.lock();
    }
    drop_history(d);
    for (task* x : d->redux_tasks) {
        task_unref(x);
    }
    for (task* x : d->commute_group) {
        task_unref(x);
    }
    d->magic = 0;
    d->g.lock.unlock();
    if (d->arb != nullptr) {
        spin_guard g(d->arb->lock);
        --d->arb->handles;
    }
    free_data_memory(d);
    delete d;
}

int combined_mode(const task* t, int i) noexcept {
    unsigned m = t->bufs[i].mode;
    if (untracked(m)) {
        return static_cast<int>(m);  // each scratch buffer stands alone
    }
    for (int j = 0; j < t->nbuffers; ++j) {
        if (t->bufs[j].d == t->bufs[i].d && !untracked(t->bufs[j].mode)) {
            if (j < i) {
                return -1;
            }
            m |= t->bufs[j].mode;
        }
    }
    return static_cast<int>(m);
}

/// Why t may not name d now in mode m (d->g.lock held), or nullptr.
const char* refusal(const data* d, unsigned m) noexcept {
    // A task still using the handle may submit more work on it while an unregistration waits
    // for the handle's users (StarPU allows it: its unregister waits for that work too); any
    // other submission naming it is a use after unregister.
    if (d->unregistering && !(d->users > 0 && detail::in_task())) {
        return "a handle being unregistered";
    }
    if (d->partitioned) {
        return "a partitioned handle (use its children, or unpartition it)";
    }
    if (d->child_off) {
        return "a child of a handle that is not partitioned (partition_submit first)";
    }
    if ((m & (access_write | access_redux)) != 0 && d->ro_partitioned) {
        return "a handle partitioned read-only, in a writing mode (unpartition it first)";
    }
    if ((m & (access_write | access_redux)) != 0 && d->child_ro) {
        return "a child of a read-only partition, in a writing mode (upgrade the partition to read-write first)";
    }
    return nullptr;
}

/// Whether an access in mode m to d would wait for something submitted before (d->g.lock held).
bool busy_for(data* d, unsigned m) noexcept {
    if (!d->redux_tasks.empty() || !d->commute_group.empty()) {
        return true;
    }
    if (d->last_writer != nullptr && !task_finished(d->last_writer)) {
        return true;
    }
    if ((m & access_write) != 0) {
        for (task* r : d->readers) {
            if (!task_finished(r)) {
                return true;
            }
        }
    }
    return !d->seq && (d->arb_writer || ((m & access_write) != 0 && d->arb_readers != 0) || !d->arb_waiters.empty());
}

status attach_buffers(task* t, bool infer_deps) noexcept {
    // Plans first (StarPU switches them at submission, before the task's own dependencies).
    for (int i = 0; i < t->nbuffers; ++i) {
        if (!t->bufs[i].d->plan_involved.load(std::memory_order_acquire)) {
            continue;  // the common case: one load per buffer
        }
        const int m = combined_mode(t, i);
        if (m >= 0 && !untracked(static_cast<unsigned>(m))) {
            partition_access(t->bufs[i].d, (m & (access_write | access_redux)) != 0);
        }
    }
    for (int i = 0; i < t->nbuffers; ++i) {
        int m = combined_mode(t, i);
        if (m < 0) {
            continue;
        }
        data* d = t->bufs[i].d;
        d->g.lock.lock();
        const char* why = refusal(d, static_cast<unsigned>(m));
        const bool would_wait = why == nullptr && t->try_only && busy_for(d, static_cast<unsigned>(m));
        if (why != nullptr || would_wait) {
            d->g.lock.unlock();
            if (why != nullptr) {
                MPC_LOG(error, tg, "task %s: buffer %d is %s", t->name, i, why);
            }
            // Undo the handles attached so far (their inferred edges stay: harmless, they only
            // order this task, which will not run, after earlier ones).
            for (int j = 0; j < i; ++j) {
                if (combined_mode(t, j) >= 0) {
                    data* e = t->bufs[j].d;
                    e->g.lock.lock();
                    --e->users;
                    e->g.lock.unlock();
                }
            }
            if (would_wait) {
                return {errc::busy, "the access would wait"};
            }
            return {errc::busy, d->unregistering ? "handle being unregistered" : "handle not usable (partitioning)"};
        }
        ++d->users;
        d->ever_used = true;
        if (g_spill.load(std::memory_order_relaxed) != nullptr) {  // eviction's order (disks only)
            d->last_use = g_use_clock.fetch_add(1, std::memory_order_relaxed) + 1;
        }
        if ((m & (access_write | access_redux)) != 0) {
            d->disk_valid = false;  // the main-memory copy becomes the only current one
            ++d->writers;           // a write-behind under way (partitioning) is not current
        }
        task* internal = nullptr;
        if (untracked(static_cast<unsigned>(m))) {
            // scratch: no history, no exclusion; counted as a user only
        } else if (infer_deps && d->seq && !t->bufs[i].no_infer) {
            internal = close_phases(d, static_cast<unsigned>(m));
            if ((m & access_redux) == 0) {
                d->fresh = false;
            }
            if (!infer_special(d, static_cast<unsigned>(m), t)) {
                infer(d, static_cast<access_mode>(m), t);
            }
            if ((m & access_commute) != 0) {
                t->bufs[i].arbitrated = true;  // one commute task at a time
                t->has_arbitrated = true;
            }
        } else {
            if (!d->seq) {
                // The history stops at the switch: what came before still goes first.
                if (d->last_writer != nullptr) {
                    detail::add_dependency(d->last_writer, t);
                }
                for (task* r : d->readers) {
                    detail::add_dependency(r, t);
                }
            }
            t->bufs[i].arbitrated = true;  // no order on it: exclusion at run time instead
            t->has_arbitrated = true;
        }
        d->g.lock.unlock();
        if (internal != nullptr) {
            launch_internal(internal);
        }
    }
    return {};
}

namespace {

/// Write-behind: when memory is nearly full (7/8 of the limit), a handle whose last user
/// leaves while its main-memory copy is newer than its disk copy is written out on a helper
/// thread (`cleaning`: submissions and eviction wait or pass), so that eviction later finds it
/// clean and frees it without a write on the reservation's thread. Only into the disk copy an
/// earlier eviction made: write-behind takes no disk room of its own.
bool wants_cleaning(const data* d) noexcept {
    // A parent whose children's tasks may still run is pinned (partition_clean): not evictable.
    if (g_spill.load(std::memory_order_relaxed) == nullptr || d->spill == nullptr || d->disk_valid ||
        d->content.load(std::memory_order_acquire) != 0 || !evictable(d)) {
        return false;
    }
    const std::size_t limit = memory_limit();
    return limit != 0 && memory_used() >= limit - limit / 8;
}

/// A reservation waiting for memory may evict a handle now (one became idle, or clean).
void tell_spill_waiters() noexcept {
    g_spill_epoch.fetch_add(1, std::memory_order_acq_rel);
    detail::wake_in_flight_waiters();
}

void clean_job(void* p) noexcept {
    auto* d = static_cast<data*>(p);
    const spill_ops* o = g_spill.load(std::memory_order_acquire);
    const bool stored = o != nullptr && o->store(d);  // no lock held: I/O
    const bool waiters = g_spill_waiters.load(std::memory_order_acquire) != 0;
    {
        spin_guard g(d->g.lock);
        // Submissions and acquisitions wait for the mark; a writer that came anyway (an internal
        // access of partitioning) makes what was written stale.
        d->disk_valid = d->disk_valid || (stored && d->writers == d->clean_writers);
        d->cleaning = false;
    }  // d may be freed from here on (destroy_data waits for the mark)
    g_cleaning.fetch_sub(1, std::memory_order_acq_rel);
    if (waiters) {
        tell_spill_waiters();
    }
}

}  // namespace

void drop_user(data* d) noexcept {
    d->g.lock.lock();
    gate::wakeups w;
    bool last = --d->users == 0;
    bool free_it = last && d->free_when_unused;
    if (last && !free_it) {
        w = d->g.notify_locked();
    }
    const bool idle_now = last && !free_it && d->allocated && g_spill_waiters.load(std::memory_order_acquire) != 0;
    const bool clean = last && !free_it && wants_cleaning(d);
    if (clean) {
        d->cleaning = true;
        d->clean_writers = d->writers;
    }
    d->g.lock.unlock();  // unregister() may free d from here on (but waits for a cleaning mark)
    gate::deliver(w);
    if (clean) {
        g_cleaning.fetch_add(1, std::memory_order_acq_rel);
        if (!sched::blocking_start(&clean_job, d)) {
            {
                spin_guard g(d->g.lock);
                d->cleaning = false;
            }
            g_cleaning.fetch_sub(1, std::memory_order_acq_rel);
        }
    }
    if (idle_now && !clean) {  // a reservation waiting for memory may evict it now
        tell_spill_waiters();
    }
    if (free_it) {
        destroy_data(d);  // unregister_submit() left it to the last user
    }
}

void detach_buffers(task* t) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        if (combined_mode(t, i) >= 0) {
            drop_user(t->bufs[i].d);
        }
    }
}

void granted(task* a) noexcept {
    data* d = a->bufs[0].d;
    settle_content(d, a->bufs[0].mode);
    // Read before the acquisition is visible: release() clears it.
    callback_fn cb = a->callback;
    void* arg = a->callback_arg;
    d->g.lock.lock();
    d->acquired.push_back(a);  // keeps the creator's reference until release()
    if (cb != nullptr) {
        ++d->grants_running;  // unregister() waits for the callback, which may release
    }
    d->g.lock.unlock();
    a->g.lock.lock();
    a->granted = true;
    gate::wakeups w = a->g.notify_locked();
    a->g.lock.unlock();
    gate::deliver(w);  // a synchronous acquire() returns from here on
    if (cb != nullptr) {
        cb(arg);  // acquire_async(): may release at once
        d->g.lock.lock();
        gate::wakeups u;
        if (--d->grants_running == 0) {
            u = d->g.notify_locked();
        }
        d->g.lock.unlock();  // unregister() may free d from here on
        gate::deliver(u);
    }
}

}  // namespace detail

status register_variable(data** out, void* ptr, std::size_t size) noexcept {
    status st = detail::new_handle(out, interface_id::variable);
    if (st.ok()) {
        auto p = reinterpret_cast<std::uintptr_t>(ptr);
        (*out)->iface.var = {interface_id::variable, p, p, 0, size};
    }
    return detail::listed(st, out);
}

status register_vector(data** out, void* ptr, std::uint32_t nx, std::size_t elemsize) noexcept {
    status st = detail::new_handle(out, interface_id::vector);
    if (st.ok()) {
        auto p = reinterpret_cast<std::uintptr_t>(ptr);
        (*out)->iface.vec = {interface_id::vector, p, p, 0, nx, elemsize, 0, nx * elemsize};
    }
    return detail::listed(st, out);
}

status register_matrix(data** out, void* ptr, std::uint32_t ld, std::uint32_t nx, std::uint32_t ny,
                       std::size_t elemsize) noexcept {
    if (ld < nx && ny > 1) {  // one row: the leading dimension is never used (StarPU takes any)
        MPC_LOG(error, tg, "register_matrix: leading dimension %u is smaller than the row length %u", ld, nx);
        return {errc::invalid_argument, "matrix ld < nx"};
    }
    status st = detail::new_handle(out, interface_id::matrix);
    if (st.ok()) {
        auto p = reinterpret_cast<std::uintptr_t>(ptr);
        std::size_t alloc = ny == 0 ? 0 : (static_cast<std::size_t>(ld) * (ny - 1) + nx) * elemsize;
        (*out)->iface.mat = {interface_id::matrix, p, p, 0, nx, ny, ld, elemsize, alloc};
    }
    return detail::listed(st, out);
}

status register_block(data** out, void* ptr, std::uint32_t ldy, std::uint32_t ldz, std::uint32_t nx,
                      std::uint32_t ny, std::uint32_t nz, std::size_t elemsize) noexcept {
    // Rows must not overlap, nor planes: a plane spans ldy * (ny - 1) + nx elements.
    if (ldy < nx || (nz > 1 && ny > 0 && static_cast<std::uint64_t>(ldz) < static_cast<std::uint64_t>(ldy) * (ny - 1) + nx)) {
        MPC_LOG(error, tg, "register_block: leading dimensions ldy %u, ldz %u too small for %u x %u x %u", ldy, ldz,
                nx, ny, nz);
        return {errc::invalid_argument, "block leading dimensions too small"};
    }
    status st = detail::new_handle(out, interface_id::block);
    if (st.ok()) {
        auto p = reinterpret_cast<std::uintptr_t>(ptr);
        (*out)->iface.blk = {interface_id::block, p, p, 0, nx, ny, nz, ldy, ldz, elemsize};
    }
    return detail::listed(st, out);
}

void* interface_of(data* d) noexcept { return d->ifp; }
interface_id interface_of_kind(const data* d) noexcept { return d->id; }

void set_sequential_consistency(data* d, bool on) noexcept {
    // The history is kept: tasks submitted while the flag is off wait for the tasks submitted
    // before (and are arbitrated among themselves); tasks submitted after it is switched back
    // on follow that history, not the tasks submitted while it was off (docs/taskgraph.md).
    spin_guard g(d->g.lock);
    d->seq = on;
}

bool sequential_consistency(const data* d) noexcept { return d->seq; }
void set_default_sequential_consistency(bool on) noexcept { g_default_seq.store(on, std::memory_order_relaxed); }
bool default_sequential_consistency() noexcept { return g_default_seq.load(std::memory_order_relaxed); }

namespace {

/// An acquisition record submitted for d in `mode`; nullptr (logged) when refused.
task* start_acquire(data* d, access_mode mode, bool seq, callback_fn granted, void* arg, status* st,
                    bool try_only = false) noexcept {
    if (*st = live(d, "acquire"); !st->ok()) {
        return nullptr;
    }
    if ((mode & access_rw) == 0 || (mode & ~access_rw) != 0) {
        MPC_LOG(error, tg, "acquire: access mode %u not supported (R, W, RW)", mode);
        *st = {errc::invalid_argument, "bad access mode"};
        return nullptr;
    }
    bool pinned = false;
    if (*st = detail::ensure_memory(d, &pinned); !st->ok()) {
        return nullptr;
    }
    result<task*> r = task_create();
    if (!r) {
        if (pinned) {
            spin_guard g(d->g.lock);
            --d->pins;
        }
        *st = r.error();
        return nullptr;
    }
    task* a = *r;
    a->kind = task_kind::acquire;
    a->name = "application acquire";
    a->state = task_state::submitted;
    a->bufs[0] = {d, mode};
    a->bufs[0].pinned = pinned;
    a->nbuffers = 1;
    a->callback = granted;  // for acquisitions: run when granted (now_ready)
    a->callback_arg = arg;
    a->try_only = try_only;
    *st = detail::attach_buffers(a, seq);
    detail::unpin_buffers(a);
    if (!st->ok()) {
        task_release(a);
        return nullptr;
    }
    detail::task_ref(a);  // the runtime's, dropped when release() completes it
    return a;
}

}  // namespace

status acquire(data* d, access_mode mode) noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "data acquire called from inside a task or callback: it would wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    status st;
    task* a = start_acquire(d, mode, true, nullptr, nullptr, &st);
    if (a == nullptr) {
        return st;
    }
    detail::task_ref(a);  // ours while we wait: once granted, release() may come at any time
    detail::dependency_met(a);
    a->g.lock.lock();
    a->g.wait_locked([a] { return a->granted; }, "mpc::tg::acquire");
    detail::task_unref(a);
    return {};
}

status acquire_try(data* d, access_mode mode) noexcept {
    status st;
    task* a = start_acquire(d, mode, true, nullptr, nullptr, &st, true);
    if (a == nullptr) {
        return st;
    }
    detail::dependency_met(a);  // nothing to wait for: granted here (but see tg.hpp on arbitration)
    return {};
}

status acquire_async(data* d, access_mode mode, callback_fn granted, void* arg, bool seq) noexcept {
    status st;
    task* a = start_acquire(d, mode, seq, granted, arg, &st);
    if (a == nullptr) {
        return st;
    }
    detail::dependency_met(a);  // granted now, or by the end of the last conflicting task
    return {};
}

status release(data* d) noexcept {
    if (status st = live(d, "release"); !st.ok()) {
        return st;
    }
    d->g.lock.lock();
    if (d->acquired.empty()) {
        d->g.lock.unlock();
        MPC_LOG(error, tg, "release of a handle the application has not acquired");
        return {errc::invalid_argument, "handle not acquired"};
    }
    task* a = d->acquired.back();
    d->acquired.pop_back();
    d->g.lock.unlock();
    a->callback = nullptr;  // the grant callback ran already (release() may be called from it)
    detail::complete(a);
    task_release(a);  // the reference the acquisition kept in d->acquired
    return {};
}

status unregister(data* d) noexcept {
    if (status st = live(d, "unregister"); !st.ok()) {
        return st;
    }
    if (detail::in_task()) {
        MPC_LOG(error, tg, "data unregister called from inside a task or callback: it would wait for ever for the "
                           "task itself");
        return {errc::busy, "blocking call from a task"};
    }
    if (status st = detail::check_unpartitioned(d, "unregister"); !st.ok()) {
        return st;
    }
    d->g.lock.lock();
    // An asynchronous acquisition's callback (starpu_data_acquire_cb, invalidate_submit) may be
    // about to release: wait for it before judging what the application holds.
    d->g.wait_locked([d] { return d->grants_running == 0; }, "mpc::tg::unregister (acquisition callback)");
    d->g.lock.lock();
    if (!d->acquired.empty()) {
        d->g.lock.unlock();
        MPC_LOG(error, tg, "unregister of a handle the application still holds acquired: release it first");
        return {errc::busy, "handle acquired"};
    }
    if (d->unregistering) {
        d->g.lock.unlock();
        MPC_LOG(error, tg, "unregister of a handle that another thread is unregistering");
        return {errc::busy, "handle being unregistered"};
    }
    task* reduction = detail::close_phases(d, access_rw);  // a pending reduction still happens
    d->unregistering = true;  // no task may name it from now on
    d->g.lock.unlock();
    if (reduction != nullptr) {
        detail::launch_internal(reduction);
    }
    d->g.lock.lock();
    d->g.wait_locked([d] { return d->users == 0; }, "mpc::tg::unregister");
    detail::destroy_data(d);
    return {};
}

status unregister_submit(data* d) noexcept {
    if (status st = live(d, "unregister_submit"); !st.ok()) {
        return st;
    }
    if (status st = detail::check_unpartitioned(d, "unregister_submit"); !st.ok()) {
        return st;
    }
    d->g.lock.lock();
    if (d->unregistering) {
        d->g.lock.unlock();
        MPC_LOG(error, tg, "unregister_submit of a handle that is being unregistered");
        return {errc::busy, "handle being unregistered"};
    }
    task* reduction = detail::close_phases(d, access_rw);
    if (reduction != nullptr) {
        ++d->users;  // held until the reduction is launched: it counts itself as a user too
    }
    d->unregistering = true;
    bool now = d->users == 0;
    d->free_when_unused = !now;
    d->g.lock.unlock();
    if (reduction != nullptr) {
        detail::launch_internal(reduction);
        detail::drop_user(d);
    } else if (now) {
        detail::destroy_data(d);
    }
    return {};
}

// ---- Eviction (out of core) ------------------------------------------------------------------
//
// With a disk node registered (starpu_disk.cpp), a reservation that does not fit under the
// memory limit evicts the main-memory copies of idle handles whose memory the runtime made
// (registered on node -1 or on a disk), least recently used first: the copy is written to the
// disk when it holds a value the disk does not have, then freed. The next submission or
// acquisition naming the handle makes its memory again and reads the disk copy back
// (ensure_memory). A handle is idle when no submitted task, acquisition or submission in
// progress names it: ensure_memory() pins it from the submission's look at its memory until
// the submission has counted itself as a user (unpin_buffers), so a task never runs on a
// freed copy. Handles the application gave memory for, partitioned handles and their
// children, handles with reduction methods and those with the ooc flag off are never evicted.

void detail::stamp_use(data* d) noexcept {
    if (g_spill.load(std::memory_order_relaxed) != nullptr) {
        spin_guard g(d->g.lock);
        d->last_use = g_use_clock.fetch_add(1, std::memory_order_relaxed) + 1;
    }
}

void detail::set_spill_ops(const spill_ops* o) noexcept { g_spill.store(o, std::memory_order_release); }
const detail::spill_ops* detail::spill_hooks() noexcept { return g_spill.load(std::memory_order_acquire); }
unsigned detail::spill_epoch() noexcept { return g_spill_epoch.load(std::memory_order_acquire); }
int detail::cleaning_out() noexcept { return g_cleaning.load(std::memory_order_acquire); }
void detail::spill_waiting(bool on) noexcept { g_spill_waiters.fetch_add(on ? 1 : -1, std::memory_order_acq_rel); }

void detail::unpin(data* d) noexcept {
    bool idle_now = false;
    {
        spin_guard g(d->g.lock);
        idle_now = --d->pins == 0 && d->users == 0 && d->allocated && g_spill_waiters.load(std::memory_order_acquire) != 0;
    }
    if (idle_now) {
        tell_spill_waiters();  // a reservation waiting for memory may evict it now
    }
}

void detail::unpin_buffers(task* t) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        if (t->bufs[i].pinned) {
            data* d = t->bufs[i].d;
            spin_guard g(d->g.lock);
            --d->pins;
            t->bufs[i].pinned = false;
        }
    }
}

namespace {

/// Whether d's main-memory copy may be evicted now (d->g.lock held).
bool evictable(const data* d) noexcept {
    return d->allocated && d->runtime_memory && !d->allocating && !d->evicting && !d->cleaning && d->users == 0 &&
           d->pins == 0 &&
           d->acquired.empty() && d->grants_running == 0 && !d->unregistering && d->ooc.load(std::memory_order_relaxed) &&
           d->parent == nullptr && d->plans.empty() && !d->partitioned && !d->ro_partitioned &&
           !d->plan_involved.load(std::memory_order_relaxed) && !d->copies && d->redux_tasks.empty() &&
           d->commute_group.empty() && d->content.load(std::memory_order_acquire) != 2 &&  // init running
           d->content.load(std::memory_order_relaxed) != detail::content_loading;
}

struct victim {
    data* d;
    bool important;
    std::uint64_t used;
    std::size_t bytes;
};

}  // namespace

std::size_t detail::spill_evict(std::size_t want) noexcept {
    const spill_ops* o = g_spill.load(std::memory_order_acquire);
    if (o == nullptr) {
        return 0;
    }
    std::vector<victim> picked;
    try {
        std::vector<victim> all;
        spin_guard rg(g_registry.lock);
        for (data* d = g_registry.first; d != nullptr; d = d->reg_next) {
            if (!d->g.lock.try_lock()) {
                continue;  // busy now: not idle anyway
            }
            if (evictable(d)) {
                all.push_back({d, d->important, d->last_use, d->ops->size(d->ifp, d->ops->ctx, d)});
            }
            d->g.lock.unlock();
        }
        std::sort(all.begin(), all.end(), [](const victim& a, const victim& b) {
            return a.important != b.important ? b.important : a.used < b.used;  // important ones last
        });
        picked.reserve(all.size());  // no allocation (nor bad_alloc) once a handle is marked
        std::size_t sum = 0;
        for (const victim& v : all) {
            if (want != 0 && sum >= want) {
                break;
            }
            if (!v.d->g.lock.try_lock()) {
                continue;
            }
            if (evictable(v.d)) {
                v.d->evicting = true;  // destroy_data() and ensure_memory() wait for the end
                picked.push_back(v);
                sum += v.bytes;
            }
            v.d->g.lock.unlock();
        }
    } catch (const std::bad_alloc&) {
        // no room for the list: evict what was picked
    }
    std::size_t freed = 0;
    for (const victim& v : picked) {
        data* d = v.d;
        d->g.lock.lock();
        const int c = d->content.load(std::memory_order_acquire);
        const bool write = c == 0 && !d->disk_valid;
        d->g.lock.unlock();
        const bool stored = !write || o->store(d);  // no lock held: I/O
        if (stored) {
            d->ops->release(d->ifp, d->ops->ctx);  // the evicting mark keeps everybody else out
        }
        spin_guard g(d->g.lock);
        if (stored) {
            d->disk_valid = d->disk_valid || write || c == detail::content_on_disk;  // never read back: still the disk's
            d->allocated = false;
            d->needs_memory.store(true, std::memory_order_release);
            freed += v.bytes;
        }
        d->evicting = false;
    }
    if (freed != 0) {
        MPC_LOG(debug, tg, "memory limit: %zu bytes of %zu handle(s) evicted to disk", freed, picked.size());
        mem_release(freed);
    }
    return freed;
}

}  // namespace mpc::tg
