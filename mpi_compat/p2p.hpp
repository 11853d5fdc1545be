/// \file
/// Shared pieces of the point-to-point bindings (p2p.cpp, p2p_ext.cpp).
#pragma once

#include <mpi.h>

#include <cstddef>

#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi::p2p {

/// What a polling call does when it found nothing: drive the transport to other processes
/// (if any), then let the other ULTs of the VP run.
inline void poll_yield() noexcept {
    remote::poll();
    sched::yield();
}

/// Result of the argument checks shared by sends and receives.
struct checked {
    task* self = nullptr;
    comm* c = nullptr;
    typed_buf data{};  ///< the buffer as a typed layout (data.bytes: packed size)
    int err = MPI_SUCCESS;
};

/// check_args() when some argument is wrong: raises the first failing check (in the order
/// the standard's error classes are usually tested) and returns k with err set.
[[gnu::cold, gnu::noinline]] checked check_args_failed(const char* call, const void* buf, int count, MPI_Datatype type,
                                                       int peer, int tag, MPI_Comm cm, bool is_recv) noexcept;

/// Validates the arguments of a send (is_recv false) or receive; `peer` is dest or source.
/// Inline: every check passes on the message path, and the calls that follow use k's fields
/// from registers (an out-of-line check returning k through memory was a quarter of the
/// instructions of an in-process 0-byte message).
[[gnu::always_inline]] inline checked check_args(const char* call, const void* buf, int count, MPI_Datatype type,
                                                 int peer, int tag, MPI_Comm cm, bool is_recv) noexcept {
    checked k;
    k.self = current();
    k.c = lookup_comm(cm);
    const datatype* dt = k.self != nullptr && k.c != nullptr && count >= 0 ? datatype_for_comm(type) : nullptr;
    if (dt != nullptr) [[likely]] {
        const int size = k.c->peer_count(*k.self);
        const bool peer_ok = static_cast<unsigned>(peer) < static_cast<unsigned>(size) || peer == MPI_PROC_NULL ||
                             (is_recv && peer == MPI_ANY_SOURCE);
        const bool tag_ok = tag >= 0 || (is_recv && tag == MPI_ANY_TAG);
        if (peer_ok && tag_ok && !null_data(buf, count, *dt)) [[likely]] {
            k.data = typed(buf, count, dt);
            return k;
        }
    }
    return check_args_failed(call, buf, count, type, peer, tag, cm, is_recv);
}
/// What the blocking fast paths (MPI_Send, MPI_Recv) know once fast_check() passed.
struct fast_args {
    task* self;
    const comm* c;
    const datatype* type;
    std::size_t bytes;
};

/// The common case of a blocking send or receive, checked in a few instructions: called from
/// a rank, a communicator in world order (MPI_COMM_WORLD and its duplicates: comm rank = world
/// rank), a predefined type that is one contiguous block, a valid rank (or MPI_ANY_SOURCE for
/// a receive), a valid tag (or MPI_ANY_TAG), a buffer unless the count is 0. False when any of
/// these does not hold, for a valid call as for a wrong one: the caller then takes the general
/// path, whose check_args() reports errors. (The general path's checks, the request set-up and
/// the calls between them were two thirds of the instructions of a 0-byte message.)
[[gnu::always_inline]] inline bool fast_check(const void* buf, int count, MPI_Datatype type, int peer, int tag,
                                              MPI_Comm cm, bool is_recv, fast_args* fa) noexcept {
    task* self = current();
    const comm* c = fast_lookup_comm(cm);
    const datatype* dt = fast_block_type(type);
    if (self == nullptr || c == nullptr || count < 0) {
        return false;
    }
    const bool peer_ok = static_cast<unsigned>(peer) < static_cast<unsigned>(c->fast_size) ||
                         (is_recv && peer == MPI_ANY_SOURCE && c->fast_size != 0);
    const bool tag_ok = tag >= 0 || (is_recv && tag == MPI_ANY_TAG);
    if (dt == nullptr || !peer_ok || !tag_ok || (buf == nullptr && count != 0)) {
        return false;
    }
    fa->self = self;
    fa->c = c;
    fa->type = dt;
    fa->bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(dt->size());
    return true;
}

void start_send(const checked& k, const void* buf, int dest, int tag, request* r, send_mode m) noexcept;
void start_recv(const checked& k, void* buf, int source, int tag, request* r) noexcept;
void copy_status(MPI_Status* out, const request& r) noexcept;
void empty_status(MPI_Status* st) noexcept;
/// For the calls that return several statuses (MPI 3.1 section 3.7.5): notes that the request of
/// status sts[i] ended with `err`. The first error turns *result into MPI_ERR_IN_STATUS and
/// writes MPI_SUCCESS into the statuses before it; from then on every status gets its error.
/// Nothing is written while every request succeeds (sts may be MPI_STATUSES_IGNORE).
inline void note_in_status(MPI_Status sts[], int i, int err, int* result) noexcept {
    if (err != MPI_SUCCESS && *result == MPI_SUCCESS) {
        *result = MPI_ERR_IN_STATUS;
        for (int j = 0; j < i && sts != MPI_STATUSES_IGNORE; ++j) {
            sts[j].MPI_ERROR = MPI_SUCCESS;
        }
    }
    if (*result != MPI_SUCCESS && sts != MPI_STATUSES_IGNORE) {
        sts[i].MPI_ERROR = err;
    }
}
/// Completes a table request: copies its status, frees it (persistent: makes it inactive) and
/// sets the handle to MPI_REQUEST_NULL. Returns the request's error.
int finish(MPI_Request* h, request* r, MPI_Status* st) noexcept;
/// A persistent request that is not started.
bool inactive(const request* r) noexcept;
/// Resolves a handle; *r is null for MPI_REQUEST_NULL. Returns an error class.
int resolve(const char* call, MPI_Request* h, request** r) noexcept;
/// resolve(), with *r also null for an inactive persistent request.
int resolve_active(const char* call, MPI_Request* h, request** r) noexcept;
/// Called once per completed request before it is freed (buffered sends release their block),
/// and by MPI_Request_free (`freed`): runs the request's release function
/// (mpc_request_on_release) after a completion, or for a persistent request when freed.
void on_complete(request& r, bool freed = false) noexcept;
/// Keeps the request's datatype alive while the operation runs (released with the request).
void hold_type(request* r, const checked& k) noexcept;
/// A request from the caller's pool for a non-blocking call whose arguments k checked; nullptr
/// with the error class in *err (raised on cm) for a null handle pointer (MPI_ERR_ARG) or when
/// no request is left (MPI_ERR_NO_MEM).
request* new_request(const char* call, const checked& k, MPI_Comm cm, const MPI_Request* req, int* err) noexcept;

}  // namespace mpc::mpi::p2p
