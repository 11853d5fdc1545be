/// \file
/// The algorithm table, the choice of an algorithm, and the helpers the algorithms share.

#include "mpi_compat/coll/coll.hpp"

#include <cstdlib>
#include <cstring>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "mpi_compat/coll/hier.hpp"
#include "mpi_compat/coll/msg.hpp"
#include "mpi_compat/coll/pieces.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/datatype/copy.hpp"
#include "mpi_compat/op.hpp"

// One knob per collective: "auto" lets the library choose; any other value forces that
// algorithm wherever it applies (a message-based one that needs a commutative operation, say,
// gives way to the default for a non-commutative one). The names: docs/collectives.md.
MPC_CONFIG_TABLE(coll, {
    {"MPC_COLL_BARRIER", ::mpc::config::knob_type::choice, "auto", "MPI_Barrier algorithm",
     "auto|shm|dissemination|msg"},
    {"MPC_COLL_BCAST", ::mpc::config::knob_type::choice, "auto", "MPI_Bcast algorithm",
     "auto|shm|binomial|linear|pipeline|binomial_pipeline|scatter_allgather|msg"},
    {"MPC_COLL_GATHER", ::mpc::config::knob_type::choice, "auto", "MPI_Gather algorithm", "auto|shm|linear|binomial|msg"},
    {"MPC_COLL_GATHERV", ::mpc::config::knob_type::choice, "auto", "MPI_Gatherv algorithm", "auto|shm|linear|msg"},
    {"MPC_COLL_SCATTER", ::mpc::config::knob_type::choice, "auto", "MPI_Scatter algorithm", "auto|shm|linear|binomial|msg"},
    {"MPC_COLL_SCATTERV", ::mpc::config::knob_type::choice, "auto", "MPI_Scatterv algorithm", "auto|shm|linear|msg"},
    {"MPC_COLL_ALLGATHER", ::mpc::config::knob_type::choice, "auto",
     "MPI_Allgather algorithm (recursive_doubling: power-of-two member counts, others keep the default)",
     "auto|shm|ring|linear|bruck|recursive_doubling|msg"},
    {"MPC_COLL_ALLGATHERV", ::mpc::config::knob_type::choice, "auto", "MPI_Allgatherv algorithm",
     "auto|shm|ring|linear|bruck|msg"},
    {"MPC_COLL_ALLTOALL", ::mpc::config::knob_type::choice, "auto", "MPI_Alltoall algorithm",
     "auto|shm|pairwise|linear|bruck|msg"},
    {"MPC_COLL_ALLTOALLV", ::mpc::config::knob_type::choice, "auto", "MPI_Alltoallv algorithm",
     "auto|shm|pairwise|linear|msg"},
    {"MPC_COLL_ALLTOALLW", ::mpc::config::knob_type::choice, "auto", "MPI_Alltoallw algorithm",
     "auto|shm|pairwise|linear|msg"},
    {"MPC_COLL_REDUCE", ::mpc::config::knob_type::choice, "auto", "MPI_Reduce algorithm",
     "auto|shm|binomial|linear|rabenseifner|msg"},
    {"MPC_COLL_ALLREDUCE", ::mpc::config::knob_type::choice, "auto", "MPI_Allreduce algorithm",
     "auto|shm|recursive_doubling|ring|reduce_bcast|rabenseifner|msg"},
    {"MPC_COLL_REDUCE_SCATTER", ::mpc::config::knob_type::choice, "auto", "MPI_Reduce_scatter algorithm",
     "auto|shm|reduce_scatterv|msg"},
    {"MPC_COLL_REDUCE_SCATTER_BLOCK", ::mpc::config::knob_type::choice, "auto",
     "MPI_Reduce_scatter_block algorithm", "auto|shm|reduce_scatterv|msg"},
    {"MPC_COLL_SCAN", ::mpc::config::knob_type::choice, "auto", "MPI_Scan algorithm", "auto|shm|linear|msg"},
    {"MPC_COLL_EXSCAN", ::mpc::config::knob_type::choice, "auto", "MPI_Exscan algorithm", "auto|shm|linear|msg"},
    {"MPC_COLL_FLAT_MAX", ::mpc::config::knob_type::integer, "8",
     "largest communicator (0 to 64 ranks; 0: none) on which small blocking Barrier, Bcast, Reduce, Allreduce, "
     "Allgather(v) and Alltoall run flat (docs/collectives.md)"},
    {"MPC_COLL_VP_GROUPS", ::mpc::config::knob_type::integer, "1",
     "0: small blocking collectives on more ranks than VPs take the slots; 1: the members of each VP count in "
     "as a group, one line per VP crosses cores (docs/collectives.md)"},
    {"MPC_COLL_NB_EAGER", ::mpc::config::knob_type::integer, "1",
     "0: every non-blocking collective runs in a thread of its own; 1: small Ibarrier, Ibcast, Ireduce and "
     "Iallreduce run without one, in a process and between processes (docs/collectives.md)"},
    {"MPC_COLL_HIER_V_MAX", ::mpc::config::knob_type::size, "0",
     "longest run of blocks (bytes) a process's leader packs in hierarchical Gatherv and Scatterv between "
     "processes; longer runs go one message per member (0: INT_MAX, the most int counts allow)"},
    {"MPC_COLL_SEGMENT_SIZE", ::mpc::config::knob_type::size, "32k",
     "bytes per segment of the pipelined message-based algorithms (MPC_COLL_BCAST=pipeline, binomial_pipeline)"},
})

namespace mpc::mpi::coll {

namespace {

/// Whether an algorithm can run this call (nullptr: always).
using usable_fn = bool (*)(const args&) noexcept;

struct algorithm {
    const char* name;
    algo_fn fn;
    usable_fn usable;
};

bool commutative(const args& a) noexcept { return a.red.commutative; }
bool power_of_two_members(const args& a) noexcept { return (a.size & (a.size - 1)) == 0; }

/// Per collective: the knob and its algorithms, in the order of the knob's choices after
/// "auto". The first is the in-process default; "msg" (last) runs the message-based algorithm
/// that the between-process rule gives for the call (msg_rule.cpp).
struct entry {
    const char* knob;
    const char* name;
    algorithm algos[8];
};

const entry table[n_kinds] = {
    {"MPC_COLL_BARRIER",
     "barrier",
     {{"shm", shm::barrier, nullptr}, {"dissemination", msg::barrier, nullptr}, {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_BCAST",
     "bcast",
     {{"shm", shm::bcast, nullptr},
      {"binomial", msg::bcast_binomial, nullptr},
      {"linear", msg::bcast_linear, nullptr},
      {"pipeline", msg::bcast_pipeline, nullptr},
      {"binomial_pipeline", msg::bcast_binomial_pipeline, nullptr},
      {"scatter_allgather", msg::bcast_scatter_allgather, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_GATHER",
     "gather",
     {{"shm", shm::gather, nullptr},
      {"linear", msg::gather, nullptr},
      {"binomial", msg::gather_binomial, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_GATHERV",
     "gatherv",
     {{"shm", shm::gather, nullptr}, {"linear", msg::gather, nullptr}, {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_SCATTER",
     "scatter",
     {{"shm", shm::scatter, nullptr},
      {"linear", msg::scatter, nullptr},
      {"binomial", msg::scatter_binomial, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_SCATTERV",
     "scatterv",
     {{"shm", shm::scatter, nullptr}, {"linear", msg::scatter, nullptr}, {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_ALLGATHER",
     "allgather",
     {{"shm", shm::allgather, nullptr},
      {"ring", msg::allgather_ring, nullptr},
      {"linear", msg::allgather_linear, nullptr},
      {"bruck", msg::allgather_bruck, nullptr},
      {"recursive_doubling", msg::allgather_recursive_doubling, power_of_two_members},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_ALLGATHERV",
     "allgatherv",
     {{"shm", shm::allgather, nullptr},
      {"ring", msg::allgather_ring, nullptr},
      {"linear", msg::allgather_linear, nullptr},
      {"bruck", msg::allgather_bruck, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_ALLTOALL",
     "alltoall",
     {{"shm", shm::alltoall, nullptr},
      {"pairwise", msg::alltoall_pairwise, nullptr},
      {"linear", msg::alltoall_linear, nullptr},
      {"bruck", msg::alltoall_bruck, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_ALLTOALLV",
     "alltoallv",
     {{"shm", shm::alltoall, nullptr},
      {"pairwise", msg::alltoall_pairwise, nullptr},
      {"linear", msg::alltoall_linear, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_ALLTOALLW",
     "alltoallw",
     {{"shm", shm::alltoall, nullptr},
      {"pairwise", msg::alltoall_pairwise, nullptr},
      {"linear", msg::alltoall_linear, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_REDUCE",
     "reduce",
     {{"shm", shm::reduce, nullptr},
      {"binomial", msg::reduce_binomial, commutative},
      {"linear", msg::reduce_linear, nullptr},
      {"rabenseifner", msg::reduce_rabenseifner, commutative},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_ALLREDUCE",
     "allreduce",
     {{"shm", shm::allreduce, nullptr},
      {"recursive_doubling", msg::allreduce_recursive_doubling, commutative},
      {"ring", msg::allreduce_ring, commutative},
      {"reduce_bcast", msg::allreduce_reduce_bcast, nullptr},
      {"rabenseifner", msg::allreduce_rabenseifner, commutative},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_REDUCE_SCATTER",
     "reduce_scatter",
     {{"shm", shm::reduce_scatter, nullptr},
      {"reduce_scatterv", msg::reduce_scatter, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_REDUCE_SCATTER_BLOCK",
     "reduce_scatter_block",
     {{"shm", shm::reduce_scatter, nullptr},
      {"reduce_scatterv", msg::reduce_scatter, nullptr},
      {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_SCAN", "scan", {{"shm", shm::scan, nullptr}, {"linear", msg::scan, nullptr}, {"msg", msg::by_rule, nullptr}}},
    {"MPC_COLL_EXSCAN",
     "exscan",
     {{"shm", shm::scan, nullptr}, {"linear", msg::scan, nullptr}, {"msg", msg::by_rule, nullptr}}},
};

/// The forced algorithm of each collective (index into algos), or -1: the knobs, read once.
struct forced_table {
    int index[n_kinds];
    forced_table() noexcept {
        for (int k = 0; k < n_kinds; ++k) {
            auto v = config::get_choice(table[k].knob);  // a bad value is reported there
            index[k] = v && *v > 0 ? *v - 1 : -1;
        }
    }
};

const forced_table& forced() noexcept {
    static const forced_table f;
    return f;
}

}  // namespace

const char* kind_name(kind k) noexcept { return table[static_cast<int>(k)].name; }

std::uint64_t next_seq(const comm& c, int rank) noexcept { return shm::state_of(c).seqs[rank].next++; }

std::uint64_t next_seqs(const comm& c, int rank, int n) noexcept {
    std::uint64_t& next = shm::state_of(c).seqs[rank].next;
    const std::uint64_t first = next;
    next += static_cast<std::uint64_t>(n);
    return first;
}

void destroy_state(comm& c) noexcept {
    auto* s = static_cast<shm::state*>(c.coll_shm.exchange(nullptr, std::memory_order_acq_rel));
    if (s != nullptr) {
        hier::destroy(s->hier.exchange(nullptr, std::memory_order_acq_rel));
    }
    shm::state::destroy(s);
}

bool algorithm_forced(kind k) noexcept { return forced().index[static_cast<int>(k)] > 0; }

algo_fn algorithm_named(kind k, const char* name) noexcept {
    for (const algorithm& al : table[static_cast<int>(k)].algos) {
        if (al.name != nullptr && al.fn != msg::by_rule && std::strcmp(al.name, name) == 0) {
            return al.fn;
        }
    }
    return nullptr;
}

namespace {

/// A forced algorithm other than shm (index 0), where it applies to a; null otherwise.
const algorithm* forced_algorithm(const args& a) noexcept {
    const entry& e = table[static_cast<int>(a.k)];
    const int f = forced().index[static_cast<int>(a.k)];
    return f > 0 && e.algos[f].fn != nullptr && (e.algos[f].usable == nullptr || e.algos[f].usable(a)) ? &e.algos[f]
                                                                                                      : nullptr;
}

}  // namespace

void prepare_nonblocking(args& a, std::uint64_t* next) noexcept {
    if (a.c->is_inter || a.c->local_only || a.size == 1 || forced_algorithm(a) != nullptr || !hier::runs(a)) {
        return;  // run() takes another path (the same decision, from the same arguments)
    }
    hier::reserve(a, next);
    a.local_seq = next;
}

int run(args& a) noexcept {
    if (a.c->is_inter) {
        return run_inter(a);  // message-based only (inter.cpp): no knob
    }
    const entry& e = table[static_cast<int>(a.k)];
    const algorithm* al = forced_algorithm(a);
    if (!a.c->local_only) {
        // Members in several processes: no shared slot to pass. A forced algorithm runs flat
        // over all the members; the default is shared memory inside each process and messages
        // between them where hier.cpp has an algorithm, else the message-based rule. A
        // non-blocking call decided when it started (prepare_nonblocking).
        if (al != nullptr) {
            return al->fn(a);
        }
        if (!a.blocking) {
            return a.local_seq != nullptr ? hier::run(a) : msg::by_rule(a);
        }
        return hier::runs(a) ? hier::run(a) : msg::by_rule(a);
    }
    if (al != nullptr) {
        int err = al->fn(a);
        shm::pass(a);  // after the exchange: the slot's next user waits for this call's end
        return err;
    }
    // Every member of the communicator is in this process: shared memory.
    return e.algos[0].fn(a);
}

// ---- helpers -------------------------------------------------------------------------------------

void copy_typed(const void* src, count_t scount, const datatype& stype, void* dst, count_t rcount,
                const datatype& rtype) noexcept {
    count_t sbytes = scount * stype.size();
    count_t rbytes = rcount * rtype.size();
    count_t n = sbytes < rbytes ? sbytes : rbytes;
    if (n <= 0) {
        return;
    }
    if (stype.is_contiguous() && rtype.is_contiguous()) {
        std::memcpy(at(dst, rtype.true_lb()), at(src, stype.true_lb()), static_cast<std::size_t>(n));
        return;
    }
    copy(src, scount, stype, dst, rcount, rtype, n);
}

void reduce_range(const red_view& v, const void* in_base, void* inout_base, count_t a, count_t b) noexcept {
    constexpr count_t max_int = 1 << 30;
    while (a < b) {
        count_t k = b - a < max_int ? b - a : max_int;
        op_apply(v.op, at(in_base, a * v.stride), at(inout_base, a * v.stride), static_cast<int>(k), v.t);
        a += k;
    }
}

void copy_range(const red_view& v, const void* from_base, void* to_base, count_t a, count_t b) noexcept {
    if (b <= a) {
        return;
    }
    if (v.dense) {
        aint lo = -v.shift + a * v.stride;
        std::memcpy(at(to_base, lo), at(from_base, lo), v.bytes(a, b));
        return;
    }
    copy_typed(at(from_base, a * v.stride), b - a, *v.dt, at(to_base, a * v.stride), b - a, *v.dt);
}

bool save_in_place(const args& a, args* out, scratch* saved) noexcept {
    *out = a;
    if (!a.in_place) {
        return true;
    }
    aint span = 0;  // the receive buffer up to the end of the last piece sent
    for (int i = 0; i < a.size; ++i) {
        piece p = send_piece(a, i);
        if (p.type != nullptr && p.count > 0) {
            aint end = (static_cast<const char*>(p.buf) - static_cast<const char*>(a.rbuf)) +
                       (p.count - 1) * p.type->extent() + p.type->true_ub();
            span = end > span ? end : span;
        }
    }
    if (!saved->reset_bytes(static_cast<std::size_t>(span))) {
        return false;
    }
    if (span > 0) {
        std::memcpy(saved->base(), a.rbuf, static_cast<std::size_t>(span));
    }
    out->rbuf = saved->base();
    return true;
}

scratch::~scratch() { std::free(mem_); }

bool scratch::reset(const red_view& v) noexcept {
    if (!reset_bytes(v.span)) {
        return false;
    }
    base_ = mem_ != nullptr ? at(mem_, v.shift) : nullptr;
    return true;
}

bool scratch::reset_bytes(std::size_t n) noexcept {
    std::free(mem_);
    mem_ = nullptr;
    base_ = nullptr;
    ok_ = true;
    if (n == 0) {
        return true;
    }
    mem_ = std::malloc(n);
    base_ = mem_;
    ok_ = mem_ != nullptr;
    return ok_;
}

}  // namespace mpc::mpi::coll
