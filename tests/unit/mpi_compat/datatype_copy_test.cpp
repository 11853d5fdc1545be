// Datatype engine against a brute-force reference: random trees of constructors and random
// counts; layout-to-layout copy (with truncation), pack, unpack, segments, seeks and element
// counts compared byte by byte, with a sentinel around and between the described bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "mpi_compat/datatype/copy.hpp"
#include "tests/unit/mpi_compat/dt_reference.hpp"

namespace {

using namespace mpc::mpi;
using dtref::span_buffer;

constexpr unsigned char sentinel = 0xEE;
constexpr int rounds = 1500;

// A random type with its reference typemap; skipped (null) when the engine refused it.
struct sample {
    dtref::desc_ptr desc;
    dtref::typemap map;
    datatype_ref type;
};

sample draw(dtref::generator& g, int depth = 3) {
    sample s;
    s.desc = g.tree(depth);
    s.map = dtref::expand(*s.desc);
    s.type = datatype_ref(dtref::build(*s.desc));
    return s;
}

void check_bounds(const sample& s) {
    ASSERT_TRUE(s.type);
    count_t size = 0;
    for (const auto& e : s.map.entries) {
        size += e.size;
    }
    EXPECT_EQ(s.type->size(), size);
    EXPECT_EQ(s.type->lb(), s.map.lb);
    EXPECT_EQ(s.type->extent(), s.map.extent());
}

void fill_random(span_buffer& b, std::mt19937& rng) {
    for (auto& c : b.bytes) {
        c = static_cast<unsigned char>(rng());
    }
}

TEST(DatatypeRandom, BoundsMatchTheTypemap) {
    for (int seed = 0; seed < rounds * 2; ++seed) {
        dtref::generator g{unsigned(seed)};
        sample s = draw(g, 4);
        SCOPED_TRACE(seed);
        check_bounds(s);
    }
}

TEST(DatatypeRandom, LayoutToLayoutCopyWithTruncation) {
    for (int seed = 0; seed < rounds; ++seed) {
        SCOPED_TRACE(seed);
        dtref::generator g(unsigned(seed) + 1000);
        sample s = draw(g);
        sample r = draw(g);
        ASSERT_TRUE(s.type && r.type);
        const int scount = g.uniform(0, seed % 4 == 0 ? 40 : 3);  // long counts: bulk strided paths
        const int rcount = g.uniform(0, seed % 4 == 0 ? 40 : 3);
        const auto soffs = dtref::stream_offsets(s.map, scount);
        const auto roffs = dtref::stream_offsets(r.map, rcount);
        span_buffer src(soffs, 0);
        fill_random(src, g.rng());
        span_buffer dst(roffs, sentinel);
        span_buffer ref(roffs, sentinel);
        const count_t both = count_t(std::min(soffs.size(), roffs.size()));
        const count_t limit = g.uniform(0, 2) == 0 ? count_t(g.uniform(0, int(both) + 3)) : no_limit;
        const count_t n = copy(src.base(), scount, *s.type, dst.base(), rcount, *r.type, limit);
        ASSERT_EQ(n, std::min(both, limit));
        for (count_t i = 0; i < n; ++i) {
            ref.at(roffs[std::size_t(i)]) = src.at(soffs[std::size_t(i)]);
        }
        ASSERT_EQ(dst.bytes, ref.bytes);
    }
}

TEST(DatatypeRandom, PackUnpackRoundTrip) {
    for (int seed = 0; seed < rounds; ++seed) {
        SCOPED_TRACE(seed);
        dtref::generator g(unsigned(seed) + 2000);
        sample s = draw(g);
        ASSERT_TRUE(s.type);
        ASSERT_TRUE(s.type->commit().ok());
        const int count = g.uniform(0, seed % 4 == 0 ? 40 : 4);
        const auto offs = dtref::stream_offsets(s.map, count);
        span_buffer src(offs, 0);
        fill_random(src, g.rng());
        const count_t n = packed_size(count, *s.type);
        ASSERT_EQ(n, count_t(offs.size()));
        // Pack after a 3-byte header: position advances by n.
        std::vector<unsigned char> packed(std::size_t(n) + 3, sentinel);
        count_t pos = 3;
        ASSERT_TRUE(pack(src.base(), count, *s.type, packed.data(), count_t(packed.size()), &pos).ok());
        ASSERT_EQ(pos, n + 3);
        for (count_t i = 0; i < n; ++i) {
            ASSERT_EQ(packed[std::size_t(i + 3)], src.at(offs[std::size_t(i)])) << i;
        }
        // One byte short: an error and nothing written.
        std::vector<unsigned char> small(std::size_t(n) + 2, sentinel);
        pos = 3;
        if (n > 0) {
            EXPECT_FALSE(pack(src.base(), count, *s.type, small.data(), count_t(small.size()), &pos).ok());
            EXPECT_EQ(pos, 3);
            EXPECT_TRUE(std::all_of(small.begin(), small.end(), [](unsigned char c) { return c == sentinel; }));
        }
        // Unpack into a sentinel buffer: exactly the described bytes change.
        span_buffer dst(offs, sentinel);
        span_buffer ref(offs, sentinel);
        for (count_t i = 0; i < n; ++i) {
            ref.at(offs[std::size_t(i)]) = packed[std::size_t(i + 3)];
        }
        pos = 3;
        ASSERT_TRUE(unpack(packed.data(), count_t(packed.size()), &pos, dst.base(), count, *s.type).ok());
        ASSERT_EQ(pos, n + 3);
        ASSERT_EQ(dst.bytes, ref.bytes);
        pos = 4;
        if (n > 0) {
            EXPECT_FALSE(unpack(packed.data(), count_t(packed.size()), &pos, dst.base(), count, *s.type).ok());
        }
    }
}

TEST(DatatypeRandom, SegmentsInPiecesAndSeeks) {
    for (int seed = 0; seed < rounds; ++seed) {
        SCOPED_TRACE(seed);
        dtref::generator g(unsigned(seed) + 3000);
        sample s = draw(g);
        sample r = draw(g);
        ASSERT_TRUE(s.type && r.type);
        const int scount = g.uniform(1, seed % 4 == 0 ? 40 : 3);
        const int rcount = g.uniform(1, seed % 4 == 0 ? 40 : 3);
        const auto soffs = dtref::stream_offsets(s.map, scount);
        const auto roffs = dtref::stream_offsets(r.map, rcount);
        span_buffer src(soffs, 0);
        fill_random(src, g.rng());
        // Pipelined layout-to-layout copy in random pieces.
        span_buffer dst(roffs, sentinel);
        span_buffer ref(roffs, sentinel);
        segment from(src.base(), scount, *s.type);
        segment to(dst.base(), rcount, *r.type);
        const count_t n = std::min(from.size(), to.size());
        count_t done = 0;
        while (done < n) {
            const count_t step = copy(from, to, g.uniform(1, 7));
            ASSERT_GT(step, 0);
            done += step;
        }
        EXPECT_EQ(copy(from, to, 100), 0);
        for (count_t i = 0; i < n; ++i) {
            ref.at(roffs[std::size_t(i)]) = src.at(soffs[std::size_t(i)]);
        }
        ASSERT_EQ(dst.bytes, ref.bytes);
        // Random seeks then short packs read the right bytes.
        segment seg(src.base(), scount, *s.type);
        for (int k = 0; k < 8 && seg.size() > 0; ++k) {
            const count_t at = g.uniform(0, int(seg.size()));
            seg.seek(at);
            unsigned char out[5];
            const count_t got = seg.pack(out, 5);
            ASSERT_EQ(got, std::min<count_t>(5, seg.size() - at));
            for (count_t i = 0; i < got; ++i) {
                ASSERT_EQ(out[i], src.at(soffs[std::size_t(at + i)])) << "at " << at << " + " << i;
            }
        }
        // Unpack in pieces.
        span_buffer dst2(soffs, sentinel);
        span_buffer ref2(soffs, sentinel);
        std::vector<unsigned char> stream(soffs.size());
        for (std::size_t i = 0; i < soffs.size(); ++i) {
            stream[i] = src.at(soffs[i]);
            ref2.at(soffs[i]) = stream[i];
        }
        segment in(dst2.base(), scount, *s.type);
        for (std::size_t at = 0; at < stream.size();) {
            at += std::size_t(in.unpack(stream.data() + at, g.uniform(1, 9)));
        }
        ASSERT_EQ(dst2.bytes, ref2.bytes);
    }
}

TEST(DatatypeRandom, GetElementsCountsWholeBasicElements) {
    for (int seed = 0; seed < rounds; ++seed) {
        SCOPED_TRACE(seed);
        dtref::generator g(unsigned(seed) + 4000);
        sample s = draw(g);
        ASSERT_TRUE(s.type);
        std::vector<int> sizes;  // basic elements of 3 elements, in stream order
        for (int i = 0; i < 3; ++i) {
            for (const auto& e : s.map.entries) {
                if (e.size > 0) {
                    sizes.push_back(e.size);
                }
            }
        }
        count_t total = 0;
        for (int z : sizes) {
            total += z;
        }
        for (int k = 0; k < 6; ++k) {
            const count_t bytes = total > 0 ? g.uniform(0, int(total)) : 0;
            count_t expect = 0, acc = 0;
            for (int z : sizes) {
                if (acc + z > bytes) {
                    break;
                }
                acc += z;
                ++expect;
            }
            if (acc != bytes) {
                expect = -1;
            }
            EXPECT_EQ(get_elements(*s.type, bytes), expect) << bytes;
        }
    }
}

TEST(DatatypeCopy, TruncationWritesExactlyMaxBytes) {
    // 10 doubles sent into a vector of 4 doubles with gaps: only 4 x 8 bytes land.
    auto v = datatype_ref(*type_vector(4, 1, 2, predefined(MPI_DOUBLE & 0xffffff)));
    double src[10];
    for (int i = 0; i < 10; ++i) {
        src[i] = i + 0.5;
    }
    double dst[9];
    std::memset(dst, 0xEE, sizeof dst);
    const count_t n = copy(src, 10, *predefined(MPI_DOUBLE & 0xffffff), dst, 1, *v);
    EXPECT_EQ(n, 32);
    unsigned char sent[8];
    std::memset(sent, 0xEE, 8);
    for (int i = 0; i < 9; ++i) {
        if (i % 2 == 0 && i < 8) {
            EXPECT_EQ(dst[i], src[i / 2]);
        } else {
            EXPECT_EQ(std::memcmp(&dst[i], sent, 8), 0) << i;
        }
    }
    // A byte limit in the middle of an element stops there.
    std::memset(dst, 0xEE, sizeof dst);
    EXPECT_EQ(copy(src, 10, *predefined(MPI_DOUBLE & 0xffffff), dst, 1, *v, 13), 13);
    EXPECT_EQ(dst[0], src[0]);
    unsigned char part[8];
    std::memcpy(part, &dst[2], 8);
    EXPECT_EQ(std::memcmp(part, &src[1], 5), 0);
    EXPECT_EQ(part[5], 0xEE);
}

TEST(DatatypeCopy, GetCount) {
    const datatype& d = *predefined(MPI_DOUBLE & 0xffffff);
    EXPECT_EQ(get_count(d, 24), 3);
    EXPECT_EQ(get_count(d, 25), -1);
    EXPECT_EQ(get_count(*predefined(MPI_LB & 0xffffff), 0), 0);
    EXPECT_EQ(get_elements(*predefined(MPI_SHORT_INT & 0xffffff), 6), 2);
    EXPECT_EQ(get_elements(*predefined(MPI_SHORT_INT & 0xffffff), 2), 1);
    EXPECT_EQ(get_elements(*predefined(MPI_SHORT_INT & 0xffffff), 3), -1);
}

}  // namespace
