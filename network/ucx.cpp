/// \file
/// The UCX transport: context, worker, endpoints, shutdown. The message paths (send, receive
/// handler, keep/release/fetch) are in ucx_io.cpp. Design notes in ucx.hpp.
#include "network/ucx.hpp"

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "network/ucx_detail.hpp"

namespace mpc::net {

namespace {

// The frame around UCX's worker address: a magic and the length, so that connect() refuses bytes
// that address() did not make (UCX itself cannot: ucp_ep_create takes no address length).
constexpr std::uint64_t address_magic = 0x3141'5844'4355'504dULL;  // any fixed value
struct address_frame {
    std::uint64_t magic;
    std::uint64_t length;  // bytes of UCX address after the frame
};

/// UCX settings that the transport changes from UCX's defaults, each unless the environment sets
/// it (as Open MPI and MPICH set UCX defaults of their own): the environment variable, the name
/// ucp_config_modify() takes for it (a transport's setting by its name inside the transport's
/// table: "PUT_ENABLE", not "TCP_PUT_ENABLE", which UCX 1.13 accepts and then ignores with an
/// "invalid configuration" warning), the value.
/// - UCX_TCP_PUT_ENABLE=n: UCX's rendezvous over TCP sends the data as active-message fragments
///   after RTS and RTR (three one-way trips) instead of through the TCP transport's emulated PUT
///   (RTS, RTR, the data, the PUT's acknowledgement, ATP: five). The transport uses no UCX RMA:
///   the PUT lane served only rendezvous messages.
/// - UCX_TCP_RX_SEG_SIZE=128k (UCX: 64k): the largest zero-copy fragment, so those rendezvous
///   fragments of 128 KiB instead of 64 KiB (33 `sendmsg` per 4 MiB message instead of 65); with
///   64 KiB ones, dropping the PUT lost bandwidth from 1 MiB under a window of messages. The
///   price: a 64 KiB eager message leaves in one fragment instead of two, which UCX copied as
///   persistent data; a 32-64 KiB ping-pong took 1.1-1.5x as long until eager data over TCP
///   was no longer asked persistent (ucx_options::persistent_eager).
/// Both, between two nodes against UCX's defaults (RESULTS.md, "Two nodes over TCP: large
/// messages"): 1-4 MiB ping-pong 0.35-0.8x the time, 4 MiB window bandwidth 1.2-1.5x.
struct ucx_default {
    const char* env;
    const char* key;
    const char* value;
};
constexpr ucx_default ucx_defaults[] = {
    {"UCX_TCP_PUT_ENABLE", "PUT_ENABLE", "n"},
    {"UCX_TCP_RX_SEG_SIZE", "RX_SEG_SIZE", "128k"},
};

}  // namespace

status detail::ucx_error(const char* what, ucs_status_t st) noexcept {
    MPC_LOG(error, net, "%s: %s", what, ucs_status_string(st));
    return {errc::internal, ucs_status_string(st)};
}

status detail::to_status(ucs_status_t st) noexcept {
    if (st == UCS_OK) {
        return {};
    }
    return {errc::internal, ucs_status_string(st)};
}

result<std::unique_ptr<ucx_transport>> ucx_transport::create(const ucx_options& opts) noexcept {
    if (opts.max_peers <= 0) {
        return status{errc::invalid_argument, "ucx_options::max_peers must be positive"};
    }
    std::unique_ptr<ucx_transport> t(new (std::nothrow) ucx_transport());
    if (!t) {
        return status{errc::no_memory, "ucx transport"};
    }
    if (status st = t->init(opts); !st) {
        return st;  // the destructor releases what init() made
    }
    return t;
}

status ucx_transport::init(const ucx_options& opts) noexcept {
    opts_ = opts;
    auto thresh = config::get_size("MPC_NET_UCX_RNDV_THRESH");
    auto timeout = config::get_int("MPC_NET_UCX_CLOSE_TIMEOUT");
    auto detect = config::get_bool("MPC_NET_UCX_PEER_FAILURE");
    auto tcp_eager = config::get_size("MPC_NET_UCX_TCP_EAGER");
    if (!thresh || !timeout || !detect || !tcp_eager) {
        return !thresh ? thresh.error() : !timeout ? timeout.error() : !detect ? detect.error() : tcp_eager.error();
    }
    rndv_thresh_ = *thresh;
    tcp_eager_ = *tcp_eager;
    close_timeout_ms_ = static_cast<long>(*timeout);
    detect_failure_ = opts.detect_peer_failure || *detect;

    peers_.reset(new (std::nothrow) std::atomic<peer*>[static_cast<std::size_t>(opts.max_peers)]);
    if (!peers_) {
        return {errc::no_memory, "ucx transport peer table"};
    }
    for (int i = 0; i < opts.max_peers; ++i) {
        peers_[i].store(nullptr, std::memory_order_relaxed);
    }

    ucp_config_t* cfg = nullptr;
    ucs_status_t st = ucp_config_read(nullptr, nullptr, &cfg);  // UCX_* variables keep working
    if (st != UCS_OK) {
        return detail::ucx_error("ucp_config_read", st);
    }
    // Our defaults for UCX's own settings, each only where the environment does not set it
    // (docs/architecture.md, "UCX settings of the transport").
    for (const ucx_default& d : ucx_defaults) {
        if (std::getenv(d.env) != nullptr) {
            continue;
        }
        if (st = ucp_config_modify(cfg, d.key, d.value); st != UCS_OK) {
            MPC_LOG(warn, net, "UCX refused the setting %s=%s: %s", d.env, d.value, ucs_status_string(st));
        }
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    st = ucp_init(&params, cfg, &context_);
    ucp_config_release(cfg);
    if (st != UCS_OK) {
        context_ = nullptr;
        return detail::ucx_error("ucp_init", st);
    }
    if (status s = init_worker(); !s) {
        return s;
    }
    if (status s = init_batches(); !s) {
        return s;
    }
    return init_address();
}

status ucx_transport::init_worker() noexcept {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_MULTI;
    ucs_status_t st = ucp_worker_create(context_, &wp, &worker_);
    if (st != UCS_OK) {
        worker_ = nullptr;
        return detail::ucx_error("ucp_worker_create", st);
    }
    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE | UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
    st = ucp_worker_query(worker_, &attr);
    if (st != UCS_OK) {
        return detail::ucx_error("ucp_worker_query", st);
    }
    if (attr.thread_mode != UCS_THREAD_MODE_MULTI) {
        // Several VPs progress the worker: a UCX built without --enable-mt cannot serve them.
        MPC_LOG(error, net, "UCX granted thread mode %d, not MULTI (UCX built without --enable-mt?)",
                static_cast<int>(attr.thread_mode));
        return {errc::unsupported, "UCX without multi-thread support"};
    }
    if (attr.max_am_header < sizeof(envelope)) {
        MPC_LOG(error, net, "UCX allows %zu-byte active-message headers, the envelope needs %zu", attr.max_am_header,
                sizeof(envelope));
        return {errc::unsupported, "UCX active-message header too small for the envelope"};
    }
    st = ucp_worker_get_efd(worker_, &efd_);
    if (st != UCS_OK) {
        efd_ = -1;
        return detail::ucx_error("ucp_worker_get_efd", st);
    }
    return install_am_handler();
}

status ucx_transport::init_address() noexcept {
    ucp_address_t* addr = nullptr;
    std::size_t len = 0;
    ucs_status_t st = ucp_worker_get_address(worker_, &addr, &len);
    if (st != UCS_OK) {
        return detail::ucx_error("ucp_worker_get_address", st);
    }
    address_frame f{address_magic, len};
    try {
        address_.resize(sizeof f + len);
    } catch (...) {
        ucp_worker_release_address(worker_, addr);
        return {errc::no_memory, "ucx worker address"};
    }
    std::memcpy(address_.data(), &f, sizeof f);
    std::memcpy(address_.data() + sizeof f, addr, len);
    ucp_worker_release_address(worker_, addr);
    MPC_LOG(debug, net, "ucx transport ready: worker address %zu bytes, rendezvous threshold %zu", len, rndv_thresh_);
    return {};
}

ucx_transport::peer* ucx_transport::find_peer(int id) const noexcept {
    if (id < 0 || id >= opts_.max_peers || !peers_) {
        return nullptr;
    }
    return peers_[id].load(std::memory_order_acquire);
}

std::string ucx_transport::route(int id) const {
    const peer* p = find_peer(id);
    return p != nullptr ? p->lanes : std::string();
}

bool ucx_transport::peer_failed(int id) const noexcept {
    peer* p = find_peer(id);
    return p != nullptr && p->failed.load(std::memory_order_acquire);
}

namespace {

/// Which UCX transports carry the messages of `ep`, from the "lane[i]:" lines of
/// ucp_ep_print_info ("  lane[0]:  3:sysv/memory.0 md[2] -> md[2]/sysv/sysdev[255] am am_bw#0"
/// becomes "sysv/memory.0 (am am_bw#0)"), comma-separated.
std::string describe_lanes(ucp_ep_h ep) {
    char* text = nullptr;
    std::size_t size = 0;
    FILE* f = ::open_memstream(&text, &size);
    if (f == nullptr) {
        return {};
    }
    ucp_ep_print_info(ep, f);
    std::fclose(f);
    std::string lanes;
    char* save = nullptr;
    for (char* line = ::strtok_r(text, "\n", &save); line != nullptr; line = ::strtok_r(nullptr, "\n", &save)) {
        const char* lane = std::strstr(line, "lane[");
        const char* colon = lane != nullptr ? std::strchr(lane, ':') : nullptr;
        const char* used = std::strrchr(line, ']');
        if (colon == nullptr || used == nullptr || used < colon) {
            continue;
        }
        const char* tl = colon + 1 + std::strspn(colon + 1, " ");
        tl += std::strspn(tl, "0123456789");  // the resource index "3:"
        tl += *tl == ':' ? 1 : 0;
        lanes += (lanes.empty() ? "" : ", ") + std::string(tl, std::strcspn(tl, " ")) + " (" +
                 std::string(used + 1 + std::strspn(used + 1, " ")) + ")";
    }
    std::free(text);
    return lanes;
}

/// Whether the lane carrying active messages in describe_lanes()'s text is a TCP one
/// ("tcp/eth0.0 (am am_bw#0 wireup)").
bool am_over_tcp(const std::string& lanes) {
    for (std::size_t at = 0; at < lanes.size();) {
        std::size_t end = lanes.find(", ", at);
        end = end == std::string::npos ? lanes.size() : end;
        const std::string_view lane = std::string_view(lanes).substr(at, end - at);
        const std::size_t open = lane.find('(');
        if (open != std::string_view::npos) {
            // The words between the parentheses, each looked at whole ("am_bw" is not "am").
            std::string_view uses = lane.substr(open + 1, lane.find(')', open) - open - 1);
            while (!uses.empty()) {
                const std::size_t space = uses.find(' ');
                if (uses.substr(0, space) == "am") {
                    return lane.substr(0, 4) == "tcp/";
                }
                uses = space == std::string_view::npos ? std::string_view() : uses.substr(space + 1);
            }
        }
        at = end + 2;
    }
    return false;
}

}  // namespace

status ucx_transport::connect(int id, const void* addr, std::size_t len) noexcept {
    if (id < 0 || id >= opts_.max_peers) {
        return {errc::invalid_argument, "peer id out of range"};
    }
    address_frame f{};
    if (addr == nullptr || len < sizeof f) {
        return {errc::invalid_argument, "peer address too short"};
    }
    std::memcpy(&f, addr, sizeof f);
    if (f.magic != address_magic || f.length != len - sizeof f || f.length == 0) {
        return {errc::invalid_argument, "not a worker address made by ucx_transport::address()"};
    }
    if (find_peer(id) != nullptr) {
        return {errc::invalid_argument, "peer already connected"};
    }
    auto* p = new (std::nothrow) peer;
    if (p == nullptr) {
        return {errc::no_memory, "ucx peer"};
    }
    p->owner = this;
    p->id = id;
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = reinterpret_cast<const ucp_address_t*>(static_cast<const std::byte*>(addr) + sizeof f);
    // See ucx_options::detect_peer_failure: PEER mode rules out UCX's shared-memory transports.
    ep.err_mode = detect_failure_ ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    ep.err_handler.cb = [](void* arg, ucp_ep_h, ucs_status_t why) {
        auto* pp = static_cast<peer*>(arg);
        if (pp->failed.exchange(true, std::memory_order_acq_rel)) {
            return;
        }
        MPC_LOG(debug, net, "peer %d failed: %s", pp->id, ucs_status_string(why));
        const ucx_options& o = pp->owner->opts_;
        if (o.on_peer_failed != nullptr) {
            o.on_peer_failed(o.peer_failed_arg, pp->id, ucs_status_string(why));
        }
    };
    ep.err_handler.arg = p;
    ucs_status_t st = ucp_ep_create(worker_, &ep, &p->ep);
    if (st != UCS_OK) {
        delete p;
        return detail::ucx_error("ucp_ep_create", st);
    }
    try {
        p->lanes = describe_lanes(p->ep);
        p->eager_max = am_over_tcp(p->lanes) ? tcp_eager_ : 0;
    } catch (const std::bad_alloc&) {  // for messages and the TCP eager limit only: go on without
    }
    peer* expected = nullptr;
    if (!peers_[id].compare_exchange_strong(expected, p, std::memory_order_acq_rel)) {
        // Another thread connected the same peer meanwhile: keep theirs.
        ucp_request_param_t cp{};
        cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        cp.flags = UCP_EP_CLOSE_FLAG_FORCE;
        detail::wait_request(worker_, ucp_ep_close_nbx(p->ep, &cp), close_timeout_ms_);
        delete p;
        return {errc::invalid_argument, "peer already connected"};
    }
    MPC_LOG(debug, net, "connected to peer %d over %s%s", id, p->lanes.empty() ? "?" : p->lanes.c_str(),
            p->eager_max != 0 ? ", eager up to the TCP limit" : "");
    return {};
}

int ucx_transport::progress() noexcept {
    if (worker_ == nullptr || progressing_.exchange(true, std::memory_order_acquire)) {
        return 0;
    }
    int n = 0;
    if (batch_cap_ != 0) {  // a new epoch: the next message to each peer leaves at once
        epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        n = open_batches_.load(std::memory_order_relaxed) > 0 ? flush_batches() : 0;
    }
    detail::tl_in_handlers = true;
    n += static_cast<int>(ucp_worker_progress(worker_));
    detail::tl_in_handlers = false;
    progressing_.store(false, std::memory_order_release);
    return n;
}

bool ucx_transport::arm() noexcept {
    ucs_status_t st = ucp_worker_arm(worker_);
    MPC_LOG(trace, net, "ucp_worker_arm: %s", ucs_status_string(st));
    if (st == UCS_OK) {
        return true;
    }
    if (st != UCS_ERR_BUSY) {
        detail::ucx_error("ucp_worker_arm", st).ignore();
    }
    return false;
}

/// Waits for `req` (a ucp_ep_close_nbx or flush request) by progressing, at most `timeout_ms`;
/// frees it (on timeout too: UCX then releases it when it completes or with the worker).
bool detail::wait_request(ucp_worker* worker, void* req, long timeout_ms) noexcept {
    if (req == nullptr || UCS_PTR_IS_ERR(req)) {
        return true;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
        if (std::chrono::steady_clock::now() > deadline) {
            ucp_request_free(req);  // UCX releases it when it completes (or with the worker)
            return false;
        }
    }
    ucp_request_free(req);
    return true;
}

void ucx_transport::close_endpoints(long timeout_ms) noexcept {
    // Start every close first, so that peers' acknowledgements overlap, then wait for them all.
    std::vector<std::pair<int, void*>> pending;
    for (int i = 0; i < opts_.max_peers; ++i) {
        peer* p = peers_[i].load(std::memory_order_acquire);
        if (p == nullptr) {
            continue;
        }
        ucp_request_param_t cp{};
        cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        cp.flags = p->failed.load(std::memory_order_acquire) ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        void* req = ucp_ep_close_nbx(p->ep, &cp);
        p->ep = nullptr;
        if (UCS_PTR_IS_ERR(req)) {
            MPC_LOG(debug, net, "close of peer %d: %s", i, ucs_status_string(UCS_PTR_STATUS(req)));
        } else if (req != nullptr) {
            try {
                pending.emplace_back(i, req);
            } catch (...) {
                detail::wait_request(worker_, req, timeout_ms);
            }
        }
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (auto& [id, req] : pending) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (!detail::wait_request(worker_, req, left.count() > 0 ? static_cast<long>(left.count()) : 0)) {
            MPC_LOG(warn, net, "peer %d did not acknowledge the endpoint close within %ld ms; abandoned", id,
                    timeout_ms);
        }
    }
}

status ucx_transport::shutdown() noexcept {
    if (worker_ != nullptr) {
        if (peers_) {
            flush_batches();
            close_endpoints(close_timeout_ms_);
        }
        ucp_worker_destroy(worker_);
        worker_ = nullptr;
        efd_ = -1;
    }
    free_batches();  // after the worker: no batch is in flight any more
    if (peers_) {  // after the worker: no error handler can run any more
        for (int i = 0; i < opts_.max_peers; ++i) {
            delete peers_[i].exchange(nullptr, std::memory_order_acq_rel);
        }
    }
    if (context_ != nullptr) {
        ucp_cleanup(context_);
        context_ = nullptr;
    }
    return {};
}

ucx_transport::~ucx_transport() { shutdown().ignore(); }

}  // namespace mpc::net

// The module's entry point (transport.hpp): libmpc looks it up with dlsym.
extern "C" __attribute__((visibility("default"))) mpc::net::transport* mpc_net_ucx_create(
    const mpc::net::ucx_options* opts, char* why, std::size_t why_len) {
    auto t = mpc::net::ucx_transport::create(*opts);
    if (!t) {
        if (why != nullptr && why_len > 0) {
            std::snprintf(why, why_len, "%s", t.error().reason());
        }
        return nullptr;
    }
    return t->release();
}
