// The task heap (allocator/heap.hpp) inside address slices: random sizes and alignments with
// content checks, frees from other tasks (threads here, each owning one slice's heap), realloc
// chains that grow in place, exhaustion of a slice, coalescing and reuse of large runs.
#include "allocator/heap.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdio>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace {

using namespace mpc::alloc;

const std::uintptr_t test_base = default_space_base() + (std::uintptr_t{8} << 30);
constexpr std::size_t MiB = std::size_t{1} << 20;

class HeapTest : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(reserve_space(8, {test_base, 1024 * MiB})); }
    void TearDown() override { release_space(); }
    static heap* heap_of_rank(int r) {
        slice* s = slice_of(r);
        return s != nullptr ? heap::create_in(*s) : nullptr;
    }
};

/// The first span of the run that holds a block (a large block starts at a colour into it).
std::uintptr_t run_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~(span_size - 1); }

/// Fills a block with a pattern derived from its address and size; check() verifies it.
void fill(void* p, std::size_t n) {
    auto* c = static_cast<unsigned char*>(p);
    auto seed = static_cast<unsigned char>(reinterpret_cast<std::uintptr_t>(p) >> 4);
    for (std::size_t i = 0; i < n; i += (i < 256 ? 1 : 65521)) {
        c[i] = static_cast<unsigned char>(seed + i);
    }
}
bool check(const void* p, std::size_t n) {
    auto* c = static_cast<const unsigned char*>(p);
    auto seed = static_cast<unsigned char>(reinterpret_cast<std::uintptr_t>(p) >> 4);
    for (std::size_t i = 0; i < n; i += (i < 256 ? 1 : 65521)) {
        if (c[i] != static_cast<unsigned char>(seed + i)) {
            return false;
        }
    }
    return true;
}

TEST(SizeClasses, CoverEverySmallSizeTightly) {
    for (std::size_t n = 0; n <= small_max; ++n) {
        int c = size_class(n);
        ASSERT_GE(class_size(c), n);
        // 8-byte blocks for requests of at most 8 bytes, multiples of 16 above.
        ASSERT_EQ(class_size(c) % (n <= 8 ? tiny_align : min_align), 0u);
        if (c > 0) {
            ASSERT_LT(class_size(c - 1), n == 0 ? 1 : n) << "the smallest class that fits";
        }
        ASSERT_LE(class_size(c), n <= 128 ? (n == 0 ? 1 : n) + 15 : n + n / 4) << "at most 25% waste";
    }
}

TEST_F(HeapTest, HeapStateLivesInsideTheSlice) {
    slice* s = slice_of(0);
    heap* h = heap_of_rank(0);
    ASSERT_NE(h, nullptr);
    auto a = reinterpret_cast<std::uintptr_t>(h);
    EXPECT_GE(a, s->lo);
    EXPECT_LT(a, s->hi);
    EXPECT_EQ(s->heap, h);
    EXPECT_EQ(heap::create_in(*s), h) << "one heap per slice";
    void* p = h->alloc(100);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(heap::of(p), h);
    EXPECT_EQ(rank_of(p), 0);
    heap::free(h, p);
}

TEST_F(HeapTest, RandomSizesKeepTheirContents) {
    heap* h = heap_of_rank(1);
    ASSERT_NE(h, nullptr);
    std::mt19937_64 rng(42);
    struct blk {
        void* p;
        std::size_t n;
    };
    std::vector<blk> live;
    for (int it = 0; it < 200000; ++it) {
        if (live.empty() || (live.size() < 3000 && rng() % 2 == 0)) {
            std::size_t n = rng() % 8 == 0 ? rng() % (2 * MiB) : rng() % 2048;
            void* p = h->alloc(n);
            ASSERT_NE(p, nullptr) << n;
            // Aligned for any object that fits: 16 from 16 bytes (max_align_t), 8 below.
            ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % (n > 8 ? min_align : tiny_align), 0u);
            ASSERT_GE(heap::usable_size(p), n);
            ASSERT_TRUE(heap::is_live_block(p));
            fill(p, n);
            live.push_back({p, n});
        } else {
            std::size_t i = rng() % live.size();
            ASSERT_TRUE(check(live[i].p, live[i].n)) << "block " << live[i].p << " of " << live[i].n << " overwritten";
            heap::free(h, live[i].p);
            live[i] = live.back();
            live.pop_back();
        }
    }
    for (const blk& b : live) {
        ASSERT_TRUE(check(b.p, b.n));
        heap::free(h, b.p);
    }
    auto st = h->get_stats();
    EXPECT_EQ(st.large_live, 0u);
    EXPECT_LE(st.spans_total - st.spans_free, 40u) << "empty small spans go back to the runs (but a few kept ones)";
}

TEST_F(HeapTest, TheFirstSpansToEmptyStayWithTheirClassTheOthersGoBack) {
    heap* h = heap_of_rank(1);
    ASSERT_NE(h, nullptr);
    const std::size_t per_span = (span_size - 128) / 16;  // 16-byte blocks after the span header
    std::vector<void*> v;
    auto round = [&](std::size_t n) {
        v.clear();
        for (std::size_t i = 0; i < n; ++i) {
            void* p = h->alloc(16);
            ASSERT_NE(p, nullptr);
            std::memset(p, 0x5a, 16);
            v.push_back(p);
        }
        for (void* p : v) {
            heap::free(h, p);
        }
    };
    round(8 * per_span);
    auto st = h->get_stats();
    EXPECT_EQ(st.spans_total - st.spans_free, 8u) << "the spans that emptied stay in their class list";
    std::vector<void*> first = v;
    std::sort(first.begin(), first.end());
    round(8 * per_span);
    EXPECT_EQ(h->get_stats().spans_total, st.spans_total) << "the same phase again takes no span";
    std::sort(v.begin(), v.end());
    EXPECT_EQ(v, first) << "and hands out the same blocks";
    // 40 spans' worth: 16 spans are kept at most (1 MiB per heap), plus the class's current one.
    round(40 * per_span);
    st = h->get_stats();
    EXPECT_GE(st.spans_total - st.spans_free, 16u);
    // Plus the first span of the round: the owner's free cache holds its first blocks freed.
    EXPECT_LE(st.spans_total - st.spans_free, 18u) << "past the limit, empty spans go back to the runs";
    const std::size_t before_trim = st.spans_total - st.spans_free;
    h->trim();  // gives the cached blocks back to their span, which goes back to the runs
    st = h->get_stats();
    EXPECT_LT(st.spans_total - st.spans_free, before_trim);
    EXPECT_LE(st.spans_total - st.spans_free, 17u);
    // A large block reuses the spans given back.
    void* big = h->alloc(20 * span_size);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(h->get_stats().spans_total, st.spans_total);
    heap::free(h, big);
}

TEST_F(HeapTest, TheOwnersLastFreedBlocksComeBackFirstAndTheCacheIsBounded) {
    heap* h = heap_of_rank(3);
    ASSERT_NE(h, nullptr);
    for (std::size_t n : {std::size_t{16}, std::size_t{1000}, std::size_t{8000}}) {
        const std::size_t cap = detail::cache_max[static_cast<std::size_t>(size_class(n))];
        ASSERT_GE(cap, 4u);
        std::vector<void*> v(3 * cap);
        for (void*& p : v) {
            p = h->alloc(n);
            ASSERT_NE(p, nullptr);
            fill(p, n);
        }
        for (void* p : v) {
            heap::free(h, p);
        }
        // The first `cap` frees went to the cache, the others to their spans: the cache hands
        // its blocks back last freed first, then the spans serve.
        std::vector<void*> w(3 * cap);
        for (std::size_t i = 0; i < w.size(); ++i) {
            w[i] = h->alloc(n);
            ASSERT_NE(w[i], nullptr);
            if (i < cap) {
                EXPECT_EQ(w[i], v[cap - 1 - i]) << n << " B, allocation " << i;
            }
            fill(w[i], n);
        }
        std::vector<void*> sw = w;
        std::sort(sw.begin(), sw.end());
        EXPECT_EQ(std::adjacent_find(sw.begin(), sw.end()), sw.end()) << "no block handed out twice";
        for (void* p : w) {
            ASSERT_TRUE(check(p, n));
            heap::free(h, p);
        }
    }
}

TEST_F(HeapTest, SpansOfAClassStartTheirBlocksAtDifferentCacheColours) {
    // 1 KiB blocks: without colouring every span starts them at the same 4 page offsets.
    heap* h = heap_of_rank(4);
    ASSERT_NE(h, nullptr);
    std::vector<void*> v;
    std::set<std::uintptr_t> offsets;  // within the page, in cache lines
    for (int i = 0; i < 16 * 63; ++i) {  // 16 spans of 63 blocks
        void* p = h->alloc(1024);
        ASSERT_NE(p, nullptr);
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 128, 0u) << "colours keep 128-byte alignment";
        offsets.insert(reinterpret_cast<std::uintptr_t>(p) % 4096 / 64);
        v.push_back(p);
    }
    EXPECT_GE(offsets.size(), 16u);
    for (void* p : v) {
        ASSERT_TRUE(heap::is_live_block(p));
        heap::free(h, p);
    }
}

TEST_F(HeapTest, AlignedAllocationsAreAligned) {
    heap* h = heap_of_rank(2);
    ASSERT_NE(h, nullptr);
    std::vector<void*> blocks;
    for (std::size_t align = 16; align <= 4 * MiB; align *= 2) {
        for (std::size_t n : {std::size_t{1}, std::size_t{24}, std::size_t{100}, std::size_t{5000}, 3 * align / 2,
                              std::size_t{200000}}) {
            void* p = h->alloc_aligned(n, align);
            ASSERT_NE(p, nullptr) << n << " aligned to " << align;
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << n << " aligned to " << align;
            EXPECT_GE(heap::usable_size(p), n);
            fill(p, n);
            blocks.push_back(p);
        }
    }
    for (void* p : blocks) {
        heap::free(h, p);
    }
}

/// A large block's colour: where it starts in its page, in 64-byte lines (address bits 6-11).
std::size_t colour_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % page_size / 64; }
/// The distance between two colours around the page, in lines.
std::size_t colour_distance(std::size_t a, std::size_t b) {
    std::size_t d = a > b ? a - b : b - a;
    return std::min(d, page_size / 64 - d);
}

TEST_F(HeapTest, LargeBlocksStartAtColoursThatChangeFromOneToTheNext) {
    // STREAM's case: arrays from malloc that all started on a 64 KiB boundary shared their low
    // 16 address bits, and the triad a = b + s * c ran at 38 GB/s instead of 67.
    heap* h = heap_of_rank(1);
    ASSERT_NE(h, nullptr);
    std::vector<std::pair<void*, std::size_t>> live;
    std::set<std::size_t> all;
    for (std::size_t n : {std::size_t{9000}, std::size_t{100000}, std::size_t{1333328}, MiB, 4 * MiB, 3 * span_size,
                          span_size - 100}) {
        std::vector<std::size_t> colours;
        for (int b = 0; b < 8; ++b) {
            void* p = h->alloc(n);
            ASSERT_NE(p, nullptr) << n;
            auto a = reinterpret_cast<std::uintptr_t>(p);
            ASSERT_EQ(a % 64, 0u) << "a colour is a whole number of cache lines";
            ASSERT_GE(heap::usable_size(p), n);
            EXPECT_EQ((a + heap::usable_size(p)) % span_size, 0u) << "usable up to the end of its run";
            ASSERT_TRUE(heap::is_live_block(p));
            EXPECT_FALSE(heap::is_live_block(static_cast<char*>(p) + 64)) << "not a block start";
            EXPECT_FALSE(heap::is_live_block(reinterpret_cast<void*>(a - 64))) << "not a block start";
            if (a != run_of(p)) {
                EXPECT_FALSE(heap::is_live_block(reinterpret_cast<void*>(run_of(p)))) << "the run's start is not the block's";
            }
            fill(p, n);
            if (!colours.empty()) {
                EXPECT_NE(colour_of(p), colours.back()) << n << ": consecutive large blocks differ in bits 6-11";
            }
            colours.push_back(colour_of(p));
            all.insert(colour_of(p));
            live.emplace_back(p, n);
        }
        EXPECT_EQ(std::set<std::size_t>(colours.begin(), colours.end()).size(), colours.size()) << n << ": eight colours";
        // Three arrays allocated in a row are at least 8 lines apart in their pages.
        for (std::size_t b = 0; b + 2 < colours.size(); ++b) {
            EXPECT_GE(colour_distance(colours[b], colours[b + 1]), 8u);
            EXPECT_GE(colour_distance(colours[b], colours[b + 2]), 8u);
        }
    }
    EXPECT_GE(all.size(), 48u) << "56 blocks in a row spread over the 64 colours of a page";
    for (auto& [p, n] : live) {
        ASSERT_TRUE(check(p, n)) << "block " << p << " of " << n << " overwritten";
        heap::free(h, p);
        EXPECT_FALSE(heap::is_live_block(p)) << "freed";
    }
    EXPECT_EQ(h->get_stats().large_live, 0u);
    EXPECT_EQ(h->get_stats().spans_free, h->get_stats().spans_total) << "every run came back";
}

TEST_F(HeapTest, AlignedLargeBlocksKeepTheirAlignmentAndColourBelowAPage) {
    heap* h = heap_of_rank(3);
    ASSERT_NE(h, nullptr);
    std::vector<void*> blocks;
    for (std::size_t align = 16; align <= 4 * MiB; align *= 2) {
        for (std::size_t n : {std::size_t{20000}, std::size_t{200000}, MiB, 3 * MiB + 17}) {
            std::set<std::size_t> offsets;  // within the page
            for (int b = 0; b < 6; ++b) {
                void* p = h->alloc_aligned(n, align);
                ASSERT_NE(p, nullptr) << n << " aligned to " << align;
                auto a = reinterpret_cast<std::uintptr_t>(p);
                ASSERT_EQ(a % align, 0u) << n << " aligned to " << align;
                ASSERT_GE(heap::usable_size(p), n);
                ASSERT_TRUE(heap::is_live_block(p));
                fill(p, n);
                offsets.insert(a % page_size);
                blocks.push_back(p);
            }
            if (align <= 2048) {
                EXPECT_GE(offsets.size(), 2u) << n << " aligned to " << align << ": coloured by multiples of the alignment";
            }
        }
    }
    for (void* p : blocks) {
        heap::free(h, p);
    }
    EXPECT_EQ(h->get_stats().large_live, 0u);
}

TEST_F(HeapTest, ColouredBlocksGrowAndShrinkInPlaceKeepingTheirColour) {
    heap* h = heap_of_rank(5);
    ASSERT_NE(h, nullptr);
    void* first = h->alloc(100000);  // the first large block's colour is 0: take it
    auto* p = static_cast<unsigned char*>(h->alloc(200000));
    ASSERT_TRUE(first != nullptr && p != nullptr);
    const auto colour = reinterpret_cast<std::uintptr_t>(p) - run_of(p);
    ASSERT_NE(colour, 0u);
    std::memset(p, 5, 200000);
    // At the top of the heap: it grows in place, to exactly the end of a span and one past it.
    for (std::size_t n : {5 * MiB, 6 * MiB - colour, 6 * MiB - colour + 1, 40 * MiB}) {
        auto* q = static_cast<unsigned char*>(h->realloc(p, n));
        ASSERT_EQ(q, p) << n << ": in place";
        ASSERT_GE(heap::usable_size(q), n);
        EXPECT_EQ((reinterpret_cast<std::uintptr_t>(q) + heap::usable_size(q)) % span_size, 0u);
        ASSERT_EQ(q[199999], 5);
        q[n - 1] = 6;
    }
    // Shrinks in place and gives its tail back.
    const std::size_t before = h->get_stats().spans_free;
    auto* q = static_cast<unsigned char*>(h->realloc(p, 150000));
    ASSERT_EQ(q, p);
    EXPECT_GE(heap::usable_size(q), 150000u);
    EXPECT_LT(heap::usable_size(q), 150000u + span_size);
    EXPECT_GT(h->get_stats().spans_free, before + 500) << "40 MiB less";
    ASSERT_EQ(q[149999], 5);
    // Blocked by a live block after it: it moves to another run (and another colour).
    void* wall = h->alloc(100000);
    ASSERT_NE(wall, nullptr);
    std::size_t total_before = h->get_stats().spans_total;
    auto* m = static_cast<unsigned char*>(h->realloc(q, 80 * MiB));
    ASSERT_NE(m, nullptr);
    if (m != q) {
        EXPECT_FALSE(heap::is_live_block(q)) << "the old block is freed";
    }
    EXPECT_GE(h->get_stats().spans_total, total_before);
    ASSERT_EQ(m[0], 5);
    ASSERT_EQ(m[149999], 5);
    ASSERT_TRUE(heap::is_live_block(m));
    // Down to a small block: it moves, its first bytes kept.
    auto* s = static_cast<unsigned char*>(h->realloc(m, 1000));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s[999], 5);
    EXPECT_LE(heap::usable_size(s), small_max);
    heap::free(h, s);
    heap::free(h, wall);
    heap::free(h, first);
    EXPECT_EQ(h->get_stats().large_live, 0u);
    EXPECT_GE(h->get_stats().spans_free + 1, h->get_stats().spans_total) << "all but the small block's span";
}

TEST_F(HeapTest, ColouredBlocksFreedByAnotherTaskComeBack) {
    // Large blocks at colours freed by another thread: their runs go on the owner's returned
    // stack (linked through the run's first word), those of 256 KiB and more purged by the freer;
    // neither may touch the live blocks around them.
    heap* a = heap_of_rank(3);
    heap* b = heap_of_rank(4);
    ASSERT_TRUE(a != nullptr && b != nullptr);
    std::size_t max_spans = 0;
    for (int round = 0; round < 20; ++round) {
        std::vector<std::pair<void*, std::size_t>> gone, kept;
        for (int i = 0; i < 12; ++i) {
            std::size_t n = i % 3 == 0 ? 100000 : i % 3 == 1 ? 300000 + static_cast<std::size_t>(i) : 2 * MiB;
            void* p = a->alloc(n);
            void* k = a->alloc(70000);  // a neighbour that stays
            ASSERT_TRUE(p != nullptr && k != nullptr);
            fill(p, n);
            fill(k, 70000);
            gone.emplace_back(p, n);
            kept.emplace_back(k, 70000);
        }
        std::atomic<bool> bad{false};
        std::thread t([&] {
            for (auto& [p, n] : gone) {
                bad = bad || !check(p, n);
                heap::free(b, p);  // b is the current heap: remote
            }
        });
        t.join();
        EXPECT_FALSE(bad.load());
        for (auto& [k, n] : kept) {
            ASSERT_TRUE(check(k, n)) << "a neighbour of a remotely freed block was damaged";
            heap::free(a, k);
        }
        max_spans = std::max(max_spans, a->get_stats().spans_total);
    }
    void* p = a->alloc(MiB);  // takes the returned runs back
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(a->get_stats().large_live, 1u);
    // One round holds 4 x (100 + 300 KiB + 2 MiB) + 12 x 70 KiB ~ 11 MiB ~ 180 spans; without
    // reuse 20 rounds would take 3600.
    EXPECT_LT(max_spans, 500u);
    EXPECT_EQ(b->get_stats().spans_total, 0u) << "remote frees do not allocate in the freeing heap";
    heap::free(a, p);
}

TEST_F(HeapTest, FreesFromOtherTasksComeBackToTheOwner) {
    // Thread 0 owns heap 3 and allocates; thread 1 owns heap 4 and frees what thread 0 sends it
    // (remote frees). Heap 3 must reuse the returned blocks: its span count stays bounded.
    heap* a = heap_of_rank(3);
    heap* b = heap_of_rank(4);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    constexpr int rounds = 200;
    constexpr int per_round = 2000;
    std::vector<std::atomic<void*>> box(per_round);
    std::atomic<int> round_ready{-1}, round_done{-1};
    std::atomic<bool> bad{false};
    std::thread consumer([&] {
        for (int r = 0; r < rounds; ++r) {
            while (round_ready.load(std::memory_order_acquire) < r) {
                std::this_thread::yield();
            }
            for (int i = 0; i < per_round; ++i) {
                void* p = box[static_cast<std::size_t>(i)].exchange(nullptr);
                std::size_t n = static_cast<std::size_t>(16 + (i * 37) % 3000);
                if (i % 100 == 0) {
                    n = 100000 + static_cast<std::size_t>(i);  // some large blocks too
                }
                if (!check(p, n)) {
                    bad = true;
                }
                heap::free(b, p);  // b is the current heap: every free here is remote
            }
            round_done.store(r, std::memory_order_release);
        }
    });
    std::size_t max_spans = 0;
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < per_round; ++i) {
            std::size_t n = static_cast<std::size_t>(16 + (i * 37) % 3000);
            if (i % 100 == 0) {
                n = 100000 + static_cast<std::size_t>(i);
            }
            void* p = a->alloc(n);
            ASSERT_NE(p, nullptr);
            fill(p, n);
            box[static_cast<std::size_t>(i)].store(p);
        }
        round_ready.store(r, std::memory_order_release);
        while (round_done.load(std::memory_order_acquire) < r) {
            std::this_thread::yield();
        }
        std::size_t spans = a->get_stats().spans_total;
        max_spans = spans > max_spans ? spans : max_spans;
    }
    consumer.join();
    EXPECT_FALSE(bad.load()) << "a block was damaged between its allocation and its remote free";
    // One round needs about 2000 x ~1.5 KiB + 20 x 100 KiB ~ 5 MiB ~ 80 spans; without reuse
    // 200 rounds would take 16000.
    EXPECT_LT(max_spans, 400u);
    EXPECT_EQ(b->get_stats().spans_total, 0u) << "remote frees do not allocate in the freeing heap";
}

TEST_F(HeapTest, SpansEmptiedByRemoteFreesServeOtherClassesBeforeTheHeapGrows) {
    heap* h = heap_of_rank(6);
    heap* other = heap_of_rank(7);
    ASSERT_NE(h, nullptr);
    ASSERT_NE(other, nullptr);
    // Use up the heap's kept spans (16 that stay with their class when they empty), so that
    // every span emptied below may go back to the runs.
    std::vector<void*> v;
    const std::size_t per_span64 = (span_size - 128) / 64;
    for (std::size_t i = 0; i < 20 * per_span64; ++i) {
        v.push_back(h->alloc(64));
        ASSERT_NE(v.back(), nullptr);
    }
    for (void* p : v) {
        heap::free(h, p);
    }
    // A phase of 1 KiB blocks, all freed by another thread (remote frees: they wait on their
    // spans' remote lists, most spans full and out of their class list).
    constexpr std::size_t spans = 64;
    auto phase = [&](std::size_t size) {
        v.clear();
        const std::size_t n = spans * ((span_size - 128) / size);
        for (std::size_t i = 0; i < n; ++i) {
            void* p = h->alloc(size);
            ASSERT_NE(p, nullptr);
            fill(p, size);
            v.push_back(p);
        }
    };
    auto free_remotely = [&](std::size_t size) {
        std::atomic<bool> bad{false};
        std::thread t([&] {
            for (void* p : v) {
                bad = bad || !check(p, size);
                heap::free(other, p);
            }
        });
        t.join();
        EXPECT_FALSE(bad.load()) << "a block was damaged between its allocation and its remote free";
    };
    phase(1024);
    ASSERT_FALSE(testing::Test::HasFatalFailure());
    free_remotely(1024);
    const std::size_t before = h->get_stats().spans_total;
    // Then a phase of another class: its spans come from those the remote frees emptied (taken
    // back when no free run was left), not from new memory. Without taking the remote lists
    // back, the heap would grow by the phase's 64 spans.
    phase(2048);
    ASSERT_FALSE(testing::Test::HasFatalFailure());
    EXPECT_LE(h->get_stats().spans_total, before + 16) << "at most one commit chunk more";
    free_remotely(2048);
    EXPECT_EQ(other->get_stats().spans_total, 0u) << "remote frees do not allocate in the freeing heap";
    // trim() takes the remote lists back too: every span the phase used returns to the runs,
    // its pages to the kernel.
    EXPECT_TRUE(h->trim());
    auto st = h->get_stats();
    EXPECT_LE(st.spans_total - st.spans_free, 16u + 3u) << "only the kept spans and the current spans of the three classes stay";
    EXPECT_EQ(st.spans_dirty, 0u);
}

TEST_F(HeapTest, AGrowingReallocChainStaysInPlace) {
    heap* h = heap_of_rank(5);
    ASSERT_NE(h, nullptr);
    void* p = h->alloc(100);
    ASSERT_NE(p, nullptr);
    std::memset(p, 7, 100);
    void* large_at = nullptr;
    int moves_after_large = 0;
    std::size_t n = 100 + 4096;
    std::size_t last = 0;  // where the previous size's last byte was marked
    for (; n < 256 * MiB; n += n / 16 + 4096) {
        void* q = h->realloc(p, n);
        ASSERT_NE(q, nullptr) << n;
        ASSERT_EQ(static_cast<unsigned char*>(q)[99], 7) << "contents survive";
        ASSERT_TRUE(last == 0 || static_cast<unsigned char*>(q)[last] == 9) << "contents survive";
        last = n - 1;
        if (n > small_max) {
            if (large_at == nullptr) {
                large_at = q;
            } else if (q != p) {
                ++moves_after_large;
            }
        }
        static_cast<unsigned char*>(q)[n - 1] = 9;
        p = q;
    }
    EXPECT_EQ(moves_after_large, 0) << "a large block at the top of the heap grows in place";
    auto st = h->get_stats();
    std::size_t used = st.spans_total - st.spans_free;
    EXPECT_LE(used * span_size, n + 2 * MiB) << "no holes left behind by the chain";
    heap::free(h, p);
}

TEST_F(HeapTest, LargeRunsMergeWhenFreedAndAreReused) {
    heap* h = heap_of_rank(6);
    ASSERT_NE(h, nullptr);
    void* a = h->alloc(3 * span_size);
    void* b = h->alloc(3 * span_size);
    void* c = h->alloc(3 * span_size);
    ASSERT_TRUE(a && b && c);
    heap::free(h, b);
    heap::free(h, a);
    heap::free(h, c);
    auto st = h->get_stats();
    EXPECT_EQ(st.large_live, 0u);
    EXPECT_EQ(st.spans_free, st.spans_total) << "everything free";
    void* big = h->alloc(9 * span_size);
    EXPECT_EQ(run_of(big), run_of(a)) << "the three runs merged into one that fits 9 spans";
    EXPECT_EQ(h->get_stats().spans_total, st.spans_total) << "reused, not committed anew";
    heap::free(h, big);
}

TEST_F(HeapTest, AFullSliceReturnsNullAndRecovers) {
    heap* h = heap_of_rank(7);
    ASSERT_NE(h, nullptr);
    std::vector<void*> blocks;
    for (;;) {
        void* p = h->alloc(64 * MiB);
        if (p == nullptr) {
            break;
        }
        blocks.push_back(p);
        ASSERT_LT(blocks.size(), 100u) << "a 1 GiB slice cannot hold 100 blocks of 64 MiB";
    }
    EXPECT_GE(blocks.size(), 10u);
    EXPECT_EQ(h->alloc(std::size_t{1} << 40), nullptr) << "larger than the slice";
    void* small = h->alloc(64);
    EXPECT_NE(small, nullptr) << "small blocks still fit in the committed spans";
    for (void* p : blocks) {
        heap::free(h, p);
    }
    heap::free(h, small);
    EXPECT_NE(h->alloc(64 * MiB), nullptr) << "freed runs are reused";
}

TEST_F(HeapTest, DoubleFreeAndForeignPointersAreRecognised) {
    heap* h = heap_of_rank(0);
    ASSERT_NE(h, nullptr);
    void* p = h->alloc(48);
    void* q = h->alloc(MiB);
    ASSERT_TRUE(heap::is_live_block(p));
    ASSERT_TRUE(heap::is_live_block(q));
    EXPECT_FALSE(heap::is_live_block(static_cast<char*>(p) + 16)) << "not a block start";
    EXPECT_FALSE(heap::is_live_block(static_cast<char*>(q) + 64));
    int local = 0;
    EXPECT_FALSE(heap::is_live_block(&local)) << "not in any slice";
    EXPECT_EQ(heap::of(&local), nullptr);
    heap::free(h, p);
    EXPECT_FALSE(heap::is_live_block(p)) << "freed";
    // A coloured large block (the second one: the first has colour 0): its run's start and the
    // lines around it are not its start; freed after the block before it, it merges into that
    // one's free run, and its pointer must still read as freed.
    void* c = h->alloc(MiB);
    ASSERT_TRUE(heap::is_live_block(c));
    ASSERT_NE(run_of(c), reinterpret_cast<std::uintptr_t>(c)) << "coloured";
    EXPECT_FALSE(heap::is_live_block(reinterpret_cast<void*>(run_of(c))));
    EXPECT_FALSE(heap::is_live_block(static_cast<char*>(c) - 64));
    EXPECT_FALSE(heap::is_live_block(static_cast<char*>(c) + 64));
    EXPECT_FALSE(heap::is_live_block(static_cast<char*>(c) + span_size)) << "inside the block";
    heap::free(h, q);
    EXPECT_FALSE(heap::is_live_block(q)) << "freed";
    heap::free(h, c);
    EXPECT_FALSE(heap::is_live_block(c)) << "freed, its run merged into the one before";
}

TEST_F(HeapTest, ManyHeapsAllocateConcurrently) {
    std::vector<std::thread> ts;
    std::atomic<int> failures{0};
    for (int r = 0; r < 8; ++r) {
        ts.emplace_back([r, &failures] {
            heap* h = heap::create_in(*slice_of(r));
            std::mt19937 rng(static_cast<unsigned>(r));
            std::vector<std::pair<void*, std::size_t>> live;
            for (int i = 0; i < 50000; ++i) {
                std::size_t n = rng() % 1500;
                void* p = h->alloc(n);
                if (p == nullptr) {
                    ++failures;
                    return;
                }
                fill(p, n);
                live.emplace_back(p, n);
                if (live.size() > 500) {
                    auto [q, m] = live[rng() % live.size()];
                    if (!check(q, m)) {
                        ++failures;
                    }
                    heap::free(h, q);
                    live.erase(std::find(live.begin(), live.end(), std::make_pair(q, m)));
                }
            }
            for (auto [q, m] : live) {
                heap::free(h, q);
            }
        });
    }
    for (auto& t : ts) {
        t.join();
    }
    EXPECT_EQ(failures.load(), 0);
}


TEST_F(HeapTest, LocalAndRemoteFreesMixedUnderLoad) {
    // Two owners allocate small blocks of a few classes; each frees half of its own blocks and
    // hands the other half to the other, which frees them (remote), so spans go full, get remote
    // frees while full, come back through reclaim, empty out and return to the runs, over and
    // over. A lost span, a span queued twice or a damaged block shows as a hang, a failed check
    // or unbounded growth.
    constexpr int iterations = 300000;
    struct mailbox {
        std::vector<std::atomic<void*>> slots = std::vector<std::atomic<void*>>(4096);
    };
    mailbox to[2];
    std::atomic<bool> bad{false};
    auto owner = [&](int me) {
        heap* h = heap::create_in(*slice_of(me));
        std::mt19937 rng(static_cast<unsigned>(me + 7));
        std::vector<void*> mine;
        for (int i = 0; i < iterations; ++i) {
            std::size_t n = 16 + rng() % 200;
            void* p = h->alloc(n);
            if (p == nullptr) {
                bad = true;
                return;
            }
            std::memset(p, me + 1, 16);
            if (rng() % 2 == 0) {
                mine.push_back(p);
            } else {
                std::atomic<void*>& slot = to[1 - me].slots[rng() % 4096];
                if (void* old = slot.exchange(p); old != nullptr) {
                    heap::free(h, old);  // nobody took it: free it ourselves (remote for its owner? no: ours)
                }
            }
            if (mine.size() > 300 || (i % 1000 == 0 && !mine.empty())) {
                std::size_t k = rng() % mine.size();
                if (*static_cast<unsigned char*>(mine[k]) != me + 1) {
                    bad = true;
                }
                heap::free(h, mine[k]);
                mine[k] = mine.back();
                mine.pop_back();
            }
            std::atomic<void*>& in = to[me].slots[rng() % 4096];
            if (void* q = in.exchange(nullptr); q != nullptr) {
                if (*static_cast<unsigned char*>(q) != 2 - me) {
                    bad = true;
                }
                heap::free(h, q);  // a block of the other heap: remote
            }
        }
        for (void* p : mine) {
            heap::free(h, p);
        }
    };
    std::thread t0(owner, 0), t1(owner, 1);
    t0.join();
    t1.join();
    for (auto& box : to) {
        for (auto& slot : box.slots) {
            if (void* p = slot.exchange(nullptr); p != nullptr) {
                heap::free(nullptr, p);
            }
        }
    }
    EXPECT_FALSE(bad.load());
    for (int r = 0; r < 2; ++r) {
        auto st = heap::create_in(*slice_of(r))->get_stats();
        EXPECT_LT(st.spans_total, 200u) << "heap " << r << " keeps reusing its spans";
    }
}


TEST_F(HeapTest, RemoteFreesNeverWriteIntoASpanReusedMeanwhile) {
    // A remote free pushes its block on the span's remote list; the owner may take the block
    // back at once, find the span empty, give it back to the runs and hand its memory out as a
    // large block. The freeing thread must not touch the span after its push (unless the push
    // queued the span, which keeps it from being reused): an earlier version looked at a flag
    // byte of the span after the push and could write into the new block. Here the owner
    // keeps emptying spans (trim) and refilling them with large blocks of bytes that read as the
    // old "full" flag, while three threads (more than the cores, so they get preempted anywhere)
    // free its small blocks; every large block must come back unchanged.
    heap* h = heap_of_rank(0);
    ASSERT_NE(h, nullptr);
    constexpr int freers = 3;
    constexpr int rounds = 400;
    constexpr std::size_t small = 256;
    const std::size_t batch = 6 * ((span_size - 128) / small);  // six spans of blocks
    std::vector<std::atomic<void*>> box(batch);
    std::atomic<int> round{-1};
    std::atomic<std::size_t> next{0}, freed{0};
    std::vector<std::thread> threads;
    for (int f = 0; f < freers; ++f) {
        threads.emplace_back([&, f] {
            heap* mine = heap_of_rank(1 + f);
            for (int r = 0; r < rounds; ++r) {
                while (round.load(std::memory_order_acquire) < r) {
                    std::this_thread::yield();
                }
                for (std::size_t i = next.fetch_add(1); i < batch; i = next.fetch_add(1)) {
                    heap::free(mine, box[i].exchange(nullptr, std::memory_order_acquire));
                    freed.fetch_add(1, std::memory_order_release);
                }
            }
        });
    }
    std::vector<void*> large;
    bool intact = true;
    bool out_of_memory = false;
    auto check_and_free = [&](std::size_t keep) {
        while (large.size() > keep) {
            auto* c = static_cast<const unsigned char*>(large.back());
            intact = intact && std::all_of(c, c + span_size, [](unsigned char x) { return x == 1; });
            heap::free(h, large.back());
            large.pop_back();
        }
    };
    for (int r = 0; r < rounds && intact && !out_of_memory; ++r) {
        for (std::size_t i = 0; i < batch; ++i) {
            void* p = h->alloc(small);
            out_of_memory = out_of_memory || p == nullptr;
            box[i].store(p, std::memory_order_relaxed);
        }
        freed.store(0, std::memory_order_relaxed);
        next.store(0, std::memory_order_release);  // a freer late from the last round may start here
        round.store(r, std::memory_order_release);
        while (freed.load(std::memory_order_acquire) < batch) {
            h->trim();  // spans the frees emptied go back to the runs...
            void* p = h->alloc(span_size);  // ...and come out again as large blocks
            if (p == nullptr) {
                out_of_memory = true;
                break;
            }
            std::memset(p, 1, span_size);
            large.push_back(p);
            if (large.size() >= 32) {
                check_and_free(16);
            }
        }
        check_and_free(0);
    }
    if (!intact || out_of_memory) {
        round.store(rounds, std::memory_order_release);  // let the freers run out
        for (auto& b : box) {
            b.store(nullptr);
        }
    }
    for (auto& t : threads) {
        t.join();
    }
    ASSERT_FALSE(out_of_memory);
    EXPECT_TRUE(intact) << "a remote free wrote into memory its span had been reused for";
    EXPECT_TRUE(h->trim());
    auto st = h->get_stats();
    EXPECT_LE(st.spans_total - st.spans_free, 16u + 1u) << "every emptied span came back";
}

TEST_F(HeapTest, ZeroedBlocksAreZeroWithoutTouchingCleanPages) {
    heap* h = heap_of_rank(2);
    ASSERT_NE(h, nullptr);
    // Dirty memory comes back zeroed: small and large, a block reused right after its free.
    for (std::size_t n : {std::size_t{40}, std::size_t{5000}, 3 * span_size + 100, 300 * span_size}) {
        void* p = h->alloc(n);
        ASSERT_NE(p, nullptr);
        std::memset(p, 0xff, n);
        heap::free(h, p);
        auto* z = static_cast<unsigned char*>(h->alloc_zeroed(n));
        ASSERT_NE(z, nullptr);
        for (std::size_t i = 0; i < n; i += (i < 8192 ? 1 : 4093)) {
            ASSERT_EQ(z[i], 0) << "byte " << i << " of " << n;
        }
        ASSERT_EQ(z[n - 1], 0);
        heap::free(h, z);
    }
    // A big zeroed block from never-touched spans costs no resident memory.
    auto resident_kib = [] {
        long pages = 0, res = 0;
        FILE* f = std::fopen("/proc/self/statm", "r");
        if (f != nullptr) {
            if (std::fscanf(f, "%ld %ld", &pages, &res) != 2) {
                res = 0;
            }
            std::fclose(f);
        }
        return res * 4;
    };
    long before = resident_kib();
    auto* big = static_cast<unsigned char*>(h->alloc_zeroed(256 * MiB));
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(big[128 * MiB], 0);
    EXPECT_EQ(big[256 * MiB - 1], 0);
    EXPECT_LT(resident_kib() - before, 64 * 1024) << "KiB: the zeroing must not touch 256 MiB";
    heap::free(h, big);
}


/// The pages that [p, p + n) touches (a large block starts at a colour inside its first page).
std::size_t pages_of(const void* p, std::size_t n) {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    return (a + n + page_size - 1) / page_size - a / page_size;
}
/// Pages of [p, p + n) resident in memory (mincore).
std::size_t resident_pages(const void* p, std::size_t n) {
    std::vector<unsigned char> vec(pages_of(p, n));
    auto lo = reinterpret_cast<std::uintptr_t>(p) / page_size * page_size;
    if (::mincore(reinterpret_cast<void*>(lo), vec.size() * page_size, vec.data()) != 0) {
        return ~std::size_t{0};
    }
    return static_cast<std::size_t>(std::count_if(vec.begin(), vec.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

TEST_F(HeapTest, FreedRunsStayResidentForAWhileThenGoBackToTheKernel) {
    heap* h = heap_of_rank(3);
    ASSERT_NE(h, nullptr);
    const std::size_t n = 16 * MiB;
    // A buffer freed and allocated again (a step of a time loop) is not faulted in again.
    void* p = h->alloc(n);
    ASSERT_NE(p, nullptr);
    const std::size_t pages = pages_of(p, n);
    std::memset(p, 1, n);
    heap::free(h, p);
    EXPECT_GE(h->get_stats().spans_dirty, n / span_size);
    EXPECT_EQ(resident_pages(p, n), pages) << "freed 16 MiB kept resident (under the 64 MiB cap)";
    void* q = h->alloc(n);
    ASSERT_EQ(run_of(q), run_of(p)) << "the same run again (at another colour: the same span count)";
    EXPECT_GE(resident_pages(q, n) + 1, pages_of(q, n)) << "resident, but the page its new colour moves it into";
    std::memset(q, 2, n);
    heap::free(h, q);
    // malloc_trim's way: everything free goes back now (but each run's first page, its links).
    EXPECT_TRUE(h->trim());
    EXPECT_EQ(h->get_stats().spans_dirty, 0u);
    EXPECT_LE(resident_pages(p, n), 1u);
    EXPECT_FALSE(h->trim()) << "nothing left to give back";
    // After the delay (1 s) the next free of a run gives the old dirty runs back.
    void* a = h->alloc(n);
    void* live = h->alloc(span_size);  // between the two: b's run does not merge with a's
    void* b = h->alloc(2 * span_size);
    ASSERT_TRUE(a != nullptr && live != nullptr && b != nullptr);
    std::memset(a, 3, n);
    std::memset(b, 3, 2 * span_size);
    heap::free(h, a);
    EXPECT_EQ(resident_pages(a, n), pages_of(a, n));
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    heap::free(h, b);
    EXPECT_LE(resident_pages(a, n), 1u) << "16 MiB free for more than a second: given back";
    EXPECT_EQ(resident_pages(b, 2 * span_size), pages_of(b, 2 * span_size)) << "b was freed just now: kept";
    heap::free(h, live);
    // Past the cap (64 MiB of dirty free spans per heap), a free gives everything back at once.
    const std::size_t big = 80 * MiB;
    void* c = h->alloc(big);
    ASSERT_NE(c, nullptr);
    std::memset(c, 4, big);
    heap::free(h, c);
    EXPECT_LE(resident_pages(c, big), 1u);
    EXPECT_EQ(h->get_stats().spans_dirty, 0u);
}

TEST_F(HeapTest, ASliceSavedAndRestoredBringsItsHeapBack) {
    // What checkpoint/restart and migration will do: copy the committed ranges of a slice out,
    // let the heap change, copy them back at the same addresses. The heap (its state lives in
    // the slice) must be exactly as it was: the old blocks intact, and it must go on working.
    slice* sl = slice_of(4);
    heap* h = heap::create_in(*sl);
    ASSERT_NE(h, nullptr);
    std::vector<std::pair<void*, std::size_t>> blocks;
    for (int i = 0; i < 2000; ++i) {
        std::size_t n = i % 10 == 0 ? 200000 + static_cast<std::size_t>(i) : 16 + static_cast<std::size_t>(i) * 3;
        void* p = h->alloc(n);
        ASSERT_NE(p, nullptr);
        fill(p, n);
        blocks.emplace_back(p, n);
    }
    struct saved {
        range r;
        std::vector<unsigned char> bytes;
    };
    std::vector<saved> image;
    sl->for_each_committed(
        [](range r, void* a) noexcept {
            auto* img = static_cast<std::vector<saved>*>(a);
            img->push_back({r, std::vector<unsigned char>(reinterpret_cast<unsigned char*>(r.lo),
                                                          reinterpret_cast<unsigned char*>(r.hi))});
        },
        &image);
    ASSERT_FALSE(image.empty());
    // Change everything: free the blocks, allocate others over them.
    for (auto& b : blocks) {
        heap::free(h, b.first);
    }
    for (int i = 0; i < 500; ++i) {
        void* p = h->alloc(static_cast<std::size_t>(100 + i));
        std::memset(p, 0xee, static_cast<std::size_t>(100 + i));
    }
    // Restore the image at the same addresses.
    for (const saved& s : image) {
        std::memcpy(reinterpret_cast<void*>(s.r.lo), s.bytes.data(), s.bytes.size());
    }
    EXPECT_EQ(sl->heap, h) << "the slice header says where its heap is";
    for (auto& b : blocks) {
        ASSERT_TRUE(check(b.first, b.second)) << "block " << b.first << " restored";
        ASSERT_TRUE(heap::is_live_block(b.first)) << "and live again in the restored heap";
    }
    for (auto& b : blocks) {
        heap::free(h, b.first);
    }
    void* p = h->alloc(1000);
    EXPECT_NE(p, nullptr) << "the restored heap goes on";
    heap::free(h, p);
}

}  // namespace
