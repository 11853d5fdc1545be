/// \file
/// MPC_Task_create / MPC_Task_join (mpc.h): user-level threads with a heap of their own.
///
/// A task is a ULT whose spawn attribute `heap` is a heap in a thread slice of the allocator
/// (allocator/slice.hpp claim_thread_slice(), the same slices plain threads get): the scheduler
/// hands that heap to the allocator whenever the ULT is switched in, so everything fn allocates
/// comes from the slice. When fn returns, the task drops the heap (its last steps, such as the
/// ULT-local destructors, use its VP thread's heap) and releases the slice: the next task or
/// thread that claims a slice adopts it, heap and live blocks included, as a thread slice is
/// adopted when its thread ends. The stack comes from the scheduler like any ULT's.
///
/// Handles are records in chunks mapped once and never unmapped (as MPI requests are): a join
/// can check that a handle is a record, and that the record is live, without reading freed
/// memory. Freed records are reused first-in first-out, so a second join of a handle is found
/// until every other free record has been reused.
///
/// Joining: a ULT (a rank, a task, the thread that started the runtime) joins through
/// sched::join() and parks; a plain thread waits on a futex that the task's end wakes, then
/// detaches the ULT (its stack goes back once it has switched out for the last time).

#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdint>

#include "allocator/heap.hpp"
#include "allocator/malloc.hpp"
#include "allocator/slice.hpp"
#include "include/mpc.h"
#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "scheduler/sched.hpp"

/// The record behind an MPC_Task handle (mpc.h), one cache line.
struct alignas(64) MPC_Task_s {
    std::atomic<std::uint32_t> state;  ///< rec_free, rec_live, rec_joining
    std::atomic<std::uint32_t> done;   ///< done_running, done_yes, done_waited (futex word)
    void* (*fn)(void*);
    void* arg;
    void* result;
    mpc::sched::ult* ult;
    mpc::alloc::slice* slice;  ///< the task's heap slice; nullptr with the system allocator
    MPC_Task_s* next_free;
};
static_assert(sizeof(MPC_Task_s) == 64);

namespace mpc::sched {
namespace {

enum : std::uint32_t { rec_free = 0, rec_live = 1, rec_joining = 2 };
enum : std::uint32_t { done_running = 0, done_yes = 1, done_waited = 2 };

// ---- the record table ----------------------------------------------------------------------

constexpr std::size_t chunk_records = 1024;  // 64 KiB per chunk
constexpr int max_chunks = 4096;             // 4 Mi tasks alive at once

std::atomic<MPC_Task_s*> g_chunks[max_chunks];
std::atomic<int> g_nchunks{0};
spinlock g_records_lock;
MPC_Task_s* g_free_head = nullptr;  // FIFO of free records, under g_records_lock
MPC_Task_s* g_free_tail = nullptr;

void push_free_locked(MPC_Task_s* t) noexcept {
    t->next_free = nullptr;
    (g_free_tail != nullptr ? g_free_tail->next_free : g_free_head) = t;
    g_free_tail = t;
}

/// A free record, or nullptr when no chunk can be mapped.
MPC_Task_s* take_record() noexcept {
    spin_guard g(g_records_lock);
    if (g_free_head == nullptr) {
        int n = g_nchunks.load(std::memory_order_relaxed);
        if (n == max_chunks) {
            MPC_LOG(warn, sched, "MPC_Task_create: %zu tasks exist already", chunk_records * max_chunks);
            return nullptr;
        }
        // Outside every heap: records are runtime state, not any task's memory.
        void* p = ::mmap(nullptr, chunk_records * sizeof(MPC_Task_s), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            MPC_LOG(warn, sched, "MPC_Task_create: cannot map task records: %s", std::strerror(errno));
            return nullptr;
        }
        auto* chunk = static_cast<MPC_Task_s*>(p);  // zero-filled: every record rec_free
        for (std::size_t i = 0; i < chunk_records; ++i) {
            push_free_locked(&chunk[i]);
        }
        g_chunks[n].store(chunk, std::memory_order_relaxed);
        g_nchunks.store(n + 1, std::memory_order_release);
    }
    MPC_Task_s* t = g_free_head;
    g_free_head = t->next_free;
    if (g_free_head == nullptr) {
        g_free_tail = nullptr;
    }
    return t;
}

void give_record(MPC_Task_s* t) noexcept {
    t->state.store(rec_free, std::memory_order_release);
    spin_guard g(g_records_lock);
    push_free_locked(t);
}

/// True when t is the start of a record of the table (live or not).
bool is_record(const MPC_Task_s* t) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(t);
    int n = g_nchunks.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
        auto lo = reinterpret_cast<std::uintptr_t>(g_chunks[i].load(std::memory_order_relaxed));
        if (a >= lo && a < lo + chunk_records * sizeof(MPC_Task_s)) {
            return (a - lo) % sizeof(MPC_Task_s) == 0;
        }
    }
    return false;
}

// ---- futex (plain-thread joiners) ----------------------------------------------------------

void futex_wait(std::atomic<std::uint32_t>* w, std::uint32_t v) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), FUTEX_WAIT_PRIVATE, v, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* w) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

/// Blocks a plain thread until the task's fn has returned.
void wait_done(MPC_Task_s* t) noexcept {
    for (;;) {
        std::uint32_t v = t->done.load(std::memory_order_acquire);
        if (v == done_yes) {
            return;
        }
        if (v == done_running &&
            !t->done.compare_exchange_strong(v, done_waited, std::memory_order_acq_rel)) {
            continue;  // it ended meanwhile (or another plain thread announced itself)
        }
        futex_wait(&t->done, done_waited);
    }
}

// ---- the task's ULT ------------------------------------------------------------------------

void task_main(void* p) noexcept {
    auto* t = static_cast<MPC_Task_s*>(p);
    void* r = nullptr;
    try {
        r = t->fn(t->arg);
    } catch (...) {  // a C++ fn: end the process with one line, as for any ULT
        detail::report_uncaught_exception();
    }
    t->result = r;
    if (alloc::slice* s = t->slice; s != nullptr) {
        // Drop the heap before giving the slice away: another task may adopt it at once.
        set_heap(self(), nullptr);
        alloc::set_task_heap(nullptr);
        alloc::release_thread_slice(s);
    }
    // Last access to the record unless a plain thread sleeps on it (a futex wake on a record
    // reused meanwhile is a harmless spurious wake-up).
    if (t->done.exchange(done_yes, std::memory_order_acq_rel) == done_waited) {
        futex_wake(&t->done);
    }
}

// ---- starting the runtime ------------------------------------------------------------------

pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;

int ensure_running() noexcept {
    if (initialized()) {
        return MPC_SUCCESS;
    }
    pthread_mutex_lock(&g_init_lock);
    status st;
    if (!initialized()) {
        st = init();
        if (st.ok()) {
            MPC_LOG(info, sched, "MPC_Task_create started the runtime (%d VPs)", nr_vps());
        } else {
            MPC_LOG(error, sched, "MPC_Task_create: cannot start the runtime: %s", st.reason());
        }
    }
    pthread_mutex_unlock(&g_init_lock);
    if (st.ok()) {
        return MPC_SUCCESS;
    }
    return st.code() == errc::no_memory ? MPC_ERR_NO_MEM : MPC_ERR_OTHER;
}

/// The heap of a new task in a thread slice of its own (*s receives the slice); nullptr and
/// *s null when the allocator is off; nullptr and a logged reason when no slice is left.
bool task_heap_for(alloc::slice** s, alloc::heap** h) noexcept {
    *s = nullptr;
    *h = nullptr;
    if (!alloc::interposing()) {
        return true;  // MPC_ALLOCATOR=system, sanitizers: the system's heap serves the task
    }
    alloc::slice* sl = alloc::claim_thread_slice();
    if (sl == nullptr) {
        MPC_LOG(warn, sched, "MPC_Task_create: no address slice left for a task heap (%d slices, shared with plain "
                             "threads)", alloc::detail::thread_regions);
        return false;
    }
    alloc::heap* hp = alloc::heap::create_in(*sl);
    if (hp == nullptr) {
        MPC_LOG(warn, sched, "MPC_Task_create: cannot create a heap in a task's slice");
        alloc::release_thread_slice(sl);
        return false;
    }
    *s = sl;
    *h = hp;
    return true;
}

}  // namespace
}  // namespace mpc::sched

// ---- C API of mpc.h --------------------------------------------------------------------------

extern "C" {

int MPC_Task_create(MPC_Task* task, void* (*fn)(void*), void* arg) {
    using namespace mpc::sched;
    if (task == nullptr || fn == nullptr) {
        return MPC_ERR_ARG;
    }
    if (int rc = ensure_running(); rc != MPC_SUCCESS) {
        return rc;
    }
    MPC_Task_s* t = take_record();
    if (t == nullptr) {
        return MPC_ERR_NO_MEM;
    }
    mpc::alloc::slice* s = nullptr;
    mpc::alloc::heap* h = nullptr;
    if (!task_heap_for(&s, &h)) {
        give_record(t);
        return MPC_ERR_NO_MEM;
    }
    t->fn = fn;
    t->arg = arg;
    t->result = nullptr;
    t->slice = s;
    t->ult = nullptr;
    t->done.store(done_running, std::memory_order_relaxed);
    t->state.store(rec_live, std::memory_order_relaxed);  // published by spawn and by *task
    attr a;
    a.heap = h;
    a.name = "task";
    mpc::result<ult*> u = spawn(&task_main, t, a);
    if (!u) {
        MPC_LOG(warn, sched, "MPC_Task_create: cannot create the task's ULT: %s", u.error().reason());
        if (s != nullptr) {
            mpc::alloc::release_thread_slice(s);
        }
        give_record(t);
        return u.error().code() == mpc::errc::no_memory ? MPC_ERR_NO_MEM : MPC_ERR_OTHER;
    }
    t->ult = *u;  // task_main never reads it; joiners get t through *task, after this
    *task = t;
    return MPC_SUCCESS;
}

int MPC_Task_join(MPC_Task task, void** result) {
    using namespace mpc::sched;
    if (task == nullptr || !is_record(task)) {
        return MPC_ERR_ARG;
    }
    std::uint32_t expect = rec_live;
    if (!task->state.compare_exchange_strong(expect, rec_joining, std::memory_order_acq_rel)) {
        return MPC_ERR_ARG;  // free (joined already) or being joined
    }
    if (!initialized()) {  // finalize() ran: the task has ended, but its ULT cannot be freed now
        task->state.store(rec_live, std::memory_order_release);
        return MPC_ERR_NOT_INIT;
    }
    ult* me = self();
    if (me != nullptr) {
        if (me == task->ult) {
            task->state.store(rec_live, std::memory_order_release);
            return MPC_ERR_ARG;
        }
        if (mpc::status st = join(task->ult); !st) {
            MPC_LOG(warn, sched, "MPC_Task_join: %s", st.reason());
            task->state.store(rec_live, std::memory_order_release);
            return MPC_ERR_ARG;
        }
    } else {
        wait_done(task);
        if (mpc::status st = detach(task->ult); !st) {  // frees it now or when it has switched out
            MPC_LOG(warn, sched, "MPC_Task_join: %s", st.reason());
        }
    }
    if (result != nullptr) {
        *result = task->result;
    }
    give_record(task);
    return MPC_SUCCESS;
}

}  // extern "C"
