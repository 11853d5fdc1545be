/// \file
/// Internals of the UCX transport shared by ucx.cpp and ucx_io.cpp (includes ucp.h).
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "lib/spinlock.hpp"
#include "lib/status.hpp"
#include "network/ucx.hpp"

namespace mpc::net {

/// One endpoint to a peer process.
struct ucx_transport::peer {
    ucx_transport* owner = nullptr;
    ucp_ep_h ep = nullptr;
    int id = -1;
    std::atomic<bool> failed{false};
    std::string lanes;  ///< the transports carrying its messages (route())
    std::size_t eager_max = 0;  ///< sent eager up to this many bytes (MPC_NET_UCX_TCP_EAGER); 0: UCX decides
    // Aggregation of small messages (ucx_batch.cpp); the fields below under batch_lock.
    spinlock batch_lock;
    batch* open = nullptr;           ///< the batch being filled, or null
    std::uint64_t last_epoch = ~0ULL;  ///< progress epoch of the last message sent to this peer
    bool listed = false;             ///< in the transport's list of peers with a batch to flush
};

/// A batch: small messages to one peer packed into one active message (ucx_batch.cpp).
struct ucx_transport::batch {
    completion c;           ///< the batch's own send (its fn returns the batch to the pool)
    ucx_transport* owner = nullptr;
    std::size_t used = 0;   ///< bytes of records in data
    alignas(8) std::byte data[1];  ///< batch_cap_ bytes (allocated past the struct)
};

namespace detail {

/// Logs "what: UCX's text" and returns errc::internal with UCX's text as the reason.
status ucx_error(const char* what, ucs_status_t st) noexcept;
/// UCX's completion status as ours (no log: the owner of the operation decides).
status to_status(ucs_status_t st) noexcept;
/// Progresses until `req` completes (at most timeout_ms) and frees it; false on timeout.
bool wait_request(ucp_worker* worker, void* req, long timeout_ms) noexcept;
/// True on a thread inside ucp_worker_progress() of progress(): it holds UCX's worker lock, so
/// a send from a handler there (an ack, a cancel's answer) must not wait for a peer's batch
/// lock, whose holder may be waiting for the worker lock (ucx_batch.cpp).
extern thread_local bool tl_in_handlers;
/// Runs c's completion with UCX's status.
void complete(completion* c, ucs_status_t st) noexcept;
/// What a started UCX operation returned: done at once (the completion runs now), an error (it
/// never runs; logged as `what`), or a request (its callback will run it; counted in flight).
status started(ucs_status_ptr_t r, completion* c, const char* what) noexcept;
/// The callback of requests that started() counted: frees the request, runs the completion.
void request_done(void* req, completion* c, ucs_status_t st) noexcept;

}  // namespace detail
}  // namespace mpc::net
