// Data access arbiters (starpu_arbiter_t): handles assigned to one are taken by a task all at
// once or not at all, so that a task waiting for one of them holds none of the others; the
// exclusion of commute accesses stays; misuse stops the program with a message.
#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "scheduler/sched.hpp"
#include "starpu_fixture.hpp"

namespace {

using StarpuArbiter = mpc::test::starpu_two_workers;

// Every task adds one to each of its handles' counters and checks that nobody else is inside
// one of its handles at the same time.
constexpr int nh = 8;
struct cell {
    int count = 0;
    std::atomic<int> inside{0};
};
cell g_cells[nh];
std::atomic<int> g_overlaps{0};

void touch(void** buffers, void* arg) {
    const int n = static_cast<int>(reinterpret_cast<intptr_t>(arg));
    cell* mine[2];
    for (int k = 0; k < n; ++k) {
        mine[k] = reinterpret_cast<cell*>(STARPU_VARIABLE_GET_PTR(buffers[k]));
        if (mine[k]->inside.fetch_add(1) != 0) {
            g_overlaps.fetch_add(1);
        }
    }
    volatile double x = 0;
    for (int i = 0; i < 2000; ++i) {
        x = x + i;
    }
    for (int k = 0; k < n; ++k) {
        ++mine[k]->count;
        mine[k]->inside.fetch_sub(1);
    }
}

void run_pairs(starpu_arbiter_t a, starpu_arbiter_t b) {
    for (cell& c : g_cells) {
        c.count = 0;
    }
    g_overlaps = 0;
    starpu_data_handle_t h[nh];
    for (int i = 0; i < nh; ++i) {
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&g_cells[i]), sizeof(cell));
        if (a != nullptr) {
            starpu_data_assign_arbiter(h[i], (i % 2 != 0 || b == nullptr) ? a : b);
        }
    }
    starpu_codelet one{}, two{};
    one.cpu_funcs[0] = touch;
    one.nbuffers = 1;
    // LOCALITY: a hint, accepted and ignored (as by StarPU's built policies).
    one.modes[0] = static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE | STARPU_LOCALITY);
    two.cpu_funcs[0] = touch;
    two.nbuffers = 2;
    two.modes[0] = static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);
    two.modes[1] = static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);
    int want[nh] = {};
    for (int i = 0; i < nh; ++i) {
        ASSERT_EQ(starpu_task_insert(&one, STARPU_CL_ARGS_NFREE, reinterpret_cast<void*>(intptr_t{1}), 0,
                                     STARPU_RW | STARPU_COMMUTE | STARPU_LOCALITY, h[i], 0),
                  0);
        ++want[i];
        for (int j = 0; j < nh; ++j) {
            if (i != j) {
                ASSERT_EQ(starpu_task_insert(&two, STARPU_CL_ARGS_NFREE, reinterpret_cast<void*>(intptr_t{2}), 0,
                                             STARPU_RW | STARPU_COMMUTE, h[i], STARPU_RW | STARPU_COMMUTE, h[j], 0),
                          0);
                ++want[i];
                ++want[j];
            }
        }
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    for (int i = 0; i < nh; ++i) {
        starpu_data_unregister(h[i]);
        EXPECT_EQ(g_cells[i].count, want[i]) << "handle " << i;
    }
    EXPECT_EQ(g_overlaps.load(), 0) << "two tasks were inside one handle at once";
}

TEST_F(StarpuArbiter, CommuteAccessesStayExclusiveUnderOneOrTwoArbiters) {
    starpu_arbiter_t a = starpu_arbiter_create();
    starpu_arbiter_t b = starpu_arbiter_create();
    ASSERT_NE(a, nullptr);
    run_pairs(a, nullptr);  // every handle under one arbiter
    run_pairs(a, b);        // odd handles under a, even ones under b: taken arbiter by arbiter
    run_pairs(nullptr, nullptr);  // and without (taken one by one)
    starpu_arbiter_destroy(a);
    starpu_arbiter_destroy(b);
}

// X holds `high` and waits (a while) for Z to run; Y needs both handles; Z needs only `low`.
// Taken one by one in address order, Y takes `low` and waits for `high`, so Z cannot run
// before X ends. With an arbiter, Y takes nothing while `high` is busy, and Z runs beside X.
std::atomic<bool> g_z_ran{false};
std::atomic<bool> g_z_during_x{false};
void x_waits_for_z(void**, void*) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (!g_z_ran.load() && std::chrono::steady_clock::now() < until) {
        mpc::sched::yield();
    }
    g_z_during_x = g_z_ran.load();
}
void y_runs(void**, void*) {}
void z_runs(void**, void*) { g_z_ran = true; }

bool z_ran_while_x_held_its_handle(bool with_arbiter) {
    g_z_ran = false;
    g_z_during_x = false;
    int cells[2] = {0, 0};
    starpu_data_handle_t h[2];
    for (int i = 0; i < 2; ++i) {
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&cells[i]), sizeof(int));
    }
    starpu_data_handle_t low = std::min(h[0], h[1]);  // handles are taken in address order
    starpu_data_handle_t high = std::max(h[0], h[1]);
    starpu_arbiter_t a = with_arbiter ? starpu_arbiter_create() : nullptr;
    if (a != nullptr) {
        starpu_data_assign_arbiter(low, a);
        starpu_data_assign_arbiter(high, a);
    }
    starpu_codelet cx{}, cy{}, cz{};
    cx.cpu_funcs[0] = x_waits_for_z;
    cy.cpu_funcs[0] = y_runs;
    cz.cpu_funcs[0] = z_runs;
    cx.nbuffers = cy.nbuffers = cz.nbuffers = STARPU_VARIABLE_NBUFFERS;
    const auto rwc = STARPU_RW | STARPU_COMMUTE;
    EXPECT_EQ(starpu_task_insert(&cx, rwc, high, 0), 0);
    EXPECT_EQ(starpu_task_insert(&cy, rwc, high, rwc, low, 0), 0);
    EXPECT_EQ(starpu_task_insert(&cz, rwc, low, 0), 0);
    EXPECT_EQ(starpu_task_wait_for_all(), 0);
    starpu_data_unregister(h[0]);
    starpu_data_unregister(h[1]);
    if (a != nullptr) {
        starpu_arbiter_destroy(a);
    }
    EXPECT_TRUE(g_z_ran.load());
    return g_z_during_x.load();
}

TEST_F(StarpuArbiter, ATaskWaitingAtTheArbiterHoldsNoneOfItsHandles) {
    EXPECT_FALSE(z_ran_while_x_held_its_handle(false)) << "one by one, Y holds `low` while it waits";
    EXPECT_TRUE(z_ran_while_x_held_its_handle(true)) << "at the arbiter, Y waits holding nothing";
}

TEST(StarpuArbiterDeath, AssignedAfterTheFirstAccess) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            int x = 0;
            starpu_data_handle_t h;
            starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
            ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
            starpu_data_release(h);
            starpu_data_assign_arbiter(h, starpu_arbiter_create());
        },
        "starpu_data_assign_arbiter: arbiter assigned after the handle's first access");
}

TEST(StarpuArbiterDeath, DestroyedWhileAHandleIsAssigned) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ASSERT_EQ(starpu_init(nullptr), 0);
            int x = 0;
            starpu_data_handle_t h;
            starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
            starpu_arbiter_t a = starpu_arbiter_create();
            starpu_data_assign_arbiter(h, a);
            starpu_arbiter_destroy(a);
        },
        "starpu_arbiter_destroy: the arbiter's handles are still registered");
}

TEST_F(StarpuArbiter, DestroyedOnceItsHandlesAreUnregistered) {
    int x = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&x), sizeof x);
    starpu_arbiter_t a = starpu_arbiter_create();
    starpu_data_assign_arbiter(h, a);
    starpu_data_assign_arbiter(h, nullptr);  // back to one by one: a has no handle left
    starpu_arbiter_destroy(a);
    starpu_data_unregister(h);
}

}  // namespace
