// The message-based rule (mpi_compat/coll/msg_rule.cpp, docs/collectives.md "the msg rule"):
// its choice as a pure function of the collective, the member count, the message size, the
// vector length and commutativity, at each threshold and on either side of it; and every name
// it gives is an algorithm of that collective that can run the call.
#include "mpi_compat/coll/msg_rule.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using mpc::mpi::coll::algorithm_named;
using mpc::mpi::count_t;
using mpc::mpi::coll::kind;
using mpc::mpi::coll::msg::rule_choice;
using mpc::mpi::coll::msg::rule_input;

constexpr std::size_t kib = 1024;

std::string pick(kind k, int members, std::size_t bytes, count_t elements = 0, bool commutative = true,
                 std::size_t segment = 32 * kib) {
    rule_input in;
    in.k = k;
    in.members = members;
    in.bytes = bytes;
    in.elements = elements;
    in.commutative = commutative;
    in.segment = segment;
    return rule_choice(in);
}

TEST(CollRule, BcastBinomialBelowEagerSizeAndOnTwoMembers) {
    EXPECT_EQ(pick(kind::bcast, 8, 0), "binomial");
    EXPECT_EQ(pick(kind::bcast, 8, 12 * kib - 1), "binomial");
    EXPECT_EQ(pick(kind::bcast, 2, 16 * kib), "binomial");
    EXPECT_EQ(pick(kind::bcast, 1, 16 * kib), "binomial");
}

TEST(CollRule, BcastBinomialPipelineForOneSegment) {
    EXPECT_EQ(pick(kind::bcast, 3, 12 * kib), "binomial_pipeline");
    EXPECT_EQ(pick(kind::bcast, 8, 32 * kib), "binomial_pipeline");
    EXPECT_EQ(pick(kind::bcast, 64, 20 * kib), "binomial_pipeline");
    // one byte over the segment: several segments, the whole message down the tree
    EXPECT_EQ(pick(kind::bcast, 8, 32 * kib + 1), "binomial");
    // the segment size moves the threshold
    EXPECT_EQ(pick(kind::bcast, 8, 64 * kib, 0, true, 64 * kib), "binomial_pipeline");
    EXPECT_EQ(pick(kind::bcast, 8, 64 * kib, 0, true, 16 * kib), "binomial");
    // a segment below the eager size: never
    EXPECT_EQ(pick(kind::bcast, 8, 12 * kib, 0, true, 8 * kib), "binomial");
}

TEST(CollRule, BcastLongMessagesBinomial) {
    for (int n : {3, 4, 8, 16, 64, 1000}) {
        for (std::size_t bytes : {64 * kib, 512 * kib, 8192 * kib}) {
            EXPECT_EQ(pick(kind::bcast, n, bytes), "binomial") << n << " members, " << bytes << " bytes";
        }
    }
}

TEST(CollRule, AllgatherRecursiveDoublingOnPowersOfTwo) {
    EXPECT_EQ(pick(kind::allgather, 4, 8), "recursive_doubling");
    EXPECT_EQ(pick(kind::allgather, 8, 512 * kib), "recursive_doubling");
    EXPECT_EQ(pick(kind::allgather, 64, 100 * kib), "recursive_doubling");
    EXPECT_EQ(pick(kind::allgather, 8, 512 * kib + 1), "ring");
    // not a power of two, or two members: Bruck or the ring
    EXPECT_EQ(pick(kind::allgather, 6, 8), "bruck");
    EXPECT_EQ(pick(kind::allgather, 2, 8), "ring");
    // Allgatherv never (its blocks need not lie side by side in every step)
    EXPECT_EQ(pick(kind::allgatherv, 8, 8), "bruck");
}

TEST(CollRule, AllgatherBruckBelow256KiBFromFourMembers) {
    EXPECT_EQ(pick(kind::allgather, 6, 256 * kib - 1), "bruck");
    EXPECT_EQ(pick(kind::allgather, 6, 256 * kib), "ring");
    EXPECT_EQ(pick(kind::allgatherv, 5, 100 * kib), "bruck");
    EXPECT_EQ(pick(kind::allgatherv, 8, 256 * kib), "ring");
    EXPECT_EQ(pick(kind::allgather, 3, 8), "ring");
}

TEST(CollRule, Reductions) {
    // non-commutative: the rank-order algorithms whatever the size
    EXPECT_EQ(pick(kind::allreduce, 8, 8, 1, false), "reduce_bcast");
    EXPECT_EQ(pick(kind::allreduce, 8, 8 * kib * kib, kib * kib, false), "reduce_bcast");
    EXPECT_EQ(pick(kind::reduce, 8, 8 * kib * kib, kib * kib, false), "linear");
    // commutative
    EXPECT_EQ(pick(kind::allreduce, 8, 2 * kib - 8, 255), "recursive_doubling");
    EXPECT_EQ(pick(kind::allreduce, 8, 2 * kib, 256), "rabenseifner");
    EXPECT_EQ(pick(kind::reduce, 8, 8 * kib - 8, 1023), "binomial");
    EXPECT_EQ(pick(kind::reduce, 8, 8 * kib, 1024), "rabenseifner");
    // fewer elements than the power of two below the member count: no halving possible
    EXPECT_EQ(pick(kind::allreduce, 100, 64 * kib, 63), "recursive_doubling");
    EXPECT_EQ(pick(kind::reduce, 100, 64 * kib, 63), "binomial");
    EXPECT_EQ(pick(kind::allreduce, 100, 64 * kib, 64), "rabenseifner");
}

TEST(CollRule, AlltoallGatherScatterAndTheOthers) {
    EXPECT_EQ(pick(kind::alltoall, 8, 256), "bruck");
    EXPECT_EQ(pick(kind::alltoall, 7, 256), "linear");
    EXPECT_EQ(pick(kind::alltoall, 8, 257), "linear");
    EXPECT_EQ(pick(kind::alltoall, 8, 32 * kib), "linear");
    EXPECT_EQ(pick(kind::alltoall, 8, 32 * kib + 1), "pairwise");
    EXPECT_EQ(pick(kind::gather, 8, 16 * kib - 1), "binomial");
    EXPECT_EQ(pick(kind::gather, 8, 16 * kib), "linear");
    EXPECT_EQ(pick(kind::scatter, 8, 8), "binomial");
    EXPECT_EQ(pick(kind::barrier, 8, 0), "dissemination");
    EXPECT_EQ(pick(kind::reduce_scatter, 8, 8, 1), "reduce_scatterv");
    for (kind k : {kind::gatherv, kind::scatterv, kind::alltoallv, kind::alltoallw, kind::scan, kind::exscan}) {
        EXPECT_EQ(pick(k, 8, 8), "linear");
    }
}

// Every choice, over a grid of inputs, names an algorithm of its collective (the table of
// coll.cpp, which runs it), never one that needs what the call lacks: recursive_doubling of
// Allgather only on 2^k members, the commutative-only reductions only on commutative ones.
TEST(CollRule, EveryChoiceIsARunnableAlgorithm) {
    for (int k = 0; k < mpc::mpi::coll::n_kinds; ++k) {
        const auto kk = static_cast<kind>(k);
        for (int n = 1; n <= 70; ++n) {
            for (std::size_t bytes = 0; bytes <= 16 * kib * kib; bytes = bytes * 2 + 8) {
                for (bool comm : {true, false}) {
                    const std::string name = pick(kk, n, bytes, static_cast<count_t>(bytes / 8), comm);
                    SCOPED_TRACE(std::string(mpc::mpi::coll::kind_name(kk)) + " n=" + std::to_string(n) +
                                 " bytes=" + std::to_string(bytes) + " -> " + name);
                    ASSERT_NE(algorithm_named(kk, name.c_str()), nullptr);
                    if (name == "recursive_doubling" && kk == kind::allgather) {
                        EXPECT_EQ(n & (n - 1), 0);
                    }
                    if (!comm && (kk == kind::reduce || kk == kind::allreduce)) {
                        EXPECT_TRUE(name == "linear" || name == "reduce_bcast");
                    }
                }
            }
        }
    }
}

TEST(CollRule, AlgorithmNamedRejectsUnknownNames) {
    EXPECT_EQ(algorithm_named(kind::bcast, "bogus"), nullptr);
    EXPECT_EQ(algorithm_named(kind::bcast, "msg"), nullptr);
    EXPECT_EQ(algorithm_named(kind::gatherv, "binomial"), nullptr);
    EXPECT_NE(algorithm_named(kind::bcast, "shm"), nullptr);
}

}  // namespace
