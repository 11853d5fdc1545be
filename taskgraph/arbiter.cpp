/// \file
/// Arbitration of handles without sequential consistency, and of commute accesses.
///
/// Inferred dependencies order conflicting accesses on a handle in submission order. When they
/// are off (for the handle, or for the task), tasks may run in any order, but, as in StarPU,
/// never at the same time in conflicting modes: a ready task first takes each such handle,
/// shared for reading or exclusive for writing. It takes them in address order (the classic
/// cure for lock-order deadlocks: no cycle of tasks each holding what the next waits for), and
/// waits in the handle's FIFO when the handle is busy; the FIFO also keeps a stream of readers
/// from starving a writer. Waiting parks nothing: the task sits in the queue, and the task that
/// releases the handle hands it over and continues the waiter's acquisition.
///
/// Arbiters (StarPU's starpu_arbiter_t): the handles assigned to one are a single step of that
/// order, at the arbiter's address. Under the arbiter's lock a task takes all its handles of the
/// arbiter, or none and waits in the arbiter's queue. A release retakes the lock, gives the
/// handles back and grants every waiting task that can now take all of its own, in queue
/// order but without a waiting task blocking the ones behind it (StarPU's opportunistic
/// centralised solution: tasks holding some handles while they wait for others no longer hold
/// up the tasks that need only those).

#include <cstdint>
#include <new>

#include "lib/log.hpp"

#include "taskgraph/detail.hpp"

namespace mpc::tg::detail {
namespace {

bool compatible(const data* d, access_mode m) noexcept {
    return !d->arb_writer && ((m & access_write) == 0 || d->arb_readers == 0);
}

void take(data* d, access_mode m) noexcept {
    if ((m & access_write) != 0) {
        d->arb_writer = true;
    } else {
        ++d->arb_readers;
    }
}

/// The address at which buffer i is taken: its arbiter's, or the handle's own.
std::uintptr_t step_of(const task* t, int i) noexcept {
    const data* d = t->bufs[i].d;
    return d->arb != nullptr ? reinterpret_cast<std::uintptr_t>(d->arb) : reinterpret_cast<std::uintptr_t>(d);
}

/// t's arbitrated buffer of the lowest step above t->arb_last, or -1.
int next_arbitrated(const task* t) noexcept {
    int best = -1;
    std::uintptr_t best_addr = UINTPTR_MAX;
    for (int i = 0; i < t->nbuffers; ++i) {
        if (!t->bufs[i].arbitrated) {
            continue;
        }
        const std::uintptr_t a = step_of(t, i);
        if (a > t->arb_last && a < best_addr) {
            best = i;
            best_addr = a;
        }
    }
    return best;
}

/// Whether t can take every handle of `a` it names (a->lock held).
bool can_take_all(const task* t, const arbiter* a) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        if (t->bufs[i].arbitrated && t->bufs[i].d->arb == a) {
            const int m = combined_mode(t, i);
            if (m >= 0 && !compatible(t->bufs[i].d, static_cast<access_mode>(m))) {
                return false;
            }
        }
    }
    return true;
}

/// Takes (give: gives back) every handle of `a` that t names (a->lock held).
void take_all(const task* t, const arbiter* a, bool give) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        if (t->bufs[i].arbitrated && t->bufs[i].d->arb == a) {
            const int m = combined_mode(t, i);
            if (m < 0) {
                continue;  // an earlier buffer stands for this handle
            }
            data* d = t->bufs[i].d;
            if (!give) {
                take(d, static_cast<access_mode>(m));
            } else if ((m & access_write) != 0) {
                d->arb_writer = false;
            } else {
                --d->arb_readers;
            }
        }
    }
}

/// Continues the acquisitions of a chain of granted tasks (linked through next).
void continue_granted(task* granted) noexcept {
    while (granted != nullptr) {
        task* w = granted;
        granted = w->next;
        w->next = nullptr;
        arbitrate(w);  // its next handles, then ready
    }
}

/// Gives t's handles of `a` back and grants the waiting tasks that can now take theirs.
void release_arbiter(task* t, arbiter* a) noexcept {
    task* granted = nullptr;
    {
        spin_guard g(a->lock);
        take_all(t, a, true);
        sched::detail::fifo<task> still;
        while (!a->waiting.empty()) {
            task* w = a->waiting.pop_front();
            if (can_take_all(w, a)) {
                take_all(w, a, false);
                w->arb_last = reinterpret_cast<std::uintptr_t>(a);
                w->next = granted;
                granted = w;
            } else {
                still.push_back(w);
            }
        }
        while (!still.empty()) {
            a->waiting.push_back(still.pop_front());
        }
    }
    continue_granted(granted);
}

}  // namespace

void arbitrate(task* t) noexcept {
    for (;;) {
        int i = next_arbitrated(t);
        if (i < 0) {
            now_ready(t);
            return;
        }
        data* d = t->bufs[i].d;
        if (arbiter* a = d->arb; a != nullptr) {
            spin_guard g(a->lock);
            if (can_take_all(t, a)) {
                take_all(t, a, false);
                t->arb_last = reinterpret_cast<std::uintptr_t>(a);
                continue;
            }
            a->waiting.push_back(t);  // release_arbiter() continues from here
            return;
        }
        auto m = static_cast<access_mode>(combined_mode(t, i));
        spin_guard g(d->g.lock);
        if (d->arb_waiters.empty() && compatible(d, m)) {
            take(d, m);
            t->arb_last = reinterpret_cast<std::uintptr_t>(d);
            continue;
        }
        t->arb_wait_mode = m;
        d->arb_waiters.push_back(t);  // release_arbitrated() continues from here
        return;
    }
}

void release_arbitrated(task* t) noexcept {
    for (int i = 0; i < t->nbuffers; ++i) {
        if (!t->bufs[i].arbitrated) {
            continue;
        }
        data* d = t->bufs[i].d;
        if (arbiter* a = d->arb; a != nullptr) {
            bool first = true;  // each arbiter once: its first buffer among t's
            for (int j = 0; j < i && first; ++j) {
                first = !(t->bufs[j].arbitrated && t->bufs[j].d->arb == a);
            }
            if (first) {
                release_arbiter(t, a);
            }
            continue;
        }
        const int cm = combined_mode(t, i);
        if (cm < 0) {
            continue;  // an earlier buffer stands for this handle
        }
        auto m = static_cast<access_mode>(cm);
        task* granted = nullptr;  // chain through next, in grant order reversed
        d->g.lock.lock();
        if ((m & access_write) != 0) {
            d->arb_writer = false;
        } else {
            --d->arb_readers;
        }
        while (!d->arb_waiters.empty() && compatible(d, d->arb_waiters.front()->arb_wait_mode)) {
            task* w = d->arb_waiters.pop_front();
            take(d, w->arb_wait_mode);
            w->arb_last = reinterpret_cast<std::uintptr_t>(d);
            w->next = granted;
            granted = w;
        }
        d->g.lock.unlock();
        continue_granted(granted);
    }
}

}  // namespace mpc::tg::detail

namespace mpc::tg {

result<arbiter*> arbiter_create() noexcept {
    auto* a = new (std::nothrow) arbiter;
    if (a == nullptr) {
        return status{errc::no_memory, "no memory for an arbiter"};
    }
    return a;
}

status assign_arbiter(data* d, arbiter* a) noexcept {
    if (d == nullptr) {
        return {errc::invalid_argument, "assign_arbiter: no handle"};
    }
    {
        spin_guard g(d->g.lock);
        if (d->ever_used) {
            MPC_LOG(error, tg, "starpu_data_assign_arbiter: the handle has been accessed already; "
                               "an arbiter must be assigned before the first access");
            return {errc::busy, "arbiter assigned after the handle's first access"};
        }
    }
    if (d->arb == a) {
        return {};
    }
    if (d->arb != nullptr) {
        spin_guard g(d->arb->lock);
        --d->arb->handles;
    }
    if (a != nullptr) {
        spin_guard g(a->lock);
        ++a->handles;
    }
    d->arb = a;
    return {};
}

status arbiter_destroy(arbiter* a) noexcept {
    if (a == nullptr) {
        return {};
    }
    long n = 0;
    {
        spin_guard g(a->lock);
        n = a->handles;
    }
    if (n != 0) {
        MPC_LOG(error, tg, "starpu_arbiter_destroy: %ld handle(s) assigned to the arbiter are still registered",
                n);
        return {errc::busy, "the arbiter's handles are still registered"};
    }
    delete a;
    return {};
}

}  // namespace mpc::tg
