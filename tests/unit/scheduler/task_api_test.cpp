// MPC_Task_create / MPC_Task_join (mpc.h, scheduler/task_api.cpp): tasks are ULTs with a heap
// in an address slice of their own. Results, the runtime started on first use, every block of a
// task in its own slice, frees across tasks, slices reused by the next task, running out of
// slices, bad arguments, plain-thread joiners, tasks created from a rank-like ULT, and tasks
// under MPC_ALLOCATOR=system.
//
// Each test runs in its own process under ctest; the fixture stops the runtime that the first
// MPC_Task_create() started, so that the binary also runs as a whole.
#include <gtest/gtest.h>
#include <mpc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "allocator/heap.hpp"
#include "allocator/malloc.hpp"
#include "allocator/slice.hpp"
#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"
#include "sched_test_util.hpp"

namespace {

using namespace mpc;
using namespace mpc::test;
using namespace std::chrono_literals;

/// The runtime is started by the first MPC_Task_create() of a test (with MPC_VPS VPs when set)
/// and stopped here; the calling thread is then the primary ULT.
class TaskApi : public ::testing::Test {
protected:
    void TearDown() override {
        if (sched::initialized()) {
            status st = sched::finalize();
            EXPECT_TRUE(st.ok()) << "finalize: " << st;
        }
    }
};

/// Defeats the compiler's knowledge of malloc (a block it cannot see used may be elided).
void* escape(void* p) {
    asm volatile("" : "+r"(p)::"memory");
    return p;
}

/// Where a block of the calling task lies: the thread slot of its slice, or a reason.
struct where {
    int slot = -1;
    std::string problem;  ///< empty when the block is in the caller's task slice
};

/// Checks that p lies in the calling task's own slice (when libmpc's allocator is active: else
/// the system's heap serves and there is no slice to check).
where locate(const void* p) {
    where w;
    if (!alloc::interposing()) {
        return w;
    }
    alloc::heap* h = alloc::task_heap();
    if (h == nullptr) {
        w.problem = "the task runs without a task heap";
        return w;
    }
    const alloc::slice& s = h->owner_slice();
    auto a = reinterpret_cast<std::uintptr_t>(p);
    if (a < s.lo || a >= s.hi) {
        w.problem = "block outside the task's slice";
    } else if (alloc::heap::of(p) != h) {
        w.problem = "block of another heap";
    } else if (MPC_Allocator_slice_of(p) != -1) {
        w.problem = "block in a rank's slice";
    } else if ((w.slot = alloc::thread_slot_of(p)) < 0 || w.slot != alloc::thread_slot_of(&s)) {
        w.problem = "block outside the thread slices";
    }
    return w;
}

/// Yields until cond() or a generous deadline (then false: the test fails, it never hangs).
template <class Cond>
bool yield_until(Cond cond) {
    give_up_after limit(30s);
    while (!cond()) {
        if (limit.expired()) {
            return false;
        }
        MPC_Yield();
    }
    return true;
}

// ---- arguments and start-up ----------------------------------------------------------------

void* plus_one(void* p) { return static_cast<char*>(p) + 1; }

TEST_F(TaskApi, BadArgumentsAreRefusedWithoutStartingTheRuntime) {
    MPC_Task t = reinterpret_cast<MPC_Task>(std::uintptr_t{0x1234});
    EXPECT_EQ(MPC_Task_create(nullptr, plus_one, nullptr), MPC_ERR_ARG);
    EXPECT_EQ(MPC_Task_create(&t, nullptr, nullptr), MPC_ERR_ARG);
    EXPECT_EQ(t, reinterpret_cast<MPC_Task>(std::uintptr_t{0x1234})) << "*task set on failure";
    EXPECT_EQ(MPC_Task_join(nullptr, nullptr), MPC_ERR_ARG);
    alignas(64) char fake[256] = {};
    EXPECT_EQ(MPC_Task_join(reinterpret_cast<MPC_Task>(fake), nullptr), MPC_ERR_ARG) << "not a task";
    EXPECT_EQ(MPC_Vp_count(), 0) << "a refused call must not start the runtime";
}

TEST_F(TaskApi, FirstCreateStartsTheRuntimeWithTheConfiguredVps) {
    env_guard vps("MPC_VPS", "3");
    ASSERT_FALSE(sched::initialized());
    char c = 0;
    MPC_Task t = nullptr;
    ASSERT_EQ(MPC_Task_create(&t, plus_one, &c), MPC_SUCCESS);
    EXPECT_EQ(MPC_Vp_count(), 3);
    EXPECT_EQ(MPC_Vp_self(), 0) << "the caller becomes VP 0";
    void* r = nullptr;
    ASSERT_EQ(MPC_Task_join(t, &r), MPC_SUCCESS);
    EXPECT_EQ(r, &c + 1);
}

TEST_F(TaskApi, JoinErrors) {
    char c = 0;
    MPC_Task t = nullptr;
    ASSERT_EQ(MPC_Task_create(&t, plus_one, &c), MPC_SUCCESS);
    EXPECT_EQ(MPC_Task_join(reinterpret_cast<MPC_Task>(reinterpret_cast<char*>(t) + 8), nullptr), MPC_ERR_ARG)
        << "inside a record";
    ASSERT_EQ(MPC_Task_join(t, nullptr), MPC_SUCCESS) << "result may be NULL";
    void* r = &c;
    EXPECT_EQ(MPC_Task_join(t, &r), MPC_ERR_ARG) << "joined twice";
    EXPECT_EQ(r, &c) << "*result set on failure";

    // A task that joins itself.
    struct self_join {
        std::atomic<MPC_Task> handle{nullptr};
        int rc = -1;
    } s;
    MPC_Task u = nullptr;
    ASSERT_EQ(MPC_Task_create(
                  &u,
                  [](void* p) -> void* {
                      auto* sj = static_cast<self_join*>(p);
                      if (yield_until([sj] { return sj->handle.load() != nullptr; })) {
                          sj->rc = MPC_Task_join(sj->handle.load(), nullptr);
                      }
                      return nullptr;
                  },
                  &s),
              MPC_SUCCESS);
    s.handle.store(u);
    ASSERT_EQ(MPC_Task_join(u, nullptr), MPC_SUCCESS) << "a refused self-join leaves the task joinable";
    EXPECT_EQ(s.rc, MPC_ERR_ARG) << "a task joined itself";
}

// ---- many tasks, their heaps ---------------------------------------------------------------

struct many_shared {
    int n = 0;
    std::atomic<int> arrived{0};
    std::vector<int> slot;  // per task
    std::vector<std::string> problem;
};

struct many_arg {
    many_shared* sh;
    int index;
};

/// Allocates in every way, checks that each block is in the task's slice, waits until every
/// task has done so (all alive at once), frees, and returns index * 3.
void* many_body(void* p) {
    auto* a = static_cast<many_arg*>(p);
    many_shared& sh = *a->sh;
    std::vector<void*> blocks;  // (its buffer is a block of this task too)
    blocks.push_back(std::malloc(24));
    blocks.push_back(std::calloc(100, 8));
    blocks.push_back(std::malloc(200 * 1024));  // a large block: a run of spans
    blocks.push_back(std::realloc(std::malloc(16), 5000));
    void* al = nullptr;
    if (posix_memalign(&al, 4096, 3000) == 0) {
        blocks.push_back(al);
    }
    auto* obj = new std::uint64_t[40];
    std::string problem;
    int slot = -1;
    for (void* b : blocks) {
        if (b == nullptr) {
            problem = "allocation failed";
            continue;
        }
        where w = locate(escape(b));
        if (!w.problem.empty()) {
            problem = w.problem;
        }
        slot = w.slot;
    }
    if (where w = locate(escape(obj)); !w.problem.empty()) {
        problem = "new: " + w.problem;
    }
    if (where w = locate(blocks.data()); !w.problem.empty()) {
        problem = "std::vector: " + w.problem;
    }
    sh.slot[static_cast<std::size_t>(a->index)] = slot;
    sh.problem[static_cast<std::size_t>(a->index)] = problem;
    sh.arrived.fetch_add(1);
    if (!yield_until([&sh] { return sh.arrived.load() == sh.n; })) {
        sh.problem[static_cast<std::size_t>(a->index)] = "the other tasks did not arrive";
    }
    for (void* b : blocks) {
        std::free(b);
    }
    delete[] obj;
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(a->index) * 3);
}

TEST_F(TaskApi, MoreTasksThanVpsReturnTheirResultsEachInItsOwnSlice) {
    env_guard vps("MPC_VPS", "2");
    many_shared sh;
    sh.n = 4 * 2 + 3;
    sh.slot.assign(static_cast<std::size_t>(sh.n), -1);
    sh.problem.resize(static_cast<std::size_t>(sh.n));
    std::vector<many_arg> args(static_cast<std::size_t>(sh.n));
    std::vector<MPC_Task> tasks(static_cast<std::size_t>(sh.n), nullptr);
    for (int i = 0; i < sh.n; ++i) {
        args[static_cast<std::size_t>(i)] = {&sh, i};
        ASSERT_EQ(MPC_Task_create(&tasks[static_cast<std::size_t>(i)], many_body, &args[static_cast<std::size_t>(i)]),
                  MPC_SUCCESS)
            << "task " << i;
    }
    EXPECT_EQ(MPC_Vp_count(), 2);
    for (int i = 0; i < sh.n; ++i) {
        void* r = nullptr;
        ASSERT_EQ(MPC_Task_join(tasks[static_cast<std::size_t>(i)], &r), MPC_SUCCESS) << "task " << i;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r), static_cast<std::uintptr_t>(i) * 3) << "task " << i;
    }
    std::set<int> slots;
    for (int i = 0; i < sh.n; ++i) {
        EXPECT_EQ(sh.problem[static_cast<std::size_t>(i)], "") << "task " << i;
        slots.insert(sh.slot[static_cast<std::size_t>(i)]);
    }
    if (alloc::interposing()) {
        EXPECT_EQ(slots.size(), static_cast<std::size_t>(sh.n)) << "tasks alive at once share a slice";
    }
}

void* nested_body(void* p) {
    MPC_Task inner = nullptr;
    int* depth = static_cast<int*>(p);
    if (*depth == 0) {
        return reinterpret_cast<void*>(std::uintptr_t{1});
    }
    int next = *depth - 1;
    if (MPC_Task_create(&inner, nested_body, &next) != MPC_SUCCESS) {
        return nullptr;
    }
    void* r = nullptr;
    if (MPC_Task_join(inner, &r) != MPC_SUCCESS || r == nullptr) {
        return nullptr;
    }
    return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(r) + 1);
}

TEST_F(TaskApi, TasksCreateAndJoinTasks) {
    int depth = 20;
    MPC_Task t = nullptr;
    ASSERT_EQ(MPC_Task_create(&t, nested_body, &depth), MPC_SUCCESS);
    void* r = nullptr;
    ASSERT_EQ(MPC_Task_join(t, &r), MPC_SUCCESS);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r), 21u);
}

// ---- frees across tasks --------------------------------------------------------------------

constexpr int exchange_blocks = 600;

std::size_t exchange_size(int i) {
    return i % 50 == 0 ? std::size_t{100} * 1024 + static_cast<std::size_t>(i) : 16 + static_cast<std::size_t>(i % 300) * 8;
}

struct exchange {
    void* block[2][exchange_blocks] = {};  // [task][i]: what task made
    std::atomic<int> made{0};              // tasks that filled their row
    std::atomic<int> freed{0};             // tasks that freed the other's row
    std::string problem[2];
};

struct exchange_arg {
    exchange* ex;
    int me;
};

/// Fills its row, waits for the other task's row, checks and frees it (remote frees into a
/// live heap), waits until its own row was freed, then allocates again (what the other freed is
/// reused) and leaves those blocks for main to free after both tasks ended.
void* exchange_body(void* p) {
    auto* a = static_cast<exchange_arg*>(p);
    exchange& ex = *a->ex;
    const int other = 1 - a->me;
    auto fill = [&](int i) {
        std::size_t n = exchange_size(i);
        auto* b = static_cast<unsigned char*>(std::malloc(n));
        if (b == nullptr) {
            ex.problem[a->me] = "malloc failed";
            return;
        }
        if (where w = locate(b); !w.problem.empty()) {
            ex.problem[a->me] = w.problem;
        }
        std::memset(b, a->me * 16 + (i & 15), n);
        ex.block[a->me][i] = b;
    };
    for (int i = 0; i < exchange_blocks; ++i) {
        fill(i);
    }
    ex.made.fetch_add(1);
    if (!yield_until([&] { return ex.made.load() == 2; })) {
        ex.problem[a->me] = "the other task never filled its row";
        return nullptr;
    }
    for (int i = 0; i < exchange_blocks; ++i) {
        auto* b = static_cast<unsigned char*>(ex.block[other][i]);
        std::size_t n = exchange_size(i);
        if (b == nullptr || b[0] != other * 16 + (i & 15) || b[n - 1] != other * 16 + (i & 15)) {
            ex.problem[a->me] = "a block of the other task changed";
        }
        std::free(b);
        ex.block[other][i] = nullptr;
    }
    ex.freed.fetch_add(1);
    if (!yield_until([&] { return ex.freed.load() == 2; })) {
        ex.problem[a->me] = "the other task never freed my row";
        return nullptr;
    }
    for (int i = 0; i < exchange_blocks; ++i) {
        fill(i);
    }
    return nullptr;
}

TEST_F(TaskApi, TasksFreeEachOthersBlocks) {
    env_guard vps("MPC_VPS", "2");
    auto ex = std::make_unique<exchange>();
    exchange_arg args[2] = {{ex.get(), 0}, {ex.get(), 1}};
    MPC_Task t[2] = {};
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(MPC_Task_create(&t[i], exchange_body, &args[i]), MPC_SUCCESS);
    }
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(MPC_Task_join(t[i], nullptr), MPC_SUCCESS);
        EXPECT_EQ(ex->problem[i], "") << "task " << i;
    }
    // The tasks have ended: their slices wait for the next task, their blocks are still live.
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < exchange_blocks; ++i) {
            auto* b = static_cast<unsigned char*>(ex->block[k][i]);
            ASSERT_NE(b, nullptr);
            EXPECT_EQ(b[exchange_size(i) - 1], k * 16 + (i & 15)) << "block " << i << " of task " << k;
            std::free(b);
        }
    }
}

// ---- slices reused, and running out ----------------------------------------------------------

void* churn_body(void* p) {
    auto* leak = static_cast<void**>(p);
    void* big = std::malloc(std::size_t{1} << 20);
    void* small[16];
    for (void*& s : small) {
        s = std::malloc(48);
    }
    int slot = -1;
    if (big != nullptr) {
        where w = locate(escape(big));
        slot = w.problem.empty() ? w.slot : -2;
        std::memset(big, 1, 4096);
    }
    for (int i = 0; i < 15; ++i) {
        std::free(small[i]);
    }
    std::free(big);
    *leak = small[15];  // left live in the slice: the next task adopts it, main frees it
    return reinterpret_cast<void*>(static_cast<std::intptr_t>(slot + 10));
}

TEST_F(TaskApi, ThousandSequentialTasksReuseSlices) {
    std::vector<void*> leaked(1000, nullptr);
    std::set<int> slots;
    for (int i = 0; i < 1000; ++i) {
        MPC_Task t = nullptr;
        ASSERT_EQ(MPC_Task_create(&t, churn_body, &leaked[static_cast<std::size_t>(i)]), MPC_SUCCESS) << "task " << i;
        void* r = nullptr;
        ASSERT_EQ(MPC_Task_join(t, &r), MPC_SUCCESS) << "task " << i;
        int slot = static_cast<int>(reinterpret_cast<std::intptr_t>(r)) - 10;
        ASSERT_NE(slot, -2) << "task " << i << ": a block outside its slice";
        slots.insert(slot);
    }
    if (alloc::interposing()) {
        EXPECT_LE(slots.size(), 4u) << "ended tasks' slices are not reused";
        EXPECT_EQ(slots.count(-1), 0u);
    }
    for (void* p : leaked) {
        std::free(p);
    }
}

TEST_F(TaskApi, RunningOutOfSlicesIsAnErrorNotACrash) {
    if (!alloc::interposing()) {
        GTEST_SKIP() << "the system allocator serves tasks: no slices to run out of";
    }
    env_guard small_stacks("MPC_STACK_SIZE", "64k");
    sched::semaphore gate(0);
    std::vector<MPC_Task> tasks;
    int rc = MPC_SUCCESS;
    for (int i = 0; i < 2 * alloc::detail::thread_regions; ++i) {
        MPC_Task t = reinterpret_cast<MPC_Task>(std::uintptr_t{0x99});
        rc = MPC_Task_create(
            &t,
            [](void* g) -> void* {
                static_cast<sched::semaphore*>(g)->acquire();
                return g;
            },
            &gate);
        if (rc != MPC_SUCCESS) {
            EXPECT_EQ(t, reinterpret_cast<MPC_Task>(std::uintptr_t{0x99})) << "*task set on failure";
            break;
        }
        tasks.push_back(t);
    }
    EXPECT_EQ(rc, MPC_ERR_NO_MEM);
    EXPECT_GT(tasks.size(), 100u);
    EXPECT_LE(tasks.size(), static_cast<std::size_t>(alloc::detail::thread_regions));
    gate.release(tasks.size());
    for (MPC_Task t : tasks) {
        void* r = nullptr;
        ASSERT_EQ(MPC_Task_join(t, &r), MPC_SUCCESS);
        EXPECT_EQ(r, &gate);
    }
    MPC_Task t = nullptr;
    EXPECT_EQ(MPC_Task_create(&t, plus_one, nullptr), MPC_SUCCESS) << "slices came back";
    EXPECT_EQ(MPC_Task_join(t, nullptr), MPC_SUCCESS);
}

// ---- callers other than the primary ULT ----------------------------------------------------

void* slow_body(void* p) {
    sched::sleep_for(20ms);  // the plain joiner below sleeps on the futex meanwhile
    return p;
}

TEST_F(TaskApi, PlainThreadsCreateAndJoinOnceTheRuntimeRuns) {
    char c = 0;
    MPC_Task first = nullptr;
    ASSERT_EQ(MPC_Task_create(&first, slow_body, &c), MPC_SUCCESS);  // starts the runtime
    int rc_join_first = -1;
    void* r_first = nullptr;
    int rc_create = -1;
    int rc_join = -1;
    void* r = nullptr;
    std::atomic<bool> finished{false};
    std::thread plain([&] {
        rc_join_first = MPC_Task_join(first, &r_first);  // a task main created
        MPC_Task mine = nullptr;
        rc_create = MPC_Task_create(&mine, slow_body, &c);
        if (rc_create == MPC_SUCCESS) {
            rc_join = MPC_Task_join(mine, &r);
        }
        finished.store(true);
    });
    // This thread is VP 0's primary ULT: blocking in the kernel (std::thread::join) would stop
    // VP 0 and the tasks placed there. Wait as a ULT first.
    give_up_after limit(30s);
    while (!finished.load() && !limit.expired()) {
        sched::sleep_for(1ms);
    }
    EXPECT_TRUE(finished.load()) << "the plain thread's tasks did not end";
    plain.join();
    EXPECT_EQ(rc_join_first, MPC_SUCCESS);
    EXPECT_EQ(r_first, &c);
    EXPECT_EQ(rc_create, MPC_SUCCESS);
    EXPECT_EQ(rc_join, MPC_SUCCESS);
    EXPECT_EQ(r, &c);
    EXPECT_EQ(MPC_Task_join(first, nullptr), MPC_ERR_ARG) << "joined by the thread already";
}

TEST_F(TaskApi, FromARankTheTasksHeapIsNotTheRanks) {
    if (!alloc::interposing()) {
        GTEST_SKIP() << "the system allocator serves tasks: no slices";
    }
    // What mpc_run does for rank 0: a slice, its heap, and the rank's ULT on that heap.
    constexpr std::size_t MiB = std::size_t{1} << 20;
    ASSERT_TRUE(alloc::reserve_space(1, {alloc::default_space_base() + (std::uintptr_t{8} << 30), 256 * MiB}));
    alloc::slice* s = alloc::slice_of(0);
    ASSERT_NE(s, nullptr);
    alloc::heap* rank_heap = alloc::heap::create_in(*s);
    ASSERT_NE(rank_heap, nullptr);
    struct result_t {
        int rank_block = -99;
        int task_block = -99;
        std::string task_problem;
        int rc_create = -1;
        int rc_join = -1;
    } res;
    sched::attr a;
    a.heap = rank_heap;
    a.owner = 0;
    a.name = "rank 0";
    ASSERT_EQ(MPC_Vp_count(), 0);
    // The runtime must run before a ULT exists: the first task (created here by the primary
    // ULT) starts it.
    MPC_Task warm = nullptr;
    ASSERT_EQ(MPC_Task_create(&warm, plus_one, nullptr), MPC_SUCCESS);
    ASSERT_EQ(MPC_Task_join(warm, nullptr), MPC_SUCCESS);
    sched::ult* rank = spawn_or_fail(
        [&res]() noexcept {
            void* mine = std::malloc(100);
            res.rank_block = MPC_Allocator_slice_of(escape(mine));
            std::free(mine);
            MPC_Task t = nullptr;
            res.rc_create = MPC_Task_create(
                &t,
                [](void* p) -> void* {
                    auto* rs = static_cast<result_t*>(p);
                    void* b = std::malloc(100);
                    rs->task_block = MPC_Allocator_slice_of(escape(b));
                    rs->task_problem = locate(b).problem;
                    std::free(b);
                    return nullptr;
                },
                &res);
            if (res.rc_create == MPC_SUCCESS) {
                res.rc_join = MPC_Task_join(t, nullptr);
            }
        },
        a);
    join_or_fail(rank);
    EXPECT_EQ(res.rank_block, 0) << "the rank's own blocks";
    EXPECT_EQ(res.rc_create, MPC_SUCCESS);
    EXPECT_EQ(res.rc_join, MPC_SUCCESS);
    EXPECT_EQ(res.task_block, -1) << "a task's block in a rank's slice";
    EXPECT_EQ(res.task_problem, "");
    status st = sched::finalize();
    EXPECT_TRUE(st.ok()) << st;
    alloc::release_space();
}

// ---- MPC_ALLOCATOR=system ------------------------------------------------------------------

/// Run by SystemAllocatorStillRunsTasks in a child process with MPC_ALLOCATOR=system, and
/// registered only there (TASK_API_TEST_CHILD set), so that the normal run neither lists nor
/// skips it.
class ChildUnderSystemAllocator : public TaskApi {
public:
    void TestBody() override {
        EXPECT_EQ(MPC_Allocator_active(), 0);
        struct out_t {
            bool in_thread_slice = true;
            bool task_heap = true;
        } out;
        std::vector<MPC_Task> t(5, nullptr);
        for (MPC_Task& x : t) {
            ASSERT_EQ(MPC_Task_create(
                          &x,
                          [](void* p) -> void* {
                              auto* o = static_cast<out_t*>(p);
                              void* b = std::malloc(1000);
                              o->in_thread_slice = alloc::thread_slot_of(escape(b)) >= 0;
                              o->task_heap = alloc::task_heap() != nullptr;
                              std::free(b);
                              return p;
                          },
                          &out),
                      MPC_SUCCESS);
        }
        for (MPC_Task x : t) {
            void* r = nullptr;
            ASSERT_EQ(MPC_Task_join(x, &r), MPC_SUCCESS);
            EXPECT_EQ(r, &out);
        }
        EXPECT_FALSE(out.in_thread_slice) << "a block of libmpc's allocator under MPC_ALLOCATOR=system";
        EXPECT_FALSE(out.task_heap);
    }
};

[[maybe_unused]] const bool child_registered =
    std::getenv("TASK_API_TEST_CHILD") != nullptr &&
    (testing::RegisterTest("TaskApi", "ChildUnderSystemAllocator", nullptr, nullptr, __FILE__, __LINE__,
                           []() -> TaskApi* { return new ChildUnderSystemAllocator; }),
     true);

TEST_F(TaskApi, SystemAllocatorStillRunsTasks) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TASK_API_TEST_CHILD", "1", 1);
        setenv("MPC_ALLOCATOR", "system", 1);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execl("/proc/self/exe", "task_api_test", "--gtest_filter=TaskApi.ChildUnderSystemAllocator", nullptr);
        std::_Exit(127);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t r; (r = read(fds[0], buf, sizeof buf)) > 0;) {
        out.append(buf, static_cast<std::size_t>(r));
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

}  // namespace
