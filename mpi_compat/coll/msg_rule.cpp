/// \file
/// The choice among the message-based algorithms: the defaults between processes, by
/// communicator size and message size, after the fixed decision rules of MPICH (Thakur,
/// Rabenseifner, Gropp, IJHPCA 2005) and Open MPI's coll/tuned. MPC_COLL_<NAME>=msg applies it
/// inside a process, so that the rule itself is tested. The thresholds are documented in
/// docs/collectives.md ("Between processes"); every input is the same on every member (counts
/// and signatures MPI requires to match), so every member picks the same algorithm.
#include "lib/log.hpp"
#include "mpi_compat/coll/msg.hpp"

namespace mpc::mpi::coll::msg {
namespace {

constexpr std::size_t kib = 1024;

struct pick {
    const char* name;
    algo_fn fn;
};

/// Packed bytes of a reduction's vector.
std::size_t red_bytes(const args& a) noexcept {
    return a.red.dt == nullptr ? 0 : static_cast<std::size_t>(a.red.n * a.red.dt->size());
}

pick bcast_rule(const args& a) noexcept {
    std::size_t n = packed_bytes(a.rcount, a.rtype);
    if (n < 12 * kib || a.size <= 2) {
        return {"binomial", bcast_binomial};
    }
    // A chain pays n - 1 segment times of latency: only worth it when the segments outnumber
    // the members well.
    if (n >= 512 * kib && n / segment_size() >= 4 * static_cast<std::size_t>(a.size)) {
        return {"pipeline", bcast_pipeline};
    }
    return {"scatter_allgather", bcast_scatter_allgather};
}

pick allreduce_rule(const args& a) noexcept {
    if (!a.red.commutative) {
        return {"reduce_bcast", allreduce_reduce_bcast};
    }
    if (red_bytes(a) < 2 * kib || a.red.n < pow2_floor(a.size)) {
        return {"recursive_doubling", allreduce_recursive_doubling};
    }
    return {"rabenseifner", allreduce_rabenseifner};
}

pick reduce_rule(const args& a) noexcept {
    if (!a.red.commutative) {
        return {"linear", reduce_linear};
    }
    if (red_bytes(a) < 8 * kib || a.red.n < pow2_floor(a.size)) {
        return {"binomial", reduce_binomial};
    }
    return {"rabenseifner", reduce_rabenseifner};
}

pick alltoall_rule(const args& a) noexcept {
    const piece first = send_piece(a, 0);
    std::size_t block = packed_bytes(first.count, first.type);
    if (block <= 256 && a.size >= 8) {
        return {"bruck", alltoall_bruck};
    }
    if (block <= 32 * kib) {
        return {"linear", alltoall_linear};
    }
    return {"pairwise", alltoall_pairwise};
}

pick allgather_rule(const args& a) noexcept {
    std::size_t total = 0;
    for (int i = 0; i < a.size; ++i) {
        total += packed_bytes(gathered_block(a, i).count, a.rtype);
    }
    if (total < 80 * kib) {
        return {"bruck", allgather_bruck};
    }
    return {"ring", allgather_ring};
}

/// Gather and scatter: a binomial tree while blocks are short (fewer messages at the root),
/// linear for long ones (no copies through intermediate members).
pick rooted_rule(const args& a, std::size_t block) noexcept {
    bool gather = a.k == kind::gather;
    if (block < 16 * kib) {
        return gather ? pick{"binomial", gather_binomial} : pick{"binomial", scatter_binomial};
    }
    return gather ? pick{"linear", msg::gather} : pick{"linear", msg::scatter};
}

pick rule(const args& a) noexcept {
    switch (a.k) {
        case kind::barrier: return {"dissemination", barrier};
        case kind::bcast: return bcast_rule(a);
        case kind::gather: {
            piece mine = contribution(a);
            return rooted_rule(a, packed_bytes(mine.count, mine.type));
        }
        case kind::scatter:
            return rooted_rule(a, is_root(a) ? packed_bytes(a.scount, a.stype) : packed_bytes(a.rcount, a.rtype));
        case kind::gatherv: return {"linear", msg::gather};
        case kind::scatterv: return {"linear", msg::scatter};
        case kind::allgather:
        case kind::allgatherv: return allgather_rule(a);
        case kind::alltoall: return alltoall_rule(a);
        case kind::alltoallv:
        case kind::alltoallw: return {"linear", alltoall_linear};
        case kind::reduce: return reduce_rule(a);
        case kind::allreduce: return allreduce_rule(a);
        case kind::reduce_scatter:
        case kind::reduce_scatter_block: return {"reduce_scatterv", reduce_scatter};
        default: return {"linear", scan};  // scan, exscan
    }
}

}  // namespace

algo_fn choose(const args& a, const char** name) noexcept {
    pick p = rule(a);
    if (name != nullptr) {
        *name = p.name;
    }
    return p.fn;
}

int by_rule(args& a) noexcept {
    const char* name = nullptr;
    algo_fn fn = choose(a, &name);
    MPC_LOG(trace, mpi, "%s on %d members: %s", kind_name(a.k), a.size, name);
    return fn(a);
}

}  // namespace mpc::mpi::coll::msg
