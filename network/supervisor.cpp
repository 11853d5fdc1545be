#include "network/supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "network/bootstrap_wire.hpp"

namespace mpc::net {

namespace {
long long now_ms() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<long long>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}
}  // namespace

result<supervisor> supervisor::start(const options& opt, const child_main& main) noexcept {
    if (opt.count <= 0) {
        return status{errc::invalid_argument, "supervisor: the job needs at least one process"};
    }
    supervisor s;
    s.opt_ = opt;
    try {
        s.procs_.resize(static_cast<std::size_t>(opt.count));
    } catch (const std::bad_alloc&) {
        return status{errc::no_memory, "supervisor: no memory"};
    }
    pid_t parent = ::getpid();
    for (int i = 0; i < opt.count; ++i) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            return status::from_errno("supervisor: socketpair() failed");  // ~supervisor ends the others
        }
        pid_t pid = ::fork();
        if (pid < 0) {
            int e = errno;
            ::close(sv[0]);
            ::close(sv[1]);
            return status::from_errno("supervisor: fork() failed", e);
        }
        if (pid == 0) {
            // The child: dies with the supervisor; keeps only its own end (not close-on-exec).
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) {
                ::_exit(127);  // the supervisor died before the prctl
            }
            for (int j = 0; j < i; ++j) {
                ::close(s.procs_[static_cast<std::size_t>(j)].fd);
            }
            ::close(sv[0]);
            int fl = ::fcntl(sv[1], F_GETFD);
            ::fcntl(sv[1], F_SETFD, fl & ~FD_CLOEXEC);
            main(i, sv[1]);
            ::_exit(127);
        }
        ::close(sv[1]);
        s.procs_[static_cast<std::size_t>(i)].pid = pid;
        s.procs_[static_cast<std::size_t>(i)].fd = sv[0];
    }
    return s;
}

supervisor::~supervisor() {
    for (proc& p : procs_) {
        if (p.fd >= 0) {
            ::close(p.fd);
        }
        if (p.pid > 0 && !p.exited) {
            ::kill(p.pid, SIGKILL);
            ::waitpid(p.pid, nullptr, 0);
        }
    }
}

std::vector<pid_t> supervisor::pids() const {
    std::vector<pid_t> v;
    for (const proc& p : procs_) {
        v.push_back(p.pid);
    }
    return v;
}

std::string supervisor::describe(int i) const {
    std::string d = "process " + std::to_string(i);
    auto u = static_cast<std::size_t>(i);
    if (u < opt_.first_rank.size() && u < opt_.rank_count.size()) {
        int first = opt_.first_rank[u], n = opt_.rank_count[u];
        d += n == 1 ? " (rank " + std::to_string(first) + ")"
                    : " (ranks " + std::to_string(first) + "-" + std::to_string(first + n - 1) + ")";
    }
    d += " pid " + std::to_string(procs_[u].pid);
    return d;
}

/// Process i failed (or aborted): the job ends with `status`; the others are told and ended.
void supervisor::fail(int i, std::string what, int status) noexcept {
    if (ending_) {
        return;  // the first failure names the job's end
    }
    ending_ = true;
    job_status_ = status;
    try {
        message_ = describe(i) + " " + what + ": ending the job";
    } catch (...) {
        message_ = "a process failed: ending the job";
    }
    for (std::size_t j = 0; j < procs_.size(); ++j) {
        proc& p = procs_[j];
        if (p.fd >= 0) {  // a process waiting in a collective learns why it will not complete
            wire::send(p.fd, wire::kind::failed, i, 0, message_.data(), message_.size()).ignore();
        }
        if (!p.exited) {
            ::kill(p.pid, SIGTERM);
        }
    }
    kill_at_ms_ = now_ms() + opt_.grace_ms;
}

void supervisor::serve_one(int i) noexcept {
    proc& p = procs_[static_cast<std::size_t>(i)];
    wire::header h{};
    std::vector<std::byte> payload;
    if (status st = wire::receive(p.fd, h, payload); !st) {
        ::close(p.fd);  // the process exited or closed it: reap() says how
        p.fd = -1;
        return;
    }
    switch (h.what) {
    case wire::kind::hello: {
        bool ok = h.a == i && h.b == opt_.count;
        wire::send(p.fd, wire::kind::hello, ok ? h.a : -1, ok ? h.b : -1, nullptr, 0).ignore();
        p.said_hello = ok;
        break;
    }
    case wire::kind::allgather:
    case wire::kind::barrier:
        if (p.pending != 0) {
            fail(i, "sent a second bootstrap request before the first was answered", 1);
            return;
        }
        p.pending = static_cast<int>(h.what);
        p.payload = std::move(payload);
        answer_collectives();
        break;
    case wire::kind::finalize:
        p.finalized = true;
        wire::send(p.fd, wire::kind::finalize, 0, 0, nullptr, 0).ignore();
        break;
    case wire::kind::abort: {
        std::string why(reinterpret_cast<const char*>(payload.data()), payload.size());
        fail(i, "called MPI_Abort(" + std::to_string(h.a) + ")" + (why.empty() ? "" : ": " + why), h.a);
        break;
    }
    default:
        fail(i, "sent a malformed bootstrap message", 1);
        break;
    }
}

/// A collective completes when every process has asked for it (the same kind).
void supervisor::answer_collectives() noexcept {
    int kind = procs_.front().pending;
    for (const proc& p : procs_) {
        if (p.pending == 0 || p.pending != kind) {
            if (p.pending != 0 && p.pending != kind) {
                fail(static_cast<int>(&p - procs_.data()), "entered a different bootstrap collective than process 0",
                     1);
            }
            return;
        }
    }
    std::vector<std::byte> reply;
    if (kind == static_cast<int>(wire::kind::allgather)) {
        for (const proc& p : procs_) {
            std::uint64_t n = p.payload.size();
            const auto* b = reinterpret_cast<const std::byte*>(&n);
            reply.insert(reply.end(), b, b + sizeof n);
            reply.insert(reply.end(), p.payload.begin(), p.payload.end());
        }
    }
    for (proc& p : procs_) {
        wire::send(p.fd, static_cast<wire::kind>(kind), opt_.count, 0, reply.data(), reply.size()).ignore();
        p.pending = 0;
        p.payload.clear();
    }
}

void supervisor::reap() noexcept {
    for (std::size_t i = 0; i < procs_.size(); ++i) {
        proc& p = procs_[i];
        if (p.exited || ::waitpid(p.pid, &p.wait_status, WNOHANG) != p.pid) {
            continue;
        }
        p.exited = true;
        int ws = p.wait_status;
        if (WIFSIGNALED(ws)) {
            int sig = WTERMSIG(ws);
            fail(static_cast<int>(i),
                 "was killed by signal " + std::to_string(sig) + " (" + (strsignal(sig) ? strsignal(sig) : "?") + ")",
                 128 + sig);
        } else if (int st = WEXITSTATUS(ws); st != 0) {
            // 128 + a fault signal: how our fault handler ends a process after printing which
            // rank crashed and why (scheduler/fault.cpp); say so, the status alone reads as
            // an exit code.
            int sig = st - 128;
            bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
            fail(static_cast<int>(i),
                 "exited with status " + std::to_string(st) +
                     (fault ? std::string(" after a fatal signal ") + std::to_string(sig) + " (" +
                                  (strsignal(sig) ? strsignal(sig) : "?") + ") in a rank, reported above"
                            : std::string()),
                 st);
        } else if (!p.finalized) {
            fail(static_cast<int>(i), "exited without finalizing (MPI_Finalize was not called)", 1);
        }
    }
}

int supervisor::run(std::string& message) noexcept {
    std::vector<pollfd> fds;
    for (;;) {
        reap();
        bool all_exited = true;
        fds.clear();
        for (const proc& p : procs_) {
            all_exited = all_exited && p.exited;
            if (p.fd >= 0) {
                fds.push_back(pollfd{p.fd, POLLIN, 0});
            }
        }
        if (all_exited) {
            break;
        }
        if (ending_ && now_ms() >= kill_at_ms_) {
            for (const proc& p : procs_) {
                if (!p.exited) {
                    ::kill(p.pid, SIGKILL);
                }
            }
        }
        // Short timeout: exits are found by polling waitpid (no SIGCHLD handler to install in
        // the launcher's process).
        int n = ::poll(fds.data(), fds.size(), 20);
        if (n <= 0) {
            continue;
        }
        for (const pollfd& f : fds) {
            if ((f.revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                continue;
            }
            for (std::size_t i = 0; i < procs_.size(); ++i) {
                if (procs_[i].fd == f.fd) {
                    serve_one(static_cast<int>(i));
                    break;
                }
            }
        }
    }
    message = message_;
    return job_status_;
}

}  // namespace mpc::net
