// Subarray and darray types against a brute-force enumeration of the global array: the layout
// (byte offsets in typemap order), the size, the bounds; darray blocks of all ranks partition the
// array; bad arguments are refused.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "mpi_compat/datatype/cursor.hpp"
#include "mpi_compat/datatype/datatype.hpp"

namespace {

using namespace mpc::mpi;

const datatype* T(MPI_Datatype h) { return predefined(h & 0xffffff); }

// Byte offsets of one element of t, in packed-stream order.
std::vector<aint> byte_offsets(const datatype& t) {
    std::vector<aint> offs;
    cursor c;
    c.reset(t.layout(), 1);
    while (!c.done()) {
        for (count_t i = 0; i < c.avail(); ++i) {
            offs.push_back(c.offset() + i);
        }
        c.advance(c.avail());
    }
    return offs;
}

// Visits every index tuple of an array in storage order (C: last index fastest).
template <class F>
void for_each_index(const std::vector<int>& sizes, int order, F&& f) {
    const int n = int(sizes.size());
    std::vector<int> i(sizes.size(), 0);
    for (;;) {
        f(i);
        int k = 0;
        for (; k < n; ++k) {
            const int d = order == order_c ? n - 1 - k : k;
            if (++i[std::size_t(d)] < sizes[std::size_t(d)]) {
                break;
            }
            i[std::size_t(d)] = 0;
        }
        if (k == n) {
            return;
        }
    }
}

// Linear position of an index tuple in storage order.
long linear(const std::vector<int>& i, const std::vector<int>& sizes, int order) {
    long pos = 0;
    const int n = int(sizes.size());
    for (int k = 0; k < n; ++k) {
        const int d = order == order_c ? k : n - 1 - k;  // slowest first
        pos = pos * sizes[std::size_t(d)] + i[std::size_t(d)];
    }
    return pos;
}

// Expected byte offsets of elements (of `esize` bytes) at the given linear positions.
std::vector<aint> expand(const std::vector<long>& elems, int esize) {
    std::vector<aint> offs;
    for (long e : elems) {
        for (int b = 0; b < esize; ++b) {
            offs.push_back(aint(e) * esize + b);
        }
    }
    return offs;
}

TEST(DatatypeSubarray, RandomAgainstEnumeration) {
    std::mt19937 rng(7);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int round = 0; round < 300; ++round) {
        SCOPED_TRACE(round);
        const int nd = uni(1, 4);
        std::vector<int> sizes(static_cast<std::size_t>(nd)), subs(sizes), starts(sizes);
        for (std::size_t d = 0; d < std::size_t(nd); ++d) {
            sizes[d] = uni(1, 6);
            subs[d] = uni(1, sizes[d]);
            starts[d] = uni(0, sizes[d] - subs[d]);
        }
        const int order = uni(0, 1) ? order_c : order_fortran;
        const datatype* old = uni(0, 1) ? T(MPI_INT) : T(MPI_SHORT);
        auto r = type_subarray(nd, sizes.data(), subs.data(), starts.data(), order, old);
        ASSERT_TRUE(r.ok());
        datatype_ref t(*r);
        std::vector<long> elems;
        long total = 1;
        for (int s : sizes) {
            total *= s;
        }
        for_each_index(subs, order, [&](const std::vector<int>& i) {
            std::vector<int> g(i);
            for (std::size_t d = 0; d < g.size(); ++d) {
                g[d] += starts[d];
            }
            elems.push_back(linear(g, sizes, order));
        });
        EXPECT_EQ(byte_offsets(*t), expand(elems, int(old->size())));
        EXPECT_EQ(t->size(), count_t(elems.size()) * old->size());
        EXPECT_EQ(t->lb(), 0);
        EXPECT_EQ(t->extent(), total * old->extent());
        EXPECT_EQ(t->true_lb(), elems.front() * old->size());
    }
}

// ---- darray ----------------------------------------------------------------------------------

struct darray_case {
    std::vector<int> gsizes, distribs, dargs, psizes;
    int order;
};

// The rank that owns global index tuple g (row-major process grid).
int owner(const darray_case& c, const std::vector<int>& g) {
    int rank = 0;
    for (std::size_t d = 0; d < g.size(); ++d) {
        const int np = c.psizes[d];
        int coord = 0;
        if (c.distribs[d] == distribute_block) {
            const int blk = c.dargs[d] == distribute_dflt_darg ? (c.gsizes[d] + np - 1) / np : c.dargs[d];
            coord = g[d] / blk;
        } else if (c.distribs[d] == distribute_cyclic) {
            const int blk = c.dargs[d] == distribute_dflt_darg ? 1 : c.dargs[d];
            coord = (g[d] / blk) % np;
        }
        rank = rank * np + coord;
    }
    return rank;
}

darray_case random_case(std::mt19937& rng) {
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    darray_case c;
    const int nd = uni(1, 3);
    c.order = uni(0, 1) ? order_c : order_fortran;
    for (int d = 0; d < nd; ++d) {
        const int g = uni(1, 9);
        const int kind = uni(0, 2);
        int np = uni(1, 3);
        int dist = kind == 0 ? distribute_block : kind == 1 ? distribute_cyclic : distribute_none;
        if (dist == distribute_none) {
            np = 1;
        }
        int darg = distribute_dflt_darg;
        if (uni(0, 1)) {
            darg = dist == distribute_block ? (g + np - 1) / np + uni(0, 2) : uni(1, 3);
        }
        c.gsizes.push_back(g);
        c.distribs.push_back(dist);
        c.dargs.push_back(darg);
        c.psizes.push_back(np);
    }
    return c;
}

TEST(DatatypeDarray, RandomAgainstEnumerationAndPartition) {
    std::mt19937 rng(11);
    for (int round = 0; round < 300; ++round) {
        SCOPED_TRACE(round);
        const darray_case c = random_case(rng);
        const int nd = int(c.gsizes.size());
        int size = 1;
        long total = 1;
        for (int d = 0; d < nd; ++d) {
            size *= c.psizes[std::size_t(d)];
            total *= c.gsizes[std::size_t(d)];
        }
        std::vector<int> seen(std::size_t(total), 0);
        for (int rank = 0; rank < size; ++rank) {
            auto r = type_darray(size, rank, nd, c.gsizes.data(), c.distribs.data(), c.dargs.data(), c.psizes.data(),
                                 c.order, T(MPI_INT));
            ASSERT_TRUE(r.ok()) << r.error().reason();
            datatype_ref t(*r);
            std::vector<long> elems;
            for_each_index(c.gsizes, c.order, [&](const std::vector<int>& g) {
                if (owner(c, g) == rank) {
                    elems.push_back(linear(g, c.gsizes, c.order));
                }
            });
            ASSERT_EQ(byte_offsets(*t), expand(elems, 4)) << "rank " << rank;
            EXPECT_EQ(t->size(), 4 * count_t(elems.size()));
            EXPECT_EQ(t->lb(), 0);
            EXPECT_EQ(t->extent(), 4 * total);
            EXPECT_EQ(t->kind(), combiner::darray);
            EXPECT_EQ(t->ints().size(), std::size_t(4 * nd + 4));
            for (long e : elems) {
                ++seen[std::size_t(e)];
            }
        }
        for (long e = 0; e < total; ++e) {
            ASSERT_EQ(seen[std::size_t(e)], 1) << "element " << e;
        }
    }
}

TEST(DatatypeDarray, KnownCyclicLayout) {
    // 10 ints, cyclic(2) over 3 processes: rank 1 holds 2,3 and 8,9.
    const int g[] = {10};
    const int dist[] = {distribute_cyclic};
    const int darg[] = {2};
    const int ps[] = {3};
    auto r = type_darray(3, 1, 1, g, dist, darg, ps, order_c, T(MPI_INT));
    ASSERT_TRUE(r.ok());
    datatype_ref t(*r);
    EXPECT_EQ(flatten(t->layout(), 1), (std::vector<byte_run>{{8, 8}, {32, 8}}));
    EXPECT_EQ(t->extent(), 40);
}

TEST(DatatypeDarray, BadArguments) {
    const int g[] = {10, 4};
    const int blk[] = {distribute_block, distribute_block};
    const int none[] = {distribute_none, distribute_block};
    const int weird[] = {77, distribute_block};
    const int dflt[] = {distribute_dflt_darg, distribute_dflt_darg};
    const int small[] = {2, distribute_dflt_darg};
    const int zero[] = {0, distribute_dflt_darg};
    const int ps[] = {2, 2};
    auto bad = [](mpc::result<datatype*>&& r) {
        EXPECT_FALSE(r.ok());
        if (r.ok()) {
            datatype::release(*r);
        }
    };
    bad(type_darray(3, 0, 2, g, blk, dflt, ps, order_c, T(MPI_INT)));    // psizes product != size
    bad(type_darray(4, 4, 2, g, blk, dflt, ps, order_c, T(MPI_INT)));    // rank out of range
    bad(type_darray(4, 0, 2, g, none, dflt, ps, order_c, T(MPI_INT)));   // NONE over 2 processes
    bad(type_darray(4, 0, 2, g, weird, dflt, ps, order_c, T(MPI_INT)));  // unknown distribution
    bad(type_darray(4, 0, 2, g, blk, small, ps, order_c, T(MPI_INT)));   // 2 x 2 < 10
    bad(type_darray(4, 0, 2, g, blk, zero, ps, order_c, T(MPI_INT)));    // darg 0
    bad(type_darray(4, 0, 2, g, blk, dflt, ps, 0, T(MPI_INT)));          // order
    bad(type_darray(4, 0, 0, g, blk, dflt, ps, order_c, T(MPI_INT)));    // ndims
    bad(type_darray(4, 0, 2, g, blk, dflt, ps, order_c, nullptr));
}

}  // namespace
