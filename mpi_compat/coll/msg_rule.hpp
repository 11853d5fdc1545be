/// \file
/// The rule that picks a message-based algorithm (msg_rule.cpp, docs/collectives.md "the msg
/// rule"), as a pure function of what every member knows alike: the collective, the number of
/// members, the message's packed size, the vector's length and whether the operation commutes.
/// choose() (msg.hpp) describes a call this way and runs the algorithm named here; the unit
/// test (tests/unit/mpi_compat/coll_rule_test.cpp) checks the thresholds on their own.
#pragma once

#include <cstddef>

#include "mpi_compat/coll/coll.hpp"

namespace mpc::mpi::coll::msg {

/// What the rule looks at. `bytes` is the packed size of the message (Bcast), of one block
/// (Gather, Scatter, Alltoall), of every block together (Allgather(v)) or of the vector
/// (Reduce, Allreduce); `elements` the vector's length (reductions only).
struct rule_input {
    kind k = kind::barrier;
    int members = 1;
    std::size_t bytes = 0;
    count_t elements = 0;
    bool commutative = true;
    std::size_t segment = 32 * 1024;  ///< bytes per segment of the pipelined broadcasts
};

/// The name of the algorithm the rule gives (one of the MPC_COLL_<NAME> choices of the
/// collective, never "shm" nor "msg"). Pure: no configuration is read.
const char* rule_choice(const rule_input& in) noexcept;

}  // namespace mpc::mpi::coll::msg
