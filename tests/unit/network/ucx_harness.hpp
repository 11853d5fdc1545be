// Test harness of the UCX transport tests: a transport with a recording receive handler, a
// progress loop with a hang guard, forked peers that exchange worker addresses over a socketpair.
#pragma once

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "network/ucx.hpp"

namespace mpc::net::test {

/// A message as the receive handler saw it: eager data copied, or the kept descriptor.
struct arrival {
    envelope env;
    incoming msg;                  // kept (rendezvous always; eager when keep_eager)
    std::vector<std::byte> bytes;  // eager data copied in the handler when not kept
    bool keep_refused = false;     // keep_eager, but the transport could not keep it (copied)
};

/// A transport of type T and what its receive handler recorded (the UCX and shm tests).
template <class T>
struct recorder {
    std::unique_ptr<T> t;
    std::mutex mu;
    std::deque<arrival> arrived;

    /// Progresses until pred() holds; false after 60 s (a hang guard, not a timing check).
    bool wait(const std::function<bool()>& pred) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!pred()) {
            t->progress();
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
        }
        return true;
    }
    std::size_t count() {
        std::lock_guard lk(mu);
        return arrived.size();
    }
    /// Waits for the next message and removes it from the queue.
    bool next(arrival& out) {
        if (!wait([&] { return count() > 0; })) {
            return false;
        }
        std::lock_guard lk(mu);
        out = std::move(arrived.front());
        arrived.pop_front();
        return true;
    }
};

/// One UCX transport and what it received.
struct side : recorder<ucx_transport> {
    bool keep_eager = false;
    /// ucx_options::persistent_eager, for open(): on in most tests, which keep eager messages.
    bool persistent = true;
    /// UCP_ERR_HANDLING_MODE_PEER (TCP only between processes); the other tests use UCX's
    /// shared-memory transports.
    bool detect_failure = false;
    int failed_peer = -1;
    int failures = 0;
    static void on_recv(void* arg, const envelope& env, incoming& msg) noexcept {
        auto* s = static_cast<side*>(arg);
        std::lock_guard lk(s->mu);
        arrival a{env, {}, {}};
        if (msg.is_rendezvous() || s->keep_eager) {
            if (!msg.keep()) {
                if (msg.is_rendezvous() || s->persistent) {
                    std::abort();  // UCX must let us keep these
                }
                a.keep_refused = true;
            }
        }
        if (!msg.kept()) {
            const auto* p = static_cast<const std::byte*>(msg.data());
            a.bytes.assign(p, p + msg.size());
        }
        a.msg = msg;
        s->arrived.push_back(std::move(a));
    }
    static void on_failed(void* arg, int peer, const char*) noexcept {
        auto* s = static_cast<side*>(arg);
        s->failed_peer = peer;
        ++s->failures;
    }

    status open() {
        ucx_options o;
        o.max_peers = 8;
        o.on_recv = &side::on_recv;
        o.recv_arg = this;
        o.on_peer_failed = &side::on_failed;
        o.peer_failed_arg = this;
        o.detect_peer_failure = detect_failure;
        o.persistent_eager = persistent;
        auto r = ucx_transport::create(o);
        if (!r) {
            return r.error();
        }
        t = std::move(r.value());
        return {};
    }
};

/// A completion that records its status (from whichever thread progressed).
struct done_flag : completion {
    std::atomic<bool> done{false};
    std::atomic<bool> ok{false};
    std::atomic<int> calls{0};
    done_flag() {
        fn = [](completion* c, status st) noexcept {
            auto* d = static_cast<done_flag*>(c);
            d->ok.store(st.ok());
            d->calls.fetch_add(1);
            d->done.store(true);
        };
    }
};

/// An envelope with every field set from `seq` (the transports carry it unchanged).
inline envelope make_env(std::uint32_t seq, std::size_t size) {
    envelope e;
    e.context_id = 0x10000u + seq;
    e.source = static_cast<std::int32_t>(seq * 3 + 1);
    e.dest = -static_cast<std::int32_t>(seq) - 7;
    e.tag = static_cast<std::int32_t>(seq * 1000 + 5);
    e.size = size;
    e.seq = seq;
    e.kind = (seq % 2) != 0 ? msg_kind::rendezvous : msg_kind::eager;
    e.flags = static_cast<std::uint8_t>(seq & env_flag_sync);
    e.reserved[0] = static_cast<std::uint8_t>(seq);
    e.reserved[1] = static_cast<std::uint8_t>(~seq);
    e.source_world = static_cast<std::int32_t>(seq + 11);
    e.reserved2 = seq * 7;
    e.cookie = 0xabcdef0000000000ULL + seq;
    return e;
}

/// Byte i of a test payload for message `seq`.
inline std::byte pattern(std::uint32_t seq, std::size_t i) {
    return static_cast<std::byte>((seq * 131u + i * 7u + (i >> 12)) & 0xffu);
}
inline std::vector<std::byte> payload(std::uint32_t seq, std::size_t n) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = pattern(seq, i);
    }
    return v;
}
inline bool check_payload(std::uint32_t seq, const std::byte* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (p[i] != pattern(seq, i)) {
            return false;
        }
    }
    return true;
}

// ---- the socketpair: framed byte strings -----------------------------------------------------
/// Writes (or reads) exactly n bytes.
inline bool io_all(int fd, void* p, std::size_t n, bool writing) {
    auto* c = static_cast<char*>(p);
    while (n > 0) {
        ssize_t k = writing ? ::write(fd, c, n) : ::read(fd, c, n);
        if (k <= 0) {
            return false;
        }
        c += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}
inline bool write_all(int fd, const void* p, std::size_t n) { return io_all(fd, const_cast<void*>(p), n, true); }
inline bool read_all(int fd, void* p, std::size_t n) { return io_all(fd, p, n, false); }
inline bool send_bytes(int fd, const std::vector<std::byte>& v) {
    std::uint64_t n = v.size();
    return write_all(fd, &n, sizeof n) && write_all(fd, v.data(), v.size());
}
inline bool recv_bytes(int fd, std::vector<std::byte>& v) {
    std::uint64_t n = 0;
    if (!read_all(fd, &n, sizeof n) || n > (1u << 20)) {
        return false;
    }
    v.resize(n);
    return read_all(fd, v.data(), n);
}
inline bool sync_byte(int fd) {
    char c = 's';
    return write_all(fd, &c, 1);
}
inline bool wait_byte(int fd) {
    char c = 0;
    return read_all(fd, &c, 1);
}

/// Opens `s` and connects it to the peer at the other end of `fd` (peer id `peer`).
inline bool bootstrap(side& s, int fd, int peer) {
    if (!s.open()) {
        return false;
    }
    std::vector<std::byte> remote;
    if (!send_bytes(fd, s.t->address()) || !recv_bytes(fd, remote)) {
        return false;
    }
    return s.t->connect(peer, remote.data(), remote.size()).ok();
}

/// A forked peer running `body(fd)`; its return value is the exit status (0: all checks held).
/// The child has 60 s (alarm) and always leaves with _exit.
class child_process {
public:
    explicit child_process(const std::function<int(int fd)>& body) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            return;
        }
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(sv[0]);
            ::alarm(60);
            int rc = body(sv[1]);
            _exit(rc);
        }
        ::close(sv[1]);
        fd_ = sv[0];
    }
    ~child_process() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            wait_exit();
        }
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    int fd() const { return fd_; }
    pid_t pid() const { return pid_; }
    /// The child's raw wait status.
    int wait_exit() {
        int st = 0;
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
        reaped_ = true;
        return st;
    }

private:
    pid_t pid_ = -1;
    int fd_ = -1;
    bool reaped_ = false;
};

}  // namespace mpc::net::test
