// Partitioning (taskgraph/partition.cpp) and memory control (memory.cpp) of the task-graph
// core: children are handles with their own dependencies, ordered after the parent's earlier
// accesses and before its later ones; misuse is refused; the submission watermarks bound the
// tasks in flight; the memory limit makes submissions wait, or fail cleanly. Each test runs
// with 1 and 2 workers under eager and prio.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "tg_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;

using Partition = tg_fixture;
using Memory = tg_fixture;

double* vec_ptr(void* iface) { return reinterpret_cast<double*>(static_cast<tg::vector_interface*>(iface)->ptr); }

/// n equal contiguous pieces of a vector (the rest in the last one).
void cut_vector(void* /*ctx*/, void* parent, void* child, int i, int n) {
    auto* p = static_cast<tg::vector_interface*>(parent);
    auto* c = static_cast<tg::vector_interface*>(child);
    std::uint32_t len = p->nx / static_cast<std::uint32_t>(n);
    c->nx = i == n - 1 ? p->nx - len * static_cast<std::uint32_t>(n - 1) : len;
    c->ptr = p->ptr + static_cast<std::size_t>(i) * len * p->elemsize;
}

/// Pauses (letting this VP run its workers) until f() holds, at most 10 s. A plain thread's join
/// would block the VP instead, and with one worker on it nothing would progress.
template <class F>
bool pause_until(F f) {
    for (int i = 0; i < 10000 && !f(); ++i) {
        sched::sleep_for(1ms);
    }
    return f();
}

TEST_P(Partition, ChildrenFollowParentAndParentFollowsChildren) {
    constexpr std::uint32_t n = 1000;
    std::vector<double> v(n, 1.0);
    tg::data* hv = nullptr;
    ASSERT_TRUE(tg::register_vector(&hv, v.data(), n, sizeof(double)).ok());
    held g;
    // A writer of the whole vector, held back: no child task may run before it.
    probe init{[](void** b) {
        auto* p = static_cast<tg::vector_interface*>(b[0]);
        for (std::uint32_t k = 0; k < p->nx; ++k) {
            vec_ptr(b[0])[k] = 2.0;
        }
    }};
    tg::codelet cl_init = probe_codelet(2, "init whole");
    std::vector<tg::task*> ts;
    ts.push_back(submit_probe(cl_init, &init, {hv, g.h}, {tg::access_write, tg::access_read}));
    constexpr int parts = 4;
    ASSERT_TRUE(tg::partition(hv, parts, &cut_vector, nullptr).ok());
    ASSERT_EQ(tg::nchildren(hv), parts);
    std::atomic<int> scaled{0};
    std::atomic<int> saw_old{0};
    probe scale{[&](void** b) {
        auto* c = static_cast<tg::vector_interface*>(b[0]);
        for (std::uint32_t k = 0; k < c->nx; ++k) {
            if (vec_ptr(b[0])[k] != 2.0) {
                saw_old.fetch_add(1);
            }
            vec_ptr(b[0])[k] *= 3.0;
        }
        scaled.fetch_add(1);
    }};
    tg::codelet cl = probe_codelet(1, "scale piece");
    for (int i = 0; i < parts; ++i) {
        ts.push_back(submit_probe(cl, &scale, {tg::child(hv, i)}, {tg::access_rw}));
    }
    EXPECT_EQ(tg::child(hv, parts), nullptr);
    // While partitioned, the parent may not be named, nor unregistered.
    tg::codelet cl1 = probe_codelet(1, "on parent");
    probe nothing{[](void**) {}};
    tg::data* hs[] = {hv};
    tg::access_mode rw[] = {tg::access_rw};
    tg::task_desc d = one_buffer(&cl1, hs, rw, &nothing);
    tg::task* refused = *tg::task_create();
    EXPECT_EQ(tg::submit(refused, d).code(), errc::busy);
    EXPECT_EQ(tg::unregister(hv).code(), errc::busy);
    EXPECT_EQ(tg::partition(hv, 2, &cut_vector, nullptr).code(), errc::busy) << "partitioned twice";
    sched::sleep_for(20ms);
    EXPECT_EQ(scaled.load(), 0) << "a child task ran before the parent's earlier writer";
    g.let_go();
    // Back to the parent: a reader of the whole vector follows every child task.
    ASSERT_TRUE(tg::unpartition_submit(hv).ok());
    std::atomic<int> reader_bad{-1};
    probe read{[&](void** b) {
        int bad = 0;
        for (std::uint32_t k = 0; k < n; ++k) {
            bad += vec_ptr(b[0])[k] != 6.0 ? 1 : 0;
        }
        reader_bad.store(bad);
    }};
    tg::task* r = submit_probe(cl1, &read, {hv}, {tg::access_read});
    ASSERT_TRUE(tg::task_wait(r).ok());
    EXPECT_EQ(reader_bad.load(), 0) << "the parent's reader ran before a child task";
    EXPECT_EQ(saw_old.load(), 0);
    // The children may not be named once unpartitioned; clean frees them.
    tg::data* c0 = tg::child(hv, 0);
    tg::data* cs[] = {c0};
    d.handles = cs;
    EXPECT_EQ(tg::submit(refused, d).code(), errc::busy);
    EXPECT_EQ(tg::unregister(c0).code(), errc::busy) << "a child is freed by partition_clean";
    ASSERT_TRUE(tg::partition_clean(hv).ok());
    EXPECT_EQ(tg::nchildren(hv), 0);
    tg::task_release(refused);
    tg::task_release(r);
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    ASSERT_TRUE(tg::unregister(hv).ok());
}

TEST_P(Partition, NestedTilesAndMisuse) {
    constexpr std::uint32_t n = 64;
    std::vector<double> v(n, 0.0);
    tg::data* hv = nullptr;
    ASSERT_TRUE(tg::register_vector(&hv, v.data(), n, sizeof(double)).ok());
    EXPECT_EQ(tg::partition(hv, 0, &cut_vector, nullptr).code(), errc::invalid_argument);
    EXPECT_EQ(tg::unpartition(hv).code(), errc::invalid_argument) << "not partitioned";
    ASSERT_TRUE(tg::partition(hv, 2, &cut_vector, nullptr).ok());
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(tg::partition(tg::child(hv, i), 4, &cut_vector, nullptr).ok());
    }
    EXPECT_EQ(tg::unpartition(hv).code(), errc::busy) << "a child is partitioned itself";
    probe mark{[](void** b) {
        auto* c = static_cast<tg::vector_interface*>(b[0]);
        for (std::uint32_t k = 0; k < c->nx; ++k) {
            vec_ptr(b[0])[k] += 1.0;
        }
    }};
    tg::codelet cl = probe_codelet(1, "mark leaf");
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 4; ++j) {
            tg::task_release(submit_probe(cl, &mark, {tg::child(tg::child(hv, i), j)}, {tg::access_rw}));
        }
    }
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(tg::unpartition(tg::child(hv, i)).ok());
    }
    ASSERT_TRUE(tg::unpartition(hv).ok());
    ASSERT_TRUE(tg::acquire(hv, tg::access_read).ok());
    for (double x : v) {
        EXPECT_EQ(x, 1.0);
    }
    ASSERT_TRUE(tg::release(hv).ok());
    ASSERT_TRUE(tg::unregister(hv).ok());
}

TEST_P(Partition, SeveralPlansSwitchedByTheirTasks) {
    constexpr std::uint32_t n = 48;
    std::vector<double> v(n, 1.0);
    tg::data* hv = nullptr;
    ASSERT_TRUE(tg::register_vector(&hv, v.data(), n, sizeof(double)).ok());
    tg::data* halves[2];
    tg::data* quarters[4];
    ASSERT_TRUE(tg::partition_plan(hv, 2, &cut_vector, nullptr, halves).ok());
    ASSERT_TRUE(tg::partition_plan(hv, 4, &cut_vector, nullptr, quarters).ok());
    EXPECT_EQ(tg::nplans(hv), 2);
    // Misuse: no plan named among two, a plan not submitted, two read-write plans, a plan not on.
    EXPECT_EQ(tg::partition_submit(hv).code(), errc::invalid_argument) << "two plans: name one";
    EXPECT_EQ(tg::unpartition_submit(hv, halves[0]).code(), errc::invalid_argument) << "not submitted";
    EXPECT_EQ(tg::partition_upgrade(hv, halves[0]).code(), errc::busy) << "not submitted read-only";
    EXPECT_EQ(tg::partition(hv, 2, &cut_vector, nullptr).code(), errc::busy) << "plans exist";
    ASSERT_TRUE(tg::partition_submit(hv, halves[1]).ok());
    EXPECT_EQ(tg::partition_submit(hv, quarters[0]).code(), errc::busy) << "another plan is on read-write";
    EXPECT_EQ(tg::partition_submit(hv, quarters[0], true).code(), errc::busy) << "read-only beside read-write";
    ASSERT_TRUE(tg::unpartition_submit(hv, halves[1]).ok());
    // x -> (x * 2 on the halves) + 3 on the quarters, then * 10 on the whole: each task waits for
    // the earlier ones through the switches the core inserts.
    auto affine = [](double mul, double add, bool slow) {
        return [mul, add, slow](void** b) {
            if (slow) {
                std::this_thread::sleep_for(20ms);
            }
            auto* c = static_cast<tg::vector_interface*>(b[0]);
            for (std::uint32_t k = 0; k < c->nx; ++k) {
                vec_ptr(b[0])[k] = vec_ptr(b[0])[k] * mul + add;
            }
        };
    };
    probe times2{affine(2, 0, true)};
    probe plus3{affine(1, 3, false)};
    probe times10{affine(10, 0, false)};
    tg::codelet cl = probe_codelet(1, "affine");
    for (tg::data* c : halves) {
        tg::task_release(submit_probe(cl, &times2, {c}, {tg::access_rw}));
    }
    for (tg::data* c : quarters) {
        tg::task_release(submit_probe(cl, &plus3, {c}, {tg::access_rw}));
    }
    tg::task_release(submit_probe(cl, &times10, {hv}, {tg::access_rw}));
    ASSERT_TRUE(tg::acquire(hv, tg::access_read).ok());
    for (double x : v) {
        ASSERT_EQ(x, 50.0);
    }
    ASSERT_TRUE(tg::release(hv).ok());
    // Read-only: a reader of a quarter switches its plan on read-only; the parent stays readable,
    // a write to the quarter upgrades the plan, a write to the parent switches it off.
    probe nothing{[](void**) {}};
    tg::task_release(submit_probe(cl, &nothing, {quarters[2]}, {tg::access_read}));
    tg::task_release(submit_probe(cl, &nothing, {hv}, {tg::access_read}));
    EXPECT_EQ(tg::partition_submit(hv, halves[0]).code(), errc::busy) << "a read-only plan is on";
    tg::task_release(submit_probe(cl, &plus3, {quarters[2]}, {tg::access_rw}));
    tg::task_release(submit_probe(cl, &plus3, {hv}, {tg::access_rw}));
    ASSERT_TRUE(tg::acquire(hv, tg::access_read).ok());
    for (std::uint32_t k = 0; k < n; ++k) {
        ASSERT_EQ(v[k], k >= 24 && k < 36 ? 56.0 : 53.0) << k;
    }
    ASSERT_TRUE(tg::release(hv).ok());
    EXPECT_EQ(tg::unregister(hv).code(), errc::busy) << "plans left: clean them first";
    ASSERT_TRUE(tg::partition_clean(hv, halves[0]).ok());
    ASSERT_TRUE(tg::partition_clean(hv, quarters[3]).ok());
    EXPECT_EQ(tg::nplans(hv), 0);
    ASSERT_TRUE(tg::unregister(hv).ok());
}

/// Row i of a matrix as a vector (a child of another kind); leaves the id field to the core.
void matrix_row(void* /*ctx*/, void* parent, void* child, int i, int /*n*/) {
    auto* m = static_cast<tg::matrix_interface*>(parent);
    auto* v = static_cast<tg::vector_interface*>(child);
    EXPECT_EQ(v->nx, 0u) << "a child of another kind starts zeroed, not as a copy of its parent";
    v->nx = m->nx;
    v->elemsize = m->elemsize;
    v->ptr = m->ptr + static_cast<std::size_t>(i) * m->ld * m->elemsize;
    v->dev_handle = v->ptr;
}

bool vector_kind(void* /*ctx*/, int /*i*/, tg::child_kind* k) {
    k->id = tg::interface_id::vector;
    return true;
}

TEST_P(Partition, ChildrenOfAnotherKind) {
    constexpr std::uint32_t nx = 5, ny = 6, ld = 7;
    std::vector<double> m(ld * ny, 1.0);
    tg::data* hm = nullptr;
    ASSERT_TRUE(tg::register_matrix(&hm, m.data(), ld, nx, ny, sizeof(double)).ok());
    probe scale{[](void** b) {
        auto* c = static_cast<tg::vector_interface*>(b[0]);
        ASSERT_EQ(c->id, tg::interface_id::vector);
        double* x = vec_ptr(b[0]);
        const double f = x[0] + 1.0;  // rows differ by round: row r is scaled by (its value + 1)
        for (std::uint32_t k = 0; k < c->nx; ++k) {
            x[k] *= f;
        }
    }};
    tg::codelet cl = probe_codelet(1, "scale row");
    for (int round = 0; round < 2; ++round) {  // partition, unpartition, and again
        ASSERT_TRUE(tg::partition(hm, static_cast<int>(ny), &matrix_row, nullptr, &vector_kind).ok());
        ASSERT_EQ(tg::nchildren(hm), static_cast<int>(ny));
        for (std::uint32_t r = 0; r < ny; ++r) {
            tg::data* c = tg::child(hm, static_cast<int>(r));
            EXPECT_EQ(tg::interface_of_kind(c), tg::interface_id::vector);
            EXPECT_EQ(static_cast<tg::vector_interface*>(tg::interface_of(c))->id, tg::interface_id::vector);
            EXPECT_EQ(tg::data_size(c), nx * sizeof(double));
            tg::task_release(submit_probe(cl, &scale, {c}, {tg::access_rw}));
        }
        ASSERT_TRUE(tg::unpartition(hm).ok());
        EXPECT_EQ(tg::nchildren(hm), 0);
    }
    ASSERT_TRUE(tg::acquire(hm, tg::access_read).ok());
    for (std::uint32_t r = 0; r < ny; ++r) {
        for (std::uint32_t k = 0; k < ld; ++k) {
            EXPECT_EQ(m[r * ld + k], k < nx ? 6.0 : 1.0) << "row " << r << ", element " << k;  // 1 * 2 * 3; padding untouched
        }
    }
    ASSERT_TRUE(tg::release(hm).ok());

    // A custom kind: the child carries its ops; incomplete ops and unknown kinds are refused
    // and leave no children.
    struct kinds {
        tg::child_kind k;
        static bool give(void* ctx, int /*i*/, tg::child_kind* out) {
            *out = static_cast<kinds*>(ctx)->k;
            return true;
        }
    };
    auto fill_nothing = [](void*, void*, void*, int, int) {};
    kinds bad;
    bad.k.id = static_cast<tg::interface_id>(tg::first_custom_id + 3);  // custom, without ops
    EXPECT_EQ(tg::partition_plan(hm, 2, fill_nothing, &bad, nullptr, &kinds::give).code(), errc::invalid_argument);
    EXPECT_EQ(tg::nchildren(hm), 0);
    bad.k.id = static_cast<tg::interface_id>(7);  // no built-in kind has id 7
    EXPECT_EQ(tg::partition_plan(hm, 2, fill_nothing, &bad, nullptr, &kinds::give).code(), errc::invalid_argument);
    EXPECT_EQ(tg::nchildren(hm), 0);
    kinds custom;
    custom.k.id = static_cast<tg::interface_id>(tg::first_custom_id + 3);
    custom.k.ops = *tg::interface_ops_of(hm);  // any complete ops table
    custom.k.ops.interface_size = 24;
    tg::data* kids[2] = {};
    ASSERT_TRUE(tg::partition_plan(hm, 2, fill_nothing, &custom, kids, &kinds::give).ok());
    for (tg::data* c : kids) {
        EXPECT_EQ(static_cast<int>(tg::interface_of_kind(c)), tg::first_custom_id + 3);
        EXPECT_EQ(tg::interface_ops_of(c)->interface_size, 24u);
    }
    ASSERT_TRUE(tg::partition_clean(hm).ok());
    ASSERT_TRUE(tg::unregister(hm).ok());
}

// ---- memory control -------------------------------------------------------------------------

TEST_P(Memory, WatermarksBoundTasksInFlight) {
    held g;
    tg::set_submission_limits(8, 3);
    tg::codelet cl = probe_codelet(1, "held");
    probe nothing{[](void**) {}};
    std::atomic<int> submitted{0};
    std::atomic<long> max_seen{0};
    std::thread submitter([&] {
        for (int i = 0; i < 30; ++i) {
            tg::task_release(submit_probe(cl, &nothing, {g.h}, {tg::access_read}));
            submitted.fetch_add(1);
            long now = tg::tasks_in_flight();
            long m = max_seen.load();
            while (now > m && !max_seen.compare_exchange_weak(m, now)) {
            }
        }
    });
    EXPECT_TRUE(pause_until([&] { return submitted.load() >= 8; }));
    sched::sleep_for(30ms);  // a submission past the watermark would have happened by now
    EXPECT_EQ(submitted.load(), 8) << "the submission must wait at the high watermark";
    g.let_go();
    EXPECT_TRUE(pause_until([&] { return submitted.load() == 30; }));
    submitter.join();
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_LE(max_seen.load(), 8);
    tg::set_submission_limits(0, 0);
}

TEST_P(Memory, LimitMakesSubmissionsWaitOrFail) {
    constexpr std::uint32_t n = 1024;  // 8 KiB of scratch per task
    tg::data* hs = nullptr;
    ASSERT_TRUE(tg::register_vector(&hs, nullptr, n, sizeof(double)).ok());
    ASSERT_TRUE(tg::allocate_on_use(hs).ok());
    tg::set_memory_limit(2 * n * sizeof(double));
    held g;
    tg::codelet cl = probe_codelet(2, "scratch held");
    probe nothing{[](void**) {}};
    std::atomic<int> submitted{0};
    std::thread submitter([&] {
        for (int i = 0; i < 5; ++i) {
            tg::task_release(submit_probe(cl, &nothing, {hs, g.h}, {tg::access_scratch, tg::access_read}));
            submitted.fetch_add(1);
        }
    });
    EXPECT_TRUE(pause_until([&] { return submitted.load() >= 2; }));
    sched::sleep_for(30ms);
    EXPECT_EQ(submitted.load(), 2) << "a third scratch buffer does not fit: its submission waits";
    EXPECT_EQ(tg::memory_used(), 2 * n * sizeof(double));
    g.let_go();
    EXPECT_TRUE(pause_until([&] { return submitted.load() == 5; }));
    submitter.join();
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(tg::memory_used(), tg::memory_cached()) << "what the workers keep for reuse only";
    // A request above the limit, or one that nothing in flight can make room for, fails.
    tg::set_memory_limit(n * sizeof(double) / 2);
    tg::codelet cl1 = probe_codelet(1, "too big");
    tg::data* hsv[] = {hs};
    tg::access_mode sm[] = {tg::access_scratch};
    tg::task_desc d = one_buffer(&cl1, hsv, sm, &nothing);
    tg::task* t = *tg::task_create();
    EXPECT_EQ(tg::submit(t, d).code(), errc::no_memory);
    tg::set_memory_limit(n * sizeof(double));
    tg::data* hw = nullptr;  // its own memory takes the whole limit: then no scratch fits
    ASSERT_TRUE(tg::register_vector(&hw, nullptr, n, sizeof(double)).ok());
    ASSERT_TRUE(tg::allocate_on_use(hw).ok());
    tg::task_release(submit_probe(cl1, &nothing, {hw}, {tg::access_write}));
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(tg::memory_used(), n * sizeof(double));
    EXPECT_EQ(tg::submit(t, d).code(), errc::no_memory) << "nothing in flight can give memory back";
    ASSERT_TRUE(tg::unregister(hw).ok());
    EXPECT_EQ(tg::memory_used(), 0u);
    ASSERT_TRUE(tg::submit(t, d).ok()) << "fits again once the handle is gone";
    ASSERT_TRUE(tg::wait_for_all().ok());
    tg::task_release(t);
    tg::set_memory_limit(0);
    ASSERT_TRUE(tg::unregister(hs).ok());
}

INSTANTIATE_TEST_SUITE_P(Workers, Partition,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::ValuesIn(all_policies)), param_name);
INSTANTIATE_TEST_SUITE_P(Workers, Memory,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::ValuesIn(all_policies)), param_name);

}  // namespace
