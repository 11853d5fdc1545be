/// \file
/// Per-worker cache of the buffers the runtime makes for tasks: SCRATCH buffers and REDUX
/// copies (StarPU keeps such buffers too: a per-worker replicate, and a memory cache keyed by
/// footprint with `alloc_compare` to accept a buffer for another handle).
///
/// A buffer freed on a worker goes into that worker's cache instead of back to the allocator;
/// the next task on that worker that needs a buffer of the same shape (same interface ops and
/// context, same bytes, and the ops' `same_shape` accepts it: equal dimensions and element size
/// for the built-ins, `alloc_compare` or `compare` for a custom interface) takes it back. Only
/// the owning worker puts and takes; the lock (uncontended then) is there for eviction by a
/// submitting thread.
///
/// Memory limit: a cached buffer keeps its bytes reserved (memory_used() counts them). A task's
/// own reservation at submission covers the buffer it will use, so taking a cached buffer gives
/// the cache's bytes back (mem_release), and caching a freed buffer keeps the task's bytes
/// reserved instead of giving them back (the caller lowers its task's mem_reserved). A
/// reservation that does not fit evicts cached buffers first (cache_evict, from mem_reserve),
/// and while one waits for memory (cache_pressure) nothing new is cached: every task that ends
/// gives its buffers back, as without a cache. Entries also leave, oldest first, when a
/// worker's cache holds MPC_TG_SCRATCH_CACHE buffers; all leave at shutdown.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace detail {
namespace {

constexpr int max_slots = 16;

struct entry {
    void* iface = nullptr;  ///< an interface structure (malloc) holding its memory
    std::size_t bytes = 0;  ///< what the memory limit holds for it
    std::size_t isize = 0;
    const void* ctx = nullptr;
    long (*allocate)(void*, const void*) noexcept = nullptr;  ///< with ctx: the kind of buffer
    void (*release)(void*, const void*) noexcept = nullptr;
};

struct alignas(64) worker_cache {
    spinlock lock;
    int n = 0;  ///< entries, oldest first
    std::atomic<int> filled{0};  ///< n, for a look without the lock (cache_evict)
    entry e[max_slots];
    std::uint64_t hits = 0;  ///< under lock (read by cache_stats)
    std::uint64_t misses = 0;
    std::uint64_t evictions = 0;
};

worker_cache g_caches[max_workers];
std::atomic<int> g_slots{8};        ///< per worker; 0: no cache
std::atomic<int> g_pressure{0};     ///< reservations waiting for memory: nothing is cached
std::atomic<std::size_t> g_cached{0};

void drop(const entry& e) noexcept {
    e.release(e.iface, e.ctx);
    std::free(e.iface);
    g_cached.fetch_sub(e.bytes, std::memory_order_relaxed);
}

bool matches(const entry& e, const data* d, std::size_t bytes) noexcept {
    const interface_ops* o = d->ops;
    return e.bytes == bytes && e.allocate == o->allocate && e.ctx == o->ctx && e.isize == o->interface_size &&
           o->same_shape(e.iface, d->ifp, o->ctx);
}

bool cacheable(const data* d, int worker) noexcept {
    return worker >= 0 && worker < max_workers && d->ops->same_shape != nullptr &&
           g_slots.load(std::memory_order_relaxed) > 0;
}

/// Frees up to `want` bytes (0: all) of worker w's entries, oldest first; returns the bytes.
std::size_t evict_worker(int w, std::size_t want) noexcept {
    worker_cache& c = g_caches[w];
    entry out[max_slots];
    int k = 0;
    std::size_t freed = 0;
    {
        spin_guard g(c.lock);
        while (k < c.n && (want == 0 || freed < want)) {
            freed += c.e[k].bytes;
            out[k] = c.e[k];
            ++k;
        }
        for (int i = k; i < c.n; ++i) {
            c.e[i - k] = c.e[i];
        }
        c.n -= k;
        c.filled.store(c.n, std::memory_order_relaxed);
        c.evictions += static_cast<std::uint64_t>(k);
    }
    for (int i = 0; i < k; ++i) {
        drop(out[i]);
    }
    return freed;
}

}  // namespace

void* cache_take(const data* d, int worker) noexcept {
    if (!cacheable(d, worker)) {
        return nullptr;
    }
    const std::size_t bytes = d->ops->size(d->ifp, d->ops->ctx, d);
    worker_cache& c = g_caches[worker];
    void* found = nullptr;
    {
        spin_guard g(c.lock);
        for (int i = c.n - 1; i >= 0; --i) {  // the most recently freed first (warm in cache)
            if (matches(c.e[i], d, bytes)) {
                found = c.e[i].iface;
                for (int j = i + 1; j < c.n; ++j) {
                    c.e[j - 1] = c.e[j];
                }
                --c.n;
                c.filled.store(c.n, std::memory_order_relaxed);
                break;
            }
        }
        ++(found != nullptr ? c.hits : c.misses);
    }
    if (found != nullptr) {
        g_cached.fetch_sub(bytes, std::memory_order_relaxed);
        mem_release(bytes);  // the task's own reservation covers it now
    }
    return found;
}

std::size_t cache_put(const data* d, void* iface, int worker) noexcept {
    if (!cacheable(d, worker) || g_pressure.load(std::memory_order_relaxed) != 0) {
        return 0;
    }
    const interface_ops* o = d->ops;
    const std::size_t bytes = o->size(d->ifp, o->ctx, d);
    worker_cache& c = g_caches[worker];
    entry old;
    bool evicted = false;
    {
        spin_guard g(c.lock);
        // Read again under the lock: cache_evict() raises the pressure before it empties this
        // cache under the same lock, so either it sees this entry or this sees the pressure.
        if (g_pressure.load(std::memory_order_acquire) != 0) {
            return 0;
        }
        const int slots = std::min(g_slots.load(std::memory_order_relaxed), max_slots);
        if (c.n >= slots) {
            old = c.e[0];
            evicted = true;
            for (int j = 1; j < c.n; ++j) {
                c.e[j - 1] = c.e[j];
            }
            --c.n;
            ++c.evictions;
        }
        c.e[c.n++] = entry{iface, bytes, o->interface_size, o->ctx, o->allocate, o->release};
        c.filled.store(c.n, std::memory_order_relaxed);
        g_cached.fetch_add(bytes, std::memory_order_relaxed);
    }
    if (evicted) {
        drop(old);
        mem_release(old.bytes);
    }
    return bytes;
}

std::size_t cache_evict(std::size_t want) noexcept {
    std::size_t freed = 0;
    for (int w = 0; w < max_workers && (want == 0 || freed < want); ++w) {
        // A look without the lock skips the empty caches when making room; emptying them all
        // (under pressure) takes every lock, so that no entry put meanwhile escapes.
        if (want != 0 && g_caches[w].filled.load(std::memory_order_relaxed) == 0) {
            continue;
        }
        freed += evict_worker(w, want == 0 ? 0 : want - freed);
    }
    if (freed != 0) {
        mem_release(freed);
    }
    return freed;
}

void cache_pressure(bool on) noexcept {
    if (on) {
        g_pressure.fetch_add(1, std::memory_order_seq_cst);
    } else {
        g_pressure.fetch_sub(1, std::memory_order_seq_cst);
    }
}

}  // namespace detail

std::size_t memory_cached() noexcept { return detail::g_cached.load(std::memory_order_relaxed); }

cache_stats scratch_cache_stats() noexcept {
    cache_stats s;
    for (detail::worker_cache& c : detail::g_caches) {
        spin_guard g(c.lock);
        s.hits += c.hits;
        s.misses += c.misses;
        s.evictions += c.evictions;
        s.entries += static_cast<std::size_t>(c.n);
    }
    s.bytes = memory_cached();
    return s;
}

void flush_scratch_cache() noexcept { detail::cache_evict(0); }

void set_scratch_cache_slots(int n) noexcept {
    detail::g_slots.store(n < 0 ? 0 : std::min(n, detail::max_slots), std::memory_order_relaxed);
}

}  // namespace mpc::tg
