// StarPU's OpenMP runtime support (starpu_openmp.h) without explicit tasks: a parallel region's
// implicit tasks run together on the workers; barriers order them; every loop schedule hands out
// each iteration exactly once, ordered parts run in iteration order; single, copyprivate,
// critical, sections and locks keep their guarantees; the ICVs answer as OpenMP says.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "scheduler/sched.hpp"

namespace {

class StarpuOpenmp : public ::testing::Test {
protected:
    void SetUp() override {
        setenv("STARPU_NCPU", "2", 1);
        unsetenv("OMP_NUM_THREADS");
        unsetenv("OMP_SCHEDULE");
        ASSERT_EQ(starpu_omp_init(), 0);
    }
    void TearDown() override { starpu_omp_shutdown(); }
};

/// Runs f in a region of the default team (every worker).
void region(void (*f)(void**, void*), void* arg = nullptr, int num_threads = 0) {
    starpu_omp_parallel_region_attr attr{};
    attr.cl.cpu_funcs[0] = f;
    attr.cl.where = STARPU_CPU;
    attr.cl_arg = arg;
    attr.if_clause = 1;
    attr.num_threads = num_threads;
    starpu_omp_parallel_region(&attr);
}

std::atomic<int> g_mask{0};
std::atomic<int> g_bad{0};
std::atomic<int> g_count{0};

TEST_F(StarpuOpenmp, TheInitialThreadAndARegionsTeam) {
    EXPECT_EQ(starpu_omp_get_num_threads(), 1);
    EXPECT_EQ(starpu_omp_get_thread_num(), 0);
    EXPECT_EQ(starpu_omp_in_parallel(), 0);
    EXPECT_EQ(starpu_omp_get_level(), 0);
    EXPECT_EQ(starpu_omp_get_max_threads(), 2) << "OMP_NUM_THREADS unset: the workers";
    g_mask = 0;
    g_bad = 0;
    region([](void**, void*) {
        const int n = starpu_omp_get_num_threads();
        const int me = starpu_omp_get_thread_num();
        if (n != 2 || starpu_omp_in_parallel() != 1 || starpu_omp_get_level() != 1 ||
            starpu_omp_get_ancestor_thread_num(1) != me || starpu_omp_get_ancestor_thread_num(0) != 0 ||
            starpu_omp_get_team_size(1) != 2 || starpu_omp_get_team_size(0) != 1 || starpu_worker_get_id() != me) {
            g_bad.fetch_add(1);
        }
        g_mask.fetch_or(1 << me);
        if (starpu_omp_master_inline() != (me == 0 ? 1 : 0)) {
            g_bad.fetch_add(1);
        }
        // A region inside a region: a team of one, one level deeper.
        starpu_omp_parallel_region_attr inner{};
        inner.cl.cpu_funcs[0] = [](void**, void*) {
            if (starpu_omp_get_num_threads() != 1 || starpu_omp_get_level() != 2 || starpu_omp_get_thread_num() != 0) {
                g_bad.fetch_add(1);
            }
        };
        inner.if_clause = 1;
        starpu_omp_parallel_region(&inner);
    });
    EXPECT_EQ(g_mask.load(), 3) << "threads 0 and 1";
    EXPECT_EQ(g_bad.load(), 0);
    g_mask = 0;
    region([](void**, void*) { g_mask.fetch_or(1 << starpu_omp_get_thread_num()); }, nullptr, 1);
    EXPECT_EQ(g_mask.load(), 1) << "num_threads 1";
}

std::atomic<int> g_phase[2];
TEST_F(StarpuOpenmp, ABarrierHoldsEveryThreadUntilAllArrive) {
    g_bad = 0;
    g_phase[0] = 0;
    g_phase[1] = 0;
    region([](void**, void*) {
        for (int round = 0; round < 50; ++round) {
            g_phase[round % 2].fetch_add(1);
            starpu_omp_barrier();
            if (g_phase[round % 2].load() != 2 * (round / 2 + 1)) {
                g_bad.fetch_add(1);  // someone passed before the other arrived
            }
            starpu_omp_barrier();
        }
    });
    EXPECT_EQ(g_bad.load(), 0);
}

constexpr unsigned long long n_iter = 1000;
std::atomic<int> g_hits[n_iter];
struct loop_case {
    int schedule;
    unsigned long long chunk;
};

TEST_F(StarpuOpenmp, EveryScheduleRunsEachIterationOnce) {
    const loop_case cases[] = {{starpu_omp_sched_static, 0},  {starpu_omp_sched_static, 7}, {starpu_omp_sched_dynamic, 0},
                               {starpu_omp_sched_dynamic, 13}, {starpu_omp_sched_guided, 3}, {starpu_omp_sched_auto, 0},
                               {starpu_omp_sched_runtime, 0}};
    for (const loop_case& c : cases) {
        SCOPED_TRACE(c.schedule);
        for (auto& h : g_hits) {
            h = 0;
        }
        region(
            [](void**, void* p) {
                auto* lc = static_cast<loop_case*>(p);
                starpu_omp_for(
                    [](unsigned long long first, unsigned long long nb, void*) {
                        for (unsigned long long i = first; i < first + nb; ++i) {
                            g_hits[i].fetch_add(1);
                        }
                    },
                    nullptr, n_iter, lc->chunk, lc->schedule, 0, 0);
                // The same through the inline calls, with the _alt ranges.
                unsigned long long b = 0;
                unsigned long long e = 0;
                if (starpu_omp_for_inline_first_alt(n_iter, lc->chunk, lc->schedule, 0, &b, &e) != 0) {
                    do {
                        for (unsigned long long i = b; i < e; ++i) {
                            g_hits[i].fetch_add(1);
                        }
                    } while (starpu_omp_for_inline_next_alt(n_iter, lc->chunk, lc->schedule, 0, &b, &e) != 0);
                }
                starpu_omp_barrier();
            },
            const_cast<loop_case*>(&c));
        int wrong = 0;
        for (auto& h : g_hits) {
            wrong += h.load() != 2 ? 1 : 0;
        }
        EXPECT_EQ(wrong, 0) << "iterations not run exactly once per loop";
    }
}

std::vector<unsigned long long>* g_order = nullptr;
TEST_F(StarpuOpenmp, OrderedPartsRunInIterationOrder) {
    std::vector<unsigned long long> order;
    g_order = &order;
    region([](void**, void*) {
        starpu_omp_for(
            [](unsigned long long first, unsigned long long nb, void*) {
                for (unsigned long long i = first; i < first + nb; ++i) {
                    mpc::sched::yield();  // let the other thread run ahead if it could
                    starpu_omp_ordered([](void* p) { g_order->push_back(*static_cast<unsigned long long*>(p)); }, &i);
                }
            },
            nullptr, 200, 5, starpu_omp_sched_dynamic, 1, 0);
    });
    ASSERT_EQ(order.size(), 200u);
    for (unsigned long long i = 0; i < 200; ++i) {
        ASSERT_EQ(order[i], i);
    }
}

TEST_F(StarpuOpenmp, SingleRunsOnceAndCopyprivateReachesEveryThread) {
    g_count = 0;
    g_bad = 0;
    region([](void**, void*) {
        for (int k = 0; k < 20; ++k) {
            starpu_omp_single([](void*) { g_count.fetch_add(1); }, nullptr, 0);
        }
        for (int k = 0; k < 5; ++k) {
            int value = -1;
            starpu_omp_single_copyprivate(
                [](void*, void* data, unsigned long long) { *static_cast<int*>(data) = 40 + starpu_omp_get_thread_num(); },
                nullptr, &value, sizeof value);
            if (value < 40) {
                g_bad.fetch_add(1);
            }
            int inline_value = -1;
            if (int* from = static_cast<int*>(starpu_omp_single_copyprivate_inline_begin(&inline_value)); from == nullptr) {
                inline_value = 7;
            } else {
                inline_value = *from;
            }
            starpu_omp_single_copyprivate_inline_end();
            if (inline_value != 7) {
                g_bad.fetch_add(1);
            }
        }
    });
    EXPECT_EQ(g_count.load(), 20) << "each single once";
    EXPECT_EQ(g_bad.load(), 0);
}

long g_unprotected = 0;
TEST_F(StarpuOpenmp, CriticalSectionsLocksAndSectionsExclude) {
    g_unprotected = 0;
    g_count = 0;
    region([](void**, void*) {
        for (int k = 0; k < 200; ++k) {
            starpu_omp_critical_inline_begin("c");
            const long v = g_unprotected;
            mpc::sched::yield();  // the other thread runs here if it can get in
            g_unprotected = v + 1;
            starpu_omp_critical_inline_end("c");
        }
        void (*fs[5])(void*);
        void* args[5] = {};
        for (auto& f : fs) {
            f = [](void*) { g_count.fetch_add(1); };
        }
        starpu_omp_sections(5, fs, args, 0);
        starpu_omp_sections_combined(
            7, [](unsigned long long, void*) { g_count.fetch_add(10); }, nullptr, 0);
    });
    EXPECT_EQ(g_unprotected, 400);
    EXPECT_EQ(g_count.load(), 5 + 70) << "each section once";

    static starpu_omp_lock_t lock;
    static starpu_omp_nest_lock_t nest;
    starpu_omp_init_lock(&lock);
    starpu_omp_init_nest_lock(&nest);
    EXPECT_EQ(starpu_omp_test_lock(&lock), 1);
    EXPECT_EQ(starpu_omp_test_lock(&lock), 0) << "held";
    starpu_omp_unset_lock(&lock);
    g_unprotected = 0;
    region([](void**, void*) {
        for (int k = 0; k < 100; ++k) {
            starpu_omp_set_nest_lock(&nest);
            starpu_omp_set_nest_lock(&nest);  // again, by its owner
            starpu_omp_set_lock(&lock);
            const long v = g_unprotected;
            mpc::sched::yield();
            g_unprotected = v + 1;
            starpu_omp_unset_lock(&lock);
            starpu_omp_unset_nest_lock(&nest);
            starpu_omp_unset_nest_lock(&nest);
        }
    });
    EXPECT_EQ(g_unprotected, 200);
    starpu_omp_destroy_lock(&lock);
    starpu_omp_destroy_nest_lock(&nest);
}

TEST_F(StarpuOpenmp, SettingsAndTheirDefaults) {
    enum starpu_omp_sched_value kind;
    int mod = -1;
    starpu_omp_get_schedule(&kind, &mod);
    EXPECT_EQ(kind, starpu_omp_sched_static);
    EXPECT_EQ(mod, 0);
    starpu_omp_set_schedule(starpu_omp_sched_dynamic, 4);
    starpu_omp_get_schedule(&kind, &mod);
    EXPECT_EQ(kind, starpu_omp_sched_dynamic);
    EXPECT_EQ(mod, 4);
    starpu_omp_set_num_threads(1);
    g_mask = 0;
    region([](void**, void*) { g_mask.fetch_or(1 << starpu_omp_get_thread_num()); });
    EXPECT_EQ(g_mask.load(), 1) << "set_num_threads(1): a team of one";
    EXPECT_EQ(starpu_omp_get_num_procs(), 2);
    EXPECT_EQ(starpu_omp_get_thread_limit(), 2);
    EXPECT_EQ(starpu_omp_get_max_active_levels(), 1);
    EXPECT_EQ(starpu_omp_get_proc_bind(), starpu_omp_proc_bind_false);
    EXPECT_EQ(starpu_omp_get_num_devices(), 1);
    EXPECT_EQ(starpu_omp_is_initial_device(), 1);
    EXPECT_GT(starpu_omp_get_wtick(), 0.0);
    const double t0 = starpu_omp_get_wtime();
    EXPECT_GE(starpu_omp_get_wtime(), t0);
}

TEST(StarpuOpenmpEnv, TheEnvironmentSetsTheIcvs) {
    setenv("STARPU_NCPU", "2", 1);
    setenv("OMP_NUM_THREADS", "1, 4", 1);
    setenv("OMP_SCHEDULE", "guided,3", 1);
    setenv("OMP_DYNAMIC", "true", 1);
    setenv("OMP_MAX_ACTIVE_LEVELS", "3", 1);
    ASSERT_EQ(starpu_omp_init(), 0);
    EXPECT_EQ(starpu_omp_get_max_threads(), 1);
    enum starpu_omp_sched_value kind;
    int mod = 0;
    starpu_omp_get_schedule(&kind, &mod);
    EXPECT_EQ(kind, starpu_omp_sched_guided);
    EXPECT_EQ(mod, 3);
    EXPECT_EQ(starpu_omp_get_dynamic(), 1);
    EXPECT_EQ(starpu_omp_get_max_active_levels(), 3);
    starpu_omp_shutdown();
    unsetenv("OMP_NUM_THREADS");
    unsetenv("OMP_SCHEDULE");
    unsetenv("OMP_DYNAMIC");
    unsetenv("OMP_MAX_ACTIVE_LEVELS");
}

TEST(StarpuOpenmpDeath, ARegionBeforeInitEndsTheProgramWithAMessage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    starpu_omp_parallel_region_attr attr{};
    attr.cl.cpu_funcs[0] = [](void**, void*) {};
    EXPECT_DEATH(starpu_omp_parallel_region(&attr), "starpu_omp_init was not called");
}

}  // namespace

namespace {

// ---- explicit tasks ----------------------------------------------------------------------------

std::atomic<int> g_task_runs{0};
std::atomic<int> g_in_team{0};

void count_task(void**, void*) {
    g_task_runs.fetch_add(1);
    if (starpu_omp_get_num_threads() == 2 && starpu_worker_get_id() >= 0 && starpu_worker_get_id() < 2) {
        g_in_team.fetch_add(1);
    }
}

starpu_omp_task_region_attr task_attr(void (*f)(void**, void*)) {
    starpu_omp_task_region_attr a{};
    a.cl.cpu_funcs[0] = f;
    a.cl.where = STARPU_CPU;
    a.if_clause = 1;
    return a;
}

TEST_F(StarpuOpenmp, TaskwaitWaitsForTheChildrenWhichRunOnTheTeam) {
    g_task_runs = 0;
    g_in_team = 0;
    g_bad = 0;
    region([](void**, void*) {
        starpu_omp_task_region_attr a = task_attr(count_task);
        for (int i = 0; i < 50; ++i) {
            starpu_omp_task_region(&a);
        }
        starpu_omp_taskwait();
        // Each thread's 50 are done; the other thread's may not be yet.
        if (g_task_runs.load() < 50) {
            g_bad.fetch_add(1);
        }
    });
    EXPECT_EQ(g_task_runs.load(), 100) << "the region's end waits for every task";
    EXPECT_EQ(g_in_team.load(), 100);
    EXPECT_EQ(g_bad.load(), 0);
}

TEST_F(StarpuOpenmp, TasksOnAHandleRunInTheirOrderAndABarrierWaitsForThem) {
    static int value;
    static starpu_data_handle_t h;
    value = 0;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&value), sizeof value);
    g_bad = 0;
    region([](void**, void*) {
        starpu_omp_single(
            [](void*) {
                starpu_omp_task_region_attr a = task_attr([](void** b, void* arg) {
                    int* v = reinterpret_cast<int*>(STARPU_VARIABLE_GET_PTR(b[0]));
                    const auto i = static_cast<int>(reinterpret_cast<intptr_t>(arg));
                    if (*v != i) {
                        g_bad.fetch_add(1);  // ran out of order
                    }
                    mpc::sched::yield();
                    *v = i + 1;
                });
                a.cl.nbuffers = 1;
                a.cl.modes[0] = STARPU_RW;
                a.handles = &h;
                for (int i = 0; i < 40; ++i) {
                    a.cl_arg = reinterpret_cast<void*>(static_cast<intptr_t>(i));
                    starpu_omp_task_region(&a);
                }
            },
            nullptr, 1);  // nowait: the barrier below is where the tasks must be done
        starpu_omp_barrier();
        if (value != 40) {
            g_bad.fetch_add(100);
        }
    });
    EXPECT_EQ(g_bad.load(), 0);
    EXPECT_EQ(value, 40);
    starpu_data_unregister(h);
}

std::atomic<int> g_leaves{0};
void nested_task(void**, void* arg) {
    const auto depth = static_cast<int>(reinterpret_cast<intptr_t>(arg));
    if (depth == 0) {
        mpc::sched::yield();
        g_leaves.fetch_add(1);
        return;
    }
    starpu_omp_task_region_attr a = task_attr(nested_task);
    a.cl_arg = reinterpret_cast<void*>(static_cast<intptr_t>(depth - 1));
    starpu_omp_task_region(&a);
    starpu_omp_task_region(&a);
    // No taskwait: the taskgroup above waits for these descendants too.
}

TEST_F(StarpuOpenmp, ATaskgroupWaitsForDescendantsAndFinalTasksAreIncluded) {
    g_leaves = 0;
    g_bad = 0;
    region([](void**, void*) {
        starpu_omp_master(
            [](void*) {
                starpu_omp_taskgroup_inline_begin();
                starpu_omp_task_region_attr a = task_attr(nested_task);
                a.cl_arg = reinterpret_cast<void*>(static_cast<intptr_t>(4));
                starpu_omp_task_region(&a);
                starpu_omp_taskgroup_inline_end();
                if (g_leaves.load() != 16) {
                    g_bad.fetch_add(1);
                }
                // if(0): the maker waits; final: the task and its children run at once.
                starpu_omp_task_region_attr u = task_attr([](void**, void*) {
                    if (starpu_omp_in_final() != 1) {
                        g_bad.fetch_add(10);
                    }
                    g_leaves.fetch_add(100);
                });
                u.if_clause = 0;
                u.final_clause = 1;
                starpu_omp_task_region(&u);
                if (g_leaves.load() != 116) {
                    g_bad.fetch_add(1000);
                }
            },
            nullptr);
        starpu_omp_barrier();
    });
    EXPECT_EQ(g_bad.load(), 0);
}

std::atomic<unsigned long long> g_loop_sum{0};
TEST_F(StarpuOpenmp, ATaskloopCoversItsIterations) {
    g_loop_sum = 0;
    region([](void**, void*) {
        starpu_omp_single(
            [](void*) {
                starpu_omp_task_region_attr a = task_attr([](void**, void* arg) {
                    auto* me = static_cast<starpu_omp_task_region_attr*>(arg);
                    for (unsigned long long i = me->begin_i; i < me->end_i; ++i) {
                        g_loop_sum.fetch_add(i);
                    }
                });
                a.cl_arg = &a;
                a.num_tasks = 7;
                a.nb_iterations = 1000;
                starpu_omp_taskloop_inline_begin(&a);
                starpu_omp_taskloop_inline_end(&a);
                if (g_loop_sum.load() != 999ULL * 1000 / 2) {
                    g_bad.fetch_add(1);
                }
            },
            nullptr, 0);
    });
    EXPECT_EQ(g_loop_sum.load(), 999ULL * 1000 / 2);
}

}  // namespace
