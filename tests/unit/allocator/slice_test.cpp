// Address slices (allocator/slice.hpp): reservation at a fixed base, per-rank slices, commit on
// demand from both ends, enumeration of committed ranges, exhaustion, clear errors, NUMA binding.
#include "allocator/slice.hpp"

#include <gtest/gtest.h>
#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace {

using namespace mpc;
using namespace mpc::alloc;

const std::uintptr_t test_base = default_space_base() + (std::uintptr_t{4} << 30);  // away from the default
constexpr std::size_t MiB = std::size_t{1} << 20;

class SliceTest : public ::testing::Test {
protected:
    void TearDown() override { release_space(); }
};

std::vector<range> committed(const slice& s) {
    std::vector<range> out;
    s.for_each_committed([](range r, void* a) noexcept { static_cast<std::vector<range>*>(a)->push_back(r); }, &out);
    return out;
}

TEST_F(SliceTest, SlicesSitAtBasePlusRankTimesSize) {
    ASSERT_TRUE(reserve_space(8, {test_base, 64 * MiB}));
    EXPECT_TRUE(space_reserved());
    EXPECT_EQ(space_count(), 8);
    EXPECT_EQ(space_slice_size(), 64 * MiB);
    for (int r = 0; r < 8; ++r) {
        slice* s = slice_of(r);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->lo, test_base + r * 64 * MiB);
        EXPECT_EQ(s->hi, s->lo + 64 * MiB);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s), s->lo) << "the header lives in the slice";
        EXPECT_EQ(s->rank, r);
        EXPECT_EQ(rank_of(reinterpret_cast<void*>(s->lo)), r);
        EXPECT_EQ(rank_of(reinterpret_cast<void*>(s->hi - 1)), r);
        EXPECT_EQ(slice_of(r), s) << "a second lookup returns the same header";
    }
    EXPECT_EQ(rank_of(reinterpret_cast<void*>(test_base - 1)), -1);
    EXPECT_EQ(rank_of(reinterpret_cast<void*>(test_base + 8 * 64 * MiB)), -1);
    int local = 0;
    EXPECT_EQ(rank_of(&local), -1);
    EXPECT_EQ(slice_of(-1), nullptr);
    EXPECT_EQ(slice_of(8), nullptr);
}

TEST_F(SliceTest, CommitsFromBothEndsAndReportsTheRanges) {
    ASSERT_TRUE(reserve_space(2, {test_base, 64 * MiB}));
    slice* s = slice_of(1);
    ASSERT_NE(s, nullptr);
    auto before = committed(*s);
    ASSERT_EQ(before.size(), 1u);
    EXPECT_EQ(before[0].lo, s->lo);
    EXPECT_EQ(before[0].size(), slice::header_size);

    auto h = s->grow_heap(4 * MiB);
    ASSERT_TRUE(h);
    EXPECT_EQ(*h, s->lo + slice::header_size);
    std::memset(reinterpret_cast<void*>(*h), 0x5a, 4 * MiB);  // committed: writable
    auto st = s->take_stack(MiB);
    ASSERT_TRUE(st);
    EXPECT_EQ(*st, s->hi - MiB);
    std::memset(reinterpret_cast<void*>(*st), 0xa5, MiB);
    auto st2 = s->take_stack(64 * 1024);
    ASSERT_TRUE(st2);
    EXPECT_EQ(*st2, s->hi - MiB - 4096 - 64 * 1024) << "below the first stack and its guard page";

    auto after = committed(*s);
    ASSERT_EQ(after.size(), 3u);
    EXPECT_EQ(after[0].lo, s->lo);
    EXPECT_EQ(after[0].hi, *h + 4 * MiB);
    EXPECT_EQ(after[1].lo, *st2);
    EXPECT_EQ(after[1].size(), 64u * 1024);
    EXPECT_EQ(after[2].lo, s->hi - MiB);
    EXPECT_EQ(after[2].hi, s->hi);
    unsigned char vec = 0;
    EXPECT_EQ(::mincore(reinterpret_cast<void*>(*st2 - 4096), 4096, &vec), 0) << "the guard is mapped (reserved)";
    s->give_stack(*st);
    auto again = s->take_stack(MiB);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *st) << "a released stack of the same size is reused";
    EXPECT_EQ(static_cast<unsigned char*>(reinterpret_cast<void*>(*again))[0], 0) << "given back to the kernel";
    EXPECT_FALSE(s->take_stack(100)) << "not a multiple of the page size";
    EXPECT_EQ(s->heap_room(), 64 * MiB - slice::header_size - 4 * MiB - MiB - 4096 - 64 * 1024 - 4096);
}

TEST_F(SliceTest, AFullSliceRefusesAndKeepsItsState) {
    ASSERT_TRUE(reserve_space(1, {test_base, 64 * MiB}));
    slice* s = slice_of(0);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->take_stack(16 * MiB));
    std::size_t room = s->heap_room();
    auto too_much = s->grow_heap(room + 4096);
    ASSERT_FALSE(too_much);
    EXPECT_EQ(too_much.error().code(), errc::no_memory);
    EXPECT_EQ(s->heap_room(), room) << "a refused commit must not move the boundary";
    ASSERT_TRUE(s->grow_heap(room));
    EXPECT_EQ(s->heap_room(), 0u);
    EXPECT_FALSE(s->grow_heap(4096));
    EXPECT_FALSE(s->take_stack(4096));
    EXPECT_FALSE(s->grow_heap(100)) << "not a multiple of the page size";
}

TEST_F(SliceTest, DefaultSizeIsAPowerOfTwoThatFits) {
    ASSERT_TRUE(reserve_space(1000, {test_base, 0}));
    std::size_t sz = space_slice_size();
    EXPECT_EQ(sz & (sz - 1), 0u) << sz;
    EXPECT_LE(sz * 1000, space_default_end() - test_base);
    EXPECT_GE(sz * 2 * 1000, space_default_end() - test_base) << "the largest power of two that fits";
    release_space();
    ASSERT_TRUE(reserve_space(1, {test_base, 0}));
    EXPECT_EQ(space_slice_size(), std::min(std::size_t{1} << 40, std::bit_floor(space_default_end() - test_base)))
        << "capped at 1 TiB";
}

// The slices of the default size stay clear of the executable (this test is a PIE: Linux loads
// it at 0x555555554000 plus a random offset, a different one in each process) and of its brk
// heap, at every rank count: 1 TiB slices for 72 ranks used to run into them.
TEST_F(SliceTest, DefaultSlicesLeaveTheExecutableAndItsHeapAlone) {
    const auto code = reinterpret_cast<std::uintptr_t>(&committed);
    const auto brk = reinterpret_cast<std::uintptr_t>(::sbrk(0));
    for (int n : {1, 2, 64, 69, 70, 72, 100, 127, 128, 200, 1000, 4096}) {
        status st = reserve_space(n, {test_base, 0});
        ASSERT_TRUE(st) << n << " ranks: " << st.reason();
        const std::uintptr_t lo = space_base();
        const std::uintptr_t hi = lo + space_slice_size() * static_cast<std::size_t>(n);
        EXPECT_LE(hi, space_default_end()) << n;
        EXPECT_TRUE(code < lo || code >= hi) << n << " ranks: the slices cover the program's code";
        EXPECT_TRUE(brk < lo || brk >= hi) << n << " ranks: the slices cover the brk heap";
        release_space();
    }
}

TEST_F(SliceTest, TooManySlicesForTheAddressSpaceIsAClearError) {
    status st = reserve_space(100000, {test_base, std::size_t{1} << 40});
    ASSERT_FALSE(st);
    EXPECT_EQ(st.code(), errc::invalid_argument);
    EXPECT_NE(std::strstr(st.reason(), "MPC_SLICE_SIZE"), nullptr) << st.reason();
    EXPECT_FALSE(space_reserved());
    EXPECT_FALSE(reserve_space(0));
    EXPECT_FALSE(reserve_space(4, {test_base + 1, 64 * MiB})) << "unaligned base";
    EXPECT_FALSE(reserve_space(4, {test_base, 64 * MiB + 1})) << "unaligned size";
}

TEST_F(SliceTest, ATakenRangeIsAClearError) {
    void* squat = ::mmap(reinterpret_cast<void*>(test_base + 3 * 64 * MiB), 4096, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    ASSERT_NE(squat, MAP_FAILED);
    status st = reserve_space(8, {test_base, 64 * MiB});
    ::munmap(squat, 4096);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.code(), errc::busy);
    EXPECT_NE(std::strstr(st.reason(), "MPC_SLICE_BASE"), nullptr) << st.reason();
    EXPECT_FALSE(space_reserved());
    ASSERT_TRUE(reserve_space(8, {test_base, 64 * MiB})) << "free again once the squatter left";
    EXPECT_EQ(reserve_space(8, {test_base, 64 * MiB}).code(), errc::busy) << "reserved twice";
}

TEST_F(SliceTest, PagesAreBoundToTheNumaNodeAndCanMove) {
    ASSERT_TRUE(reserve_space(2, {test_base, 64 * MiB}));
    slice* s = slice_of(0);
    ASSERT_NE(s, nullptr);
    auto h = s->grow_heap(MiB);
    ASSERT_TRUE(h);
    ASSERT_TRUE(s->bind(0));
    EXPECT_EQ(s->numa_node, 0);
    auto* p = reinterpret_cast<char*>(*h);
    std::memset(p, 1, MiB);
    int mode = -1;
    unsigned long mask = 0;
    ASSERT_EQ(::get_mempolicy(&mode, &mask, sizeof(mask) * 8, p, MPOL_F_ADDR), 0);
    EXPECT_EQ(mode, MPOL_PREFERRED);
    EXPECT_EQ(mask, 1UL);
    int node = -1;
    ASSERT_EQ(::get_mempolicy(&node, nullptr, 0, p, MPOL_F_NODE | MPOL_F_ADDR), 0);
    EXPECT_EQ(node, 0) << "a touched page of a slice bound to node 0 is on node 0";
    EXPECT_TRUE(s->move_to_node(0));
    EXPECT_FALSE(s->bind(-1));
}

}  // namespace
