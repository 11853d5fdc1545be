/// \file
/// Ranks in other processes: start-up and end of a multi-process job in this process, and the
/// remote half of the matching protocols (design in remote.hpp).

#include "mpi_compat/remote.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <thread>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "lib/tsan.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/runtime.hpp"
#include "network/bootstrap.hpp"
#include "network/layout.hpp"
#include "network/shm.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi::remote {
namespace {

/// Control messages between processes (msg_kind::control; the tag says which).
enum control_tag : int {
    ctl_done = 1,          ///< every rank of the sending process has returned
    ctl_cancel = 2,        ///< withdraw the unexpected message (source_world, cookie, seq)
    ctl_cancel_reply = 3,  ///< the answer: size 1 withdrawn, 0 not
    ctl_hello = 4,         ///< the first message to every process (cookie: the sender's index)
};

struct state {
    std::unique_ptr<net::bootstrap> boot;
    std::unique_ptr<net::transport> tr;    ///< the router: each peer's transport (router below)
    std::unique_ptr<net::shm_transport> shm;  ///< to the processes of this node (null: none)
    std::unique_ptr<net::transport> ucx;  ///< to the others (null: none), from the UCX module
    std::vector<net::transport*> route;   ///< the transport of each process (null: not yet, or me)
    std::optional<net::layout> lay;
    int me = 0;  ///< this process (also world_state::proc_index, for the communicators)
    int progress_handle = -1;
    std::thread watcher;
    int idle_efd = -1;  ///< signalled when every VP sleeps (on_all_asleep), and to stop the watcher
    std::atomic<bool> stopping{false};  ///< the watcher returns (finish)
    /// Set by every progress call of a VP (detail::progress), cleared by the watcher's timed
    /// check: a period without it means no VP polls (all awake ones compute), and the watcher
    /// progresses the transport once itself (watch_events). Only written when clear, so pollers
    /// keep the line shared.
    std::atomic<bool> polled{false};
    /// Set while the watcher sleeps on the transports' event fds (every VP was asleep when it
    /// looked). The first progress call of a VP that finds it set (detail::progress) clears it
    /// and wakes the watcher through idle_efd: UCX's event fd (nested epoll sets over its
    /// sockets) wakes a thread polling it at every arrival even when the VP's own poll takes the
    /// data first, so a watcher left there while a VP runs costs that VP a context switch per
    /// message on its core (docs/architecture.md, "The event watcher leaves the fds to awake VPs").
    std::atomic<bool> watching_fds{false};
    long watch_period_ns = 1000000;  ///< MPC_NET_PROGRESS_US (0: no timed check)
    std::atomic<int> done_peers{0};  ///< ctl_done messages received
    std::vector<int> node_of_proc;   ///< node index of every process (node_of)
    std::vector<std::string> node_name_of_proc;  ///< node name of every process (for messages)
    /// ctl_hello received from each process (check_peers).
    std::unique_ptr<std::atomic<bool>[]> hello_from;
    std::atomic<int> hellos{0};
    /// Numbers the messages this process sends: with the request's address (the cookie, reused
    /// once the request is freed) it names one message, for MPI_Cancel.
};

/// Never destroyed: a rank that calls exit() runs the static destructors while the VPs and the
/// watcher still run, and a joinable std::thread's destructor calls std::terminate (the job
/// ended with SIGABRT instead of the rank's exit status); the process is ending anyway.
union state_storage {
    state s;
    state_storage() : s() {}
    ~state_storage() {}
};
state_storage g_storage;
state& g = g_storage.s;
using detail::g_active;

int process_of(int world_rank) noexcept { return g.lay->process_of(world_rank); }

/// The transport remote.cpp and the engine see: each peer process's messages go through one
/// transport (the shared-memory one for the processes of this node that it could reach, UCX
/// for the others), so that MPI's order between two processes holds; a message is released or
/// fetched by the transport that delivered it (incoming::owner).
class router final : public net::transport {
public:
    const std::vector<std::byte>& address() const noexcept override { return none_; }
    status connect(int, const void*, std::size_t) noexcept override {
        return {errc::unsupported, "connect the transports themselves"};
    }
    status send(int peer, const net::envelope& env, const void* data, std::size_t len,
                net::completion* c) noexcept override {
        return g.route[static_cast<std::size_t>(peer)]->send(peer, env, data, len, c);
    }
    void release(net::incoming& msg) noexcept override { msg.owner()->release(msg); }
    status fetch(net::incoming& msg, void* buf, std::size_t cap, net::completion* c) noexcept override {
        return msg.owner()->fetch(msg, buf, cap, c);
    }
    int progress() noexcept override {
        return (g.shm != nullptr ? g.shm->progress() : 0) + (g.ucx != nullptr ? g.ucx->progress() : 0);
    }
    int event_fd() const noexcept override { return -1; }  // the watcher polls both transports'
    bool arm() noexcept override { return false; }
    bool peer_failed(int peer) const noexcept override {
        const net::transport* t = via(peer);
        return t != nullptr && t->peer_failed(peer);
    }
    std::string route(int peer) const override {
        const net::transport* t = via(peer);
        return t != nullptr ? t->route(peer) : std::string();
    }
    status shutdown() noexcept override {
        status a = g.shm != nullptr ? g.shm->shutdown() : status{};
        status b = g.ucx != nullptr ? g.ucx->shutdown() : status{};
        return !a ? a : b;
    }

private:
    static const net::transport* via(int peer) noexcept {
        return static_cast<std::size_t>(peer) < g.route.size() ? g.route[static_cast<std::size_t>(peer)] : nullptr;
    }
    std::vector<std::byte> none_;
};

[[noreturn]] void fatal(const char* what, int rank, const char* reason) noexcept {
    std::fprintf(stderr, "mpc: process %d: %s (rank %d): %s\n", g.me, what, rank, reason);
    end_job(1);
}

/// How long a process whose transfer with another process failed waits for the launcher.
constexpr int lost_peer_wait_s = 10;

/// A transfer with another process failed (rank: the peer rank, -1 when unknown): that process
/// has most likely died, and the launcher (net::supervisor, the PMIx server) is about to end
/// the job with one line naming it. Ending the job from here instead raced with the launcher:
/// a survivor that exited first was named as the failed process, with its status, after a
/// misleading line of its own (a killed rendezvous sender gave "message truncated"). So this
/// process waits to be ended, and ends the job itself only when no launcher has acted after
/// lost_peer_wait_s. Blocks the calling thread (a VP, or the transport's callback).
[[noreturn]] void lost_peer(const char* what, int rank, const char* reason) noexcept {
    MPC_LOG(debug, mpi, "%s (rank %d): %s: waiting for the launcher to end the job", what, rank, reason);
    for (int i = 0; i < lost_peer_wait_s * 10; ++i) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, nullptr);
    }
    char why[300];
    std::snprintf(why, sizeof why, "%s; the launcher did not end the job within %d s", reason, lost_peer_wait_s);
    fatal(what, rank, why);
}

// ---- sends ---------------------------------------------------------------------------------

/// The send that this thread is handing to the transport (send()): a completion that runs
/// for it here runs inside the operation that has not returned the request yet.
[[gnu::tls_model("initial-exec")]] thread_local const request* tl_sending = nullptr;

/// One of a remote send's events (the transport is done with the data; the ack of a
/// synchronous send): the last one completes it. A locked instruction here waits for the ring
/// line the transport just wrote (a fifth of the sender's time at 64 bytes), so the last event
/// is recognised by a load: once the count reads 1, no other event is left to race with.
void send_event(request* r) noexcept {
    std::atomic_ref<int> pending(r->net_pending);
    if (pending.load(std::memory_order_acquire) == 1 ||
        pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (tl_sending == r) {
            r->complete_unwatched();  // nobody can wait on it yet: a store, not an exchange
        } else {
            r->complete();
        }
    }
}

void on_sent(net::completion* c, status st) noexcept {
    auto* r = static_cast<request*>(c->arg);
    if (!st) {
        lost_peer("a send to another process failed", r->netc.header.dest, st.reason());
    }
    if (r->net_tmp != nullptr) {
        std::free(r->net_tmp);  // the packed copy of a non-contiguous send
        r->net_tmp = nullptr;
    }
    send_event(r);
}

/// A transport message that owns its completion record (acks and control messages).
struct owned_send {
    net::completion c;
};

void on_owned_sent(net::completion* c, status st) noexcept {
    if (!st) {
        lost_peer("a control message to another process failed", c->header.dest, st.reason());
    }
    delete reinterpret_cast<owned_send*>(c);
}

void send_control(int proc, const net::envelope& env) noexcept {
    auto* o = new (std::nothrow) owned_send{};
    if (o == nullptr) {
        fatal("out of memory sending a control message to process", proc, "no memory");
    }
    o->c.fn = &on_owned_sent;
    if (status st = g.tr->send(proc, env, nullptr, 0, &o->c); !st) {
        delete o;
        lost_peer("cannot send a control message to process", proc, st.reason());
    }
}

/// A control message (no payload) from world rank `from` about rank `to`'s `cookie`.
net::envelope control_envelope(int tag, int from, int to, std::uint64_t cookie) noexcept {
    net::envelope e{};
    e.kind = net::msg_kind::control;
    e.tag = tag;
    e.source_world = from;
    e.dest = to;
    e.cookie = cookie;
    return e;
}

/// Tells the sender of a synchronous message that it was matched.
void send_ack(const net::envelope& m) noexcept {
    net::envelope a = control_envelope(0, m.dest, m.source_world, m.cookie);
    a.kind = net::msg_kind::ack;
    send_control(process_of(m.source_world), a);
}

/// The task of world rank wr if it lives in this process, else nullptr.
task* local_task(int wr) noexcept {
    world_state& w = world();
    return is_local(w, wr) ? w.tasks[static_cast<std::size_t>(wr)].get() : nullptr;
}

// ---- receives ------------------------------------------------------------------------------

void on_fetched(net::completion* c, status st) noexcept {
    auto* r = static_cast<request*>(c->arg);
    if (r->net_tmp != nullptr) {  // bounce buffer: unpack what fits, then free it
        if (st) {
            unpack_data(r->net_tmp, r->target, status_bytes(r->status));
        }
        std::free(r->net_tmp);
        r->net_tmp = nullptr;
    }
    if (!st) {
        lost_peer("receiving a message from another process failed", -1, st.reason());
    }
    r->complete();
}

/// The transport's receive handler (runs inside progress()).
void on_recv(void*, const net::envelope& env, net::incoming& msg) noexcept {
    switch (env.kind) {
    case net::msg_kind::ack: {
        auto* r = reinterpret_cast<request*>(static_cast<std::uintptr_t>(env.cookie));
        tsan_acquire(r);  // the edge from send() runs through the receiving process
        send_event(r);
        return;
    }
    case net::msg_kind::control:
        if (env.tag == ctl_done) {
            g.done_peers.fetch_add(1, std::memory_order_acq_rel);
        } else if (env.tag == ctl_hello) {
            const auto from = static_cast<std::size_t>(env.cookie);
            if (from < static_cast<std::size_t>(g.lay->processes()) && !g.hello_from[from].exchange(true)) {
                g.hellos.fetch_add(1, std::memory_order_acq_rel);
            }
        } else if (env.tag == ctl_cancel) {
            task* t = local_task(env.dest);
            net::envelope a = control_envelope(ctl_cancel_reply, env.dest, env.source_world, env.cookie);
            a.size = t != nullptr && t->engine.cancel_remote(env.source_world, env.cookie, env.seq) ? 1 : 0;
            send_control(process_of(env.source_world), a);
        } else if (env.tag == ctl_cancel_reply) {
            auto* r = reinterpret_cast<request*>(static_cast<std::uintptr_t>(env.cookie));
            tsan_acquire(r);  // see send()
            std::atomic_ref<int>(r->net_cancel).store(env.size != 0 ? 1 : 2, std::memory_order_release);
        }
        return;
    default:
        break;
    }
    MPC_LOG(trace, mpi, "arrived: %s from rank %d to rank %d, context %u, tag %d, %llu bytes%s",
            msg.is_rendezvous() ? "rendezvous" : "eager", env.source_world, env.dest, env.context_id, env.tag,
            static_cast<unsigned long long>(env.size), (env.flags & net::env_flag_sync) != 0 ? ", sync" : "");
    task* t = local_task(env.dest);
    if (t == nullptr) {
        MPC_LOG(error, mpi, "dropped a message for rank %d, which does not live in process %d", env.dest, g.me);
        return;
    }
    t->engine.deliver_remote(env, msg);
}

// ---- progress ------------------------------------------------------------------------------

/// The scheduler's all-asleep hook (sched::set_all_asleep_hook): the last VP to fall asleep
/// hands the transport over to the watcher.
void on_all_asleep(void*) noexcept {
    const std::uint64_t one = 1;
    ssize_t n = ::write(g.idle_efd, &one, sizeof one);
    (void)n;  // the counter is full only if the watcher has not read it yet: it will
}

void drain(int fd) noexcept {
    std::uint64_t v = 0;
    ssize_t n = ::read(fd, &v, sizeof v);
    (void)n;
}

/// poll() (ppoll() with a timeout in ns, < 0: none) that retries on EINTR; false on another
/// error (logged). A timeout returns true with no revents.
bool poll_fds(struct pollfd* fds, nfds_t n, long timeout_ns = -1) noexcept {
    for (;;) {
        const struct timespec ts = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
        if (::ppoll(fds, n, timeout_ns < 0 ? nullptr : &ts, nullptr) >= 0) {
            return true;
        }
        if (errno != EINTR) {
            MPC_LOG(error, mpi, "poll in the transport's event watcher failed: %s", std::strerror(errno));
            return false;
        }
    }
}

/// Arms both transports' event fds: false when one has events pending (progress first).
bool arm_transports() noexcept {
    return (g.shm == nullptr || g.shm->arm()) && (g.ucx == nullptr || g.ucx->arm());
}

/// The transport's event watcher. While a VP is awake, the VPs progress the transport (their
/// idle loop polls it); this thread sleeps until every VP sleeps (on_all_asleep), then progresses
/// what is pending itself, arms the event fd and sleeps on it, so that a message from another
/// process is handled at once (its receiver's VP woken) although no VP polls. It never spins:
/// when arming keeps failing with nothing to progress it pauses (1 us, doubling up to 1 ms).
/// While it waits for every VP to sleep, it looks now and then whether a VP polled meanwhile;
/// if none did (every awake VP computes, the others sleep) it progresses the transport itself
/// until nothing is left, so that non-blocking operations between processes go on while all
/// the ranks compute (a round of a non-blocking collective, a rendezvous, the acknowledgement
/// a synchronous send waits for). It looks after MPC_NET_PROGRESS_US (1 ms) when its last
/// look found work, and backs off (doubling, up to 16 times that) while looks find none.
void watch_events() noexcept {
    // Named, so that its wake-ups can be told from the VPs' (/proc/self/task/*/comm; the
    // nodes.watcher_wakeups test counts them).
    pthread_setname_np(pthread_self(), "mpc-watcher");
    auto stopped = [] { return g.stopping.load(std::memory_order_acquire); };
    long period_ns = g.watch_period_ns;
    for (;;) {
        if (stopped()) {  // checked before each wait: a drain below may have taken the stop's wake-up
            return;
        }
        struct pollfd wait_idle = {g.idle_efd, POLLIN, 0};
        if (!poll_fds(&wait_idle, 1, period_ns > 0 ? period_ns : -1) || stopped()) {
            return;
        }
        if ((wait_idle.revents & POLLIN) == 0) {  // the period ran out
            int found = 0;
            if (!g.polled.exchange(false, std::memory_order_relaxed)) {
                for (int n = g.tr->progress(); n > 0 && !stopped(); n = g.tr->progress()) {
                    found += n;
                }
            }
            // Work found: look again soon (the next round of what it advanced); none, or the VPs
            // poll themselves: back off, up to 16 periods (a wake-up costs the computing ranks
            // tens of microseconds on a virtual machine: 4% of their time at one per ms).
            period_ns = found > 0 ? g.watch_period_ns : std::min(period_ns * 2, g.watch_period_ns * 16);
            continue;
        }
        period_ns = g.watch_period_ns;  // every VP asleep: from now on, events wake the watcher
        drain(g.idle_efd);
        long pause_ns = 0;
        while (sched::all_vps_asleep() && !stopped()) {
            if (g.tr->progress() > 0) {
                pause_ns = 0;
                continue;
            }
            if (!arm_transports()) {  // events pending that progress did not take (yet)
                pause_ns = pause_ns == 0 ? 1000 : std::min(pause_ns * 2, 1000000L);
                const struct timespec ts = {0, pause_ns};
                nanosleep(&ts, nullptr);
                continue;
            }
            pause_ns = 0;
            struct pollfd fds[3] = {{g.idle_efd, POLLIN, 0}, {-1, POLLIN, 0}, {-1, POLLIN, 0}};
            nfds_t nfds = 1;
            for (net::transport* t : {static_cast<net::transport*>(g.shm.get()), g.ucx.get()}) {
                if (t != nullptr) {
                    fds[nfds++].fd = t->event_fd();
                }
            }
            g.watching_fds.store(true, std::memory_order_seq_cst);
            if (sched::all_vps_asleep()) {  // a VP that woke before the store might not see it
                if (!poll_fds(fds, nfds) || stopped()) {
                    return;
                }
            }
            g.watching_fds.store(false, std::memory_order_relaxed);
            if ((fds[0].revents & POLLIN) != 0) {
                drain(g.idle_efd);  // a VP woke (and maybe slept again) meanwhile
            }
        }
    }
}

/// What tells nodes apart: the node name and the kernel's boot id (two containers or network
/// namespaces of one machine with one host name are one node: they can share memory).
std::string node_key() {
    std::string key = node_name();
    if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r"); f != nullptr) {
        char id[64] = {};
        if (std::fgets(id, sizeof id, f) != nullptr) {
            key += '/';
            key += id;
        }
        std::fclose(f);
    }
    return key;
}

/// Numbers the nodes of the job from every process's node key (in process order).
status number_nodes(int nprocs) noexcept {
    const std::string key = node_key();
    std::vector<net::blob> keys;
    if (status st = g.boot->allgather(std::as_bytes(std::span(key.data(), key.size())), keys); !st) {
        return st;
    }
    g.node_of_proc.assign(static_cast<std::size_t>(nprocs), 0);
    g.node_name_of_proc.clear();
    for (const net::blob& k : keys) {  // the name: the key up to its last '/' (node_key)
        std::string name(reinterpret_cast<const char*>(k.data()), k.size());
        g.node_name_of_proc.push_back(name.substr(0, name.rfind('/')));
    }
    int nodes = 0;
    for (auto p = keys.begin(); p != keys.end(); ++p) {  // a node's number: that of its first process
        auto first = std::find(keys.begin(), p, *p);
        g.node_of_proc[static_cast<std::size_t>(p - keys.begin())] =
            first == p ? nodes++ : g.node_of_proc[static_cast<std::size_t>(first - keys.begin())];
    }
    return {};
}

/// "rank 3" or "ranks 4-7": the ranks of process p.
std::string ranks_of(int p) {
    const int first = g.lay->first_rank(p);
    const int n = g.lay->rank_count(p);
    return n == 1 ? "rank " + std::to_string(first)
                  : "ranks " + std::to_string(first) + "-" + std::to_string(first + n - 1);
}

/// "process 1 (ranks 2-3, node n1)", for messages about another process.
std::string describe_process(int p) {
    std::string s = "process " + std::to_string(p) + " (" + ranks_of(p);
    if (static_cast<std::size_t>(p) < g.node_name_of_proc.size()) {
        s += ", node " + g.node_name_of_proc[static_cast<std::size_t>(p)];
    }
    return s + ")";
}

/// The start-up watchdog: from the first connection until every other process has answered
/// (check_peers), a thread waits MPC_NET_CONNECT_TIMEOUT seconds and then ends the job with a
/// message naming what did not happen. Needed because UCX's TCP transport connects with a
/// blocking connect() inside ucp_ep_create (a peer whose packets are dropped holds it for the
/// kernel's SYN retries, minutes) and, without its peer-failure mode, never reports a peer it
/// cannot reach: a job whose network between two nodes is blocked would otherwise wait,
/// silent, in its start-up or its first message.
struct startup_watch {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread t;
    std::atomic<int> connecting{-1};  ///< the process start() is connecting to, -1: none
};
/// Never destroyed, as the state above: a process that fails between start() and check_peers()
/// exits with the watchdog's std::thread still joinable (its destructor would call terminate).
startup_watch& g_watch = *new startup_watch;

std::int64_t connect_timeout_s() noexcept {
    auto knob = config::get_int("MPC_NET_CONNECT_TIMEOUT");
    return knob && *knob > 0 ? *knob : 30;
}

/// The processes that sent no ctl_hello yet: "process 1 (rank 1, node n1) over tcp/eth0 (...)",
/// at most four named.
std::string silent_processes(int* count) {
    std::string out;
    *count = 0;
    for (int p = 0; p < g.lay->processes(); ++p) {
        if (p == g.me || g.hello_from[static_cast<std::size_t>(p)].load(std::memory_order_acquire)) {
            continue;
        }
        if (++*count <= 4) {
            const std::string route = g.tr->route(p);
            out += (*count > 1 ? "; " : "") + describe_process(p) + (route.empty() ? "" : " over " + route);
        }
    }
    if (*count > 4) {
        out += "; and " + std::to_string(*count - 4) + " more";
    }
    return out;
}

void watch_startup(std::int64_t timeout_s) {
    {
        std::unique_lock lock(g_watch.m);
        if (g_watch.cv.wait_for(lock, std::chrono::seconds(timeout_s), [] { return g_watch.done; })) {
            return;
        }
    }
    const std::string me = describe_process(g.me);
    const int p = g_watch.connecting.load(std::memory_order_acquire);
    if (p >= 0) {
        std::fprintf(stderr,
                     "mpc: %s cannot reach %s: connecting to it has not finished after %lld s. Check the network "
                     "between the nodes (addresses, routes, firewall) and UCX_NET_DEVICES/UCX_TLS; "
                     "MPC_NET_CONNECT_TIMEOUT sets the wait\n",
                     me.c_str(), describe_process(p).c_str(), static_cast<long long>(timeout_s));
    } else {
        int count = 0;
        const std::string silent = silent_processes(&count);
        std::fprintf(stderr,
                     "mpc: %s cannot reach %d process%s: no answer within %lld s from %s. Check the network "
                     "between the nodes (addresses, routes, firewall) and UCX_NET_DEVICES/UCX_TLS; "
                     "MPC_NET_CONNECT_TIMEOUT sets the wait\n",
                     me.c_str(), count, count > 1 ? "es" : "", static_cast<long long>(timeout_s), silent.c_str());
    }
    end_job(2);
}

void stop_watch() noexcept {
    {
        std::lock_guard lock(g_watch.m);
        g_watch.done = true;
    }
    g_watch.cv.notify_all();
    if (g_watch.t.joinable()) {
        g_watch.t.join();
    }
}

/// Sends control message `tag` (with `cookie`) to every other process, then progresses the
/// transport from this thread (napping when it has nothing to do) until `heard` counts one such
/// message from each of them (the handler counts them).
void tell_all_and_wait(int tag, std::uint64_t cookie, const std::atomic<int>& heard) noexcept {
    const int nprocs = g.lay->processes();
    for (int p = 0; p < nprocs; ++p) {
        if (p != g.me) {
            send_control(p, control_envelope(tag, -1, -1, cookie));
        }
    }
    while (heard.load(std::memory_order_acquire) < nprocs - 1) {
        if (g.tr->progress() == 0) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, nullptr);
        }
    }
}

/// Checks that every other process can be reached: sends each a ctl_hello and waits, progressing,
/// until one came from each (a message both ways on every connection; UCX's TCP connections
/// may open only at the first message), then stops the start-up watchdog.
void check_peers() noexcept {
    tell_all_and_wait(ctl_hello, static_cast<std::uint64_t>(g.me), g.hellos);
    stop_watch();
}

/// Whether processes a and b talk through shared memory, from every process's list of the
/// peers its shm transport could connect (both must have reached the other).
bool pair_uses_shm(const std::vector<net::blob>& ok, int a, int b) {
    auto has = [&](int x, int y) {
        const net::blob& v = ok[static_cast<std::size_t>(x)];
        return static_cast<std::size_t>(y) < v.size() && v[static_cast<std::size_t>(y)] == std::byte{1};
    };
    return a != b && has(a, b) && has(b, a);
}

/// The shared-memory transport to the other processes of this node (MPC_NET_SHM): every process
/// takes part in the two all-gathers (its address, then the peers it reached), so that each pair
/// agrees on its transport. use_shm[p] (for every p): whether p is reached through it; whether
/// any pair of the job is not (UCX is needed then) is use_shm[nprocs].
status connect_shm(int nprocs, std::vector<char>& use_shm) noexcept {
    const auto n = static_cast<std::size_t>(nprocs);
    use_shm.assign(n + 1, 0);
    const int my_node = g.node_of_proc[static_cast<std::size_t>(g.me)];
    const bool neighbours = std::count(g.node_of_proc.begin(), g.node_of_proc.end(), my_node) > 1;
    auto knob = config::get_bool("MPC_NET_SHM");
    if (neighbours && knob && *knob) {
        net::shm_options o;
        o.max_peers = nprocs;
        o.index = g.me;
        o.on_recv = &on_recv;
        auto t = net::shm_transport::create(o);
        if (t) {
            g.shm = std::move(*t);
        } else {
            MPC_LOG(warn, net, "process %d: no shared-memory transport (%s): UCX for every process", g.me,
                    t.error().reason());
        }
    }
    static const std::vector<std::byte> no_address;
    std::vector<net::blob> addrs;
    if (status st = g.boot->allgather(g.shm != nullptr ? g.shm->address() : no_address, addrs); !st) {
        return st;
    }
    std::vector<std::byte> reached(n, std::byte{0});
    for (std::size_t p = 0; p < n && g.shm != nullptr; ++p) {
        if (static_cast<int>(p) != g.me && g.node_of_proc[p] == my_node && !addrs[p].empty()) {
            g_watch.connecting.store(static_cast<int>(p), std::memory_order_release);
            reached[p] = g.shm->connect(static_cast<int>(p), addrs[p].data(), addrs[p].size()) ? std::byte{1}
                                                                                                : std::byte{0};
        }
    }
    g_watch.connecting.store(-1, std::memory_order_release);
    std::vector<net::blob> ok;
    if (status st = g.boot->allgather(reached, ok); !st) {
        return st;
    }
    for (int a = 0; a < nprocs; ++a) {
        for (int b = 0; b < nprocs; ++b) {
            const bool shm = pair_uses_shm(ok, a, b);
            if (a == g.me && b != a) {
                use_shm[static_cast<std::size_t>(b)] = shm ? 1 : 0;
                if (shm) {
                    g.route[static_cast<std::size_t>(b)] = g.shm.get();
                } else if (g.shm != nullptr) {
                    g.shm->disconnect(b);  // UCX both ways for this pair
                }
            }
            use_shm[n] |= (a != b && !shm) ? 1 : 0;
        }
    }
    if (g.shm != nullptr && std::count(use_shm.begin(), use_shm.end() - 1, 1) == 0) {
        g.shm.reset();  // nobody to poll
    }
    return {};
}

/// UCX to the processes not reached through shared memory: every process takes part in the
/// address all-gather when any pair of the job needs UCX; a process loads the module only when
/// it needs it. False after printing the reason.
bool connect_ucx(int nprocs, const std::vector<char>& use_shm) noexcept {
    const auto n = static_cast<std::size_t>(nprocs);
    if (use_shm[n] == 0) {
        return true;  // every pair shares memory
    }
    bool mine = false;
    for (std::size_t p = 0; p < n; ++p) {
        mine |= static_cast<int>(p) != g.me && use_shm[p] == 0;
    }
    if (mine) {
        net::ucx_options o;
        o.max_peers = nprocs;
        o.on_recv = &on_recv;
        auto t = net::load_transport(o);
        if (!t) {
            stop_watch();
            std::fprintf(stderr, "mpc: process %d: %s\n", g.me, t.error().reason());
            g.boot->abort(2, "no transport");
            return false;
        }
        g.ucx = std::move(*t);
    }
    static const std::vector<std::byte> no_address;
    std::vector<net::blob> addrs;
    if (status st = g.boot->allgather(g.ucx != nullptr ? g.ucx->address() : no_address, addrs); !st) {
        stop_watch();
        std::fprintf(stderr, "mpc: process %d: exchanging transport addresses failed: %s\n", g.me, st.reason());
        return false;
    }
    for (int p = 0; p < nprocs; ++p) {
        if (p == g.me || use_shm[static_cast<std::size_t>(p)] != 0) {
            continue;  // ranks of this process talk through the engine directly
        }
        const net::blob& a = addrs[static_cast<std::size_t>(p)];
        g_watch.connecting.store(p, std::memory_order_release);
        if (status st = g.ucx->connect(p, a.data(), a.size()); !st) {
            stop_watch();
            std::fprintf(stderr, "mpc: %s cannot connect to %s: %s\n", describe_process(g.me).c_str(),
                         describe_process(p).c_str(), st.reason());
            g.boot->abort(1, "cannot connect");
            return false;
        }
        g.route[static_cast<std::size_t>(p)] = g.ucx.get();
    }
    return true;
}
}  // namespace

const char* node_name() noexcept {
    static const std::string name = [] {
        if (const char* env = std::getenv("MPC_NODE_NAME"); env != nullptr && *env != '\0') {
            return std::string(env);
        }
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0) {
            return std::string("localhost");
        }
        return std::string(host);
    }();
    return name.c_str();
}

void abort_job(int code) noexcept {
    if (g.boot != nullptr && g.boot->count() > 1 && std::strcmp(g.boot->name(), "pmix") == 0) {
        char why[96];
        std::snprintf(why, sizeof why, "process %d (ranks %d-%d) ended the job with status %d", g.me,
                      g.lay ? g.lay->first_rank(g.me) : -1,
                      g.lay ? g.lay->first_rank(g.me) + g.lay->rank_count(g.me) - 1 : -1, code);
        g.boot->abort(code, why);
    }
}

int node_of(int world_rank) noexcept {
    return g.node_of_proc.empty() ? 0 : g.node_of_proc[static_cast<std::size_t>(process_of(world_rank))];
}

bool detail::g_active = false;
int detail::progress() noexcept {
    if (!g.polled.load(std::memory_order_relaxed)) {
        g.polled.store(true, std::memory_order_relaxed);
    }
    const int n = g.tr->progress();
    // A VP polls while the watcher sleeps on the transports' fds: send it back to its timed
    // checks (state::watching_fds), once this poll found nothing (a message first).
    if (n == 0 && g.watching_fds.load(std::memory_order_relaxed) &&
        g.watching_fds.exchange(false, std::memory_order_relaxed)) {
        on_all_asleep(nullptr);  // the watcher finds a VP awake and leaves the fds
    }
    return n;
}
net::transport& transport() noexcept { return *g.tr; }

bool start(int nranks, int* first, int* count) noexcept {
    *first = 0;
    *count = nranks;
    auto b = net::bootstrap_from_env();
    if (!b) {
        std::fprintf(stderr, "mpc: cannot join the job's processes: %s\n", b.error().reason());
        return false;
    }
    g.boot = std::move(*b);
    g.me = g.boot->index();
    const int nprocs = g.boot->count();
    if (nprocs == 1) {
        return true;
    }
    auto lay = net::layout::make(nranks, nprocs);
    if (!lay) {
        std::fprintf(stderr, "mpc: process %d: %d ranks over %d processes: %s\n", g.me, nranks, nprocs,
                     lay.error().reason());
        g.boot->abort(2, "bad layout");
        return false;
    }
    g.lay.emplace(*lay);
    g.hello_from = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(nprocs));
    world().proc_index = g.me;
    world().nprocs = nprocs;
    *first = g.lay->first_rank(g.me);
    *count = g.lay->rank_count(g.me);

    if (status st = number_nodes(nprocs); !st) {
        std::fprintf(stderr, "mpc: process %d: exchanging node names failed: %s\n", g.me, st.reason());
        return false;
    }
    try {
        g_watch.t = std::thread(&watch_startup, connect_timeout_s());
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "mpc: process %d: cannot start a thread: %s\n", g.me, e.what());
        g.boot->abort(2, "no thread");
        return false;
    }
    g.route.assign(static_cast<std::size_t>(nprocs), nullptr);
    g.tr = std::make_unique<router>();
    std::vector<char> use_shm;
    if (status st = connect_shm(nprocs, use_shm); !st) {
        stop_watch();
        std::fprintf(stderr, "mpc: process %d: connecting the processes of its node failed: %s\n", g.me, st.reason());
        return false;
    }
    if (!connect_ucx(nprocs, use_shm)) {
        return false;
    }
    g_watch.connecting.store(-1, std::memory_order_release);
    g_active = true;
    return true;
}

namespace {

/// The scheduler's progress function: the transports' progress and 1 ("work": an idle VP keeps
/// polling instead of sleeping) while UCX holds at most MPC_NET_BUSY_SPIN_OPS operations in
/// flight (none included with MPC_NET_BUSY_SPIN_IDLE=1: a rank waiting for a message from
/// another node takes it at the next poll, not through the watcher and two wake-ups; off by
/// default: on cores shared with other busy processes a poller loses its turn to the sleepers
/// the scheduler favours), for at most MPC_NET_BUSY_SPIN_US after the last event. A message of a
/// megabyte over TCP needs the sender's and the receiver's progress for hundreds of
/// microseconds; past the VPs' spin (MPC_SCHED_SPIN_US) every chunk goes through the watcher
/// and a wake-up. Between two simulated nodes, 1 MiB ping-pong: 780-950 us sleeping, 463-499 us
/// polling; but with a window of 64 messages in flight, polling took the core the kernel's TCP
/// processing needs (1-4 MiB bandwidth fell from 3.1-4.2 to 2.3-2.5 GB/s). So a VP polls only
/// for a few operations in flight (a latency-bound exchange), and sleeps under a window. The
/// time bound keeps a rendezvous send whose receive is posted much later from holding a core.
int scheduler_progress(void*) noexcept {
    static std::atomic<std::uint64_t> quiet_since{0};  // first empty poll while busy, 0: none
    static const std::uint64_t cap_ns = [] {
        auto v = config::get_int("MPC_NET_BUSY_SPIN_US");
        return static_cast<std::uint64_t>(v && *v >= 0 ? *v : 0) * 1000;
    }();
    static const int max_ops = [] {
        auto v = config::get_int("MPC_NET_BUSY_SPIN_OPS");
        return v && *v >= 0 ? static_cast<int>(*v) : 0;
    }();
    static const bool when_idle = [] {
        auto v = config::get_bool("MPC_NET_BUSY_SPIN_IDLE");
        return v && *v;
    }();
    const int n = detail::progress();
    // Only UCX holds operations in flight (the shared-memory transport's complete inside the
    // calls); without it this is the poll loop of every waiting rank: nothing more to check.
    int ops = 0;
    if (n > 0 || cap_ns == 0 || g.ucx == nullptr || (ops = g.ucx->in_flight()) > max_ops ||
        (ops == 0 && !when_idle)) {
        if (quiet_since.load(std::memory_order_relaxed) != 0) {
            quiet_since.store(0, std::memory_order_relaxed);
        }
        return n;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const auto now = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
    std::uint64_t since = quiet_since.load(std::memory_order_relaxed);
    if (since == 0) {
        quiet_since.store(now, std::memory_order_relaxed);
        return 1;
    }
    return now - since < cap_ns ? 1 : 0;
}

}  // namespace

bool start_progress() noexcept {
    if (!g_active) {
        return true;
    }
    sched::set_external_events(true);
    auto h = sched::register_progress(&scheduler_progress, nullptr);
    if (!h) {
        std::fprintf(stderr, "mpc: process %d: cannot register the transport's progress: %s\n", g.me,
                     h.error().reason());
        return false;
    }
    g.progress_handle = *h;
    g.idle_efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (g.idle_efd < 0) {
        std::fprintf(stderr, "mpc: process %d: eventfd: %s\n", g.me, std::strerror(errno));
        return false;
    }
    if (auto v = config::get_int("MPC_NET_PROGRESS_US"); v && *v >= 0 && *v <= 10000000) {
        g.watch_period_ns = static_cast<long>(*v) * 1000;
    } else {
        std::fprintf(stderr, "mpc: process %d: MPC_NET_PROGRESS_US must be 0 (off) to 10000000 microseconds; using 1000\n", g.me);
    }
    g.watcher = std::thread(&watch_events);
    sched::set_all_asleep_hook(&on_all_asleep, nullptr);
    check_peers();
    return true;
}

void finish() noexcept {
    if (g.boot == nullptr) {
        return;
    }
    if (g_active) {
        // Every rank here has returned; peers may still need this process to progress (their
        // receives of its eager data over TCP, closes). Tell every process, then wait for all.
        tell_all_and_wait(ctl_done, 0, g.done_peers);
        if (g.progress_handle >= 0) {
            sched::unregister_progress(g.progress_handle).ignore();
            g.progress_handle = -1;
        }
        sched::set_all_asleep_hook(nullptr, nullptr);
        if (g.watcher.joinable()) {
            g.stopping.store(true, std::memory_order_release);
            on_all_asleep(nullptr);  // wakes the watcher wherever it sleeps on the eventfd
            g.watcher.join();
        }
        g_active = false;
    }
}

void close() noexcept {
    if (g.boot == nullptr) {
        return;
    }
    if (g.tr != nullptr) {
        g.tr->shutdown().ignore();  // no VP runs: none can be inside progress()
    }
    if (g.idle_efd >= 0) {  // no VP left to call on_all_asleep
        ::close(g.idle_efd);
        g.idle_efd = -1;
    }
    if (status st = g.boot->finalize(); !st) {
        MPC_LOG(warn, mpi, "telling the launcher that process %d finished failed: %s", g.me, st.reason());
    }
}

void send(std::uint32_t context, int source_rank, int source_world, int dest_world, int tag, const typed_buf& data,
          request* r, bool sync) noexcept {
    net::envelope env{};
    env.context_id = context;
    env.source = source_rank;
    env.dest = dest_world;
    env.tag = tag;
    env.size = data.bytes;
    env.kind = net::msg_kind::eager;
    env.flags = sync ? net::env_flag_sync : 0;
    env.source_world = source_world;
    env.cookie = reinterpret_cast<std::uintptr_t>(r);
    // With the cookie (the request's address), names this send for a cancel: a pooled request
    // counts its uses (a message of its previous use may still wait at the receiver); a
    // request on a blocking call's stack cannot be cancelled.
    env.seq = r->in_table ? ++r->net_serial : 0;
    r->net_tmp = nullptr;
    r->net_pending = sync ? 2 : 1;
    new (&r->netc) net::completion{};
    r->netc.fn = &on_sent;
    r->netc.arg = r;
    MPC_LOG(trace, mpi, "send from rank %d to rank %d, context %u, tag %d, %zu bytes%s", source_world, dest_world,
            context, tag, data.bytes, sync ? ", sync" : "");
    const void* p = data.base();
    if (!data.contig && data.bytes != 0) {
        r->net_tmp = std::malloc(data.bytes);
        if (r->net_tmp == nullptr) {
            fatal("out of memory packing a message for rank", dest_world, "no memory");
        }
        pack_data(data, r->net_tmp, data.bytes);
        p = r->net_tmp;
    }
    // The ack of a synchronous send and a cancel's reply come back through the other process,
    // maybe to another thread of this one (the watcher): a happens-before edge TSan cannot see.
    tsan_release(r);
    tl_sending = r;
    status st = g.tr->send(process_of(dest_world), env, p, data.bytes, &r->netc);
    tl_sending = nullptr;
    if (!st) {
        lost_peer("cannot send to", dest_world, st.reason());
    }
}

bool is_remote_send(const request* r) noexcept {
    return g_active && r->kind == req_kind::send && r->queued_at == nullptr && r->netc.fn == &on_sent;
}

bool cancel_send(request* r) noexcept {
    const net::envelope& sent = r->netc.header;
    std::atomic_ref<int>(r->net_cancel).store(0, std::memory_order_relaxed);
    net::envelope c = control_envelope(ctl_cancel, sent.source_world, sent.dest, sent.cookie);
    c.seq = sent.seq;
    const bool sync = (sent.flags & net::env_flag_sync) != 0;
    tsan_release(r);  // the reply comes through the other process (see send())
    send_control(process_of(sent.dest), c);
    int answer = 0;
    while ((answer = std::atomic_ref<int>(r->net_cancel).load(std::memory_order_acquire)) == 0) {
        poll();
        sched::yield();
    }
    if (answer != 1) {
        return false;  // matched already: the send completes normally
    }
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    r->status.mpc_count_hi_and_cancelled |= 1;
    if (sync) {
        send_event(r);  // no ack will come; the transport's completion (a dropped rendezvous) ends it
    }
    return true;
}

void receive(request* r, const net::envelope& env, net::incoming& msg, const void* copied) noexcept {
    const auto bytes = static_cast<std::size_t>(env.size);
    const std::size_t n = bytes <= r->target.bytes ? bytes : r->target.bytes;
    const int err = bytes > r->target.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    MPC_LOG(trace, mpi, "matched: from rank %d to rank %d, context %u, tag %d, %zu bytes", env.source_world, env.dest,
            env.context_id, env.tag, bytes);
    if ((env.flags & net::env_flag_sync) != 0) {
        send_ack(env);
    }
    if (!msg.is_rendezvous()) {
        unpack_data(copied != nullptr ? copied : msg.data(), r->target, n);
        if (msg.kept()) {
            g.tr->release(msg);
        }
        set_status(&r->status, env.source, env.tag, n, err);
        r->complete();
        return;
    }
    // Rendezvous: fetched straight into the buffer when it is contiguous and large enough,
    // else through a bounce buffer (on_fetched unpacks what fits).
    if (!msg.kept() && !msg.keep()) {
        MPC_LOG(error, mpi, "a rendezvous message from rank %d could not be kept", env.source_world);
    }
    set_status(&r->status, env.source, env.tag, n, err);
    new (&r->netc) net::completion{};
    r->netc.fn = &on_fetched;
    r->netc.arg = r;
    r->net_tmp = nullptr;
    void* buf = const_cast<char*>(r->target.base());
    if (!r->target.contig || bytes > r->target.bytes) {
        r->net_tmp = std::malloc(bytes);
        if (r->net_tmp == nullptr) {
            fatal("out of memory receiving a message from rank", env.source_world, "no memory");
        }
        buf = r->net_tmp;
    }
    if (status st = g.tr->fetch(msg, buf, bytes, &r->netc); !st) {
        lost_peer("cannot receive a message from rank", env.source_world, st.reason());
    }
}

}  // namespace mpc::mpi::remote
