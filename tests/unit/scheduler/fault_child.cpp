// Helper of fault_test: runs one faulting scenario, chosen by argv[1], inside the runtime. The
// runtime is expected to report the fault on stderr and end the process with a non-zero status;
// fault_test checks both. Mode "ok" is the control: it must exit 0 without a fatal message.
#include <alloca.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "scheduler/sched.hpp"
#include "scheduler/stack.hpp"
#include "scheduler/sync.hpp"
#include "lib/spinlock.hpp"

namespace {

namespace sched = mpc::sched;

int fail(const char* what, const mpc::status& st) {
    std::fprintf(stdout, "fault_child: %s failed: %s\n", what, st.reason());
    return 100;
}

int start(int vps) {
    sched::options o;
    o.nr_vps = vps;
    mpc::status st = sched::init(o);
    if (!st.ok()) {
        return fail("init", st);
    }
    return 0;
}

/// Spawns f as a named ULT on `vp` and joins it; returns an exit code for main.
template <class F>
int run_ult(const char* name, int vp, std::size_t stack, F&& f) {
    sched::attr a;
    a.name = name;
    a.vp = vp;
    a.stack_size = stack;
    auto r = sched::spawn(std::forward<F>(f), a);
    if (!r.ok()) {
        return fail("spawn", r.error());
    }
    mpc::status st = sched::join(*r);
    if (!st.ok()) {
        return fail("join", st);
    }
    st = sched::finalize();
    if (!st.ok()) {
        return fail("finalize", st);
    }
    std::fprintf(stdout, "fault_child: finished normally\n");
    return 0;
}

// ---- (a) unbounded recursion into the guard page

[[gnu::noinline]] int recurse(int depth) {
    volatile char frame[512];
    frame[0] = static_cast<char>(depth);
    if (depth > 100000000) {  // never true in practice; keeps the compiler from warning
        return frame[0];
    }
    return recurse(depth + 1) + frame[0];
}

// ---- (c) guard-less stacks: an overflow that only the canary can see

/// Records every stack it hands out, so that a ULT can find the bounds of its own stack.
class recording_allocator final : public sched::stack_allocator {
public:
    mpc::result<sched::stack_region> allocate(std::size_t size, int owner) noexcept override {
        auto r = sched::default_stack_allocator().allocate(size, owner);
        if (r.ok()) {
            int i = count_.fetch_add(1);
            if (i < 64) {
                regions_[i] = *r;
            }
        }
        return r;
    }
    void release(const sched::stack_region& s) noexcept override { sched::default_stack_allocator().release(s); }
    const char* name() const noexcept override { return "recording"; }
    const sched::stack_region* find(const void* p) const noexcept {
        auto a = reinterpret_cast<std::uintptr_t>(p);
        int n = count_.load() < 64 ? count_.load() : 64;
        for (int i = 0; i < n; ++i) {
            auto lo = reinterpret_cast<std::uintptr_t>(regions_[i].lo);
            if (a >= lo && a < lo + regions_[i].size) {
                return &regions_[i];
            }
        }
        return nullptr;
    }

private:
    std::atomic<int> count_{0};
    sched::stack_region regions_[64];
};

recording_allocator g_recorder;

/// A frame that extends 64 bytes below the bottom of the stack and fills it, as a function
/// with a too-large local array would; then it returns normally.
[[gnu::noinline]] void overflow_frame(std::uintptr_t lo) {
    char here = 0;
    auto top = reinterpret_cast<std::uintptr_t>(&here);
    std::size_t n = static_cast<std::size_t>(top - lo) + 64;
    auto* big = static_cast<char*>(alloca(n));
    std::memset(big, 0x5a, n);
    asm volatile("" : : "r"(big) : "memory");
}

int canary_mode() {
    sched::set_guard_budget(0);  // every stack made from now on is guard-less (canary only)
    if (int rc = start(1); rc != 0) {
        return rc;
    }
    sched::set_stack_allocator(&g_recorder);
    // A first guard-less 64 KiB stack takes the lowest slot of a fresh chunk; the victim gets
    // one with a free slot below it, so the overflow tramples only unused memory.
    sched::semaphore hold(0);
    sched::attr da;
    da.stack_size = 64 * 1024;
    da.name = "placeholder";
    auto dummy = sched::spawn([&hold]() noexcept { hold.acquire(); }, da);
    if (!dummy.ok()) {
        return fail("spawn", dummy.error());
    }
    // A companion that keeps yielding, so that the victim's yield really switches.
    sched::attr ca;
    ca.name = "companion";
    auto companion = sched::spawn(
        []() noexcept {
            for (int i = 0; i < 1000; ++i) {
                sched::yield();
            }
        },
        ca);
    if (!companion.ok()) {
        return fail("spawn", companion.error());
    }
    sched::attr va;
    va.stack_size = 64 * 1024;
    va.name = "canary-victim";
    auto victim = sched::spawn(
        []() noexcept {
            char marker = 0;
            const sched::stack_region* r = g_recorder.find(&marker);
            if (r == nullptr || r->canary == nullptr) {
                std::fprintf(stdout, "fault_child: the victim's stack is not a guard-less one\n");
                return;
            }
            overflow_frame(reinterpret_cast<std::uintptr_t>(r->lo));
            sched::yield();  // the canary is checked when the ULT is switched out
            std::fprintf(stdout, "fault_child: survived the yield\n");
        },
        va);
    if (!victim.ok()) {
        return fail("spawn", victim.error());
    }
    (void)sched::join(*victim);
    (void)sched::join(*companion);
    hold.release();
    (void)sched::join(*dummy);
    sched::set_stack_allocator(nullptr);
    (void)sched::finalize();
    std::fprintf(stdout, "fault_child: finished normally\n");
    return 0;
}

// ---- (d) deadlock

int deadlock_mode() {
    if (int rc = start(2); rc != 0) {
        return rc;
    }
    sched::mutex m1;
    sched::mutex m2;
    sched::barrier both(2);
    sched::attr a;
    a.name = "locker-A";
    a.vp = 0;
    auto ra = sched::spawn(
        [&]() noexcept {
            m1.lock();
            both.arrive_and_wait();
            m2.lock();
        },
        a);
    a.name = "locker-B";
    a.vp = 1;
    auto rb = sched::spawn(
        [&]() noexcept {
            m2.lock();
            both.arrive_and_wait();
            m1.lock();
        },
        a);
    if (!ra.ok() || !rb.ok()) {
        return fail("spawn", ra.ok() ? rb.error() : ra.error());
    }
    // A third one parks on a bare wait_queue after saying why (set_wait_reason).
    mpc::spinlock lk;
    sched::wait_queue wq;
    a.name = "waiter-C";
    a.vp = 1;
    auto rc = sched::spawn(
        [&]() noexcept {
            lk.lock();
            sched::set_wait_reason("custom reason 42");
            wq.wait(lk);
        },
        a);
    if (!rc.ok()) {
        return fail("spawn", rc.error());
    }
    (void)sched::join(*ra);  // never returns: the runtime must report the deadlock
    (void)sched::join(*rb);
    std::fprintf(stdout, "fault_child: deadlock not detected\n");
    return 0;
}

// ---- misuse and life-cycle corners


/// The primary ULT moves to VP 1 and calls finalize() from there.
int finalize_moved_mode() {
    if (int rc = start(2); rc != 0) {
        return rc;
    }
    mpc::status st = sched::move_to(1);
    if (!st.ok()) {
        return fail("move_to", st);
    }
    st = sched::finalize();
    std::fprintf(stdout, "fault_child: finalize after move: %s\n", st.ok() ? "ok" : st.reason());
    if (sched::initialized()) {  // refused: go home and finish properly
        (void)sched::move_to(0);
        st = sched::finalize();
    }
    if (!st.ok()) {
        return fail("finalize", st);
    }
    std::fprintf(stdout, "fault_child: finished normally\n");
    return 0;
}

/// Blocking on a sched::mutex from a plain thread (not a ULT).
int lock_outside_ult_mode() {
    if (int rc = start(1); rc != 0) {
        return rc;
    }
    sched::mutex m;
    m.lock();  // held by the primary ULT
    std::thread t([&m] { m.lock(); });
    t.join();
    std::fprintf(stdout, "fault_child: the plain thread got the lock\n");
    return 0;
}

/// No deadlock may be reported while a ULT sleeps or polls, however long.
int no_false_deadlock_mode() {
    if (int rc = start(2); rc != 0) {
        return rc;
    }
    std::atomic<bool> flag{false};
    sched::attr a;
    a.name = "long-sleeper";
    a.vp = 1;
    auto sleeper = sched::spawn([]() noexcept { sched::sleep_for(std::chrono::milliseconds(2500)); }, a);
    a.name = "long-poller";
    a.vp = 0;
    auto poller = sched::spawn([&flag]() noexcept { sched::wait_until([&flag] { return flag.load(); }); }, a);
    if (!sleeper.ok() || !poller.ok()) {
        return fail("spawn", sleeper.ok() ? poller.error() : sleeper.error());
    }
    std::thread t([&flag] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        flag = true;
    });
    (void)sched::join(*sleeper);
    (void)sched::join(*poller);
    t.join();
    (void)sched::finalize();
    std::fprintf(stdout, "fault_child: finished normally\n");
    return 0;
}

/// The primary ULT alone blocks forever.
int deadlock_primary_mode() {
    if (int rc = start(2); rc != 0) {
        return rc;
    }
    sched::semaphore never(0);
    never.acquire();
    std::fprintf(stdout, "fault_child: deadlock not detected\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fault_child MODE (see main)\n");
        return 64;
    }
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    const char* mode = argv[1];
    if (std::strcmp(mode, "ok") == 0) {
        int rc = start(2);
        return rc != 0 ? rc : run_ult("fine", 1, 0, []() noexcept { sched::yield(); });
    }
    if (std::strcmp(mode, "overflow") == 0 || std::strcmp(mode, "overflow-vp1") == 0) {
        const bool vp1 = std::strcmp(mode, "overflow-vp1") == 0;
        int rc = start(vp1 ? 2 : 1);
        return rc != 0 ? rc : run_ult("deep-recursor", vp1 ? 1 : 0, 64 * 1024, []() noexcept { (void)recurse(0); });
    }
    if (std::strcmp(mode, "segv") == 0 || std::strcmp(mode, "segv-vp1") == 0) {
        const bool vp1 = std::strcmp(mode, "segv-vp1") == 0;
        int rc = start(vp1 ? 2 : 1);
        return rc != 0 ? rc : run_ult("bad-pointer", vp1 ? 1 : 0, 0, []() noexcept {
            auto* p = reinterpret_cast<volatile int*>(std::uintptr_t{0x4000dead0000});
            *p = 1;
        });
    }
    if (std::strcmp(mode, "canary") == 0) {
        return canary_mode();
    }
    if (std::strcmp(mode, "deadlock") == 0) {
        return deadlock_mode();
    }
    if (std::strcmp(mode, "finalize-moved") == 0) {
        return finalize_moved_mode();
    }
    if (std::strcmp(mode, "lock-outside-ult") == 0) {
        return lock_outside_ult_mode();
    }
    if (std::strcmp(mode, "exit-primary") == 0) {
        int rc = start(1);
        if (rc == 0) {
            sched::exit();
        }
        return rc;
    }
    if (std::strcmp(mode, "no-false-deadlock") == 0) {
        return no_false_deadlock_mode();
    }
    if (std::strcmp(mode, "deadlock-primary") == 0) {
        return deadlock_primary_mode();
    }
    if (std::strcmp(mode, "exception") == 0) {
        int rc = start(2);
        return rc != 0 ? rc : run_ult("thrower", 1, 0, [] { throw std::runtime_error("boom-42"); });
    }
    std::fprintf(stderr, "fault_child: unknown mode %s\n", mode);
    return 64;
}
