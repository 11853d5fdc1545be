// Scheduling of the task-graph runtime: the component-built policies driven directly (which
// worker each push chooses, the order of pops, stealing, bounded queues), policy selection,
// performance models (calibration, regressions, storage, corrupt files), traces and the
// shutdown summary.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/modular.hpp"
#include "taskgraph/perfmodel.hpp"
#include "taskgraph/policy.hpp"
#include "tg_test_util.hpp"

using namespace std::chrono_literals;

namespace mpc::test {
namespace {

/// Task records pushed straight into a policy (never run).
struct fake_tasks {
    std::vector<std::unique_ptr<tg::task>> ts;
    tg::task* make(int priority = 0) {
        ts.push_back(std::make_unique<tg::task>());
        tg::task* t = ts.back().get();
        t->priority = priority;
        t->seq = ts.size();
        return t;
    }
};

/// A context of n workers with a mock model (nullptr: the runtime's).
tg::policy_context context(int n, double (*expected)(const tg::task*, int) = nullptr) {
    tg::policy_context ctx;
    ctx.nworkers = n;
    ctx.expected_us = expected;
    return ctx;
}

std::unique_ptr<tg::policy> make_policy(const char* name, const tg::policy_context& ctx) {
    const tg::policy_entry* e = tg::find_policy(name);
    EXPECT_NE(e, nullptr) << name;
    return e->make(ctx);
}

// Worker 0 runs anything in 10 µs, worker 1 in 30 µs (a slower kind of worker).
double two_speeds(const tg::task* /*t*/, int w) { return w == 0 ? 10.0 : 30.0; }

TEST(Dm, EachTaskToTheWorkerThatFinishesItFirst) {
    tg::policy_context ctx = context(2, &two_speeds);
    auto p = make_policy("dm", ctx);
    EXPECT_TRUE(p->measures());
    fake_tasks f;
    std::vector<tg::task*> t;
    std::vector<int> chosen;
    for (int i = 0; i < 4; ++i) {
        t.push_back(f.make());
        chosen.push_back(p->push(t.back()));
    }
    // Completion on w0 = 10, 20, then 30 = w1's 30 (tie: fewer tasks there), then 30 < 60.
    EXPECT_EQ(chosen, (std::vector<int>{0, 0, 1, 0}));
    EXPECT_DOUBLE_EQ(t[0]->predicted_us, 10.0);
    EXPECT_DOUBLE_EQ(t[2]->predicted_us, 30.0);
    // Worker 0's queue in FIFO order, worker 1 has its one task. Worker 1 does not take t1
    // from worker 0's queue: it would end it at 30 + 30, worker 0 at 10 + 10.
    EXPECT_EQ(p->pop(0), t[0]);
    EXPECT_EQ(p->pop(1), t[2]);
    EXPECT_EQ(p->pop(1), nullptr);
    EXPECT_EQ(p->pop_idle(1), nullptr);
    EXPECT_FALSE(p->may_have_work(1));
    EXPECT_TRUE(p->may_have_work(0));
    // t0 and t2 done: loads 20 (t1, t3) and 0; the next: 20+10 = 0+30, a tie, to the worker
    // with fewer tasks (w1).
    p->done(t[0], 0, 10.0);
    p->done(t[2], 1, 30.0);
    tg::task* t5 = f.make();
    EXPECT_EQ(p->push(t5), 1);
    EXPECT_EQ(p->pop(1), t5);
    p->done(t5, 1, 30.0);
    // t1 done too: loads 10 and 0; the next to w0 (20 < 30).
    EXPECT_EQ(p->pop(0), t[1]);
    p->done(t[1], 0, 10.0);
    tg::task* t6 = f.make();
    EXPECT_EQ(p->push(t6), 0);
    EXPECT_EQ(p->pop(0), t[3]);
    EXPECT_EQ(p->pop(0), t6);
    EXPECT_EQ(p->pop(0), nullptr);
}

double uncalibrated_on_1(const tg::task* /*t*/, int w) { return w == 0 ? 5.0 : std::nan(""); }

TEST(Dm, UncalibratedWorkerGetsTheTaskToMeasureIt) {
    tg::policy_context ctx = context(2, &uncalibrated_on_1);
    auto p = make_policy("dm", ctx);
    fake_tasks f;
    tg::task* t = f.make();
    EXPECT_EQ(p->push(t), 1);
    EXPECT_DOUBLE_EQ(t->predicted_us, 0.0);
    EXPECT_EQ(p->pop(1), t);
}

// Worker 0 runs a 10 ms task; worker 1 is slow for short tasks (9 ms, against 2 ms on 0).
double long_then_short(const tg::task* t, int w) {
    if (t->priority == 1) {
        return 10000.0;
    }
    return w == 0 ? 2000.0 : 9000.0;
}

TEST(Dm, ElapsedPartOfTheRunningTaskCounts) {
    tg::policy_context ctx = context(2, &long_then_short);
    auto p = make_policy("dm", ctx);
    fake_tasks f;
    tg::task* lng = f.make(1);
    EXPECT_EQ(p->push(lng), 0);
    tg::task* early = f.make();
    EXPECT_EQ(p->push(early), 1) << "worker 0 is 10 ms away: 12 ms > 9 ms";
    EXPECT_EQ(p->pop(1), early);
    EXPECT_EQ(p->pop(0), lng);  // starts now
    p->done(early, 1, 9000.0);
    std::this_thread::sleep_for(5ms);
    // 5 ms into the 10 ms task: worker 0 is free in at most 5 ms; 5 + 2 < 9.
    EXPECT_EQ(p->push(f.make()), 0);
}

double far_data_on_0(const tg::task* /*t*/, int w) { return w == 0 ? 100.0 : 0.0; }

TEST(Dmda, TransferTimeCounts) {
    tg::policy_context ctx = context(2, &two_speeds);
    ctx.transfer_us = &far_data_on_0;
    fake_tasks f;
    // dm ignores the transfer: worker 0 (10 < 30); dmda adds it: worker 1 (30 < 110).
    EXPECT_EQ(make_policy("dm", ctx)->push(f.make()), 0);
    EXPECT_EQ(make_policy("dmda", ctx)->push(f.make()), 1);
    EXPECT_EQ(make_policy("dmdas", ctx)->push(f.make()), 1);
}

TEST(Dmdas, WorkerQueuesSortedByPriority) {
    tg::policy_context ctx = context(1, &two_speeds);
    fake_tasks f;
    for (const char* name : {"dmda", "dmdas"}) {
        auto p = make_policy(name, ctx);
        std::vector<tg::task*> t = {f.make(0), f.make(5), f.make(-3), f.make(5)};
        for (tg::task* x : t) {
            EXPECT_EQ(p->push(x), 0);
        }
        std::vector<tg::task*> order;
        while (tg::task* x = p->pop(0)) {
            order.push_back(x);
        }
        if (std::string(name) == "dmdas") {
            EXPECT_EQ(order, (std::vector<tg::task*>{t[1], t[3], t[0], t[2]}));
        } else {
            EXPECT_EQ(order, t);  // dmda: FIFO
        }
    }
}

double no_model(const tg::task* /*t*/, int /*w*/) { return 0.0; }
double same_speed(const tg::task* /*t*/, int /*w*/) { return 1000.0; }

// Tasks with no prediction: spread by count; a worker whose queue runs dry takes the next
// task of a queue that holds more than one task more than it (a VP the OS descheduled, or
// tasks longer than others), but never the last one (a tie: the owner keeps it).
TEST(Dm, IdleWorkerTakesQueuedTasksItWouldEndSooner) {
    for (const char* name : {"dm", "dmda", "dmdas"}) {
        tg::policy_context ctx = context(2, &no_model);
        auto p = make_policy(name, ctx);
        fake_tasks f;
        std::vector<tg::task*> t = {f.make(), f.make(), f.make(), f.make()};
        std::vector<int> chosen;
        for (tg::task* x : t) {
            chosen.push_back(p->push(x));
        }
        EXPECT_EQ(chosen, (std::vector<int>{0, 1, 0, 1})) << name;
        // Worker 1 runs both of its tasks while worker 0 runs nothing.
        for (int i : {1, 3}) {
            EXPECT_EQ(p->pop(1), t[static_cast<std::size_t>(i)]) << name;
            p->done(t[static_cast<std::size_t>(i)], 1, 1.0);
        }
        EXPECT_EQ(p->pop(1), nullptr) << name << ": pop leaves the other queues alone";
        EXPECT_EQ(p->pop_idle(1), t[0]) << name << ": two tasks wait on worker 0, none on 1";
        EXPECT_EQ(t[0]->sched_worker, 1);
        EXPECT_EQ(p->pop_idle(1), nullptr) << name << ": worker 0's last task stays there";
        EXPECT_EQ(p->pop(0), t[2]) << name;
        p->done(t[0], 1, 1.0);
        p->done(t[2], 0, 1.0);
        // The counts are back to 0 and 0: the next push goes to worker 0 again (a tie).
        EXPECT_EQ(p->push(f.make()), 0) << name;
    }
}

// One visit of an idle worker moves a batch: with no model, until the counts are even; the
// first task runs now, the others wait in the thief's queue in their order.
TEST(Dm, IdleWorkerTakesABatch) {
    for (const char* name : {"dm", "dmda", "dmdas"}) {
        tg::policy_context ctx = context(2, &no_model);
        auto p = make_policy(name, ctx);
        fake_tasks f;
        std::vector<tg::task*> t;
        for (int i = 0; i < 12; ++i) {
            t.push_back(f.make());
            ASSERT_EQ(p->push(t.back()), i % 2) << name;  // a tie, then fewer on worker 1
        }
        for (int i = 1; i < 12; i += 2) {  // worker 1 runs its six, worker 0 none
            ASSERT_EQ(p->pop(1), t[static_cast<std::size_t>(i)]) << name;
            p->done(t[static_cast<std::size_t>(i)], 1, 1.0);
        }
        // 0 against 6: three move (0 < 5, 1 < 4, 2 < 3), then 3 against 3.
        EXPECT_EQ(p->pop_idle(1), t[0]) << name;
        EXPECT_EQ(p->pop(1), t[2]) << name;
        EXPECT_EQ(p->pop(1), t[4]) << name;
        EXPECT_EQ(p->pop(1), nullptr) << name;
        for (int i : {6, 8, 10}) {
            EXPECT_EQ(p->pop(0), t[static_cast<std::size_t>(i)]) << name;
        }
    }
}

// With a model (every task 1 ms on either worker): a task queued behind worker 0's running
// task would end at 1 ms + what is left of that task there, at 1 ms on idle worker 1, which
// takes it; the loads follow the task.
TEST(Dm, IdleWorkerTakesATaskThatWouldWaitBehindARunningOne) {
    tg::policy_context ctx = context(2, &same_speed);
    auto p = make_policy("dmda", ctx);
    fake_tasks f;
    tg::task* busy = f.make();
    EXPECT_EQ(p->push(busy), 0);
    EXPECT_EQ(p->pop(0), busy);  // worker 0 runs a 1 ms task
    // Worker 1 also gets one, then the queue of worker 0 fills while 1 is busy.
    tg::task* other = f.make();
    EXPECT_EQ(p->push(other), 1);
    EXPECT_EQ(p->pop(1), other);
    tg::task* queued = f.make();
    EXPECT_EQ(p->push(queued), 0) << "worker 0 started first: it is free first";
    // Worker 1 ends its task: now it would run `queued` at once, worker 0 after `busy`.
    p->done(other, 1, 1000.0);
    EXPECT_EQ(p->pop(1), nullptr);
    EXPECT_EQ(p->pop_idle(1), queued);
    EXPECT_EQ(queued->sched_worker, 1);
    EXPECT_DOUBLE_EQ(queued->predicted_us, 1000.0);
    // Each worker now runs one 1 ms task and has nothing queued: worker 0's ends first.
    EXPECT_EQ(p->push(f.make()), 0);
}

// Bounded worker queues: tasks that find every queue full wait in the deciding switch; a pull
// that makes room lets it push one down (can_push), and an idle worker takes waiting ones.
TEST(Modular, BoundedQueuesHoldTasksAboveUntilThereIsRoom) {
    tg::policy_context ctx = context(2, &two_speeds);
    tg::modular::heft_options o;
    o.queue_limit = 1;
    auto p = tg::modular::make_heft_tree(ctx, o);
    fake_tasks f;
    std::vector<tg::task*> t = {f.make(), f.make(), f.make(), f.make()};
    EXPECT_EQ(p->push(t[0]), 0);
    EXPECT_EQ(p->push(t[1]), 1);   // worker 0's queue is full
    EXPECT_EQ(p->push(t[2]), -1);  // both full: held
    EXPECT_EQ(p->push(t[3]), -1);
    EXPECT_TRUE(p->may_have_work(0));
    EXPECT_EQ(p->pop(0), t[0]);  // room in worker 0's queue: the switch pushes t[2] down
    EXPECT_EQ(t[2]->sched_worker, 0);
    EXPECT_EQ(t[3]->sched_worker, -1) << "still held";
    EXPECT_EQ(p->pop(0), t[2]);  // room again: t[3] goes down to worker 0
    EXPECT_EQ(t[3]->sched_worker, 0);
    EXPECT_EQ(p->pop(1), t[1]);
    EXPECT_EQ(p->pop(1), nullptr);
    EXPECT_EQ(p->pop_idle(1), nullptr) << "t[3] would end later on worker 1 (30 + 30 against 10 + 10)";
    EXPECT_FALSE(p->may_have_work(1));
    EXPECT_EQ(p->pop(0), t[3]);
    EXPECT_EQ(p->pop(0), nullptr);
}

TEST(Random, DrawsWorkersInProportionToTheirSpeed) {
    const double speed[] = {1.0, 3.0};
    tg::policy_context ctx = context(2);
    ctx.speed = speed;
    auto p = make_policy("random", ctx);
    fake_tasks f;
    constexpr int n = 8000;
    int on1 = 0;
    for (int i = 0; i < n; ++i) {
        int w = p->push(f.make());
        ASSERT_TRUE(w == 0 || w == 1);
        on1 += w;
        ASSERT_NE(p->pop(w), nullptr) << "a pushed task sits in its worker's queue";
    }
    // Expected 6000 (sd ~39).
    EXPECT_GT(on1, 5700);
    EXPECT_LT(on1, 6300);
}

int g_pusher = -1;
int pusher() { return g_pusher; }

/// ws on 2 workers, pushes made as worker g_pusher (-1: the program).
auto ws_of_two() {
    tg::policy_context ctx = context(2);
    ctx.current_worker = &pusher;
    return make_policy("ws", ctx);
}

TEST(Ws, LocalTasksStayLocalAndIdleWorkersSteal) {
    auto p = ws_of_two();
    fake_tasks f;
    g_pusher = 0;
    std::vector<tg::task*> t = {f.make(), f.make(), f.make()};
    for (tg::task* x : t) {
        EXPECT_EQ(p->push(x), -1);
    }
    EXPECT_TRUE(p->may_have_work(1)) << "worker 1 may steal";
    EXPECT_EQ(p->pop(0), t[2]) << "the owner takes its newest task";
    EXPECT_EQ(p->pop(1), t[0]) << "a thief takes the oldest";
    EXPECT_EQ(p->pop(1), t[1]);
    EXPECT_EQ(p->pop(0), nullptr);
    EXPECT_FALSE(p->may_have_work(0));
    // Pushes from the program (no worker) are spread.
    g_pusher = -1;
    tg::task* a = f.make();
    tg::task* b = f.make();
    p->push(a);
    p->push(b);
    tg::task* x = p->pop(0);
    tg::task* y = p->pop(0);
    EXPECT_TRUE((x == a && y == b) || (x == b && y == a));
    g_pusher = -1;
}

// A steal takes half of the victim's tasks (the oldest) into the thief's deque: the thief runs
// the oldest at once and the rest from its own deque, newest first, without further steals.
TEST(Ws, AStealTakesHalfOfTheVictimsTasks) {
    auto p = ws_of_two();
    fake_tasks f;
    g_pusher = 0;
    std::vector<tg::task*> t;
    for (int i = 0; i < 10; ++i) {
        t.push_back(f.make());
        p->push(t.back());
    }
    g_pusher = -1;
    EXPECT_EQ(p->pop(1), t[0]) << "the thief runs the oldest task it stole";
    for (int i = 9; i >= 5; --i) {
        EXPECT_EQ(p->pop(0), t[static_cast<std::size_t>(i)]) << "the victim keeps its 5 newest tasks";
    }
    for (int i = 4; i >= 1; --i) {
        EXPECT_EQ(p->pop(1), t[static_cast<std::size_t>(i)]) << "the thief's deque holds the other 4 it stole";
    }
    EXPECT_EQ(p->pop(0), nullptr);
    EXPECT_EQ(p->pop(1), nullptr);
    EXPECT_FALSE(p->may_have_work(0));
    // At most deque_queue::steal_batch_max tasks move at once: the victim keeps all the others.
    const int cap = static_cast<int>(tg::modular::deque_queue::steal_batch_max);
    const int many = 4 * cap;
    std::vector<tg::task*> m;
    g_pusher = 0;
    for (int i = 0; i < many; ++i) {
        m.push_back(f.make());
        p->push(m.back());
    }
    g_pusher = -1;
    EXPECT_EQ(p->pop(1), m[0]);
    for (int i = many - 1; i >= cap; --i) {
        ASSERT_EQ(p->pop(0), m[static_cast<std::size_t>(i)]) << "the victim's own task " << i;
    }
    // Then the victim steals from the thief (half of its cap - 1 tasks, the oldest first).
    EXPECT_EQ(p->pop(0), m[1]);
    int left = 0;
    while (p->pop(1) != nullptr || p->pop(0) != nullptr) {
        ++left;
    }
    EXPECT_EQ(left, cap - 2);
}

TEST(Lws, StealsFromTheNearestWorkerFirst) {
    const int vps[] = {0, 1, 2, 3};
    tg::policy_context ctx = context(4);
    ctx.current_worker = &pusher;
    ctx.worker_vp = vps;
    auto p = make_policy("lws", ctx);
    fake_tasks f;
    tg::task* far = f.make();
    tg::task* near = f.make();
    g_pusher = 3;
    p->push(far);
    g_pusher = 0;
    p->push(near);
    g_pusher = -1;
    EXPECT_EQ(p->pop(1), near) << "worker 1 steals from worker 0 (distance 1) before worker 3 (distance 2)";
    EXPECT_EQ(p->pop(1), far);
    EXPECT_EQ(p->pop(1), nullptr);
}

// Through the runtime: a task submits children (they go to its own worker's deque) and keeps
// its worker busy until another worker has run some of them: they can only have been stolen.
TEST(Ws, IdleWorkerStealsAChildOfABusyWorker) {
    for (const char* name : {"ws", "lws"}) {
        tg::config c;
        c.ncpus = 2;
        c.sched = name;
        c.config_over_env = true;
        ASSERT_TRUE(tg::init(c).ok());
        std::atomic<int> parent_worker{-1};
        std::atomic<int> stolen{0};
        std::atomic<bool> saw_steal{false};
        probe child{[&](void**) {
            if (tg::current_worker() != parent_worker.load()) {
                stolen.fetch_add(1);
            }
        }};
        tg::codelet child_cl = probe_codelet(0, "child");
        probe parent{[&](void**) {
            parent_worker.store(tg::current_worker());
            for (int i = 0; i < 20; ++i) {
                tg::task* t = *tg::task_create();
                tg::task_desc d;
                d.cl = &child_cl;
                d.cl_arg = &child;
                EXPECT_TRUE(tg::submit(t, d).ok());
                tg::task_release(t);
            }
            auto end = std::chrono::steady_clock::now() + 5s;
            while (stolen.load() == 0 && std::chrono::steady_clock::now() < end) {
            }
            saw_steal.store(stolen.load() > 0);
        }};
        tg::codelet parent_cl = probe_codelet(0, "parent");
        tg::task_release(submit_probe(parent_cl, &parent, {}, {}));
        ASSERT_TRUE(tg::wait_for_all().ok());
        EXPECT_TRUE(saw_steal.load()) << name << ": no child ran elsewhere while its parent's worker was busy";
        ASSERT_TRUE(tg::shutdown().ok());
    }
}

TEST(Heteroprio, BucketsByPriorityHighestFirstFifoWithin) {
    tg::policy_context ctx = context(2);
    auto p = make_policy("heteroprio", ctx);
    fake_tasks f;
    std::vector<tg::task*> t = {f.make(0), f.make(5), f.make(-5), f.make(3), f.make(5), f.make(99)};
    for (tg::task* x : t) {
        EXPECT_EQ(p->push(x), -1);
    }
    // 99 is clamped to the highest bucket (5), after the two 5s already there.
    std::vector<tg::task*> expect = {t[1], t[4], t[5], t[3], t[0], t[2]};
    for (std::size_t i = 0; i < expect.size(); ++i) {
        EXPECT_EQ(p->pop(static_cast<int>(i % 2)), expect[i]) << i;
    }
    EXPECT_EQ(p->pop(0), nullptr);
}

TEST(Modular, EagerAndPrioTreesKeepTheirOrders) {
    tg::policy_context ctx = context(3);
    fake_tasks f;
    auto e = make_policy("modular-eager", ctx);
    auto q = make_policy("modular-prio", ctx);
    std::vector<tg::task*> t = {f.make(1), f.make(4), f.make(-2), f.make(4)};
    for (tg::task* x : t) {
        EXPECT_EQ(e->push(x), -1);
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
        EXPECT_EQ(e->pop(static_cast<int>(i % 3)), t[i]);
    }
    for (tg::task* x : t) {
        q->push(x);
    }
    EXPECT_EQ(q->pop(2), t[1]);
    EXPECT_EQ(q->pop(0), t[3]);
    EXPECT_EQ(q->pop(1), t[0]);
    EXPECT_EQ(q->pop(1), t[2]);
}

TEST(Policies, UnknownNameIsRefusedWithTheValidNames) {
    std::string names = tg::policy_names();
    for (const char* p : all_policies) {
        EXPECT_NE(names.find(p), std::string::npos) << p;
        EXPECT_NE(tg::find_policy(p), nullptr) << p;
    }
    EXPECT_EQ(tg::find_policy("dmdax"), nullptr);
    tg::config c;
    c.ncpus = 1;
    c.sched = "dmdax";
    c.config_over_env = true;
    ::testing::internal::CaptureStderr();
    status st = tg::init(c);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(st.code(), errc::invalid_argument);
    EXPECT_NE(err.find("dmdax"), std::string::npos) << err;
    EXPECT_NE(err.find("heteroprio"), std::string::npos) << "the error lists the valid names: " << err;
    EXPECT_FALSE(tg::running());
}

// ------------------------------------------------------------------------------------------
// Performance models

/// A fresh model directory per test (MPC_TG_PERFMODEL_DIR), removed at the end.
class Models : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("mpc_tg_models_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        setenv("MPC_TG_PERFMODEL_DIR", dir_.c_str(), 1);
        unsetenv("MPC_TG_CALIBRATE");
        unsetenv("STARPU_CALIBRATE");
        tg::model_unload_all();
    }
    void TearDown() override {
        tg::model_unload_all();
        unsetenv("MPC_TG_PERFMODEL_DIR");
        unsetenv("MPC_TG_CALIBRATE");
        std::filesystem::remove_all(dir_);
    }
    std::string symbol(const char* base) const {
        return std::string(base) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }
    std::filesystem::path dir_;
};

TEST_F(Models, HistoryCalibratesAfterTenRunsThenStops) {
    tg::perfmodel* m = tg::model_get(symbol("hist").c_str(), tg::model_type::history);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(tg::model_get(symbol("hist").c_str(), tg::model_type::history), m) << "one record per symbol";
    EXPECT_EQ(tg::model_get(nullptr, tg::model_type::history), nullptr);
    for (unsigned i = 0; i < tg::calibrate_minimum; ++i) {
        EXPECT_TRUE(std::isnan(tg::model_expected_us(m, tg::arch_cpu, 0xabc, 100))) << "uncalibrated after " << i;
        tg::model_record(m, tg::arch_cpu, 0xabc, 100, 10.0 + i);
    }
    EXPECT_DOUBLE_EQ(tg::model_expected_us(m, tg::arch_cpu, 0xabc, 100), 14.5);
    EXPECT_TRUE(std::isnan(tg::model_expected_us(m, tg::arch_cpu, 0xdef, 100))) << "another footprint";
    tg::model_record(m, tg::arch_cpu, 0xabc, 100, 1000.0);
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 0xabc), tg::calibrate_minimum) << "calibrated: no more runs (level 0)";
    tg::model_record(m, tg::arch_cpu, 0xabc, 100, 1000.0, true);
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 0xabc), tg::calibrate_minimum + 1) << "given measurements count";
}

TEST_F(Models, CalibrationLevels) {
    const std::string s = symbol("cal");
    tg::perfmodel* m = tg::model_get(s.c_str(), tg::model_type::history);
    setenv("STARPU_CALIBRATE", "1", 1);
    tg::model_unload_all();
    for (int i = 0; i < 15; ++i) {
        tg::model_record(m, tg::arch_cpu, 1, 8, 20.0);
    }
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 15u) << "STARPU_CALIBRATE=1 keeps every run";
    ASSERT_TRUE(tg::model_save_all().ok());
    tg::model_unload_all();
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 15u) << "read back from disk";
    setenv("STARPU_CALIBRATE", "2", 1);
    tg::model_unload_all();
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 0u) << "STARPU_CALIBRATE=2 starts from scratch";
    setenv("STARPU_CALIBRATE", "7", 1);
    tg::model_unload_all();
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 15u) << "a bad level is 0: the file is read";
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("not 0, 1 or 2"), std::string::npos) << err;
    unsetenv("STARPU_CALIBRATE");
}

TEST_F(Models, RegressionFitsPowerLaw) {
    tg::perfmodel* m = tg::model_get(symbol("reg").c_str(), tg::model_type::regression);
    for (std::size_t n : {1000u, 2000u, 4000u, 8000u, 16000u}) {
        for (int k = 0; k < 2; ++k) {
            tg::model_record(m, tg::arch_cpu, static_cast<std::uint32_t>(n), n, 2.0 * std::pow(n, 1.5));
        }
    }
    const double at = 32000;
    EXPECT_NEAR(tg::model_expected_us(m, tg::arch_cpu, 0, 32000), 2.0 * std::pow(at, 1.5), 1e-6 * std::pow(at, 1.5));
}

TEST_F(Models, RegressionWithOneSizeAnswersFromHistory) {
    tg::perfmodel* m = tg::model_get(symbol("reg1").c_str(), tg::model_type::regression);
    for (int k = 0; k < 10; ++k) {
        tg::model_record(m, tg::arch_cpu, 7, 500, 40.0);
    }
    EXPECT_TRUE(std::isnan(tg::model_expected_us(m, tg::arch_cpu, 8, 1000))) << "one size: no regression";
    EXPECT_DOUBLE_EQ(tg::model_expected_us(m, tg::arch_cpu, 7, 500), 40.0);
}

TEST_F(Models, NonLinearRegressionFitsPowerLawPlusConstant) {
    tg::perfmodel* m = tg::model_get(symbol("nl").c_str(), tg::model_type::nl_regression);
    auto f = [](double n) { return 3.0 * std::pow(n, 1.2) + 50.0; };
    for (std::size_t n : {100u, 200u, 400u, 800u, 1600u}) {
        for (int k = 0; k < 3; ++k) {
            tg::model_record(m, tg::arch_cpu, static_cast<std::uint32_t>(n), n, f(static_cast<double>(n)));
        }
    }
    EXPECT_NEAR(tg::model_expected_us(m, tg::arch_cpu, 0, 3200), f(3200), 0.01 * f(3200));
    EXPECT_NEAR(tg::model_expected_us(m, tg::arch_cpu, 0, 150), f(150), 0.01 * f(150));
}

TEST_F(Models, StoredBetweenRunsInTheTextFormat) {
    const std::string s = symbol("disk");
    tg::perfmodel* m = tg::model_get(s.c_str(), tg::model_type::history);
    for (int i = 0; i < 10; ++i) {
        tg::model_record(m, tg::arch_cpu, 0x1234, 64, 8.0);
    }
    ASSERT_TRUE(tg::model_save_all().ok());
    const std::string path = tg::model_path(s.c_str());
    EXPECT_EQ(path.rfind(dir_.string(), 0), 0u) << path << " is under MPC_TG_PERFMODEL_DIR";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("mpc-perfmodel 1"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("entry 00001234 64 10 80"), std::string::npos) << text.str();
    tg::model_unload_all();
    EXPECT_DOUBLE_EQ(tg::model_expected_us(m, tg::arch_cpu, 0x1234, 64), 8.0);
}

TEST_F(Models, CorruptOrUnreadableFileIsReportedOnceAndIgnored) {
    const std::string s = symbol("bad");
    tg::perfmodel* m = tg::model_get(s.c_str(), tg::model_type::history);
    const std::string path = tg::model_path(s.c_str());
    std::filesystem::create_directories(dir_);
    const char* bad[] = {
        "",                                                              // empty
        "garbage\n",                                                     // no header
        "mpc-perfmodel 1\nsymbol WRONG\n",                               // another model's
        "mpc-perfmodel 1\narch cpu\nentry xyz 1 1 1 1\nend\n",           // malformed entry
        "mpc-perfmodel 1\narch cpu\nentry 00000001 1 10 1e999 1\nend\n", // not finite
        "mpc-perfmodel 1\narch gpu\nend\n",                              // unknown arch
        "mpc-perfmodel 1\narch cpu\nentry 00000001 8 10 80 640\n",       // not ended
        "\x7f\x45\x4c\x46\x02\x01\x01\x00\xff\xfe",                      // binary
    };
    for (const char* content : bad) {
        {
            std::ofstream out(path, std::ios::trunc | std::ios::binary);
            out << content;
        }
        tg::model_unload_all();
        ::testing::internal::CaptureStderr();
        EXPECT_TRUE(std::isnan(tg::model_expected_us(m, tg::arch_cpu, 1, 8))) << content;
        EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 0u) << content;
        tg::model_record(m, tg::arch_cpu, 1, 8, 3.0);
        std::string err = ::testing::internal::GetCapturedStderr();
        EXPECT_NE(err.find("ignored"), std::string::npos) << "reported: " << content;
        EXPECT_EQ(err.find("ignored"), err.rfind("ignored")) << "reported once: " << err;
    }
    // The next save replaces the bad file with a good one.
    ASSERT_TRUE(tg::model_save_all().ok());
    tg::model_unload_all();
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 1u);
    // A directory where the file should be: unreadable, reported, ignored; saving fails cleanly.
    std::filesystem::remove(path);
    std::filesystem::create_directories(path);
    tg::model_unload_all();
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 1), 0u);
    tg::model_record(m, tg::arch_cpu, 1, 8, 3.0);
    status st = tg::model_save_all();
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(err.find("ignored"), std::string::npos) << err;
    std::filesystem::remove_all(path);
}

TEST(Footprint, DependsOnSizesNotAddresses) {
    ASSERT_TRUE(tg::init().ok());
    double a[16], b[16], c[32];
    tg::data *ha = nullptr, *hb = nullptr, *hc = nullptr;
    ASSERT_TRUE(tg::register_vector(&ha, a, 16, sizeof(double)).ok());
    ASSERT_TRUE(tg::register_vector(&hb, b, 16, sizeof(double)).ok());
    ASSERT_TRUE(tg::register_vector(&hc, c, 32, sizeof(double)).ok());
    std::size_t sa = 0, sc = 0;
    EXPECT_EQ(tg::data_footprint(&ha, 1, &sa), tg::data_footprint(&hb, 1, nullptr));
    EXPECT_NE(tg::data_footprint(&ha, 1, nullptr), tg::data_footprint(&hc, 1, &sc));
    EXPECT_EQ(sa, 16 * sizeof(double));
    EXPECT_EQ(sc, 32 * sizeof(double));
    for (tg::data* h : {ha, hb, hc}) {
        ASSERT_TRUE(tg::unregister(h).ok());
    }
    ASSERT_TRUE(tg::shutdown().ok());
}

// ------------------------------------------------------------------------------------------
// Through the runtime: a model calibrated by real runs under dm, stored at shutdown.

TEST_F(Models, DmCalibratesFromRealRunsAndStoresAtShutdown) {
    const std::string s = symbol("real");
    tg::config c;
    c.ncpus = 2;
    c.sched = "dm";
    c.config_over_env = true;
    ASSERT_TRUE(tg::init(c).ok());
    tg::perfmodel* m = tg::model_get(s.c_str(), tg::model_type::history);
    std::atomic<int> ran{0};
    probe p{[&](void**) {
        auto end = std::chrono::steady_clock::now() + 200us;
        while (std::chrono::steady_clock::now() < end) {
        }
        ran.fetch_add(1);
    }};
    tg::codelet cl = probe_codelet(0, "spin200");
    for (int i = 0; i < 30; ++i) {
        tg::task* t = *tg::task_create();
        tg::task_desc d;
        d.cl = &cl;
        d.cl_arg = &p;
        d.model = m;
        d.footprint = 42;
        ASSERT_TRUE(tg::submit(t, d).ok());
        tg::task_release(t);
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(ran.load(), 30);
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 42), tg::calibrate_minimum);
    double e = tg::model_expected_us(m, tg::arch_cpu, 42, 0);
    EXPECT_GE(e, 190.0);
    EXPECT_LT(e, 20000.0);
    ASSERT_TRUE(tg::shutdown().ok());
    EXPECT_TRUE(std::filesystem::exists(tg::model_path(s.c_str()))) << "saved at shutdown";
    EXPECT_DOUBLE_EQ(tg::model_expected_us(m, tg::arch_cpu, 42, 0), e) << "read back from disk";
}

// dm with calibrated models, through the runtime: a 3 ms task and then three 1 ms tasks become
// ready together (held back by the application's acquisition). Expected completions send the
// three short ones to the other worker (1, 2, 3 ms < 3 + 1 ms); without the models (every
// length 0) dm would alternate by queue length instead.
TEST_F(Models, DmPlacesByCalibratedModelsInTheRuntime) {
    tg::config c;
    c.ncpus = 2;
    c.sched = "dm";
    c.config_over_env = true;
    ASSERT_TRUE(tg::init(c).ok());
    tg::perfmodel* m = tg::model_get(symbol("place").c_str(), tg::model_type::history);
    for (int i = 0; i < 10; ++i) {
        tg::model_record(m, tg::arch_cpu, 3, 0, 3000.0);
        tg::model_record(m, tg::arch_cpu, 1, 0, 1000.0);
    }
    std::atomic<int> where[4] = {-1, -1, -1, -1};
    std::atomic<int> short_started{0};
    std::vector<probe> probes;
    for (int i = 0; i < 4; ++i) {
        probes.push_back(probe{[&where, &short_started, i](void**) {
            where[i].store(tg::current_worker());
            if (i != 0) {
                short_started.fetch_add(1);
                sched::sleep_for(1ms);
                return;
            }
            // The long task lasts until the short ones have started (5 s at most: they were
            // queued behind it), so that its worker, idle earlier than predicted, cannot take
            // a queued short task from the other worker (which dm does when that ends it sooner).
            for (int k = 0; k < 5000 && short_started.load() < 3; ++k) {
                sched::sleep_for(1ms);
            }
        }});
    }
    long v = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &v, sizeof v).ok());
    ASSERT_TRUE(tg::acquire(h, tg::access_write).ok());
    tg::codelet cl = probe_codelet(1, "timed");
    for (int i = 0; i < 4; ++i) {
        tg::task* t = *tg::task_create();
        tg::data* hs[] = {h};
        tg::access_mode ms[] = {tg::access_read};
        tg::task_desc d;
        d.cl = &cl;
        d.handles = hs;
        d.modes = ms;
        d.nbuffers = 1;
        d.cl_arg = &probes[static_cast<std::size_t>(i)];
        d.model = m;
        d.footprint = i == 0 ? 3 : 1;
        ASSERT_TRUE(tg::submit(t, d).ok());
        tg::task_release(t);
    }
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::wait_for_all().ok());
    ASSERT_TRUE(tg::unregister(h).ok());
    ASSERT_TRUE(tg::shutdown().ok());
    const int w0 = where[0].load();
    ASSERT_TRUE(w0 == 0 || w0 == 1) << w0;
    for (int i = 1; i < 4; ++i) {
        EXPECT_EQ(where[i].load(), 1 - w0) << "short task " << i << " goes to the worker without the long one";
    }
}

// ------------------------------------------------------------------------------------------
// Traces and summary

TEST(Trace, EveryTaskAndDependencyInTheChromeTrace) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("mpc_tg_trace_" + std::to_string(getpid()) + ".json"))
                                 .string();
    setenv("MPC_TG_TRACE", path.c_str(), 1);
    setenv("MPC_TG_SUMMARY", "1", 1);
    tg::config c;
    c.ncpus = 2;
    c.sched = "ws";
    c.config_over_env = true;
    ASSERT_TRUE(tg::init(c).ok());
    long v = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &v, sizeof v).ok());
    probe inc{[&](void** b) { ++*reinterpret_cast<long*>(static_cast<tg::variable_interface*>(b[0])->ptr); }};
    tg::codelet cl = probe_codelet(1, "inc\"quoted\"");
    constexpr int n = 25;
    // Held back by the application until all are submitted: each task finds its predecessor
    // unfinished, so the chain has exactly n-1 edges.
    ASSERT_TRUE(tg::acquire(h, tg::access_rw).ok());
    for (int i = 0; i < n; ++i) {
        tg::task_release(submit_probe(cl, &inc, {h}, {tg::access_rw}));
    }
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::unregister(h).ok());
    ::testing::internal::CaptureStderr();
    ASSERT_TRUE(tg::shutdown().ok());
    std::string err = ::testing::internal::GetCapturedStderr();
    unsetenv("MPC_TG_TRACE");
    unsetenv("MPC_TG_SUMMARY");
    EXPECT_EQ(v, n);
    // The summary: both workers, the codelet with its count.
    EXPECT_NE(err.find("mpc task graph summary: 2 workers, policy ws"), std::string::npos) << err;
    EXPECT_NE(err.find("inc\"quoted\""), std::string::npos) << err;
    EXPECT_NE(err.find(" 25 "), std::string::npos) << err;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string j = text.str();
    auto count = [&j](const std::string& what) {
        std::size_t k = 0;
        for (std::size_t at = j.find(what); at != std::string::npos; at = j.find(what, at + 1)) {
            ++k;
        }
        return k;
    };
    EXPECT_EQ(count("\"ph\":\"X\""), static_cast<std::size_t>(n)) << j.substr(0, 2000);
    EXPECT_EQ(count("\"ph\":\"s\""), static_cast<std::size_t>(n - 1)) << "a chain: n-1 dependencies";
    EXPECT_EQ(count("\"ph\":\"f\""), static_cast<std::size_t>(n - 1));
    EXPECT_NE(j.find("\"name\":\"inc\\\"quoted\\\"\""), std::string::npos) << "names are escaped";
    // The file is valid JSON for python3's parser (scripts/install-deps.sh installs python3).
    std::string cmd = "python3 -m json.tool '" + path + "' >/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << j.substr(0, 2000);
    std::filesystem::remove(path);
}

TEST(Trace, UnwritableFileIsReportedNotFatal) {
    setenv("MPC_TG_TRACE", "/nonexistent-dir/x/trace.json", 1);
    ASSERT_TRUE(tg::init().ok());
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(tg::shutdown().ok());
    std::string err = ::testing::internal::GetCapturedStderr();
    unsetenv("MPC_TG_TRACE");
    EXPECT_NE(err.find("cannot write the trace"), std::string::npos) << err;
}

}  // namespace
}  // namespace mpc::test
