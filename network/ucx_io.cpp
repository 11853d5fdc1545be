/// \file
/// The message paths of the UCX transport: send (ucp_am_send_nbx with the envelope as header),
/// the receive handler, and keep/release/fetch of arrived messages. Design notes in ucx.hpp.
#include <atomic>
#include <cstring>

#include "lib/log.hpp"
#include "network/ucx_detail.hpp"

namespace mpc::net {

namespace {

constexpr unsigned am_id = 0;  // one active-message id for messages: the envelope says the rest

/// UCX requests started and not completed, for in_flight(). One count for the module: the request
/// callbacks only get the completion record, and a process has one transport (tests with two
/// see each other's requests: in_flight() is a hint for polling, not a correctness matter).
std::atomic<int> g_inflight{0};

}  // namespace

void detail::complete(completion* c, ucs_status_t st) noexcept { c->fn(c, detail::to_status(st)); }

void detail::request_done(void* req, completion* c, ucs_status_t st) noexcept {
    ucp_request_free(req);  // released once the callback returns
    g_inflight.fetch_sub(1, std::memory_order_relaxed);
    complete(c, st);
}

status detail::started(ucs_status_ptr_t r, completion* c, const char* what) noexcept {
    if (r == nullptr) {
        complete(c, UCS_OK);
        return {};
    }
    if (UCS_PTR_IS_ERR(r)) {
        return detail::ucx_error(what, UCS_PTR_STATUS(r));
    }
    // A request: counted until its callback runs (it may have run already, inside the call
    // that started it, and decremented first: the count is only ever read as "nonzero").
    g_inflight.fetch_add(1, std::memory_order_relaxed);
    return {};
}

namespace {
using detail::complete;
using detail::request_done;
using detail::started;
}  // namespace

status ucx_transport::install_am_handler() noexcept {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = am_id;
    // Whole messages only; eager data persistent (always keepable) only when asked for: else
    // UCX hands over its receive buffer where it can, and the handler copies once from there
    // (ucx_options::persistent_eager).
    const std::uint32_t persistent = static_cast<std::uint32_t>(UCP_AM_FLAG_PERSISTENT_DATA);
    hp.flags = UCP_AM_FLAG_WHOLE_MSG | (opts_.persistent_eager ? persistent : 0U);
    hp.arg = this;
    hp.cb = [](void* arg, const void* header, std::size_t header_length, void* data, std::size_t length,
               const ucp_am_recv_param_t* param) -> ucs_status_t {
        auto* self = static_cast<ucx_transport*>(arg);
        if (header_length != sizeof(envelope)) {
            MPC_LOG(error, net, "dropped a message with a %zu-byte header (not an envelope)", header_length);
            return UCS_OK;
        }
        envelope env;
        std::memcpy(&env, header, sizeof env);
        incoming msg;
        msg.owner_ = self;
        msg.data_ = data;
        msg.length_ = length;
        msg.rndv_ = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
        msg.persistent_ = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) != 0;
        if (self->opts_.on_recv == nullptr) {
            MPC_LOG(warn, net, "dropped a message from rank %d: no receive handler", env.source);
            return UCS_OK;
        }
        self->opts_.on_recv(self->opts_.recv_arg, env, msg);
        return msg.kept_ ? UCS_INPROGRESS : UCS_OK;
    };
    ucs_status_t st = ucp_worker_set_am_recv_handler(worker_, &hp);
    if (st != UCS_OK) {
        return detail::ucx_error("ucp_worker_set_am_recv_handler", st);
    }
    return {};
}

status ucx_transport::send(int id, const envelope& env, const void* data, std::size_t len, completion* c) noexcept {
    peer* p = find_peer(id);
    if (p == nullptr) {
        return {errc::invalid_argument, "send to a peer that is not connected"};
    }
    if (c == nullptr || c->fn == nullptr || (data == nullptr && len != 0)) {
        return {errc::invalid_argument, "send without a completion or without data"};
    }
    if (p->failed.load(std::memory_order_acquire)) {
        return {errc::internal, "send to a peer that failed"};
    }
    c->header = env;
    if (batch_cap_ != 0 && !detail::tl_in_handlers) {
        return send_ordered(p, data, len, c);  // ucx_batch.cpp
    }
    // Unbatched, or from a handler (ucx_detail.hpp, tl_in_handlers): the engine sends only acks
    // and cancel answers there, which no order binds to the peer's batched messages.
    return send_now(p, data, len, c);
}

status ucx_transport::send_now(peer* p, const void* data, std::size_t len, completion* c) noexcept {
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = (rndv_thresh_ != 0 && len >= rndv_thresh_) ? UCP_AM_SEND_FLAG_RNDV
                : (p->eager_max != 0 && len <= p->eager_max) ? UCP_AM_SEND_FLAG_EAGER
                                                             : 0;
    prm.user_data = c;
    prm.cb.send = [](void* req, ucs_status_t st, void* user) {
        request_done(req, static_cast<completion*>(user), st);
    };
    return started(ucp_am_send_nbx(p->ep, am_id, &c->header, sizeof(envelope), data, len, &prm), c,
                   "ucp_am_send_nbx");
}

int ucx_transport::in_flight() const noexcept { return g_inflight.load(std::memory_order_relaxed); }

void ucx_transport::release(incoming& msg) noexcept {
    if (!msg.kept_) {
        return;
    }
    msg.kept_ = false;
    ucp_am_data_release(worker_, msg.data_);
}

status ucx_transport::fetch(incoming& msg, void* buf, std::size_t cap, completion* c) noexcept {
    if (!msg.kept_) {
        return {errc::invalid_argument, "fetch of a message that was not kept"};
    }
    if (cap < msg.length_ || (buf == nullptr && msg.length_ != 0)) {
        return {errc::invalid_argument, "fetch into a buffer smaller than the message"};
    }
    if (c == nullptr || c->fn == nullptr) {
        return {errc::invalid_argument, "fetch without a completion"};
    }
    msg.kept_ = false;  // from here UCX owns the descriptor, whatever happens
    if (!msg.rndv_) {
        if (msg.length_ != 0) {
            std::memcpy(buf, msg.data_, msg.length_);
        }
        ucp_am_data_release(worker_, msg.data_);
        complete(c, UCS_OK);
        return {};
    }
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.user_data = c;
    prm.cb.recv_am = [](void* req, ucs_status_t st, std::size_t, void* user) {
        request_done(req, static_cast<completion*>(user), st);
    };
    return started(ucp_am_recv_data_nbx(worker_, msg.data_, buf, msg.length_, &prm), c, "ucp_am_recv_data_nbx");
}

}  // namespace mpc::net
