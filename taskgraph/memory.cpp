/// \file
/// Memory control: submission watermarks and the limit on memory the runtime allocates for data.
///
/// Watermarks (StarPU's STARPU_LIMIT_MAX/MIN_SUBMITTED_TASKS): a submission from the
/// application that finds `max` tasks in flight waits until at most `min` are, so a long
/// submission loop keeps a bounded graph in memory. Submissions from tasks never wait (they
/// would wait for themselves).
///
/// Memory limit (StarPU's STARPU_LIMIT_CPU_MEM): what the runtime allocates for data — scratch
/// buffers, per-worker redux copies, the memory of handles registered without any — is reserved
/// against the limit when the task (or handle) is submitted (registered), where waiting is
/// safe: not on a worker, which might be the one that would give memory back. A reservation
/// that does not fit waits while tasks are in flight (each end may give memory back) and fails
/// with errc::no_memory when nothing is in flight any more, or at once when called from a task
/// or when the request alone exceeds the limit: the program gets -ENOMEM, never a crash.
/// Scratch memory goes back when its task ends, redux copies when their reduction ends, or
/// stays reserved while the worker's cache keeps the buffer (scratch_cache.cpp): a reservation
/// that does not fit evicts cached buffers before it waits.

#include <atomic>

#include "lib/log.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

std::atomic<long> g_max_submitted{0};
std::atomic<long> g_min_submitted{0};
std::atomic<std::size_t> g_limit{0};
std::atomic<std::size_t> g_used{0};

struct request {
    std::size_t bytes;
};

/// Takes r->bytes if they fit under the limit.
bool try_take(void* p) {
    const std::size_t want = static_cast<request*>(p)->bytes;
    const std::size_t limit = g_limit.load(std::memory_order_relaxed);
    std::size_t used = g_used.load(std::memory_order_relaxed);
    do {
        if (limit != 0 && used + want > limit) {
            return false;
        }
    } while (!g_used.compare_exchange_weak(used, used + want, std::memory_order_acq_rel));
    return true;
}

/// try_take() again after freeing as many cached buffers as make room (one attempt).
bool take_evicting(request* r) noexcept {
    const std::size_t used = g_used.load(std::memory_order_relaxed);
    const std::size_t limit = g_limit.load(std::memory_order_relaxed);
    return limit != 0 && used + r->bytes > limit && detail::cache_evict(used + r->bytes - limit) != 0 && try_take(r);
}

/// try_take() again after evicting idle handles to disk (data.cpp), when disks exist.
bool take_spilling(request* r) noexcept {
    const std::size_t used = g_used.load(std::memory_order_relaxed);
    const std::size_t limit = g_limit.load(std::memory_order_relaxed);
    return limit != 0 && detail::spill_hooks() != nullptr &&
           detail::spill_evict(used + r->bytes > limit ? used + r->bytes - limit : r->bytes) != 0 && try_take(r);
}

/// take_spilling() after the write-behind jobs out have ended (they make idle handles clean,
/// hence evictable: until then eviction may find nothing it can take). Yields meanwhile.
bool take_after_cleaning(request* r) noexcept {
    for (int n = detail::cleaning_out(); n != 0; n = detail::cleaning_out()) {
        const unsigned epoch = detail::spill_epoch();
        while (detail::cleaning_out() == n && detail::spill_epoch() == epoch) {  // until one ends
            sched::yield();
            cpu_relax();
        }
        if (try_take(r) || take_spilling(r)) {
            return true;
        }
    }
    return false;
}

/// What a reservation waiting for memory looks at: the request, and the eviction epoch it saw.
struct spill_wait {
    request* r;
    unsigned epoch;
    bool took;
};

/// wait_in_flight()'s condition: the memory was taken, or a handle became idle (no eviction
/// here: the wait holds the runtime's lock, and eviction writes to disk).
bool taken_or_idle(void* p) {
    auto* w = static_cast<spill_wait*>(p);
    if (try_take(w->r)) {
        w->took = true;
        return true;
    }
    return detail::spill_hooks() != nullptr && detail::spill_epoch() != w->epoch;
}

}  // namespace

void set_submission_limits(long max, long min) noexcept {
    if (max <= 0) {
        max = 0;
        min = 0;
    } else if (min < 0 || min > max) {
        min = max * 9 / 10;
    }
    g_min_submitted.store(min, std::memory_order_relaxed);
    g_max_submitted.store(max, std::memory_order_relaxed);
}

void set_memory_limit(std::size_t bytes) noexcept {
    g_limit.store(bytes, std::memory_order_relaxed);
    detail::wake_in_flight_waiters();  // a larger limit may let a waiter go
}

std::size_t memory_limit() noexcept { return g_limit.load(std::memory_order_relaxed); }
std::size_t memory_used() noexcept { return g_used.load(std::memory_order_relaxed); }

namespace detail {

void throttle_submission() noexcept {
    const long max = g_max_submitted.load(std::memory_order_relaxed);
    if (max > 0 && tasks_in_flight() >= max) {
        wait_for_n_submitted(g_min_submitted.load(std::memory_order_relaxed)).ignore();
    }
}

status mem_reserve(std::size_t bytes, const char* what) noexcept {
    if (bytes == 0) {
        return {};
    }
    request r{bytes};
    if (try_take(&r)) {
        return {};
    }
    const std::size_t limit = g_limit.load(std::memory_order_relaxed);
    if (bytes > limit) {
        MPC_LOG(error, tg, "%s: %zu bytes needed, more than the runtime's memory limit (%zu bytes)", what, bytes, limit);
        return {errc::no_memory, "request above the memory limit"};
    }
    // The workers' cached buffers go first: as few as make room, then all of them, and none is
    // cached while this waits (every task that ends gives its buffers back). Then, with disks,
    // idle handles' main-memory copies (data.cpp, "Eviction").
    if (take_evicting(&r) || take_spilling(&r)) {
        return {};
    }
    cache_pressure(true);
    cache_evict(0);
    const bool task = in_task();
    bool ok = try_take(&r) || take_spilling(&r) || take_after_cleaning(&r);
    if (!ok && !task) {
        const bool disks = spill_hooks() != nullptr;
        if (disks) {
            spill_waiting(true);
        }
        for (;;) {
            // Woken when memory goes back, when nothing is in flight any more, or (with disks)
            // when a handle's last user leaves: it may be evicted now.
            spill_wait w{&r, spill_epoch(), false};
            const bool woke = wait_in_flight(&taken_or_idle, &w, "mpc::tg memory limit");
            if (w.took || take_spilling(&r) || take_after_cleaning(&r)) {
                ok = true;
                break;
            }
            if (!woke || !disks) {
                break;  // nothing in flight can give memory back
            }
        }
        if (disks) {
            spill_waiting(false);
        }
    }
    cache_pressure(false);
    if (ok) {
        return {};
    }
    if (task) {
        MPC_LOG(error, tg, "%s: %zu bytes needed; the memory limit is reached, and a task cannot wait for memory", what,
                bytes);
        return {errc::no_memory, "memory limit reached (submission from a task)"};
    }
    MPC_LOG(error, tg, "%s: %zu bytes needed; the memory limit (%zu bytes, %zu in use) is reached and no task in "
                       "flight can give memory back", what, bytes, limit, memory_used());
    return {errc::no_memory, "memory limit reached"};
}

void mem_release(std::size_t bytes) noexcept {
    if (bytes == 0) {
        return;
    }
    g_used.fetch_sub(bytes, std::memory_order_acq_rel);
    if (g_limit.load(std::memory_order_relaxed) != 0) {
        wake_in_flight_waiters();
    }
}

}  // namespace detail

namespace {
/// Whether r->bytes more fit, taking nothing.
bool room_for(void* p) {
    const std::size_t want = static_cast<request*>(p)->bytes;
    const std::size_t limit = g_limit.load(std::memory_order_relaxed);
    return limit == 0 || g_used.load(std::memory_order_relaxed) + want <= limit;
}
}  // namespace

status account_memory(std::size_t bytes, account_how how) noexcept {
    request r{bytes};
    switch (how) {
    case account_how::overflow:
        g_used.fetch_add(bytes, std::memory_order_acq_rel);
        return {};
    case account_how::wait:
        return detail::mem_reserve(bytes, "starpu_memory_allocate(STARPU_MEMORY_WAIT)");
    case account_how::reclaim:
        if (try_take(&r) || take_evicting(&r) || take_spilling(&r)) {
            return {};
        }
        break;
    case account_how::now:
        if (try_take(&r)) {
            return {};
        }
        break;
    }
    return {errc::no_memory, "memory limit reached"};
}

void unaccount_memory(std::size_t bytes) noexcept { detail::mem_release(bytes); }

bool wait_memory_room(std::size_t bytes) noexcept {
    request r{bytes};
    if (room_for(&r)) {
        return true;
    }
    if (bytes > g_limit.load(std::memory_order_relaxed)) {
        MPC_LOG(error, tg, "starpu_memory_wait_available: %zu bytes are more than the memory limit (%zu bytes)", bytes,
                g_limit.load(std::memory_order_relaxed));
        return false;
    }
    if (detail::in_task() || !detail::wait_in_flight(&room_for, &r, "mpc::tg memory limit")) {
        MPC_LOG(error, tg, "starpu_memory_wait_available: %zu bytes do not fit under the memory limit and no task in "
                           "flight can give memory back", bytes);
        return false;
    }
    return true;
}

}  // namespace mpc::tg
