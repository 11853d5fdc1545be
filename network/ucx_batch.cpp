/// \file
/// Aggregation of small messages in the UCX transport (design in ucx.hpp, "Aggregation").
///
/// A batch is a buffer of records, each the payload's length (8 bytes: an envelope's size is the
/// engine's business, a control message's answer for one), the envelope and the payload padded to 8 bytes,
/// sent as one active message of its own id (am_batch_id), without header, forced eager: a batch
/// larger than one of UCX's 8 KiB TCP segments leaves in fragments (up to four at the
/// default 32 KiB) that UCX reassembles for the handler (UCP_AM_FLAG_WHOLE_MSG: one more copy on
/// the receiving side), which still beats a send per message for 4 KiB ones (RESULTS.md, "Two
/// nodes over TCP: 4 KiB messages in batches"). Per peer, under its batch lock:
/// the batch being filled and the progress epoch of the last message sent to it. Every message
/// to a peer leaves under that lock, and one that is not batched first flushes the peer's batch,
/// so messages leave in the order of the calls (a rank's sends are sequential: MPI's order
/// between two ranks holds). A send from a handler inside progress() (the engine's acks and
/// cancel answers) bypasses the batch and its lock: it runs under UCX's worker lock, and a thread
/// holding the batch lock may be waiting for that one inside ucp_am_send_nbx (a deadlock TSan
/// cannot see: the worker lock is UCX's). The receiver hands each record to the receive handler as an eager
/// message that cannot be kept (the engine copies an unexpected one), then releases the batch.
#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "network/ucx_detail.hpp"

namespace mpc::net {

thread_local bool detail::tl_in_handlers = false;

namespace {

constexpr unsigned am_batch_id = 1;
constexpr std::size_t max_batch_cap = 65536;

constexpr std::size_t record_head = sizeof(std::uint64_t) + sizeof(envelope);

constexpr std::size_t record_bytes(std::size_t len) noexcept { return record_head + ((len + 7) & ~std::size_t{7}); }

}  // namespace

status ucx_transport::init_batches() noexcept {
    auto cap = config::get_size("MPC_NET_UCX_BATCH");
    if (!cap) {
        return cap.error();
    }
    if (*cap > max_batch_cap) {
        MPC_LOG(error, net, "MPC_NET_UCX_BATCH=%zu: at most %zu bytes", *cap, max_batch_cap);
        return {errc::invalid_argument, "MPC_NET_UCX_BATCH is larger than 65536 bytes"};
    }
    // Too small to hold a few records: off.
    batch_cap_ = *cap >= 8 * record_head ? *cap & ~std::size_t{7} : 0;
    if (batch_cap_ == 0) {
        return {};
    }
    try {
        dirty_.reserve(static_cast<std::size_t>(opts_.max_peers));
    } catch (...) {
        return {errc::no_memory, "ucx batch list"};
    }
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = am_batch_id;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.arg = this;
    hp.cb = [](void* arg, const void*, std::size_t, void* data, std::size_t length,
               const ucp_am_recv_param_t*) -> ucs_status_t {
        auto* self = static_cast<ucx_transport*>(arg);
        const auto* p = static_cast<const std::byte*>(data);
        for (std::size_t off = 0; off + record_head <= length;) {
            std::uint64_t len = 0;
            envelope env;
            std::memcpy(&len, p + off, sizeof len);
            std::memcpy(&env, p + off + sizeof len, sizeof env);
            if (len > length || off + record_bytes(static_cast<std::size_t>(len)) > length) {
                MPC_LOG(error, net, "dropped the rest of a malformed batch (%zu of %zu bytes read)", off, length);
                break;
            }
            incoming msg;  // eager, not persistent: keep() fails, the handler copies what it keeps
            msg.owner_ = self;
            msg.data_ = const_cast<std::byte*>(p + off + record_head);
            msg.length_ = static_cast<std::size_t>(len);
            if (self->opts_.on_recv != nullptr) {
                self->opts_.on_recv(self->opts_.recv_arg, env, msg);
            }
            off += record_bytes(static_cast<std::size_t>(len));
        }
        return UCS_OK;
    };
    ucs_status_t st = ucp_worker_set_am_recv_handler(worker_, &hp);
    if (st != UCS_OK) {
        return detail::ucx_error("ucp_worker_set_am_recv_handler (batches)", st);
    }
    MPC_LOG(debug, net, "small messages batched per peer: %zu-byte batches, messages up to %zu bytes", batch_cap_,
            batch_cap_ / 4 - record_head);
    return {};
}

ucx_transport::batch* ucx_transport::get_batch() noexcept {
    std::lock_guard<std::mutex> g(pool_lock_);
    if (!pool_.empty()) {
        batch* b = pool_.back();
        pool_.pop_back();
        return b;
    }
    void* mem = std::malloc(offsetof(batch, data) + batch_cap_);
    if (mem == nullptr) {
        return nullptr;
    }
    auto* b = new (mem) batch;
    try {
        all_batches_.push_back(b);
        pool_.reserve(all_batches_.size());  // put_batch never allocates
    } catch (...) {
        std::free(mem);
        return nullptr;
    }
    b->owner = this;
    b->c.arg = b;
    b->c.fn = [](completion* c, status st) noexcept {
        auto* bb = static_cast<batch*>(c->arg);
        if (!st) {  // its messages completed already: the peer is gone or going (the launcher reports)
            MPC_LOG(error, net, "a batch of small messages (%zu bytes) was not delivered: %s", bb->used, st.reason());
        }
        bb->owner->put_batch(bb);
    };
    return b;
}

void ucx_transport::put_batch(batch* b) noexcept {
    b->used = 0;
    std::lock_guard<std::mutex> g(pool_lock_);
    pool_.push_back(b);  // capacity reserved in get_batch()
}

void ucx_transport::free_batches() noexcept {
    std::lock_guard<std::mutex> g(pool_lock_);
    for (batch* b : all_batches_) {
        b->~batch();
        std::free(b);
    }
    all_batches_.clear();
    pool_.clear();
}

/// Sends p's batch (p's batch lock held).
void ucx_transport::flush_locked(peer* p) noexcept {
    batch* b = p->open;
    if (b == nullptr) {
        return;
    }
    p->open = nullptr;
    open_batches_.fetch_sub(1, std::memory_order_relaxed);
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_AM_SEND_FLAG_EAGER;
    prm.user_data = &b->c;
    prm.cb.send = [](void* req, ucs_status_t st, void* user) {
        detail::request_done(req, static_cast<completion*>(user), st);
    };
    if (status st = detail::started(ucp_am_send_nbx(p->ep, am_batch_id, nullptr, 0, b->data, b->used, &prm), &b->c,
                                    "ucp_am_send_nbx (batch)");
        !st) {
        put_batch(b);
    }
}

int ucx_transport::flush_batches() noexcept {
    int flushed = 0;
    for (;;) {
        int id = -1;
        {
            std::lock_guard<std::mutex> g(dirty_lock_);
            if (dirty_.empty()) {
                return flushed;
            }
            id = dirty_.back();
            dirty_.pop_back();
        }
        peer* p = find_peer(id);
        if (p == nullptr) {
            continue;
        }
        spin_guard g(p->batch_lock);
        p->listed = false;
        flushed += p->open != nullptr ? 1 : 0;
        flush_locked(p);
    }
}

status ucx_transport::send_ordered(peer* p, const void* data, std::size_t len, completion* c) noexcept {
    const std::size_t rec = record_bytes(len);
    const bool small = rec <= batch_cap_ / 4 && (rndv_thresh_ == 0 || len < rndv_thresh_);
    bool copied = false;
    status st;
    {
        spin_guard g(p->batch_lock);
        const std::uint64_t epoch = epoch_.load(std::memory_order_relaxed);
        const bool first = p->last_epoch != epoch;  // nothing sent to p since the last progress
        p->last_epoch = epoch;
        if (!small || (first && p->open == nullptr)) {
            flush_locked(p);  // what was batched before goes first
            st = send_now(p, data, len, c);
        } else {
            if (p->open != nullptr && p->open->used + rec > batch_cap_) {
                flush_locked(p);
            }
            if (p->open == nullptr) {
                p->open = get_batch();
                if (p->open != nullptr) {
                    open_batches_.fetch_add(1, std::memory_order_relaxed);
                    if (!p->listed) {
                        p->listed = true;
                        std::lock_guard<std::mutex> dl(dirty_lock_);
                        dirty_.push_back(p->id);  // at most one entry per peer: capacity reserved
                    }
                }
            }
            if (p->open == nullptr) {  // no memory for a batch: send it alone
                st = send_now(p, data, len, c);
            } else {
                std::byte* at = p->open->data + p->open->used;
                const std::uint64_t n = len;
                std::memcpy(at, &n, sizeof n);
                std::memcpy(at + sizeof n, &c->header, sizeof(envelope));
                if (len != 0) {
                    std::memcpy(at + record_head, data, len);
                }
                p->open->used += rec;
                copied = true;
            }
        }
    }
    if (copied) {
        detail::complete(c, UCS_OK);  // outside the lock: the completion may wake a rank
    }
    return st;
}

}  // namespace mpc::net
