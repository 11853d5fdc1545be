/// \file
/// A task's heap, inside its address slice (allocator/slice.hpp), metadata included.
///
/// Layout of the slice's heap area, all of it inside the slice:
///
///     | heap state + span map | span | span | span | ...            -> grows with the slice
///                             ^ 64 KiB aligned
///
/// The heap area is cut into 64 KiB spans. A span serves either one small size class (blocks up
/// to 8 KiB; its header, with the free lists, sits at the span's start, so a block never starts
/// on a span boundary) or belongs to a run of whole spans holding one large block. A large block
/// starts a colour into its run's first span: a multiple of 64 bytes below 4 KiB that changes
/// from one large block to the next (see heap.cpp), so that the arrays of a program do not all
/// share their low 16 address bits. The span map (4 bytes per span of the slice, committed with
/// the heap state, touched as spans come into use) says what each span is (and a large block's
/// length and colour), so free() finds a block's kind and size from its address and one load.
///
/// Ownership (Hoard, "Hoard: A Scalable Memory Allocator for Multithreaded Applications",
/// Berger et al., ASPLOS 2000; mimalloc's free-list sharding, Leijen et al., 2019): only the
/// owning task allocates from its heap and frees into its free lists, with plain loads and
/// stores; another task freeing a block pushes it on its span's lock-free `remote` list, which
/// the owner takes in one exchange when the span runs dry. Large blocks freed by another task
/// go to the heap's lock-free list of returned runs.
///
/// Freed runs are merged with their free neighbours and reused from size bins; their pages go
/// back to the kernel (madvise MADV_DONTNEED) once a heap holds more than 8 MiB of such
/// touched free spans (a large block freed by another task: at once, by that task); a large block that grows (realloc)
/// takes the free spans after it, or the slice's next uncommitted spans when it is the last run:
/// a growing realloc chain neither moves nor leaves holes.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "allocator/slice.hpp"

namespace mpc::alloc {

inline constexpr std::size_t span_size = std::size_t{64} << 10;
inline constexpr std::size_t small_max = std::size_t{8} << 10;
inline constexpr int num_classes = 33;
/// Alignment of every block of min_align bytes or more (max_align_t). Requests of at most 8
/// bytes get an 8-byte block, 8-byte aligned: no object that fits needs more (the rule of C23
/// and C++17 for malloc and operator new, which GCC and clang assume; jemalloc, tcmalloc and
/// mimalloc do the same). alloc_aligned() asks for 16 when it is told 16.
inline constexpr std::size_t min_align = 16;
inline constexpr std::size_t tiny_align = 8;

class heap;

/// The header of a small-block span, at the span's start (heap.cpp). In the header so that the
/// allocation and free fast paths inline.
struct span {
    // First cache line: what the owner touches on every allocation and free.
    void* free;           ///< owner's free list
    std::uintptr_t bump;  ///< next never-used block
    std::uintptr_t end;   ///< end of the blocks
    std::uint32_t used;   ///< blocks out, as the owner counts them
    std::uint32_t block;
    std::uint16_t cls;
    bool in_avail;
    bool kept;            ///< one of the heap's kept spans: stays in its class list when empty
    std::uint32_t first;  ///< offset of the first block in the span (header + colour, see heap.cpp)
    heap* owner;
    span* next;           ///< avail_ list
    span* prev;
    // Second cache line: what other tasks write (remote frees), apart from the owner's line.
    /// Blocks freed by other tasks (a stack; blocks are 8-byte aligned; the count of blocks on
    /// it in the top 16 bits, above the 48 bits of a user-space address) with two flags in the
    /// low bits: remote_full (the owner took the span out of avail_ while no remote block was
    /// pending) and remote_queued (a remote free found it full and pushed it on heap::reclaim_;
    /// it is on that stack, or about to be, exactly while the flag is set, so it is never pushed
    /// twice and never given back to the runs meanwhile). A remote free pushes its block and
    /// turns full into queued in one compare-and-swap: after it, it touches the span only if
    /// it is the one that queues it, so the owner may take the block back, empty the span and
    /// reuse its memory at once.
    std::atomic<std::uintptr_t> remote;
    span* reclaim_next;   ///< heap::reclaim_ chain

    static span* of(const void* p) noexcept {
        return reinterpret_cast<span*>(reinterpret_cast<std::uintptr_t>(p) & ~(span_size - 1));
    }
};
inline constexpr std::uintptr_t remote_full = 1;
inline constexpr std::uintptr_t remote_queued = 2;
inline constexpr std::uintptr_t remote_flags = remote_full | remote_queued;
/// The remote word's count of blocks: its top 16 bits (a span holds at most span_size / 8 blocks).
inline constexpr int remote_count_shift = 48;
inline constexpr std::uintptr_t remote_one = std::uintptr_t{1} << remote_count_shift;
inline constexpr std::uintptr_t remote_ptr_mask = (remote_one - 1) & ~remote_flags;
/// Heaps must lie below this address for their blocks to fit in the remote word.
inline constexpr std::uintptr_t remote_addr_limit = remote_one;
static_assert(span_size / 8 < (std::uintptr_t{1} << (64 - remote_count_shift)), "the count fits in the top bits");
/// True if the remote word holds blocks (not only flags).
inline bool remote_blocks(std::uintptr_t w) noexcept { return (w & remote_ptr_mask) != 0; }
/// The blocks on the remote stack of word w.
inline std::uint32_t remote_count(std::uintptr_t w) noexcept {
    return static_cast<std::uint32_t>(w >> remote_count_shift);
}


namespace detail {
// Size classes: 8, 16..128 by 16, then four per doubling up to small_max (at most 25% waste).
constexpr std::array<std::uint32_t, num_classes> make_class_sizes() {
    std::array<std::uint32_t, num_classes> s{};
    std::size_t c = 0;
    s[c++] = 8;
    for (std::uint32_t v = 16; v <= 128; v += 16) {
        s[c++] = v;
    }
    for (std::uint32_t base = 128; base < small_max; base *= 2) {
        for (std::uint32_t q = 1; q <= 4; ++q) {
            s[c++] = base + base / 4 * q;
        }
    }
    return s;
}
inline constexpr std::array<std::uint32_t, num_classes> class_sizes = make_class_sizes();
static_assert(class_sizes[num_classes - 1] == small_max);

/// (n + 7) / 8 -> the smallest class that holds n (n <= small_max).
constexpr std::array<std::uint8_t, small_max / 8 + 1> make_class_lookup() {
    std::array<std::uint8_t, small_max / 8 + 1> t{};
    std::size_t c = 0;
    for (std::size_t i = 0; i <= small_max / 8; ++i) {
        while (class_sizes[c] < i * 8) {
            ++c;
        }
        t[i] = static_cast<std::uint8_t>(c);
    }
    return t;
}
inline constexpr std::array<std::uint8_t, small_max / 8 + 1> class_lookup = make_class_lookup();

/// How many blocks of each class the owner's free cache holds at most (heap::cache_): 16 KiB
/// worth, between 4 and 64 blocks (docs/architecture.md, "The owner's free cache").
constexpr std::array<std::uint16_t, num_classes> make_cache_max() {
    std::array<std::uint16_t, num_classes> m{};
    for (std::size_t c = 0; c < num_classes; ++c) {
        std::size_t k = (std::size_t{16} << 10) / class_sizes[c];
        m[c] = static_cast<std::uint16_t>(k < 4 ? 4 : k > 64 ? 64 : k);
    }
    return m;
}
inline constexpr std::array<std::uint16_t, num_classes> cache_max = make_cache_max();
}  // namespace detail

/// The size class of a small request (n <= small_max), and its block size.
inline int size_class(std::size_t n) noexcept { return detail::class_lookup[(n + 7) / 8]; }
inline std::size_t class_size(int cls) noexcept { return detail::class_sizes[static_cast<std::size_t>(cls)]; }

class heap {
public:
    /// The span map entry of a small span of class c: map_small + c (kind 1 in the top 4 bits,
    /// see heap.cpp); every other kind of entry is at least 2 << 28.
    static constexpr std::uint32_t map_small = std::uint32_t{1} << 28;
    /// Creates the heap of slice s inside it (commits the heap state and span map); returns the
    /// existing one if s has a heap. nullptr if the slice cannot hold it.
    static heap* create_in(slice& s) noexcept;
    /// The heap owning a block (nullptr when p is not in any slice or its slice has no heap).
    /// Inline for thread slices (the common case outside tasks).
    static heap* of(const void* p) noexcept {
        if (slice* s = detail::thread_slice_holding(p); s != nullptr) {
            return static_cast<heap*>(s->heap);
        }
        return of_task_slice(p);
    }
    static heap* of_task_slice(const void* p) noexcept;

    /// Owner only. nullptr when the slice is full (n == 0 gives a unique minimal block).
    void* alloc(std::size_t n) noexcept {
        if (n > small_max) {
            return alloc_big(n);
        }
        int cls = size_class(n);
        if (void* b = cache_[cls]; b != nullptr) {  // the block of this class freed last
            cache_[cls] = *static_cast<void**>(b);
            ++cache_room_[cls];
            return b;
        }
        if (span* s = avail_[cls]; s != nullptr) {  // the fast paths
            if (void* b = s->free; b != nullptr) {
                s->free = *static_cast<void**>(b);
                ++s->used;
                return b;
            }
            if (s->bump < s->end) {  // a span's blocks are handed out in order the first time
                auto* b = reinterpret_cast<void*>(s->bump);
                s->bump += s->block;
                ++s->used;
                return b;
            }
        }
        return alloc_small(cls);
    }
    /// Owner only: alloc(n) filled with zeros, without touching pages that are zero already.
    void* alloc_zeroed(std::size_t n) noexcept;
    /// Owner only. align: a power of two.
    void* alloc_aligned(std::size_t n, std::size_t align) noexcept;
    /// Owner only (p may belong to another heap: it is then copied into this one). Grows large
    /// blocks in place when it can. nullptr (and p untouched) when out of memory.
    void* realloc(void* p, std::size_t n) noexcept;
    /// Any thread; `current` is the caller's heap (nullptr: none). p from alloc*/realloc of any heap.
    static void free(heap* current, void* p) noexcept;
    /// free() when the owner h of p is known already (h == of(p), p not null).
    static void free_in(heap* h, heap* current, void* p) noexcept {
        if (h == current) {
            h->free_own(p);
            return;
        }
        free_remote(h, p);
    }
    /// free() of a block of heap h by another task or thread (or one without a heap).
    static void free_remote(heap* h, void* p) noexcept;
    /// True when p lies in this heap's committed spans: a block of this heap (for a pointer
    /// malloc returned). Two fields of the heap's first line, no lookup of the slice: the
    /// caller's own frees take this path.
    bool holds(const void* p) const noexcept {
        return reinterpret_cast<std::uintptr_t>(p) - spans_lo_ < spans_committed_ * span_size;
    }
    /// free() of a block of this heap by its owner (holds(p) is true). The fast path: a small
    /// block that goes to the owner's free cache, or to a span that stays in its class list and
    /// does not become empty.
    void free_own(void* p) noexcept {
        // Kind and class from the span map (a dense array: the span's header is not touched). A
        // small span's entry is map_small + its class; a large block's entry is far above.
        std::uint32_t cls = map_[index_of(reinterpret_cast<std::uintptr_t>(p))] - map_small;
        if (cls >= num_classes) {
            free_own_large(p);
            return;
        }
        if (cache_room_[cls] != 0) {
            *static_cast<void**>(p) = cache_[cls];
            cache_[cls] = p;
            --cache_room_[cls];
            return;
        }
        span* s = span::of(p);
        if (s->in_avail && s->used > 1) {
            *static_cast<void**>(p) = s->free;
            s->free = p;
            --s->used;
            return;
        }
        free_local_small(s, p);
    }
    /// Bytes usable at p (>= what was asked).
    static std::size_t usable_size(const void* p) noexcept;

    slice& owner_slice() const noexcept { return *slice_; }
    /// Debug check: true when p is the start of a live block of some heap.
    static bool is_live_block(const void* p) noexcept;

    /// Statistics (owner only; for tests and introspection).
    struct stats {
        std::size_t spans_total = 0;  ///< spans the heap area has committed
        std::size_t spans_free = 0;   ///< of which free (in runs)
        std::size_t large_live = 0;   ///< live large blocks
        std::size_t spans_dirty = 0;  ///< free spans whose pages may still be resident
    };
    stats get_stats() const noexcept;
    /// Owner only: gives every free page back to the kernel now (free runs are otherwise kept
    /// for a while, see heap.cpp), spans that other tasks' frees emptied included; true if there
    /// was any. malloc_trim() calls it.
    bool trim() noexcept;

private:
    friend struct span;
    heap() = default;

    void* alloc_small(int cls) noexcept;
    void* alloc_big(std::size_t n) noexcept;
    /// A large block of n bytes aligned to align (a power of two, at least min_align), at a
    /// colour into its run when align is below a page; *clean as take_run's.
    void* alloc_large(std::size_t n, std::size_t align, bool* clean) noexcept;
    void free_own_large(void* p) noexcept;
    /// The next large block's colour (bytes, a multiple of 64 below page_size).
    std::size_t next_colour() noexcept;
    /// Labels spans [first, first + k) as a large block at `colour` bytes into the first.
    void set_large(std::size_t first, std::size_t k, std::size_t colour) noexcept;
    void free_local_small(span* s, void* p) noexcept;
    /// Gives every cached block back to its span and resets each class's room (trim(); on a new
    /// heap, whose caches are empty, it only sets the room).
    void flush_cache() noexcept;
    /// Moves the blocks other tasks freed into s (its remote list) to its free list.
    void take_remote(span* s) noexcept;
    /// Gives s (in its class list) back to the runs when it is empty, not its class's current
    /// span, not kept and not queued on reclaim_; true if it went back.
    bool release_if_empty(span* s) noexcept;
    /// Takes the remote lists of every span in the class lists (and the spans queued on
    /// reclaim_) and gives the spans found empty back to the runs; returns how many went back.
    std::size_t collect_remote() noexcept;
    void free_large_run(std::size_t first) noexcept;
    bool grow_large_in_place(std::size_t first, std::size_t want) noexcept;
    /// Index of a run of nspans, or npos; *clean (if given): its pages read as zero, but for
    /// the first one.
    std::size_t take_run(std::size_t nspans, bool* clean) noexcept;
    /// take_run() among the free runs only (npos when none fits).
    std::size_t find_run(std::size_t nspans, bool* clean) noexcept;
    /// Returns a run to the free bins, merged with its free neighbours; `dirty` of its spans may
    /// hold touched pages, freed at `since` (0: now). Purges old dirty runs (see heap.cpp).
    void give_run(std::size_t first, std::size_t nspans, std::size_t dirty, std::uint64_t since = 0) noexcept;
    /// Gives the pages of the free runs that were dirty by `freed_by` (now_ms() time) back to the
    /// kernel; true if there were any.
    bool purge(std::uint64_t freed_by) noexcept;
    /// Takes the free run starting at span i out of its bin; returns its dirty count (still in
    /// dirty_) and, when `since` is given, when its newest dirty part was freed.
    std::size_t unlink_run(std::size_t i, std::uint64_t* since = nullptr) noexcept;
    void drain_returned() noexcept;
    /// Puts the spans that remote frees queued on reclaim_ back in avail_. Before any span goes
    /// back to the runs: a queued span must not be reused under the queue's links.
    void relink_reclaimed() noexcept;
    void push_front(int cls, span* s) noexcept;
    void push_back(int cls, span* s) noexcept;
    void unlink(int cls, span* s) noexcept;
    span* new_small_span(int cls) noexcept;
    std::size_t index_of(std::uintptr_t a) const noexcept { return (a - spans_lo_) / span_size; }
    std::uintptr_t addr_of(std::size_t i) const noexcept { return spans_lo_ + i * span_size; }

    slice* slice_ = nullptr;
    std::uintptr_t spans_lo_ = 0;     ///< first span
    std::size_t spans_committed_ = 0;  ///< spans [0, spans_committed_) are committed
    std::size_t spans_max_ = 0;        ///< spans the slice could ever hold
    std::uint32_t* map_ = nullptr;     ///< one entry per span (see heap.cpp)
    /// The owner's free cache: per class, a stack of the blocks it freed last (at most
    /// detail::cache_max), still counted in their spans' `used`; alloc() takes from it first.
    void* cache_[num_classes] = {};
    std::uint16_t cache_room_[num_classes] = {};  ///< blocks each stack may still take
    span* avail_[num_classes] = {};       ///< spans of each class with free blocks (head: in use)
    span* avail_tail_[num_classes] = {};
    // Written by other tasks: a cache line of their own, away from the owner's fields.
    alignas(64) std::atomic<std::uintptr_t> returned_{0};  ///< large runs freed by other tasks (index + 1 chain)
    std::atomic<span*> reclaim_{nullptr};                  ///< full spans that got remote frees
    static constexpr int bins = 33;            ///< free runs of 1..32 spans, and longer
    alignas(64) std::size_t bin_head_[bins] = {};  ///< span index + 1 of a free run, 0: empty (owner again)
    std::size_t large_live_ = 0;
    int kept_ = 0;  ///< spans flagged kept (see free_local_small)
    std::size_t dirty_ = 0;  ///< free spans not yet given back to the kernel
    std::uint64_t next_purge_ms_ = 0;  ///< no scan for old dirty runs before this
    std::uint32_t colour_ = 0;  ///< the next large block's colour, in 64-byte lines (next_colour())
};


}  // namespace mpc::alloc
