#include "allocator/slice.hpp"

#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "lib/config.hpp"
#include "lib/log.hpp"

MPC_CONFIG_TABLE(alloc, {
    {"MPC_ALLOCATOR", ::mpc::config::knob_type::choice, "mpc",
     "mpc: libmpc's malloc (task heaps in address slices); system: glibc's (the default under Valgrind); "
     "sanitizer builds always use the sanitizer's",
     "mpc|system"},
    {"MPC_ALLOC_DEBUG", ::mpc::config::knob_type::boolean, "0",
     "check every free() and realloc(): a double free or a pointer malloc did not return ends the job with its "
     "address (slower; best effort for blocks freed by another task)"},
    {"MPC_SLICE_BASE", ::mpc::config::knob_type::size, "0",
     "address of the first task's address slice, the same in every process (suffixes k, M, G, T); 0: 16T"},
    {"MPC_SLICE_SIZE", ::mpc::config::knob_type::size, "0",
     "bytes of address space per task (its stack and heap); 0: the largest power of two up to 1T "
     "that fits the rank count"},
})

namespace mpc::alloc {
namespace {

#if MPC_TSAN
// ThreadSanitizer only accepts application memory in a few ranges (its shadow takes the rest);
// the low one, below 512 GiB, is free in PIE programs.
constexpr std::uintptr_t default_base = std::uintptr_t{64} << 30;  // 64 GiB
constexpr std::uintptr_t space_limit = std::uintptr_t{512} << 30;
constexpr std::uintptr_t default_limit = space_limit;
#else
constexpr std::uintptr_t default_base = std::uintptr_t{16} << 40;  // 16 TiB
/// The kernel puts shared libraries, thread stacks and mmap() results below the main stack,
/// near 0x7fxxxxxxxxxx; the slices stay below this line.
constexpr std::uintptr_t space_limit = 0x7e0000000000ULL;
/// Where the default slice size makes the slices end: below the executable. Linux loads a
/// position-independent executable at ELF_ET_DYN_BASE (0x555555554000) plus up to 1 TiB of
/// randomisation, a different place in each process, with its brk heap right after it; slices
/// of 1 TiB for 70 ranks or more would run into it (MPICH's darray_pack at 72 ranks found it).
constexpr std::uintptr_t default_limit = 0x550000000000ULL;  // 85 TiB
#endif
constexpr std::size_t max_default_slice = std::size_t{1} << 40;  // 1 TiB
constexpr std::size_t min_slice = std::size_t{64} << 20;         // 64 MiB

enum : std::uint8_t { hdr_none = 0, hdr_ready = 2 };

/// Taken to initialize a slice header (rank or thread slice) and to reserve the thread space;
/// fork_prepare() holds it while it locks every initialized slice.
spinlock t_lock;

// Set once by reserve_space() before any slice is used; read without synchronisation by
// rank_of() on every free(), so plain globals (published by the thread creation that follows).
std::uintptr_t g_base = 0;
std::size_t g_size = 0;
int g_count = 0;
std::atomic<std::uint8_t>* g_state = nullptr;  ///< per slice: header initialized?
std::size_t g_state_bytes = 0;

std::size_t round_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) / a * a; }

/// "16 GiB", "1.5 TiB": for messages.
void human(std::size_t n, char* buf, std::size_t len) noexcept {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        ++u;
    }
    std::snprintf(buf, len, v == static_cast<double>(static_cast<long long>(v)) ? "%.0f %s" : "%.1f %s", v, units[u]);
}

status commit(std::uintptr_t lo, std::size_t bytes) noexcept {
    if (::mprotect(reinterpret_cast<void*>(lo), bytes, PROT_READ | PROT_WRITE) != 0) {
        return {errc::no_memory, "mprotect() refused to commit slice memory", errno};
    }
    return {};
}

}  // namespace

status reserve_space(int count, const space_options& opts) noexcept {
    if (count <= 0) {
        return {errc::invalid_argument, "slice count must be positive"};
    }
    if (g_count != 0) {
        return {errc::busy, "the slice space is already reserved"};
    }
    std::uintptr_t base = opts.base != 0 ? opts.base : default_base;
    if (base % page_size != 0 || base >= space_limit) {
        MPC_LOG(error, alloc, "MPC_SLICE_BASE=%#lx must be page-aligned and below %#lx", static_cast<unsigned long>(base),
                static_cast<unsigned long>(space_limit));
        return {errc::invalid_argument, "MPC_SLICE_BASE must be page-aligned and below the end of the slice space"};
    }
    std::size_t room = space_limit - base;
    std::size_t size = opts.slice_size;
    if (size == 0) {
        // Below the executable when the slices of 64 MiB fit there, else up to space_limit.
        const std::size_t below = base < default_limit ? default_limit - base : 0;
        const std::size_t fit = below / static_cast<std::size_t>(count) >= min_slice ? below : room;
        size = max_default_slice;
        while (size > min_slice && size > fit / static_cast<std::size_t>(count)) {
            size /= 2;
        }
    } else if (size % page_size != 0 || size < 4 * slice::header_size) {
        return {errc::invalid_argument, "MPC_SLICE_SIZE must be a multiple of 4 KiB and at least 16 KiB"};
    }
    if (size > room / static_cast<std::size_t>(count)) {
        char need[32], have[32], each[32], fit[32];
        human(size, each, sizeof each);
        // Overflow-safe "size * count": only printed approximately.
        human(static_cast<std::size_t>(static_cast<double>(size) * count), need, sizeof need);
        human(room, have, sizeof have);
        human(room / static_cast<std::size_t>(count) / page_size * page_size, fit, sizeof fit);
        MPC_LOG(error, alloc,
                "%d address slices of %s need %s, but only %s are free from MPC_SLICE_BASE=%#lx to %#lx: "
                "set MPC_SLICE_SIZE to at most %s (or a lower MPC_SLICE_BASE)",
                count, each, need, have, static_cast<unsigned long>(base), static_cast<unsigned long>(space_limit),
                fit);
        return {errc::invalid_argument, "the address slices do not fit in the address space (MPC_SLICE_SIZE)"};
    }
    std::size_t total = size * static_cast<std::size_t>(count);
    void* p = ::mmap(reinterpret_cast<void*>(base), total, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED || p != reinterpret_cast<void*>(base)) {
        int e = errno;
        if (p != MAP_FAILED) {  // a kernel without MAP_FIXED_NOREPLACE put it elsewhere
            ::munmap(p, total);
            e = EEXIST;
        }
        char t[32];
        human(total, t, sizeof t);
        MPC_LOG(error, alloc, "cannot reserve %s at %#lx for %d address slices: %s%s", t,
                static_cast<unsigned long>(base), count, std::strerror(e),
                e == EEXIST ? " (something is mapped there: choose another MPC_SLICE_BASE)" : "");
        return {e == EEXIST ? errc::busy : errc::no_memory,
                e == EEXIST ? "the address range of the slices is already in use (MPC_SLICE_BASE)"
                            : "cannot reserve the address range of the slices",
                e};
    }
    std::size_t state_bytes = round_up(static_cast<std::size_t>(count), page_size);
    void* st = ::mmap(nullptr, state_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (st == MAP_FAILED) {
        int e = errno;
        ::munmap(p, total);
        return {errc::no_memory, "cannot map the slice table", e};
    }
    g_state = static_cast<std::atomic<std::uint8_t>*>(st);  // zero pages: every header hdr_none
    g_state_bytes = state_bytes;
    g_base = base;
    g_size = size;
    g_count = count;
    char each[32];
    human(size, each, sizeof each);
    MPC_LOG(debug, alloc, "%d address slices of %s at %#lx", count, each, static_cast<unsigned long>(base));
    return {};
}

status reserve_space_from_config(int count) noexcept {
    auto base = config::get_size("MPC_SLICE_BASE");
    auto size = config::get_size("MPC_SLICE_SIZE");
    if (!base) {
        return base.error();
    }
    if (!size) {
        return size.error();
    }
    return reserve_space(count, space_options{static_cast<std::uintptr_t>(*base), *size});
}

void release_space() noexcept {
    if (g_count == 0) {
        return;
    }
    ::munmap(reinterpret_cast<void*>(g_base), g_size * static_cast<std::size_t>(g_count));
    ::munmap(g_state, g_state_bytes);
    g_state = nullptr;
    g_count = 0;
    g_base = 0;
    g_size = 0;
}

std::uintptr_t default_space_base() noexcept { return default_base; }
std::uintptr_t space_end_limit() noexcept { return space_limit; }
std::uintptr_t space_default_end() noexcept { return default_limit; }

bool space_reserved() noexcept { return g_count != 0; }
std::uintptr_t space_base() noexcept { return g_base; }
std::size_t space_slice_size() noexcept { return g_size; }
int space_count() noexcept { return g_count; }

int rank_of(const void* p) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    if (a < g_base || g_count == 0) {
        return -1;
    }
    std::uintptr_t i = (a - g_base) / g_size;
    return i < static_cast<std::uintptr_t>(g_count) ? static_cast<int>(i) : -1;
}

slice* slice_of(int rank) noexcept {
    if (rank < 0 || rank >= g_count) {
        return nullptr;
    }
    std::uintptr_t lo = g_base + static_cast<std::uintptr_t>(rank) * g_size;
    auto* s = reinterpret_cast<slice*>(lo);
    std::atomic<std::uint8_t>& st = g_state[rank];
    if (st.load(std::memory_order_acquire) == hdr_ready) {
        return s;
    }
    // First use: under t_lock, so that the set of initialized slices does not change while
    // fork_prepare() holds it (it locks each of them). Once per slice.
    spin_guard g(t_lock);
    if (st.load(std::memory_order_relaxed) != hdr_ready) {
        if (!detail::init_header(lo, g_size, rank)) {
            return nullptr;
        }
        st.store(hdr_ready, std::memory_order_release);
    }
    return s;
}

// ---- the thread space: heaps of threads that run no task --------------------------------------

std::uintptr_t detail::thread_base = 0;  // set once, under t_lock; read racily by the lookups
std::atomic<std::uint8_t> detail::thread_state[detail::thread_regions];

namespace {
using detail::thread_region;
using detail::thread_regions;
bool t_tried = false;
// detail::thread_state, per region: 0 never used, 1 owned by a live thread, 2 abandoned (its
// heap waits for a thread).

bool reserve_threads() noexcept {
    spin_guard g(t_lock);
    if (!t_tried) {
        t_tried = true;
        // Anywhere the kernel likes: nothing needs these addresses to be the same elsewhere.
        void* p = ::mmap(nullptr, thread_region * (thread_regions + 1), PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            auto a = reinterpret_cast<std::uintptr_t>(p);
            std::uintptr_t aligned = (a + thread_region - 1) / thread_region * thread_region;
            __atomic_store_n(&detail::thread_base, aligned, __ATOMIC_RELEASE);
        } else {
            MPC_LOG(warn, alloc, "cannot reserve the thread heaps' address space: %s", std::strerror(errno));
        }
    }
    return __atomic_load_n(&detail::thread_base, __ATOMIC_ACQUIRE) != 0;
}
}  // namespace

bool detail::init_header(std::uintptr_t lo, std::size_t size, int id) noexcept {
    if (!commit(lo, slice::header_size)) {
        return false;
    }
    auto* s = reinterpret_cast<slice*>(lo);
    s->magic = slice::magic_value;
    s->rank = id;
    s->numa_node = -1;
    s->lo = lo;
    s->hi = lo + size;
    s->heap_top = lo + slice::header_size;
    s->stack_lo = lo + size;
    s->heap = nullptr;
    new (&s->lock) spinlock();
    s->nstacks = 0;
    s->image_lo = 0;
    s->image_hi = 0;
    return true;
}

slice* claim_thread_slice() noexcept {
    if (!reserve_threads()) {
        return nullptr;
    }
    // Under t_lock: a claimed slot always has its header (fork_prepare() locks every claimed
    // slot's slice and must never meet one half made). Threads start rarely.
    spin_guard g(t_lock);
    std::uintptr_t base = __atomic_load_n(&detail::thread_base, __ATOMIC_ACQUIRE);
    // Adopt an abandoned heap first (its blocks may still be in use), else a fresh region.
    for (std::uint8_t want : {std::uint8_t{2}, std::uint8_t{0}}) {
        for (int i = 0; i < thread_regions; ++i) {
            std::uint8_t expect = want;
            if (detail::thread_state[i].load(std::memory_order_relaxed) == want &&
                detail::thread_state[i].compare_exchange_strong(expect, 1, std::memory_order_acq_rel)) {
                std::uintptr_t lo = base + static_cast<std::uintptr_t>(i) * thread_region;
                if (want == 0 && !detail::init_header(lo, thread_region, -2 - i)) {
                    detail::thread_state[i].store(0, std::memory_order_release);
                    return nullptr;
                }
                return reinterpret_cast<slice*>(lo);
            }
        }
    }
    return nullptr;
}

void release_thread_slice(slice* s) noexcept {
    int i = thread_slot_of(s);
    if (i >= 0) {
        detail::thread_state[i].store(2, std::memory_order_release);
    }
}

int thread_slot_of(const void* p) noexcept {
    std::uintptr_t base = __atomic_load_n(&detail::thread_base, __ATOMIC_RELAXED);
    auto a = reinterpret_cast<std::uintptr_t>(p);
    if (base == 0 || a < base) {
        return -1;
    }
    std::uintptr_t i = (a - base) / thread_region;
    return i < static_cast<std::uintptr_t>(thread_regions) ? static_cast<int>(i) : -1;
}

// ---- fork ----------------------------------------------------------------------------------
// A fork() while another thread holds a slice's lock (growing its heap, carving a stack) or
// t_lock would leave that lock taken for ever in the child, where the holder does not exist.
// malloc.cpp's pthread_atfork handlers take every lock before the fork and release them in both
// processes after it, so the child starts with every slice consistent and unlocked. Lock order:
// t_lock, then slices. The forking thread's own slice is left alone: other prepare handlers may
// allocate (and grow its heap) after ours, and only its owner grows a heap.

namespace {
template <class Fn>
void for_each_live_slice(const slice* keep, Fn fn) noexcept {
    auto visit = [&](std::uintptr_t lo) noexcept {
        if (reinterpret_cast<const slice*>(lo) != keep) {
            fn(*reinterpret_cast<slice*>(lo));
        }
    };
    for (int i = 0; i < g_count; ++i) {
        if (g_state[i].load(std::memory_order_acquire) == hdr_ready) {
            visit(g_base + static_cast<std::uintptr_t>(i) * g_size);
        }
    }
    std::uintptr_t base = __atomic_load_n(&detail::thread_base, __ATOMIC_ACQUIRE);
    for (int i = 0; base != 0 && i < thread_regions; ++i) {
        if (detail::thread_state[i].load(std::memory_order_acquire) != 0) {
            visit(base + static_cast<std::uintptr_t>(i) * thread_region);
        }
    }
}
}  // namespace

void detail::lock_all_for_fork(const slice* keep) noexcept {
    t_lock.lock();  // from here on no slice gets a header and no thread slot is claimed
    for_each_live_slice(keep, [](slice& s) noexcept { s.lock.lock(); });
}

void detail::unlock_all_after_fork(const slice* keep) noexcept {
    for_each_live_slice(keep, [](slice& s) noexcept { s.lock.unlock(); });
    t_lock.unlock();
}

// ---- slice ---------------------------------------------------------------------------------

result<std::uintptr_t> slice::grow_heap(std::size_t bytes) noexcept {
    spin_guard g(lock);
    if (bytes % page_size != 0 || bytes > stack_lo - heap_top) {
        return status(errc::no_memory, "the task's address slice is full (MPC_SLICE_SIZE)");
    }
    std::uintptr_t at = heap_top;
    if (status st = commit(at, bytes); !st) {
        return st;
    }
    heap_top = at + bytes;
    return at;
}

result<std::uintptr_t> slice::take_stack(std::size_t bytes) noexcept {
    spin_guard g(lock);
    if (bytes == 0 || bytes % page_size != 0) {
        return status(errc::invalid_argument, "stack size must be a positive multiple of the page size");
    }
    for (int i = 0; i < nstacks; ++i) {
        if (!stacks[i].used && stacks[i].size == bytes) {
            stacks[i].used = true;
            return stacks[i].lo;
        }
    }
    if (nstacks == max_stacks) {
        return status(errc::busy, "the task's address slice holds as many stacks as it can");
    }
    if (bytes + page_size > stack_lo - heap_top) {
        return status(errc::no_memory, "the task's address slice is full (MPC_SLICE_SIZE)");
    }
    std::uintptr_t at = stack_lo - bytes;
    if (status st = commit(at, bytes); !st) {
        return st;
    }
    stack_lo = at - page_size;  // the guard page stays PROT_NONE
    stacks[nstacks++] = stack_slot{at, bytes, true};
    return at;
}

result<std::uintptr_t> slice::take_image_area(std::size_t bytes) noexcept {
    spin_guard g(lock);
    if (bytes == 0 || bytes % page_size != 0) {
        return status(errc::invalid_argument, "image size must be a positive multiple of the page size");
    }
    if (image_lo != 0) {
        return status(errc::busy, "the task's address slice holds a program image already");
    }
    if (bytes + page_size > stack_lo - heap_top) {
        return status(errc::no_memory, "the task's address slice is too small for its copy of the program (MPC_SLICE_SIZE)");
    }
    std::uintptr_t at = stack_lo - bytes;
    stack_lo = at - page_size;  // the guard page stays PROT_NONE
    image_lo = at;
    image_hi = at + bytes;
    return at;
}

void slice::give_stack(std::uintptr_t at) noexcept {
    spin_guard g(lock);
    for (int i = 0; i < nstacks; ++i) {
        if (stacks[i].lo == at && stacks[i].used) {
            ::madvise(reinterpret_cast<void*>(at), stacks[i].size, MADV_DONTNEED);
            stacks[i].used = false;
            return;
        }
    }
}

std::size_t slice::heap_room() const noexcept {
    spin_guard g(const_cast<spinlock&>(lock));
    return stack_lo - heap_top;
}

void slice::for_each_committed(void (*fn)(range r, void* arg), void* arg) const noexcept {
    range ranges[1 + max_stacks];
    int n = 0;
    {
        spin_guard g(const_cast<spinlock&>(lock));
        ranges[n++] = {lo, heap_top};
        for (int i = nstacks - 1; i >= 0; --i) {  // the last carved is the lowest
            ranges[n++] = {stacks[i].lo, stacks[i].lo + stacks[i].size};
        }
    }
    for (int i = 0; i < n; ++i) {
        fn(ranges[i], arg);
    }
}

status slice::bind(int node) noexcept {
    if (node < 0 || node >= static_cast<int>(sizeof(unsigned long) * 8)) {
        return {errc::invalid_argument, "NUMA node out of range"};
    }
    unsigned long mask = 1UL << node;
    if (::mbind(reinterpret_cast<void*>(lo), hi - lo, MPOL_PREFERRED, &mask, sizeof(mask) * 8, 0) != 0) {
        return status::from_errno("mbind() of an address slice failed");
    }
    numa_node = node;
    return {};
}

status slice::move_to_node(int node) noexcept {
    if (status st = bind(node); !st) {
        return st;
    }
    // move_pages() in batches of pointers on the stack: no allocation inside the allocator.
    constexpr std::size_t batch = 256;
    void* pages[batch];
    int nodes[batch];
    int results[batch];
    struct ctx_t {
        void** pages;
        int* nodes;
        int* results;
        int node;
        int error;
    } ctx{pages, nodes, results, node, 0};
    for_each_committed(
        [](range r, void* a) noexcept {
            auto* c = static_cast<ctx_t*>(a);
            std::size_t n = 0;
            auto flush = [&] {
                if (n != 0 && ::move_pages(0, n, c->pages, c->nodes, c->results, MPOL_MF_MOVE) < 0 &&
                    c->error == 0) {
                    c->error = errno;
                }
                n = 0;
            };
            for (std::uintptr_t p = r.lo; p < r.hi; p += page_size) {
                c->pages[n] = reinterpret_cast<void*>(p);
                c->nodes[n] = c->node;
                if (++n == batch) {
                    flush();
                }
            }
            flush();
        },
        &ctx);
    if (ctx.error != 0) {
        return status::from_errno("move_pages() of an address slice failed", ctx.error);
    }
    return {};
}

}  // namespace mpc::alloc
