/// \file
/// Recycled records: the storage of task records (core tasks, StarPU task structures) is kept
/// for reuse instead of going back to the heap at every task's end.
///
/// Design. A task is usually made by the program (on VP 0, or a rank's VP) and ends on a
/// worker of another VP, so a plain free list per VP would pile records up where they end and
/// leave the submitter allocating. Each record therefore has a home (the slot of the VP that
/// made its chunk) written in a header before it:
/// - a record freed on its home VP goes onto the home's `local` list: no lock, no atomic (ULTs
///   are cooperative: nothing else runs on the VP between the read of current_vp() and the
///   push);
/// - a record freed elsewhere is pushed onto the home's `remote` stack (a compare-and-swap);
///   the home takes the whole stack with one exchange when its local list runs dry, so the
///   stack has one consumer and no ABA problem;
/// - threads outside the engine share one more slot, under a spinlock.
/// Storage comes in chunks mapped with mmap, not from the heap: a record outlives the task (an
/// MPI rank, with its own address slice) that first made it, and must not live in that rank's
/// slice. Chunks are never unmapped: the pool holds the largest number of records that were
/// alive at once, until the process ends. Under AddressSanitizer a free record is poisoned, so
/// a use after its end is still reported.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "lib/spinlock.hpp"
#include "scheduler/sched.hpp"

namespace mpc::tg::detail {

class record_pool {
public:
    /// A pool of records of `size` bytes (alignment at most 16).
    explicit constexpr record_pool(std::size_t size) noexcept : size_((size + 15) / 16 * 16 + sizeof(header)) {}
    record_pool(const record_pool&) = delete;
    record_pool& operator=(const record_pool&) = delete;

    /// Storage for one record, or nullptr when no memory can be mapped. Never blocks.
    void* get() noexcept;
    /// Gives back storage from get() (from any thread or VP).
    void put(void* p) noexcept;

    /// Records mapped so far (for tests: recycling keeps it at the peak of live records).
    std::size_t mapped() const noexcept { return mapped_.load(std::memory_order_relaxed); }

private:
    struct alignas(16) header {
        header* next;
        std::uint32_t home;
        std::uint32_t magic;
    };
    struct alignas(64) cache {
        header* local = nullptr;
        std::atomic<header*> remote{nullptr};
        spinlock lock;  ///< the shared slot's (threads outside the engine) only
    };
    static constexpr std::uint32_t shared_slot = sched::max_vps;
    static constexpr std::uint32_t live_magic = 0x7467706c;  // "tgpl"

    header* refill(std::uint32_t slot) noexcept;
    header* take(cache& c, std::uint32_t slot) noexcept;

    std::size_t size_;
    std::atomic<std::size_t> mapped_{0};
    cache caches_[sched::max_vps + 1];
};

/// The pool of core task records (task.cpp) and of starpu_task structures (starpu_task.cpp).
record_pool& task_pool() noexcept;
record_pool& starpu_task_pool() noexcept;

/// A T made in `pool` (nullptr on no memory), and its end.
template <class T>
T* pool_new(record_pool& pool) noexcept {
    static_assert(alignof(T) <= 16);
    void* p = pool.get();
    return p != nullptr ? new (p) T : nullptr;
}
template <class T>
void pool_delete(record_pool& pool, T* t) noexcept {
    t->~T();
    pool.put(t);
}

}  // namespace mpc::tg::detail
