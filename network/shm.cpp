/// \file
/// The shared-memory transport between the processes of one node: segment, connections,
/// progress and sleep. The ring format and the message paths are in shm_io.cpp; the design in
/// shm.hpp.
#include "network/shm.hpp"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/config.hpp"
#include "lib/fence.hpp"
#include "lib/log.hpp"
#include "network/shm_detail.hpp"

// Older C libraries' headers (RHEL 8's glibc 2.28) lack these; the numbers are the same on
// every architecture (the unified numbering of system calls added since Linux 5.1).
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace mpc::net {

using namespace shm_detail;

namespace {

constexpr std::uint64_t address_magic = 0x4d50'4353'484d'4144ULL;
constexpr std::uint32_t wake_eventfd = 0;
constexpr std::uint32_t wake_pipe = 1;

/// Whether this process can use pidfds (shm.hpp, "Without pidfd"): MPC_NET_SHM_PIDFD allows it
/// and pidfd_open and pidfd_getfd work on this process itself (taking a copy of `fd`). Kernels
/// before 5.3 lack pidfd_open, before 5.6 pidfd_getfd (ENOSYS); seccomp filters may refuse them.
bool pidfd_works(int fd) noexcept {
    auto on = config::get_bool("MPC_NET_SHM_PIDFD");
    if (!on || !*on) {
        MPC_LOG(debug, net, "shm transport without pidfd (MPC_NET_SHM_PIDFD=0): wake-ups through a pipe");
        return false;
    }
    const int self = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
    int copy = -1;
    if (self >= 0) {
        copy = static_cast<int>(::syscall(SYS_pidfd_getfd, self, fd, 0));
    }
    const int err = errno;
    if (copy >= 0) {
        ::close(copy);
    }
    if (self >= 0) {
        ::close(self);
    }
    if (copy < 0) {
        MPC_LOG(debug, net, "shm transport without pidfd (%s: %s): wake-ups through a pipe",
                self < 0 ? "pidfd_open" : "pidfd_getfd", std::strerror(err));
        return false;
    }
    return true;
}

/// The state letter and start time (clock ticks after boot) of process pid, from
/// /proc/<pid>/stat (readable for any process); false when there is no such process.
bool proc_stat(pid_t pid, char* state, unsigned long long* start) noexcept {
    char path[48];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields count from
    // the last ')'. The state is field 3, the start time field 22.
    const char* f = std::strrchr(buf, ')');
    if (f == nullptr || f[1] != ' ' || f[2] == '\0') {
        return false;
    }
    f += 2;
    *state = *f;
    for (int i = 3; i < 22; ++i) {
        f = std::strchr(f, ' ');
        if (f == nullptr) {
            return false;
        }
        ++f;
    }
    char* end = nullptr;
    *start = std::strtoull(f, &end, 10);
    return end != f;
}

/// Registers this process for global expedited membarrier (shm.hpp, "Sleep"): true when the
/// kernel has it and MPC_NET_SHM_MEMBARRIER allows it.
bool register_membarrier() noexcept {
    auto on = config::get_bool("MPC_NET_SHM_MEMBARRIER");
    if (!on || !*on) {
        return false;
    }
    long cmds = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0 ||
        ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != 0) {
        MPC_LOG(debug, net, "no global expedited membarrier (%s): senders fence each message",
                cmds < 0 ? std::strerror(errno) : "not offered");
        return false;
    }
    return true;
}

/// The shared-copy descriptors of a segment with `rings` rings: offset and size.
std::size_t xfer_area_bytes(int rings) noexcept {
    return static_cast<std::size_t>(rings) * xfers_per_peer * sizeof(xfer);
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

/// The largest power of two <= n (n > 0).
std::uint32_t floor_pow2(std::size_t n) {
    std::uint32_t p = 1;
    while (static_cast<std::size_t>(p) * 2 <= n && p < (1u << 30)) {
        p *= 2;
    }
    return p;
}

}  // namespace

result<std::unique_ptr<shm_transport>> shm_transport::create(const shm_options& opts) noexcept {
    if (opts.max_peers <= 0 || opts.index < 0 || opts.index >= opts.max_peers) {
        return status{errc::invalid_argument, "shm_options: bad max_peers or index"};
    }
    std::unique_ptr<shm_transport> t(new (std::nothrow) shm_transport());
    if (!t) {
        return status{errc::no_memory, "shm transport"};
    }
    if (status st = t->init(opts); !st) {
        return st;  // the destructor releases what init() made
    }
    return t;
}

status shm_transport::init(const shm_options& opts) noexcept {
    opts_ = opts;
    std::size_t ring_bytes = opts.ring_bytes;
    std::size_t eager = opts.eager_max;
    if (ring_bytes == 0) {
        auto k = config::get_size("MPC_NET_SHM_RING");
        if (!k) {
            return k.error();
        }
        ring_bytes = *k;
    }
    if (eager == 0) {
        auto k = config::get_size("MPC_NET_SHM_EAGER");
        if (!k) {
            return k.error();
        }
        eager = *k;
    }
    if (auto k = config::get_size("MPC_NET_SHM_SPLIT"); k) {
        split_min_ = *k;
    } else {
        return k.error();
    }
    slots_ = floor_pow2(std::max<std::size_t>(ring_bytes / line, 64));
    // Any message must fit in an empty ring behind a pad record: two of the largest at most.
    const std::size_t max_lines = slots_ / 2;
    eager_max_ = std::min(eager, (max_lines - 1) * line - data_off);
    ring_stride_ = line + static_cast<std::size_t>(slots_) * line;
    seg_bytes_ = round_up(xfer_area(opts.max_peers) + xfer_area_bytes(opts.max_peers), 4096);
    peers_.reset(new (std::nothrow) peer*[static_cast<std::size_t>(opts.max_peers)]());
    if (!peers_) {
        return {errc::no_memory, "shm transport peer table"};
    }
    memfd_ = ::memfd_create("mpc-shm", MFD_CLOEXEC);
    if (memfd_ < 0 || ::ftruncate(memfd_, static_cast<off_t>(seg_bytes_)) != 0) {
        return sys_error("memfd_create/ftruncate of the shared-memory segment");
    }
    void* m = ::mmap(nullptr, seg_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    if (m == MAP_FAILED) {
        return sys_error("mmap of the shared-memory segment");
    }
    seg_ = static_cast<std::byte*>(m);
    std::uint64_t token = 0;
    if (::getrandom(&token, sizeof token, 0) != static_cast<ssize_t>(sizeof token)) {
        token = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ULL ^ reinterpret_cast<std::uintptr_t>(m);
    }
    probe_word_ = token;
    auto* h = new (seg_) seg_header{};
    asym_ = register_membarrier();
    h->asym = asym_ ? 1 : 0;
    h->magic = seg_magic;
    h->token = token;
    h->rings = static_cast<std::uint32_t>(opts.max_peers);
    h->slots = slots_;
    efd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd_ < 0) {
        return sys_error("eventfd");
    }
    pidfd_ = pidfd_works(efd_);
    if (!pidfd_) {  // a pipe, which peers can open through /proc (shm.hpp, "Without pidfd")
        ::close(efd_);
        efd_ = -1;
        int fds[2];
        if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
            return sys_error("pipe2 for the shared-memory transport's wake-ups");
        }
        efd_ = fds[0];
        wake_wfd_ = fds[1];
    }
    // Yama's ptrace_scope 1 (Ubuntu's default) lets a process read another's memory (CMA) and
    // take its file descriptors (pidfd_getfd) only when it descends from it or was declared its
    // tracer; the job's processes are siblings, so each declares every process a possible tracer
    // of itself (as Open MPI's shared-memory transport does). The kernel's usual checks (same
    // user, not setuid) still apply. Without Yama the call fails (EINVAL): nothing to do.
    (void)::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    shm_address a{};
    a.magic = address_magic;
    a.token = token;
    a.probe_addr = reinterpret_cast<std::uintptr_t>(&probe_word_);
    a.seg_bytes = seg_bytes_;
    a.pid = static_cast<std::int32_t>(::getpid());
    a.memfd = memfd_;
    a.efd = efd_;
    a.index = opts.index;
    a.rings = static_cast<std::uint32_t>(opts.max_peers);
    a.slots = slots_;
    a.wake = pidfd_ ? wake_eventfd : wake_pipe;
    try {
        address_.resize(sizeof a);
        polled_.reserve(static_cast<std::size_t>(opts.max_peers));
    } catch (...) {
        return {errc::no_memory, "shm transport address"};
    }
    std::memcpy(address_.data(), &a, sizeof a);
    MPC_LOG(debug, net, "shm transport ready: %u-line rings, eager up to %zu bytes, segment %zu bytes", slots_,
            eager_max_, seg_bytes_);
    return {};
}

shm_transport::peer* shm_transport::find(int id) const noexcept {
    if (id < 0 || id >= opts_.max_peers || !peers_) {
        return nullptr;
    }
    return peers_[id];
}

std::size_t shm_transport::xfer_area(int rings) const noexcept {
    return header_bytes + static_cast<std::size_t>(rings) * ring_stride_;
}

shm_transport::ring* shm_transport::rx_ring(int sender) const noexcept {
    return reinterpret_cast<ring*>(seg_ + header_bytes + static_cast<std::size_t>(sender) * ring_stride_);
}

namespace {

/// Undoes a half-made connection.
void free_peer(shm_transport::peer* p) noexcept {
    if (p->seg != nullptr) {
        ::munmap(p->seg, p->seg_bytes);
    }
    if (p->efd >= 0) {
        ::close(p->efd);
    }
    if (p->pidfd >= 0) {
        ::close(p->pidfd);
    }
    delete p;
}

/// Why a peer cannot be reached through shared memory: logged at debug, returned as unsupported.
status no_shm(int id, const char* what) noexcept {
    MPC_LOG(debug, net, "peer %d not over shared memory: %s: %s", id, what, std::strerror(errno));
    return {errc::unsupported, "the peer cannot be reached through shared memory and CMA"};
}

}  // namespace

status shm_transport::connect(int id, const void* addr, std::size_t len) noexcept {
    shm_address a{};
    if (id < 0 || id >= opts_.max_peers || id == opts_.index || addr == nullptr || len != sizeof a) {
        return {errc::invalid_argument, "bad peer id or shm address"};
    }
    std::memcpy(&a, addr, sizeof a);
    if (a.magic != address_magic || a.index != id || a.rings <= static_cast<std::uint32_t>(opts_.index) ||
        a.rings > (1u << 20) || a.slots != slots_ || a.wake > wake_pipe ||
        a.seg_bytes < xfer_area(static_cast<int>(a.rings)) + xfer_area_bytes(static_cast<int>(a.rings))) {
        return {errc::invalid_argument, "not a matching address made by shm_transport::address()"};
    }
    if (find(id) != nullptr) {
        return {errc::invalid_argument, "peer already connected"};
    }
    auto* p = new (std::nothrow) peer;
    if (p == nullptr) {
        return {errc::no_memory, "shm peer"};
    }
    p->id = id;
    p->pid = a.pid;
    if (pidfd_) {
        p->pidfd = static_cast<int>(::syscall(SYS_pidfd_open, a.pid, 0));
        if (p->pidfd < 0) {
            free_peer(p);
            return no_shm(id, "pidfd_open");
        }
    } else if (char state = 0; !proc_stat(a.pid, &state, &p->start_time)) {
        free_peer(p);
        errno = ESRCH;
        return no_shm(id, "its /proc/<pid>/stat");
    }
    // The CMA probe: read the peer's probe word (ptrace permission, as every fetch needs).
    std::uint64_t word = 0;
    struct iovec l = {&word, sizeof word};
    struct iovec r = {reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.probe_addr)), sizeof word};
    if (::process_vm_readv(a.pid, &l, 1, &r, 1, 0) != static_cast<ssize_t>(sizeof word) || word != a.token) {
        free_peer(p);
        return no_shm(id, "process_vm_readv of the probe word");
    }
    char path[64];
    if (a.wake == wake_pipe) {
        // Read-write: while we hold a read end too, a write never raises SIGPIPE (the process gone).
        std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(a.pid), static_cast<int>(a.efd));
        p->efd = ::open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (p->efd < 0) {
            free_peer(p);
            return no_shm(id, "opening its wake-up pipe");
        }
    } else if (p->pidfd < 0) {
        free_peer(p);
        errno = ENOSYS;
        return no_shm(id, "its eventfd needs pidfd_getfd, which this process does without");
    } else {
        p->efd = static_cast<int>(::syscall(SYS_pidfd_getfd, p->pidfd, a.efd, 0));
        if (p->efd < 0) {
            free_peer(p);
            return no_shm(id, "pidfd_getfd of its eventfd");
        }
    }
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(a.pid), static_cast<int>(a.memfd));
    int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        free_peer(p);
        return no_shm(id, path);
    }
    void* m = ::mmap(nullptr, a.seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) {
        free_peer(p);
        return no_shm(id, "mmap of its segment");
    }
    p->seg = static_cast<std::byte*>(m);
    p->seg_bytes = a.seg_bytes;
    p->hdr = reinterpret_cast<seg_header*>(p->seg);
    if (p->hdr->magic != seg_magic || p->hdr->token != a.token) {
        free_peer(p);
        errno = EINVAL;
        return no_shm(id, "its segment (wrong token)");
    }
    p->fence = !(asym_ && p->hdr->asym != 0);  // both registered: the sleeper's membarrier covers us
    p->tx = reinterpret_cast<ring*>(p->seg + header_bytes + static_cast<std::size_t>(opts_.index) * ring_stride_);
    p->rx = rx_ring(id);
    p->own_xfers = reinterpret_cast<xfer*>(seg_ + xfer_area(opts_.max_peers)) + static_cast<std::size_t>(id) * xfers_per_peer;
    p->peer_xfers = reinterpret_cast<xfer*>(p->seg + xfer_area(static_cast<int>(a.rings))) +
                  static_cast<std::size_t>(opts_.index) * xfers_per_peer;
    peers_[id] = p;
    polled_.insert(std::upper_bound(polled_.begin(), polled_.end(), p,
                                    [](const peer* x, const peer* y) { return x->id < y->id; }),
                   p);
    MPC_LOG(debug, net, "connected to peer %d over shared memory (from process %d)", id, opts_.index);
    return {};
}

void shm_transport::disconnect(int id) noexcept {
    peer* p = find(id);
    if (p == nullptr) {
        return;
    }
    polled_.erase(std::find(polled_.begin(), polled_.end(), p));
    peers_[id] = nullptr;
    free_peer(p);
}

bool shm_transport::rx_ready(const peer& p) const noexcept {
    const std::uint64_t head = p.rx_head.load(std::memory_order_relaxed);
    const std::uint64_t f = flag_of(p.rx->slot(head, slots_ - 1)).load(std::memory_order_relaxed);
    return (f & pos_mask) == head + 1;
}

int shm_transport::progress() noexcept {
    if (queued_peers_.load(std::memory_order_relaxed) == 0) {
        bool any = false;
        for (const peer* p : polled_) {
            if (rx_ready(*p)) {
                any = true;
                break;
            }
        }
        if (!any) {
            return 0;
        }
    }
    if (progressing_.exchange(true, std::memory_order_acquire)) {
        return 0;
    }
    auto* h = reinterpret_cast<seg_header*>(seg_);
    if (h->sleeping.load(std::memory_order_relaxed) != 0) {
        h->sleeping.store(0, std::memory_order_relaxed);  // awake: senders need not signal
    }
    int n = 0;
    for (peer* p : polled_) {
        if (p->has_queue.load(std::memory_order_relaxed)) {
            n += drain_queue(*p);
        }
        n += drain_ring(*p);
    }
    progressing_.store(false, std::memory_order_release);
    return n;
}

/// Between the sleeper's store of `sleeping` and its re-check of the rings: a barrier that
/// also orders the senders' publication before their load of `sleeping` (shm.hpp, "Sleep").
/// False when it could not be made: then do not sleep.
bool shm_transport::full_barrier_with_senders() noexcept {
    if (!asym_) {
        mpc::full_fence();  // against the senders' fence (notify)
        return true;
    }
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0) {
        return true;
    }
    // Registered at start, so not expected. Senders skip their fences on our word: a message
    // published just now may be invisible to the re-check, so never sleep without the barrier
    // (the caller then polls with pauses of at most 1 ms instead of sleeping).
    static std::atomic<bool> told{false};
    if (!told.exchange(true)) {
        MPC_LOG(warn, net, "membarrier failed (%s): idle processes poll instead of sleeping", std::strerror(errno));
    }
    return false;
}

bool shm_transport::arm() noexcept {
    char drained[256];  // an eventfd's counter (8 bytes), or what senders wrote into the pipe
    while (::read(efd_, drained, sizeof drained) > 0) {  // consume earlier wake-ups
    }
    auto* h = reinterpret_cast<seg_header*>(seg_);
    h->sleeping.store(1, std::memory_order_relaxed);
    const bool barrier = full_barrier_with_senders();
    for (peer* p : polled_) {
        if (!barrier || rx_ready(*p) || (p->has_queue.load(std::memory_order_relaxed) && tx_can_move(*p))) {
            h->sleeping.store(0, std::memory_order_relaxed);
            return false;
        }
    }
    return true;
}

bool shm_transport::peer_failed(int id) const noexcept {
    const peer* p = find(id);
    return p != nullptr && p->failed.load(std::memory_order_acquire);
}

std::string shm_transport::route(int id) const {
    return find(id) != nullptr ? std::string("shared memory (CMA for large messages)") : std::string();
}

/// True (and marks it failed) when the peer process has ended: its pidfd is readable, or
/// without pidfd, /proc/<pid>/stat is gone, shows a zombie, or names another process (the pid
/// reused).
bool shm_transport::peer_dead(peer& p) noexcept {
    bool dead = false;
    if (p.pidfd >= 0) {
        struct pollfd pf = {p.pidfd, POLLIN, 0};
        dead = ::poll(&pf, 1, 0) == 1 && (pf.revents & (POLLIN | POLLHUP)) != 0;
    } else {
        char state = 0;
        unsigned long long start = 0;
        dead = !proc_stat(p.pid, &state, &start) || state == 'Z' || state == 'X' || start != p.start_time;
    }
    if (dead) {
        p.failed.store(true, std::memory_order_release);
    }
    return dead;
}

status shm_transport::shutdown() noexcept {
    if (peers_) {
        for (int i = 0; i < opts_.max_peers; ++i) {
            if (peer* p = peers_[i]; p != nullptr) {
                if (!p->queue.empty()) {
                    MPC_LOG(warn, net, "shm transport: %zu sends to peer %d never left (its ring stayed full)",
                            p->queue.size(), i);
                }
                peers_[i] = nullptr;
                free_peer(p);
            }
        }
    }
    polled_.clear();
    if (seg_ != nullptr) {
        ::munmap(seg_, seg_bytes_);
        seg_ = nullptr;
    }
    if (memfd_ >= 0) {
        ::close(memfd_);
        memfd_ = -1;
    }
    if (efd_ >= 0) {
        ::close(efd_);
        efd_ = -1;
    }
    if (wake_wfd_ >= 0) {
        ::close(wake_wfd_);
        wake_wfd_ = -1;
    }
    return {};
}

shm_transport::~shm_transport() { shutdown().ignore(); }

}  // namespace mpc::net
