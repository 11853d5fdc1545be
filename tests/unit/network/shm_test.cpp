// The shared-memory transport (network/shm.hpp): two transports of one process (each maps the
// other's segment through /proc/self/fd) and a forked peer (addresses over a socketpair): eager
// messages of every size class, ring wrap-around and a full ring, rendezvous through CMA (fetch
// after arrival, a too small buffer refused, release), order, the event fd waking a sleeping
// receiver, and a peer that cannot be read through CMA.
#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <tuple>

#include "../env_guard.hpp"
#include "network/shm.hpp"
#include "ucx_harness.hpp"

namespace mpc::net::test {
namespace {

/// One shm transport and what it received.
struct shm_side : recorder<shm_transport> {
    static void on_recv(void* arg, const envelope& env, incoming& msg) noexcept {
        auto* s = static_cast<shm_side*>(arg);
        std::lock_guard lk(s->mu);
        arrival a{env, {}, {}};
        if (msg.is_rendezvous()) {
            if (!msg.keep()) {
                std::abort();
            }
        } else {
            if (msg.keep()) {
                std::abort();  // eager data lives in the ring: the handler must copy it
            }
            const auto* p = static_cast<const std::byte*>(msg.data());
            a.bytes.assign(p, p + msg.size());
        }
        a.msg = msg;
        s->arrived.push_back(std::move(a));
    }
    bool open(int index, std::size_t ring_bytes = 0, std::size_t eager = 0) {
        shm_options o;
        o.max_peers = 4;
        o.index = index;
        o.on_recv = &on_recv;
        o.recv_arg = this;
        o.ring_bytes = ring_bytes;
        o.eager_max = eager;
        auto r = shm_transport::create(o);
        if (!r) {
            return false;
        }
        t = std::move(r.value());
        return true;
    }
};

/// The bytes of an arrival: copied by the handler, or fetched (rendezvous) into a new buffer.
bool bytes_of(shm_side& s, arrival& a, std::vector<std::byte>& out) {
    if (!a.msg.is_rendezvous()) {
        out = a.bytes;
        return true;
    }
    out.assign(a.msg.size(), std::byte{0});
    done_flag d;
    if (!s.t->fetch(a.msg, out.data(), out.size(), &d)) {
        return false;
    }
    return s.wait([&] { return d.done.load(); }) && d.ok && d.calls.load() == 1;
}

/// Two transports of this process, connected both ways (ids 0 and 1).
struct shm_pair : ::testing::Test {
    shm_side a, b;
    void open(std::size_t ring_bytes = 0, std::size_t eager = 0) {
        ASSERT_TRUE(a.open(0, ring_bytes, eager));
        ASSERT_TRUE(b.open(1, ring_bytes, eager));
        ASSERT_TRUE(a.t->connect(1, b.t->address().data(), b.t->address().size()).ok());
        ASSERT_TRUE(b.t->connect(0, a.t->address().data(), a.t->address().size()).ok());
        EXPECT_EQ(a.t->route(1), "shared memory (CMA for large messages)");
    }
};

TEST_F(shm_pair, EagerOfEverySizeClassKeepsEnvelopeAndBytes) {
    open();
    const std::size_t eager = a.t->eager_max();
    const std::size_t sizes[] = {0, 1, 7, 8, 9, 55, 63, 64, 65, 120, 127, 128, 129, 1000, 4095, eager - 1, eager};
    std::uint32_t seq = 0;
    for (std::size_t n : sizes) {
        for (bool size_is_len : {true, false}) {
            std::vector<std::byte> data = payload(seq, n);
            envelope e = make_env(seq, size_is_len ? n : n + 1000);  // control messages: size is a value
            done_flag d;
            ASSERT_TRUE(a.t->send(1, e, data.data(), n, &d));
            EXPECT_TRUE(d.done.load() && d.ok && d.calls.load() == 1) << "eager send completes at once";
            arrival got;
            ASSERT_TRUE(b.next(got));
            EXPECT_EQ(std::memcmp(&got.env, &e, sizeof e), 0) << n;
            EXPECT_FALSE(got.msg.is_rendezvous());
            ASSERT_EQ(got.bytes.size(), n);
            EXPECT_TRUE(check_payload(seq, got.bytes.data(), n)) << n;
            ++seq;
        }
    }
}

TEST_F(shm_pair, FullRingQueuesThenWrapsInOrder) {
    open(4096, 1500);  // 64 lines: a few messages fill it
    constexpr int count = 3000;
    std::vector<std::vector<std::byte>> data(count);
    std::vector<done_flag> done(count);
    for (int i = 0; i < count; ++i) {
        const std::size_t n = static_cast<std::size_t>(i * 37) % 1400;
        data[static_cast<std::size_t>(i)] = payload(static_cast<std::uint32_t>(i), n);
        ASSERT_TRUE(a.t->send(1, make_env(static_cast<std::uint32_t>(i), n), data[static_cast<std::size_t>(i)].data(),
                              n, &done[static_cast<std::size_t>(i)]));
    }
    EXPECT_FALSE(done[count - 1].done.load()) << "the ring is full: later sends wait";
    for (int i = 0; i < count; ++i) {
        arrival got;
        ASSERT_TRUE(b.wait([&] {
            a.t->progress();  // finishes the queued sends as space appears
            return b.count() > 0;
        }));
        ASSERT_TRUE(b.next(got));
        ASSERT_EQ(got.env.seq, static_cast<std::uint32_t>(i));
        ASSERT_TRUE(check_payload(got.env.seq, got.bytes.data(), got.bytes.size()));
    }
    ASSERT_TRUE(a.wait([&] { return done[count - 1].done.load(); }));
    for (auto& d : done) {
        EXPECT_TRUE(d.ok && d.calls.load() == 1);
    }
}

TEST_F(shm_pair, RendezvousFetchedAfterArrivalTooSmallRefusedReleaseCompletes) {
    open();
    const std::size_t n = 3 * a.t->eager_max() + 5;
    std::vector<std::byte> data = payload(5, n);
    done_flag sent;
    ASSERT_TRUE(a.t->send(1, make_env(5, n), data.data(), n, &sent));
    arrival got;
    ASSERT_TRUE(b.next(got));
    ASSERT_TRUE(got.msg.is_rendezvous());
    EXPECT_EQ(got.msg.size(), n);
    EXPECT_FALSE(sent.done.load()) << "the sender waits for the fetch";
    std::vector<std::byte> small(n - 1);
    done_flag f;
    status st = b.t->fetch(got.msg, small.data(), small.size(), &f);
    EXPECT_EQ(st.code(), errc::invalid_argument);
    EXPECT_TRUE(got.msg.kept()) << "refused: still fetchable";
    std::vector<std::byte> out;
    ASSERT_TRUE(bytes_of(b, got, out));
    EXPECT_TRUE(check_payload(5, out.data(), n));
    ASSERT_TRUE(a.wait([&] { return sent.done.load(); }));
    EXPECT_TRUE(sent.ok && sent.calls.load() == 1);

    done_flag sent2;
    ASSERT_TRUE(a.t->send(1, make_env(6, n), data.data(), n, &sent2));
    ASSERT_TRUE(b.next(got));
    b.t->release(got.msg);
    ASSERT_TRUE(a.wait([&] { return sent2.done.load(); }));
    EXPECT_TRUE(sent2.ok && sent2.calls.load() == 1);
}

/// Shared copies (MPC_NET_SHM_SPLIT): a sender that does not progress during the fetch leaves
/// every chunk to the receiver; one that progresses meanwhile (another thread) copies some of
/// them itself. Every byte lands either way; sizes not a multiple of the chunk; more sends in
/// flight than descriptors all share their copies, and a late cts copies nothing.
TEST_F(shm_pair, SharedCopiesLandEveryByteWhoeverCopies) {
    open();
    const std::size_t n = 64 * 64 * 1024 + 4321;  // 17 chunks of 256 KiB (an eighth, at most 256 KiB), the last short
    std::vector<std::byte> data = payload(7, n);
    std::vector<std::byte> out(n);

    // The sender does not progress during the fetch: the receiver copies all 17 chunks.
    done_flag sent;
    ASSERT_TRUE(a.t->send(1, make_env(7, n), data.data(), n, &sent));
    arrival got;
    ASSERT_TRUE(b.next(got));
    done_flag f;
    ASSERT_TRUE(b.t->fetch(got.msg, out.data(), out.size(), &f).ok());
    EXPECT_TRUE(f.done.load() && f.ok);
    EXPECT_TRUE(check_payload(7, out.data(), n));
    EXPECT_EQ(b.t->shared_chunks(false), 17u);
    ASSERT_TRUE(a.wait([&] { return sent.done.load(); }));  // handles the cts (nothing left), then the fin
    EXPECT_TRUE(sent.ok);
    EXPECT_EQ(a.t->shared_chunks(true), 0u);

    // The sender progresses in another thread meanwhile: it takes chunks too. Attempts with
    // 16 MiB (64 chunks of 256 KiB) until it did, in case that thread is kept off the CPU for a whole
    // copy on a loaded machine.
    {
        const std::size_t big = 256 * 64 * 1024;
        std::vector<std::byte> bdata = payload(9, big), bout(big);
        std::atomic<bool> stop{false};
        std::atomic<std::uint64_t> loops{0};
        std::thread helper([&] {
            while (!stop.load()) {
                a.t->progress();
                loops.fetch_add(1);
            }
        });
        for (int attempt = 0; attempt < 20 && a.t->shared_chunks(true) == 0; ++attempt) {
            const std::uint64_t read_before = b.t->shared_chunks(false);
            done_flag s2;
            ASSERT_TRUE(a.t->send(1, make_env(8, big), bdata.data(), big, &s2));
            ASSERT_TRUE(b.next(got));
            for (std::uint64_t l = loops.load(); loops.load() < l + 2;) {  // the helper is running
                std::this_thread::yield();
            }
            std::fill(bout.begin(), bout.end(), std::byte{0});
            done_flag f2;
            status st = b.t->fetch(got.msg, bout.data(), bout.size(), &f2);
            ASSERT_TRUE(st.ok()) << st.reason();
            while (!s2.done.load()) {  // the helper handles the fin
                std::this_thread::yield();
            }
            EXPECT_TRUE(check_payload(9, bout.data(), big));
            EXPECT_EQ(b.t->shared_chunks(false) - read_before + a.t->shared_chunks(true), 64u)
                << "every chunk copied exactly once";
        }
        stop.store(true);
        helper.join();
    }
    EXPECT_GT(a.t->shared_chunks(true), 0u) << "the sender never helped";

    // More sends in flight than descriptors (32 per peer), fetched in reverse order while the
    // sender does not progress: every fetch is a shared copy (the descriptors belong to the
    // receiver's fetches, not to the sends), the receiver copies every chunk, and the cts the
    // sender handles afterwards, each naming a copy that ended (its descriptor reused since),
    // copy nothing: the receive buffers, overwritten after their fetch, stay as they are.
    const std::size_t m = 3 * 64 * 1024;
    std::vector<done_flag> many(100);
    for (std::size_t i = 0; i < many.size(); ++i) {
        ASSERT_TRUE(a.t->send(1, make_env(static_cast<std::uint32_t>(100 + i), m), data.data(), m, &many[i]));
    }
    std::vector<arrival> all(many.size());
    for (auto& x : all) {
        ASSERT_TRUE(b.next(x));
    }
    const std::uint64_t read_before = b.t->shared_chunks(false);
    const std::uint64_t written_before = a.t->shared_chunks(true);
    std::vector<std::vector<std::byte>> outs(all.size(), std::vector<std::byte>(m));
    for (std::size_t i = all.size(); i-- > 0;) {
        done_flag fi;
        ASSERT_TRUE(b.t->fetch(all[i].msg, outs[i].data(), m, &fi).ok());
        EXPECT_TRUE(fi.done.load() && fi.ok);
        EXPECT_TRUE(check_payload(7, outs[i].data(), m));
        std::fill(outs[i].begin(), outs[i].end(), std::byte{0x5a});
    }
    EXPECT_EQ(b.t->shared_chunks(false) - read_before, 3 * many.size()) << "a fetch copied without a descriptor";
    ASSERT_TRUE(a.wait([&] {
        for (auto& d : many) {
            if (!d.done.load()) return false;
        }
        return true;
    }));
    EXPECT_EQ(a.t->shared_chunks(true), written_before) << "a late cts copied";
    for (const auto& o : outs) {
        EXPECT_TRUE(std::all_of(o.begin(), o.end(), [](std::byte x) { return x == std::byte{0x5a}; }));
    }
    // A later send shares its copy again and completes.
    done_flag last;
    ASSERT_TRUE(a.t->send(1, make_env(200, n), data.data(), n, &last));
    ASSERT_TRUE(b.next(got));
    const std::uint64_t before = b.t->shared_chunks(false) + a.t->shared_chunks(true);
    ASSERT_TRUE(b.t->fetch(got.msg, out.data(), out.size(), &f).ok());
    ASSERT_TRUE(a.wait([&] { return last.done.load(); }));
    EXPECT_EQ(b.t->shared_chunks(false) + a.t->shared_chunks(true) - before, 17u);
    EXPECT_TRUE(check_payload(7, out.data(), n));
}

TEST_F(shm_pair, BadAddressesAndAPeerWithoutCmaAreRefused) {
    ASSERT_TRUE(a.open(0));
    ASSERT_TRUE(b.open(1));
    shm_address addr{};
    std::memcpy(&addr, b.t->address().data(), sizeof addr);
    EXPECT_EQ(a.t->connect(1, &addr, sizeof addr - 1).code(), errc::invalid_argument);
    EXPECT_EQ(a.t->connect(2, &addr, sizeof addr).code(), errc::invalid_argument) << "index mismatch";
    shm_address bad = addr;
    bad.probe_addr = 8;  // process_vm_readv fails, as without ptrace permission
    EXPECT_EQ(a.t->connect(1, &bad, sizeof bad).code(), errc::unsupported);
    bad = addr;
    bad.token ^= 1;  // another process's word
    EXPECT_EQ(a.t->connect(1, &bad, sizeof bad).code(), errc::unsupported);
    EXPECT_EQ(a.t->route(1), "");
    done_flag d;
    EXPECT_EQ(a.t->send(1, make_env(0, 0), nullptr, 0, &d).code(), errc::invalid_argument);
    EXPECT_TRUE(a.t->connect(1, &addr, sizeof addr).ok());
    EXPECT_EQ(a.t->connect(1, &addr, sizeof addr).code(), errc::invalid_argument) << "twice";
}

TEST_F(shm_pair, SeveralThreadsSendWhileOthersProgress) {
    open(8192, 2000);
    constexpr int threads = 3;
    constexpr int per = 2000;
    std::atomic<int> completed{0};
    struct rec : completion {
        std::atomic<int>* n;
    };
    std::vector<rec> recs(threads * per);
    std::vector<std::byte> data = payload(1, 3000);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
            for (int i = 0; i < per; ++i) {
                rec& r = recs[static_cast<std::size_t>(t * per + i)];
                r.n = &completed;
                r.fn = [](completion* c, status st) noexcept {
                    if (st) {
                        static_cast<rec*>(c)->n->fetch_add(1);
                    }
                };
                // source = thread, seq = index: each thread's messages arrive in its order
                envelope e = make_env(static_cast<std::uint32_t>(i), static_cast<std::size_t>(i % 3000));
                e.source = t;
                if (!a.t->send(1, e, data.data(), static_cast<std::size_t>(i % 3000), &r)) {
                    std::abort();
                }
                a.t->progress();
            }
        });
    }
    std::vector<std::uint32_t> next(threads, 0);
    for (int got = 0; got < threads * per; ++got) {
        arrival m;
        ASSERT_TRUE(b.wait([&] {
            a.t->progress();
            return b.count() > 0;
        }));
        ASSERT_TRUE(b.next(m));
        ASSERT_EQ(m.env.seq, next[static_cast<std::size_t>(m.env.source)]++);
        if (m.msg.is_rendezvous()) {
            std::vector<std::byte> out;
            ASSERT_TRUE(bytes_of(b, m, out));
        }
    }
    for (auto& t : ts) {
        t.join();
    }
    ASSERT_TRUE(a.wait([&] { return completed.load() == threads * per; }));
}

// ---- with a forked peer -------------------------------------------------------------------------

bool child_open(shm_side& s, int fd) {
    if (!s.open(1)) {
        return false;
    }
    std::vector<std::byte> remote;
    return send_bytes(fd, s.t->address()) && recv_bytes(fd, remote) &&
           s.t->connect(0, remote.data(), remote.size()).ok() && sync_byte(fd);
}

void parent_open(shm_side& s, child_process& c) {
    ASSERT_TRUE(s.open(0));
    std::vector<std::byte> remote;
    ASSERT_TRUE(send_bytes(c.fd(), s.t->address()));
    ASSERT_TRUE(recv_bytes(c.fd(), remote));
    ASSERT_TRUE(s.t->connect(1, remote.data(), remote.size()).ok());
    ASSERT_TRUE(wait_byte(c.fd()));  // the child connected too
}

void expect_exit_ok(child_process& c) {
    int st = c.wait_exit();
    EXPECT_TRUE(WIFEXITED(st)) << st;
    EXPECT_EQ(WEXITSTATUS(st), 0);
}

TEST(ShmProcesses, MixedEagerAndRendezvousInOrderBothWays) {
    constexpr int count = 600;
    auto size_of = [](int i) { return static_cast<std::size_t>((i * 7919) % 40000); };
    child_process c([&](int fd) {
        shm_side s;
        if (!child_open(s, fd)) {
            return 10;
        }
        // Echo every message back (the fetched bytes of rendezvous ones).
        for (int i = 0; i < count; ++i) {
            arrival a;
            std::vector<std::byte> out;
            if (!s.next(a) || a.env.seq != static_cast<std::uint32_t>(i) || !bytes_of(s, a, out) ||
                out.size() != size_of(i) || !check_payload(a.env.seq, out.data(), out.size())) {
                return 11;
            }
            done_flag d;
            if (!s.t->send(0, a.env, out.data(), out.size(), &d) || !s.wait([&] { return d.done.load(); }) || !d.ok) {
                return 12;
            }
        }
        return wait_byte(fd) && s.t->shutdown().ok() ? 0 : 13;
    });
    shm_side s;
    parent_open(s, c);
    std::vector<std::vector<std::byte>> data(count);
    std::vector<done_flag> done(count);
    for (int i = 0; i < count; ++i) {
        data[static_cast<std::size_t>(i)] = payload(static_cast<std::uint32_t>(i), size_of(i));
        ASSERT_TRUE(s.t->send(1, make_env(static_cast<std::uint32_t>(i), size_of(i)),
                              data[static_cast<std::size_t>(i)].data(), size_of(i), &done[static_cast<std::size_t>(i)])
                        .ok());
    }
    for (int i = 0; i < count; ++i) {
        arrival a;
        std::vector<std::byte> out;
        ASSERT_TRUE(s.next(a));
        ASSERT_EQ(a.env.seq, static_cast<std::uint32_t>(i));
        EXPECT_EQ(a.msg.is_rendezvous(), size_of(i) > s.t->eager_max());
        ASSERT_TRUE(bytes_of(s, a, out));
        ASSERT_TRUE(check_payload(a.env.seq, out.data(), out.size()));
    }
    ASSERT_TRUE(s.wait([&] { return done[count - 1].done.load(); }));
    ASSERT_TRUE(sync_byte(c.fd()));
    expect_exit_ok(c);
}

/// With pidfd ("1": an eventfd the sender copies with pidfd_getfd) and without ("0", as on
/// kernels before 5.6: a pipe the sender opens through /proc/<pid>/fd).
class ShmWake : public ::testing::TestWithParam<const char*> {};

TEST_P(ShmWake, EventFdWakesASleepingReceiver) {
    mpc::test::env_guard knob("MPC_NET_SHM_PIDFD", GetParam());
    child_process c([](int fd) {
        shm_side s;
        if (!child_open(s, fd) || !wait_byte(fd)) {  // the parent sleeps now
            return 10;
        }
        done_flag d;
        if (!s.t->send(0, make_env(3, 5), "hello", 5, &d) || !d.done.load()) {
            return 11;
        }
        return wait_byte(fd) ? 0 : 12;
    });
    shm_side s;
    parent_open(s, c);
    EXPECT_EQ(s.t->uses_pidfd(), std::string(GetParam()) == "1");
    ASSERT_TRUE(s.t->arm());
    ASSERT_TRUE(sync_byte(c.fd()));
    struct pollfd pf = {s.t->event_fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&pf, 1, 60000), 1) << "the sender's write wakes the receiver";
    arrival a;
    ASSERT_TRUE(s.next(a));
    EXPECT_EQ(a.bytes.size(), 5u);
    ASSERT_TRUE(sync_byte(c.fd()));
    expect_exit_ok(c);
}

/// Sends queued behind a full ring fail once the receiving process has ended (and not while it
/// lives): found through its pidfd, or without pidfd through /proc/<pid>/stat, where the
/// process, not waited for yet, is a zombie.
TEST_P(ShmWake, QueuedSendsFailOnceThePeerEnded) {
    mpc::test::env_guard knob("MPC_NET_SHM_PIDFD", GetParam());
    child_process c([](int fd) {
        shm_side s;
        if (!child_open(s, fd) || !wait_byte(fd)) {  // never drains its ring
            return 10;
        }
        return 0;
    });
    shm_side s;
    parent_open(s, c);
    std::vector<std::byte> data = payload(1, 8000);
    std::vector<done_flag> done(200);
    std::size_t sent = 0;
    for (; sent < done.size(); ++sent) {
        ASSERT_TRUE(s.t->send(1, make_env(static_cast<std::uint32_t>(sent), data.size()), data.data(), data.size(),
                              &done[sent]));
        if (!done[sent].done.load()) {
            break;  // queued: the ring is full
        }
    }
    ASSERT_LT(sent, done.size()) << "the ring never filled";
    for (int i = 0; i < 3 * 4096; ++i) {  // liveness is checked every 4096 stalls
        s.t->progress();
    }
    EXPECT_FALSE(done[sent].done.load()) << "a living peer's queue failed";
    EXPECT_FALSE(s.t->peer_failed(1));
    ASSERT_TRUE(sync_byte(c.fd()));  // the child exits; not waited for yet: a zombie
    ASSERT_TRUE(s.wait([&] {
        s.t->progress();
        return done[sent].done.load();
    }));
    EXPECT_FALSE(done[sent].ok) << "a send to an ended process completed";
    EXPECT_TRUE(s.t->peer_failed(1));
    expect_exit_ok(c);
}

INSTANTIATE_TEST_SUITE_P(Pidfd, ShmWake, ::testing::Values("1", "0"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                             return std::string(i.param) == "1" ? "WithPidfd" : "WithoutPidfd";
                         });

/// Sleeps racing sends: a forked sender publishes messages at irregular short intervals while
/// the receiver drains, arms and sleeps on its event fd over and over. A wake-up lost between
/// a publication and the sleeper's re-check leaves the receiver asleep with a message waiting:
/// the poll's 20 s limit fails the test. Run with the senders' fences (MPC_NET_SHM_MEMBARRIER=0)
/// and without them (the sleeper's membarrier orders both sides). It checks the protocol
/// (flags, re-check, eventfd) over ~16,000 sleeps; the store-load reordering window the barriers
/// close is a few nanoseconds wide, too narrow for this test to hit reliably without them.
/// Parameters: MPC_NET_SHM_MEMBARRIER, MPC_NET_SHM_PIDFD.
class ShmSleepRace : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(ShmSleepRace, NoWakeUpIsLost) {
    mpc::test::env_guard knob("MPC_NET_SHM_MEMBARRIER", std::get<0>(GetParam()));
    mpc::test::env_guard pidfd("MPC_NET_SHM_PIDFD", std::get<1>(GetParam()));
    constexpr int count = 20000;
    child_process c([](int fd) {
        shm_side s;
        if (!child_open(s, fd)) {
            return 10;
        }
        std::uint64_t x = 88172645463325252ULL;  // xorshift: gaps of 0 to ~4000 spins
        for (int i = 0; i < count; ++i) {
            done_flag d;
            if (!s.t->send(0, make_env(static_cast<std::uint32_t>(i), 4), &i, 4, &d) || !d.done.load()) {
                return 11;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for (std::uint64_t k = x % 4096; k > 0; --k) {
                asm volatile("pause");
            }
        }
        return wait_byte(fd) ? 0 : 12;
    });
    shm_side s;
    parent_open(s, c);
    EXPECT_EQ(s.t->uses_pidfd(), std::string(std::get<1>(GetParam())) == "1");
    if (std::string(std::get<0>(GetParam())) == "1") {
        EXPECT_TRUE(s.t->uses_membarrier()) << "this kernel offers MEMBARRIER_CMD_GLOBAL_EXPEDITED";
    } else {
        EXPECT_FALSE(s.t->uses_membarrier());
    }
    int sleeps = 0;
    while (s.count() < static_cast<std::size_t>(count)) {
        if (s.t->progress() > 0 || !s.t->arm()) {
            continue;
        }
        ++sleeps;
        struct pollfd pf = {s.t->event_fd(), POLLIN, 0};
        ASSERT_EQ(::poll(&pf, 1, 20000), 1) << "asleep with " << s.count() << " of " << count
                                            << " messages received: a lost wake-up";
    }
    for (int i = 0; i < count; ++i) {
        arrival a;
        ASSERT_TRUE(s.next(a));
        ASSERT_EQ(a.env.seq, static_cast<std::uint32_t>(i));
    }
    RecordProperty("sleeps", sleeps);
    EXPECT_GT(sleeps, 0) << "the receiver never slept: the race was not exercised";
    ASSERT_TRUE(sync_byte(c.fd()));
    expect_exit_ok(c);
}

INSTANTIATE_TEST_SUITE_P(Barriers, ShmSleepRace,
                         ::testing::Combine(::testing::Values("1", "0"), ::testing::Values("1", "0")),
                         [](const ::testing::TestParamInfo<std::tuple<const char*, const char*>>& i) {
                             return std::string(std::string(std::get<0>(i.param)) == "1" ? "Membarrier"
                                                                                         : "SenderFences") +
                                    (std::string(std::get<1>(i.param)) == "1" ? "Pidfd" : "Pipe");
                         });

TEST_F(shm_pair, ArmRefusesWhileAMessageWaits) {
    open();
    done_flag d;
    ASSERT_TRUE(a.t->send(1, make_env(0, 0), nullptr, 0, &d));
    EXPECT_FALSE(b.t->arm());
    EXPECT_GT(b.t->progress(), 0);
    EXPECT_TRUE(b.t->arm());
    ASSERT_TRUE(a.t->send(1, make_env(1, 0), nullptr, 0, &d));
    struct pollfd pf = {b.t->event_fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&pf, 1, 60000), 1);
}

}  // namespace
}  // namespace mpc::net::test
