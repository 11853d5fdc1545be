/// \file
/// Recycled records (see pool.hpp for the design).

#include "taskgraph/pool.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lib/log.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
// LeakSanitizer does not look into mapped memory: the chunks are made roots, so that heap
// blocks only a live record points to (a task's successor array) are not reported.
#define MPC_TG_LSAN_ROOT(p, n) __lsan_register_root_region((p), (n))
#define MPC_TG_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MPC_TG_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MPC_TG_POISON(p, n) ((void)(p), (void)(n))
#define MPC_TG_UNPOISON(p, n) ((void)(p), (void)(n))
#define MPC_TG_LSAN_ROOT(p, n) ((void)(p), (void)(n))
#endif

namespace mpc::tg::detail {
namespace {

std::uint32_t current_slot() noexcept {
    int vp = sched::current_vp();
    return vp >= 0 && vp < sched::max_vps ? static_cast<std::uint32_t>(vp) : static_cast<std::uint32_t>(sched::max_vps);
}

constexpr std::size_t chunk_bytes = 64 * 1024;

}  // namespace

/// Maps a chunk of records homed at `slot`; returns them linked, or nullptr.
record_pool::header* record_pool::refill(std::uint32_t slot) noexcept {
    const std::size_t n = chunk_bytes / size_ > 8 ? chunk_bytes / size_ : 8;
    void* m = mmap(nullptr, n * size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        MPC_LOG(error, tg, "no memory for task records (mmap of %zu bytes: %s)", n * size_, std::strerror(errno));
        return nullptr;
    }
    MPC_TG_LSAN_ROOT(m, n * size_);
    auto* base = static_cast<std::byte*>(m);
    header* first = nullptr;
    for (std::size_t i = n; i-- > 0;) {
        auto* h = reinterpret_cast<header*>(base + i * size_);
        h->next = first;
        h->home = slot;
        h->magic = 0;
        MPC_TG_POISON(h + 1, size_ - sizeof(header));
        first = h;
    }
    mapped_.fetch_add(n, std::memory_order_relaxed);
    return first;
}

/// The first free record of c (slot's cache; its lock held for the shared slot), or nullptr.
record_pool::header* record_pool::take(cache& c, std::uint32_t slot) noexcept {
    if (c.local == nullptr) {
        c.local = c.remote.exchange(nullptr, std::memory_order_acquire);
        if (c.local == nullptr) {
            c.local = refill(slot);
            if (c.local == nullptr) {
                return nullptr;
            }
        }
    }
    header* h = c.local;
    c.local = h->next;
    if (c.local != nullptr) {
        // The next record most likely ended on another core: bring its lines here now, so
        // that the next task's construction does not wait for them one by one.
        const auto* b = reinterpret_cast<const char*>(c.local);
        for (std::size_t off = 0; off < size_; off += 64) {
            __builtin_prefetch(b + off, 1);
        }
    }
    return h;
}

void* record_pool::get() noexcept {
    const std::uint32_t slot = current_slot();
    cache& c = caches_[slot];
    header* h = nullptr;
    if (slot == shared_slot) {
        spin_guard g(c.lock);
        h = take(c, slot);
    } else {
        h = take(c, slot);
    }
    if (h == nullptr) {
        return nullptr;
    }
    h->magic = live_magic;
    MPC_TG_UNPOISON(h + 1, size_ - sizeof(header));
    return h + 1;
}

void record_pool::put(void* p) noexcept {
    if (p == nullptr) {
        return;
    }
    header* h = static_cast<header*>(p) - 1;
    if (h->magic != live_magic) {
        MPC_LOG(fatal, tg, "a task record freed twice, or not made by the runtime (%p)", p);
        std::abort();
    }
    h->magic = 0;
    MPC_TG_POISON(p, size_ - sizeof(header));
    const std::uint32_t slot = current_slot();
    if (slot == h->home && slot != shared_slot) {
        cache& c = caches_[slot];
        h->next = c.local;
        c.local = h;
        return;
    }
    std::atomic<header*>& r = caches_[h->home].remote;
    header* top = r.load(std::memory_order_relaxed);
    do {
        h->next = top;
    } while (!r.compare_exchange_weak(top, h, std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace mpc::tg::detail
