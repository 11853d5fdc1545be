/// \file
/// Arbitration of handles without sequential consistency.
///
/// Inferred dependencies order conflicting accesses on a handle in submission order. When they
/// are off (for the handle, or for the task), tasks may run in any order, but, as in StarPU,
/// never at the same time in conflicting modes: a ready task first takes each such handle,
/// shared for reading or exclusive for writing. It takes them in address order (the classic
/// cure for lock-order deadlocks: no cycle of tasks each holding what the next waits for), and
/// waits in the handle's FIFO when the handle is busy; the FIFO also keeps a stream of readers
/// from starving a writer. Waiting parks nothing: the task sits in the queue, and the task that
/// releases the handle hands it over and continues the waiter's acquisition.

#include <cstdint>

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

/// t's arbitrated buffer on the lowest handle address above t->arb_last, or -1.
int next_arbitrated(const task* t) noexcept {
    int best = -1;
    std::uintptr_t best_addr = UINTPTR_MAX;
    for (int i = 0; i < t->nbuffers; ++i) {
        auto a = reinterpret_cast<std::uintptr_t>(t->bufs[i].d);
        if (t->bufs[i].arbitrated && a > t->arb_last && a < best_addr) {
            best = i;
            best_addr = a;
        }
    }
    return best;
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
        auto m = static_cast<access_mode>(combined_mode(t, i));
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
        while (granted != nullptr) {
            task* w = granted;
            granted = w->next;
            w->next = nullptr;
            arbitrate(w);  // its next handles, then ready
        }
    }
}

}  // namespace mpc::tg::detail
