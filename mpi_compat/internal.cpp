#include "mpi_compat/internal.hpp"

#include <cstring>

namespace mpc::mpi {
namespace {
void start_send(task& self, const comm& c, int dest, int tag, const void* buf, std::size_t bytes,
                request* r) noexcept {
    r->kind = req_kind::send;
    route_send(self, c.world_rank(self, dest), c.coll_context(), c.rank_of(self), tag, raw_bytes(buf, bytes), r,
               false);
}

void start_recv(task& self, const comm& c, int source, int tag, void* buf, std::size_t bytes, request* r) noexcept {
    r->kind = req_kind::recv;
    r->target = raw_bytes(buf, bytes);
    r->context = c.coll_context();
    r->source = source;
    r->tag = tag;
    self.engine.post(r);
}

}  // namespace

void coll_send(task& self, const comm& c, int dest, int tag, const void* buf, std::size_t bytes) noexcept {
    request r;
    start_send(self, c, dest, tag, buf, bytes, &r);
    r.wait("collective send");
}

void coll_recv(task& self, const comm& c, int source, int tag, void* buf, std::size_t bytes) noexcept {
    request r;
    start_recv(self, c, source, tag, buf, bytes, &r);
    r.wait("collective receive");
}

void coll_sendrecv(task& self, const comm& c, int dest, const void* sbuf, std::size_t sbytes, int source, void* rbuf,
                   std::size_t rbytes, int tag) noexcept {
    request rr;
    request rs;
    start_recv(self, c, source, tag, rbuf, rbytes, &rr);
    start_send(self, c, dest, tag, sbuf, sbytes, &rs);
    rs.wait("collective exchange");
    rr.wait("collective exchange");
}

// Dissemination barrier (Hensgen, Finkel, Manber 1988): ceil(log2 n) rounds.
void coll_barrier(task& self, const comm& c) noexcept {
    int n = c.size();
    int me = c.rank_of(self);
    char dummy = 0;
    for (int dist = 1; dist < n; dist <<= 1) {
        coll_sendrecv(self, c, (me + dist) % n, &dummy, 0, (me - dist + n) % n, &dummy, 0, tag_barrier);
    }
}

// Binomial tree broadcast rooted at `root`.
void coll_bcast(task& self, const comm& c, void* buf, std::size_t bytes, int root) noexcept {
    int n = c.size();
    int rel = (c.rank_of(self) - root + n) % n;
    int mask = 1;
    while (mask < n) {
        if ((rel & mask) != 0) {
            coll_recv(self, c, (rel - mask + root) % n, tag_bcast, buf, bytes);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (rel + mask < n) {
            coll_send(self, c, (rel + mask + root) % n, tag_bcast, buf, bytes);
        }
        mask >>= 1;
    }
}

// Ring allgather: n-1 steps, each forwarding the block received in the previous one.
void coll_allgather(task& self, const comm& c, const void* mine, void* out, std::size_t bytes) noexcept {
    int n = c.size();
    int me = c.rank_of(self);
    auto* o = static_cast<char*>(out);
    std::memcpy(o + static_cast<std::size_t>(me) * bytes, mine, bytes);
    int right = (me + 1) % n;
    int left = (me - 1 + n) % n;
    for (int step = 0; step < n - 1; ++step) {
        int send_block = (me - step + n) % n;
        int recv_block = (me - step - 1 + n) % n;
        coll_sendrecv(self, c, right, o + static_cast<std::size_t>(send_block) * bytes, bytes, left,
                      o + static_cast<std::size_t>(recv_block) * bytes, bytes, tag_allgather);
    }
}

}  // namespace mpc::mpi
