/// \file
/// The process side of mpc_run's own bootstrap (see bootstrap.hpp): one connected stream socket
/// per process, inherited from mpc_run as MPC_BOOTSTRAP_FD; every collective is a request that
/// the supervisor answers once all processes have sent theirs. Also the single-process
/// bootstrap and the wire format.

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "network/bootstrap.hpp"
#include "network/bootstrap_wire.hpp"

namespace mpc::net {

// ---- wire -------------------------------------------------------------------------------------

namespace wire {
namespace {
status write_all(int fd, const void* p, std::size_t n) noexcept {
    const auto* c = static_cast<const std::byte*>(p);
    while (n != 0) {
        ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return status::from_errno("bootstrap: write to the launcher's socket failed");
        }
        c += w;
        n -= static_cast<std::size_t>(w);
    }
    return {};
}

status read_all(int fd, void* p, std::size_t n) noexcept {
    auto* c = static_cast<std::byte*>(p);
    while (n != 0) {
        ssize_t r = ::read(fd, c, n);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return status::from_errno("bootstrap: read from the launcher's socket failed");
        }
        if (r == 0) {
            return status::from_errno("bootstrap: the other side closed the socket", ECONNRESET);
        }
        c += r;
        n -= static_cast<std::size_t>(r);
    }
    return {};
}
}  // namespace

status send(int fd, kind what, std::int32_t a, std::int32_t b, const void* payload, std::size_t len) noexcept {
    header h{magic, what, a, b, len};
    if (status st = write_all(fd, &h, sizeof h); !st) {
        return st;
    }
    return len != 0 ? write_all(fd, payload, len) : status{};
}

status receive(int fd, header& h, std::vector<std::byte>& payload) noexcept {
    if (status st = read_all(fd, &h, sizeof h); !st) {
        return st;
    }
    if (h.magic != magic || h.length > max_payload) {
        return {errc::invalid_argument, "bootstrap: a malformed message on the launcher's socket"};
    }
    try {
        payload.resize(h.length);
    } catch (const std::bad_alloc&) {
        return {errc::no_memory, "bootstrap: no memory for a message from the launcher"};
    }
    return h.length != 0 ? read_all(fd, payload.data(), h.length) : status{};
}
}  // namespace wire

// ---- mpc_run's bootstrap ----------------------------------------------------------------------

namespace {

class local_bootstrap final : public bootstrap {
public:
    local_bootstrap(int fd, int index, int count) noexcept : fd_(fd), index_(index), count_(count) {}
    ~local_bootstrap() override { ::close(fd_); }
    local_bootstrap(const local_bootstrap&) = delete;
    local_bootstrap& operator=(const local_bootstrap&) = delete;

    int index() const noexcept override { return index_; }
    int count() const noexcept override { return count_; }
    const char* name() const noexcept override { return "local"; }

    status allgather(std::span<const std::byte> mine, std::vector<blob>& all) noexcept override {
        std::vector<std::byte> reply;
        if (status st = request(wire::kind::allgather, mine.data(), mine.size(), reply); !st) {
            return st;
        }
        // count x (u64 length, bytes), checked against the reply's size.
        std::vector<blob> out;
        std::size_t at = 0;
        try {
            out.resize(static_cast<std::size_t>(count_));
            for (blob& b : out) {
                std::uint64_t n = 0;
                if (reply.size() - at < sizeof n) {
                    return {errc::internal, "bootstrap: a truncated all-gather reply"};
                }
                std::memcpy(&n, reply.data() + at, sizeof n);
                at += sizeof n;
                if (reply.size() - at < n) {
                    return {errc::internal, "bootstrap: a truncated all-gather reply"};
                }
                b.assign(reply.begin() + static_cast<std::ptrdiff_t>(at), reply.begin() + static_cast<std::ptrdiff_t>(at + n));
                at += n;
            }
        } catch (const std::bad_alloc&) {
            return {errc::no_memory, "bootstrap: no memory for the all-gather reply"};
        }
        all = std::move(out);
        return {};
    }

    status barrier() noexcept override {
        std::vector<std::byte> reply;
        return request(wire::kind::barrier, nullptr, 0, reply);
    }

    status finalize() noexcept override {
        std::vector<std::byte> reply;
        return request(wire::kind::finalize, nullptr, 0, reply);
    }

    void abort(int code, const char* why) noexcept override {
        std::size_t len = why != nullptr ? std::strlen(why) : 0;
        if (wire::send(fd_, wire::kind::abort, code, index_, why, len)) {
            // The supervisor kills the job, this process included; wait for it (bounded: a
            // supervisor that does not act within seconds is gone, and the caller exits).
            wire::header h{};
            std::vector<std::byte> payload;
            for (int i = 0; i < 100 && wire::receive(fd_, h, payload); ++i) {
            }
        }
    }

    status hello() noexcept {
        std::vector<std::byte> reply;
        wire::header h{};
        if (status st = wire::send(fd_, wire::kind::hello, index_, count_, nullptr, 0); !st) {
            return st;
        }
        if (status st = wire::receive(fd_, h, reply); !st) {
            return st;
        }
        if (h.what != wire::kind::hello || h.a != index_ || h.b != count_) {
            return {errc::invalid_argument, "bootstrap: the launcher does not know this process (MPC_BOOTSTRAP_*)"};
        }
        return {};
    }

private:
    /// Sends a request and waits for the reply of the same kind; a `failed` message instead
    /// is the death of another process, logged here with the supervisor's words.
    status request(wire::kind what, const void* data, std::size_t len, std::vector<std::byte>& reply) noexcept {
        if (status st = wire::send(fd_, what, index_, 0, data, len); !st) {
            return st;
        }
        wire::header h{};
        if (status st = wire::receive(fd_, h, reply); !st) {
            return st;
        }
        if (h.what == wire::kind::failed) {
            MPC_LOG(error, net, "process %d of the job failed: %.*s", h.a, static_cast<int>(reply.size()),
                    reinterpret_cast<const char*>(reply.data()));
            return {errc::system, "bootstrap: another process of the job died", ECONNRESET};
        }
        if (h.what != what) {
            return {errc::internal, "bootstrap: an unexpected reply from the launcher"};
        }
        return {};
    }

    int fd_;
    int index_;
    int count_;
};

class single_bootstrap final : public bootstrap {
public:
    int index() const noexcept override { return 0; }
    int count() const noexcept override { return 1; }
    const char* name() const noexcept override { return "single"; }
    status allgather(std::span<const std::byte> mine, std::vector<blob>& all) noexcept override {
        try {
            all.assign(1, blob(mine.begin(), mine.end()));
        } catch (const std::bad_alloc&) {
            return {errc::no_memory, "bootstrap: no memory for the all-gather"};
        }
        return {};
    }
    status barrier() noexcept override { return {}; }
    status finalize() noexcept override { return {}; }
    void abort(int, const char*) noexcept override {}
};

}  // namespace

result<std::unique_ptr<bootstrap>> connect_local_bootstrap(int fd, int index, int count) noexcept {
    if (fd < 0 || index < 0 || count <= 0 || index >= count) {
        if (fd >= 0) {
            ::close(fd);
        }
        return status{errc::invalid_argument,
                      "bootstrap: MPC_BOOTSTRAP_FD, MPC_PROC_INDEX and MPC_PROC_COUNT must be set by mpc_run -p"};
    }
    auto b = std::unique_ptr<local_bootstrap>(new (std::nothrow) local_bootstrap(fd, index, count));
    if (b == nullptr) {
        ::close(fd);
        return status{errc::no_memory, "bootstrap: no memory"};
    }
    if (status st = b->hello(); !st) {
        return st;
    }
    return std::unique_ptr<bootstrap>(std::move(b));
}

result<std::unique_ptr<bootstrap>> bootstrap_from_env() noexcept {
    // Knobs of network/config.cpp (mpc_run -p sets them; -1 / 0 when unset).
    auto fd = config::get_int("MPC_BOOTSTRAP_FD");
    if (!fd) {
        return fd.error();
    }
    if (*fd >= 0) {
        auto index = config::get_int("MPC_PROC_INDEX");
        auto count = config::get_int("MPC_PROC_COUNT");
        if (!index || !count) {
            return !index ? index.error() : count.error();
        }
        return connect_local_bootstrap(static_cast<int>(*fd), static_cast<int>(*index), static_cast<int>(*count));
    }
    if (std::getenv("PMIX_RANK") != nullptr) {
        return connect_pmix_bootstrap();
    }
    auto b = std::unique_ptr<bootstrap>(new (std::nothrow) single_bootstrap());
    if (b == nullptr) {
        return status{errc::no_memory, "bootstrap: no memory"};
    }
    return b;
}

}  // namespace mpc::net
