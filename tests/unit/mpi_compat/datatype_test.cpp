// Datatype engine: predefined types against the C compiler, constructors against hand-computed
// bounds, argument errors, envelope/contents, plan merging and large counts.
#include "mpi_compat/datatype/datatype.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "mpi_compat/datatype/copy.hpp"
#include "mpi_compat/datatype/float128.hpp"
#include "mpi_compat/datatype/plan.hpp"

namespace {

using namespace mpc::mpi;

int idx(MPI_Datatype h) { return h & 0xffffff; }
const datatype* T(MPI_Datatype h) { return predefined(idx(h)); }

// Owns the result of a constructor.
datatype_ref make(mpc::result<datatype*>&& r) {
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().reason());
    return datatype_ref(r.ok() ? *r : nullptr);
}

template <class A, class B>
struct pr {
    A a;
    B b;
};

struct expected {
    MPI_Datatype h;
    const char* name;
    std::size_t size, extent, true_extent, align;
};
#define BASIC(h, T) \
    { h, #h, sizeof(T), sizeof(T), sizeof(T), alignof(T) }
template <class A, class B>
constexpr std::size_t second_offset() {
    using P = pr<A, B>;
    return offsetof(P, b);
}
#define PAIR(h, A, B) \
    { h, #h, sizeof(A) + sizeof(B), sizeof(pr<A, B>), second_offset<A, B>() + sizeof(B), alignof(pr<A, B>) }

const expected all_predefined[] = {
    BASIC(MPI_CHAR, char),
    BASIC(MPI_SIGNED_CHAR, signed char),
    BASIC(MPI_UNSIGNED_CHAR, unsigned char),
    BASIC(MPI_BYTE, unsigned char),
    BASIC(MPI_WCHAR, wchar_t),
    BASIC(MPI_SHORT, short),
    BASIC(MPI_UNSIGNED_SHORT, unsigned short),
    BASIC(MPI_INT, int),
    BASIC(MPI_UNSIGNED, unsigned),
    BASIC(MPI_LONG, long),
    BASIC(MPI_UNSIGNED_LONG, unsigned long),
    BASIC(MPI_LONG_LONG_INT, long long),
    BASIC(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    BASIC(MPI_FLOAT, float),
    BASIC(MPI_DOUBLE, double),
    BASIC(MPI_LONG_DOUBLE, long double),
    BASIC(MPI_C_BOOL, bool),
    BASIC(MPI_INT8_T, int8_t),
    BASIC(MPI_INT16_T, int16_t),
    BASIC(MPI_INT32_T, int32_t),
    BASIC(MPI_INT64_T, int64_t),
    BASIC(MPI_UINT8_T, uint8_t),
    BASIC(MPI_UINT16_T, uint16_t),
    BASIC(MPI_UINT32_T, uint32_t),
    BASIC(MPI_UINT64_T, uint64_t),
    BASIC(MPI_C_COMPLEX, std::complex<float>),
    BASIC(MPI_C_FLOAT_COMPLEX, std::complex<float>),
    BASIC(MPI_C_DOUBLE_COMPLEX, std::complex<double>),
    BASIC(MPI_C_LONG_DOUBLE_COMPLEX, std::complex<long double>),
    BASIC(MPI_AINT, MPI_Aint),
    BASIC(MPI_OFFSET, MPI_Offset),
    BASIC(MPI_COUNT, MPI_Count),
    BASIC(MPI_PACKED, char),
    PAIR(MPI_FLOAT_INT, float, int),
    PAIR(MPI_DOUBLE_INT, double, int),
    PAIR(MPI_LONG_INT, long, int),
    PAIR(MPI_SHORT_INT, short, int),
    PAIR(MPI_2INT, int, int),
    PAIR(MPI_LONG_DOUBLE_INT, long double, int),
    BASIC(MPI_CXX_BOOL, bool),
    BASIC(MPI_CXX_FLOAT_COMPLEX, std::complex<float>),
    BASIC(MPI_CXX_DOUBLE_COMPLEX, std::complex<double>),
    BASIC(MPI_CXX_LONG_DOUBLE_COMPLEX, std::complex<long double>),
    BASIC(MPI_CHARACTER, char),
    BASIC(MPI_LOGICAL, int),
    BASIC(MPI_INTEGER, int),
    BASIC(MPI_REAL, float),
    BASIC(MPI_DOUBLE_PRECISION, double),
    BASIC(MPI_COMPLEX, std::complex<float>),
    BASIC(MPI_DOUBLE_COMPLEX, std::complex<double>),
    PAIR(MPI_2REAL, float, float),
    PAIR(MPI_2DOUBLE_PRECISION, double, double),
    PAIR(MPI_2INTEGER, int, int),
    BASIC(MPI_REAL16, float128),
    BASIC(MPI_COMPLEX32, complex128),
};

TEST(DatatypePredefined, SizesExtentsNames) {
    EXPECT_EQ(std::size(all_predefined) + 2, std::size_t(MPC_DATATYPE_PREDEFINED_COUNT - 1));  // + LB, UB
    for (const expected& e : all_predefined) {
        const datatype* t = T(e.h);
        ASSERT_NE(t, nullptr) << e.name;
        EXPECT_EQ(t->size(), count_t(e.size)) << e.name;
        EXPECT_EQ(t->lb(), 0) << e.name;
        EXPECT_EQ(t->extent(), aint(e.extent)) << e.name;
        EXPECT_EQ(t->true_lb(), 0) << e.name;
        EXPECT_EQ(t->true_extent(), aint(e.true_extent)) << e.name;
        EXPECT_EQ(t->bounds().align, int(e.align)) << e.name;
        EXPECT_TRUE(t->is_predefined() && t->is_committed()) << e.name;
        EXPECT_EQ(t->kind(), combiner::named);
        char name[MPI_MAX_OBJECT_NAME];
        t->get_name(name);
        EXPECT_STREQ(name, e.name);
    }
    EXPECT_EQ(predefined(0), nullptr);
    EXPECT_EQ(predefined(MPC_DATATYPE_PREDEFINED_COUNT), nullptr);
    EXPECT_EQ(predefined(-1), nullptr);
}

TEST(DatatypePredefined, Markers) {
    for (MPI_Datatype h : {MPI_LB, MPI_UB}) {
        const datatype* t = T(h);
        EXPECT_EQ(t->size(), 0);
        EXPECT_EQ(t->extent(), 0);
        EXPECT_EQ(t->bounds().sticky_lb, h == MPI_LB);
        EXPECT_EQ(t->bounds().sticky_ub, h == MPI_UB);
    }
}

TEST(DatatypePredefined, PairPlansKeepPadding) {
    // MPI_DOUBLE_INT: 12 data bytes in a 16-byte element; two elements are two runs.
    const plan& p = T(MPI_DOUBLE_INT)->layout();
    EXPECT_TRUE(p.dense);
    EXPECT_FALSE(p.contiguous);
    EXPECT_EQ(flatten(p, 2), (std::vector<byte_run>{{0, 12}, {16, 12}}));
    // MPI_FLOAT_INT has no padding: any count is one run.
    EXPECT_TRUE(T(MPI_FLOAT_INT)->layout().contiguous);
    // The typed plan keeps the float and the int apart.
    EXPECT_EQ(T(MPI_FLOAT_INT)->typed_layout().basic_count, 2);
}

// ---- constructors: hand-computed bounds -----------------------------------------------------------

struct bounds_case {
    count_t size;
    aint lb, extent, true_lb, true_extent;
};

void expect_bounds(const datatype_ref& t, bounds_case b) {
    ASSERT_TRUE(t);
    EXPECT_EQ(t->size(), b.size);
    EXPECT_EQ(t->lb(), b.lb);
    EXPECT_EQ(t->extent(), b.extent);
    EXPECT_EQ(t->true_lb(), b.true_lb);
    EXPECT_EQ(t->true_extent(), b.true_extent);
    EXPECT_EQ(t->layout().size, b.size);
}

TEST(DatatypeConstructors, ContiguousVectorHvector) {
    expect_bounds(make(type_contiguous(3, T(MPI_INT))), {12, 0, 12, 0, 12});
    expect_bounds(make(type_contiguous(0, T(MPI_INT))), {0, 0, 0, 0, 0});
    expect_bounds(make(type_vector(3, 2, 4, T(MPI_INT))), {24, 0, 40, 0, 40});
    // Negative stride: blocks at 0, -16, -32 bytes.
    expect_bounds(make(type_vector(3, 2, -4, T(MPI_INT))), {24, -32, 40, -32, 40});
    expect_bounds(make(type_hvector(2, 1, 100, T(MPI_DOUBLE))), {16, 0, 108, 0, 108});
    expect_bounds(make(type_hvector(2, 1, -100, T(MPI_DOUBLE))), {16, -100, 108, -100, 108});
    // A vector of padded pairs keeps each element's padding in its extent, not in its true extent.
    expect_bounds(make(type_vector(2, 1, 3, T(MPI_DOUBLE_INT))), {24, 0, 64, 0, 60});
}

TEST(DatatypeConstructors, IndexedFamilies) {
    const int bl[] = {3, 1};
    const int di[] = {4, 0};
    expect_bounds(make(type_indexed(2, bl, di, T(MPI_INT))), {16, 0, 28, 0, 28});
    const aint hd[] = {-8, 40};
    expect_bounds(make(type_hindexed(2, bl, hd, T(MPI_INT))), {16, -8, 52, -8, 52});
    const int bd[] = {5, -1, 2};
    expect_bounds(make(type_indexed_block(3, 2, bd, T(MPI_SHORT))), {12, -2, 16, -2, 16});
    const aint hbd[] = {10, 0};
    expect_bounds(make(type_hindexed_block(2, 2, hbd, T(MPI_CHAR))), {4, 0, 12, 0, 12});
    // Zero-length blocks add nothing, not even bounds.
    const int zl[] = {0, 2};
    const int zd[] = {-100, 1};
    expect_bounds(make(type_indexed(2, zl, zd, T(MPI_INT))), {8, 4, 8, 4, 8});
}

TEST(DatatypeConstructors, StructAlignmentAndMarkers) {
    {  // {double at 0, char at 8}: extent padded to 16, true extent 9.
        const int bl[] = {1, 1};
        const aint d[] = {0, 8};
        const datatype* ts[] = {T(MPI_DOUBLE), T(MPI_CHAR)};
        auto s = make(type_struct(2, bl, d, ts));
        expect_bounds(s, {9, 0, 16, 0, 9});
        expect_bounds(make(type_contiguous(2, s.get())), {18, 0, 32, 0, 25});
    }
    {  // MPI_LB at -4, int at 0, MPI_UB at 20: markers win, no padding.
        const int bl[] = {1, 1, 1};
        const aint d[] = {-4, 0, 20};
        const datatype* ts[] = {T(MPI_LB), T(MPI_INT), T(MPI_UB)};
        auto s = make(type_struct(3, bl, d, ts));
        expect_bounds(s, {4, -4, 24, 0, 4});
        EXPECT_TRUE(s->bounds().sticky_lb && s->bounds().sticky_ub);
        // Markers are inherited: a contiguous of it steps by 24 and keeps lb -4.
        expect_bounds(make(type_contiguous(3, s.get())), {12, -4, 72, 0, 52});
    }
    {  // Only an upper marker: lb from the data, ub from the marker.
        const int bl[] = {2, 1};
        const aint d[] = {8, 3};
        const datatype* ts[] = {T(MPI_INT), T(MPI_UB)};
        expect_bounds(make(type_struct(2, bl, d, ts)), {8, 8, -5, 8, 8});
    }
}

TEST(DatatypeConstructors, ResizedAndDup) {
    auto r = make(type_resized(T(MPI_INT), -2, 10));
    expect_bounds(r, {4, -2, 10, 0, 4});
    // Copies at 0, 10, 20: sticky lb -2, sticky ub 28.
    expect_bounds(make(type_contiguous(3, r.get())), {12, -2, 30, 0, 24});
    // A vector with a negative stride of resized elements.
    expect_bounds(make(type_vector(2, 2, -3, r.get())), {16, -32, 50, -30, 44});
    // Resizing to a zero extent: every element at the same place.
    expect_bounds(make(type_resized(T(MPI_DOUBLE), 0, 0)), {8, 0, 0, 0, 8});
    auto d = make(type_dup(r.get()));
    expect_bounds(d, {4, -2, 10, 0, 4});
    EXPECT_EQ(d->kind(), combiner::dup);
    EXPECT_FALSE(d->is_committed());
    ASSERT_TRUE(r->commit().ok());
    EXPECT_TRUE(make(type_dup(r.get()))->is_committed());
}

TEST(DatatypeConstructors, Subarray) {
    const int sizes[] = {4, 5};
    const int subs[] = {2, 3};
    const int starts[] = {1, 2};
    auto c = make(type_subarray(2, sizes, subs, starts, order_c, T(MPI_INT)));
    // Rows 1-2, columns 2-4 of a 4x5 int array: first at (1,2) = 28, last ends at (2,4)+1 = 60.
    expect_bounds(c, {24, 0, 80, 28, 32});
    EXPECT_EQ(flatten(c->layout(), 1), (std::vector<byte_run>{{28, 12}, {48, 12}}));
    auto f = make(type_subarray(2, sizes, subs, starts, order_fortran, T(MPI_INT)));
    // Fortran: first index fastest: element (i,j) at (i + 4 j) * 4; columns 2-4, rows 1-2.
    expect_bounds(f, {24, 0, 80, 36, 40});
    EXPECT_EQ(flatten(f->layout(), 1), (std::vector<byte_run>{{36, 8}, {52, 8}, {68, 8}}));
    EXPECT_EQ(c->kind(), combiner::subarray);
    EXPECT_EQ(c->ints().size(), 3u * 2 + 2);
}

// ---- argument errors --------------------------------------------------------------------------

TEST(DatatypeConstructors, BadArguments) {
    const int one[] = {1};
    const int neg[] = {-1};
    const aint d0[] = {0};
    const datatype* ts[] = {T(MPI_INT)};
    const datatype* nulls[] = {nullptr};
    auto bad = [](mpc::result<datatype*>&& r) {
        EXPECT_FALSE(r.ok());
        if (r.ok()) {
            datatype::release(*r);
        } else {
            EXPECT_EQ(r.error().code(), mpc::errc::invalid_argument);
        }
    };
    bad(type_contiguous(-1, T(MPI_INT)));
    bad(type_contiguous(1, nullptr));
    bad(type_vector(-1, 1, 1, T(MPI_INT)));
    bad(type_vector(1, -1, 1, T(MPI_INT)));
    bad(type_hvector(1, -2, 8, T(MPI_INT)));
    bad(type_indexed(1, neg, one, T(MPI_INT)));
    bad(type_indexed(1, nullptr, one, T(MPI_INT)));
    bad(type_hindexed(-3, one, d0, T(MPI_INT)));
    bad(type_indexed_block(1, -1, one, T(MPI_INT)));
    bad(type_hindexed_block(1, 1, nullptr, T(MPI_INT)));
    bad(type_struct(1, one, d0, nulls));
    bad(type_struct(1, neg, d0, ts));
    bad(type_struct(-1, one, d0, ts));
    bad(type_resized(nullptr, 0, 4));
    bad(type_dup(nullptr));
    const int sz[] = {4};
    const int sub_big[] = {5};
    const int st0[] = {0};
    const int st_bad[] = {2};
    const int sub3[] = {3};
    bad(type_subarray(1, sz, sub_big, st0, order_c, T(MPI_INT)));
    bad(type_subarray(1, sz, sub3, st_bad, order_c, T(MPI_INT)));
    bad(type_subarray(0, sz, sub3, st0, order_c, T(MPI_INT)));
    bad(type_subarray(1, sz, sub3, st0, 3, T(MPI_INT)));
    // Size overflow: 2^30 x 2^20 x 2^30 x 8 bytes does not fit in 63 bits.
    auto a = make(type_contiguous(1 << 30, T(MPI_DOUBLE)));
    auto b = make(type_contiguous(1 << 20, a.get()));
    bad(type_contiguous(1 << 30, b.get()));
}

// ---- envelope and contents ----------------------------------------------------------------------

TEST(DatatypeContents, EnvelopeOfEachCombiner) {
    const int bl[] = {2, 3};
    const int di[] = {0, 7};
    const aint hd[] = {0, 56};
    auto v = make(type_vector(2, 3, 5, T(MPI_INT)));
    EXPECT_EQ(v->kind(), combiner::vector);
    EXPECT_EQ(std::vector<int>(v->ints().begin(), v->ints().end()), (std::vector<int>{2, 3, 5}));
    ASSERT_EQ(v->types().size(), 1u);
    EXPECT_EQ(v->types()[0], T(MPI_INT));
    auto i = make(type_indexed(2, bl, di, v.get()));
    EXPECT_EQ(std::vector<int>(i->ints().begin(), i->ints().end()), (std::vector<int>{2, 2, 3, 0, 7}));
    auto h = make(type_hindexed(2, bl, hd, T(MPI_DOUBLE)));
    EXPECT_EQ(h->ints().size(), 3u);
    EXPECT_EQ(h->aints()[1], 56);
    const datatype* ts[] = {T(MPI_INT), v.get()};
    auto s = make(type_struct(2, bl, hd, ts));
    EXPECT_EQ(s->types().size(), 2u);
    EXPECT_EQ(s->types()[1], v.get());
    auto r = make(type_resized(s.get(), 4, 100));
    EXPECT_EQ(r->aints().size(), 2u);
    EXPECT_EQ(r->aints()[1], 100);
}

TEST(DatatypeContents, ChildrenOutliveTheirHandles) {
    auto v = make(type_vector(3, 1, 2, T(MPI_DOUBLE)));
    auto c = make(type_contiguous(2, v.get()));
    v = datatype_ref();  // the user frees the vector; the contiguous keeps it alive
    ASSERT_TRUE(c->commit().ok());
    EXPECT_EQ(c->size(), 48);
    EXPECT_EQ(c->types()[0]->size(), 24);
}

TEST(DatatypeNames, SetAndGet) {
    auto v = make(type_contiguous(2, T(MPI_INT)));
    char buf[MPI_MAX_OBJECT_NAME];
    EXPECT_EQ(v->get_name(buf), 0);
    v->set_name("pair of ints");
    EXPECT_EQ(v->get_name(buf), 12);
    EXPECT_STREQ(buf, "pair of ints");
    std::string longname(500, 'x');
    v->set_name(longname.c_str());
    EXPECT_EQ(v->get_name(buf), MPI_MAX_OBJECT_NAME - 1);
}

// ---- plans ------------------------------------------------------------------------------------

TEST(DatatypePlan, VectorWithStrideEqualToBlockIsContiguous) {
    auto v = make(type_vector(4, 2, 2, T(MPI_INT)));
    ASSERT_TRUE(v->commit().ok());
    EXPECT_TRUE(v->is_contiguous());
    EXPECT_EQ(v->layout().run_count(10), 1);
    EXPECT_EQ(flatten(v->layout(), 3), (std::vector<byte_run>{{0, 96}}));
}

TEST(DatatypePlan, MergesAdjacentBlocks) {
    const int bl[] = {1, 2, 1};
    const int di[] = {0, 1, 3};
    auto i = make(type_indexed(3, bl, di, T(MPI_INT)));
    EXPECT_TRUE(i->is_contiguous());
    // Struct of an int, two floats and a char that touch: one run of 13, dense but padded.
    const int sbl[] = {1, 2, 1};
    const aint sd[] = {0, 4, 12};
    const datatype* ts[] = {T(MPI_INT), T(MPI_FLOAT), T(MPI_CHAR)};
    auto s = make(type_struct(3, sbl, sd, ts));
    EXPECT_TRUE(s->layout().dense);
    EXPECT_FALSE(s->layout().contiguous);
    EXPECT_EQ(s->layout().run_count(10), 1);
    EXPECT_EQ(s->typed_layout().basic_count, 4);
}

TEST(DatatypePlan, StridedRunsStayCompact) {
    auto v = make(type_vector(1000000, 1, 2, T(MPI_INT)));
    const plan& p = v->layout();
    EXPECT_EQ(p.root_end - p.root_first, 1u);
    EXPECT_LE(p.nodes.size(), 4u);
    EXPECT_EQ(p.run_count(2000000), 1000000);
    // A vector of vectors of a struct: nodes stay proportional to the description.
    const int bl[] = {1, 1};
    const aint d[] = {0, 8};
    const datatype* ts[] = {T(MPI_INT), T(MPI_DOUBLE)};
    auto s = make(type_struct(2, bl, d, ts));
    auto inner = make(type_vector(1000, 2, 3, s.get()));
    auto outer = make(type_hvector(1000, 1, 1 << 20, inner.get()));
    EXPECT_LE(outer->layout().nodes.size(), 12u);
    EXPECT_EQ(outer->size(), 1000 * 1000 * 2 * 12);
    // An indexed type of many blocks of a struct shares the struct's plan.
    std::vector<int> bls(100000, 1);
    std::vector<int> dis(100000);
    for (int k = 0; k < 100000; ++k) {
        dis[std::size_t(k)] = 3 * k;
    }
    auto idx_t = make(type_indexed(100000, bls.data(), dis.data(), s.get()));
    EXPECT_LE(idx_t->layout().nodes.size(), 8u);  // regular blocks fold into one loop
    EXPECT_EQ(idx_t->layout().run_count(300000), 200000);
}

TEST(DatatypePlan, HugeCountsIterateTheElementPlan) {
    // 10^9 ints all at offset 0 (extent 0): the 4e9-byte stream is walked, not expanded.
    auto z = make(type_resized(T(MPI_INT), 0, 0));
    ASSERT_TRUE(z->commit().ok());
    int value = 0x01020304;
    segment s(&value, 1000000000, *z);
    EXPECT_EQ(s.size(), 4000000000LL);
    s.seek(4000000000LL - 6);
    unsigned char out[8] = {};
    EXPECT_EQ(s.pack(out, 8), 6);
    unsigned char expect[4];
    std::memcpy(expect, &value, 4);
    EXPECT_EQ(out[0], expect[2]);
    EXPECT_EQ(out[2], expect[0]);
    EXPECT_EQ(out[5], expect[3]);
    EXPECT_TRUE(s.done());
    // Counting elements of a huge stream is arithmetic too.
    EXPECT_EQ(get_elements(*T(MPI_DOUBLE_INT), 12LL * 1000000000 + 8), 2LL * 1000000000 + 1);
}

TEST(DatatypePlan, DeepNestingUsesHeapFrames) {
    datatype_ref t(const_cast<datatype*>(T(MPI_INT)));
    for (int level = 0; level < 20; ++level) {
        t = make(type_hvector(2, 1, t->extent() + 4 + level, t.get()));  // gaps: no run merges
    }
    EXPECT_GT(t->layout().depth, 8);
    EXPECT_EQ(t->size(), 4 << 20);
    std::vector<unsigned char> packed(std::size_t(t->size()));
    std::vector<unsigned char> src(std::size_t(t->true_ub()));
    for (std::size_t k = 0; k < src.size(); ++k) {
        src[k] = static_cast<unsigned char>(k * 7);
    }
    count_t pos = 0;
    ASSERT_TRUE(pack(src.data(), 1, *t, packed.data(), count_t(packed.size()), &pos).ok());
    EXPECT_EQ(pos, t->size());
    const auto runs = flatten(t->layout(), 1);
    EXPECT_EQ(runs.size(), std::size_t(1) << 20);
    EXPECT_EQ(std::memcmp(packed.data() + 4, src.data() + runs[1].offset, 4), 0);
}

TEST(DatatypePlan, SegmentsMoveMidway) {
    // Shallow (inline frames) and deep (heap frames) plans: a moved segment continues in place.
    for (int levels : {2, 12}) {
        datatype_ref t(const_cast<datatype*>(T(MPI_SHORT)));
        for (int level = 0; level < levels; ++level) {
            t = make(type_hvector(2, 1, t->extent() + 2 + level, t.get()));
        }
        std::vector<unsigned char> src(std::size_t(t->true_ub()));
        for (std::size_t k = 0; k < src.size(); ++k) {
            src[k] = static_cast<unsigned char>(k * 13 + 1);
        }
        std::vector<unsigned char> whole(std::size_t(t->size()) * 2), pieces(whole.size());
        count_t pos = 0;
        ASSERT_TRUE(pack(src.data(), 1, *t, whole.data(), count_t(whole.size()), &pos).ok());
        segment a(src.data(), 1, *t);
        const count_t first = a.pack(pieces.data(), 7);
        segment b(std::move(a));
        segment c;
        c = std::move(b);
        EXPECT_EQ(c.position(), first);
        EXPECT_EQ(c.pack(pieces.data() + first, t->size()), t->size() - first);
        EXPECT_TRUE(c.done());
        EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), std::size_t(t->size())), 0) << levels;
    }
}

TEST(DatatypePlan, ConcurrentFirstUseCompilesOnce) {
    // Several threads use an uncommitted type at once: each sees the same, complete plan.
    const int bl[] = {2, 1};
    const aint d[] = {0, 24};
    const datatype* ts[] = {T(MPI_DOUBLE), T(MPI_INT)};
    auto s = make(type_struct(2, bl, d, ts));
    auto v = make(type_vector(50, 2, 3, s.get()));
    std::vector<const plan*> seen(4);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([&, k] {
            seen[std::size_t(k)] = &v->layout();
            std::vector<unsigned char> src(std::size_t(v->extent())), out(std::size_t(v->size()));
            count_t pos = 0;
            EXPECT_TRUE(pack(src.data(), 1, *v, out.data(), v->size(), &pos).ok());
            (void)v->typed_layout();
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    for (const plan* p : seen) {
        EXPECT_EQ(p, seen[0]);
    }
    EXPECT_EQ(seen[0]->size, 100 * 20);
}

}  // namespace
