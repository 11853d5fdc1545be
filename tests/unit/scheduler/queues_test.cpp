// The scheduler's intrusive queues (scheduler/queues.hpp), alone and under concurrent stress.
#include "scheduler/queues.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace {

using mpc::sched::detail::fifo;
using mpc::sched::detail::locked_fifo;
using mpc::sched::detail::mpsc_inbox;

struct node {
    node* next = nullptr;
    int producer = 0;
    int seq = 0;
};

std::vector<int> drain_seqs(fifo<node>& q) {
    std::vector<int> out;
    while (node* n = q.pop_front()) {
        EXPECT_EQ(n->next, nullptr) << "pop_front must unlink the element";
        out.push_back(n->seq);
    }
    return out;
}

std::vector<node> make_nodes(int n) {
    std::vector<node> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        v[static_cast<std::size_t>(i)].seq = i;
    }
    return v;
}

// ---- fifo -------------------------------------------------------------------------------------

TEST(Fifo, EmptyQueue) {
    fifo<node> q;
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.front(), nullptr);
    EXPECT_EQ(q.pop_front(), nullptr);
    node a;
    EXPECT_FALSE(q.remove(&a));
    EXPECT_EQ(q.size(), 0u);
}

TEST(Fifo, PushBackPopFrontIsFifo) {
    auto n = make_nodes(5);
    fifo<node> q;
    for (auto& e : n) {
        q.push_back(&e);
    }
    EXPECT_FALSE(q.empty());
    EXPECT_EQ(q.size(), 5u);
    EXPECT_EQ(q.front(), &n[0]);
    EXPECT_EQ(drain_seqs(q), (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.size(), 0u);
    // Usable again after being emptied (tail reset).
    q.push_back(&n[3]);
    q.push_back(&n[1]);
    EXPECT_EQ(drain_seqs(q), (std::vector<int>{3, 1}));
}

TEST(Fifo, PushFront) {
    auto n = make_nodes(4);
    fifo<node> q;
    q.push_front(&n[0]);  // into an empty queue: becomes head and tail
    q.push_back(&n[1]);
    q.push_front(&n[2]);
    q.push_front(&n[3]);
    EXPECT_EQ(q.size(), 4u);
    EXPECT_EQ(drain_seqs(q), (std::vector<int>{3, 2, 0, 1}));
}

TEST(Fifo, RemoveHeadMiddleTailAbsent) {
    auto n = make_nodes(5);
    fifo<node> q;
    for (auto& e : n) {
        q.push_back(&e);
    }
    EXPECT_TRUE(q.remove(&n[2]));  // middle
    EXPECT_EQ(n[2].next, nullptr);
    EXPECT_FALSE(q.remove(&n[2]));  // no longer there
    EXPECT_EQ(q.size(), 4u);
    EXPECT_TRUE(q.remove(&n[0]));  // head
    EXPECT_EQ(q.front(), &n[1]);
    EXPECT_TRUE(q.remove(&n[4]));  // tail: the tail pointer must move back
    EXPECT_EQ(q.size(), 2u);
    q.push_back(&n[4]);
    EXPECT_EQ(drain_seqs(q), (std::vector<int>{1, 3, 4}));

    q.push_back(&n[0]);
    EXPECT_TRUE(q.remove(&n[0]));  // only element
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.front(), nullptr);
    q.push_back(&n[1]);
    EXPECT_EQ(drain_seqs(q), (std::vector<int>{1}));
}

TEST(Fifo, AppendChain) {
    auto n = make_nodes(6);
    fifo<node> q;
    q.append_chain(nullptr, nullptr, 0);
    EXPECT_TRUE(q.empty());
    // chain 0 -> 1 -> 2 into an empty queue
    n[0].next = &n[1];
    n[1].next = &n[2];
    n[2].next = &n[5];  // garbage the queue must overwrite: the last element's next becomes null
    q.append_chain(&n[0], &n[2], 3);
    EXPECT_EQ(q.size(), 3u);
    // chain 3 -> 4 after it
    n[3].next = &n[4];
    q.append_chain(&n[3], &n[4], 2);
    EXPECT_EQ(q.size(), 5u);
    q.push_back(&n[5]);
    EXPECT_EQ(drain_seqs(q), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

// ---- mpsc_inbox -------------------------------------------------------------------------------

TEST(MpscInbox, SingleThreadOrderAndEmptyFlag) {
    auto n = make_nodes(4);
    mpsc_inbox<node> in;
    fifo<node> out;
    EXPECT_TRUE(in.empty());
    EXPECT_FALSE(in.maybe_nonempty());
    EXPECT_EQ(in.drain_to(out), 0u);
    EXPECT_TRUE(in.push(&n[0])) << "first push into an empty inbox reports it";
    EXPECT_FALSE(in.push(&n[1]));
    EXPECT_FALSE(in.push(&n[2]));
    EXPECT_FALSE(in.empty());
    EXPECT_TRUE(in.maybe_nonempty());
    out.push_back(&n[3]);  // drain appends after what is already there
    EXPECT_EQ(in.drain_to(out), 3u);
    EXPECT_TRUE(in.empty());
    EXPECT_EQ(out.size(), 4u);
    EXPECT_EQ(drain_seqs(out), (std::vector<int>{3, 0, 1, 2}));
    EXPECT_TRUE(in.push(&n[1])) << "empty again after a drain";
    EXPECT_EQ(in.drain_to(out), 1u);
    EXPECT_EQ(drain_seqs(out), (std::vector<int>{1}));
}

TEST(MpscInbox, ConcurrentProducersEveryElementOnceInProducerOrder) {
    constexpr int producers = 4;
    constexpr int per_producer = 100000;
    std::vector<std::unique_ptr<node[]>> nodes;
    for (int p = 0; p < producers; ++p) {
        nodes.emplace_back(new node[per_producer]);
        for (int i = 0; i < per_producer; ++i) {
            nodes.back()[i].producer = p;
            nodes.back()[i].seq = i;
        }
    }
    mpsc_inbox<node> in;
    std::atomic<int> went_nonempty{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&, p] {
            while (!go.load(std::memory_order_acquire)) {
            }
            for (int i = 0; i < per_producer; ++i) {
                if (in.push(&nodes[static_cast<std::size_t>(p)][i])) {
                    went_nonempty.fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    }

    std::vector<int> next(producers, 0);
    std::vector<std::vector<unsigned char>> seen(producers, std::vector<unsigned char>(per_producer, 0));
    long received = 0;
    long out_of_order = 0;
    long duplicates = 0;
    long drains = 0;
    fifo<node> out;
    go.store(true, std::memory_order_release);
    while (received < static_cast<long>(producers) * per_producer) {
        if (!in.maybe_nonempty()) {
            std::this_thread::yield();
            continue;
        }
        std::size_t got = in.drain_to(out);
        ++drains;
        ASSERT_EQ(out.size(), got);
        while (node* e = out.pop_front()) {
            ASSERT_GE(e->producer, 0);
            ASSERT_LT(e->producer, producers);
            auto& s = seen[static_cast<std::size_t>(e->producer)][static_cast<std::size_t>(e->seq)];
            duplicates += s;
            s = 1;
            if (e->seq != next[static_cast<std::size_t>(e->producer)]) {
                ++out_of_order;
            }
            next[static_cast<std::size_t>(e->producer)] = e->seq + 1;
            ++received;
        }
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_TRUE(in.empty());
    EXPECT_EQ(in.drain_to(out), 0u);
    EXPECT_EQ(duplicates, 0);
    EXPECT_EQ(out_of_order, 0) << "per-producer FIFO order was not preserved";
    for (int p = 0; p < producers; ++p) {
        EXPECT_EQ(next[static_cast<std::size_t>(p)], per_producer) << "producer " << p;
    }
    // The inbox alternates between empty (made so by a drain) and non-empty (made so by a push
    // that returns true); it starts and ends empty, so both transitions happened equally often.
    EXPECT_GE(went_nonempty.load(), 1);
    EXPECT_EQ(went_nonempty.load(), drains);
}

// ---- locked_fifo ------------------------------------------------------------------------------

TEST(LockedFifo, SingleThread) {
    auto n = make_nodes(3);
    locked_fifo<node> q;
    EXPECT_EQ(q.size_hint(), 0u);
    EXPECT_EQ(q.pop_front(), nullptr);
    q.push_back(&n[0]);
    q.push_back(&n[1]);
    q.push_back(&n[2]);
    EXPECT_EQ(q.size_hint(), 3u);
    EXPECT_EQ(q.pop_front(), &n[0]);
    EXPECT_EQ(q.size_hint(), 2u);
    EXPECT_EQ(q.pop_front(), &n[1]);
    EXPECT_EQ(q.pop_front(), &n[2]);
    EXPECT_EQ(q.pop_front(), nullptr);
    EXPECT_EQ(q.size_hint(), 0u);
}

TEST(LockedFifo, ConcurrentPushPop) {
    constexpr int threads_n = 4;
    constexpr int per_thread = 50000;
    constexpr long total = static_cast<long>(threads_n) * per_thread;
    std::vector<std::unique_ptr<node[]>> nodes;
    for (int p = 0; p < threads_n; ++p) {
        nodes.emplace_back(new node[per_thread]);
        for (int i = 0; i < per_thread; ++i) {
            nodes.back()[i].producer = p;
            nodes.back()[i].seq = i;
        }
    }
    std::vector<std::unique_ptr<std::atomic<int>[]>> seen;
    for (int p = 0; p < threads_n; ++p) {
        seen.emplace_back(new std::atomic<int>[per_thread]);
        for (int i = 0; i < per_thread; ++i) {
            seen.back()[i].store(0);
        }
    }
    locked_fifo<node> q;
    std::atomic<long> popped{0};
    std::atomic<long> order_violations{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_n; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load(std::memory_order_acquire)) {
            }
            // Each thread both pushes its own elements and pops whatever comes. One popper sees
            // the elements of one producer in that producer's order (the queue is FIFO).
            std::vector<int> last(threads_n, -1);
            int pushed = 0;
            while (pushed < per_thread || popped.load(std::memory_order_relaxed) < total) {
                if (pushed < per_thread) {
                    q.push_back(&nodes[static_cast<std::size_t>(t)][pushed++]);
                }
                if (node* e = q.pop_front()) {
                    seen[static_cast<std::size_t>(e->producer)][e->seq].fetch_add(1, std::memory_order_relaxed);
                    if (e->seq <= last[static_cast<std::size_t>(e->producer)]) {
                        order_violations.fetch_add(1, std::memory_order_relaxed);
                    }
                    last[static_cast<std::size_t>(e->producer)] = e->seq;
                    popped.fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    }
    go.store(true, std::memory_order_release);
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(popped.load(), total);
    EXPECT_EQ(order_violations.load(), 0);
    long wrong = 0;
    for (int p = 0; p < threads_n; ++p) {
        for (int i = 0; i < per_thread; ++i) {
            wrong += seen[static_cast<std::size_t>(p)][i].load() != 1;
        }
    }
    EXPECT_EQ(wrong, 0) << "elements popped zero or several times";
    EXPECT_EQ(q.pop_front(), nullptr);
    EXPECT_EQ(q.size_hint(), 0u);
}

}  // namespace
