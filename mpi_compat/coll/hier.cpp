/// \file
/// Hierarchical collectives (hier.hpp): Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v)
/// and Allgather(v) in three tiers, shared memory in each process, messages between one leader per
/// process, shared memory again.
///  - Barrier: a barrier in each process, a dissemination barrier among the leaders, then each
///    leader releases its process (a broadcast of nothing).
///  - Bcast: in the root's process a broadcast from the root (its leader receives it too); the
///    leaders broadcast (the msg rule: binomial or binomial_pipeline); each other
///    process broadcasts from its leader.
///  - Reduce, Allreduce: each process reduces to its leader in rank order (shm), the leaders
///    reduce to the root's leader (Reduce; which hands the result to the root if it is another
///    member) or allreduce (the msg rule), each leader broadcasts the result in its process
///    (Allreduce). A non-commutative operation takes this path only when each process's
///    members are a block of consecutive ranks: the blocks, then their partial results in
///    leader (= rank) order, give x_0 op x_1 op ... op x_n-1 associated per block.
///  - Allgather (blocks of one size, contiguous processes): each process gathers its blocks
///    at its leader, right where they go in the receive buffer; the leaders allgather the
///    processes' runs of blocks in place (an allgatherv, the msg rule); each leader broadcasts
///    the whole buffer in its process. Allgatherv the same through packed bytes (allgatherv()).
///  - Gather (the same conditions): each leader gathers its process's blocks (a leading root
///    in its receive buffer, the others packed), the leaders gather the runs at the root's
///    leader (a gatherv), which hands them to the root if it is another member.
///  - Scatter (the same conditions): Gather reversed (a root that does not lead hands the packed
///    blocks to its leader, the leaders scatter the runs, each leader scatters its run).
///  - Gatherv, Scatterv (contiguous processes): hier_v.cpp.
/// Association, and so the bits of a floating-point result, depend on the layout (processes
/// and their members), not on timing: the same job gives the same result every time.

#include "mpi_compat/coll/hier.hpp"
#include "mpi_compat/coll/hier_detail.hpp"

#include <climits>
#include <cstdlib>
#include <memory>
#include <new>

#include "lib/log.hpp"
#include "mpi_compat/coll/msg.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "network/layout.hpp"

namespace mpc::mpi::coll::hier {
namespace {

// Tag spaces (args::phase) of the messages of a hierarchical call; inter.cpp's phases 0 and 1
// are on other contexts (the group views), the communicator's own msg calls use 0.
constexpr std::uint8_t phase_leaders = 2;  ///< between the leaders (sources: leader ranks)
constexpr std::uint8_t phase_handoff = 3;  ///< a Reduce's or Gather's result, root's leader to root

/// An unregistered intra-communicator of the given world ranks on c's context pair.
std::unique_ptr<comm> view(const comm& c, std::vector<int> members) {
    auto v = std::make_unique<comm>();
    v->context = c.context;
    v->world_of = std::move(members);
    v->index_ranks();
    return v;
}

std::unique_ptr<levels> make_levels(const comm& c) {
    const int n = c.size();
    const world_state& w = world();
    // Which process runs a world rank: the job's layout, as mpc_run and the PMIx bootstrap
    // split the ranks (remote.cpp routes by the same one).
    auto lay = net::layout::make(w.size, w.nprocs);
    auto process_of = [&lay](int world_rank) { return lay ? (*lay).process_of(world_rank) : 0; };
    auto h = std::make_unique<levels>();
    h->process.assign(static_cast<std::size_t>(n), -1);
    h->local_rank.assign(static_cast<std::size_t>(n), 0);
    std::vector<int> leader_of_proc(static_cast<std::size_t>(w.nprocs), -1);
    h->contiguous = true;
    for (int r = 0; r < n; ++r) {
        int& l = leader_of_proc[static_cast<std::size_t>(process_of(c.world_of[static_cast<std::size_t>(r)]))];
        if (l < 0) {  // the process's first member: a new leader (leaders come in rank order)
            l = static_cast<int>(h->first.size());
            h->first.push_back(r);
            h->count.push_back(0);
        } else if (h->process[static_cast<std::size_t>(r - 1)] != l) {
            h->contiguous = false;  // the process's block was interrupted
        }
        h->process[static_cast<std::size_t>(r)] = l;
        h->local_rank[static_cast<std::size_t>(r)] = h->count[static_cast<std::size_t>(l)]++;
    }
    h->me = leader_of_proc[static_cast<std::size_t>(w.proc_index)];
    bool some_shared = false;
    for (int k : h->count) {
        some_shared = some_shared || k > 1;
    }
    h->useful = h->first.size() > 1 && some_shared && h->me >= 0;
    std::vector<int> mine;
    std::vector<int> heads;
    for (int r = 0; r < n; ++r) {
        int wr = c.world_of[static_cast<std::size_t>(r)];
        if (h->process[static_cast<std::size_t>(r)] == h->me) {
            mine.push_back(wr);
        }
        if (h->local_rank[static_cast<std::size_t>(r)] == 0) {
            heads.push_back(wr);
        }
    }
    h->local = view(c, std::move(mine));
    h->leaders = view(c, std::move(heads));
    return h;
}

}  // namespace

// ---- the steps every hierarchical algorithm takes (hier_detail.hpp) ------------------------------

const levels& levels_of(const comm& c) noexcept {
    shm::state& st = shm::state_of(c);
    levels* h = st.hier.load(std::memory_order_acquire);
    if (h != nullptr) {
        return *h;
    }
    try {
        h = make_levels(c).release();
    } catch (const std::bad_alloc&) {
        MPC_LOG(fatal, mpi, "out of memory for the process levels of a communicator of %d ranks", c.size());
        std::abort();
    }
    levels* expect = nullptr;
    if (!st.hier.compare_exchange_strong(expect, h, std::memory_order_acq_rel, std::memory_order_acquire)) {
        destroy(h);  // another member here made them meanwhile
        h = expect;
    }
    return *h;
}

bool is_leader(const args& a, const levels& h) noexcept { return h.local_rank[static_cast<std::size_t>(a.rank)] == 0; }

args local_args(const args& a, const levels& h, kind k) noexcept {
    args l = a;
    l.k = k;
    l.c = h.local.get();
    l.rank = h.local_rank[static_cast<std::size_t>(a.rank)];
    l.size = h.count[static_cast<std::size_t>(h.me)];
    l.root = 0;
    return l;
}

namespace {

/// The call as a phase of kind k among the leaders (the caller is its process's leader).
args leader_args(const args& a, const levels& h, kind k) noexcept {
    args g = a;
    g.k = k;
    g.c = h.leaders.get();
    g.rank = h.me;
    g.size = static_cast<int>(h.first.size());
    g.phase = phase_leaders;
    return g;
}

}  // namespace

int local_phase(args& l) noexcept {
    if (l.size == 1) {
        return execute(l);  // local copies only
    }
    if (l.local_seq == nullptr && shm::flat_runs(l)) {
        return shm::flat(l);
    }
    l.seq = l.local_seq != nullptr ? (*l.local_seq)++ : next_seq(*l.c, l.rank);
    switch (l.k) {
        case kind::barrier: return shm::barrier(l);
        case kind::bcast: return shm::bcast(l);
        case kind::gather:
        case kind::gatherv: return shm::gather(l);
        case kind::scatter:
        case kind::scatterv: return shm::scatter(l);
        case kind::reduce: return shm::reduce(l);
        case kind::allgather: return shm::allgather(l);
        default: return MPI_ERR_INTERN;
    }
}

namespace {

/// A buffer argument whose reduction base (input_base, output_base) is `base`.
void* as_buffer(const red_view& v, void* base) noexcept { return at(base, -v.buf_off); }

int barrier(args& a, const levels& h) noexcept {
    args l = local_args(a, h, kind::barrier);
    int err = local_phase(l);
    if (err == MPI_SUCCESS && is_leader(a, h)) {
        args g = leader_args(a, h, kind::barrier);
        err = msg::by_rule(g);
    }
    args out = local_args(a, h, kind::bcast);  // released by the leader once it is through
    out.rcount = 0;
    out.rtype = &byte_type();
    return err == MPI_SUCCESS ? local_phase(out) : err;
}

int bcast(args& a, const levels& h) noexcept {
    const int root_proc = h.process[static_cast<std::size_t>(a.root)];
    args l = local_args(a, h, kind::bcast);
    int err = MPI_SUCCESS;
    if (root_proc == h.me) {  // the root feeds its process, leader included
        l.root = h.local_rank[static_cast<std::size_t>(a.root)];
        err = local_phase(l);
    }
    if (err == MPI_SUCCESS && is_leader(a, h)) {
        args g = leader_args(a, h, kind::bcast);
        g.root = root_proc;
        err = msg::by_rule(g);
    }
    if (err == MPI_SUCCESS && root_proc != h.me) {
        l.root = 0;
        err = local_phase(l);
    }
    return err;
}

/// Reduces the process's inputs in rank order to its leader, at `into` there (a reduction
/// base; ignored elsewhere).
int reduce_in_process(const args& a, const levels& h, void* into) noexcept {
    args l = local_args(a, h, kind::reduce);
    if (is_leader(a, h) && into != output_base(a)) {
        if (a.in_place) {  // read the input where it is, write the partial elsewhere
            l.sbuf = a.rbuf;
            l.in_place = false;
        }
        l.rbuf = as_buffer(a.red, into);
    }
    return local_phase(l);
}

int reduce(args& a, const levels& h) noexcept {
    const red_view& v = a.red;
    const int root_proc = h.process[static_cast<std::size_t>(a.root)];
    const bool root_leads = h.first[static_cast<std::size_t>(root_proc)] == a.root;
    const bool leader = is_leader(a, h);
    // The process's partial result: in the root's buffer at a leading root, else a scratch.
    scratch acc;
    if (leader && a.rank != a.root && !acc.reset(v)) {
        return MPI_ERR_NO_MEM;
    }
    void* partial = leader && a.rank == a.root ? output_base(a) : acc.base();
    int err = reduce_in_process(a, h, partial);
    if (err == MPI_SUCCESS && leader) {
        args g = leader_args(a, h, kind::reduce);
        g.root = root_proc;
        g.in_place = root_proc == h.me;  // the root's leader reduces into its partial
        if (g.in_place) {
            g.rbuf = as_buffer(v, partial);
        } else {
            g.sbuf = as_buffer(v, partial);
        }
        err = msg::by_rule(g);
    }
    if (err != MPI_SUCCESS || root_proc != h.me || root_leads) {
        return err;
    }
    args p = a;  // the root's leader hands the result to the root, in this process
    p.phase = phase_handoff;
    if (leader) {
        msg::send_piece_to(p, a.root, 0, msg::elems(v, acc.base(), 0, v.n));
    } else if (a.rank == a.root) {
        msg::recv_piece_from(p, h.first[static_cast<std::size_t>(h.me)], 0, msg::elems(v, output_base(a), 0, v.n));
    }
    return MPI_SUCCESS;
}

int allreduce(args& a, const levels& h) noexcept {
    const red_view& v = a.red;
    int err = reduce_in_process(a, h, output_base(a));
    if (err == MPI_SUCCESS && is_leader(a, h)) {
        args g = leader_args(a, h, kind::allreduce);
        g.in_place = true;
        err = msg::by_rule(g);
    }
    if (err != MPI_SUCCESS) {
        return err;
    }
    args out = local_args(a, h, kind::bcast);
    piece result = msg::elems(v, output_base(a), 0, v.n);
    out.rbuf = const_cast<void*>(result.buf);
    out.rcount = result.count;
    out.rtype = result.type;
    return local_phase(out);
}

/// Gathers the process's blocks at its leader: member i of the process (local rank) puts its
/// block at `to` + i blocks of (count, type) there (a leader argument only).
int gather_in_process(const args& a, const levels& h, void* to, count_t count, const datatype* type) noexcept {
    args l = local_args(a, h, kind::gather);
    l.rbuf = to;
    l.rcount = count;
    l.rtype = type;
    if (a.in_place && !is_leader(a, h)) {  // in a Gather only the root may be in place
        piece own = gathered_block(a, a.rank);
        l.sbuf = own.buf;
        l.scount = own.count;
        l.stype = own.type;
        l.in_place = false;
    }
    return local_phase(l);
}

/// Process j's run of blocks, in units of `unit` elements: count[j] blocks from its leader's
/// rank on (the counts, then the displacements, of a v form among the leaders).
std::unique_ptr<int[]> runs_of(const levels& h, count_t unit) noexcept {
    const std::size_t np = h.first.size();
    std::unique_ptr<int[]> runs(new (std::nothrow) int[np * 2]);
    if (runs) {
        for (std::size_t j = 0; j < np; ++j) {
            runs[j] = static_cast<int>(h.count[j] * unit);
            runs[np + j] = static_cast<int>(h.first[j] * unit);
        }
    }
    return runs;
}

/// A v form among the leaders over the processes' runs (runs_of).
void set_runs(args& g, const levels& h, const int* runs) noexcept {
    g.rcounts = runs;
    g.rdispls = runs + h.first.size();
}

int allgather(args& a, const levels& h) noexcept {
    const int first = h.first[static_cast<std::size_t>(h.me)];
    // The process's blocks, at their places in the receive buffer.
    int err = gather_in_process(a, h, at(a.rbuf, first * a.rcount * a.rtype->extent()), a.rcount, a.rtype);
    if (err == MPI_SUCCESS && is_leader(a, h)) {
        std::unique_ptr<int[]> runs = runs_of(h, a.rcount);
        if (!runs) {
            return MPI_ERR_NO_MEM;
        }
        args g = leader_args(a, h, kind::allgatherv);
        g.in_place = true;
        set_runs(g, h, runs.get());
        err = msg::by_rule(g);
    }
    if (err != MPI_SUCCESS) {
        return err;
    }
    args out = local_args(a, h, kind::bcast);
    out.rcount = a.rcount * a.size;
    return local_phase(out);
}

/// Allgatherv (contiguous processes): as Allgather, through packed bytes, since where the blocks
/// go is each member's own choice (its displacements) while their packed sizes are the same on
/// every member. Every member keeps a buffer of every block packed in rank order; each leader
/// gathers its process's blocks into its own at their offsets, the leaders allgather the
/// processes' runs in place, each leader broadcasts the buffer in its process, and every member
/// unpacks every block into its receive buffer.
int allgatherv(args& a, const levels& h) noexcept {
    const auto n = static_cast<std::size_t>(a.size);
    const std::size_t np = h.first.size();
    const auto me = static_cast<std::size_t>(h.me);
    const auto nl = static_cast<std::size_t>(h.count[me]);
    // off[i]: block i's packed offset (off[n]: the total); then the processes' runs (counts,
    // displacements) and this process's blocks (counts, displacements from its run's start)
    std::unique_ptr<int[]> ints(new (std::nothrow) int[n + 1 + 2 * np + 2 * nl]);
    scratch all;
    if (!ints) {
        return MPI_ERR_NO_MEM;
    }
    int* off = ints.get();
    off[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
        off[i + 1] = off[i] + static_cast<int>(packed_bytes(a.rcounts[i], a.rtype));
    }
    int* runs = off + n + 1;
    for (std::size_t j = 0; j < np; ++j) {
        const auto f = static_cast<std::size_t>(h.first[j]);
        runs[j] = off[f + static_cast<std::size_t>(h.count[j])] - off[f];
        runs[np + j] = off[f];
    }
    const auto first = static_cast<std::size_t>(h.first[me]);
    int* mine = runs + 2 * np;
    for (std::size_t i = 0; i < nl; ++i) {
        mine[i] = off[first + i + 1] - off[first + i];
        mine[nl + i] = off[first + i] - off[first];
    }
    if (!all.reset_bytes(static_cast<std::size_t>(off[n]))) {
        return MPI_ERR_NO_MEM;
    }
    args l = local_args(a, h, kind::gatherv);
    const piece own = contribution(a);  // a Gatherv is in place at its root only
    l.sbuf = own.buf;
    l.scount = own.count;
    l.stype = own.type;
    l.in_place = false;
    l.rbuf = at(all.base(), off[first]);
    l.rtype = &byte_type();
    l.rcounts = mine;
    l.rdispls = mine + nl;
    int err = local_phase(l);
    if (err == MPI_SUCCESS && is_leader(a, h)) {
        args g = leader_args(a, h, kind::allgatherv);
        g.in_place = true;
        g.rbuf = all.base();
        g.rtype = &byte_type();
        set_runs(g, h, runs);
        err = msg::by_rule(g);
    }
    if (err != MPI_SUCCESS) {
        return err;
    }
    args out = local_args(a, h, kind::bcast);
    out.rbuf = all.base();
    out.rcount = off[n];
    out.rtype = &byte_type();
    if ((err = local_phase(out)) != MPI_SUCCESS) {
        return err;
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!a.in_place || i != static_cast<std::size_t>(a.rank)) {
            piece to = gathered_block(a, static_cast<int>(i));
            copy_typed(at(all.base(), off[i]), off[i + 1] - off[i], byte_type(), const_cast<void*>(to.buf), to.count,
                       *to.type);
        }
    }
    return MPI_SUCCESS;
}

/// Gather (blocks of one size, contiguous processes): each leader gathers its process's blocks,
/// the leaders gather the runs at the root's leader, which hands them to the root if it is
/// another member. A leading root collects in its receive buffer; the other leaders collect
/// packed bytes (the root's leader every run, the others their own).
int gather(args& a, const levels& h) noexcept {
    const int root_proc = h.process[static_cast<std::size_t>(a.root)];
    const bool leader = is_leader(a, h);
    const bool typed = leader && a.rank == a.root;
    const piece own = contribution(a);
    const count_t block = static_cast<count_t>(packed_bytes(own.count, own.type));  // the same on every member
    const int first = h.first[static_cast<std::size_t>(h.me)];
    scratch packed;
    void* to = nullptr;
    if (typed) {
        to = at(a.rbuf, first * a.rcount * a.rtype->extent());
    } else if (leader) {
        const int blocks = root_proc == h.me ? a.size : h.count[static_cast<std::size_t>(h.me)];
        if (!packed.reset_bytes(static_cast<std::size_t>(block * blocks))) {
            return MPI_ERR_NO_MEM;
        }
        to = root_proc == h.me ? at(packed.base(), first * block) : packed.base();
    }
    const count_t unit = typed ? a.rcount : block;
    int err = gather_in_process(a, h, to, unit, typed ? a.rtype : &byte_type());
    if (err == MPI_SUCCESS && leader) {
        std::unique_ptr<int[]> runs = runs_of(h, unit);
        if (!runs) {
            return MPI_ERR_NO_MEM;
        }
        args g = leader_args(a, h, kind::gatherv);
        g.root = root_proc;
        g.in_place = root_proc == h.me;
        if (g.in_place) {
            g.rbuf = typed ? a.rbuf : packed.base();
            g.rtype = typed ? a.rtype : &byte_type();
            set_runs(g, h, runs.get());
        } else {
            g.sbuf = packed.base();
            g.scount = block * h.count[static_cast<std::size_t>(h.me)];
            g.stype = &byte_type();
        }
        err = msg::by_rule(g);
    }
    if (err != MPI_SUCCESS || root_proc != h.me || h.first[static_cast<std::size_t>(root_proc)] == a.root) {
        return err;
    }
    args p = a;  // the root's leader hands the blocks to the root, in this process
    p.phase = phase_handoff;
    if (leader) {
        msg::send_piece_to(p, a.root, 0, msg::bytes(packed.base(), 0, static_cast<std::size_t>(block * a.size)));
    } else if (a.rank == a.root) {
        msg::recv_piece_from(p, first, 0, {a.rbuf, a.rcount * a.size, a.rtype});
    }
    return MPI_SUCCESS;
}

/// Scatter: what member a receives (its receive block; a root in place: its block in place).
piece scatter_block(const args& a) noexcept {
    if (a.in_place && a.rank == a.root) {
        return {at(a.sbuf, a.rank * a.scount * a.stype->extent()), a.scount, a.stype};
    }
    return {a.rbuf, a.rcount, a.rtype};
}

/// Scatter (blocks of one size, contiguous processes), Gather reversed: a root that is not its
/// process's leader hands the packed blocks to it (one message inside the process); the
/// leaders scatter the processes' runs of blocks from the root's leader (a scatterv: typed
/// from a leading root's send buffer, else packed bytes); each leader scatters its run in its
/// process. A leading root's own block is copied (or stays, in place) by the last phase.
int scatter(args& a, const levels& h) noexcept {
    const int root_proc = h.process[static_cast<std::size_t>(a.root)];
    const bool leader = is_leader(a, h);
    const bool root_leads = h.first[static_cast<std::size_t>(root_proc)] == a.root;
    const bool typed = leader && a.rank == a.root;  // the root leads: its send buffer as it is
    const bool mine_in_place = a.in_place && a.rank == a.root;
    const piece mine = scatter_block(a);
    const count_t block = static_cast<count_t>(packed_bytes(mine.count, mine.type));  // the same everywhere
    const int first = h.first[static_cast<std::size_t>(h.me)];
    scratch packed;
    if (leader && !typed) {
        const int blocks = root_proc == h.me ? a.size : h.count[static_cast<std::size_t>(h.me)];
        if (!packed.reset_bytes(static_cast<std::size_t>(block * blocks))) {
            return MPI_ERR_NO_MEM;
        }
    }
    if (root_proc == h.me && !root_leads) {  // the root hands every block to its leader, packed
        args p = a;
        p.phase = phase_handoff;
        if (a.rank == a.root) {
            msg::send_piece_to(p, first, 0, {a.sbuf, a.scount * a.size, a.stype});
        } else if (leader) {
            msg::recv_piece_from(p, a.root, 0, msg::bytes(packed.base(), 0, static_cast<std::size_t>(block * a.size)));
        }
    }
    int err = MPI_SUCCESS;
    if (leader) {
        const count_t unit = typed ? a.scount : block;
        std::unique_ptr<int[]> runs = runs_of(h, unit);
        if (!runs) {
            return MPI_ERR_NO_MEM;
        }
        args g = leader_args(a, h, kind::scatterv);
        g.root = root_proc;
        g.in_place = root_proc == h.me;  // the root's leader keeps its own run where it is
        if (g.in_place) {
            g.sbuf = typed ? a.sbuf : packed.base();
            g.stype = typed ? a.stype : &byte_type();
            g.scounts = runs.get();
            g.sdispls = runs.get() + h.first.size();
        } else {
            g.rbuf = packed.base();
            g.rcount = block * h.count[static_cast<std::size_t>(h.me)];
            g.rtype = &byte_type();
        }
        err = msg::by_rule(g);
    }
    if (err != MPI_SUCCESS) {
        return err;
    }
    args l = local_args(a, h, kind::scatter);
    if (leader) {  // the run of this process's blocks, from the leader
        l.sbuf = typed ? at(a.sbuf, first * a.scount * a.stype->extent())
                       : (root_proc == h.me ? at(packed.base(), first * block) : packed.base());
        l.scount = typed ? a.scount : block;
        l.stype = typed ? a.stype : &byte_type();
    }
    l.in_place = mine_in_place && leader;  // a leading root in place: its block stays
    scratch discard;
    if (mine_in_place && !leader) {  // a root in place that does not lead: its block stays too,
        if (!discard.reset_bytes(static_cast<std::size_t>(block))) {  // its leader's copy goes here
            return MPI_ERR_NO_MEM;
        }
        l.rbuf = discard.base();
        l.rcount = block;
        l.rtype = &byte_type();
    }
    return local_phase(l);
}

}  // namespace

void destroy(levels* l) noexcept { delete l; }

bool runs(const args& a) noexcept {
    switch (a.k) {
        case kind::barrier:
        case kind::bcast:
        case kind::reduce:
        case kind::allreduce:
        case kind::gather:
        case kind::scatter:
        case kind::allgather:
        case kind::allgatherv:
        case kind::gatherv:
        case kind::scatterv: break;
        default: return false;
    }
    const levels& h = levels_of(*a.c);
    if (!h.useful) {
        return false;
    }
    if (a.k == kind::gatherv || a.k == kind::scatterv) {
        // The root's process runs a local gatherv (scatterv) on the root's own counts, whose
        // entries for the process's members must lie side by side.
        return h.contiguous;
    }
    if ((a.k == kind::reduce || a.k == kind::allreduce) && !a.red.commutative) {
        return h.contiguous;
    }
    if (a.k == kind::allgather || a.k == kind::gather || a.k == kind::scatter) {
        // Runs of blocks are counted in ints (a v form among the leaders); the packed size,
        // the same on every member, bounds every member's element count (an empty call gains
        // nothing).
        piece own = a.k == kind::scatter ? scatter_block(a) : contribution(a);
        std::size_t total = packed_bytes(own.count, own.type) * static_cast<std::size_t>(a.size);
        return h.contiguous && total > 0 && total <= INT_MAX;
    }
    if (a.k == kind::allgatherv) {  // the same: offsets in ints, every block's size everywhere
        std::size_t total = 0;
        for (int i = 0; i < a.size; ++i) {
            total += packed_bytes(a.rcounts[i], a.rtype);
        }
        return h.contiguous && total > 0 && total <= INT_MAX;
    }
    return true;
}

/// The local phases (local_phase() calls) of call a, on every member of a process with several
/// members: what reserve() takes. Each function above makes them on every member of a process
/// whatever its role (leader or not); Gatherv and Scatterv make one in the root's process, two
/// (the blocks' sizes, then the blocks) in the others.
int local_phases(const args& a, const levels& h) noexcept {
    switch (a.k) {
        case kind::gatherv:
        case kind::scatterv: return h.process[static_cast<std::size_t>(a.root)] == h.me ? 1 : 2;
        case kind::bcast:
        case kind::reduce:
        case kind::gather:
        case kind::scatter: return 1;
        case kind::barrier:    // gather, release
        case kind::allreduce:  // reduce, broadcast
        case kind::allgather:  // gather, broadcast
        case kind::allgatherv: return 2;
        default: return 0;
    }
}

void reserve(const args& a, std::uint64_t* next) noexcept {
    const levels& h = levels_of(*a.c);
    const int members = h.count[static_cast<std::size_t>(h.me)];
    const int n = members > 1 ? local_phases(a, h) : 0;
    *next = n > 0 ? next_seqs(*h.local, h.local_rank[static_cast<std::size_t>(a.rank)], n) : 0;
}

int run(args& a) noexcept {
    const levels& h = levels_of(*a.c);
    MPC_LOG(trace, mpi, "%s on %d members: hierarchical, %zu processes", kind_name(a.k), a.size, h.first.size());
    switch (a.k) {
        case kind::barrier: return barrier(a, h);
        case kind::bcast: return bcast(a, h);
        case kind::reduce: return reduce(a, h);
        case kind::allreduce: return allreduce(a, h);
        case kind::gather: return gather(a, h);
        case kind::scatter: return scatter(a, h);
        case kind::allgather: return allgather(a, h);
        case kind::allgatherv: return allgatherv(a, h);
        case kind::gatherv: return gatherv(a, h);
        case kind::scatterv: return scatterv(a, h);
        default: return MPI_ERR_INTERN;
    }
}

}  // namespace mpc::mpi::coll::hier
