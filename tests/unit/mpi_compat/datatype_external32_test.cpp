// external32: known big-endian byte images, sizes of MPI 3.1 table 13.2, conversions that do not
// fit, long double as binary128, and round trips of random derived types.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "mpi_compat/datatype/copy.hpp"
#include "tests/unit/mpi_compat/dt_reference.hpp"

namespace {

using namespace mpc::mpi;
using bytes = std::vector<unsigned char>;

const datatype* T(MPI_Datatype h) { return predefined(h & 0xffffff); }

bytes pack32(const void* src, count_t count, const datatype& t) {
    bytes out(std::size_t(std::max<count_t>(external32_size(count, t), 0)) + 4, 0xEE);
    count_t pos = 0;
    EXPECT_TRUE(pack_external32(src, count, t, out.data(), count_t(out.size()), &pos).ok());
    out.resize(std::size_t(pos));
    return out;
}

TEST(DatatypeExternal32, SizesOfTable13_2) {
    struct {
        MPI_Datatype h;
        count_t size;
    } const cases[] = {
        {MPI_CHAR, 1},
        {MPI_WCHAR, 2},
        {MPI_SHORT, 2},
        {MPI_INT, 4},
        {MPI_LONG, 4},
        {MPI_UNSIGNED_LONG, 4},
        {MPI_LONG_LONG_INT, 8},
        {MPI_FLOAT, 4},
        {MPI_DOUBLE, 8},
        {MPI_LONG_DOUBLE, 16},
        {MPI_C_BOOL, 1},
        {MPI_AINT, 8},
        {MPI_OFFSET, 8},
        {MPI_COUNT, 8},
        {MPI_C_FLOAT_COMPLEX, 8},
        {MPI_C_DOUBLE_COMPLEX, 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, 32},
        {MPI_LOGICAL, 4},
        {MPI_INTEGER, 4},
        {MPI_DOUBLE_COMPLEX, 16},
        {MPI_FLOAT_INT, 8},
        {MPI_DOUBLE_INT, 12},
        {MPI_LONG_INT, 8},
        {MPI_SHORT_INT, 6},
        {MPI_LONG_DOUBLE_INT, 20},
        {MPI_2INT, 8},
        {MPI_CXX_BOOL, 1},
        {MPI_PACKED, 1},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(external32_size(3, *T(c.h)), 3 * c.size) << (c.h & 0xffffff);
    }
}

TEST(DatatypeExternal32, KnownImages) {
    const int i = 0x01020304;
    EXPECT_EQ(pack32(&i, 1, *T(MPI_INT)), (bytes{1, 2, 3, 4}));
    const double one = 1.0;
    EXPECT_EQ(pack32(&one, 1, *T(MPI_DOUBLE)), (bytes{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}));
    const long minus2 = -2;
    EXPECT_EQ(pack32(&minus2, 1, *T(MPI_LONG)), (bytes{0xff, 0xff, 0xff, 0xfe}));
    const wchar_t a = L'A';
    EXPECT_EQ(pack32(&a, 1, *T(MPI_WCHAR)), (bytes{0, 0x41}));
    const std::complex<float> z(1.0f, 2.0f);
    EXPECT_EQ(pack32(&z, 1, *T(MPI_C_FLOAT_COMPLEX)), (bytes{0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}));
    struct {
        short s;
        int i;
    } const si = {0x0102, 0x03040506};
    EXPECT_EQ(pack32(&si, 1, *T(MPI_SHORT_INT)), (bytes{1, 2, 3, 4, 5, 6}));
    const long double ld[] = {1.0L, -2.5L};
    bytes expect(32, 0);
    expect[0] = 0x3f;
    expect[1] = 0xff;
    expect[16] = 0xc0;
    expect[17] = 0x00;
    expect[18] = 0x40;
    EXPECT_EQ(pack32(ld, 2, *T(MPI_LONG_DOUBLE)), expect);
    // A vector of shorts with gaps: only the described shorts, in order.
    const short arr[] = {0x0a0b, 0x7777, 0x0c0d, 0x7777};
    datatype_ref v(*type_vector(2, 1, 2, T(MPI_SHORT)));
    EXPECT_EQ(pack32(arr, 1, *v), (bytes{0x0a, 0x0b, 0x0c, 0x0d}));
}

TEST(DatatypeExternal32, LongAndWcharThatDoNotFit) {
    const long big = 1L << 40;
    bytes out(8, 0);
    count_t pos = 0;
    const mpc::status st = pack_external32(&big, 1, *T(MPI_LONG), out.data(), 8, &pos);
    EXPECT_FALSE(st.ok());
    EXPECT_STREQ(st.reason(), external32_conversion_reason);
    EXPECT_EQ(pos, 0);
    const long ok_values[] = {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    const bytes img = pack32(ok_values, 2, *T(MPI_LONG));
    long back[2] = {};
    pos = 0;
    ASSERT_TRUE(unpack_external32(img.data(), count_t(img.size()), &pos, back, 2, *T(MPI_LONG)).ok());
    EXPECT_EQ(back[0], ok_values[0]);
    EXPECT_EQ(back[1], ok_values[1]);
    const unsigned long umax = 0xffffffffUL;
    unsigned long uback = 0;
    const bytes uimg = pack32(&umax, 1, *T(MPI_UNSIGNED_LONG));
    pos = 0;
    ASSERT_TRUE(unpack_external32(uimg.data(), 4, &pos, &uback, 1, *T(MPI_UNSIGNED_LONG)).ok());
    EXPECT_EQ(uback, umax);
    const wchar_t wide = wchar_t(0x1F600);
    pos = 0;
    EXPECT_FALSE(pack_external32(&wide, 1, *T(MPI_WCHAR), out.data(), 8, &pos).ok());
}

TEST(DatatypeExternal32, LongDoubleRoundTrip) {
    const long double vals[] = {0.0L,
                                -0.0L,
                                1.0L,
                                -2.5L,
                                LDBL_MAX,
                                LDBL_MIN,
                                LDBL_TRUE_MIN,
                                1e-4940L,
                                std::numeric_limits<long double>::infinity(),
                                3.14159265358979323846264L};
    const bytes img = pack32(vals, 10, *T(MPI_LONG_DOUBLE));
    ASSERT_EQ(img.size(), 160u);
    long double back[10];
    count_t pos = 0;
    ASSERT_TRUE(unpack_external32(img.data(), 160, &pos, back, 10, *T(MPI_LONG_DOUBLE)).ok());
    for (int k = 0; k < 10; ++k) {
        EXPECT_EQ(back[k], vals[k]) << k;
        EXPECT_EQ(std::signbit(back[k]), std::signbit(vals[k])) << k;
    }
    const long double nan = std::numeric_limits<long double>::quiet_NaN();
    const bytes nimg = pack32(&nan, 1, *T(MPI_LONG_DOUBLE));
    pos = 0;
    ASSERT_TRUE(unpack_external32(nimg.data(), 16, &pos, back, 1, *T(MPI_LONG_DOUBLE)).ok());
    EXPECT_TRUE(std::isnan(back[0]));
}

TEST(DatatypeExternal32, RandomRoundTrips) {
    for (int seed = 0; seed < 500; ++seed) {
        SCOPED_TRACE(seed);
        dtref::generator g{unsigned(seed) + 5000};
        g.allow_long_double = false;
        auto d = g.tree(3);
        const auto map = dtref::expand(*d);
        datatype_ref t(dtref::build(*d));
        ASSERT_TRUE(t);
        const int count = g.uniform(0, 3);
        const auto offs = dtref::stream_offsets(map, count);
        dtref::span_buffer src(offs, 0);
        for (auto& c : src.bytes) {
            c = static_cast<unsigned char>(g.rng()());
        }
        count_t ext = 0;  // reference external size: all used basic types keep their size
        for (const auto& e : map.entries) {
            ext += e.size;
        }
        ASSERT_EQ(external32_size(count, *t), ext * count);
        const bytes img = pack32(src.base(), count, *t);
        ASSERT_EQ(count_t(img.size()), ext * count);
        dtref::span_buffer dst(offs, 0xEE);
        dtref::span_buffer ref(offs, 0xEE);
        for (aint o : offs) {
            ref.at(o) = src.at(o);
        }
        count_t pos = 0;
        ASSERT_TRUE(unpack_external32(img.data(), count_t(img.size()), &pos, dst.base(), count, *t).ok());
        ASSERT_EQ(dst.bytes, ref.bytes);
        // The image is the native pack with every basic element byte-reversed (little-endian host).
        if (std::endian::native == std::endian::little && count > 0) {
            std::size_t at = 0;
            for (int e = 0; e < count; ++e) {
                for (const auto& en : map.entries) {
                    const int unit = en.kind == (MPI_C_DOUBLE_COMPLEX & 0xffffff) ? 8 : en.size;
                    for (int b = 0; b < en.size; ++b) {
                        const int u = b / unit, k = b % unit;
                        const aint o = e * map.extent() + en.disp + u * unit + (unit - 1 - k);
                        ASSERT_EQ(img[at + std::size_t(b)], src.at(o));
                    }
                    at += std::size_t(en.size);
                }
            }
        }
    }
}

}  // namespace
