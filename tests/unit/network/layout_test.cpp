// The split of N ranks over P processes (network/layout.hpp): every rank in exactly one
// process, in contiguous blocks, the first N mod P processes one rank more, process_of() the
// inverse of the blocks; bad input refused.
#include <gtest/gtest.h>

#include "network/layout.hpp"

namespace {

using mpc::net::layout;

TEST(Layout, BlocksCoverEveryRankOnceAndProcessOfInvertsThem) {
    for (int p = 1; p <= 17; ++p) {
        for (int n = p; n <= 200; n += (n < 40 ? 1 : 23)) {
            auto l = layout::make(n, p);
            ASSERT_TRUE(l) << n << " ranks over " << p;
            const layout& lo = l.value();
            int next = 0;
            for (int q = 0; q < p; ++q) {
                ASSERT_EQ(lo.first_rank(q), next) << n << "/" << p << " process " << q;
                int c = lo.rank_count(q);
                ASSERT_EQ(c, n / p + (q < n % p ? 1 : 0)) << "the first n mod p processes have one more";
                for (int r = next; r < next + c; ++r) {
                    ASSERT_EQ(lo.process_of(r), q) << "rank " << r << " of " << n << " over " << p;
                }
                next += c;
            }
            ASSERT_EQ(next, n);
        }
    }
}

TEST(Layout, TheIssueExample) {
    auto l = layout::make(10, 4);
    ASSERT_TRUE(l);
    EXPECT_EQ(l.value().rank_count(0), 3);
    EXPECT_EQ(l.value().rank_count(1), 3);
    EXPECT_EQ(l.value().rank_count(2), 2);
    EXPECT_EQ(l.value().rank_count(3), 2);
    EXPECT_EQ(l.value().first_rank(3), 8);
    EXPECT_EQ(l.value().process_of(5), 1);
    EXPECT_EQ(l.value().process_of(6), 2);
}

TEST(Layout, BadInputIsRefused) {
    EXPECT_FALSE(layout::make(3, 4)) << "a process without ranks";
    EXPECT_FALSE(layout::make(4, 0));
    EXPECT_FALSE(layout::make(0, 1));
    EXPECT_FALSE(layout::make(-5, 2));
    EXPECT_TRUE(layout::make(1, 1));
}

}  // namespace
