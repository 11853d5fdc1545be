#include "allocator/heap.hpp"

#include <sys/mman.h>
#include <time.h>

#include <cstddef>
#include <cstring>
#include <new>

namespace mpc::alloc {

// ---- spans and the span map -----------------------------------------------------------------

namespace {
/// Span map entry: kind in the top 4 bits; a run's first span holds its length, its last span
/// (when longer than one) the distance back to the first. Only those two entries of a run are
/// kept exact, and no entry inside a run (free or large) reads as k_small or as a large block's
/// first span (give_run() clears the first entry of a run it merges into the one before), so
/// that the debug check (is_live_block()) recognises any pointer into a run.
/// A large block's first entry also holds its colour (large_entry()); a block of 2^22 spans
/// (256 GiB) or more is k_huge: never coloured, its whole value the length.
enum kind : std::uint32_t {
    k_unused = 0, k_small = 1, k_large = 2, k_large_tail = 3, k_free = 4, k_free_tail = 5, k_huge = 6
};
constexpr std::uint32_t entry(kind k, std::size_t v) noexcept { return (static_cast<std::uint32_t>(k) << 28) | static_cast<std::uint32_t>(v); }
constexpr kind kind_of(std::uint32_t e) noexcept { return static_cast<kind>(e >> 28); }
constexpr std::size_t value_of(std::uint32_t e) noexcept { return e & 0x0fffffffU; }

/// Large blocks' colours (jemalloc's cache-oblivious large allocations, Evans 2015): a large
/// block starts c x 64 bytes into its run's first span, c in [0, 64), from a per-heap sequence
/// (next_colour()). Every large block is given room for any colour (large_pad), so that its span
/// count depends on its size only: a buffer freed and allocated again at the next time step takes
/// the same run whatever its colour. See docs/architecture.md ("Large blocks' colours").
constexpr std::size_t colour_line = 64;
constexpr std::size_t large_colours = page_size / colour_line;
constexpr std::size_t large_pad = page_size - colour_line;
/// Step of the colour sequence, in lines: 39 / 64 is near 1 / golden ratio, so that any run of
/// consecutive colours spreads evenly over the page (three-gap theorem); three consecutive
/// blocks are at least 14 lines (896 bytes) apart.
constexpr std::uint32_t colour_stride = 39;
constexpr int colour_shift = 22;
constexpr std::size_t coloured_max = (std::size_t{1} << colour_shift) - 1;  ///< spans of a coloured block, at most
static_assert(large_colours <= (std::size_t{1} << (28 - colour_shift)), "a colour fits above the length");
constexpr std::uint32_t large_entry(std::size_t k, std::size_t colour) noexcept {
    return k > coloured_max ? entry(k_huge, k) : entry(k_large, k | (colour / colour_line) << colour_shift);
}
constexpr bool is_large(std::uint32_t e) noexcept { return kind_of(e) == k_large || kind_of(e) == k_huge; }
constexpr std::size_t large_spans(std::uint32_t e) noexcept {
    return kind_of(e) == k_huge ? value_of(e) : value_of(e) & coloured_max;
}
constexpr std::size_t large_colour(std::uint32_t e) noexcept {
    return kind_of(e) == k_huge ? 0 : (value_of(e) >> colour_shift) * colour_line;
}

constexpr std::size_t npos = ~std::size_t{0};
constexpr std::size_t span_header = 128;
/// Spans of one class start their blocks at span_header + k * colour_step (see new_small_span):
/// a multiple of 128, so that blocks stay as aligned as without it (alloc_aligned()).
constexpr std::size_t colour_step = 128;
constexpr std::size_t purge_min = std::size_t{256} << 10;  ///< remote frees from this size purge at once
/// Free spans that may still hold touched pages (dirty), per heap, that are never given back
/// to the kernel (8 MiB). Past it, a free run goes back (MADV_DONTNEED) once it has been free for
/// purge_delay_ms; past purge_cap, every dirty run goes back at once. Purging every free at
/// once would make each reuse fault its pages in again: a program that frees and allocates a
/// 32 MiB buffer per step would take 8192 page faults per step (see docs/architecture.md).
constexpr std::size_t purge_threshold = 128;
constexpr std::size_t purge_cap = 1024;  ///< 64 MiB
constexpr std::uint64_t purge_delay_ms = 1000;

/// Milliseconds of CLOCK_MONOTONIC_COARSE (a vDSO read, no system call; a few ms of resolution).
std::uint64_t now_ms() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000 + static_cast<std::uint64_t>(t.tv_nsec) / 1000000;
}
constexpr std::size_t commit_chunk = 16;  ///< spans committed at a time, at least
/// Spans (of any class) a heap keeps in their class lists when they become empty (1 MiB).
constexpr int max_kept = 16;

/// The links of a free run, stored in its first bytes.
struct free_links {
    std::size_t next;   ///< span index + 1, 0: none
    std::size_t prev;
    std::size_t dirty;  ///< spans of the run that may hold touched pages (0: all purged)
    std::uint64_t since;  ///< now_ms() when its most recent dirty part was freed
};

std::size_t round_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) / a * a; }
}  // namespace

static_assert(sizeof(span) <= span_header);
static_assert(heap::map_small == entry(k_small, 0), "heap.hpp's fast path knows small entries");
static_assert(num_classes < (std::size_t{1} << 28), "a small span's class fits in its map entry");
static_assert(offsetof(span, remote) == 64, "the remote-free fields sit on the second cache line");

// ---- creation and lookup --------------------------------------------------------------------

heap* heap::create_in(slice& s) noexcept {
    spin_guard g(s.lock);  // two tasks never share a slice, but be safe against double creation
    if (s.heap != nullptr) {
        return static_cast<heap*>(s.heap);
    }
    std::uintptr_t start = s.heap_top;  // lo + header_size on a fresh slice
    std::size_t max_spans = (s.hi - s.lo) / span_size;
    std::uintptr_t map_at = round_up(start + sizeof(heap), 64);
    std::uintptr_t spans_lo = round_up(map_at + max_spans * sizeof(std::uint32_t), span_size);
    std::size_t bytes = spans_lo - start;
    if (spans_lo >= s.stack_lo || s.hi > remote_addr_limit ||  // (never: slices end below 2^47)
        ::mprotect(reinterpret_cast<void*>(start), bytes, PROT_READ | PROT_WRITE) != 0) {
        return nullptr;
    }
    s.heap_top = spans_lo;
    auto* h = new (reinterpret_cast<void*>(start)) heap();
    h->slice_ = &s;
    h->spans_lo_ = spans_lo;
    h->spans_max_ = (s.hi - spans_lo) / span_size;
    h->map_ = reinterpret_cast<std::uint32_t*>(map_at);
    h->flush_cache();  // the caches are empty: sets each class's room
    s.heap = h;
    return h;
}

heap* heap::of_task_slice(const void* p) noexcept {
    int r = rank_of(p);
    slice* s = r >= 0 ? slice_of(r) : nullptr;
    return s != nullptr ? static_cast<heap*>(s->heap) : nullptr;
}

// ---- span runs ------------------------------------------------------------------------------

namespace {
int bin_of(std::size_t nspans) noexcept { return nspans <= 32 ? static_cast<int>(nspans) - 1 : 32; }
}  // namespace

std::size_t heap::unlink_run(std::size_t i, std::uint64_t* since) noexcept {
    auto links = [this](std::size_t j) { return reinterpret_cast<free_links*>(addr_of(j)); };
    free_links* l = links(i);
    if (since != nullptr) {
        *since = l->since;
    }
    if (l->prev != 0) {
        links(l->prev - 1)->next = l->next;
    } else {
        bin_head_[bin_of(value_of(map_[i]))] = l->next;
    }
    if (l->next != 0) {
        links(l->next - 1)->prev = l->prev;
    }
    return l->dirty;
}

void heap::give_run(std::size_t first, std::size_t n, std::size_t dirty, std::uint64_t since) noexcept {
    auto links = [this](std::size_t i) { return reinterpret_cast<free_links*>(addr_of(i)); };
    dirty_ += dirty;
    if (dirty != 0 && since == 0) {
        since = now_ms();
    }
    // Merge with the free runs around it (the newest dirty part dates the merged run).
    auto merge = [&](std::size_t i) noexcept {
        std::uint64_t t = 0;
        std::size_t d = unlink_run(i, &t);
        if (d != 0 && t > since) {
            since = t;
        }
        dirty += d;
    };
    std::size_t after = first + n;
    if (after < spans_committed_ && kind_of(map_[after]) == k_free) {
        n += value_of(map_[after]);
        merge(after);
    }
    if (first > 0) {
        std::uint32_t e = map_[first - 1];
        std::size_t head = kind_of(e) == k_free ? first - 1 : kind_of(e) == k_free_tail ? first - 1 - value_of(e) : npos;
        if (head != npos) {
            n += value_of(map_[head]);
            merge(head);
            map_[first] = entry(k_unused, 0);  // inside the merged run now (see kind)
            first = head;
        }
    }
    map_[first] = entry(k_free, n);
    if (n > 1) {
        map_[first + n - 1] = entry(k_free_tail, n - 1);
    }
    free_links* l = links(first);
    int b = bin_of(n);
    l->prev = 0;
    l->next = bin_head_[b];
    l->dirty = dirty < n ? dirty : n;
    l->since = since;
    if (l->next != 0) {
        links(l->next - 1)->prev = first + 1;
    }
    bin_head_[b] = first + 1;
    if (dirty_ > purge_threshold) {
        if (dirty_ > purge_cap) {
            purge(~std::uint64_t{0});
        } else if (std::uint64_t now = now_ms(); now >= next_purge_ms_) {
            // At most four scans per delay: each looks at every free run's links.
            next_purge_ms_ = now + purge_delay_ms / 4;
            purge(now - purge_delay_ms);
        }
    }
}

bool heap::purge(std::uint64_t freed_by) noexcept {
    bool any = false;
    for (int b = 0; b < bins; ++b) {
        for (std::size_t i1 = bin_head_[b]; i1 != 0;) {
            auto* l = reinterpret_cast<free_links*>(addr_of(i1 - 1));
            if (l->dirty != 0 && l->since <= freed_by) {
                // Keep the first page: it holds the links.
                ::madvise(reinterpret_cast<char*>(l) + page_size, value_of(map_[i1 - 1]) * span_size - page_size,
                          MADV_DONTNEED);
                dirty_ = dirty_ > l->dirty ? dirty_ - l->dirty : 0;
                l->dirty = 0;
                any = true;
            }
            i1 = l->next;
        }
    }
    return any;
}

void heap::flush_cache() noexcept {
    for (int c = 0; c < num_classes; ++c) {
        while (void* b = cache_[c]) {
            cache_[c] = *static_cast<void**>(b);
            free_local_small(span::of(b), b);
        }
        cache_room_[c] = detail::cache_max[static_cast<std::size_t>(c)];
    }
}

bool heap::trim() noexcept {
    flush_cache();
    drain_returned();
    collect_remote();
    return purge(~std::uint64_t{0});
}

std::size_t heap::find_run(std::size_t k, bool* clean) noexcept {
    for (int b = bin_of(k); b < bins; ++b) {
        for (std::size_t i1 = bin_head_[b]; i1 != 0;) {
            std::size_t i = i1 - 1;
            std::size_t len = value_of(map_[i]);
            auto* l = reinterpret_cast<free_links*>(addr_of(i));
            if (len >= k) {
                std::uint64_t since = 0;
                std::size_t d = unlink_run(i, &since);
                dirty_ = dirty_ > d ? dirty_ - d : 0;
                if (clean != nullptr) {
                    *clean = d == 0;  // purged: zero but for the first page (the links)
                }
                // Label the taken part's ends before the rest goes back: give_run() looks at the
                // span before the rest, which must not read as a stale free entry.
                map_[i] = entry(k_unused, 0);
                map_[i + k - 1] = entry(k_unused, 0);
                if (len > k) {
                    give_run(i + k, len - k, d < len - k ? d : len - k, since);
                }
                return i;
            }
            i1 = l->next;
        }
    }
    return npos;
}

std::size_t heap::take_run(std::size_t k, bool* clean) noexcept {
    drain_returned();
    std::size_t i = find_run(k, clean);
    // No free run fits: before the heap grows, take back what other tasks freed into the spans
    // of every class; the spans that turn out empty go back to the runs and may serve this
    // request (a producer whose blocks a consumer frees would otherwise grow while holding
    // those blocks). At most once per commit_chunk spans of growth when nothing comes back.
    if (i == npos && collect_remote() != 0) {
        i = find_run(k, clean);
    }
    if (i != npos) {
        return i;
    }
    // Commit more at the top of the heap area: at least commit_chunk spans, the rest free.
    std::size_t grow = k > commit_chunk ? k : commit_chunk;
    if (spans_committed_ + grow > spans_max_) {
        grow = k;
    }
    if (spans_committed_ + grow > spans_max_ || !slice_->grow_heap(grow * span_size)) {
        return npos;
    }
    i = spans_committed_;
    spans_committed_ += grow;
    if (clean != nullptr) {
        *clean = true;  // never touched
    }
    map_[i] = entry(k_unused, 0);
    map_[i + k - 1] = entry(k_unused, 0);
    if (grow > k) {
        give_run(i + k, grow - k, 0);  // never touched
    }
    return i;
}

void heap::drain_returned() noexcept {
    if (returned_.load(std::memory_order_relaxed) == 0) {
        return;
    }
    std::uintptr_t chain = returned_.exchange(0, std::memory_order_acquire);
    while (chain != 0) {
        std::size_t i = chain - 1;
        chain = *reinterpret_cast<std::uintptr_t*>(addr_of(i));
        free_large_run(i);
    }
}

// ---- small blocks ---------------------------------------------------------------------------

span* heap::new_small_span(int cls) noexcept {
    // Spans that got remote frees while full come back first.
    if (reclaim_.load(std::memory_order_relaxed) != nullptr) {
        relink_reclaimed();
        if (avail_[cls] != nullptr) {
            return avail_[cls];
        }
    }
    std::size_t i = take_run(1, nullptr);
    if (i == npos) {
        return nullptr;
    }
    auto* s = reinterpret_cast<span*>(addr_of(i));
    s->owner = this;
    s->free = nullptr;
    s->block = detail::class_sizes[static_cast<std::size_t>(cls)];
    // Colour (Bonwick's slab colouring): the span's unused tail, (span_size - header) % block,
    // moves in part before the first block, by a multiple of 128 bytes that differs from one
    // span to the next. Without it the blocks of a class whose size is a multiple of 1 KiB start
    // at the same 4 page offsets in every span: the first lines of all blocks (what a program
    // touches first, and the free list's links) fall in 4 of the 64 sets of the L1 and in 1/16 of
    // those of a physically indexed L2, and evict each other (docs/architecture.md).
    const std::size_t count = (span_size - span_header) / s->block;
    const std::size_t colours = ((span_size - span_header) - count * s->block) / colour_step + 1;
    s->first = static_cast<std::uint32_t>(span_header + i % colours * colour_step);
    s->bump = addr_of(i) + s->first;
    s->end = s->bump + count * s->block;
    s->remote.store(0, std::memory_order_relaxed);
    s->reclaim_next = nullptr;
    s->used = 0;
    s->kept = false;
    s->cls = static_cast<std::uint16_t>(cls);
    push_front(cls, s);  // full of free blocks: the next ones come from it
    map_[i] = entry(k_small, static_cast<std::size_t>(cls));  // its class: free_own()
    return s;
}

void heap::push_front(int cls, span* s) noexcept {
    s->prev = nullptr;
    s->next = avail_[cls];
    (s->next != nullptr ? s->next->prev : avail_tail_[cls]) = s;
    avail_[cls] = s;
    s->in_avail = true;
}

void heap::push_back(int cls, span* s) noexcept {
    s->next = nullptr;
    s->prev = avail_tail_[cls];
    (s->prev != nullptr ? s->prev->next : avail_[cls]) = s;
    avail_tail_[cls] = s;
    s->in_avail = true;
}

void heap::unlink(int cls, span* s) noexcept {
    (s->prev != nullptr ? s->prev->next : avail_[cls]) = s->next;
    (s->next != nullptr ? s->next->prev : avail_tail_[cls]) = s->prev;
    s->in_avail = false;
}

void heap::relink_reclaimed() noexcept {
    span* r = reclaim_.exchange(nullptr, std::memory_order_acquire);
    while (r != nullptr) {
        span* nx = r->reclaim_next;
        // Off the stack. Release: a remote free that queues r again (its swap acquires this
        // word, or a later owner's swap of it) writes reclaim_next after the read above.
        r->remote.fetch_and(~remote_queued, std::memory_order_release);
        if (!r->in_avail) {
            push_front(r->cls, r);  // full of returned blocks, recently touched: use them first
        }
        r = nx;
    }
}

void* heap::alloc_small(int cls) noexcept {
    for (;;) {
        span* s = avail_[cls];
        if (s == nullptr && (s = new_small_span(cls)) == nullptr) {
            return nullptr;
        }
        if (void* b = s->free; b != nullptr) {
            s->free = *static_cast<void**>(b);
            ++s->used;
            return b;
        }
        if (s->bump < s->end) {
            void* b = reinterpret_cast<void*>(s->bump);
            s->bump += s->block;
            ++s->used;
            return b;
        }
        std::uintptr_t w = s->remote.load(std::memory_order_relaxed);
        if (remote_blocks(w)) {
            take_remote(s);
            continue;
        }
        // Full: out of the list until a free brings it back.
        unlink(cls, s);
        // Flag it full once: a span keeps the flag while it goes in and out of the class list
        // (a local free puts it back without touching the flag), so a span that fills up again
        // and again costs no atomic operation. Only a remote free, or the drain of reclaim_,
        // changes the flag again. If a remote free comes in before the flag is set, the swap
        // fails and the span goes back with that block.
        if (w == 0 && !s->remote.compare_exchange_strong(w, remote_full, std::memory_order_relaxed,
                                                          std::memory_order_relaxed)) {
            push_front(cls, s);
        }
        // Else it was flagged before (a remote free will queue it on reclaim_) or is queued
        // already: either way it comes back when reclaim_ is taken, or at its next local free.
    }
}

void heap::free_local_small(span* s, void* p) noexcept {
    *static_cast<void**>(p) = s->free;
    s->free = p;
    --s->used;
    int cls = s->cls;
    if (!s->in_avail) {
        // Back in the class list, its flag untouched (full or queued): see alloc_small(). At the
        // end: the spans before it are used up first, so it gathers more frees meanwhile, instead
        // of being emptied again by the next allocation (a full/back cycle per operation).
        push_back(cls, s);
        return;
    }
    release_if_empty(s);
}

void heap::take_remote(span* s) noexcept {
    // The blocks and their count, not the flags.
    std::uintptr_t w = s->remote.fetch_and(remote_flags, std::memory_order_acquire);
    void* r = reinterpret_cast<void*>(w & remote_ptr_mask);
    if (r == nullptr) {
        return;
    }
    s->used -= remote_count(w);
    if (s->free == nullptr) {  // alloc_small's case: the stack becomes the free list, unwalked
        s->free = r;
        return;
    }
    void* last = r;  // (collect_remote(): append the local list to the stack's last block)
    for (void* b = *static_cast<void**>(r); b != nullptr; b = *static_cast<void**>(b)) {
        last = b;
    }
    *static_cast<void**>(last) = s->free;
    s->free = r;
}

std::size_t heap::collect_remote() noexcept {
    if (reclaim_.load(std::memory_order_relaxed) != nullptr) {
        relink_reclaimed();
    }
    std::size_t released = 0;
    for (int c = 0; c < num_classes; ++c) {
        for (span* s = avail_[c]; s != nullptr;) {
            span* next = s->next;  // s may leave the list
            if (remote_blocks(s->remote.load(std::memory_order_relaxed))) {
                take_remote(s);
                released += release_if_empty(s) ? 1 : 0;
            }
            s = next;
        }
    }
    return released;
}

bool heap::release_if_empty(span* s) noexcept {
    int cls = s->cls;
    // Empty and not the class's current span: back to the runs, unless a remote free has
    // queued it on reclaim_ (or is about to: the flag and its block went in in one swap, and
    // its block was counted back already). It must never be reused while on that stack. No
    // remote free can come any more (every block is free), so the word holds only flags.
    if (s->used == 0 && avail_[cls] != s) {
        std::uintptr_t w = s->remote.load(std::memory_order_acquire);
        if ((w & remote_queued) != 0) {
            return false;
        }
        if (w != 0) {
            s->remote.store(0, std::memory_order_relaxed);  // flagged full: cleared
        }
        // The first max_kept spans of the heap that become empty stay in their class lists for
        // good, their free lists whole: a program that allocates and frees the same blocks
        // over and over (a phase of n objects, then their frees) finds them on the fast path
        // instead of taking spans from the runs, carving them block by block, and giving them
        // back each time. They hold no more memory than the runs would (free spans stay
        // resident up to purge_threshold); they only serve no other class.
        if (s->kept) {
            return false;
        }
        if (kept_ < max_kept) {
            s->kept = true;
            ++kept_;
            return false;
        }
        unlink(cls, s);
        give_run(index_of(reinterpret_cast<std::uintptr_t>(s)), 1, 1);
        return true;
    }
    return false;
}

// ---- large blocks ---------------------------------------------------------------------------

std::size_t heap::next_colour() noexcept {
    std::size_t c = colour_;
    colour_ = (colour_ + colour_stride) % large_colours;
    return c * colour_line;
}

void heap::set_large(std::size_t first, std::size_t k, std::size_t colour) noexcept {
    map_[first] = large_entry(k, colour);
    if (k > 1) {
        map_[first + k - 1] = entry(k_large_tail, k - 1);
    }
}

void* heap::alloc_large(std::size_t n, std::size_t align, bool* clean) noexcept {
    // A colour that keeps the alignment: none from a page up (valloc, pvalloc and the like get
    // page-aligned runs as before), else a multiple of the alignment.
    std::size_t colour = 0;
    std::size_t k = round_up(n == 0 ? 1 : n, span_size) / span_size;
    if (align < page_size) {
        std::size_t padded = round_up(n + large_pad, span_size) / span_size;
        if (padded <= coloured_max) {
            colour = next_colour() & ~(align - 1);
            k = padded;
        }
    }
    std::size_t run_align = align > span_size ? align : span_size;
    std::size_t extra = run_align / span_size - 1;
    std::size_t i = take_run(k + extra, clean);
    if (i == npos) {
        return nullptr;
    }
    std::size_t j = i;
    while (addr_of(j) % run_align != 0) {
        ++j;
    }
    // Label the block first: the leftovers given back on either side look at its ends.
    set_large(j, k, colour);
    if (j > i) {
        map_[j - 1] = entry(k_unused, 0);
        give_run(i, j - i, j - i);
    }
    if (j + k < i + k + extra) {
        give_run(j + k, i + k + extra - (j + k), i + k + extra - (j + k));
    }
    ++large_live_;
    return reinterpret_cast<void*>(addr_of(j) + colour);
}

void heap::free_large_run(std::size_t first) noexcept {
    std::size_t k = large_spans(map_[first]);
    --large_live_;
    give_run(first, k, k);
}

void heap::free_own_large(void* p) noexcept { free_large_run(index_of(reinterpret_cast<std::uintptr_t>(p))); }

bool heap::grow_large_in_place(std::size_t first, std::size_t want) noexcept {
    std::size_t k = large_spans(map_[first]);
    std::size_t colour = large_colour(map_[first]);
    if (colour != 0 && want > coloured_max) {
        return false;  // its entry could not say its colour any more: it moves (as k_huge)
    }
    std::size_t after = first + k;
    std::size_t need = want - k;
    std::size_t have = 0;  // free spans right after the block
    if (after < spans_committed_ && kind_of(map_[after]) == k_free) {
        have = value_of(map_[after]);
    }
    bool at_top = after + have == spans_committed_;
    if (have < need && !at_top) {
        return false;
    }
    if (have < need) {  // commit the rest at the top
        std::size_t more = need - have;
        if (spans_committed_ + more > spans_max_ || !slice_->grow_heap(more * span_size)) {
            return false;
        }
        spans_committed_ += more;
    }
    std::size_t have_dirty = 0;
    std::uint64_t since = 0;
    if (have != 0) {  // take the free run after the block
        have_dirty = unlink_run(after, &since);
        dirty_ = dirty_ > have_dirty ? dirty_ - have_dirty : 0;
        map_[after] = entry(k_unused, 0);
    }
    set_large(first, want, colour);
    if (have > need) {  // the part of the free run not needed goes back
        give_run(first + want, have - need, have_dirty < have - need ? have_dirty : have - need, since);
    }
    return true;
}

// ---- the API --------------------------------------------------------------------------------

void* heap::alloc_big(std::size_t n) noexcept {
    if (n > spans_max_ * span_size) {
        return nullptr;
    }
    return alloc_large(n, min_align, nullptr);
}

void* heap::alloc_zeroed(std::size_t n) noexcept {
    if (n <= small_max) {
        void* p = alloc_small(size_class(n));
        if (p != nullptr) {
            std::memset(p, 0, n);
        }
        return p;
    }
    if (n > spans_max_ * span_size) {
        return nullptr;
    }
    bool clean = false;
    void* p = alloc_large(n, min_align, &clean);
    if (p != nullptr) {
        // A run never touched, or purged, reads as zeros but for its first page (the links of
        // the free run), which the block starts inside (its colour): a calloc of 1 GiB does not
        // touch 1 GiB.
        std::size_t head = page_size - (reinterpret_cast<std::uintptr_t>(p) & (page_size - 1));
        std::memset(p, 0, clean && head < n ? head : n);
    }
    return p;
}

void* heap::alloc_aligned(std::size_t n, std::size_t align) noexcept {
    if (align <= min_align) {
        return alloc(n < align ? align : n);  // a block of at least `align` bytes is that aligned
    }
    if (align <= colour_step && n <= small_max) {
        // Blocks start at span + 128 + colour + i * size (the colour a multiple of 128): aligned
        // when the size is a multiple of align.
        std::size_t want = round_up(n == 0 ? 1 : n, align);
        for (int c = size_class(want); c < num_classes; ++c) {
            if (detail::class_sizes[static_cast<std::size_t>(c)] % align == 0) {
                return alloc_small(c);
            }
        }
    }
    if (n > spans_max_ * span_size || align > spans_max_ * span_size) {
        return nullptr;
    }
    return alloc_large(n, align, nullptr);
}

void heap::free(heap* current, void* p) noexcept {
    if (p != nullptr) {
        free_in(of(p), current, p);
    }
}

void heap::free_remote(heap* h, void* p) noexcept {
    // The block's kind from the owner's span map: its entry does not change while the block is
    // live (a small span is not given back while it holds a block, a large block is this
    // caller's to free).
    std::size_t i = h->index_of(reinterpret_cast<std::uintptr_t>(p));
    std::uint32_t e = h->map_[i];
    if (!is_large(e)) {
        span* s = span::of(p);
        // One swap pushes the block and turns full into queued (see span::remote): the span
        // cannot go back to the runs between the two, and when the swap did not queue it this
        // thread touches the span no more (the owner may reuse its memory at once).
        std::uintptr_t old = s->remote.load(std::memory_order_relaxed);
        std::uintptr_t now = 0;
        do {
            *static_cast<std::uintptr_t*>(p) = old & remote_ptr_mask;
            now = ((old & ~remote_ptr_mask & ~remote_flags) + remote_one) | reinterpret_cast<std::uintptr_t>(p) |
                  ((old & remote_flags) != 0 ? remote_queued : 0);
        } while (!s->remote.compare_exchange_weak(old, now, std::memory_order_acq_rel, std::memory_order_relaxed));
        if ((old & remote_full) != 0) {  // (acquire: after the owner's last read of reclaim_next)
            span* top = h->reclaim_.load(std::memory_order_relaxed);
            do {
                s->reclaim_next = top;
            } while (!h->reclaim_.compare_exchange_weak(top, s, std::memory_order_release, std::memory_order_relaxed));
        }
        return;
    }
    // Large: its run goes on the owner's returned_ stack, linked through the run's first word
    // (the block's start, or the gap its colour left before it).
    std::size_t k = large_spans(e);
    void* run = reinterpret_cast<void*>(h->addr_of(i));
    if (k * span_size >= purge_min) {  // give the memory back now, from this thread
        ::madvise(run, k * span_size, MADV_DONTNEED);
    }
    auto* link = static_cast<std::uintptr_t*>(run);
    std::uintptr_t top = h->returned_.load(std::memory_order_relaxed);
    do {
        *link = top;
    } while (!h->returned_.compare_exchange_weak(top, i + 1, std::memory_order_release, std::memory_order_relaxed));
}

namespace {
/// Bytes usable at a, a block whose span has map entry e.
std::size_t usable_at(std::uint32_t e, std::uintptr_t a) noexcept {
    if (!is_large(e)) {
        return span::of(reinterpret_cast<void*>(a))->block;
    }
    return large_spans(e) * span_size - (a & (span_size - 1));
}
}  // namespace

std::size_t heap::usable_size(const void* p) noexcept {
    if (p == nullptr) {
        return 0;
    }
    heap* h = of(p);
    auto a = reinterpret_cast<std::uintptr_t>(p);
    return usable_at(h->map_[h->index_of(a)], a);
}

bool heap::is_live_block(const void* p) noexcept {
    heap* h = of(p);
    auto a = reinterpret_cast<std::uintptr_t>(p);
    if (h == nullptr || a < h->spans_lo_ || a % tiny_align != 0) {
        return false;
    }
    std::size_t i = h->index_of(a);
    if (i >= h->spans_committed_) {
        return false;
    }
    std::uint32_t e = h->map_[i];
    if (is_large(e)) {
        return a == h->addr_of(i) + large_colour(e);
    }
    if (kind_of(e) != k_small) {
        return false;
    }
    const span* s = span::of(p);
    std::uintptr_t first = h->addr_of(i) + s->first;
    if (a < first || a >= s->bump || (a - first) % s->block != 0) {
        return false;
    }
    for (void* b = s->free; b != nullptr; b = *static_cast<void**>(b)) {  // debug only: O(free)
        if (b == p) {
            return false;
        }
    }
    for (void* b = h->cache_[s->cls]; b != nullptr; b = *static_cast<void**>(b)) {  // freed, cached
        if (b == p) {
            return false;
        }
    }
    return true;
}

void* heap::realloc(void* p, std::size_t n) noexcept {
    if (p == nullptr) {
        return alloc(n);
    }
    heap* h = of(p);
    auto a = reinterpret_cast<std::uintptr_t>(p);
    std::size_t i = h->index_of(a);
    std::uint32_t e = h->map_[i];
    std::size_t have = usable_at(e, a);
    if (h == this && is_large(e) && n > small_max) {
        std::size_t colour = a - addr_of(i);  // it keeps its colour
        std::size_t want = round_up(n + colour, span_size) / span_size;
        std::size_t k = large_spans(e);
        if (want <= k) {
            if (want < k) {  // shrink: give the tail back
                set_large(i, want, colour);
                give_run(i + want, k - want, k - want);
            }
            return p;
        }
        if (grow_large_in_place(i, want)) {
            return p;
        }
    } else if (n <= have && (!is_large(e) ? n > have / 2 : n > small_max)) {
        return p;  // fits, and not worth moving to a smaller block
    }
    void* q = alloc(n);
    if (q == nullptr) {
        return nullptr;
    }
    std::memcpy(q, p, n < have ? n : have);
    free(this, p);
    return q;
}

heap::stats heap::get_stats() const noexcept {
    stats st;
    st.spans_total = spans_committed_;
    for (int b = 0; b < bins; ++b) {
        for (std::size_t i1 = bin_head_[b]; i1 != 0;) {
            st.spans_free += value_of(map_[i1 - 1]);
            i1 = reinterpret_cast<const free_links*>(addr_of(i1 - 1))->next;
        }
    }
    st.large_live = large_live_;
    st.spans_dirty = dirty_;
    return st;
}

}  // namespace mpc::alloc
