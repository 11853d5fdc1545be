/// \file
/// The rest of point-to-point: matched probes and message handles, persistent requests,
/// buffered sends, cancellation, Waitsome/Testsome, Request_get_status, generalized requests.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/datatype/copy.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/p2p.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::p2p;

namespace {

// ---- message handles (MPI_Mprobe) ----------------------------------------------------------

struct message_table {
    std::mutex lock;
    std::vector<unexpected_msg*> slots{nullptr, nullptr};  // 0: NULL, 1: NO_PROC
    std::vector<int> free_slots;
};

message_table& messages() {
    static message_table t;
    return t;
}

MPI_Message register_message(unexpected_msg* m) {
    message_table& t = messages();
    std::lock_guard<std::mutex> g(t.lock);
    std::size_t idx = 0;
    if (!t.free_slots.empty()) {
        idx = static_cast<std::size_t>(t.free_slots.back());
        t.free_slots.pop_back();
        t.slots[idx] = m;
    } else {
        idx = t.slots.size();
        t.slots.push_back(m);
    }
    return MPC_HANDLE(MPC_HANDLE_KIND_MESSAGE, static_cast<int>(idx));
}

/// Takes the message behind a handle out of the table; nullptr if invalid.
unexpected_msg* claim_message(MPI_Message h) {
    if ((static_cast<unsigned>(h) >> 24) != MPC_HANDLE_KIND_MESSAGE) {
        return nullptr;
    }
    auto idx = static_cast<std::size_t>(h & 0xffffff);
    message_table& t = messages();
    std::lock_guard<std::mutex> g(t.lock);
    if (idx < 2 || idx >= t.slots.size() || t.slots[idx] == nullptr) {
        return nullptr;
    }
    unexpected_msg* m = t.slots[idx];
    t.slots[idx] = nullptr;
    t.free_slots.push_back(static_cast<int>(idx));
    return m;
}

int mprobe(const char* call, int source, int tag, MPI_Comm cm, int* flag, MPI_Message* msg, MPI_Status* st,
           bool wait) {
    checked k = check_args(call, nullptr, 0, MPI_BYTE, source, tag, cm, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (msg == nullptr || (!wait && flag == nullptr)) {
        return raise(cm, MPI_ERR_ARG, call, "null output pointer");
    }
    if (source == MPI_PROC_NULL) {
        *msg = MPI_MESSAGE_NO_PROC;
        if (flag != nullptr) {
            *flag = 1;
        }
        set_user_status(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        return MPI_SUCCESS;
    }
    unexpected_msg* m = k.self->engine.take(k.c->context, source, tag, wait);
    if (flag != nullptr) {
        *flag = m != nullptr ? 1 : 0;
    }
    if (m == nullptr) {
        mpc::mpi::p2p::poll_yield();
        return MPI_SUCCESS;
    }
    set_user_status(st, m->source, m->tag, m->bytes);
    *msg = register_message(m);
    return MPI_SUCCESS;
}

int mrecv(const char* call, void* buf, int count, MPI_Datatype type, MPI_Message* msg, request* r) {
    if (msg == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, call, "null message pointer");
    }
    checked k = check_args(call, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    r->kind = req_kind::recv;
    if (*msg == MPI_MESSAGE_NO_PROC) {
        set_status(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
        r->complete();
        *msg = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    unexpected_msg* m = claim_message(*msg);
    if (m == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, call, "invalid message handle %#x", *msg);
    }
    *msg = MPI_MESSAGE_NULL;
    r->target = k.data;
    match_engine::receive_taken(m, r);
    return MPI_SUCCESS;
}

// ---- buffered sends --------------------------------------------------------------------------

/// The buffer attached by MPI_Buffer_attach: a first-fit allocator over the user's memory.
struct bsend_buffer {
    char* base = nullptr;
    std::size_t size = 0;
    struct block {
        std::size_t off;
        std::size_t len;
    };
    std::vector<block> used;  ///< sorted by offset
};

std::mutex bsend_lock;
std::vector<std::pair<const task*, bsend_buffer>> bsend_buffers;  // one per rank that attached

bsend_buffer* buffer_of(const task* t) {
    for (auto& [owner, b] : bsend_buffers) {
        if (owner == t) {
            return &b;
        }
    }
    return nullptr;
}

void* bsend_alloc(bsend_buffer& b, std::size_t len) {
    len += MPI_BSEND_OVERHEAD;
    std::size_t at = 0;
    for (std::size_t i = 0; i <= b.used.size(); ++i) {
        std::size_t end = i < b.used.size() ? b.used[i].off : b.size;
        if (end >= at && end - at >= len) {
            b.used.insert(b.used.begin() + static_cast<long>(i), {at, len});
            return b.base + at;
        }
        if (i < b.used.size()) {
            at = b.used[i].off + b.used[i].len;
        }
    }
    return nullptr;
}

int start_bsend(const char* call, const checked& k, const void* buf, int dest, int tag, request* r) {
    std::lock_guard<std::mutex> g(bsend_lock);
    bsend_buffer* b = buffer_of(k.self);
    const std::size_t bytes = k.data.bytes;
    void* block = b != nullptr ? bsend_alloc(*b, bytes) : nullptr;
    if (block == nullptr) {
        return raise(k.c->handle, MPI_ERR_BUFFER, call,
                     "no room for %zu bytes (+%d overhead) in the buffer attached with MPI_Buffer_attach (%zu bytes)",
                     bytes, MPI_BSEND_OVERHEAD, b != nullptr ? b->size : 0);
    }
    if (bytes != 0 && k.data.contig) {
        std::memcpy(block, k.data.base(), bytes);
    } else if (bytes != 0) {
        segment seg(buf, k.data.count, *k.data.type);
        seg.pack(block, static_cast<count_t>(bytes));
    }
    r->bsend_block = block;
    start_send(k, block, dest, tag, r, send_mode::standard);
    return MPI_SUCCESS;
}

// ---- persistent requests ---------------------------------------------------------------------

int make_persistent(const char* call, const void* buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm cm,
                    MPI_Request* req, req_kind kind, send_mode m) {
    checked k = check_args(call, buf, count, type, peer, tag, cm, kind == req_kind::recv);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int err = MPI_SUCCESS;
    request* r = new_request(call, k, cm, req, &err);
    if (r == nullptr) {
        return err;
    }
    r->kind = kind;
    hold_type(r, k);
    r->persistent = true;
    r->active = false;
    r->args = {buf, count, type, peer, tag, cm, m};
    *req = request_pool::handle_of(r);
    return MPI_SUCCESS;
}

int start_one(MPI_Request* h) {
    request* r = nullptr;
    if (int err = resolve("MPI_Start", h, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr || !r->persistent || r->active) {
        return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Start",
                     r == nullptr ? "MPI_REQUEST_NULL" : !r->persistent ? "not a persistent request"
                                                                        : "the request is already active");
    }
    const persistent_args& a = r->args;
    bool is_recv = r->kind == req_kind::recv;
    // The arguments were checked by the *_init call, and the request holds its type: the
    // type's handle may have been freed since (MPI 3.1 section 4.1.9: freeing a type does not
    // affect a communication that uses it), so the type comes from the request, not its handle.
    checked k;
    k.self = current();
    k.c = lookup_comm(a.comm);
    if (k.self == nullptr || k.c == nullptr || r->held == nullptr) {
        k = check_args("MPI_Start", a.buf, a.count, a.type, a.peer, a.tag, a.comm, is_recv);
        if (k.err != MPI_SUCCESS) {
            return k.err;
        }
    } else {
        k.data = typed(a.buf, a.count, r->held);
    }
    r->state.store(request::pending, std::memory_order_relaxed);
    r->status = MPI_Status{};
    r->active = true;
    if (is_recv) {
        start_recv(k, const_cast<void*>(a.buf), a.peer, a.tag, r);
        return MPI_SUCCESS;
    }
    if (a.mode == send_mode::buffered) {
        return start_bsend("MPI_Start", k, a.buf, a.peer, a.tag, r);
    }
    start_send(k, a.buf, a.peer, a.tag, r, a.mode);
    return MPI_SUCCESS;
}

bool cancelled(const MPI_Status& st) { return (st.mpc_count_hi_and_cancelled & 1) != 0; }

}  // namespace

namespace mpc::mpi::p2p {
void on_complete(request& r, bool freed) noexcept {
    if (r.release_fn != nullptr && (!r.persistent || freed)) {
        void (*fn)(void*) = r.release_fn;
        r.release_fn = nullptr;
        fn(r.release_arg);
    }
    if (r.bsend_block == nullptr) {
        return;
    }
    std::lock_guard<std::mutex> g(bsend_lock);
    for (auto& [owner, b] : bsend_buffers) {
        auto* p = static_cast<char*>(r.bsend_block);
        if (p >= b.base && p < b.base + b.size) {
            auto off = static_cast<std::size_t>(p - b.base);
            b.used.erase(std::remove_if(b.used.begin(), b.used.end(),
                                        [off](const bsend_buffer::block& blk) { return blk.off == off; }),
                         b.used.end());
        }
    }
    r.bsend_block = nullptr;
}
}  // namespace mpc::mpi::p2p

extern "C" {

__attribute__((visibility("hidden"))) int mpc_request_on_release(MPI_Request h, void (*fn)(void*), void* arg) {
    request* r = nullptr;
    if (int err = resolve("mpc_request_on_release", &h, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr || r->release_fn != nullptr) {
        return MPI_ERR_REQUEST;
    }
    r->release_fn = fn;
    r->release_arg = arg;
    return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm cm, MPI_Message* msg, MPI_Status* st) {
    return mprobe("MPI_Mprobe", source, tag, cm, nullptr, msg, st, true);
}

int PMPI_Improbe(int source, int tag, MPI_Comm cm, int* flag, MPI_Message* msg, MPI_Status* st) {
    return mprobe("MPI_Improbe", source, tag, cm, flag, msg, st, false);
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* msg, MPI_Status* st) {
    request r;
    int err = mrecv("MPI_Mrecv", buf, count, type, msg, &r);
    if (err != MPI_SUCCESS) {
        return err;
    }
    r.wait("MPI_Mrecv");
    copy_status(st, r);
    return r.status.MPI_ERROR == MPI_SUCCESS
               ? MPI_SUCCESS
               : raise(MPI_COMM_WORLD, r.status.MPI_ERROR, "MPI_Mrecv", "received message truncated");
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* msg, MPI_Request* req) {
    task* t = current();
    if (t == nullptr || req == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Imrecv", "null request pointer or not in a rank");
    }
    request* r = t->requests.alloc();
    if (r == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Imrecv", "no request left");
    }
    int err = mrecv("MPI_Imrecv", buf, count, type, msg, r);
    if (err != MPI_SUCCESS) {
        t->requests.release(r);
        return err;
    }
    *req = request_pool::handle_of(r);
    return MPI_SUCCESS;
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return make_persistent("MPI_Send_init", buf, count, type, dest, tag, cm, req, req_kind::send, send_mode::standard);
}
int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return make_persistent("MPI_Ssend_init", buf, count, type, dest, tag, cm, req, req_kind::send, send_mode::sync);
}
int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return make_persistent("MPI_Rsend_init", buf, count, type, dest, tag, cm, req, req_kind::send, send_mode::ready);
}
int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    return make_persistent("MPI_Bsend_init", buf, count, type, dest, tag, cm, req, req_kind::send,
                           send_mode::buffered);
}
int PMPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm cm, MPI_Request* req) {
    return make_persistent("MPI_Recv_init", buf, count, type, source, tag, cm, req, req_kind::recv,
                           send_mode::standard);
}

int PMPI_Start(MPI_Request* req) { return start_one(req); }

int PMPI_Startall(int count, MPI_Request reqs[]) {
    if (count < 0 || (count > 0 && reqs == nullptr)) {
        return raise(MPI_COMM_WORLD, count < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Startall", "bad request array");
    }
    for (int i = 0; i < count; ++i) {
        if (int err = start_one(&reqs[i]); err != MPI_SUCCESS) {
            return err;
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void* buf, int size) {
    task* t = current();
    if (t == nullptr || buf == nullptr || size < 0) {
        return raise(MPI_COMM_WORLD, size < 0 ? MPI_ERR_COUNT : MPI_ERR_BUFFER, "MPI_Buffer_attach",
                     "invalid buffer or size %d", size);
    }
    std::lock_guard<std::mutex> g(bsend_lock);
    if (buffer_of(t) != nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
    }
    bsend_buffer b;
    b.base = static_cast<char*>(buf);
    b.size = static_cast<std::size_t>(size);
    bsend_buffers.emplace_back(t, std::move(b));
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
    task* t = current();
    if (t == nullptr || buffer_addr == nullptr || size == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach", "null argument");
    }
    // Waits until every buffered message has left the buffer (MPI 3.1 section 3.6).
    for (;;) {
        {
            std::lock_guard<std::mutex> g(bsend_lock);
            bsend_buffer* b = buffer_of(t);
            if (b == nullptr) {
                *static_cast<void**>(buffer_addr) = nullptr;
                *size = 0;
                return MPI_SUCCESS;
            }
            if (b->used.empty()) {
                *static_cast<void**>(buffer_addr) = b->base;
                *size = static_cast<int>(b->size);
                bsend_buffers.erase(std::find_if(bsend_buffers.begin(), bsend_buffers.end(),
                                                 [t](const auto& e) { return e.first == t; }));
                return MPI_SUCCESS;
            }
        }
        // Blocks still in use belong to sends that complete on their own; reap those that did.
        t->requests.reap();
        mpc::sched::sleep_for(std::chrono::microseconds(50));
    }
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm) {
    checked k = check_args("MPI_Bsend", buf, count, type, dest, tag, cm, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (dest == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    request* r = k.self->requests.alloc();
    if (r == nullptr) {
        return raise(cm, MPI_ERR_NO_MEM, "MPI_Bsend", "no request left");
    }
    if (int err = start_bsend("MPI_Bsend", k, buf, dest, tag, r); err != MPI_SUCCESS) {
        k.self->requests.release(r);
        return err;
    }
    k.self->requests.orphan(r);  // completes on its own; its block is released when reaped
    return MPI_SUCCESS;
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm cm, MPI_Request* req) {
    checked k = check_args("MPI_Ibsend", buf, count, type, dest, tag, cm, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int err = MPI_SUCCESS;
    request* r = new_request("MPI_Ibsend", k, cm, req, &err);
    if (r == nullptr) {
        return err;
    }
    r->kind = req_kind::send;
    if (dest == MPI_PROC_NULL) {
        r->complete();
    } else if (err = start_bsend("MPI_Ibsend", k, buf, dest, tag, r); err != MPI_SUCCESS) {
        k.self->requests.release(r);
        return err;
    }
    *req = request_pool::handle_of(r);
    return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* h) {
    request* r = nullptr;
    if (int err = resolve("MPI_Cancel", h, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel", "MPI_REQUEST_NULL");
    }
    if (r->kind == req_kind::generalized) {
        if (r->greq.cancel != nullptr) {
            return r->greq.cancel(r->greq.state, r->is_done() ? 1 : 0);
        }
        return MPI_SUCCESS;
    }
    // A posted receive that has not matched is removed and completes as cancelled; so is a
    // rendezvous send (large, or synchronous) whose message no receive has taken yet. Other
    // sends have completed already (eager) or will complete normally, as the standard allows.
    if (inactive(r) || r->is_done()) {
        return MPI_SUCCESS;
    }
    if (remote::is_remote_send(r)) {
        remote::cancel_send(r);  // completes it as cancelled when the receiver withdrew it
        return MPI_SUCCESS;
    }
    bool removed = r->kind == req_kind::recv ? current()->engine.cancel(r)
                                             : r->queued_at != nullptr && r->queued_at->cancel_send(r);
    if (removed) {
        set_status(&r->status, r->kind == req_kind::recv ? r->source : MPI_ANY_SOURCE,
                   r->kind == req_kind::recv ? r->tag : MPI_ANY_TAG, 0, MPI_SUCCESS);
        r->status.mpc_count_hi_and_cancelled |= 1;
        r->complete();
    }
    return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* st, int* flag) {
    if (st == nullptr || flag == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled", "null argument");
    }
    *flag = cancelled(*st) ? 1 : 0;
    return MPI_SUCCESS;
}

int PMPI_Request_get_status(MPI_Request h, int* flag, MPI_Status* st) {
    if (flag == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status", "null flag pointer");
    }
    MPI_Request copy = h;
    request* r = nullptr;
    if (int err = resolve("MPI_Request_get_status", &copy, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr || inactive(r)) {
        *flag = 1;
        empty_status(st);
        return MPI_SUCCESS;
    }
    *flag = r->is_done() ? 1 : 0;
    if (*flag != 0) {
        if (r->kind == req_kind::generalized && r->greq.query != nullptr) {
            r->greq.query(r->greq.state, &r->status);
        }
        copy_status(st, *r);
    } else {
        mpc::mpi::p2p::poll_yield();
    }
    return MPI_SUCCESS;
}

int PMPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    if (incount < 0 || outcount == nullptr || (incount > 0 && (reqs == nullptr || indices == nullptr))) {
        return raise(MPI_COMM_WORLD, incount < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Testsome", "bad arguments");
    }
    int done = 0;
    bool any_active = false;
    int result = MPI_SUCCESS;
    for (int i = 0; i < incount; ++i) {
        request* r = nullptr;
        if (int err = resolve_active("MPI_Testsome", &reqs[i], &r); err != MPI_SUCCESS) {
            return err;
        }
        if (r == nullptr) {
            continue;
        }
        any_active = true;
        if (r->is_done()) {
            MPI_Status* st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[done];
            note_in_status(sts, done, finish(&reqs[i], r, st), &result);
            indices[done++] = i;
        }
    }
    *outcount = any_active ? done : MPI_UNDEFINED;
    if (any_active && done == 0) {
        mpc::mpi::p2p::poll_yield();
    }
    return result;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status sts[]) {
    for (;;) {
        int err = PMPI_Testsome(incount, reqs, outcount, indices, sts);
        if (err != MPI_SUCCESS || *outcount != 0) {
            return err;
        }
        // Park until one completes (MPI_Waitany does exactly that), then collect them all.
        int index = 0;
        MPI_Status st;
        err = MPI_Waitany(incount, reqs, &index, &st);
        if (err != MPI_SUCCESS && err != MPI_ERR_IN_STATUS) {
            return err;
        }
        if (index == MPI_UNDEFINED) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        int more = 0;
        err = PMPI_Testsome(incount, reqs, &more, indices + 1,
                            sts == MPI_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : sts + 1);
        indices[0] = index;
        if (sts != MPI_STATUSES_IGNORE) {
            sts[0] = st;
        }
        *outcount = 1 + (more == MPI_UNDEFINED ? 0 : more);
        return err;
    }
}

int PMPI_Grequest_start(int (*query_fn)(void*, MPI_Status*), int (*free_fn)(void*), int (*cancel_fn)(void*, int),
                        void* extra_state, MPI_Request* req) {
    task* t = current();
    if (t == nullptr || req == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Grequest_start", "null request pointer or not in a rank");
    }
    request* r = t->requests.alloc();
    if (r == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Grequest_start", "no request left");
    }
    r->kind = req_kind::generalized;
    r->greq = {query_fn, free_fn, cancel_fn, extra_state};
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    *req = request_pool::handle_of(r);
    return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request h) {
    MPI_Request copy = h;
    request* r = nullptr;
    if (int err = resolve("MPI_Grequest_complete", &copy, &r); err != MPI_SUCCESS) {
        return err;
    }
    if (r == nullptr || r->kind != req_kind::generalized) {
        return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Grequest_complete", "not a generalized request");
    }
    r->complete();
    return MPI_SUCCESS;
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                          MPI_Comm cm, MPI_Status* st) {
    // The message received replaces the one sent: send from a packed copy, receive in place.
    checked k = check_args("MPI_Sendrecv_replace", buf, count, type, dest, stag, cm, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    checked kr = check_args("MPI_Sendrecv_replace", buf, count, type, source, rtag, cm, true);
    if (kr.err != MPI_SUCCESS) {
        return kr.err;
    }
    std::vector<char> copy(k.data.bytes);
    if (!copy.empty()) {
        segment seg(buf, k.data.count, *k.data.type);
        seg.pack(copy.data(), static_cast<count_t>(copy.size()));
    }
    request rr;
    request rs;
    start_recv(kr, buf, source, rtag, &rr);
    start_send(k, copy.data(), dest, stag, &rs, send_mode::standard);
    rs.wait("MPI_Sendrecv_replace");
    rr.wait("MPI_Sendrecv_replace");
    copy_status(st, rr);
    return rr.status.MPI_ERROR == MPI_SUCCESS
               ? MPI_SUCCESS
               : raise(cm, rr.status.MPI_ERROR, "MPI_Sendrecv_replace", "received message truncated");
}

int PMPI_Status_set_cancelled(MPI_Status* st, int flag) {
    if (st == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled", "null status");
    }
    st->mpc_count_hi_and_cancelled = (st->mpc_count_hi_and_cancelled & ~1) | (flag != 0 ? 1 : 0);
    return MPI_SUCCESS;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info /*info*/, void* baseptr) {
    if (size < 0 || baseptr == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem", "negative size or null pointer");
    }
    void* p = std::malloc(size == 0 ? 1 : static_cast<std::size_t>(size));
    if (p == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes",
                     static_cast<long>(size));
    }
    *static_cast<void**>(baseptr) = p;
    return MPI_SUCCESS;
}

int PMPI_Free_mem(void* base) {
    std::free(base);
    return MPI_SUCCESS;
}

int MPI_Sendrecv_replace(void*, int, MPI_Datatype, int, int, int, int, MPI_Comm, MPI_Status*)
    MPC_WEAK(MPI_Sendrecv_replace);
int MPI_Status_set_cancelled(MPI_Status*, int) MPC_WEAK(MPI_Status_set_cancelled);
int MPI_Alloc_mem(MPI_Aint, MPI_Info, void*) MPC_WEAK(MPI_Alloc_mem);
int MPI_Free_mem(void*) MPC_WEAK(MPI_Free_mem);
int MPI_Mprobe(int, int, MPI_Comm, MPI_Message*, MPI_Status*) MPC_WEAK(MPI_Mprobe);
int MPI_Improbe(int, int, MPI_Comm, int*, MPI_Message*, MPI_Status*) MPC_WEAK(MPI_Improbe);
int MPI_Mrecv(void*, int, MPI_Datatype, MPI_Message*, MPI_Status*) MPC_WEAK(MPI_Mrecv);
int MPI_Imrecv(void*, int, MPI_Datatype, MPI_Message*, MPI_Request*) MPC_WEAK(MPI_Imrecv);
int MPI_Send_init(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Send_init);
int MPI_Ssend_init(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Ssend_init);
int MPI_Rsend_init(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Rsend_init);
int MPI_Bsend_init(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Bsend_init);
int MPI_Recv_init(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Recv_init);
int MPI_Start(MPI_Request*) MPC_WEAK(MPI_Start);
int MPI_Startall(int, MPI_Request[]) MPC_WEAK(MPI_Startall);
int MPI_Buffer_attach(void*, int) MPC_WEAK(MPI_Buffer_attach);
int MPI_Buffer_detach(void*, int*) MPC_WEAK(MPI_Buffer_detach);
int MPI_Bsend(const void*, int, MPI_Datatype, int, int, MPI_Comm) MPC_WEAK(MPI_Bsend);
int MPI_Ibsend(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*) MPC_WEAK(MPI_Ibsend);
int MPI_Cancel(MPI_Request*) MPC_WEAK(MPI_Cancel);
int MPI_Test_cancelled(const MPI_Status*, int*) MPC_WEAK(MPI_Test_cancelled);
int MPI_Request_get_status(MPI_Request, int*, MPI_Status*) MPC_WEAK(MPI_Request_get_status);
int MPI_Testsome(int, MPI_Request[], int*, int[], MPI_Status[]) MPC_WEAK(MPI_Testsome);
int MPI_Waitsome(int, MPI_Request[], int*, int[], MPI_Status[]) MPC_WEAK(MPI_Waitsome);
int MPI_Grequest_start(int (*)(void*, MPI_Status*), int (*)(void*), int (*)(void*, int), void*, MPI_Request*)
    MPC_WEAK(MPI_Grequest_start);
int MPI_Grequest_complete(MPI_Request) MPC_WEAK(MPI_Grequest_complete);
}
