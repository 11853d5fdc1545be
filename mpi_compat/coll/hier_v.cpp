/// \file
/// Gatherv and Scatterv between processes (hier.hpp; docs/collectives.md "Between processes"):
/// one message between the root and each other process, shared memory inside each process.
///
/// Only the root knows every block's size (its counts); the members of another process know
/// their own. So:
///  - in the root's process, one local phase on the root's own counts (the process's entries,
///    which lie side by side: the processes are contiguous), typed, straight between the
///    members' buffers and the root's;
///  - in every other process, a local allgather of the members' packed sizes (8 bytes each),
///    then the blocks packed side by side in rank order at the leader (Gatherv: a local gatherv
///    to it, then one message to the root) or from it (Scatterv: one message from the root,
///    then a local scatterv);
///  - the root computes each other process's run of packed bytes from its counts and receives
///    (sends) it as one message, unpacking (packing) the blocks at their displacements.
/// A run of more than INT_MAX bytes cannot be described by the local v form's int counts:
/// every member of that process and the root see it (the sizes are known to both sides), and
/// its blocks then travel one message per member, straight between the member and the root.
/// MPC_COLL_HIER_V_MAX lowers that bound (so that tests take the direct path too).
#include <climits>
#include <cstdint>
#include <memory>
#include <new>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "mpi_compat/coll/hier_detail.hpp"
#include "mpi_compat/coll/msg.hpp"
#include "mpi_compat/coll/pieces.hpp"

namespace mpc::mpi::coll::hier {
namespace {

/// Tag space (args::phase) of the messages between the root and the other processes (hier.cpp
/// uses 2 and 3).
constexpr std::uint8_t phase_root = 4;

/// The longest run packed at a leader (MPC_COLL_HIER_V_MAX, at most INT_MAX bytes).
std::size_t run_max() noexcept {
    static const std::size_t m = [] {
        auto v = config::get_size("MPC_COLL_HIER_V_MAX");  // a bad value is reported there
        return v && *v > 0 && *v < INT_MAX ? *v : std::size_t{INT_MAX};
    }();
    return m;
}

/// The call as a message between the root and a member of another process.
args root_link(const args& a) noexcept {
    args p = a;
    p.phase = phase_root;
    return p;
}

/// A process's blocks packed side by side: each member's size and offset (ints, for the local
/// v form; valid when fits), and the total.
struct packed_run {
    std::unique_ptr<int[]> ints;  // counts, then displacements
    std::size_t total = 0;
    bool fits = true;  ///< total <= run_max()
    int* counts() const noexcept { return ints.get(); }
    int* displs(int n) const noexcept { return ints.get() + n; }
};

/// The run of members first .. first + n - 1 whose packed sizes size(i) gives; false when out
/// of memory.
template <class Size>
bool make_run(packed_run& r, int n, Size size) noexcept {
    r.ints.reset(new (std::nothrow) int[static_cast<std::size_t>(n) * 2]);
    if (!r.ints) {
        return false;
    }
    r.total = 0;
    const std::size_t max = run_max();
    for (int i = 0; i < n; ++i) {
        const std::size_t b = size(i);
        r.fits = r.fits && b <= max && r.total + b <= max;
        r.counts()[i] = r.fits ? static_cast<int>(b) : 0;
        r.displs(n)[i] = r.fits ? static_cast<int>(r.total) : 0;
        r.total += b;
    }
    return true;
}

/// In a process other than the root's: every member's packed block size, by a local allgather
/// of `mine`, as the process's run.
int local_run(const args& a, const levels& h, std::size_t mine, packed_run& r) noexcept {
    const int n = h.count[static_cast<std::size_t>(h.me)];
    std::unique_ptr<std::uint64_t[]> sizes(new (std::nothrow) std::uint64_t[static_cast<std::size_t>(n)]);
    if (!sizes) {
        return MPI_ERR_NO_MEM;
    }
    std::uint64_t own = mine;
    args l = local_args(a, h, kind::allgather);
    l.sbuf = &own;
    l.scount = sizeof own;
    l.stype = &byte_type();
    l.rbuf = sizes.get();
    l.rcount = sizeof own;
    l.rtype = &byte_type();
    l.in_place = false;
    int err = local_phase(l);
    if (err != MPI_SUCCESS) {
        return err;
    }
    return make_run(r, n, [&](int i) { return static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)]); })
               ? MPI_SUCCESS
               : MPI_ERR_NO_MEM;
}

/// At the root: process j's run, from the root's counts (`block(i)`: member i's block).
template <class Block>
bool root_run(const levels& h, int j, packed_run& r, Block block) noexcept {
    const int first = h.first[static_cast<std::size_t>(j)];
    return make_run(r, h.count[static_cast<std::size_t>(j)], [&](int i) {
        const piece p = block(first + i);
        return packed_bytes(p.count, p.type);
    });
}

/// The root's process's local phase (gatherv or scatterv to or from the root, on the root's
/// counts for the process's members).
int root_local(const args& a, const levels& h, kind k) noexcept {
    args l = local_args(a, h, k);
    l.root = h.local_rank[static_cast<std::size_t>(a.root)];
    if (a.rank == a.root) {
        const int first = h.first[static_cast<std::size_t>(h.me)];
        if (k == kind::gatherv) {
            l.rcounts = a.rcounts + first;
            l.rdispls = a.rdispls + first;
        } else {
            l.scounts = a.scounts + first;
            l.sdispls = a.sdispls + first;
        }
    }
    return local_phase(l);
}

/// The root's exchanges with the other processes: per process, one message of its packed run
/// (or, for a run too long for ints, one per member). gather: receive and unpack; else pack and
/// send. Every transfer is posted, then the root's process runs its local phase, then all
/// complete.
int root_exchange(const args& a, const levels& h, bool gather) noexcept {
    const int root_proc = h.process[static_cast<std::size_t>(a.root)];
    const int np = static_cast<int>(h.first.size());
    auto block = [&](int i) { return gather ? gathered_block(a, i) : scattered_block(a, i); };
    std::unique_ptr<packed_run[]> runs(new (std::nothrow) packed_run[static_cast<std::size_t>(np)]);
    msg::request_set rs(a.size);
    if (!runs || !rs.ok()) {
        return MPI_ERR_NO_MEM;
    }
    std::size_t total = 0;
    for (int j = 0; j < np; ++j) {
        if (j != root_proc) {
            if (!root_run(h, j, runs[j], block)) {
                return MPI_ERR_NO_MEM;
            }
            total += runs[j].fits ? runs[j].total : 0;
        }
    }
    scratch packed;
    if (!packed.reset_bytes(total)) {
        return MPI_ERR_NO_MEM;
    }
    const args p = root_link(a);
    // Each fitting run's place in `packed`, and every block's copy between it and the buffer.
    auto for_blocks = [&](auto&& f) {
        std::size_t at_run = 0;
        for (int j = 0; j < np; ++j) {
            if (j == root_proc) {
                continue;
            }
            const packed_run& r = runs[j];
            const int first = h.first[static_cast<std::size_t>(j)];
            const int n = h.count[static_cast<std::size_t>(j)];
            f(j, r, first, n, at_run);
            at_run += r.fits ? r.total : 0;
        }
    };
    if (!gather) {  // pack every fitting run before sending any
        for_blocks([&](int, const packed_run& r, int first, int n, std::size_t off) {
            for (int i = 0; r.fits && i < n; ++i) {
                const piece b = block(first + i);
                copy_typed(b.buf, b.count, *b.type, at(packed.base(), static_cast<aint>(off) + r.displs(n)[i]),
                           r.counts()[i], byte_type());
            }
        });
    }
    for_blocks([&](int j, const packed_run& r, int first, int n, std::size_t off) {
        if (r.fits) {
            const int leader = h.first[static_cast<std::size_t>(j)];
            char* base = at(packed.base(), static_cast<aint>(off));
            if (gather) {
                msg::start_recv(p, leader, 0, base, static_cast<count_t>(r.total), byte_type(), rs.next());
            } else {
                msg::start_send(p, leader, 0, base, static_cast<count_t>(r.total), byte_type(), rs.next());
            }
            return;
        }
        for (int i = 0; i < n; ++i) {  // one message per member, typed
            const piece b = block(first + i);
            if (gather) {
                msg::start_recv(p, first + i, 0, const_cast<void*>(b.buf), b.count, *b.type, rs.next());
            } else {
                msg::start_send(p, first + i, 0, b.buf, b.count, *b.type, rs.next());
            }
        }
    });
    // The root's own process while the messages travel.
    const int err = root_local(a, h, gather ? kind::gatherv : kind::scatterv);
    rs.wait_all();
    if (err != MPI_SUCCESS || !gather) {
        return err;
    }
    for_blocks([&](int, const packed_run& r, int first, int n, std::size_t off) {
        for (int i = 0; r.fits && i < n; ++i) {
            const piece b = block(first + i);
            copy_typed(at(packed.base(), static_cast<aint>(off) + r.displs(n)[i]), r.counts()[i], byte_type(),
                       const_cast<void*>(b.buf), b.count, *b.type);
        }
    });
    return MPI_SUCCESS;
}

}  // namespace

/// A run too long for ints: the members of the process exchange their blocks with the root
/// themselves, and take the number of the local phase they do not run (a non-blocking call
/// reserved it: every number must be used, in order) with a local barrier.
int too_long(const args& a, const levels& h, const piece& mine, bool gather) noexcept {
    MPC_LOG(trace, mpi, "%s: this process's run is over %zu bytes: one message per member", kind_name(a.k), run_max());
    const args p = root_link(a);
    if (gather) {
        msg::send_piece_to(p, a.root, 0, mine);
    } else {
        msg::recv_piece_from(p, a.root, 0, mine);
    }
    args b = local_args(a, h, kind::barrier);
    return local_phase(b);
}

int gatherv(args& a, const levels& h) noexcept {
    if (h.process[static_cast<std::size_t>(a.root)] == h.me) {
        return a.rank == a.root ? root_exchange(a, h, true) : root_local(a, h, kind::gatherv);
    }
    const piece own = contribution(a);  // only the root may be in place
    packed_run r;
    int err = local_run(a, h, packed_bytes(own.count, own.type), r);
    if (err != MPI_SUCCESS || !r.fits) {
        return err != MPI_SUCCESS ? err : too_long(a, h, own, true);
    }
    const args p = root_link(a);
    const bool leader = is_leader(a, h);
    scratch packed;
    if (leader && !packed.reset_bytes(r.total)) {
        return MPI_ERR_NO_MEM;  // the other members are then left waiting: out of memory is fatal anyway
    }
    const int n = h.count[static_cast<std::size_t>(h.me)];
    args l = local_args(a, h, kind::gatherv);
    l.sbuf = own.buf;
    l.scount = own.count;
    l.stype = own.type;
    l.in_place = false;
    l.rbuf = packed.base();
    l.rtype = &byte_type();
    l.rcounts = r.counts();
    l.rdispls = r.displs(n);
    if ((err = local_phase(l)) == MPI_SUCCESS && leader) {
        msg::send_piece_to(p, a.root, 0, msg::bytes(packed.base(), 0, r.total));
    }
    return err;
}

int scatterv(args& a, const levels& h) noexcept {
    if (h.process[static_cast<std::size_t>(a.root)] == h.me) {
        return a.rank == a.root ? root_exchange(a, h, false) : root_local(a, h, kind::scatterv);
    }
    const piece mine{a.rbuf, a.rcount, a.rtype};  // only the root may be in place
    packed_run r;
    int err = local_run(a, h, packed_bytes(mine.count, mine.type), r);
    if (err != MPI_SUCCESS || !r.fits) {
        return err != MPI_SUCCESS ? err : too_long(a, h, mine, false);
    }
    const args p = root_link(a);
    const bool leader = is_leader(a, h);
    scratch packed;
    if (leader) {
        if (!packed.reset_bytes(r.total)) {
            return MPI_ERR_NO_MEM;
        }
        msg::recv_piece_from(p, a.root, 0, msg::bytes(packed.base(), 0, r.total));
    }
    const int n = h.count[static_cast<std::size_t>(h.me)];
    args l = local_args(a, h, kind::scatterv);
    l.sbuf = packed.base();
    l.stype = &byte_type();
    l.scounts = r.counts();
    l.sdispls = r.displs(n);
    l.in_place = false;
    return local_phase(l);
}

}  // namespace mpc::mpi::coll::hier
