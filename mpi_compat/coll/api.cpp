/// \file
/// The bindings of the collectives, blocking and non-blocking: argument checks (each failure
/// gets its error class through the communicator's error handler), the `args` record, and the
/// reduction view (coll.hpp). A reduction whose datatype a predefined operation cannot walk in
/// place (a derived type with holes, or padded pairs) runs on packed copies of its data.

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/coll/coll.hpp"
#include "mpi_compat/coll/nbc.hpp"
#include "mpi_compat/coll/pieces.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/datatype/copy.hpp"
#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"
#include "mpi_compat/op.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi::coll {

namespace {

/// The checks' context: the call's name and communicator handle, for raise().
struct call {
    const char* name;
    MPI_Comm h;
    args a;
    int err = MPI_SUCCESS;
    bool inter = false;  ///< on an intercommunicator (MPI 3.1 section 5.2.2)
    int peers = 0;       ///< entries of the counts and types arrays: the remote group's size on an intercommunicator

    [[gnu::format(printf, 3, 4)]] int fail(int cls, const char* fmt, ...) noexcept;
    /// Rooted calls (after check_root): whether the caller is the root, and whether it is one
    /// of the others that send or receive data (on an intercommunicator: the other group).
    bool root() const noexcept { return is_root(a); }
    bool leaf() const noexcept { return inter ? a.root >= 0 : a.rank != a.root; }
};

int call::fail(int cls, const char* fmt, ...) noexcept {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    err = raise(h, cls, name, "%s", msg);
    return err;
}

bool enter(call& k, kind what) noexcept {
    comm_call base = enter_comm(k.name, k.h);
    if (base.err != MPI_SUCCESS) {
        k.err = base.err;
        return false;
    }
    k.inter = base.c->is_inter;
    if (k.inter && (what == kind::scan || what == kind::exscan)) {
        k.fail(MPI_ERR_COMM, "MPI_Scan and MPI_Exscan are not defined on intercommunicators");
        return false;
    }
    k.a.k = what;
    k.a.self = base.self;
    k.a.c = base.c;
    k.a.rank = base.c->is_self ? 0 : base.c->rank_of(*base.self);
    k.a.size = base.c->local_size(*base.self);
    k.peers = base.c->peer_count(*base.self);
    return true;
}

/// MPI_IN_PLACE is not allowed on intercommunicators, for any buffer.
bool not_in_place_inter(call& k, const void* sbuf, const void* rbuf) noexcept {
    if (k.inter && (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)) {
        k.fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator");
        return false;
    }
    return true;
}

bool check_type(call& k, MPI_Datatype t, const datatype** out, const char* which) noexcept {
    *out = datatype_for_comm(t);
    if (*out == nullptr) {
        k.fail(MPI_ERR_TYPE, "invalid %s datatype %#x (null, freed, not committed, or MPI_LB/MPI_UB)", which, t);
        return false;
    }
    return true;
}

bool check_count(call& k, int count, const char* which) noexcept {
    if (count < 0) {
        k.fail(MPI_ERR_COUNT, "negative %s count %d", which, count);
        return false;
    }
    return true;
}

/// A null buffer is refused when data would lie at the null address (null_data(): MPI_BOTTOM
/// with a type of absolute addresses is valid).
/// Called for the sides that are not in place: MPI_IN_PLACE there is misplaced.
bool check_buf(call& k, const void* buf, count_t count, const datatype* t, const char* which) noexcept {
    if (buf == MPI_IN_PLACE) {
        k.fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed as the %s buffer here", which);
        return false;
    }
    if (null_data(buf, count, *t)) {
        k.fail(MPI_ERR_BUFFER, "null %s buffer with count %lld", which, static_cast<long long>(count));
        return false;
    }
    return true;
}

/// (buf, count, type) of one side: count, type and buffer checks.
bool check_side(call& k, const void* buf, int count, MPI_Datatype t, const datatype** dt, const char* which) noexcept {
    return check_count(k, count, which) && check_type(k, t, dt, which) && check_buf(k, buf, count, *dt, which);
}

bool check_root(call& k, int root) noexcept {
    if (k.inter && root != MPI_ROOT && root != MPI_PROC_NULL && (root < 0 || root >= k.peers)) {
        k.fail(MPI_ERR_ROOT, "invalid root %d (MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of %d)", root,
               k.peers);
        return false;
    }
    if (!k.inter && (root < 0 || root >= k.a.size)) {
        k.fail(MPI_ERR_ROOT, "invalid root %d (the communicator has %d ranks)", root, k.a.size);
        return false;
    }
    k.a.root = root;
    return true;
}

/// A counts array of n entries (default: one per peer); *total (if given) receives their sum.
bool check_counts(call& k, const int* counts, const char* which, count_t* total = nullptr, int n = -1) noexcept {
    if (counts == nullptr) {
        k.fail(MPI_ERR_ARG, "null %s counts array", which);
        return false;
    }
    count_t sum = 0;
    for (int i = 0; i < (n < 0 ? k.peers : n); ++i) {
        if (counts[i] < 0) {
            k.fail(MPI_ERR_COUNT, "negative %s count %d for rank %d", which, counts[i], i);
            return false;
        }
        sum += counts[i];
    }
    if (total != nullptr) {
        *total = sum;
    }
    return true;
}

bool check_displs(call& k, const int* displs, const char* which) noexcept {
    if (displs == nullptr) {
        k.fail(MPI_ERR_ARG, "null %s displacements array", which);
        return false;
    }
    return true;
}

/// The rooted or all-member side of a collective: (buf, count, t) or, for a v form (counts
/// non-null expected), (buf, counts, displs, t) with a buffer needed when any count is > 0.
bool check_either_side(call& k, bool v, const void* buf, int count, const int* counts, const int* displs,
                       MPI_Datatype t, const datatype** dt, const char* which) noexcept {
    if (!v) {
        return check_side(k, buf, count, t, dt, which);
    }
    count_t total = 0;
    return check_counts(k, counts, which, &total) && check_displs(k, displs, which) && check_type(k, t, dt, which) &&
           check_buf(k, buf, total, *dt, which);
}

bool not_in_place(call& k, const void* buf, const char* why) noexcept {
    if (buf == MPI_IN_PLACE) {
        k.fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed %s", why);
        return false;
    }
    return true;
}

/// The receive buffer must not alias the send buffer (MPI 3.1 section 2.3), unless empty.
bool no_alias(call& k, const void* sbuf, const void* rbuf, bool nonempty) noexcept {
    if (nonempty && sbuf != nullptr && sbuf == rbuf) {
        k.fail(MPI_ERR_BUFFER, "send and receive buffers are the same (use MPI_IN_PLACE)");
        return false;
    }
    return true;
}

/// Allgather and Alltoall: every member sends the same signature, so a receive block smaller
/// than the caller's own send block is an error every member sees (MPI_ERR_TRUNCATE).
bool block_fits(call& k, count_t scount, const datatype* st, count_t rcount, const datatype* rt) noexcept {
    count_t sent = scount * st->size();
    count_t room = rcount * rt->size();
    if (sent > room) {
        k.fail(MPI_ERR_TRUNCATE, "each block sends %lld bytes but the receive block holds %lld",
               static_cast<long long>(sent), static_cast<long long>(room));
        return false;
    }
    return true;
}

// ---- reductions ------------------------------------------------------------------------------------

/// The one predefined type a derived type is made of (markers aside), or nullptr.
const datatype* basic_of(const datatype* t, int depth = 0) noexcept {
    if (t->is_predefined()) {
        return t->size() == 0 ? nullptr : t;
    }
    if (depth > 64) {
        return nullptr;
    }
    if (t->impl() != nullptr) {
        return basic_of(t->impl(), depth + 1);
    }
    const datatype* found = nullptr;
    for (const datatype* part : t->types()) {
        if (part->is_predefined() && part->size() == 0) {
            continue;  // MPI_LB / MPI_UB
        }
        const datatype* b = basic_of(part, depth + 1);
        if (b == nullptr || (found != nullptr && b->predefined_index() != found->predefined_index())) {
            return nullptr;
        }
        found = b;
    }
    return found;
}

MPI_Datatype handle_of(const datatype* t) noexcept { return MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, t->predefined_index()); }

/// Builds a.red for `count` elements of (t, dt) and op; a.red_pack when the data must be
/// converted to an array of the basic type first.
bool make_view(call& k, MPI_Op op, MPI_Datatype t, const datatype* dt, count_t count) noexcept {
    red_view& v = k.a.red;
    v.op = op;
    if (op_is_user(op)) {
        if (op_check(op, t) != MPI_SUCCESS) {
            k.fail(MPI_ERR_OP, "invalid operation %#x", op);
            return false;
        }
        v.t = t;
        v.n = count;
        v.stride = dt->extent();
        v.shift = -dt->true_lb();
        v.buf_off = 0;
        v.span = count > 0 ? static_cast<std::size_t>((count - 1) * dt->extent() + dt->true_extent()) : 0;
        v.dt = dt;
        v.dense = dt->is_contiguous();
        v.commutative = op_commutes(op);
        return true;
    }
    const datatype* basic = basic_of(dt);
    if (basic == nullptr || op_check(op, handle_of(basic)) != MPI_SUCCESS) {
        k.fail(MPI_ERR_OP, "operation %#x is not defined on datatype %#x", op, t);
        return false;
    }
    v.t = handle_of(basic);
    v.stride = basic->extent();
    v.shift = 0;
    v.dt = basic;
    v.dense = true;
    v.commutative = true;
    if (dt->is_predefined()) {
        v.n = count;
        v.buf_off = 0;
    } else {
        v.n = count * (dt->size() / basic->size());
        v.buf_off = dt->true_lb();
        k.a.red_pack = !(dt->is_contiguous() && basic->size() == basic->extent());
        k.a.red_user_type = dt;
        if (k.a.red_pack) {
            v.buf_off = 0;
        }
    }
    v.span = static_cast<std::size_t>(v.n * v.stride);
    return true;
}

/// Runs a reduction on packed arrays of its basic type (see make_view).
int run_packed(args& a) noexcept {
    const datatype& ut = *a.red_user_type;
    const datatype& bt = *a.red.dt;
    count_t in_count = a.rcount;  // user elements of input
    count_t out_count = a.rcount;
    if (a.k == kind::reduce_scatter || a.k == kind::reduce_scatter_block) {
        in_count = 0;
        for (int i = 0; i < a.size; ++i) {
            in_count += a.k == kind::reduce_scatter_block ? a.rcount : a.rcounts[i];
        }
        out_count = a.k == kind::reduce_scatter_block ? a.rcount : a.rcounts[a.rank];
    }
    count_t per = ut.size() / bt.size();
    scratch tin;
    scratch tout;
    if (!tin.reset(a.red) || !tout.reset(a.red)) {
        return MPI_ERR_NO_MEM;
    }
    const void* in = a.in_place ? a.rbuf : a.sbuf;
    if (in != nullptr) {
        copy_typed(in, in_count, ut, tin.base(), in_count * per, bt);
    }
    args p = a;
    p.sbuf = tin.base();
    p.rbuf = tout.base();
    p.in_place = false;
    p.red_pack = false;
    int err = run(p);
    bool gets_result = (a.k != kind::reduce || is_root(a)) && (a.k != kind::exscan || a.rank > 0);
    if (err == MPI_SUCCESS && gets_result) {
        copy_typed(tout.base(), out_count * per, bt, a.rbuf, out_count, ut);
    }
    return err;
}

// ---- one member alone ----------------------------------------------------------------------------

/// A communicator of one member (MPI_COMM_SELF among them): local copies only.
int run_alone(args& a) noexcept {
    switch (a.k) {
        case kind::barrier:
        case kind::bcast: return MPI_SUCCESS;
        case kind::gather:
        case kind::gatherv:
        case kind::allgather:
        case kind::allgatherv:
            if (!a.in_place) {
                copy_piece(contribution(a), gathered_block(a, 0));
            }
            return MPI_SUCCESS;
        case kind::scatter:
        case kind::scatterv:
            if (!a.in_place) {
                copy_piece(scattered_block(a, 0), {a.rbuf, a.rcount, a.rtype});
            }
            return MPI_SUCCESS;
        case kind::alltoall:
        case kind::alltoallv:
        case kind::alltoallw:
            if (!a.in_place) {
                copy_piece(send_piece(a, 0), recv_piece(a, 0));
            }
            return MPI_SUCCESS;
        case kind::exscan: return MPI_SUCCESS;  // the receive buffer of rank 0 is undefined
        default: break;
    }
    // reduce, allreduce, reduce_scatter(_block), scan: the result is the input
    if (a.in_place) {
        return MPI_SUCCESS;
    }
    if (a.red_pack) {
        count_t n = a.k == kind::reduce_scatter ? a.rcounts[0] : a.rcount;
        copy_typed(a.sbuf, n, *a.red_user_type, a.rbuf, n, *a.red_user_type);
        return MPI_SUCCESS;
    }
    copy_range(a.red, at(a.sbuf, a.red.buf_off), at(a.rbuf, a.red.buf_off), 0, a.red.n);
    return MPI_SUCCESS;
}

/// Runs the checked call now (req null) or as a non-blocking collective.
int start(call& k, MPI_Request* req) noexcept {
    args& a = k.a;
    bool nonblocking = k.name[4] == 'I';  // "MPI_I...": the bindings pass their own names
    if (nonblocking && req == nullptr) {
        return k.fail(MPI_ERR_ARG, "null request pointer");
    }
    if (!nonblocking && a.c->local_only && !algorithm_forced(a.k)) {
        // small blocking calls on small communicators (flat) or on one VP: no sequence number
        if (shm::flat_runs(a)) {
            return shm::flat(a);
        }
        if (shm::one_vp_runs(a)) {
            return shm::one_vp(a);
        }
    }
    // An intercommunicator's sequence is kept on the local group's view (see inter.cpp).
    a.seq = a.c->is_inter ? next_seq(a.c->local_view(*a.self), a.rank) : a.size > 1 ? next_seq(*a.c, a.rank) : 0;
    a.blocking = !nonblocking;
    int err = nonblocking ? nbc::start(a, req) : execute(a);
    return err == MPI_SUCCESS ? err : k.fail(err, nonblocking ? "cannot start the operation" : "out of memory");
}

// ---- blocking fast paths -----------------------------------------------------------------------------
// As MPI_Send's (p2p.hpp fast_check): a blocking Barrier, or a small Bcast or Allreduce, on a communicator in
// world order (MPI_COMM_WORLD and its duplicates) whose members are all ranks of this process,
// no more than the VPs and few enough to run flat (shm.hpp), once its state exists, with no
// algorithm forced, is checked in a few instructions and runs flat. Anything else, valid or
// not, returns false and takes the general path, which reports the errors. (The general path's
// checks and dispatch were about 250 instructions per call before the flat path's 80.)

/// The communicator part of the check: the caller, its communicator's state, its rank there,
/// the size, and where the call goes (shm::state::fast: flat or one VP).
struct fast_call {
    task* self;
    const comm* c;
    shm::state* st;
    int rank;
    int size;
    bool one_vp;

    void fill(args& a, kind what) const noexcept {
        a.k = what;
        a.self = self;
        a.c = c;
        a.rank = rank;
        a.size = size;
    }
};

/// The data part: count >= 1 elements of a contiguous predefined type that fit the flat lines
/// (its datatype), else null.
const datatype* fast_type(MPI_Datatype t, int count) noexcept {
    const datatype* dt = fast_block_type(t);
    if (dt == nullptr || count < 1 || static_cast<std::size_t>(count) * static_cast<std::size_t>(dt->extent()) > shm::flat_bytes) {
        return nullptr;
    }
    return dt;
}

/// The state's fast mode for `what` says everything else (size, VPs, forced algorithms), set
/// once when the state was made.
[[gnu::always_inline]] inline bool fast_comm(MPI_Comm h, shm::fast_kind what, fast_call* f) noexcept {
    task* self = current();
    const comm* c = fast_lookup_comm(h);
    if (self == nullptr || c == nullptr || c->fast_size == 0 || !c->local_only) {
        return false;
    }
    shm::state* st = shm::state_if_ready(*c);
    if (st == nullptr || st->fast[what] == shm::fast_mode::none) {
        return false;
    }
    *f = {self, c, st, self->world_rank, c->fast_size, st->fast[what] == shm::fast_mode::one_vp};
    return true;
}

bool fast_barrier(MPI_Comm h, int* err) noexcept {
    fast_call f;
    if (!fast_comm(h, shm::fk_barrier, &f)) {
        return false;
    }
    *err = f.one_vp ? shm::one_vp_barrier(*f.st, f.rank, f.size) : shm::flat_barrier(*f.st, f.rank, f.size);
    return true;
}

static_assert(sizeof(long) == 8, "MPI_LONG folds as a 64-bit integer");

bool basic_elem_of(MPI_Datatype t, shm::basic_elem* e) noexcept {
    switch (t) {
        case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: *e = shm::basic_elem::f64; return true;
        case MPI_FLOAT: case MPI_REAL: *e = shm::basic_elem::f32; return true;
        case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: *e = shm::basic_elem::i32; return true;
        case MPI_LONG: case MPI_LONG_LONG_INT: case MPI_INT64_T: *e = shm::basic_elem::i64; return true;
        default: return false;
    }
}

/// Allreduce of count >= 1 elements of a contiguous predefined type under a predefined operation
/// defined on it, small enough for the flat lines (buffers checked by fast_allreduce()): the
/// operations and types fast_allreduce() does not fold inline (a call record, the general
/// reduction).
[[gnu::noinline]] bool fast_allreduce_typed(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h,
                                            int* err) noexcept {
    fast_call f;
    const datatype* dt = fast_type(t, count);
    if (dt == nullptr || op_is_user(op) || op_check(op, t) != MPI_SUCCESS || !fast_comm(h, shm::fk_allreduce, &f)) {
        return false;
    }
    args a;
    f.fill(a, kind::allreduce);
    a.in_place = sbuf == MPI_IN_PLACE;
    a.sbuf = a.in_place ? nullptr : sbuf;
    a.rbuf = rbuf;
    a.scount = a.rcount = count;
    a.stype = a.rtype = dt;
    red_view& v = a.red;  // as make_view() for a predefined type
    v.op = op;
    v.t = t;
    v.n = count;
    v.stride = dt->extent();
    v.dt = dt;
    v.span = static_cast<std::size_t>(v.n * v.stride);
    *err = f.one_vp ? shm::one_vp(a) : shm::flat(a);
    return true;
}

/// The Allreduce fast path, inline in MPI_Allreduce: MAX, MIN and SUM of the common types, all
/// predefined and defined on each of these types (no op_check), folded inline by the flat
/// code; the other predefined operations and types through fast_allreduce_typed().
[[gnu::always_inline]] inline bool fast_allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op,
                                                  MPI_Comm h, int* err) noexcept {
    if (rbuf == nullptr || rbuf == MPI_IN_PLACE || sbuf == nullptr || sbuf == rbuf) {
        return false;
    }
    const int opi = op_index(op);
    if (shm::basic_elem e; opi >= 1 && opi <= 3 && basic_elem_of(t, &e)) {
        const auto n = static_cast<std::size_t>(count);
        fast_call f;
        if (count < 1 || n * shm::basic_size(e) > shm::flat_bytes || !fast_comm(h, shm::fk_allreduce, &f)) {
            return false;
        }
        const void* in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
        *err = f.one_vp ? shm::one_vp_allreduce_basic(*f.st, f.rank, f.size, in, rbuf, n, e, opi)
                        : shm::flat_allreduce_basic(*f.st, f.rank, f.size, in, rbuf, n, e, opi);
        return true;
    }
    return fast_allreduce_typed(sbuf, rbuf, count, t, op, h, err);
}

/// Bcast of count >= 1 elements of a contiguous predefined type, small enough for the flat lines,
/// from a valid root, buffer not null.
bool fast_bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm h, int* err) noexcept {
    if (buf == nullptr || buf == MPI_IN_PLACE) {
        return false;
    }
    const datatype* dt = fast_type(t, count);
    fast_call f;
    if (dt == nullptr || !fast_comm(h, shm::fk_bcast, &f) || root < 0 || root >= f.size) {
        return false;
    }
    if (f.one_vp) {
        const auto bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(dt->size());
        *err = shm::one_vp_bcast_bytes(*f.st, f.rank, f.size, root, buf, bytes);
        return true;
    }
    args a;
    f.fill(a, kind::bcast);
    a.root = root;
    a.rbuf = buf;
    a.rcount = count;
    a.rtype = dt;
    *err = f.one_vp ? shm::one_vp(a) : shm::flat(a);
    return true;
}

// ---- the calls ---------------------------------------------------------------------------------------

int do_barrier(const char* name, MPI_Comm h, MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, kind::barrier)) {
        return k.err;
    }
    return start(k, req);
}

int do_bcast(const char* name, void* buf, int count, MPI_Datatype t, int root, MPI_Comm h, MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, kind::bcast)) {
        return k.err;
    }
    bool idle = k.inter && root == MPI_PROC_NULL;  // only the root argument is significant
    if ((!idle && (!not_in_place(k, buf, "in MPI_Bcast") || !check_side(k, buf, count, t, &k.a.rtype, ""))) ||
        !check_root(k, root)) {
        return k.err;
    }
    k.a.rbuf = buf;
    k.a.rcount = count;
    return start(k, req);
}

int do_gather(const char* name, bool v, const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
              const int* rcounts, const int* displs, MPI_Datatype rtype, int root, MPI_Comm h,
              MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, v ? kind::gatherv : kind::gather) || !check_root(k, root) || !not_in_place_inter(k, sbuf, rbuf)) {
        return k.err;
    }
    args& a = k.a;
    bool is_root = k.root();
    bool sends = !k.inter || k.leaf();  // on an intra-communicator the root sends too
    a.in_place = is_root && sbuf == MPI_IN_PLACE;
    if (k.leaf() && !not_in_place(k, sbuf, "as the send buffer of a non-root rank")) {
        return k.err;
    }
    if (sends && !a.in_place && !check_side(k, sbuf, scount, stype, &a.stype, "send")) {
        return k.err;
    }
    if (is_root && (!check_either_side(k, v, rbuf, rcount, rcounts, displs, rtype, &a.rtype, "receive") ||
                    (sends && !a.in_place && !no_alias(k, sbuf, rbuf, scount > 0)))) {
        return k.err;
    }
    a.sbuf = a.in_place || !sends ? nullptr : sbuf;
    a.scount = scount;
    a.rbuf = rbuf;
    a.rcount = rcount;
    a.rcounts = rcounts;
    a.rdispls = displs;
    return start(k, req);
}

int do_scatter(const char* name, bool v, const void* sbuf, int scount, const int* scounts, const int* displs,
               MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm h,
               MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, v ? kind::scatterv : kind::scatter) || !check_root(k, root) || !not_in_place_inter(k, sbuf, rbuf)) {
        return k.err;
    }
    args& a = k.a;
    bool is_root = k.root();
    bool receives = !k.inter || k.leaf();  // on an intra-communicator the root receives too
    a.in_place = is_root && rbuf == MPI_IN_PLACE;
    if (k.leaf() && !not_in_place(k, rbuf, "as the receive buffer of a non-root rank")) {
        return k.err;
    }
    if (receives && !a.in_place && !check_side(k, rbuf, rcount, rtype, &a.rtype, "receive")) {
        return k.err;
    }
    if (is_root && (!check_either_side(k, v, sbuf, scount, scounts, displs, stype, &a.stype, "send") ||
                    (receives && !a.in_place && !no_alias(k, sbuf, rbuf, rcount > 0)))) {
        return k.err;
    }
    a.sbuf = sbuf;
    a.scount = scount;
    a.scounts = scounts;
    a.sdispls = displs;
    a.rbuf = a.in_place || !receives ? nullptr : rbuf;
    a.rcount = rcount;
    return start(k, req);
}

int do_allgather(const char* name, bool v, const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                 const int* rcounts, const int* displs, MPI_Datatype rtype, MPI_Comm h, MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, v ? kind::allgatherv : kind::allgather) || !not_in_place_inter(k, sbuf, rbuf)) {
        return k.err;
    }
    args& a = k.a;
    a.in_place = sbuf == MPI_IN_PLACE;
    if (!a.in_place && !check_side(k, sbuf, scount, stype, &a.stype, "send")) {
        return k.err;
    }
    if (!check_either_side(k, v, rbuf, rcount, rcounts, displs, rtype, &a.rtype, "receive") ||
        (!a.in_place && !no_alias(k, sbuf, rbuf, scount > 0)) ||
        (!v && !a.in_place && !k.inter && !block_fits(k, scount, a.stype, rcount, a.rtype))) {
        return k.err;
    }
    a.sbuf = a.in_place ? nullptr : sbuf;
    a.scount = scount;
    a.rbuf = rbuf;
    a.rcount = rcount;
    a.rcounts = rcounts;
    a.rdispls = displs;
    return start(k, req);
}

int do_alltoall(const char* name, kind what, const void* sbuf, int scount, const int* scounts, const int* sdispls,
                MPI_Datatype stype, const MPI_Datatype* stypes, void* rbuf, int rcount, const int* rcounts,
                const int* rdispls, MPI_Datatype rtype, const MPI_Datatype* rtypes, MPI_Comm h,
                MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, what) || !not_in_place_inter(k, sbuf, rbuf)) {
        return k.err;
    }
    args& a = k.a;
    a.in_place = sbuf == MPI_IN_PLACE;
    if (what == kind::alltoall) {
        if ((!a.in_place && !check_side(k, sbuf, scount, stype, &a.stype, "send")) ||
            !check_side(k, rbuf, rcount, rtype, &a.rtype, "receive") ||
            (!a.in_place && !k.inter && !block_fits(k, scount, a.stype, rcount, a.rtype))) {
            return k.err;
        }
    } else {
        if ((!a.in_place && (!check_counts(k, scounts, "send") || !check_displs(k, sdispls, "send"))) ||
            !check_counts(k, rcounts, "receive") || !check_displs(k, rdispls, "receive")) {
            return k.err;
        }
        if (what == kind::alltoallv) {
            if ((!a.in_place && !check_type(k, stype, &a.stype, "send")) || !check_type(k, rtype, &a.rtype, "receive")) {
                return k.err;
            }
        } else {
            if ((!a.in_place && stypes == nullptr) || rtypes == nullptr) {
                return k.fail(MPI_ERR_ARG, "null datatypes array");
            }
            const datatype* t = nullptr;
            for (int i = 0; i < k.peers; ++i) {
                if ((!a.in_place && !check_type(k, stypes[i], &t, "send")) || !check_type(k, rtypes[i], &t, "receive")) {
                    return k.err;
                }
            }
        }
        // null buffers: per peer, with that peer's type (alltoallw: MPI_BOTTOM and absolute types)
        for (int i = 0; i < k.peers; ++i) {
            const datatype* st = a.in_place ? nullptr : what == kind::alltoallv ? a.stype : datatype_for_comm(stypes[i]);
            const datatype* rt = what == kind::alltoallv ? a.rtype : datatype_for_comm(rtypes[i]);
            if ((st != nullptr && !check_buf(k, sbuf, scounts[i], st, "send")) ||
                !check_buf(k, rbuf, rcounts[i], rt, "receive")) {
                return k.err;
            }
        }
    }
    if (!a.in_place && !no_alias(k, sbuf, rbuf, true)) {
        return k.err;
    }
    a.sbuf = a.in_place ? nullptr : sbuf;
    a.scount = scount;
    a.scounts = scounts;
    a.sdispls = sdispls;
    a.stypes = stypes;
    a.rbuf = rbuf;
    a.rcount = rcount;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    a.rtypes = rtypes;
    return start(k, req);
}

/// Reduce, allreduce, scan, exscan (count elements in and out).
int do_reduce(const char* name, kind what, const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
              MPI_Comm h, MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, what) || (what == kind::reduce && !check_root(k, root)) || !not_in_place_inter(k, sbuf, rbuf)) {
        return k.err;
    }
    args& a = k.a;
    if (k.inter && what == kind::reduce && root == MPI_PROC_NULL) {
        return start(k, req);  // only the root argument is significant
    }
    bool receives = what != kind::reduce || k.root();
    bool sends = what != kind::reduce || !k.inter || k.leaf();  // the root of an intercommunicator does not
    a.in_place = sbuf == MPI_IN_PLACE;
    if (a.in_place && !receives) {
        return k.fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed as the send buffer of a non-root rank");
    }
    const datatype* dt = nullptr;
    if (!check_count(k, count, "") || !check_type(k, t, &dt, "") ||
        (sends && !a.in_place && !check_buf(k, sbuf, count, dt, "send")) ||
        (receives && !check_buf(k, rbuf, count, dt, "receive")) ||
        (receives && sends && !a.in_place && !no_alias(k, sbuf, rbuf, count > 0)) || !make_view(k, op, t, dt, count)) {
        return k.err;
    }
    a.sbuf = a.in_place || !sends ? nullptr : sbuf;
    a.scount = count;
    a.stype = dt;
    a.rbuf = receives ? rbuf : nullptr;
    a.rcount = count;
    a.rtype = dt;
    return start(k, req);
}

int do_reduce_scatter(const char* name, bool block, const void* sbuf, void* rbuf, int rcount, const int* rcounts,
                      MPI_Datatype t, MPI_Op op, MPI_Comm h, MPI_Request* req) noexcept {
    call k{name, h, {}};
    if (!enter(k, block ? kind::reduce_scatter_block : kind::reduce_scatter) || !not_in_place_inter(k, sbuf, rbuf)) {
        return k.err;
    }
    args& a = k.a;
    a.in_place = sbuf == MPI_IN_PLACE;
    const datatype* dt = nullptr;
    count_t total = 0;
    count_t mine = 0;
    if (block) {
        if (!check_count(k, rcount, "receive")) {
            return k.err;
        }
        total = static_cast<count_t>(rcount) * a.size;
        mine = rcount;
    } else {
        if (!check_counts(k, rcounts, "receive", &total, a.size)) {  // the local group's, even on an intercommunicator
            return k.err;
        }
        mine = rcounts[a.rank];
    }
    if (!check_type(k, t, &dt, "") || (!a.in_place && !check_buf(k, sbuf, total, dt, "send")) ||
        !check_buf(k, rbuf, a.in_place ? total : mine, dt, "receive") ||
        (!a.in_place && !no_alias(k, sbuf, rbuf, total > 0)) || !make_view(k, op, t, dt, total)) {
        return k.err;
    }
    a.sbuf = a.in_place ? nullptr : sbuf;
    a.stype = dt;
    a.rbuf = rbuf;
    a.rcount = rcount;
    a.rcounts = rcounts;
    a.rtype = dt;
    return start(k, req);
}

/// MPI_Reduce_local: inout = in op inout through the reduction view, so that predefined
/// operations work on derived types of one basic type as in the collectives.
int do_reduce_local(const void* in, void* inout, int count, MPI_Datatype t, MPI_Op op) noexcept {
    call k{"MPI_Reduce_local", MPI_COMM_WORLD, {}};
    const datatype* dt = nullptr;
    if (!enter(k, kind::reduce) || !check_count(k, count, "") || !check_type(k, t, &dt, "") ||
        !check_buf(k, in, count, dt, "input") || !check_buf(k, inout, count, dt, "input/output") ||
        !make_view(k, op, t, dt, count)) {
        return k.err;
    }
    const red_view& v = k.a.red;
    if (!k.a.red_pack) {
        reduce_range(v, at(in, v.buf_off), at(inout, v.buf_off), 0, v.n);
        return MPI_SUCCESS;
    }
    scratch x(v);
    scratch y(v);
    if (!x.ok() || !y.ok()) {
        return k.fail(MPI_ERR_NO_MEM, "out of memory for %zu bytes of packed elements", v.span);
    }
    copy_typed(in, count, *dt, x.base(), v.n, *v.dt);
    copy_typed(inout, count, *dt, y.base(), v.n, *v.dt);
    reduce_range(v, x.base(), y.base(), 0, v.n);
    copy_typed(y.base(), v.n, *v.dt, inout, count, *dt);
    return MPI_SUCCESS;
}

}  // namespace

int execute(args& a) noexcept {
    if (a.size == 1 && !a.c->is_inter) {
        return run_alone(a);
    }
    if (a.red_pack) {
        return run_packed(a);
    }
    return run(a);
}

}  // namespace mpc::mpi::coll

using namespace mpc::mpi::coll;
using mpc::mpi::coll::kind;

extern "C" {

int PMPI_Barrier(MPI_Comm h) {
    if (int err; fast_barrier(h, &err)) {
        return err;
    }
    return do_barrier("MPI_Barrier", h, nullptr);
}
int PMPI_Ibarrier(MPI_Comm h, MPI_Request* r) { return do_barrier("MPI_Ibarrier", h, r); }

int PMPI_Bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm h) {
    if (int err; fast_bcast(buf, count, t, root, h, &err)) {
        return err;
    }
    return do_bcast("MPI_Bcast", buf, count, t, root, h, nullptr);
}
int PMPI_Ibcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm h, MPI_Request* r) {
    return do_bcast("MPI_Ibcast", buf, count, t, root, h, r);
}

int PMPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm h) {
    return do_gather("MPI_Gather", false, sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, root, h, nullptr);
}
int PMPI_Igather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm h, MPI_Request* r) {
    return do_gather("MPI_Igather", false, sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, root, h, r);
}
int PMPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm h) {
    return do_gather("MPI_Gatherv", true, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, h, nullptr);
}
int PMPI_Igatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                  const int displs[], MPI_Datatype rtype, int root, MPI_Comm h, MPI_Request* r) {
    return do_gather("MPI_Igatherv", true, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, h, r);
}

int PMPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm h) {
    return do_scatter("MPI_Scatter", false, sbuf, scount, nullptr, nullptr, stype, rbuf, rcount, rtype, root, h,
                      nullptr);
}
int PMPI_Iscatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  int root, MPI_Comm h, MPI_Request* r) {
    return do_scatter("MPI_Iscatter", false, sbuf, scount, nullptr, nullptr, stype, rbuf, rcount, rtype, root, h, r);
}
int PMPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm h) {
    return do_scatter("MPI_Scatterv", true, sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, h, nullptr);
}
int PMPI_Iscatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf,
                   int rcount, MPI_Datatype rtype, int root, MPI_Comm h, MPI_Request* r) {
    return do_scatter("MPI_Iscatterv", true, sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, h, r);
}

int PMPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm h) {
    return do_allgather("MPI_Allgather", false, sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, h, nullptr);
}
int PMPI_Iallgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                    MPI_Comm h, MPI_Request* r) {
    return do_allgather("MPI_Iallgather", false, sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, h, r);
}
int PMPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm h) {
    return do_allgather("MPI_Allgatherv", true, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, h, nullptr);
}
int PMPI_Iallgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                     const int displs[], MPI_Datatype rtype, MPI_Comm h, MPI_Request* r) {
    return do_allgather("MPI_Iallgatherv", true, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, h, r);
}

int PMPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm h) {
    return do_alltoall("MPI_Alltoall", kind::alltoall, sbuf, scount, nullptr, nullptr, stype, nullptr, rbuf, rcount,
                       nullptr, nullptr, rtype, nullptr, h, nullptr);
}
int PMPI_Ialltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm h, MPI_Request* r) {
    return do_alltoall("MPI_Ialltoall", kind::alltoall, sbuf, scount, nullptr, nullptr, stype, nullptr, rbuf, rcount,
                       nullptr, nullptr, rtype, nullptr, h, r);
}
int PMPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h) {
    return do_alltoall("MPI_Alltoallv", kind::alltoallv, sbuf, 0, scounts, sdispls, stype, nullptr, rbuf, 0, rcounts,
                       rdispls, rtype, nullptr, h, nullptr);
}
int PMPI_Ialltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                    const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h, MPI_Request* r) {
    return do_alltoall("MPI_Ialltoallv", kind::alltoallv, sbuf, 0, scounts, sdispls, stype, nullptr, rbuf, 0, rcounts,
                       rdispls, rtype, nullptr, h, r);
}
int PMPI_Alltoallw(const void* sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* rbuf,
                   const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm h) {
    return do_alltoall("MPI_Alltoallw", kind::alltoallw, sbuf, 0, scounts, sdispls, MPI_DATATYPE_NULL, stypes, rbuf, 0,
                       rcounts, rdispls, MPI_DATATYPE_NULL, rtypes, h, nullptr);
}
int PMPI_Ialltoallw(const void* sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                    void* rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm h,
                    MPI_Request* r) {
    return do_alltoall("MPI_Ialltoallw", kind::alltoallw, sbuf, 0, scounts, sdispls, MPI_DATATYPE_NULL, stypes, rbuf, 0,
                       rcounts, rdispls, MPI_DATATYPE_NULL, rtypes, h, r);
}

int PMPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm h) {
    return do_reduce("MPI_Reduce", kind::reduce, sbuf, rbuf, count, t, op, root, h, nullptr);
}
int PMPI_Ireduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm h,
                 MPI_Request* r) {
    return do_reduce("MPI_Ireduce", kind::reduce, sbuf, rbuf, count, t, op, root, h, r);
}
int PMPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h) {
    if (int err; fast_allreduce(sbuf, rbuf, count, t, op, h, &err)) {
        return err;
    }
    return do_reduce("MPI_Allreduce", kind::allreduce, sbuf, rbuf, count, t, op, 0, h, nullptr);
}
int PMPI_Iallreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h, MPI_Request* r) {
    return do_reduce("MPI_Iallreduce", kind::allreduce, sbuf, rbuf, count, t, op, 0, h, r);
}
int PMPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h) {
    return do_reduce("MPI_Scan", kind::scan, sbuf, rbuf, count, t, op, 0, h, nullptr);
}
int PMPI_Iscan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h, MPI_Request* r) {
    return do_reduce("MPI_Iscan", kind::scan, sbuf, rbuf, count, t, op, 0, h, r);
}
int PMPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h) {
    return do_reduce("MPI_Exscan", kind::exscan, sbuf, rbuf, count, t, op, 0, h, nullptr);
}
int PMPI_Iexscan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm h, MPI_Request* r) {
    return do_reduce("MPI_Iexscan", kind::exscan, sbuf, rbuf, count, t, op, 0, h, r);
}
int PMPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype t, MPI_Op op, MPI_Comm h) {
    return do_reduce_scatter("MPI_Reduce_scatter_block", true, sbuf, rbuf, rcount, nullptr, t, op, h, nullptr);
}
int PMPI_Ireduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype t, MPI_Op op, MPI_Comm h,
                               MPI_Request* r) {
    return do_reduce_scatter("MPI_Ireduce_scatter_block", true, sbuf, rbuf, rcount, nullptr, t, op, h, r);
}
int PMPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype t, MPI_Op op, MPI_Comm h) {
    return do_reduce_scatter("MPI_Reduce_scatter", false, sbuf, rbuf, 0, rcounts, t, op, h, nullptr);
}
int PMPI_Ireduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype t, MPI_Op op, MPI_Comm h,
                         MPI_Request* r) {
    return do_reduce_scatter("MPI_Ireduce_scatter", false, sbuf, rbuf, 0, rcounts, t, op, h, r);
}

int PMPI_Reduce_local(const void* in, void* inout, int count, MPI_Datatype t, MPI_Op op) {
    return do_reduce_local(in, inout, count, t, op);
}

#define MPC_COLL_WEAK(name, ...) int MPI_##name(__VA_ARGS__) MPC_WEAK(MPI_##name);
MPC_COLL_WEAK(Reduce_local, const void*, void*, int, MPI_Datatype, MPI_Op)
MPC_COLL_WEAK(Barrier, MPI_Comm)
MPC_COLL_WEAK(Ibarrier, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Bcast, void*, int, MPI_Datatype, int, MPI_Comm)
MPC_COLL_WEAK(Ibcast, void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Gather, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)
MPC_COLL_WEAK(Igather, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Gatherv, const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, int, MPI_Comm)
MPC_COLL_WEAK(Igatherv, const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, int, MPI_Comm,
              MPI_Request*)
MPC_COLL_WEAK(Scatter, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)
MPC_COLL_WEAK(Iscatter, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Scatterv, const void*, const int[], const int[], MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)
MPC_COLL_WEAK(Iscatterv, const void*, const int[], const int[], MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm,
              MPI_Request*)
MPC_COLL_WEAK(Allgather, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm)
MPC_COLL_WEAK(Iallgather, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Allgatherv, const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, MPI_Comm)
MPC_COLL_WEAK(Iallgatherv, const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, MPI_Comm,
              MPI_Request*)
MPC_COLL_WEAK(Alltoall, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm)
MPC_COLL_WEAK(Ialltoall, const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Alltoallv, const void*, const int[], const int[], MPI_Datatype, void*, const int[], const int[],
              MPI_Datatype, MPI_Comm)
MPC_COLL_WEAK(Ialltoallv, const void*, const int[], const int[], MPI_Datatype, void*, const int[], const int[],
              MPI_Datatype, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Alltoallw, const void*, const int[], const int[], const MPI_Datatype[], void*, const int[], const int[],
              const MPI_Datatype[], MPI_Comm)
MPC_COLL_WEAK(Ialltoallw, const void*, const int[], const int[], const MPI_Datatype[], void*, const int[], const int[],
              const MPI_Datatype[], MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Reduce, const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm)
MPC_COLL_WEAK(Ireduce, const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Allreduce, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm)
MPC_COLL_WEAK(Iallreduce, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Scan, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm)
MPC_COLL_WEAK(Iscan, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Exscan, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm)
MPC_COLL_WEAK(Iexscan, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Reduce_scatter_block, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm)
MPC_COLL_WEAK(Ireduce_scatter_block, const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*)
MPC_COLL_WEAK(Reduce_scatter, const void*, void*, const int[], MPI_Datatype, MPI_Op, MPI_Comm)
MPC_COLL_WEAK(Ireduce_scatter, const void*, void*, const int[], MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*)
#undef MPC_COLL_WEAK
}
