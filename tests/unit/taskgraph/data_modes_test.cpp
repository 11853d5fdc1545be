// The data side of the task-graph core beyond R/W/RW (taskgraph/modes.cpp, partition.cpp,
// memory.cpp, interfaces.cpp): SCRATCH, REDUX and COMMUTE accesses, tasks pinned to a worker,
// asynchronous acquisition, partitioning, handles without memory, the memory limit and the
// submission watermarks. Each test runs with 1 and 2 workers under every policy.
//
// Ordering is checked as in deps_test.cpp: a task is held back by an application acquisition of
// another handle, and the test thread pauses with sched::sleep_for (its VP runs the workers
// meanwhile), so "has not run" after the pause is a fact about the dependencies.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "taskgraph/perfmodel.hpp"
#include "tg_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;

using Modes = tg_fixture;

long* var_ptr(void* iface) { return reinterpret_cast<long*>(static_cast<tg::variable_interface*>(iface)->ptr); }

// ---- SCRATCH --------------------------------------------------------------------------------

TEST_P(Modes, ScratchIsPrivateAndUnordered) {
    constexpr std::uint32_t n = 256;
    tg::data* hs = nullptr;
    ASSERT_TRUE(tg::register_vector(&hs, nullptr, n, sizeof(double)).ok());
    ASSERT_TRUE(tg::allocate_on_use(hs).ok());
    std::vector<double> out(8, 0);
    std::vector<tg::data*> ho(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        ASSERT_TRUE(tg::register_variable(&ho[i], &out[i], sizeof(double)).ok());
    }
    const std::size_t used_before = tg::memory_used();
    std::atomic<int> bad{0};
    probe fill{[&](void** b) {
        auto* s = static_cast<tg::vector_interface*>(b[0]);
        if (s->nx != n || s->elemsize != sizeof(double) || s->ptr == 0) {
            bad.fetch_add(1);
            return;
        }
        auto* v = reinterpret_cast<double*>(s->ptr);
        for (std::uint32_t k = 0; k < n; ++k) {
            v[k] = k;  // private: another task writing its own scratch at once changes nothing
        }
        sched::sleep_for(100us);
        double sum = 0;
        for (std::uint32_t k = 0; k < n; ++k) {
            sum += v[k];
        }
        *reinterpret_cast<double*>(static_cast<tg::variable_interface*>(b[1])->ptr) = sum;
    }};
    tg::codelet cl = probe_codelet(2, "scratch");
    {
        // A scratch access orders nothing: a task held back (it reads G) does not hold the next.
        held g;
        probe wait_g{[](void**) {}};
        tg::codelet clg = probe_codelet(2, "held scratch");
        tg::task* first = submit_probe(clg, &wait_g, {hs, g.h}, {tg::access_scratch, tg::access_read});
        tg::task* second = submit_probe(cl, &fill, {hs, ho[0]}, {tg::access_scratch, tg::access_write});
        ASSERT_TRUE(tg::task_wait(second).ok()) << "a scratch access waited for an earlier one";
        g.let_go();
        ASSERT_TRUE(tg::wait_for_all().ok());
        tg::task_release(first);
        tg::task_release(second);
    }
    std::vector<tg::task*> ts;
    for (std::size_t i = 1; i < out.size(); ++i) {
        ts.push_back(submit_probe(cl, &fill, {hs, ho[i]}, {tg::access_scratch, tg::access_write}));
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    EXPECT_EQ(bad.load(), 0);
    for (double v : out) {
        EXPECT_EQ(v, n * (n - 1) / 2.0);
    }
    EXPECT_EQ(tg::memory_used(), used_before + tg::memory_cached())
        << "scratch buffers go back (or to a worker's cache) at each task's end, and a handle used only for "
           "scratch gets no memory";
    for (tg::data* h : ho) {
        ASSERT_TRUE(tg::unregister(h).ok());
    }
    ASSERT_TRUE(tg::unregister(hs).ok());
    tg::flush_scratch_cache();
    EXPECT_EQ(tg::memory_used(), used_before);
}

// ---- REDUX ----------------------------------------------------------------------------------

std::atomic<int> g_inits{0};
void sum_init(void** b, void*) {
    g_inits.fetch_add(1);
    *var_ptr(b[0]) = 0;
}
void sum_redux(void** b, void*) { *var_ptr(b[0]) += *var_ptr(b[1]); }

TEST_P(Modes, ReduxFoldsPerWorkerCopies) {
    long sum = 5;  // the data's own value takes part, as in StarPU
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &sum, sizeof sum).ok());
    ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
    std::atomic<int> on_main{0};
    std::atomic<long> next{1};
    probe add{[&](void** b) {
        if (var_ptr(b[0]) == &sum) {
            on_main.fetch_add(1);
        }
        *var_ptr(b[0]) += next.fetch_add(1);
        sched::sleep_for(20us);
    }};
    tg::codelet cl = probe_codelet(1, "contribute");
    g_inits = 0;
    constexpr long n = 200;
    for (int phase = 0; phase < 2; ++phase) {
        next = 1;
        std::vector<tg::task*> ts;
        for (long i = 0; i < n; ++i) {
            ts.push_back(submit_probe(cl, &add, {h}, {tg::access_redux}));
        }
        // The next non-redux access (an acquisition, then a reading task) sees every contribution.
        if (phase == 0) {
            ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
            EXPECT_EQ(sum, 5 + n * (n + 1) / 2);
            ASSERT_TRUE(tg::release(h).ok());
        } else {
            long seen = -1;
            probe read{[&](void** b) { seen = *var_ptr(b[0]); }};
            tg::codelet clr = probe_codelet(1, "read");
            tg::task* r = submit_probe(clr, &read, {h}, {tg::access_read});
            ASSERT_TRUE(tg::task_wait(r).ok());
            EXPECT_EQ(seen, 5 + 2 * (n * (n + 1) / 2));
            tg::task_release(r);
        }
        for (tg::task* t : ts) {
            tg::task_release(t);
        }
    }
    EXPECT_EQ(on_main.load(), 0) << "redux tasks must work on private copies";
    EXPECT_GE(g_inits.load(), 2);
    EXPECT_LE(g_inits.load(), 2 * workers()) << "one copy per worker and phase";
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(tg::memory_used(), tg::memory_cached()) << "the copies go back (or to a worker's cache) once reduced";
    ASSERT_TRUE(tg::unregister(h).ok());
}

TEST_P(Modes, ReduxPendingAtUnregisterIsReduced) {
    long sum = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &sum, sizeof sum).ok());
    ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
    probe add{[](void** b) { *var_ptr(b[0]) += 3; }};
    tg::codelet cl = probe_codelet(1, "contribute");
    for (int i = 0; i < 10; ++i) {
        tg::task_release(submit_probe(cl, &add, {h}, {tg::access_redux}));
    }
    ASSERT_TRUE(tg::unregister(h).ok());
    EXPECT_EQ(sum, 30);
}

TEST_P(Modes, ReduxWithoutMemoryStartsFromInit) {
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, nullptr, sizeof(long)).ok());
    ASSERT_TRUE(tg::allocate_on_use(h).ok());
    ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
    probe add{[](void** b) { *var_ptr(b[0]) += 2; }};
    tg::codelet cl = probe_codelet(1, "contribute");
    for (int i = 0; i < 7; ++i) {
        tg::task_release(submit_probe(cl, &add, {h}, {tg::access_redux}));
    }
    ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
    EXPECT_EQ(*var_ptr(tg::interface_of(h)), 14);
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::unregister(h).ok());
}

TEST_P(Modes, ReduxMisuseIsRefused) {
    long x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    tg::codelet cl = probe_codelet(1, "bad");
    probe p{[](void**) {}};
    tg::data* hs[] = {h};
    tg::access_mode m[] = {tg::access_redux};
    tg::task_desc d = one_buffer(&cl, hs, m, &p);
    tg::task* t = *tg::task_create();
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument) << "no reduction methods";
    ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
    d.sequential_consistency = false;
    EXPECT_EQ(tg::submit(t, d).code(), errc::unsupported) << "no submission order to reduce at";
    tg::access_mode bad[] = {static_cast<tg::access_mode>(tg::access_read | tg::access_commute)};
    d.modes = bad;
    d.sequential_consistency = true;
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument) << "R|COMMUTE is not a mode";
    // An init method alone is StarPU's way to initialise a handle that holds no value; a REDUX
    // access still needs the reduction.
    EXPECT_TRUE(tg::set_reduction(h, nullptr, nullptr, &sum_init, nullptr).ok());
    d.modes = m;
    EXPECT_EQ(tg::submit(t, d).code(), errc::invalid_argument) << "REDUX without a reduction function";
    ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
    tg::codelet cl2 = probe_codelet(2, "twice");
    tg::data* twice[] = {h, h};
    tg::access_mode redux_and_read[] = {tg::access_redux, tg::access_read};
    tg::task_desc d2 = one_buffer(&cl2, twice, redux_and_read, &p);
    d2.nbuffers = 2;
    EXPECT_EQ(tg::submit(t, d2).code(), errc::invalid_argument) << "REDUX and R on one handle in one task";
    tg::task_release(t);
    ASSERT_TRUE(tg::unregister(h).ok());
}

// ---- COMMUTE --------------------------------------------------------------------------------

TEST_P(Modes, CommuteRunsInAnyOrderOneAtATime) {
    long x = 0;
    tg::data* hx = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> done{0};
    std::atomic<int> started{0};
    std::atomic<int> before_writer_done{0};
    std::atomic<int> writer_done{0};
    probe writer{[&](void** b) {
        sched::sleep_for(1ms);
        *var_ptr(b[0]) = 100;
        writer_done.store(1);
    }};
    probe commute{[&](void** b) {
        if (writer_done.load() == 0) {
            before_writer_done.fetch_add(1);
        }
        if (inside.fetch_add(1) != 0) {
            overlaps.fetch_add(1);
        }
        long v = *var_ptr(b[0]);
        // The first one to run gives another worker time to start a second one (which only a
        // missing exclusion allows): up to 50 ms, once.
        if (started.fetch_add(1) == 0 && workers() > 1) {
            for (int i = 0; i < 50 && started.load() < 2; ++i) {
                sched::sleep_for(1ms);
            }
        }
        sched::sleep_for(50us);
        *var_ptr(b[0]) = v + 1;
        inside.fetch_sub(1);
        done.fetch_add(1);
    }};
    long reader_saw = -1;
    probe reader{[&](void** b) { reader_saw = *var_ptr(b[0]); }};
    tg::codelet clw = probe_codelet(1, "writer");
    tg::codelet clc = probe_codelet(2, "commute held");
    tg::codelet clc1 = probe_codelet(1, "commute");
    tg::codelet clr = probe_codelet(1, "reader");
    const auto rwc = static_cast<tg::access_mode>(tg::access_rw | tg::access_commute);
    held g;
    std::vector<tg::task*> ts;
    ts.push_back(submit_probe(clw, &writer, {hx}, {tg::access_write}));
    // The first commute task is held back (it reads G): the others need not wait for it.
    ts.push_back(submit_probe(clc, &commute, {hx, g.h}, {rwc, tg::access_read}));
    constexpr int others = 10;
    for (int i = 0; i < others; ++i) {
        ts.push_back(submit_probe(clc1, &commute, {hx}, {rwc}));
    }
    tg::task* r = submit_probe(clr, &reader, {hx}, {tg::access_read});
    ts.push_back(r);
    for (int i = 0; i < 2000 && done.load() < others; ++i) {
        sched::sleep_for(1ms);
    }
    EXPECT_EQ(done.load(), others) << "commute tasks waited for a held-back commute task";
    EXPECT_EQ(reader_saw, -1) << "the reader after the group ran before the whole group";
    g.let_go();
    ASSERT_TRUE(tg::task_wait(r).ok());
    EXPECT_EQ(reader_saw, 100 + others + 1) << "lost updates: commute tasks overlapped";
    EXPECT_EQ(overlaps.load(), 0);
    EXPECT_EQ(before_writer_done.load(), 0) << "a commute task ran before the writer submitted first";
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    ASSERT_TRUE(tg::unregister(hx).ok());
}

// ---- tasks pinned to a worker -------------------------------------------------------------

TEST_P(Modes, TaskRunsOnItsWorker) {
    std::atomic<int> wrong{0};
    std::vector<int> want;
    std::vector<probe> ps;
    tg::codelet cl = probe_codelet(0, "pinned");
    constexpr int n = 64;
    ps.reserve(n);
    std::vector<tg::task*> ts;
    for (int i = 0; i < n; ++i) {
        int w = i % workers();
        ps.push_back(probe{[w, &wrong](void**) {
            if (tg::current_worker() != w) {
                wrong.fetch_add(1);
            }
        }});
        tg::task* t = *tg::task_create();
        tg::task_desc d;
        d.cl = &cl;
        d.cl_arg = &ps.back();
        d.worker = w;
        ASSERT_TRUE(tg::submit(t, d).ok());
        ts.push_back(t);
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(wrong.load(), 0);
    tg::task_desc d;
    d.cl = &cl;
    d.cl_arg = &ps[0];
    d.worker = workers() + tg::combined_worker_count();  // past the combined workers too (peager, pheft make some)
    tg::task* bad = *tg::task_create();
    EXPECT_EQ(tg::submit(bad, d).code(), errc::invalid_argument);
    tg::task_release(bad);
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
}

TEST_P(Modes, PinnedTasksAreMeasured) {
    // A pinned task bypasses the policy's queues, not its measurement: each run reaches the
    // task's model (and, for the policies that learn, their completion hook) like any other.
    const std::string symbol = std::string("tg_data_modes_pinned_") + std::to_string(::getpid()) + "_" +
                               std::get<1>(GetParam()) + "_" + std::to_string(workers());
    tg::perfmodel* m = tg::model_get(symbol.c_str(), tg::model_type::history);
    ASSERT_NE(m, nullptr);
    probe nop{[](void**) {}};
    tg::codelet cl = probe_codelet(0, "pinned measured");
    constexpr unsigned n = 2 * tg::calibrate_minimum;
    std::vector<tg::task*> ts;
    for (unsigned i = 0; i < n; ++i) {
        tg::task* t = *tg::task_create();
        tg::task_desc d;
        d.cl = &cl;
        d.cl_arg = &nop;
        d.worker = static_cast<int>(i) % workers();
        d.model = m;
        d.footprint = 0x5eed;
        ASSERT_TRUE(tg::submit(t, d).ok());
        ts.push_back(t);
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    // STARPU_CALIBRATE's default keeps runs until the entry is calibrated.
    EXPECT_EQ(tg::model_samples(m, tg::arch_cpu, 0x5eed), tg::calibrate_minimum);
    EXPECT_FALSE(std::isnan(tg::model_expected_us(m, tg::arch_cpu, 0x5eed, 0)));
    tg::model_unload_all();  // nothing to store at shutdown
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
}

// ---- asynchronous acquisition -------------------------------------------------------------

struct acq_state {
    tg::data* h = nullptr;
    std::atomic<int> granted{0};
    long seen = -1;
    long* x = nullptr;
};

void on_granted(void* p) {
    auto* s = static_cast<acq_state*>(p);
    s->seen = *s->x;
    s->granted.store(1);
    EXPECT_TRUE(tg::release(s->h).ok());  // from the callback, as STARPU_DATA_ACQUIRE_CB does
}

TEST_P(Modes, AcquireAsyncFollowsEarlierTasks) {
    long x = 0;
    acq_state s;
    s.x = &x;
    ASSERT_TRUE(tg::register_variable(&s.h, &x, sizeof x).ok());
    held g;
    probe w{[](void** b) { *var_ptr(b[0]) = 42; }};
    tg::codelet cl = probe_codelet(2, "writer");
    tg::task* t = submit_probe(cl, &w, {s.h, g.h}, {tg::access_write, tg::access_read});
    ASSERT_TRUE(tg::acquire_async(s.h, tg::access_read, &on_granted, &s).ok()) << "must not block";
    sched::sleep_for(20ms);
    EXPECT_EQ(s.granted.load(), 0) << "granted before the writer submitted first";
    g.let_go();
    ASSERT_TRUE(tg::wait_for_all().ok());
    for (int i = 0; i < 2000 && s.granted.load() == 0; ++i) {
        sched::sleep_for(1ms);
    }
    EXPECT_EQ(s.granted.load(), 1);
    EXPECT_EQ(s.seen, 42);
    // Nothing in the way: granted on the caller, at once.
    s.granted = 0;
    ASSERT_TRUE(tg::acquire_async(s.h, tg::access_rw, &on_granted, &s).ok());
    EXPECT_EQ(s.granted.load(), 1);
    EXPECT_EQ(tg::acquire_async(s.h, static_cast<tg::access_mode>(7), &on_granted, &s).code(), errc::invalid_argument);
    tg::task_release(t);
    ASSERT_TRUE(tg::unregister(s.h).ok());
}

TEST_P(Modes, AcquireTryNeverWaits) {
    long x = 0;
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_variable(&h, &x, sizeof x).ok());
    {
        held g;
        probe w{[](void** b) { *var_ptr(b[0]) = 1; }};
        tg::codelet cl = probe_codelet(2, "held writer");
        tg::task_release(submit_probe(cl, &w, {h, g.h}, {tg::access_write, tg::access_read}));
        EXPECT_EQ(tg::acquire_try(h, tg::access_read).code(), errc::busy) << "a writer before it has not run";
        g.let_go();
        ASSERT_TRUE(tg::wait_for_all().ok());
    }
    ASSERT_TRUE(tg::acquire_try(h, tg::access_read).ok());
    EXPECT_EQ(x, 1);
    ASSERT_TRUE(tg::acquire_try(h, tg::access_read).ok()) << "readers do not conflict";
    EXPECT_EQ(tg::acquire_try(h, tg::access_write).code(), errc::busy) << "the application's reads are in the way";
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::acquire_try(h, tg::access_rw).ok());
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
    probe add{[](void** b) { *var_ptr(b[0]) += 1; }};
    tg::codelet cl = probe_codelet(1, "contribute");
    tg::task_release(submit_probe(cl, &add, {h}, {tg::access_redux}));
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(tg::acquire_try(h, tg::access_read).code(), errc::busy) << "a reduction is pending";
    ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
    EXPECT_EQ(x, 2);
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::unregister(h).ok());
}

INSTANTIATE_TEST_SUITE_P(Workers, Modes,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::ValuesIn(all_policies)), param_name);

}  // namespace
