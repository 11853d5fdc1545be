/// \file
/// The UCX transport alone (network/ucx.hpp, libmpc_net_ucx.so), between two processes of one
/// machine: ping-pong latency (half a round trip) and one-way bandwidth (a window of 64 sends,
/// then a 0-byte reply), message sizes 0 B to 4 MiB. No MPI layer: this is the floor under what
/// MPC's point-to-point between processes will cost once the engine routes through it. The
/// receiver copies eager data out of UCX's buffer in the receive handler and fetches rendezvous
/// data into its buffer, as the MPI engine will. The two processes are pinned to cores 0 and 1.
///
///   ucx_pingpong [--quick]   one row per size and metric in benchmarks' format (median, min and
///   max of 11 repetitions after a warm-up; --quick: 3), impl "mpc", variant "ucx transport only"
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

/// The sizes of benchmarks/p2p/p2p.c, so that rows line up with the MPI peers'.
std::vector<std::size_t> sizes(bool quick) {
    if (quick) {
        return {0, 64, 4096, 262144, 1048576, 4194304};
    }
    return {0, 1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
}
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
    const int reps = quick ? 3 : 11;
    auto report = [&](const char* metric, std::size_t size, std::vector<double>& v, const char* unit,
                      const char* what) {
        std::sort(v.begin(), v.end());
        std::printf("ROW\t%s\t%zu\tmpc\t%.4f\t%s\t%.4f\t%.4f\t\"variant\": \"ucx transport only\"\t%s\n", metric,
                    size, v[v.size() / 2], unit, v.front(), v.back(), what);
        std::fflush(stdout);
    };
    for (std::size_t size : sizes(quick)) {
        const int iters = quick ? 200 : (size >= (1 << 20) ? 200 : 2000);
        const int windows = quick ? 5 : (size >= (1 << 20) ? 5 : 20);
        std::vector<double> lat, bw;
        for (int rep = 0; rep < reps + 1; ++rep) {  // the first repetition is a warm-up
            // Latency: ping-pong, half a round trip.
            double t0 = now_us();
            for (int i = 0; i < iters; ++i) {
                if (parent) {
                    send_wait(other, sbuf.data(), size);
                    wait_message();
                } else {
                    wait_message();
                    send_wait(other, sbuf.data(), size);
                }
            }
            double l = (now_us() - t0) / iters / 2;
            // Bandwidth: windows of sends, each answered by a 0-byte reply.
            double t1 = now_us();
            for (int w = 0; w < windows; ++w) {
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
            double b = static_cast<double>(size) * window * windows / (now_us() - t1);  // bytes/us = MB/s
            if (rep > 0) {
                lat.push_back(l);
                bw.push_back(b);
            }
        }
        if (parent) {
            report("latency", size, lat, "us", "ping-pong, half a round trip, the UCX transport between 2 processes");
            if (size != 0) {
                report("bandwidth", size, bw, "MB/s",
                       "windows of 64 sends and a 0-byte reply, the UCX transport between 2 processes");
            }
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
