/// \file
/// Internals of the UCX transport shared by ucx.cpp and ucx_io.cpp (includes ucp.h).
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <string>

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
};

namespace detail {

/// Logs "what: UCX's text" and returns errc::internal with UCX's text as the reason.
status ucx_error(const char* what, ucs_status_t st) noexcept;
/// UCX's completion status as ours (no log: the owner of the operation decides).
status to_status(ucs_status_t st) noexcept;
/// Progresses until `req` completes (at most timeout_ms) and frees it; false on timeout.
bool wait_request(ucp_worker* worker, void* req, long timeout_ms) noexcept;

}  // namespace detail
}  // namespace mpc::net
