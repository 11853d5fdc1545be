// The per-worker cache of scratch buffers and redux copies (taskgraph/scratch_cache.cpp) and
// the reduction tree of redux phases (taskgraph/reduction.cpp): buffers are reused (the cache's
// counters), never shared by two running tasks, fit the memory limit with eviction, and go back
// at flush and shutdown; redux phases give StarPU's result with 1 to 8 workers, reduced by one
// task or by a tree, interleaved with R, RW and acquisitions.
#include <atomic>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "tg_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;

/// Starts the runtime with (workers, policy) and restores the cache and tree settings after.
class Cache : public tg_fixture {
protected:
    void TearDown() override {
        tg::set_scratch_cache_slots(8);
        tg::set_redux_tree(3, 16384);
        tg::set_memory_limit(0);
        tg_fixture::TearDown();
    }
};

long* var_ptr(void* iface) { return reinterpret_cast<long*>(static_cast<tg::variable_interface*>(iface)->ptr); }

/// A task writing a pattern into its scratch vector (b[0]), pausing, and storing its sum in the
/// variable b[1]: a buffer another running task shares would change the sum.
struct scratch_probe {
    std::atomic<int> bad{0};
    probe p{[this](void** b) {
        auto* s = static_cast<tg::vector_interface*>(b[0]);
        if (s->ptr == 0 || s->elemsize != sizeof(double)) {
            bad.fetch_add(1);
            return;
        }
        auto* v = reinterpret_cast<double*>(s->ptr);
        for (std::uint32_t k = 0; k < s->nx; ++k) {
            v[k] = k;
        }
        sched::sleep_for(20us);
        double sum = 0;
        for (std::uint32_t k = 0; k < s->nx; ++k) {
            sum += v[k];
        }
        *reinterpret_cast<double*>(static_cast<tg::variable_interface*>(b[1])->ptr) = sum;
    }};
};

double tri(std::uint32_t n) { return static_cast<double>(n) * (n - 1) / 2.0; }

TEST_P(Cache, ScratchBuffersAreReused) {
    constexpr std::uint32_t n = 512;  // 4 KiB
    tg::data* ha = nullptr;  // two handles of one shape, registered without memory
    tg::data* hb = nullptr;
    tg::data* hc = nullptr;  // another shape
    ASSERT_TRUE(tg::register_vector(&ha, nullptr, n, sizeof(double)).ok());
    ASSERT_TRUE(tg::register_vector(&hb, nullptr, n, sizeof(double)).ok());
    ASSERT_TRUE(tg::register_vector(&hc, nullptr, n / 2, sizeof(double)).ok());
    constexpr int ntasks = 120;
    std::vector<double> out(ntasks, -1);
    std::vector<tg::data*> ho(ntasks);
    for (int i = 0; i < ntasks; ++i) {
        ASSERT_TRUE(tg::register_variable(&ho[i], &out[i], sizeof(double)).ok());
    }
    tg::flush_scratch_cache();
    const tg::cache_stats s0 = tg::scratch_cache_stats();
    EXPECT_EQ(s0.entries, 0u);
    EXPECT_EQ(tg::memory_cached(), 0u);
    const std::size_t used_before = tg::memory_used();
    scratch_probe sp;
    tg::codelet cl = probe_codelet(2, "scratch");
    std::vector<tg::task*> ts;
    for (int i = 0; i < ntasks; ++i) {
        tg::data* h = i < ntasks / 3 ? ha : i < 2 * ntasks / 3 ? hb : hc;  // b reuses a's buffers
        ts.push_back(submit_probe(cl, &sp.p, {h, ho[i]}, {tg::access_scratch, tg::access_write}));
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    const tg::cache_stats s1 = tg::scratch_cache_stats();
    EXPECT_EQ(sp.bad.load(), 0);
    for (int i = 0; i < ntasks; ++i) {
        EXPECT_EQ(out[i], tri(i < 2 * ntasks / 3 ? n : n / 2)) << "task " << i;
    }
    EXPECT_EQ(s1.hits + s1.misses - s0.hits - s0.misses, static_cast<std::uint64_t>(ntasks));
    // At most one buffer per running task is made for each shape: the rest come from the cache.
    EXPECT_LE(s1.misses - s0.misses, 2u * static_cast<std::uint64_t>(workers()));
    EXPECT_GE(s1.hits - s0.hits, static_cast<std::uint64_t>(ntasks - 2 * workers()));
    EXPECT_GT(s1.entries, 0u);
    EXPECT_EQ(tg::memory_cached(), s1.bytes);
    EXPECT_EQ(tg::memory_used(), used_before + tg::memory_cached()) << "kept buffers stay counted";
    tg::flush_scratch_cache();
    EXPECT_EQ(tg::memory_cached(), 0u);
    EXPECT_EQ(tg::memory_used(), used_before);
    EXPECT_EQ(tg::scratch_cache_stats().entries, 0u);
    for (tg::task* t : ts) {
        tg::task_release(t);
    }
    for (tg::data* h : ho) {
        ASSERT_TRUE(tg::unregister(h).ok());
    }
    ASSERT_TRUE(tg::unregister(ha).ok());
    ASSERT_TRUE(tg::unregister(hb).ok());
    ASSERT_TRUE(tg::unregister(hc).ok());
}

TEST_P(Cache, NoCacheWhenDisabled) {
    tg::set_scratch_cache_slots(0);
    tg::flush_scratch_cache();
    tg::data* hs = nullptr;
    ASSERT_TRUE(tg::register_vector(&hs, nullptr, 64, sizeof(double)).ok());
    double x = 0;
    tg::data* hx = nullptr;
    ASSERT_TRUE(tg::register_variable(&hx, &x, sizeof x).ok());
    const tg::cache_stats s0 = tg::scratch_cache_stats();
    scratch_probe sp;
    tg::codelet cl = probe_codelet(2, "scratch");
    for (int i = 0; i < 20; ++i) {
        tg::task_release(submit_probe(cl, &sp.p, {hs, hx}, {tg::access_scratch, tg::access_write}));
    }
    ASSERT_TRUE(tg::wait_for_all().ok());
    const tg::cache_stats s1 = tg::scratch_cache_stats();
    EXPECT_EQ(s1.hits, s0.hits);
    EXPECT_EQ(s1.entries, 0u);
    EXPECT_EQ(tg::memory_cached(), 0u);
    EXPECT_EQ(x, tri(64));
    ASSERT_TRUE(tg::unregister(hx).ok());
    ASSERT_TRUE(tg::unregister(hs).ok());
}

TEST_P(Cache, LimitHoldsWithCachedBuffers) {
    // Two shapes of the same size, 4 KiB each, under a limit of one or two buffers: a buffer
    // cached for one shape must make room for the other (evicted), never make a submission fail
    // or wait for ever, and the bytes held never exceed the limit.
    constexpr std::uint32_t n = 512;
    tg::data* hd = nullptr;
    tg::data* hf = nullptr;
    ASSERT_TRUE(tg::register_vector(&hd, nullptr, n, sizeof(double)).ok());
    ASSERT_TRUE(tg::register_matrix(&hf, nullptr, n / 2, n / 2, 2, sizeof(double)).ok());
    for (const std::size_t limit : {std::size_t{n} * sizeof(double), 2 * std::size_t{n} * sizeof(double)}) {
        tg::flush_scratch_cache();
        tg::set_memory_limit(limit);
        std::atomic<std::size_t> max_seen{0};
        std::atomic<int> bad{0};
        probe p{[&](void** b) {
            const std::size_t used = tg::memory_used();
            std::size_t m = max_seen.load();
            while (used > m && !max_seen.compare_exchange_weak(m, used)) {
            }
            auto* v = static_cast<tg::vector_interface*>(b[0]);  // the first fields of both
            auto* d = reinterpret_cast<double*>(v->ptr);
            for (std::uint32_t k = 0; k < n; ++k) {
                d[k] = k;
            }
            double s = 0;
            for (std::uint32_t k = 0; k < n; ++k) {
                s += d[k];
            }
            if (s != tri(n)) {
                bad.fetch_add(1);
            }
        }};
        tg::codelet cl = probe_codelet(1, "scratch under a limit");
        for (int i = 0; i < 300; ++i) {
            tg::task_release(submit_probe(cl, &p, {(i / 3) % 2 == 0 ? hd : hf}, {tg::access_scratch}));
            const std::size_t used = tg::memory_used();
            EXPECT_LE(used, limit);
        }
        ASSERT_TRUE(tg::wait_for_all().ok());
        EXPECT_EQ(bad.load(), 0);
        EXPECT_LE(max_seen.load(), limit);
        EXPECT_LE(tg::memory_used(), limit);
        EXPECT_EQ(tg::memory_used(), tg::memory_cached());
    }
    tg::set_memory_limit(0);
    tg::flush_scratch_cache();
    EXPECT_EQ(tg::memory_used(), 0u);
    ASSERT_TRUE(tg::unregister(hd).ok());
    ASSERT_TRUE(tg::unregister(hf).ok());
}

// ---- REDUX ----------------------------------------------------------------------------------

std::atomic<int> g_inits{0};
std::atomic<int> g_folds_into_copies{0};
long* g_main = nullptr;  ///< the handle's own memory: folds into anything else are tree steps
void sum_init(void** b, void*) {
    g_inits.fetch_add(1);
    *var_ptr(b[0]) = 0;
}
void sum_redux(void** b, void*) {
    if (var_ptr(b[0]) != g_main) {
        g_folds_into_copies.fetch_add(1);
    }
    *var_ptr(b[0]) += *var_ptr(b[1]);
}

/// Submits one redux task per worker, pinned, so that every worker makes its copy, then `more`
/// unpinned ones; the i-th runs add(*next + i) on its buffer. Returns the sum of the values.
long redux_phase(tg::data* h, const tg::codelet& cl, std::deque<probe>* keep, void (*add)(void*, long),
                 long* next, int workers, int more) {
    long sum = 0;
    for (int i = 0; i < workers + more; ++i) {
        const long k = (*next)++;
        sum += k;
        keep->push_back(probe{[add, k](void** b) { add(b[0], k); }});
        tg::task* t = *tg::task_create();
        tg::data* hs[] = {h};
        tg::access_mode m[] = {tg::access_redux};
        tg::task_desc d;
        d.cl = &cl;
        d.handles = hs;
        d.modes = m;
        d.nbuffers = 1;
        d.cl_arg = &keep->back();
        d.worker = i < workers ? i : -1;
        EXPECT_TRUE(tg::submit(t, d).ok());
        tg::task_release(t);
    }
    return sum;
}

void add_to_var(void* iface, long k) {
    *var_ptr(iface) += k;
    sched::sleep_for(5us);
}
void add_to_vec(void* iface, long k) {
    auto* v = static_cast<tg::vector_interface*>(iface);
    auto* x = reinterpret_cast<long*>(v->ptr);
    for (std::uint32_t i = 0; i < v->nx; ++i) {
        x[i] += k * (i + 1);
    }
}

TEST_P(Cache, ReduxTreeGivesTheSum) {
    // Never; always (even one copy); from 3 copies; from one copy but 1 MiB (the data is 8 bytes).
    const std::pair<int, std::size_t> settings[] = {{0, 0}, {1, 0}, {3, 0}, {1, 1 << 20}};
    for (const auto& [tree_min, tree_bytes] : settings) {
        tg::set_redux_tree(tree_min, tree_bytes);
        long sum = 7;  // the data's own value takes part, as in StarPU
        g_main = &sum;
        tg::data* h = nullptr;
        ASSERT_TRUE(tg::register_variable(&h, &sum, sizeof sum).ok());
        ASSERT_TRUE(tg::set_reduction(h, &sum_redux, nullptr, &sum_init, nullptr).ok());
        long next = 1;
        std::deque<probe> keep;
        tg::codelet cl = probe_codelet(1, "contribute");
        g_inits = 0;
        g_folds_into_copies = 0;
        const long added = redux_phase(h, cl, &keep, &add_to_var, &next, workers(), 40);
        ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
        EXPECT_EQ(sum, 7 + added) << "tree from " << tree_min << " copies";
        ASSERT_TRUE(tg::release(h).ok());
        EXPECT_EQ(g_inits.load(), workers()) << "one copy per worker, each made neutral by init";
        // Position p of the tree folds into a copy unless p's path ends at the data: a tree over
        // positions 0..W has W steps, ceil(log2(W + 1)) of them into the data.
        int into_data = 0;
        for (int s = 1; s <= workers(); s *= 2) {
            ++into_data;
        }
        const bool tree = tree_min > 0 && workers() >= tree_min && tree_bytes <= sizeof sum;
        EXPECT_EQ(g_folds_into_copies.load(), tree ? workers() - into_data : 0);
        ASSERT_TRUE(tg::wait_for_all().ok());
        EXPECT_EQ(tg::memory_used(), tg::memory_cached()) << "the copies go back (or to a cache) once reduced";
        ASSERT_TRUE(tg::unregister(h).ok());
    }
    g_main = nullptr;
}

void vec_init(void** b, void*) {
    auto* v = static_cast<tg::vector_interface*>(b[0]);
    auto* x = reinterpret_cast<long*>(v->ptr);
    for (std::uint32_t i = 0; i < v->nx; ++i) {
        x[i] = 0;
    }
}
void vec_redux(void** b, void*) {
    auto* a = static_cast<tg::vector_interface*>(b[0]);
    auto* c = static_cast<tg::vector_interface*>(b[1]);
    auto* x = reinterpret_cast<long*>(a->ptr);
    auto* y = reinterpret_cast<long*>(c->ptr);
    for (std::uint32_t i = 0; i < a->nx; ++i) {
        x[i] += y[i];
    }
}

TEST_P(Cache, ManyReduxPhasesBetweenOtherAccesses) {
    // Phases closed by a reading task, a read-write task and an acquisition in turn, on a vector
    // registered without memory (its first phase starts from init); the expected values follow
    // sequentially. Copies of one phase are the next one's, through the workers' caches.
    constexpr std::uint32_t n = 256;
    tg::set_redux_tree(2, 0);
    tg::data* h = nullptr;
    ASSERT_TRUE(tg::register_vector(&h, nullptr, n, sizeof(long)).ok());
    ASSERT_TRUE(tg::allocate_on_use(h).ok());
    ASSERT_TRUE(tg::set_reduction(h, &vec_redux, nullptr, &vec_init, nullptr).ok());
    long next = 1;
    std::deque<probe> keep;
    std::atomic<int> wrong{0};
    long expect = 0;  // element i is expect * (i + 1)
    probe check{[&](void** b) {
        auto* x = reinterpret_cast<long*>(static_cast<tg::vector_interface*>(b[0])->ptr);
        for (std::uint32_t i = 0; i < n; ++i) {
            wrong.fetch_add(x[i] != expect * (i + 1) ? 1 : 0);
        }
    }};
    probe twice{[&](void** b) {
        auto* x = reinterpret_cast<long*>(static_cast<tg::vector_interface*>(b[0])->ptr);
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] *= 2;
        }
    }};
    tg::codelet cl = probe_codelet(1, "contribute");
    tg::codelet clc = probe_codelet(1, "check");
    const tg::cache_stats s0 = tg::scratch_cache_stats();
    constexpr int phases = 30;
    for (int p = 0; p < phases; ++p) {
        expect += redux_phase(h, cl, &keep, &add_to_vec, &next, p % 3 == 0 ? workers() : 0, 1 + p % 5);
        switch (p % 3) {
        case 0: {
            // Submitted now, run later: the check runs after the reduction, with this phase's
            // value (the probe reads `expect` then; the RW task below is ordered after it).
            const long e = expect;
            probe* chk = new probe{[&wrong, e](void** b) {
                auto* x = reinterpret_cast<long*>(static_cast<tg::vector_interface*>(b[0])->ptr);
                for (std::uint32_t i = 0; i < n; ++i) {
                    wrong.fetch_add(x[i] != e * (i + 1) ? 1 : 0);
                }
            }};
            tg::task* t = submit_probe(clc, chk, {h}, {tg::access_read});
            ASSERT_TRUE(tg::task_wait(t).ok());
            tg::task_release(t);
            delete chk;
            break;
        }
        case 1:
            tg::task_release(submit_probe(clc, &twice, {h}, {tg::access_rw}));
            expect *= 2;
            break;
        default:
            ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
            {
                void* b[1] = {tg::interface_of(h)};
                check.body(b);
            }
            ASSERT_TRUE(tg::release(h).ok());
            break;
        }
    }
    ASSERT_TRUE(tg::acquire(h, tg::access_read).ok());
    ASSERT_TRUE(tg::release(h).ok());
    ASSERT_TRUE(tg::wait_for_all().ok());
    EXPECT_EQ(wrong.load(), 0);
    const tg::cache_stats s1 = tg::scratch_cache_stats();
    EXPECT_GT(s1.hits, s0.hits) << "a later phase's copies come from the caches";
    EXPECT_EQ(tg::memory_used(), n * sizeof(long) + tg::memory_cached());
    ASSERT_TRUE(tg::unregister(h).ok());
    EXPECT_EQ(tg::memory_used(), tg::memory_cached());
}

INSTANTIATE_TEST_SUITE_P(Workers, Cache,
                         ::testing::Combine(::testing::Values(1, 2, 4, 8),
                                            ::testing::Values("eager", "lws", "dmda", "heteroprio")),
                         param_name);

}  // namespace
