#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/coll/shm_detail.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "lib/config.hpp"
#include "lib/fence.hpp"
#include "lib/log.hpp"
#include "mpi_compat/match.hpp"
#include "mpi_compat/op.hpp"
#include "mpi_compat/runtime.hpp"
#include "mpi_compat/coll/pieces.hpp"
#include "scheduler/detail.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi::coll::shm {

// ---- state -----------------------------------------------------------------------------------

int flat_limit() noexcept {
    static const int limit = [] {
        auto v = config::get_int("MPC_COLL_FLAT_MAX");  // a bad value is reported there
        return v ? static_cast<int>(*v < 0 ? 0 : *v > flat_max ? flat_max : *v) : flat_default;
    }();
    return limit;
}

namespace {

/// The VP world rank w runs on now (the launcher has placed every rank of the process once it
/// is through; a member calling this early waits for it); -1: not a rank here.
int vp_of_rank(int w) noexcept {
    world_state& ws = world();
    while (!ws.launched.load(std::memory_order_acquire)) {
        if (sched::self() != nullptr) {
            sched::yield();
        } else {
            cpu_relax();
        }
    }
    if (w < 0 || static_cast<std::size_t>(w) >= ws.tasks.size() || ws.tasks[static_cast<std::size_t>(w)] == nullptr) {
        return -1;
    }
    return sched::vp_of(ws.tasks[static_cast<std::size_t>(w)]->spawned.load(std::memory_order_relaxed));
}

/// Groups c's n members by the VP each runs on now (shm.hpp, VP groups): sets ctl's
/// ngroups (0: one-VP calls do not run on c) and, for several groups, g, members, group_of.
/// Returns false on out of memory.
bool make_vp_groups(vp_ctl& ctl, const comm& c, int n, int vps) noexcept {
    ctl.ngroups = 0;
    if (n < 2 || c.is_inter || !c.local_only || static_cast<int>(c.world_of.size()) != n) {
        return true;
    }
    if (vps == 1) {
        ctl.ngroups = 1;
        ctl.max_group = n;
        return true;
    }
    static const bool groups_on = [] {
        auto v = config::get_int("MPC_COLL_VP_GROUPS");  // a bad value is reported there
        return !v || *v != 0;
    }();
    if (n <= vps || !groups_on || n > 65535) {
        // one member per core at most: flat (or the slots) spin on their own cores; past
        // 65535 members group_of's entries would not hold a group
        return true;
    }
    std::vector<int> vp_of_member(static_cast<std::size_t>(n));
    std::vector<int> count(static_cast<std::size_t>(vps), 0);
    for (int r = 0; r < n; ++r) {
        const int v = vp_of_rank(c.world_of[static_cast<std::size_t>(r)]);
        if (v < 0 || v >= vps) {
            return true;  // not a placed rank of this process: no groups
        }
        vp_of_member[static_cast<std::size_t>(r)] = v;
        ++count[static_cast<std::size_t>(v)];
    }
    int ng = 0;
    for (int v = 0; v < vps; ++v) {
        ng += count[static_cast<std::size_t>(v)] > 0 ? 1 : 0;
    }
    if (ng == n) {
        return true;  // each member alone on its VP: nothing to combine without the cores
    }
    if (ng == 1) {
        ctl.ngroups = 1;
        ctl.max_group = n;
        return true;
    }
    ctl.g = static_cast<vp_group*>(std::aligned_alloc(64, sizeof(vp_group) * static_cast<std::size_t>(ng)));
    ctl.members = static_cast<int*>(std::malloc(sizeof(int) * static_cast<std::size_t>(n)));
    ctl.group_of = static_cast<std::uint16_t*>(std::malloc(sizeof(std::uint16_t) * static_cast<std::size_t>(n)));
    if (ctl.g == nullptr || ctl.members == nullptr || ctl.group_of == nullptr) {
        return false;
    }
    // group ids in VP order; members of a group in rank order
    std::vector<int> gid(static_cast<std::size_t>(vps), -1);
    int next = 0;
    int first = 0;
    for (int v = 0; v < vps; ++v) {
        if (count[static_cast<std::size_t>(v)] > 0) {
            gid[static_cast<std::size_t>(v)] = next;
            vp_group* g = new (&ctl.g[next]) vp_group();
            g->first = first;
            first += count[static_cast<std::size_t>(v)];
            ++next;
        }
    }
    for (int r = 0; r < n; ++r) {
        const int id = gid[static_cast<std::size_t>(vp_of_member[static_cast<std::size_t>(r)])];
        vp_group& g = ctl.g[id];
        ctl.members[g.first + static_cast<int>(g.n)] = r;
        ++g.n;
        ctl.group_of[r] = static_cast<std::uint16_t>(id);
    }
    for (int v = 0; v < vps; ++v) {
        ctl.max_group = std::max(ctl.max_group, count[static_cast<std::size_t>(v)]);
    }
    ctl.ngroups = ng;
    MPC_LOG(debug, mpi, "collectives: a communicator of %d ranks in %d VP groups (the first of %u)", n, ng,
            ctl.g[0].n);
    return true;
}

}  // namespace

state* state::create(const comm& c) noexcept {
    const int n = c.size();
    void* mem = std::aligned_alloc(64, sizeof(state));
    if (mem == nullptr) {
        return nullptr;
    }
    auto* s = new (mem) state();
    s->n = n;
    std::size_t seq_bytes = sizeof(member_seq) * static_cast<std::size_t>(n);
    std::size_t cell_total = sizeof(cell) * static_cast<std::size_t>(n) * n_slots;
    s->seqs = static_cast<member_seq*>(std::aligned_alloc(64, seq_bytes));
    s->cell_mem = static_cast<cell*>(std::aligned_alloc(64, cell_total));
    s->vp.e = static_cast<vp_entry*>(std::calloc(static_cast<std::size_t>(n), sizeof(vp_entry)));
    if (s->seqs == nullptr || s->cell_mem == nullptr || s->vp.e == nullptr) {
        destroy(s);
        return nullptr;
    }
    for (int i = 0; i < n; ++i) {
        new (&s->seqs[i]) member_seq();
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(n) * n_slots; ++i) {
        new (&s->cell_mem[i]) cell();
    }
    if (n <= flat_limit()) {
        s->flat = static_cast<flat_member*>(std::aligned_alloc(64, sizeof(flat_member) * static_cast<std::size_t>(n)));
        if (s->flat == nullptr) {
            destroy(s);
            return nullptr;
        }
        for (int i = 0; i < n; ++i) {
            new (&s->flat[i]) flat_member();
        }
    }
    const int vps = sched::nr_vps();
    if (!make_vp_groups(s->vp, c, n, vps)) {
        destroy(s);
        return nullptr;
    }
    const fast_mode mode = n < 2                                 ? fast_mode::none
                           : s->vp.ngroups > 0                   ? fast_mode::one_vp
                           : n <= vps && s->flat != nullptr      ? fast_mode::flat
                                                                 : fast_mode::none;
    const kind kinds[n_fast_kinds] = {kind::barrier, kind::bcast, kind::allreduce};
    for (int i = 0; i < n_fast_kinds; ++i) {
        const bool too_many = mode == fast_mode::one_vp && kinds[i] == kind::bcast && !vp_bcast_runs(s->vp);
        s->fast[i] = algorithm_forced(kinds[i]) || too_many ? fast_mode::none : mode;
    }
    for (int k = 0; k < n_slots; ++k) {
        s->slots[k].gen.store(static_cast<std::uint64_t>(k), std::memory_order_relaxed);
        s->slots[k].cells = s->cell_mem + static_cast<std::size_t>(k) * static_cast<std::size_t>(n);
    }
    return s;
}

void state::destroy(state* s) noexcept {
    if (s == nullptr) {
        return;
    }
    std::free(s->seqs);
    std::free(s->cell_mem);
    std::free(s->flat);
    std::free(s->vp.e);
    std::free(s->vp.g);
    std::free(s->vp.members);
    std::free(s->vp.group_of);
    for (slot& sl : s->slots) {
        destroy_remote(sl.remote);
    }
    s->~state();
    std::free(s);
}

state& state_of(const comm& c) noexcept {
    void* p = c.coll_shm.load(std::memory_order_acquire);
    if (p == nullptr) {
        state* s = state::create(c);
        if (s == nullptr) {
            MPC_LOG(fatal, mpi, "out of memory for the collective state of a communicator of %d ranks", c.size());
            std::abort();
        }
        void* expect = nullptr;
        if (c.coll_shm.compare_exchange_strong(expect, s, std::memory_order_acq_rel, std::memory_order_acquire)) {
            p = s;
        } else {
            state::destroy(s);
            p = expect;
        }
    }
    return *static_cast<state*>(p);
}

namespace detail {  // shm_detail.hpp declares what shm_nb.cpp uses

// ---- synchronisation -----------------------------------------------------------------------------

void wake(slot& s) noexcept { s.waiters.wake_all(); }

/// Waits until cond(s, x) holds: spins while the VP is idle, then parks on the slot's wait list.
template <bool (*Cond)(const slot&, std::uint64_t)>
void wait_for(slot& s, std::uint64_t x, const char* what) noexcept {
    if (Cond(s, x)) {
        return;
    }
    struct probe {
        slot* s;
        std::uint64_t x;
    } pr{&s, x};
    auto fn = [](void* p) noexcept {
        auto* q = static_cast<probe*>(p);
        return Cond(*q->s, q->x);
    };
    if (sched::self() == nullptr) {  // a plain thread of the rank (MPI_THREAD_MULTIPLE): poll
        while (!Cond(s, x)) {
            cpu_relax();
        }
        return;
    }
    if (sched::spin_until(fn, &pr, wait_spin_ns())) {
        return;
    }
    while (!Cond(s, x)) {
        s.waiters.wait_unless(fn, &pr, what);
    }
}

bool count_at_least(const slot& s, std::uint64_t x) noexcept { return s.count.load(std::memory_order_acquire) >= x; }
bool flag_at_least(const slot& s, std::uint64_t x) noexcept { return s.flag.load(std::memory_order_acquire) >= x; }
bool serves(const slot& s, std::uint64_t x) noexcept { return s.gen.load(std::memory_order_acquire) == x; }

/// Counts an arrival; wakes the waiters when the count reaches `target` (0: never). Returns
/// the new count.
std::uint32_t arrive(slot& s, std::uint32_t target) noexcept {
    std::uint32_t c = s.count.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (c == target) {
        wake(s);
    }
    return c;
}

/// Arrives and waits until `target` members have arrived (a phase of all members).
void phase(slot& s, std::uint32_t target, const char* what) noexcept {
    if (arrive(s, target) != target) {
        wait_for<count_at_least>(s, target, what);
    }
}

void raise_flag(slot& s, std::uint32_t v) noexcept {
    s.flag.store(v, std::memory_order_release);
    wake(s);
}

/// The call's slot, once the call seq - n_slots has left it.
slot& take_slot(const args& a, const char* what) noexcept {
    slot& s = state_of(*a.c).slots[a.seq % n_slots];
    wait_for<serves>(s, a.seq, what);
    return s;
}

/// Takes the call's slot and publishes a.
slot& enter(const args& a, const char* what) noexcept {
    slot& s = take_slot(a, what);
    s.cells[a.rank].a = &a;  // `inl` is set by whoever fills the cell (the root, in a scatter)
    return s;
}

/// The member is done with the slot; the last one readies it for call seq + n_slots.
void leave(slot& s, const args& a) noexcept {
    if (s.left.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(a.size)) {
        s.count.store(0, std::memory_order_relaxed);
        s.flag.store(0, std::memory_order_relaxed);
        s.left.store(0, std::memory_order_relaxed);
        s.gen.store(a.seq + n_slots, std::memory_order_release);
        wake(s);
    }
}



/// Packs (buf, count, t) into dst (bytes of it).
void pack_into(void* dst, const void* buf, count_t count, const datatype& t) noexcept {
    copy_typed(buf, count, t, dst, static_cast<count_t>(packed_bytes(count, &t)), byte_type());
}
void unpack_from(const void* src, std::size_t bytes, void* buf, count_t count, const datatype& t) noexcept {
    copy_typed(src, static_cast<count_t>(bytes), byte_type(), buf, count, t);
}


/// Gather and allgather: a member's contribution into `to`, from its cell when it left it
/// there, else from its buffer. Returns whether it came from the buffer.
bool collect_block(const cell& c, const piece& to) noexcept {
    if (c.inl) {
        unpack_from(c.data, c.nbytes, const_cast<void*>(to.buf), to.count, *to.type);
        return false;
    }
    copy_piece(contribution(*c.a), to);
    return true;
}

// ---- reductions ------------------------------------------------------------------------------------

/// The chunk of elements member r of n reduces: [lo, hi).
void chunk(count_t total, int r, int n, count_t* lo, count_t* hi) noexcept {
    *lo = total * r / n;
    *hi = total * (r + 1) / n;
}

/// acc[a, b) = x_first op ... op x_last over the members' inputs, in rank order (the
/// association MPI prescribes for non-commutative operations): acc = x_last, then
/// acc = x_i op acc for i from last - 1 down to first.
void reduce_members(const slot& s, const red_view& v, int first, int last, void* acc_base, count_t a,
                    count_t b) noexcept {
    copy_range(v, input_base(*s.cells[last].a), acc_base, a, b);
    for (int i = last - 1; i >= first; --i) {
        reduce_range(v, input_base(*s.cells[i].a), acc_base, a, b);
    }
}

/// The same over the members' inline copies (their cells hold elements [0, n) at base
/// cell.data + v.shift... the cell data is a dense image of the view).
const void* cell_base(const slot& s, int i, const red_view& v) noexcept { return at(s.cells[i].data, v.shift); }

bool view_fits_cell(const red_view& v) noexcept { return v.dense && v.span <= cell_bytes; }

/// The same over the members' inline copies, into acc_base (every element).
void reduce_cells(const slot& s, const red_view& v, int size, void* acc_base) noexcept {
    copy_range(v, cell_base(s, size - 1, v), acc_base, 0, v.n);
    for (int i = size - 2; i >= 0; --i) {
        reduce_range(v, cell_base(s, i, v), acc_base, 0, v.n);
    }
}

/// A scratch array for v, or the end of the job: a member that gave up halfway through a
/// collective would leave the others waiting forever.
void need_scratch(scratch& sc, const red_view& v, const char* what) noexcept {
    if (!sc.reset(v)) {
        MPC_LOG(fatal, mpi, "%s: out of memory for a %zu-byte reduction buffer", what, v.span);
        std::abort();
    }
}

/// Reduces elements [lo, hi) of every member's input, in rank order, into out_base.
void reduce_chunk(const slot& s, const red_view& v, int size, count_t lo, count_t hi, void* out_base,
                  const char* what) noexcept {
    if (hi <= lo) {
        return;
    }
    scratch acc;
    need_scratch(acc, v, what);
    reduce_members(s, v, 0, size - 1, acc.base(), lo, hi);
    copy_range(v, acc.base(), out_base, lo, hi);
}

}  // namespace detail

using namespace detail;

void pass(const args& a) noexcept { leave(take_slot(a, kind_name(a.k)), a); }

// ---- algorithms --------------------------------------------------------------------------------------

int barrier(args& a) noexcept {
    slot& s = enter(a, "MPI_Barrier");
    phase(s, static_cast<std::uint32_t>(a.size), "MPI_Barrier");
    leave(s, a);
    return MPI_SUCCESS;
}

int bcast(args& a) noexcept {
    slot& s = enter(a, "MPI_Bcast");
    const auto n = static_cast<std::uint32_t>(a.size);
    std::size_t bytes = packed_bytes(a.rcount, a.rtype);
    bool small = bytes <= result_bytes;  // the same on every member: the type signatures match
    if (a.rank == a.root) {
        if (small) {
            pack_into(s.result, a.rbuf, a.rcount, *a.rtype);
            raise_flag(s, 1);
        } else {
            raise_flag(s, 1);
            wait_for<count_at_least>(s, n - 1, "MPI_Bcast");
        }
    } else {
        wait_for<flag_at_least>(s, 1, "MPI_Bcast");
        if (small) {
            unpack_from(s.result, bytes, a.rbuf, a.rcount, *a.rtype);
        } else {
            const args& r = *s.cells[a.root].a;
            copy_typed(r.rbuf, r.rcount, *r.rtype, a.rbuf, a.rcount, *a.rtype);
            arrive(s, n - 1);
        }
    }
    leave(s, a);
    return MPI_SUCCESS;
}

int gather(args& a) noexcept {
    slot& s = enter(a, "MPI_Gather");
    const auto n = static_cast<std::uint32_t>(a.size);
    if (a.rank != a.root) {
        cell& me = s.cells[a.rank];
        std::size_t bytes = packed_bytes(a.scount, a.stype);
        if (bytes <= cell_bytes) {
            pack_into(me.data, a.sbuf, a.scount, *a.stype);
            me.nbytes = bytes;
            me.inl = true;
            arrive(s, n - 1);
        } else {
            me.inl = false;
            arrive(s, n - 1);
            wait_for<flag_at_least>(s, 1, "MPI_Gather");  // root has read our buffer
        }
        leave(s, a);
        return MPI_SUCCESS;
    }
    if (!a.in_place) {
        copy_piece(contribution(a), gathered_block(a, a.rank));
    }
    wait_for<count_at_least>(s, n - 1, "MPI_Gather");
    for (int i = 0; i < a.size; ++i) {
        if (i == a.rank) {
            continue;
        }
        collect_block(s.cells[i], gathered_block(a, i));
    }
    raise_flag(s, 1);
    leave(s, a);
    return MPI_SUCCESS;
}

int scatter(args& a) noexcept {
    slot& s = enter(a, "MPI_Scatter");
    const auto n = static_cast<std::uint32_t>(a.size);
    if (a.rank == a.root) {
        bool any_large = false;
        for (int i = 0; i < a.size; ++i) {
            if (i == a.rank) {
                continue;
            }
            piece p = scattered_block(a, i);
            std::size_t bytes = packed_bytes(p.count, p.type);
            cell& c = s.cells[i];
            if (bytes <= cell_bytes) {
                pack_into(c.data, p.buf, p.count, *p.type);
                c.nbytes = bytes;
                c.inl = true;
            } else {
                c.inl = false;
                any_large = true;
            }
        }
        if (!a.in_place) {
            copy_piece(scattered_block(a, a.rank), {a.rbuf, a.rcount, a.rtype});
        }
        raise_flag(s, 1);
        if (any_large) {
            wait_for<count_at_least>(s, n - 1, "MPI_Scatter");
        }
    } else {
        // The root fills our cell (data and `inl`) before it raises the flag.
        wait_for<flag_at_least>(s, 1, "MPI_Scatter");
        const cell& me = s.cells[a.rank];
        if (me.inl) {
            unpack_from(me.data, me.nbytes, a.rbuf, a.rcount, *a.rtype);
        } else {
            copy_piece(scattered_block(*s.cells[a.root].a, a.rank), {a.rbuf, a.rcount, a.rtype});
        }
        arrive(s, n - 1);  // every member: the root may be waiting for the large ones
    }
    leave(s, a);
    return MPI_SUCCESS;
}

int allgather(args& a) noexcept {
    slot& s = enter(a, "MPI_Allgather");
    const auto n = static_cast<std::uint32_t>(a.size);
    cell& me = s.cells[a.rank];
    piece mine = contribution(a);
    std::size_t bytes = packed_bytes(mine.count, mine.type);
    me.inl = bytes <= cell_bytes;
    if (me.inl) {
        pack_into(me.data, mine.buf, mine.count, *mine.type);
        me.nbytes = bytes;
    }
    if (!a.in_place) {
        copy_piece(mine, gathered_block(a, a.rank));
    }
    phase(s, n, "MPI_Allgather");
    bool any_large = !me.inl;
    for (int i = 0; i < a.size; ++i) {
        if (i == a.rank) {
            continue;
        }
        any_large = collect_block(s.cells[i], gathered_block(a, i)) || any_large;
    }
    if (any_large) {  // the same on every member (own cell included): all are published by now
        phase(s, 2 * n, "MPI_Allgather");
    }
    leave(s, a);
    return MPI_SUCCESS;
}

int alltoall(args& a) noexcept {
    // In place, the data to send is in the receive buffer that we overwrite: send from a copy.
    scratch saved;
    args published;  // members read our send pieces through it
    if (!save_in_place(a, &published, &saved)) {
        return MPI_ERR_NO_MEM;
    }
    slot& s = enter(published, "MPI_Alltoall");
    const auto n = static_cast<std::uint32_t>(a.size);
    phase(s, n, "MPI_Alltoall");
    for (int i = 0; i < a.size; ++i) {
        copy_piece(send_piece(*s.cells[i].a, a.rank), recv_piece(a, i));
    }
    phase(s, 2 * n, "MPI_Alltoall");
    leave(s, published);
    return MPI_SUCCESS;
}

int reduce(args& a) noexcept {
    slot& s = enter(a, "MPI_Reduce");
    const auto n = static_cast<std::uint32_t>(a.size);
    const red_view& v = a.red;
    if (view_fits_cell(v)) {
        cell& me = s.cells[a.rank];
        copy_range(v, input_base(a), at(me.data, v.shift), 0, v.n);
        me.inl = true;
        if (a.rank != a.root) {
            arrive(s, n);
            leave(s, a);
            return MPI_SUCCESS;
        }
        phase(s, n, "MPI_Reduce");
        alignas(16) unsigned char acc[cell_bytes];
        reduce_cells(s, v, a.size, at(acc, v.shift));
        copy_range(v, at(acc, v.shift), output_base(a), 0, v.n);
        leave(s, a);
        return MPI_SUCCESS;
    }
    // Large: member r reduces chunk r of every input into the root's buffer.
    phase(s, n, "MPI_Reduce");
    count_t lo = 0;
    count_t hi = 0;
    chunk(v.n, a.rank, a.size, &lo, &hi);
    reduce_chunk(s, v, a.size, lo, hi, output_base(*s.cells[a.root].a), "MPI_Reduce");
    phase(s, 2 * n, "MPI_Reduce");
    leave(s, a);
    return MPI_SUCCESS;
}

int allreduce(args& a) noexcept {
    slot& s = enter(a, "MPI_Allreduce");
    const auto n = static_cast<std::uint32_t>(a.size);
    const red_view& v = a.red;
    if (view_fits_cell(v) && v.span <= result_bytes) {
        cell& me = s.cells[a.rank];
        copy_range(v, input_base(a), at(me.data, v.shift), 0, v.n);
        if (arrive(s, 0) == n) {  // the last to arrive reduces once for everybody
            reduce_cells(s, v, a.size, at(s.result, v.shift));
            raise_flag(s, 1);
        } else {
            wait_for<flag_at_least>(s, 1, "MPI_Allreduce");
        }
        copy_range(v, at(s.result, v.shift), output_base(a), 0, v.n);
        leave(s, a);
        return MPI_SUCCESS;
    }
    // Large: reduce-scatter by chunks into each member's own buffer, then allgather.
    phase(s, n, "MPI_Allreduce");
    count_t lo = 0;
    count_t hi = 0;
    chunk(v.n, a.rank, a.size, &lo, &hi);
    reduce_chunk(s, v, a.size, lo, hi, output_base(a), "MPI_Allreduce");
    phase(s, 2 * n, "MPI_Allreduce");
    for (int i = 0; i < a.size; ++i) {
        if (i != a.rank) {
            chunk(v.n, i, a.size, &lo, &hi);
            if (hi > lo) {
                copy_range(v, output_base(*s.cells[i].a), output_base(a), lo, hi);
            }
        }
    }
    phase(s, 3 * n, "MPI_Allreduce");
    leave(s, a);
    return MPI_SUCCESS;
}

int reduce_scatter(args& a) noexcept {
    slot& s = enter(a, "MPI_Reduce_scatter");
    const auto n = static_cast<std::uint32_t>(a.size);
    const red_view& v = a.red;
    // My block: elements [lo, hi) of the full vector.
    count_t lo = 0;
    count_t mine = 0;
    if (a.k == kind::reduce_scatter_block) {
        lo = a.rcount * a.rank;
        mine = a.rcount;
    } else {
        for (int i = 0; i < a.rank; ++i) {
            lo += a.rcounts[i];
        }
        mine = a.rcounts[a.rank];
    }
    // Element counts in the view are per element of the user's type: v.n / total elements.
    count_t total = 0;
    if (a.k == kind::reduce_scatter_block) {
        total = a.rcount * a.size;
    } else {
        for (int i = 0; i < a.size; ++i) {
            total += a.rcounts[i];
        }
    }
    count_t per = total > 0 ? v.n / total : 0;
    phase(s, n, "MPI_Reduce_scatter");
    scratch acc;
    if (mine > 0) {
        need_scratch(acc, v, "MPI_Reduce_scatter");
        reduce_members(s, v, 0, a.size - 1, acc.base(), lo * per, (lo + mine) * per);
    }
    phase(s, 2 * n, "MPI_Reduce_scatter");  // every input read: in place, rbuf may change now
    if (mine > 0) {
        // The result lands at the start of the receive buffer: shift the chunk down.
        const void* from = at(acc.base(), lo * per * v.stride);
        copy_range(v, from, output_base(a), 0, mine * per);
    }
    leave(s, a);
    return MPI_SUCCESS;
}

int scan(args& a) noexcept {
    slot& s = enter(a, a.k == kind::scan ? "MPI_Scan" : "MPI_Exscan");
    const auto n = static_cast<std::uint32_t>(a.size);
    const red_view& v = a.red;
    phase(s, n, "MPI_Scan");
    int last = a.k == kind::scan ? a.rank : a.rank - 1;
    scratch acc;
    if (last >= 0 && v.n > 0) {
        need_scratch(acc, v, "MPI_Scan");
        reduce_members(s, v, 0, last, acc.base(), 0, v.n);
    }
    phase(s, 2 * n, "MPI_Scan");  // in place, our input was read by the members after us
    if (last >= 0 && v.n > 0) {
        copy_range(v, acc.base(), output_base(a), 0, v.n);
    }
    leave(s, a);
    return MPI_SUCCESS;
}

// ---- flat small collectives (shm.hpp) -----------------------------------------------------------------

namespace {

flat_half& half_of(const state& st, int r, std::uint64_t k) noexcept { return st.flat[r].half[k % flat_halves]; }

/// Looks at a member's epoch a flat wait makes inline, a PAUSE apart (~25 ns each on the test
/// host), before sched::spin_until: the caller's VP's other work waits at most that long.
inline constexpr unsigned flat_inline_looks = 32;

/// Whether member r has arrived at call k.
bool arrived(const state& st, int r, std::uint64_t k) noexcept {
    return half_of(st, r, k).epoch.load(std::memory_order_acquire) >= k + 1;
}

bool all_arrived(const state& st, int n, std::uint64_t k) noexcept {
    for (int r = 0; r < n; ++r) {
        if (!arrived(st, r, k)) {
            return false;
        }
    }
    return true;
}

/// all_arrived() for member `me`, which has arrived: its own line is not read (a spinning
/// member reads only the lines it waits for).
bool others_arrived(const state& st, int me, int n, std::uint64_t k) noexcept {
    for (int r = 0; r < n; ++r) {
        if (r != me && !arrived(st, r, k)) {
            return false;
        }
    }
    return true;
}

/// flat_wait() once cond() was false: spins while the VP is idle, then parks (see publish()).
template <class Cond>
[[gnu::noinline]] void flat_wait_slow(state& st, Cond& cond, const char* what) noexcept {
    if (sched::self() == nullptr) {  // a plain thread of the rank (MPI_THREAD_MULTIPLE): poll
        while (!cond()) {
            cpu_relax();
        }
        return;
    }
    auto fn = [](void* p) noexcept { return (*static_cast<Cond*>(p))(); };
    if (sched::spin_until(fn, &cond, wait_spin_ns())) {
        return;
    }
    flat_ctl& c = st.ctl;
    for (;;) {
        c.lk.lock();
        c.sleepers.fetch_add(1, std::memory_order_seq_cst);
        mpc::full_fence();  // pairs with publish()'s fence
        if (cond()) {
            c.sleepers.fetch_sub(1, std::memory_order_relaxed);
            c.lk.unlock();
            return;
        }
        c.q.wait(c.lk, what);
        c.sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
}

/// Waits until cond() holds: the first look inline, the rest out of line.
template <class Cond>
[[gnu::always_inline]] inline void flat_wait(state& st, Cond& cond, const char* what) noexcept {
    if (!cond()) {
        flat_wait_slow(st, cond, what);
    }
}

/// publish() once somebody sleeps: wakes the sleepers when this arrival completes call k or
/// when `always`.
[[gnu::noinline]] void wake_sleepers(state& st, int size, std::uint64_t k, bool always) noexcept {
    if (!always && !all_arrived(st, size, k)) {
        return;
    }
    st.ctl.lk.lock();
    sched::ult* chain = st.ctl.q.take_all_locked();
    st.ctl.lk.unlock();
    sched::wake_all(chain);
}

/// Member a.rank arrives at call k (its data, if any, is in its half). Sleepers are woken when
/// this arrival completes call k (every waiter but a bcast reader waits for a whole call) or
/// when `always` (the bcast root: its readers wait for it alone).
[[gnu::always_inline]] inline void publish(state& st, int rank, int size, std::uint64_t k, bool always) noexcept {
    half_of(st, rank, k).epoch.store(k + 1, std::memory_order_release);
    mpc::full_fence();
    if (st.ctl.sleepers.load(std::memory_order_relaxed) != 0) [[unlikely]] {
        wake_sleepers(st, size, k, always);
    }
}

/// Whether the caller's VP has nothing else to run (a plain thread of a rank: true, it polls).
inline bool vp_idle() noexcept {
    const sched::vp* v = sched::detail::this_vp();
    return v == nullptr || !sched::detail::vp_has_work(v);
}

/// wait_all() past its inline looks: spins in sched::spin_until, then parks.
[[gnu::noinline]] void wait_all_slow(state& st, int rank, int size, std::uint64_t k, const char* what) noexcept {
    auto cond = [&st, rank, size, k]() noexcept { return others_arrived(st, rank, size, k); };
    flat_wait_slow(st, cond, what);
}

/// Whether `ep` reaches `target` within flat_inline_looks looks, a PAUSE apart, spinning here
/// only while the caller's VP has nothing else to run (members sharing a VP: the others run).
[[gnu::always_inline]] inline bool spin_inline(const std::atomic<std::uint64_t>& ep, std::uint64_t target) noexcept {
    if (!vp_idle()) {
        return false;
    }
    for (unsigned i = 0; i < flat_inline_looks; ++i) {
        cpu_relax();
        if (ep.load(std::memory_order_acquire) >= target) [[likely]] {
            return true;
        }
    }
    return false;
}

/// Member `rank`, arrived at call k, waits until every member has: each member's epoch in turn
/// (a member that has arrived stays arrived), spinning inline for a while (spin_inline), then
/// the general wait (spin_until: progress, the VP's other work; then parking).
[[gnu::always_inline]] inline void wait_all(state& st, int rank, int size, std::uint64_t k, const char* what) noexcept {
    const std::size_t h = k % flat_halves;
    for (int r = 0; r < size; ++r) {
        if (r == rank) {
            continue;
        }
        const std::atomic<std::uint64_t>& ep = st.flat[r].half[h].epoch;
        if (ep.load(std::memory_order_acquire) < k + 1 && !spin_inline(ep, k + 1)) [[unlikely]] {
            wait_all_slow(st, rank, size, k, what);
            break;
        }
    }
    st.seqs[rank].flat_seen = k + 1;
}

/// Before member `rank` writes data for call k: every member is past the call that last used
/// the same half, k - flat_halves (has arrived at the call after it). Usually an earlier wait
/// of this member proved it already (flat_seen): no line of the others is read then.
[[gnu::noinline]] void wait_writable_slow(state& st, int rank, int size, std::uint64_t k, const char* what) noexcept {
    wait_all(st, rank, size, k - (flat_halves - 1), what);
}
[[gnu::always_inline]] inline void wait_writable(state& st, int rank, int size, std::uint64_t k, const char* what) noexcept {
    if (k >= flat_halves - 1 && k - (flat_halves - 1) >= st.seqs[rank].flat_seen) [[unlikely]] {
        wait_writable_slow(st, rank, size, k, what);
    }
}

bool view_fits_flat(const red_view& v) noexcept { return v.dense && v.span <= flat_bytes; }

/// acc = x_0 op (x_1 op (... op x_{n-1})) over the members' halves of call k (rank order);
/// member `own` (the root of a Reduce; the caller of an Allreduce, whose half's line may have
/// moved to a reader's core) contributes its input buffer directly.
void reduce_halves(const state& st, const args& a, std::uint64_t k, int own, void* acc_base) noexcept {
    const red_view& v = a.red;
    auto base = [&](int r) -> const void* {
        return r == own ? input_base(a) : static_cast<const void*>(at(half_of(st, r, k).data, v.shift));
    };
    copy_range(v, base(a.size - 1), acc_base, 0, v.n);
    for (int r = a.size - 2; r >= 0; --r) {
        reduce_range(v, base(r), acc_base, 0, v.n);
    }
}

}  // namespace

bool flat_runs(const args& a) noexcept {
    // More members than VPs: waiters park, and the slots' single wake-up at completion beats
    // the flat path's (measured: 8 ranks on 2 VPs, Barrier 1.1 vs 0.7 us).
    if (a.size < 2 || a.size > flat_limit() || a.size > sched::nr_vps() || a.c->is_inter) {
        return false;
    }
    switch (a.k) {
        case kind::barrier: return true;
        case kind::bcast: return packed_bytes(a.rcount, a.rtype) <= flat_bytes;
        case kind::reduce:
        case kind::allreduce: return !a.red_pack && view_fits_flat(a.red);
        case kind::allgather: return packed_bytes(a.rcount, a.rtype) <= flat_bytes;
        case kind::allgatherv:
            for (int i = 0; i < a.size; ++i) {
                if (packed_bytes(a.rcounts[i], a.rtype) > flat_bytes) {
                    return false;
                }
            }
            return true;
        case kind::alltoall: return packed_bytes(a.rcount, a.rtype) * static_cast<std::size_t>(a.size) <= flat_bytes;
        default: return false;
    }
}

int flat_barrier(state& st, int rank, int size) noexcept {
    const std::uint64_t k = st.seqs[rank].flat_next++;
    publish(st, rank, size, k, false);
    wait_all(st, rank, size, k, "MPI_Barrier");
    return MPI_SUCCESS;
}

namespace {

/// fold_basic() over the halves of call k, member `own`'s input from its own buffer (the same
/// bytes as its half: its half's line may have moved to a reader's core by now): the order of
/// reduce_halves().
struct halves_of {
    const state* st;
    std::uint64_t k;
    int own;
    const void* own_in;
    const void* operator()(int r) const noexcept { return r == own ? own_in : half_of(*st, r, k).data; }
};

}  // namespace

int flat_allreduce_basic(state& st, int rank, int size, const void* in, void* out, std::size_t n, basic_elem e,
                         int op) noexcept {
    const std::uint64_t k = st.seqs[rank].flat_next++;
    wait_writable(st, rank, size, k, "MPI_Allreduce");
    copy_small(half_of(st, rank, k).data, in, n * basic_size(e));
    publish(st, rank, size, k, false);
    wait_all(st, rank, size, k, "MPI_Allreduce");
    fold_basic(e, size, op, n, halves_of{&st, k, rank, in}, out);
    return MPI_SUCCESS;
}

int flat(args& a) noexcept {
    if (a.k == kind::barrier) {
        return flat_barrier(state_of(*a.c), a.rank, a.size);
    }
    state& st = state_of(*a.c);
    const std::uint64_t k = st.seqs[a.rank].flat_next++;
    flat_half& mine = half_of(st, a.rank, k);
    const red_view& v = a.red;
    switch (a.k) {

        case kind::bcast:
            if (a.rank == a.root) {
                wait_writable(st, a.rank, a.size, k, "MPI_Bcast");
                pack_into(mine.data, a.rbuf, a.rcount, *a.rtype);
                publish(st, a.rank, a.size, k, true);
            } else {
                publish(st, a.rank, a.size, k, false);
                auto cond = [&st, r = a.root, k]() noexcept { return arrived(st, r, k); };
                flat_wait(st, cond, "MPI_Bcast");
                unpack_from(half_of(st, a.root, k).data, packed_bytes(a.rcount, a.rtype), a.rbuf, a.rcount,
                            *a.rtype);
            }
            break;
        case kind::reduce:
            if (a.rank != a.root) {
                wait_writable(st, a.rank, a.size, k, "MPI_Reduce");
                copy_range(v, input_base(a), at(mine.data, v.shift), 0, v.n);
                publish(st, a.rank, a.size, k, false);
            } else {
                publish(st, a.rank, a.size, k, false);
                wait_all(st, a.rank, a.size, k, "MPI_Reduce");
                alignas(16) unsigned char acc[flat_bytes];
                reduce_halves(st, a, k, a.root, at(acc, v.shift));
                copy_range(v, at(acc, v.shift), output_base(a), 0, v.n);
            }
            break;
        case kind::allreduce: {
            wait_writable(st, a.rank, a.size, k, "MPI_Allreduce");
            copy_range(v, input_base(a), at(mine.data, v.shift), 0, v.n);
            publish(st, a.rank, a.size, k, false);
            wait_all(st, a.rank, a.size, k, "MPI_Allreduce");
            alignas(16) unsigned char acc[flat_bytes];
            reduce_halves(st, a, k, a.rank, at(acc, v.shift));
            copy_range(v, at(acc, v.shift), output_base(a), 0, v.n);
            break;
        }
        case kind::allgather:
        case kind::allgatherv: {
            wait_writable(st, a.rank, a.size, k, "MPI_Allgather");
            piece own = contribution(a);
            pack_into(mine.data, own.buf, own.count, *own.type);
            publish(st, a.rank, a.size, k, false);
            wait_all(st, a.rank, a.size, k, "MPI_Allgather");
            for (int i = 0; i < a.size; ++i) {
                piece to = gathered_block(a, i);
                if (i != a.rank || !a.in_place) {
                    unpack_from(half_of(st, i, k).data, packed_bytes(to.count, to.type), const_cast<void*>(to.buf),
                                to.count, *to.type);
                }
            }
            break;
        }
        case kind::alltoall: {
            // Member r's half holds its blocks for every member in rank order, `blk` bytes each.
            const std::size_t blk = packed_bytes(a.rcount, a.rtype);
            wait_writable(st, a.rank, a.size, k, "MPI_Alltoall");
            for (int j = 0; j < a.size; ++j) {
                piece p = send_piece(a, j);
                pack_into(at(mine.data, static_cast<aint>(blk) * j), p.buf, p.count, *p.type);
            }
            publish(st, a.rank, a.size, k, false);
            wait_all(st, a.rank, a.size, k, "MPI_Alltoall");
            for (int i = 0; i < a.size; ++i) {
                piece to = recv_piece(a, i);
                unpack_from(at(half_of(st, i, k).data, static_cast<aint>(blk) * a.rank), blk, const_cast<void*>(to.buf),
                            to.count, *to.type);
            }
            break;
        }
        default: return MPI_ERR_INTERN;
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::shm
