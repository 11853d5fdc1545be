/// \file
/// The choice among the message-based algorithms: the defaults between processes, by
/// communicator size and message size, after the fixed decision rules of MPICH (Thakur,
/// Rabenseifner, Gropp, IJHPCA 2005) and Open MPI's coll/tuned, with thresholds measured
/// between processes on this project's machine (benchmarks/RESULTS.md, "The msg rule").
/// MPC_COLL_<NAME>=msg applies it inside a process, so that the rule itself is tested. The
/// thresholds are documented in docs/collectives.md ("the msg rule"); every input is the same on
/// every member (counts and signatures MPI requires to match), so every member picks the same
/// algorithm.
#include "mpi_compat/coll/msg_rule.hpp"

#include "lib/log.hpp"
#include "mpi_compat/coll/msg.hpp"

namespace mpc::mpi::coll::msg {
namespace {

constexpr std::size_t kib = 1024;

bool power_of_two(int n) noexcept { return n > 0 && (n & (n - 1)) == 0; }

const char* bcast_rule(const rule_input& in) noexcept {
    // Measured between processes (one member per process, 4 to 16 of them): below 12 KiB the
    // messages go eagerly and the trees tie; from there to one segment the segmented tree (one
    // segment: every child's send in flight at once) beats the binomial tree's sends one after
    // the other by 1.5-2x; above one segment the whole message down the binomial tree beats
    // every segmented or chunked algorithm (pipeline, binomial_pipeline, scatter_allgather)
    // up to 4 MiB: each segment pays a rendezvous between processes.
    if (in.members <= 2 || in.bytes < 12 * kib || in.bytes > in.segment) {
        return "binomial";
    }
    return "binomial_pipeline";
}

const char* allreduce_rule(const rule_input& in) noexcept {
    if (!in.commutative) {
        return "reduce_bcast";
    }
    if (in.bytes < 2 * kib || in.elements < static_cast<count_t>(pow2_floor(in.members))) {
        return "recursive_doubling";
    }
    return "rabenseifner";
}

const char* reduce_rule(const rule_input& in) noexcept {
    if (!in.commutative) {
        return "linear";
    }
    if (in.bytes < 8 * kib || in.elements < static_cast<count_t>(pow2_floor(in.members))) {
        return "binomial";
    }
    return "rabenseifner";
}

const char* alltoall_rule(const rule_input& in) noexcept {
    if (in.bytes <= 256 && in.members >= 8) {
        return "bruck";
    }
    return in.bytes <= 32 * kib ? "linear" : "pairwise";
}

const char* allgather_rule(const rule_input& in) noexcept {
    // bytes: every block together. Measured between processes (one member per process):
    // recursive doubling (log2(n) exchanges; Allgather on 2^k members only) ahead of Bruck and
    // the ring up to 512 KiB at 4 and 8 members; Bruck ahead of the ring below 256 KiB from 4
    // members on, the ring ahead above (and at 3 members, where both take 2 steps).
    if (in.k == kind::allgather && power_of_two(in.members) && in.members >= 4 && in.bytes <= 512 * kib) {
        return "recursive_doubling";
    }
    return in.members >= 4 && in.bytes < 256 * kib ? "bruck" : "ring";
}

}  // namespace

const char* rule_choice(const rule_input& in) noexcept {
    switch (in.k) {
        case kind::barrier: return "dissemination";
        case kind::bcast: return bcast_rule(in);
        case kind::gather:
        case kind::scatter:
            // binomial while blocks are short (fewer messages at the root), linear for long ones
            // (no copies through intermediate members)
            return in.bytes < 16 * kib ? "binomial" : "linear";
        case kind::allgather:
        case kind::allgatherv: return allgather_rule(in);
        case kind::alltoall: return alltoall_rule(in);
        case kind::reduce: return reduce_rule(in);
        case kind::allreduce: return allreduce_rule(in);
        case kind::reduce_scatter:
        case kind::reduce_scatter_block: return "reduce_scatterv";
        default: return "linear";  // gatherv, scatterv, alltoallv, alltoallw, scan, exscan
    }
}

namespace {

/// The rule's inputs for a call.
rule_input describe(const args& a) noexcept {
    rule_input in;
    in.k = a.k;
    in.members = a.size;
    in.segment = segment_size();
    switch (a.k) {
        case kind::bcast: in.bytes = packed_bytes(a.rcount, a.rtype); break;
        case kind::gather: {
            const piece mine = contribution(a);
            in.bytes = packed_bytes(mine.count, mine.type);
            break;
        }
        case kind::scatter:
            in.bytes = is_root(a) ? packed_bytes(a.scount, a.stype) : packed_bytes(a.rcount, a.rtype);
            break;
        case kind::allgather:
        case kind::allgatherv:
            for (int i = 0; i < a.size; ++i) {
                in.bytes += packed_bytes(gathered_block(a, i).count, a.rtype);
            }
            break;
        case kind::alltoall: {
            const piece first = send_piece(a, 0);
            in.bytes = packed_bytes(first.count, first.type);
            break;
        }
        case kind::reduce:
        case kind::allreduce:
            in.elements = a.red.n;
            in.commutative = a.red.commutative;
            in.bytes = a.red.dt == nullptr ? 0 : static_cast<std::size_t>(a.red.n * a.red.dt->size());
            break;
        default: break;
    }
    return in;
}

}  // namespace

algo_fn choose(const args& a, const char** name) noexcept {
    const char* pick = rule_choice(describe(a));
    if (name != nullptr) {
        *name = pick;
    }
    return algorithm_named(a.k, pick);
}

int by_rule(args& a) noexcept {
    const char* name = nullptr;
    algo_fn fn = choose(a, &name);
    MPC_LOG(trace, mpi, "%s on %d members: %s", kind_name(a.k), a.size, name);
    if (fn == nullptr) {  // the rule named an algorithm the table lacks: a bug here
        MPC_LOG(error, mpi, "%s: the msg rule chose '%s', which is no algorithm of it", kind_name(a.k), name);
        return MPI_ERR_INTERN;
    }
    return fn(a);
}

}  // namespace mpc::mpi::coll::msg
