// The UCX transport between two processes (a forked child) and between two workers of one
// process: envelopes and payloads intact, order, rendezvous fetched after arrival, keep/release,
// the event fd, bad input, and a peer that dies.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <string>
#include <thread>

#include "../env_guard.hpp"
#include "ucx_harness.hpp"

namespace mpc::net::test {
namespace {

constexpr int parent_id = 0;
constexpr int child_id = 1;

bool same_env(const envelope& a, const envelope& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Sends and progresses until the send completed successfully.
bool send_wait(side& s, int peer, const envelope& env, const void* data, std::size_t len) {
    done_flag d;
    if (!s.t->send(peer, env, data, len, &d)) {
        return false;
    }
    return s.wait([&] { return d.done.load(); }) && d.ok && d.calls.load() == 1;
}

/// Fetches a kept message into a fresh buffer (made after the arrival) and waits.
bool fetch_wait(side& s, arrival& a, std::vector<std::byte>& out) {
    out.assign(a.msg.size(), std::byte{0});
    done_flag d;
    if (!s.t->fetch(a.msg, out.data(), out.size(), &d)) {
        return false;
    }
    return s.wait([&] { return d.done.load(); }) && d.ok && d.calls.load() == 1;
}

/// The bytes of a message, wherever they are (copied in the handler, kept, or rendezvous).
bool bytes_of(side& s, arrival& a, std::vector<std::byte>& out) {
    if (!a.msg.kept()) {
        out = a.bytes;
        return true;
    }
    return fetch_wait(s, a, out);
}

// Child: bootstrap, then run `body`; shut down once the parent says so.
int child_run(int fd, const std::function<bool(side&, int fd)>& body) {
    side s;
    if (!bootstrap(s, fd, parent_id)) {
        return 10;
    }
    if (!body(s, fd)) {
        return 11;
    }
    if (!wait_byte(fd)) {  // the parent is done with us
        return 12;
    }
    return s.t->shutdown().ok() ? 0 : 13;
}

void expect_child_ok(child_process& c);

/// Tells the child we are done, shuts down with it (an orderly close needs both sides to
/// progress), and checks its exit.
void finish(side& s, child_process& c) {
    ASSERT_TRUE(sync_byte(c.fd()));
    EXPECT_TRUE(s.t->shutdown().ok());
    expect_child_ok(c);
}

void expect_child_ok(child_process& c) {
    int st = c.wait_exit();
    ASSERT_TRUE(WIFEXITED(st)) << "child died of signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    EXPECT_EQ(WEXITSTATUS(st), 0);
}

constexpr std::size_t ping_sizes[] = {0, 1, 7, 64, 100, 1000, 4096, 8191, 8192, 20000};

TEST(Ucx, PingPongChecksEveryFieldAndByte) {
    child_process c([](int fd) {
        return child_run(fd, [](side& s, int) {
            for (std::uint32_t i = 0; i < std::size(ping_sizes); ++i) {
                arrival a;
                std::vector<std::byte> data;
                if (!s.next(a) || !same_env(a.env, make_env(i, ping_sizes[i])) || !bytes_of(s, a, data) ||
                    data.size() != ping_sizes[i] || !check_payload(i, data.data(), data.size())) {
                    return false;
                }
                envelope back = a.env;  // echo with the direction swapped
                std::swap(back.source, back.dest);
                back.tag += 1;
                if (!send_wait(s, parent_id, back, data.data(), data.size())) {
                    return false;
                }
            }
            return true;
        });
    });
    side s;
    ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
    for (std::uint32_t i = 0; i < std::size(ping_sizes); ++i) {
        envelope e = make_env(i, ping_sizes[i]);
        auto data = payload(i, ping_sizes[i]);
        ASSERT_TRUE(send_wait(s, child_id, e, data.data(), data.size())) << "message " << i;
        arrival a;
        ASSERT_TRUE(s.next(a)) << "no echo of message " << i;
        EXPECT_EQ(a.env.context_id, e.context_id);
        EXPECT_EQ(a.env.source, e.dest);
        EXPECT_EQ(a.env.dest, e.source);
        EXPECT_EQ(a.env.tag, e.tag + 1);
        EXPECT_EQ(a.env.size, e.size);
        EXPECT_EQ(a.env.seq, e.seq);
        EXPECT_EQ(a.env.kind, e.kind);
        EXPECT_EQ(a.env.flags, e.flags);
        EXPECT_EQ(a.env.reserved[0], e.reserved[0]);
        EXPECT_EQ(a.env.reserved[1], e.reserved[1]);
        std::vector<std::byte> back;
        ASSERT_TRUE(bytes_of(s, a, back));
        EXPECT_EQ(back, data) << "message " << i;
    }
    finish(s, c);
}

std::size_t mixed_size(std::uint32_t i) {
    if (i % 97 == 13) {
        return 200000 + i;  // a few large ones (rendezvous with UCX's default threshold)
    }
    return (i * 7919u) % 9000u;
}

TEST(Ucx, ThousandMixedMessagesArriveInOrder) {
    constexpr std::uint32_t n = 1000;
    child_process c([](int fd) {
        return child_run(fd, [](side& s, int) {
            std::vector<std::unique_ptr<done_flag>> flags;
            std::vector<std::vector<std::byte>> bufs;
            for (std::uint32_t i = 0; i < n; ++i) {
                bufs.push_back(payload(i, mixed_size(i)));
                flags.push_back(std::make_unique<done_flag>());
                if (!s.t->send(parent_id, make_env(i, bufs.back().size()), bufs.back().data(), bufs.back().size(),
                               flags.back().get())) {
                    return false;
                }
                s.t->progress();
            }
            return s.wait([&] {
                for (auto& f : flags) {
                    if (!f->done) {
                        return false;
                    }
                }
                return true;
            }) && std::all_of(flags.begin(), flags.end(), [](auto& f) { return f->ok && f->calls.load() == 1; });
        });
    });
    side s;
    ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
    std::size_t rendezvous = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        arrival a;
        ASSERT_TRUE(s.next(a)) << "message " << i << " never came";
        ASSERT_EQ(a.env.seq, i) << "out of order";
        ASSERT_TRUE(same_env(a.env, make_env(i, mixed_size(i))));
        rendezvous += a.msg.is_rendezvous() ? 1 : 0;
        std::vector<std::byte> data;
        ASSERT_TRUE(bytes_of(s, a, data));
        ASSERT_EQ(data.size(), mixed_size(i));
        ASSERT_TRUE(check_payload(i, data.data(), data.size())) << "message " << i;
    }
    RecordProperty("rendezvous_messages", static_cast<int>(rendezvous));
    finish(s, c);
}

// Sends without progress in between: every small message after the first to the parent goes
// into a batch (ucx_batch.cpp; up to 8136 bytes with the default 32 KiB batches, which leave in
// several fragments), the others (larger, rendezvous) flush it first. Order, envelopes and bytes
// must come out as sent; a batched message's payload length is its own, whatever the envelope's
// size field says (control messages use it for answers).
TEST(Ucx, MixedMessagesSentWithoutProgressArriveInOrderThroughBatches) {
    constexpr std::uint32_t n = 1000;
    auto len_of = [](std::uint32_t i) {
        return i % 50 == 25 ? std::size_t{0} : i % 3 == 0 ? mixed_size(i) : mixed_size(i) % 700;
    };
    auto env_of = [&](std::uint32_t i) {
        envelope e = make_env(i, len_of(i));
        if (i % 50 == 25) {
            e.size = 1;  // a payload-less message with a size of its own (a cancel's answer)
        }
        return e;
    };
    child_process c([&](int fd) {
        return child_run(fd, [&](side& s, int) {
            std::vector<std::unique_ptr<done_flag>> flags;
            std::vector<std::vector<std::byte>> bufs;
            for (std::uint32_t i = 0; i < n; ++i) {
                bufs.push_back(payload(i, len_of(i)));
                flags.push_back(std::make_unique<done_flag>());
                if (!s.t->send(parent_id, env_of(i), bufs.back().data(), bufs.back().size(), flags.back().get())) {
                    return false;
                }
            }
            return s.wait([&] {
                return std::all_of(flags.begin(), flags.end(), [](auto& f) { return f->done.load(); });
            }) && std::all_of(flags.begin(), flags.end(), [](auto& f) { return f->ok && f->calls.load() == 1; });
        });
    });
    side s;
    ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
    for (std::uint32_t i = 0; i < n; ++i) {
        arrival a;
        ASSERT_TRUE(s.next(a)) << "message " << i << " never came";
        ASSERT_EQ(a.env.seq, i) << "out of order";
        ASSERT_TRUE(same_env(a.env, env_of(i)));
        std::vector<std::byte> data;
        ASSERT_TRUE(bytes_of(s, a, data));
        ASSERT_EQ(data.size(), len_of(i));
        ASSERT_TRUE(check_payload(i, data.data(), data.size())) << "message " << i;
    }
    finish(s, c);
}

TEST(Ucx, BatchOfMoreThan64KiBIsRefused) {
    mpc::test::env_guard cap("MPC_NET_UCX_BATCH", "100000");
    side s;
    status st = s.open();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), errc::invalid_argument);
    EXPECT_NE(std::strstr(st.reason(), "MPC_NET_UCX_BATCH"), nullptr) << st.reason();
}

TEST(Ucx, LargeMessagesFetchedIntoBuffersMadeAfterArrival) {
    // The 300-byte message follows two others without progress: batched, it could not be kept.
    mpc::test::env_guard off("MPC_NET_UCX_BATCH", "0");  // forked children inherit it
    constexpr std::size_t sizes[] = {4u << 20, 64u << 20};
    child_process c([&](int fd) {
        return child_run(fd, [&](side& s, int) {
            // All three at once: the rendezvous ones complete only when the parent fetches them.
            std::vector<std::byte> data[3] = {payload(0, sizes[0]), payload(1, sizes[1]), payload(7, 300)};
            const std::uint32_t seqs[3] = {0, 1, 7};
            done_flag d[3];
            for (int i = 0; i < 3; ++i) {
                if (!s.t->send(parent_id, make_env(seqs[i], data[i].size()), data[i].data(), data[i].size(), &d[i])) {
                    return false;
                }
            }
            return s.wait([&] { return d[0].done && d[1].done && d[2].done; }) && d[0].ok && d[1].ok && d[2].ok;
        });
    });
    side s;
    s.keep_eager = true;
    ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
    // Let all three arrive before any buffer exists; the sends cannot complete meanwhile.
    ASSERT_TRUE(s.wait([&] { return s.count() == 3; }));
    for (std::uint32_t i = 0; i < 2; ++i) {
        arrival a;
        ASSERT_TRUE(s.next(a));
        ASSERT_EQ(a.env.seq, i);
        ASSERT_TRUE(a.msg.kept());
        ASSERT_EQ(a.msg.size(), sizes[i]);
        EXPECT_TRUE(a.msg.is_rendezvous()) << "UCX sent " << sizes[i] << " bytes eagerly";
        std::vector<std::byte> buf;
        ASSERT_TRUE(fetch_wait(s, a, buf));
        EXPECT_FALSE(a.msg.kept());
        EXPECT_TRUE(check_payload(i, buf.data(), buf.size())) << "message of " << sizes[i] << " bytes";
    }
    arrival a;
    ASSERT_TRUE(s.next(a));
    ASSERT_TRUE(a.msg.kept());
    ASSERT_FALSE(a.msg.is_rendezvous());
    for (int k = 0; k < 100; ++k) {
        s.t->progress();  // the kept data survives later progress
    }
    ASSERT_NE(a.msg.data(), nullptr);
    EXPECT_TRUE(check_payload(7, static_cast<const std::byte*>(a.msg.data()), 300));
    s.t->release(a.msg);
    EXPECT_FALSE(a.msg.kept());
    finish(s, c);
}

/// Child: sends one message of each size to the parent (payload i, seq i), one at a time (no
/// ordering matter), then shuts down when the parent says so.
int send_each(int fd, const std::vector<std::size_t>& sizes) {
    return child_run(fd, [&](side& s, int) {
        for (std::uint32_t i = 0; i < sizes.size(); ++i) {
            auto data = payload(i, sizes[i]);
            if (!send_wait(s, parent_id, make_env(i, data.size()), data.data(), data.size())) {
                return false;
            }
        }
        return true;
    });
}

/// Over TCP, messages up to MPC_NET_UCX_TCP_EAGER bytes arrive eager (UCX alone would start its
/// rendezvous at about 19 KiB there), larger ones by rendezvous; `limit` is the knob's value
/// ("0": UCX decides). Returns, per size of `sizes`, whether it arrived by rendezvous, after
/// checking every byte (eager ones kept, then read; rendezvous ones fetched). `route`, when given,
/// receives the transport's lanes to the peer.
std::vector<bool> rendezvous_over_tcp(const char* limit, const std::vector<std::size_t>& sizes,
                                      std::string* route = nullptr) {
    mpc::test::env_guard tls("UCX_TLS", "tcp");  // forked children inherit these
    mpc::test::env_guard knob("MPC_NET_UCX_TCP_EAGER", limit);
    mpc::test::env_guard off("MPC_NET_UCX_BATCH", "0");
    child_process c([&](int fd) { return send_each(fd, sizes); });
    side s;
    s.keep_eager = true;
    std::vector<bool> rndv;
    EXPECT_TRUE(bootstrap(s, c.fd(), child_id));
    EXPECT_EQ(s.t->route(child_id).compare(0, 4, "tcp/"), 0) << "not over TCP: " << s.t->route(child_id);
    if (route != nullptr) {
        *route = s.t->route(child_id);
    }
    for (std::uint32_t i = 0; i < sizes.size(); ++i) {
        arrival a;
        EXPECT_TRUE(s.wait([&] { return s.count() > 0; }));
        if (!s.next(a)) {
            break;
        }
        EXPECT_EQ(a.env.seq, i);
        EXPECT_EQ(a.msg.size(), sizes[i]);
        rndv.push_back(a.msg.is_rendezvous());
        std::vector<std::byte> buf;
        EXPECT_TRUE(fetch_wait(s, a, buf));
        EXPECT_TRUE(check_payload(i, buf.data(), buf.size())) << "message of " << sizes[i] << " bytes";
    }
    finish(s, c);
    return rndv;
}

TEST(Ucx, OverTcpMessagesUpToTheEagerLimitSkipTheRendezvous) {
    const std::vector<std::size_t> sizes = {4096, 30000, 65535, 65536, 65537, 300000};
    EXPECT_EQ(rendezvous_over_tcp("65536", sizes), (std::vector<bool>{false, false, false, false, true, true}));
    // Without the limit UCX's own threshold applies: the 30000-byte message is a rendezvous one.
    const std::vector<bool> ucx = rendezvous_over_tcp("0", sizes);
    ASSERT_EQ(ucx.size(), sizes.size());
    EXPECT_FALSE(ucx[0]);
    EXPECT_TRUE(ucx[1]) << "UCX sent 30000 bytes over TCP eagerly by itself: the limit is not what this tests";
    // The default limit (knob unset): 124 KiB, one fragment of the 128 KiB receive segments.
    EXPECT_EQ(rendezvous_over_tcp(nullptr, {65537, 126976, 126977, 300000}),
              (std::vector<bool>{false, false, true, true}));
}

/// The transport turns UCX's emulated PUT over TCP off (UCX_TCP_PUT_ENABLE=n, ucx.cpp's
/// ucx_defaults): no rma_bw lane, rendezvous data as active-message fragments; a user's
/// UCX_TCP_PUT_ENABLE wins. Rendezvous messages arrive whole either way.
TEST(Ucx, OverTcpRendezvousWithoutThePutLaneUnlessTheUserAsks) {
    const std::vector<std::size_t> sizes = {300000, 1u << 20, 4u << 20};
    std::string route;
    {
        mpc::test::env_guard unset("UCX_TCP_PUT_ENABLE", nullptr);
        EXPECT_EQ(rendezvous_over_tcp("65536", sizes, &route), (std::vector<bool>{true, true, true}));
        EXPECT_EQ(route.find("rma_bw"), std::string::npos) << "UCX's PUT lane over TCP: " << route;
        EXPECT_NE(route.find(" am"), std::string::npos) << route;
    }
    {
        mpc::test::env_guard put("UCX_TCP_PUT_ENABLE", "y");
        EXPECT_EQ(rendezvous_over_tcp("65536", sizes, &route), (std::vector<bool>{true, true, true}));
        EXPECT_NE(route.find("rma_bw"), std::string::npos) << "the user's UCX_TCP_PUT_ENABLE=y was ignored: " << route;
    }
}

/// Without ucx_options::persistent_eager (the engine's setting), an eager message that UCX's TCP
/// transport delivers in one fragment is read from UCX's receive buffer in the handler and
/// cannot be kept (UCX made no copy of it); rendezvous ones are kept and fetched as before.
/// With it, the same eager messages can be kept. Every byte checked.
TEST(Ucx, OverTcpEagerDataIsKeptOnlyWhenPersistentDataIsAsked) {
    mpc::test::env_guard tls("UCX_TLS", "tcp");  // forked children inherit these
    mpc::test::env_guard off("MPC_NET_UCX_BATCH", "0");
    const std::vector<std::size_t> sizes = {300, 5000, 30000, 300000};
    for (const bool persistent : {false, true}) {
        child_process c([&](int fd) { return send_each(fd, sizes); });
        side s;
        s.persistent = persistent;
        s.keep_eager = true;
        ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
        for (std::uint32_t i = 0; i < sizes.size(); ++i) {
            arrival a;
            ASSERT_TRUE(s.wait([&] { return s.count() > 0; }));
            ASSERT_TRUE(s.next(a));
            ASSERT_EQ(a.env.seq, i);
            const bool eager = i + 1 < sizes.size();
            EXPECT_EQ(a.msg.is_rendezvous(), !eager) << sizes[i] << " bytes";
            EXPECT_EQ(a.keep_refused, eager && !persistent) << sizes[i] << " bytes, persistent " << persistent;
            std::vector<std::byte> buf;
            ASSERT_TRUE(bytes_of(s, a, buf));
            ASSERT_EQ(buf.size(), sizes[i]);
            EXPECT_TRUE(check_payload(i, buf.data(), buf.size())) << sizes[i] << " bytes, persistent " << persistent;
        }
        finish(s, c);
    }
}

TEST(Ucx, EventFdWakesASleepingReceiver) {
    child_process c([](int fd) {
        return child_run(fd, [](side& s, int sock) {
            if (!wait_byte(sock)) {  // the parent sleeps on its event fd now
                return false;
            }
            auto data = payload(3, 64);
            return send_wait(s, parent_id, make_env(3, 64), data.data(), data.size());
        });
    });
    side s;
    ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
    ASSERT_GE(s.t->event_fd(), 0);
    ASSERT_TRUE(s.wait([&] { return s.t->arm(); })) << "the worker never became idle";
    ASSERT_EQ(s.count(), 0u);
    ASSERT_TRUE(sync_byte(c.fd()));
    pollfd p{s.t->event_fd(), POLLIN, 0};
    int rc = ::poll(&p, 1, 30000);  // a hang guard: the child sends at once
    ASSERT_EQ(rc, 1) << "poll on the event fd returned " << rc;
    arrival a;
    ASSERT_TRUE(s.next(a));
    EXPECT_EQ(a.env.seq, 3u);
    finish(s, c);
}

TEST(Ucx, PeerKilledFailsPendingSendsAndShutdownFinishes) {
    mpc::test::env_guard keepalive("UCX_KEEPALIVE_INTERVAL", "100ms");
    child_process c([](int fd) {
        side s;
        s.keep_eager = true;
        s.detect_failure = true;
        if (!bootstrap(s, fd, parent_id)) {
            return 10;
        }
        // Keep (never fetch) what arrives, then tell the parent and wait to be killed.
        if (!s.wait([&] { return s.count() > 0; }) || !sync_byte(fd)) {
            return 11;
        }
        for (;;) {
            s.t->progress();
        }
    });
    side s;
    s.detect_failure = true;
    ASSERT_TRUE(bootstrap(s, c.fd(), child_id));
    std::vector<std::byte> big(16u << 20, std::byte{1});
    done_flag pending;
    ASSERT_TRUE(s.t->send(child_id, make_env(1, big.size()), big.data(), big.size(), &pending));
    ASSERT_TRUE(s.wait([&] {  // progress until the child has the rendezvous request
        pollfd p{c.fd(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 1;
    }));
    ASSERT_TRUE(wait_byte(c.fd()));
    ASSERT_FALSE(pending.done) << "a rendezvous send completed before the receiver fetched it";
    ::kill(c.pid(), SIGKILL);
    int st = c.wait_exit();
    ASSERT_TRUE(WIFSIGNALED(st));
    ASSERT_TRUE(s.wait([&] { return pending.done.load() && s.failures > 0; })) << "the failure was never reported";
    EXPECT_FALSE(pending.ok);
    EXPECT_EQ(pending.calls.load(), 1);
    EXPECT_EQ(s.failed_peer, child_id);
    EXPECT_EQ(s.failures, 1);
    EXPECT_TRUE(s.t->peer_failed(child_id));
    done_flag after;
    EXPECT_FALSE(s.t->send(child_id, make_env(2, 0), nullptr, 0, &after).ok());
    EXPECT_EQ(after.calls.load(), 0);
    EXPECT_TRUE(s.t->shutdown().ok());
}

// ---- two workers in one process ----------------------------------------------------------------

struct pair_fixture : ::testing::Test {
    side a, b;
    void SetUp() override {
        ASSERT_TRUE(a.open());
        ASSERT_TRUE(b.open());
        ASSERT_TRUE(a.t->connect(1, b.t->address().data(), b.t->address().size()));
        ASSERT_TRUE(b.t->connect(0, a.t->address().data(), a.t->address().size()));
    }
    /// Both shut down at once: each endpoint close waits for the other side's acknowledgement.
    void TearDown() override {
        if (!a.t || !b.t) {
            return;
        }
        status sb;
        std::thread other([&] { sb = b.t->shutdown(); });
        EXPECT_TRUE(a.t->shutdown().ok());
        other.join();
        EXPECT_TRUE(sb.ok());
        EXPECT_EQ(a.failures + b.failures, 0) << "an orderly shutdown was reported as a failure";
    }
    /// Progresses both until pred holds (60 s hang guard).
    bool wait_both(const std::function<bool()>& pred) {
        return a.wait([&] {
            b.t->progress();
            return pred();
        });
    }
};

TEST_F(pair_fixture, SameProcessEagerAndRendezvous) {
    for (std::uint32_t i = 0; i < 4; ++i) {
        std::size_t n = i < 2 ? 100 * i : (8u << 20) / i;
        auto data = payload(i, n);
        done_flag d;
        ASSERT_TRUE(a.t->send(1, make_env(i, n), data.data(), n, &d));
        ASSERT_TRUE(wait_both([&] { return b.count() > 0; }));
        arrival got;
        ASSERT_TRUE(b.next(got));
        EXPECT_TRUE(same_env(got.env, make_env(i, n)));
        std::vector<std::byte> out;
        if (got.msg.kept()) {
            out.assign(n, std::byte{0});
            done_flag f;
            ASSERT_TRUE(b.t->fetch(got.msg, out.data(), out.size(), &f));
            ASSERT_TRUE(wait_both([&] { return f.done.load(); }));
            EXPECT_TRUE(f.ok);
        } else {
            out = got.bytes;
        }
        ASSERT_TRUE(wait_both([&] { return d.done.load(); }));
        EXPECT_TRUE(d.ok);
        EXPECT_EQ(d.calls.load(), 1);
        EXPECT_EQ(out, data);
    }
}

TEST_F(pair_fixture, BadInputIsRefused) {
    std::vector<std::byte> garbage(200);
    for (std::size_t i = 0; i < garbage.size(); ++i) {
        garbage[i] = static_cast<std::byte>(i * 37);
    }
    status st = a.t->connect(2, garbage.data(), garbage.size());
    EXPECT_EQ(st.code(), errc::invalid_argument) << st.reason();
    const auto& good = b.t->address();
    EXPECT_FALSE(a.t->connect(3, good.data(), good.size() - 1).ok()) << "a truncated address was taken";
    EXPECT_FALSE(a.t->connect(3, good.data(), 4).ok());
    EXPECT_FALSE(a.t->connect(3, nullptr, 0).ok());
    EXPECT_EQ(a.t->connect(1, good.data(), good.size()).code(), errc::invalid_argument) << "connected twice";
    EXPECT_EQ(a.t->connect(8, good.data(), good.size()).code(), errc::invalid_argument) << "peer id past max_peers";
    EXPECT_EQ(a.t->connect(-1, good.data(), good.size()).code(), errc::invalid_argument);

    done_flag d;
    EXPECT_EQ(a.t->send(5, make_env(0, 0), nullptr, 0, &d).code(), errc::invalid_argument) << "unknown peer";
    EXPECT_EQ(a.t->send(-3, make_env(0, 0), nullptr, 0, &d).code(), errc::invalid_argument);
    EXPECT_EQ(a.t->send(1, make_env(0, 0), nullptr, 0, nullptr).code(), errc::invalid_argument);
    EXPECT_EQ(d.calls.load(), 0);

    // fetch: a too-small buffer is refused and the message stays kept; then the right one works.
    b.keep_eager = true;
    auto data = payload(9, 5000);
    done_flag s1;
    ASSERT_TRUE(a.t->send(1, make_env(9, data.size()), data.data(), data.size(), &s1));
    ASSERT_TRUE(wait_both([&] { return b.count() > 0 && s1.done; }));
    arrival got;
    ASSERT_TRUE(b.next(got));
    std::vector<std::byte> small(data.size() - 1);
    done_flag f;
    EXPECT_EQ(b.t->fetch(got.msg, small.data(), small.size(), &f).code(), errc::invalid_argument);
    EXPECT_TRUE(got.msg.kept());
    EXPECT_EQ(f.calls.load(), 0);
    std::vector<std::byte> out(data.size());
    ASSERT_TRUE(b.t->fetch(got.msg, out.data(), out.size(), &f));
    ASSERT_TRUE(wait_both([&] { return f.done.load(); }));
    EXPECT_EQ(out, data);
    EXPECT_EQ(b.t->fetch(got.msg, out.data(), out.size(), &f).code(), errc::invalid_argument) << "fetched twice";
}

TEST_F(pair_fixture, ReleasedRendezvousCompletesItsSender) {
    std::vector<std::byte> big(8u << 20, std::byte{3});
    done_flag d;
    ASSERT_TRUE(a.t->send(1, make_env(1, big.size()), big.data(), big.size(), &d));
    ASSERT_TRUE(wait_both([&] { return b.count() > 0; }));
    arrival got;
    ASSERT_TRUE(b.next(got));
    ASSERT_TRUE(got.msg.is_rendezvous());
    b.t->release(got.msg);
    ASSERT_TRUE(wait_both([&] { return d.done.load(); })) << "the sender of a dropped rendezvous never completed";
    EXPECT_EQ(d.calls.load(), 1);
}

TEST(UcxShutdown, GivesUpOnAPeerThatDoesNotAnswer) {
    mpc::test::env_guard timeout("MPC_NET_UCX_CLOSE_TIMEOUT", "200");
    side a, b;
    ASSERT_TRUE(a.open());
    ASSERT_TRUE(b.open());
    ASSERT_TRUE(a.t->connect(1, b.t->address().data(), b.t->address().size()));
    ASSERT_TRUE(b.t->connect(0, a.t->address().data(), a.t->address().size()));
    std::vector<std::byte> data = payload(4, 100);
    done_flag d;
    ASSERT_TRUE(a.t->send(1, make_env(4, data.size()), data.data(), data.size(), &d));
    ASSERT_TRUE(a.wait([&] {  // both progress until b has the message (the endpoints are wired up)
        b.t->progress();
        return d.done.load() && b.count() == 1;
    }));
    // b never progresses while a shuts down: a's close is not acknowledged; a must still finish.
    EXPECT_TRUE(a.t->shutdown().ok());
    EXPECT_TRUE(b.t->shutdown().ok());  // and b, whose peer is gone
}

TEST_F(pair_fixture, SeveralThreadsProgressWhileOneSends) {
    constexpr std::uint32_t n = 2000;
    std::atomic<bool> stop{false};
    std::vector<std::thread> pollers;
    for (int k = 0; k < 2; ++k) {
        pollers.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
                a.t->progress();
                b.t->progress();
            }
        });
    }
    std::vector<done_flag> flags(n);
    std::vector<std::vector<std::byte>> bufs(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        bufs[i] = payload(i, (i * 31) % 3000);
        ASSERT_TRUE(a.t->send(1, make_env(i, bufs[i].size()), bufs[i].data(), bufs[i].size(), &flags[i]));
    }
    bool all = b.wait([&] { return b.count() == n; });
    bool sent = a.wait([&] {
        return std::all_of(flags.begin(), flags.end(), [](const done_flag& f) { return f.done.load(); });
    });
    stop = true;
    for (auto& t : pollers) {
        t.join();
    }
    ASSERT_TRUE(all);
    ASSERT_TRUE(sent);
    for (std::uint32_t i = 0; i < n; ++i) {
        arrival got;
        ASSERT_TRUE(b.next(got));
        ASSERT_EQ(got.env.seq, i);
        ASSERT_EQ(got.bytes.size(), bufs[i].size());
        ASSERT_TRUE(check_payload(i, got.bytes.data(), got.bytes.size()));
        ASSERT_EQ(flags[i].calls.load(), 1);
    }
}

}  // namespace
}  // namespace mpc::net::test
