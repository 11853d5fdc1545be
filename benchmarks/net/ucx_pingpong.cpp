/// \file
/// The UCX transport alone (network/ucx.hpp, libmpc_net_ucx.so), between two processes of one
/// machine: ping-pong latency (half a round trip) and one-way bandwidth (a window of 64 sends,
/// then a 0-byte reply), message sizes 0 B to 4 MiB. No MPI layer: this is the floor under what
/// MPC's point-to-point between processes will cost once the engine routes through it. The
/// receiver copies eager data out of UCX's buffer in the receive handler and fetches rendezvous
/// data into its buffer, as the MPI engine will. The two processes are pinned to cores 0 and 1.
///
///   ucx_pingpong [--quick]       prints one line per size and metric:
///   ROW <metric> <size> mpc-ucx <value> <unit>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "network/ucx.hpp"

namespace {

using namespace mpc::net;

struct peer_state {
    ucx_transport* t = nullptr;
    std::vector<char> rbuf;
    int got = 0;             ///< messages arrived and not yet consumed by wait_message()
    std::vector<incoming> rndv;  ///< rendezvous messages kept, to fetch
};
peer_state g;

void on_recv(void*, const envelope&, incoming& msg) noexcept {
    if (msg.is_rendezvous()) {
        msg.keep();
        g.rndv.push_back(msg);  // capacity reserved: no allocation here
        return;
    }
    if (msg.size() != 0) {
        std::memcpy(g.rbuf.data(), msg.data(), msg.size());
    }
    ++g.got;
}

void done(completion* c, mpc::status) noexcept { *static_cast<bool*>(c->arg) = true; }

/// Waits for one message (fetching rendezvous ones into rbuf). Several may arrive in one
/// progress() call.
void wait_message() {
    while (g.got == 0) {
        g.t->progress();
        while (!g.rndv.empty()) {
            incoming m = g.rndv.front();
            g.rndv.erase(g.rndv.begin());
            bool fetched = false;
            completion c;
            c.fn = done;
            c.arg = &fetched;
            if (!g.t->fetch(m, g.rbuf.data(), g.rbuf.size(), &c)) {
                std::fprintf(stderr, "ucx_pingpong: fetch failed\n");
                std::_Exit(1);
            }
            while (!fetched) {
                g.t->progress();
            }
            ++g.got;
        }
    }
    --g.got;
}

void send_wait(int peer, const char* buf, std::size_t n) {
    bool sent = false;
    completion c;
    c.fn = done;
    c.arg = &sent;
    envelope env{};
    env.size = n;
    if (!g.t->send(peer, env, buf, n, &c)) {
        std::fprintf(stderr, "ucx_pingpong: send failed\n");
        std::_Exit(1);
    }
    while (!sent) {
        g.t->progress();
    }
}

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr std::size_t max_size = std::size_t{4} << 20;
constexpr int window = 64;

}  // namespace

int main(int argc, char** argv) {
    bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        return 1;
    }
    pid_t pid = ::fork();
    bool parent = pid != 0;
    // One core each, as MPC's VPs and the peers' mpirun bind them (cores 0 and 1).
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(parent ? 0 : 1, &cpus);
    ::sched_setaffinity(0, sizeof cpus, &cpus);
    int fd = parent ? sv[0] : sv[1];
    ::close(parent ? sv[1] : sv[0]);
    ucx_options o;
    o.max_peers = 2;
    o.on_recv = on_recv;
    auto t = ucx_transport::create(o);
    if (!t) {
        std::fprintf(stderr, "ucx_pingpong: %s\n", t.error().reason());
        return 1;
    }
    g.t = t.value().get();
    g.rbuf.resize(max_size);
    g.rndv.reserve(4 * window);
    std::vector<char> sbuf(max_size, 'x');
    const auto& mine = g.t->address();
    std::size_t n = mine.size();
    std::vector<std::byte> theirs;
    if (::write(fd, &n, sizeof n) != sizeof n || ::write(fd, mine.data(), n) != static_cast<ssize_t>(n)) {
        return 1;
    }
    std::size_t m = 0;
    if (::read(fd, &m, sizeof m) != sizeof m) {
        return 1;
    }
    theirs.resize(m);
    for (std::size_t got = 0; got < m;) {
        ssize_t r = ::read(fd, theirs.data() + got, m - got);
        if (r <= 0) {
            return 1;
        }
        got += static_cast<std::size_t>(r);
    }
    int other = parent ? 1 : 0;
    if (!g.t->connect(other, theirs.data(), theirs.size())) {
        std::fprintf(stderr, "ucx_pingpong: connect failed\n");
        return 1;
    }
    for (std::size_t size = 0; size <= max_size; size = size == 0 ? 1 : size * 4) {
        const int iters = quick ? 200 : (size >= (1 << 20) ? 400 : 4000);
        // Latency: ping-pong, the first tenth as warm-up.
        double t0 = 0;
        for (int i = 0; i < iters + iters / 10; ++i) {
            if (i == iters / 10) {
                t0 = now_us();
            }
            if (parent) {
                send_wait(other, sbuf.data(), size);
                wait_message();
            } else {
                wait_message();
                send_wait(other, sbuf.data(), size);
            }
        }
        double lat = (now_us() - t0) / iters / 2;
        // Bandwidth: windows of sends, each answered by a 0-byte reply.
        const int windows = quick ? 5 : (size >= (1 << 20) ? 10 : 50);
        double t1 = 0;
        for (int w = 0; w < windows + 1; ++w) {
            if (w == 1) {
                t1 = now_us();
            }
            for (int k = 0; k < window; ++k) {
                if (parent) {
                    send_wait(other, sbuf.data(), size);
                } else {
                    wait_message();
                }
            }
            if (parent) {
                wait_message();
            } else {
                send_wait(other, sbuf.data(), 0);
            }
        }
        double bw = static_cast<double>(size) * window * windows / (now_us() - t1);  // bytes/us = MB/s
        if (parent) {
            std::printf("ROW\tlatency\t%zu\tmpc-ucx\t%.3f\tus\n", size, lat);
            if (size != 0) {
                std::printf("ROW\tbandwidth\t%zu\tmpc-ucx\t%.1f\tMB/s\n", size, bw);
            }
            std::fflush(stdout);
        }
    }
    g.t->shutdown().ignore();
    if (parent) {
        int ws = 0;
        ::waitpid(pid, &ws, 0);
        return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : 1;
    }
    return 0;
}
