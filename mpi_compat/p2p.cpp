/// \file
/// Point-to-point bindings: argument checks (each failure gets its MPI error class through the
/// communicator's error handler), then one call into the matching engine.

#include <climits>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/datatype/copy.hpp"
#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/p2p.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi::p2p {

/// The checks of check_args() (p2p.hpp) one by one, for a call where one of them fails.
checked check_args_failed(const char* call, const void* buf, int count, MPI_Datatype type, int peer, int tag,
                          MPI_Comm cm, bool is_recv) noexcept {
    checked k;
    k.self = current();
    k.c = lookup_comm(cm);
    if (k.self == nullptr) {
        k.err = raise(MPI_COMM_NULL, MPI_ERR_OTHER, call, "called outside an MPI rank");
        return k;
    }
    if (k.c == nullptr) {
        k.err = raise(MPI_COMM_NULL, MPI_ERR_COMM, call, "invalid communicator %#x", cm);
        return k;
    }
    if (count < 0) {
        k.err = raise(cm, MPI_ERR_COUNT, call, "negative count %d", count);
        return k;
    }
    const datatype* dt = datatype_for_comm(type);
    if (dt == nullptr) {
        k.err = raise(cm, MPI_ERR_TYPE, call, "invalid datatype %#x (null, freed, not committed, or MPI_LB/MPI_UB)",
                      type);
        return k;
    }
    int size = k.c->peer_count(*k.self);
    bool peer_ok = (peer >= 0 && peer < size) || peer == MPI_PROC_NULL || (is_recv && peer == MPI_ANY_SOURCE);
    if (!peer_ok) {
        k.err = raise(cm, MPI_ERR_RANK, call, "invalid %s %d (the communicator has %d ranks)",
                      is_recv ? "source" : "destination", peer, size);
        return k;
    }
    bool tag_ok = tag >= 0 || (is_recv && tag == MPI_ANY_TAG);
    if (!tag_ok) {
        k.err = raise(cm, MPI_ERR_TAG, call, "invalid tag %d", tag);
        return k;
    }
    if (null_data(buf, count, *dt)) {
        k.err = raise(cm, MPI_ERR_BUFFER, call, "null buffer with count %d", count);
        return k;
    }
    k.data = typed(buf, count, dt);
    return k;
}

void start_send(const checked& k, const void* buf, int dest, int tag, request* r, send_mode m) noexcept {
    r->kind = req_kind::send;
    if (dest == MPI_PROC_NULL) {
        set_status(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
        r->complete();
        return;
    }
    // A buffered send passes its packed copy in the attached buffer instead of the user's data.
    typed_buf data = buf == k.data.buf ? k.data : raw_bytes(buf, k.data.bytes);
    // MPI_COMM_WORLD and its duplicates without the lookups (rank_of() searches the
    // communicator's rank index).
    const comm& c = *k.c;
    const int dest_world = c.world_order ? dest : c.world_rank(*k.self, dest);
    const int source_rank = c.world_order ? k.self->world_rank : c.rank_of(*k.self);
    route_send(*k.self, dest_world, c.context, source_rank, tag, data, r, m == send_mode::sync);
}

void start_recv(const checked& k, void* buf, int source, int tag, request* r) noexcept {
    r->kind = req_kind::recv;
    if (source == MPI_PROC_NULL) {
        set_status(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
        r->complete();
        return;
    }
    r->target = k.data;
    r->target.buf = buf;
    r->context = k.c->context;
    r->source = source;
    r->tag = tag;
    k.self->engine.post(r);
}

void copy_status(MPI_Status* out, const request& r) noexcept { user_status(out, r.status); }

int blocking_send(const char* call, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm,
                  send_mode m) noexcept {
    checked k = check_args(call, buf, count, type, dest, tag, cm, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    request r;
    start_send(k, buf, dest, tag, &r, m);
    r.wait(call);
    return MPI_SUCCESS;
}

int nonblocking_send(const char* call, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm cm, MPI_Request* req, send_mode m) noexcept {
    checked k = check_args(call, buf, count, type, dest, tag, cm, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int err = MPI_SUCCESS;
    request* r = new_request(call, k, cm, req, &err);
    if (r == nullptr) {
        return err;
    }
    *req = request_pool::handle_of(r);
    hold_type(r, k);
    start_send(k, buf, dest, tag, r, m);
    return MPI_SUCCESS;
}

request* new_request(const char* call, const checked& k, MPI_Comm cm, const MPI_Request* req, int* err) noexcept {
    if (req == nullptr) {
        *err = raise(cm, MPI_ERR_ARG, call, "null request pointer");
        return nullptr;
    }
    request* r = k.self->requests.alloc();
    if (r == nullptr) {
        *err = raise(cm, MPI_ERR_NO_MEM, call, "no request left");
    }
    return r;
}

int finish(MPI_Request* h, request* r, MPI_Status* st) noexcept {
    if (r->kind == req_kind::generalized && r->greq.query != nullptr) {
        r->greq.query(r->greq.state, &r->status);
    }
    copy_status(st, *r);
    int err = r->kind == req_kind::send ? MPI_SUCCESS : r->status.MPI_ERROR;
    on_complete(*r);
    if (r->persistent) {
        r->active = false;  // inactive until the next MPI_Start; the handle stays valid
        return err;
    }
    if (r->kind == req_kind::generalized && r->greq.free != nullptr) {
        int ferr = r->greq.free(r->greq.state);
        err = err != MPI_SUCCESS ? err : ferr;
    }
    current()->requests.release(r);
    *h = MPI_REQUEST_NULL;
    return err;
}

bool inactive(const request* r) noexcept { return r->persistent && !r->active; }

void hold_type(request* r, const checked& k) noexcept {
    if (r->held == nullptr && k.data.type != nullptr) {
        k.data.type->retain();
        r->held = k.data.type;
    }
}

void empty_status(MPI_Status* st) noexcept {
    if (st != MPI_STATUS_IGNORE) {  // MPI 3.1 section 3.7.3: an empty status says MPI_SUCCESS
        set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    }
}

/// Resolves a request handle; *r is null for MPI_REQUEST_NULL. Returns an error class.
int resolve(const char* call, MPI_Request* h, request** r) noexcept {
    if (h == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, call, "null request pointer");
    }
    if (*h == MPI_REQUEST_NULL) {
        *r = nullptr;
        return MPI_SUCCESS;
    }
    *r = request_pool::from_handle(*h);
    if (*r == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, call, "invalid request handle %#x", *h);
    }
    return MPI_SUCCESS;
}

int resolve_active(const char* call, MPI_Request* h, request** r) noexcept {
    int err = resolve(call, h, r);
    if (err == MPI_SUCCESS && *r != nullptr && inactive(*r)) {
        *r = nullptr;
    }
    return err;
}

}  // namespace mpc::mpi::p2p

namespace {
[[gnu::cold, gnu::noinline]] int recv_failed(MPI_Comm cm, const mpc::mpi::request& r, std::size_t capacity) noexcept {
    return mpc::mpi::raise(cm, r.status.MPI_ERROR, "MPI_Recv", "message from rank %d truncated to the %zu bytes of the buffer",
                           r.status.MPI_SOURCE, capacity);
}

/// The end of a blocking receive into a buffer of `capacity` bytes: copies the status out and
/// raises MPI_ERR_TRUNCATE for a message that did not fit.
inline int recv_result(MPI_Comm cm, MPI_Status* st, const mpc::mpi::request& r, std::size_t capacity) noexcept {
    mpc::mpi::p2p::copy_status(st, r);
    return r.status.MPI_ERROR == MPI_SUCCESS ? MPI_SUCCESS : recv_failed(cm, r, capacity);
}

/// One pass of MPI_Testany / MPI_Waitany: completes the first finished active request.
/// *index is its position, or MPI_UNDEFINED; *any_active says whether any request is active.
int test_any(const char* call, int count, MPI_Request reqs[], int* index, bool* any_active, MPI_Status* st) noexcept {
    using namespace mpc::mpi::p2p;
    *any_active = false;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < count; ++i) {
        mpc::mpi::request* r = nullptr;
        if (int err = resolve_active(call, &reqs[i], &r); err != MPI_SUCCESS) {
            return err;
        }
        if (r == nullptr) {
            continue;
        }
        *any_active = true;
        if (r->is_done()) {
            *index = i;
            return finish(&reqs[i], r, st);
        }
    }
    if (!*any_active) {
        empty_status(st);
    }
    return MPI_SUCCESS;
}
}  // namespace

using namespace mpc::mpi;
using namespace mpc::mpi::p2p;

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm) {
    fast_args fa;
    if (fast_check(buf, count, type, dest, tag, cm, false, &fa)) [[likely]] {
        world_state& w = world();
        // In world order the destination is its world rank and we are ours.
        if (is_local(w, dest)) [[likely]] {
            if (w.tasks[static_cast<std::size_t>(dest)]->engine.deliver_posted(fa.c->context, fa.self->world_rank,
                                                                             tag, buf, fa.bytes)) [[likely]] {
                return MPI_SUCCESS;
            }
        } else {
            // Another process: straight to the transport, without the general path's second
            // check of the arguments (what start_send() would do for these arguments).
            request r;
            r.kind = req_kind::send;
            route_send(*fa.self, dest, fa.c->context, fa.self->world_rank, tag,
                       typed_buf{buf, count, fa.type, fa.bytes, true}, &r, false);
            r.wait("MPI_Send");
            return MPI_SUCCESS;
        }
    }
    return blocking_send("MPI_Send", buf, count, type, dest, tag, cm, send_mode::standard);
}
int PMPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm) {
    return blocking_send("MPI_Ssend", buf, count, type, dest, tag, cm, send_mode::sync);
}
int PMPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm) {
    return blocking_send("MPI_Rsend", buf, count, type, dest, tag, cm, send_mode::ready);
}
int PMPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return nonblocking_send("MPI_Isend", buf, count, type, dest, tag, cm, req, send_mode::standard);
}
int PMPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return nonblocking_send("MPI_Issend", buf, count, type, dest, tag, cm, req, send_mode::sync);
}
int PMPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return nonblocking_send("MPI_Irsend", buf, count, type, dest, tag, cm, req, send_mode::ready);
}

int PMPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm cm, MPI_Status* st) {
    fast_args fa;
    if (fast_check(buf, count, type, source, tag, cm, true, &fa)) [[likely]] {
        request r;
        r.target = typed_buf{buf, count, fa.type, fa.bytes, true};
        r.context = fa.c->context;
        r.source = source;
        r.tag = tag;
        if (!fa.self->engine.post_if_none_queued(&r)) {
            fa.self->engine.post(&r);
        }
        r.wait("MPI_Recv");
        return recv_result(cm, st, r, fa.bytes);
    }
    checked k = check_args("MPI_Recv", buf, count, type, source, tag, cm, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    request r;
    start_recv(k, buf, source, tag, &r);
    r.wait("MPI_Recv");
    return recv_result(cm, st, r, k.data.bytes);
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm cm, MPI_Request* req) {
    checked k = check_args("MPI_Irecv", buf, count, type, source, tag, cm, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int err = MPI_SUCCESS;
    request* r = new_request("MPI_Irecv", k, cm, req, &err);
    if (r == nullptr) {
        return err;
    }
    *req = request_pool::handle_of(r);
    hold_type(r, k);
    start_recv(k, buf, source, tag, r);
    return MPI_SUCCESS;
}

int PMPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm cm, MPI_Status* st) {
    checked ks = check_args("MPI_Sendrecv", sbuf, scount, stype, dest, stag, cm, false);
    if (ks.err != MPI_SUCCESS) {
        return ks.err;
    }
    checked kr = check_args("MPI_Sendrecv", rbuf, rcount, rtype, source, rtag, cm, true);
    if (kr.err != MPI_SUCCESS) {
        return kr.err;
    }
    request rr;
    request rs;
    start_recv(kr, rbuf, source, rtag, &rr);
    start_send(ks, sbuf, dest, stag, &rs, send_mode::standard);
    rs.wait("MPI_Sendrecv");
    rr.wait("MPI_Sendrecv");
    copy_status(st, rr);
    if (rr.status.MPI_ERROR != MPI_SUCCESS) {
        return raise(cm, rr.status.MPI_ERROR, "MPI_Sendrecv", "received message truncated");
    }
    return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm cm, int* flag, MPI_Status* st) {
    checked k = check_args("MPI_Iprobe", nullptr, 0, MPI_BYTE, source, tag, cm, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (flag == nullptr) {
        return raise(cm, MPI_ERR_ARG, "MPI_Iprobe", "null flag pointer");
    }
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        set_user_status(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    MPI_Status tmp;
    *flag = k.self->engine.probe(k.c->context, source, tag, &tmp) ? 1 : 0;
    if (*flag != 0) {
        user_status(st, tmp);
    }
    if (*flag == 0) {
        mpc::mpi::p2p::poll_yield();  // a polling loop must let the sender run
    }
    return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm cm, MPI_Status* st) {
    checked k = check_args("MPI_Probe", nullptr, 0, MPI_BYTE, source, tag, cm, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    MPI_Status tmp;
    if (source == MPI_PROC_NULL) {
        set_status(&tmp, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
    } else {
        k.self->engine.probe_wait(k.c->context, source, tag, &tmp);
    }
    user_status(st, tmp);
    return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request* h, MPI_Status* st) {
    request* r = nullptr;
    if (int err = resolve("MPI_Wait", h, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr || inactive(r)) {
        empty_status(st);
        return MPI_SUCCESS;
    }
    r->wait("MPI_Wait");
    return finish(h, r, st);
}

int PMPI_Test(MPI_Request* h, int* flag, MPI_Status* st) {
    request* r = nullptr;
    if (int err = resolve("MPI_Test", h, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (flag == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test", "null flag pointer");
    }
    if (r == nullptr || inactive(r)) {
        *flag = 1;
        empty_status(st);
        return MPI_SUCCESS;
    }
    if (!r->is_done()) {
        *flag = 0;
        mpc::mpi::p2p::poll_yield();
        return MPI_SUCCESS;
    }
    *flag = 1;
    return finish(h, r, st);
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[]) {
    if (count < 0 || (count > 0 && reqs == nullptr)) {
        return raise(MPI_COMM_WORLD, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Waitall", "bad request array");
    }
    int result = MPI_SUCCESS;
    for (int i = 0; i < count; ++i) {
        MPI_Status* st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
        note_in_status(sts, i, PMPI_Wait(&reqs[i], st), &result);
    }
    return result;
}

int PMPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status sts[]) {
    if (count < 0 || flag == nullptr || (count > 0 && reqs == nullptr)) {
        return raise(MPI_COMM_WORLD, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Testall", "bad arguments");
    }
    for (int i = 0; i < count; ++i) {
        request* r = nullptr;
        if (int err = resolve_active("MPI_Testall", &reqs[i], &r); err != MPI_SUCCESS) {
            return err;
        }
        if (r != nullptr && !r->is_done()) {
            *flag = 0;
            mpc::mpi::p2p::poll_yield();
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return PMPI_Waitall(count, reqs, sts);
}

int PMPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* st) {
    if (count < 0 || index == nullptr || (count > 0 && reqs == nullptr)) {
        return raise(MPI_COMM_WORLD, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Waitany", "bad arguments");
    }
    for (;;) {
        bool any_active = false;
        int err = test_any("MPI_Waitany", count, reqs, index, &any_active, st);
        if (err != MPI_SUCCESS || *index != MPI_UNDEFINED || !any_active) {
            return err;
        }
        // Park until one of them completes: each pending request signals `sem` on completion.
        // Registered: every active request before `stop`.
        mpc::sched::semaphore sem(0);
        mpc::mpi::completion_waiter w{nullptr, &sem};
        int stop = 0;
        bool ready = false;
        for (; stop < count; ++stop) {
            request* r = request_pool::from_handle(reqs[stop]);
            if (r != nullptr && !inactive(r) && !r->watch(&w)) {
                ready = true;  // completed meanwhile (or, erroneously, another thread waits on it)
                break;
            }
        }
        int signals = 0;
        if (!ready) {
            mpc::sched::set_wait_reason("MPI_Waitany");
            sem.acquire();
            signals = 1;
        }
        // Withdraw. A completer that took `w` signals it exactly once: absorb those signals
        // before `sem` and `w` go out of scope.
        int taken = 0;
        for (int i = 0; i < stop; ++i) {
            request* r = request_pool::from_handle(reqs[i]);
            if (r != nullptr && !inactive(r) && !r->unwatch(&w)) {
                ++taken;
            }
        }
        for (; signals < taken; ++signals) {
            sem.acquire();
        }
        if (ready && taken == 0) {
            mpc::mpi::p2p::poll_yield();  // e.g. another thread waits on one of them: let it run
        }
    }
}

int PMPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* st) {
    if (count < 0 || index == nullptr || flag == nullptr || (count > 0 && reqs == nullptr)) {
        return raise(MPI_COMM_WORLD, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Testany", "bad arguments");
    }
    bool any_active = false;
    int err = test_any("MPI_Testany", count, reqs, index, &any_active, st);
    *flag = (err != MPI_SUCCESS || *index != MPI_UNDEFINED || !any_active) ? 1 : 0;
    if (*flag == 0) {
        mpc::mpi::p2p::poll_yield();  // a polling loop must let the other ranks run
    }
    return err;
}

int PMPI_Request_free(MPI_Request* h) {
    request* r = nullptr;
    if (int err = resolve("MPI_Request_free", h, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free", "MPI_REQUEST_NULL");
    }
    // An active operation goes on: the rank recycles the request once it has completed.
    if (inactive(r) || r->is_done()) {
        on_complete(*r, true);
        current()->requests.release(r);
    } else {
        current()->requests.orphan(r);
    }
    *h = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status* st, MPI_Datatype type, int* count) {
    if (st == nullptr || count == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_count", "null status or count pointer");
    }
    const datatype* dt = datatype_from_handle(type);
    if (dt == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype %#x", type);
    }
    count_t n = get_count(*dt, static_cast<count_t>(status_bytes(*st)));
    *count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    return MPI_SUCCESS;
}

int MPI_Send(const void*, int, MPI_Datatype, int, int, MPI_Comm) MPC_WEAK(MPI_Send);
int MPI_Ssend(const void*, int, MPI_Datatype, int, int, MPI_Comm) MPC_WEAK(MPI_Ssend);
int MPI_Rsend(const void*, int, MPI_Datatype, int, int, MPI_Comm) MPC_WEAK(MPI_Rsend);
int MPI_Isend(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Isend);
int MPI_Issend(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Issend);
int MPI_Irsend(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Irsend);
int MPI_Recv(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*) MPC_WEAK(MPI_Recv);
int MPI_Irecv(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Irecv);
int MPI_Sendrecv(const void*, int, MPI_Datatype, int, int, void*, int, MPI_Datatype, int, int, MPI_Comm,
                 MPI_Status*) MPC_WEAK(MPI_Sendrecv);
int MPI_Iprobe(int, int, MPI_Comm, int*, MPI_Status*) MPC_WEAK(MPI_Iprobe);
int MPI_Probe(int, int, MPI_Comm, MPI_Status*) MPC_WEAK(MPI_Probe);
int MPI_Wait(MPI_Request*, MPI_Status*) MPC_WEAK(MPI_Wait);
int MPI_Test(MPI_Request*, int*, MPI_Status*) MPC_WEAK(MPI_Test);
int MPI_Waitall(int, MPI_Request[], MPI_Status[]) MPC_WEAK(MPI_Waitall);
int MPI_Testall(int, MPI_Request[], int*, MPI_Status[]) MPC_WEAK(MPI_Testall);
int MPI_Waitany(int, MPI_Request[], int*, MPI_Status*) MPC_WEAK(MPI_Waitany);
int MPI_Testany(int, MPI_Request[], int*, int*, MPI_Status*) MPC_WEAK(MPI_Testany);
int MPI_Request_free(MPI_Request*) MPC_WEAK(MPI_Request_free);
int MPI_Get_count(const MPI_Status*, MPI_Datatype, int*) MPC_WEAK(MPI_Get_count);
}
