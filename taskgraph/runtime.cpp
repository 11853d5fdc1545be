/// \file
/// Start and stop of the task runtime, its workers, and the hand-off of ready tasks.
///
/// Workers are ULTs of the engine, pinned to their VPs (DESIGN.md decision 8). A worker takes
/// tasks from the policy; with none, it spins briefly (only while its VP has nothing else to
/// run: sched::spin_until) and then parks. Sleeping and waking follow a Dekker protocol: the
/// worker announces `sleeping`, fences, and looks at the policy once more; a pusher pushes,
/// fences, and wakes a worker it sees sleeping (one exchange decides who wakes it, so a worker
/// is woken once per sleep). The kick itself goes through the worker's gate.
///
/// The program's own flow runs on VP 0 (the primary ULT when init() started the engine), so VP
/// 0's worker runs only while the program waits; wake-ups therefore prefer workers on other VPs
/// than the pusher's, and when there are fewer workers than VPs they take the last VPs.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <pthread.h>
#include <time.h>

#include "lib/config.hpp"
#include "lib/fence.hpp"
#include "lib/log.hpp"
#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/heteroprio.hpp"
#include "taskgraph/perfmodel.hpp"
#include "taskgraph/policy.hpp"
#include "taskgraph/trace.hpp"

MPC_CONFIG_TABLE(tg, {
    {"MPC_TG_NCPU", ::mpc::config::knob_type::integer, "-1",
     "CPU workers of the task-graph runtime; -1: STARPU_NCPU, else one per VP"},
    {"MPC_TG_SCHED", ::mpc::config::knob_type::string, "",
     "scheduling policy of the task-graph runtime (eager, prio, random, ws, lws, dm, dmda, dmdas, heteroprio, modular-eager, modular-prio); empty: STARPU_SCHED, else eager"},
    {"MPC_TG_SPIN_US", ::mpc::config::knob_type::integer, "20",
     "how long an idle task-graph worker looks for work before it parks, in microseconds"},
    {"MPC_TG_TRACE", ::mpc::config::knob_type::string, "",
     "write a Chrome/Perfetto trace (JSON) of the task graph's tasks and dependencies to this file at shutdown"},
    {"MPC_TG_SUMMARY", ::mpc::config::knob_type::string, "",
     "1: print per-worker busy/idle time and per-codelet counts and mean times at shutdown (else STARPU_WORKER_STATS)"},
    {"MPC_TG_PROFILING", ::mpc::config::knob_type::integer, "-1",
     "1: account every worker's executing and sleeping time and stamp the StarPU tasks' profiling_info from init (StarPU's starpu_profiling_status_set); -1: STARPU_PROFILING, else off"},
    {"MPC_TG_PERFMODEL_DIR", ::mpc::config::knob_type::string, "",
     "directory of the performance models (else STARPU_PERF_MODEL_DIR, else $STARPU_HOME/.starpu/sampling/codelets/mpc)"},
    {"MPC_TG_CALIBRATE", ::mpc::config::knob_type::string, "",
     "calibration of performance models: 0 until calibrated, 1 always, 2 from scratch (else STARPU_CALIBRATE)"},
    {"MPC_TG_LIMIT_CPU_MEM", ::mpc::config::knob_type::integer, "-1",
     "MiB the task-graph runtime may allocate for data (scratch, redux copies, STARPU_MALLOC_COUNT); -1: STARPU_LIMIT_CPU_NUMA_0_MEM, _NUMA_MEM or _CPU_MEM, else no limit"},
    {"MPC_TG_SCRATCH_CACHE", ::mpc::config::knob_type::integer, "8",
     "freed scratch buffers and redux copies each task-graph worker keeps for reuse (at most 16); 0: none"},
    {"MPC_TG_REDUX_TREE", ::mpc::config::knob_type::integer, "3",
     "private copies from which a redux phase is reduced by a tree of tasks instead of one task; 0: never"},
    {"MPC_TG_REDUX_TREE_BYTES", ::mpc::config::knob_type::integer, "16384",
     "bytes of data from which a redux phase may be reduced by a tree (a smaller fold costs less than a task)"},
    {"MPC_TG_LIMIT_MAX_SUBMITTED", ::mpc::config::knob_type::integer, "-1",
     "tasks in flight at which a submission waits; -1: STARPU_LIMIT_MAX_SUBMITTED_TASKS, else no limit"},
    {"MPC_TG_LIMIT_MIN_SUBMITTED", ::mpc::config::knob_type::integer, "-1",
     "tasks in flight at which a waiting submission resumes; -1: STARPU_LIMIT_MIN_SUBMITTED_TASKS, else 90% of the maximum"},
    {"MPC_TG_WATCHDOG_TIMEOUT", ::mpc::config::knob_type::integer, "-1",
     "microseconds without a task ending, tasks being in flight, after which the task-graph runtime reports it; 0: never; -1: STARPU_WATCHDOG_TIMEOUT, else never"},
    {"MPC_TG_WATCHDOG_CRASH", ::mpc::config::knob_type::integer, "-1",
     "1: the watchdog's report ends the program (abort); -1: STARPU_WATCHDOG_CRASH, else 0"},
    {"MPC_TG_WATCHDOG_DELAY", ::mpc::config::knob_type::integer, "-1",
     "microseconds after start-up before the watchdog looks; -1: STARPU_WATCHDOG_DELAY, else 0"},
})

namespace mpc::tg {
namespace {

/// A worker's record. Its first line is read by the pushers on every push (sleeping, in
/// kick) and by the worker on every pop (npinned): written only when the worker parks or a task
/// is pinned to it. The per-task counters the worker writes have their own line, so that a
/// push does not miss on a line the worker has just written, nor the worker after a push.
struct alignas(64) worker {
    int id = 0;
    int vp = 0;
    std::atomic<int> sleeping{0};  ///< 1: announced it is about to park
    bool kicked = false;           ///< under idle.lock
    detail::gate idle;
    // Tasks only this worker may run (task_desc::worker), ahead of the policy's.
    spinlock pinned_lock;
    sched::detail::fifo<task> pinned;
    std::atomic<long> npinned{0};
    /// Tasks run; written by the worker only (a relaxed store), read by worker_profile_take().
    alignas(64) std::atomic<std::uint64_t> executed{0};
    std::uint64_t sleeps = 0;  ///< times parked (each ended by a kick): wake-ups, in the end-of-run debug line
    task* running = nullptr;   ///< the task this worker runs (its codelet or callback), if any
    unsigned ctx_turn = 0;     ///< the context served first next time (when in several)
    int comb_id = -1;          ///< while running a part of a parallel task: its combined worker,
    int comb_size = 1;         ///< its size
    int comb_rank = 0;         ///< and this worker's rank in it
    /// Profiling (worker_profile_take), under prof_lock: the interval's start and sums, and
    /// since when the worker executes or sleeps (0: it does not). Parks always stamp
    /// sleep_since (a park costs far more than a clock read), so that profiling switched on
    /// while a worker sleeps counts that sleep; task functions stamp only while profiling is on.
    alignas(64) spinlock prof_lock;
    std::uint64_t prof_start = 0;
    std::uint64_t exec_ns = 0;
    std::uint64_t sleep_ns = 0;
    std::uint64_t exec_since = 0;
    std::uint64_t sleep_since = 0;
    std::uint64_t tasks_base = 0;  ///< executed at the interval's start
    double flops = 0;
    /// Run by a thread of the application (StarPU's driver API: config::app_workers), not by a
    /// ULT of the runtime. `driven`: a thread drives it now (driver_init .. driver_deinit, or
    /// shutdown() running what nobody drives), that thread being `owner`.
    alignas(64) bool app = false;
    std::atomic<bool> driven{false};
    std::atomic<std::uintptr_t> owner{0};  ///< its caller_token(); 0 whenever driven is false
};

struct runtime {
    /// Life cycle, under lifecycle.lock: init() and shutdown() calls nest (refs), and a start or
    /// a stop runs outside the lock while the phase keeps other callers out. Ranks of one
    /// process may each call init/shutdown: a rank's init waits for another's stop to finish.
    enum class phase { idle, starting, up, stopping };
    detail::gate lifecycle;
    phase ph = phase::idle;
    int refs = 0;
    bool started_engine = false;
    int nworkers = 0;
    int napp = 0;  ///< workers the application runs (worker::app); read with nworkers, set at start
    std::unique_ptr<worker[]> workers;
    std::unique_ptr<policy> pol;
    bool pol_measures = false;  ///< pol->measures(): done() after every task
    bool pol_starts = false;    ///< pol->watches_starts(): starting() before every task
    bool pol_pinned = false;    ///< pol->watches_pinned(): pinned() for each pinned task
    std::unique_ptr<int[]> vps;  ///< each worker's VP
    const char* policy_name = "";
    bool buckets_configured = false;  ///< heteroprio set up by the application (priority_range)
    std::atomic<bool> running{false};
    std::atomic<bool> stopping{false};
    /// starpu_pause(): pauses in force. A worker reads it before each task it runs and waits on
    /// `paused` while it is not 0 (resume_workers() lowers it under paused.lock).
    std::atomic<int> pause_depth{0};
    /// config::going_to_sleep / waking_up, or set_going_to_sleep() / set_waking_up() (read by every park).
    std::atomic<void (*)(unsigned)> going_to_sleep{nullptr};
    std::atomic<void (*)(unsigned)> waking_up{nullptr};
    std::uint64_t spin_ns = 0;
    std::uint64_t t0 = 0;  ///< clock_ns() at the start
    sched::key worker_key = -1;  ///< ULT-local: the worker record of a worker ULT
    sched::key callback_key = -1;  ///< ULT-local: the task whose callback a non-worker ULT runs
    /// Written by every submission (seq) or push (wake_cursor): a line of their own, away from
    /// the fields above that the workers read for every task (pol, workers, stopping...).
    alignas(64) std::atomic<std::uint64_t> seq{0};
    std::atomic<unsigned> wake_cursor{0};

    /// Waiters for the in-flight count (wait_for_all, wait_for_n_submitted) and for the workers'
    /// end (alive, under its lock). The count itself is an atomic: a task's end takes the lock
    /// only when it brings the count down to the highest threshold a waiter registered
    /// (notify_at; -1: nobody waits). A waiter stores its threshold before reading the count and
    /// an ending task decrements before reading the threshold, both sequentially consistent, so
    /// one of them sees the other. The count, written by every submission and every task's end,
    /// has its own line too (with the threshold, which an ending task reads).
    alignas(64) std::atomic<long> inflight{0};
    std::atomic<long> notify_at{-1};
    alignas(64) detail::gate all_done;
    int alive = 0;  ///< worker ULTs not yet ended
    std::atomic<bool> drivers_stop{false};  ///< drivers_request_termination(): driver_run() returns
    std::atomic<int> app_inside{0};         ///< threads inside a driver call (shutdown waits for none)
    detail::gate paused;  ///< the workers waiting for resume_workers()

    /// The watchdog (STARPU_WATCHDOG_*): a thread of its own while one is configured.
    std::thread watchdog;
    std::mutex watchdog_m;
    std::condition_variable watchdog_cv;
    bool watchdog_stop = false;  ///< under watchdog_m
    std::atomic<void (*)(void*)> watchdog_hook{nullptr};  ///< starpu_task_watchdog_set_hook
    std::atomic<void*> watchdog_arg{nullptr};
};

/// set_ready_soon_hook(): read by every task's start (one relaxed load while none is set).
std::atomic<void (*)(void*, task*, double)> g_ready_soon{nullptr};
std::atomic<void*> g_ready_soon_arg{nullptr};

runtime g_rt;
/// Takes lifecycle.lock once no start or stop is in progress (may block); returns with it held.
void lock_settled() noexcept {
    for (;;) {
        g_rt.lifecycle.lock.lock();
        if (g_rt.ph == runtime::phase::idle || g_rt.ph == runtime::phase::up) {
            return;
        }
        g_rt.lifecycle.wait_locked(
            [] { return g_rt.ph == runtime::phase::idle || g_rt.ph == runtime::phase::up; },
            "mpc::tg init/shutdown (another start or stop in progress)");
    }
}

/// Ends a start or a stop: the new phase, and the callers waiting for it.
void settle(runtime::phase ph, int refs) noexcept {
    g_rt.lifecycle.lock.lock();
    g_rt.ph = ph;
    g_rt.refs = refs;
    detail::gate::wakeups w = g_rt.lifecycle.notify_locked();
    g_rt.lifecycle.lock.unlock();
    detail::gate::deliver(w);
}

/// A value from (in order) the config when it wins, MPC_TG_*, STARPU_*, the config.
status read_ncpus(const config& c, int* out) noexcept {
    if (c.config_over_env && c.ncpus >= 0) {
        *out = c.ncpus;
        return {};
    }
    result<std::int64_t> mine = mpc::config::get_int("MPC_TG_NCPU");
    if (!mine) {
        return mine.error();
    }
    if (*mine >= 0) {
        *out = static_cast<int>(*mine);
        return {};
    }
    for (const char* name : {"STARPU_NCPU", "STARPU_NCPUS"}) {  // StarPU reads its older name too
        if (const char* s = std::getenv(name); s != nullptr && *s != '\0') {
            std::int64_t v = 0;
            if (!mpc::config::parse_int(s, &v) || v < 0 || v > max_workers) {
                MPC_LOG(error, tg, "%s=%s: expected a number of workers in [0, %d]", name, s, max_workers);
                return {errc::invalid_argument, "malformed STARPU_NCPU"};
            }
            *out = static_cast<int>(v);
            return {};
        }
    }
    *out = c.ncpus;
    return {};
}

/// MPC_TG_PROFILING, else STARPU_PROFILING (StarPU: a number, profiling when not 0).
status read_profiling(int* out) noexcept {
    result<std::int64_t> mine = mpc::config::get_int("MPC_TG_PROFILING");
    if (!mine) {
        return mine.error();
    }
    if (*mine >= 0) {
        *out = *mine > 0 ? 1 : 0;
        return {};
    }
    *out = 0;
    if (const char* s = std::getenv("STARPU_PROFILING"); s != nullptr && *s != '\0') {
        std::int64_t v = 0;
        if (!mpc::config::parse_int(s, &v)) {
            MPC_LOG(error, tg, "STARPU_PROFILING=%s: expected a number (0: off, else on)", s);
            return {errc::invalid_argument, "malformed STARPU_PROFILING"};
        }
        *out = v != 0 ? 1 : 0;
    }
    return {};
}

status read_policy(const config& c, const policy_entry** out) noexcept {
    if (c.custom_policy != nullptr) {
        *out = c.custom_policy;
        return {};
    }
    const char* name = nullptr;
    if (c.config_over_env && c.sched != nullptr) {
        name = c.sched;
    } else if (const char* m = mpc::config::raw("MPC_TG_SCHED"); m != nullptr && *m != '\0') {
        name = m;
    } else if (const char* s = std::getenv("STARPU_SCHED"); s != nullptr && *s != '\0') {
        name = s;
    } else {
        name = c.sched;
    }
    if (name == nullptr) {
        *out = &policies()[0];
        return {};
    }
    if (std::strcmp(name, "help") == 0) {  // StarPU lists its policies for STARPU_SCHED=help
        std::fprintf(stderr, "task-graph scheduling policies:\n");
        for (const policy_entry& e : policies()) {
            std::fprintf(stderr, "\t%-14s %s\n", e.name, e.description);
        }
        *out = &policies()[0];
        return {};
    }
    *out = find_policy(name);
    if (*out == nullptr) {
        MPC_LOG(error, tg, "unknown scheduling policy '%s'; valid policies: %s (STARPU_SCHED=help describes them)",
                name, policy_names());
        return {errc::invalid_argument, "unknown scheduling policy"};
    }
    return {};
}

/// MPC_TG_<mine>, else STARPU_<theirs>, else -1. errc::invalid_argument when malformed.
status knob(const char* mine, const char* theirs, long* out) noexcept {
    result<std::int64_t> v = mpc::config::get_int(mine);
    if (!v) {
        return v.error();
    }
    *out = static_cast<long>(*v);
    if (*out >= 0) {
        return {};
    }
    if (const char* s = std::getenv(theirs); s != nullptr && *s != '\0') {
        std::int64_t x = 0;
        if (!mpc::config::parse_int(s, &x) || x < 0) {
            MPC_LOG(error, tg, "%s=%s: expected a non-negative number", theirs, s);
            return {errc::invalid_argument, "malformed limit variable"};
        }
        *out = static_cast<long>(x);
    }
    return {};
}

status read_memory_knobs() noexcept {
    long mem = -1;
    long max = -1;
    long min = -1;
    // StarPU's order for NUMA node 0 (the only memory node here): its own limit, then the
    // per-NUMA-node one, then the CPU one.
    for (const char* theirs : {"STARPU_LIMIT_CPU_NUMA_0_MEM", "STARPU_LIMIT_CPU_NUMA_MEM", "STARPU_LIMIT_CPU_MEM"}) {
        if (status st = knob("MPC_TG_LIMIT_CPU_MEM", theirs, &mem); !st.ok()) {
            return st;
        }
        if (mem >= 0) {
            break;
        }
    }
    if (status st = knob("MPC_TG_LIMIT_MAX_SUBMITTED", "STARPU_LIMIT_MAX_SUBMITTED_TASKS", &max); !st.ok()) {
        return st;
    }
    if (status st = knob("MPC_TG_LIMIT_MIN_SUBMITTED", "STARPU_LIMIT_MIN_SUBMITTED_TASKS", &min); !st.ok()) {
        return st;
    }
    result<std::int64_t> slots = mpc::config::get_int("MPC_TG_SCRATCH_CACHE");
    result<std::int64_t> tree = mpc::config::get_int("MPC_TG_REDUX_TREE");
    result<std::int64_t> tree_bytes = mpc::config::get_int("MPC_TG_REDUX_TREE_BYTES");
    if (!slots || *slots < 0 || !tree || *tree < 0 || !tree_bytes || *tree_bytes < 0) {
        MPC_LOG(error, tg, "MPC_TG_SCRATCH_CACHE, MPC_TG_REDUX_TREE(_BYTES): expected non-negative numbers");
        return {errc::invalid_argument, "malformed cache or tree knob"};
    }
    set_scratch_cache_slots(static_cast<int>(std::min<std::int64_t>(*slots, 1 << 20)));
    set_redux_tree(static_cast<int>(std::min<std::int64_t>(*tree, 1 << 20)), static_cast<std::size_t>(*tree_bytes));
    set_memory_limit(mem > 0 ? static_cast<std::size_t>(mem) << 20 : 0);
    set_submission_limits(max, min);
    if (mem > 0 || max > 0) {
        MPC_LOG(info, tg, "memory limit %ld MiB, submission watermarks %ld/%ld", mem, max, min);
    }
    return {};
}

/// The worker a plain thread of the application runs tasks for (the driver API), while it does.
[[gnu::tls_model("initial-exec")]] thread_local worker* t_driver = nullptr;

worker* this_worker() noexcept {
    if (g_rt.worker_key < 0) {
        return nullptr;
    }
    if (void* w = sched::get_specific(g_rt.worker_key); w != nullptr) {
        return static_cast<worker*>(w);
    }
    // Only programs with application-run workers pay for the thread-local read (a call into
    // the TLS resolver, libmpc being a shared library).
    return g_rt.napp != 0 ? t_driver : nullptr;
}

/// The calling thread acts as worker w while it lives (the driver API): ULT-local on a ULT,
/// thread-local on a plain thread.
class acting_as {
public:
    explicit acting_as(worker& w) noexcept : ult_(sched::self() != nullptr) {
        if (ult_) {
            prev_ = sched::get_specific(g_rt.worker_key);
            sched::set_specific(g_rt.worker_key, &w).ignore();
        } else {
            prev_ = t_driver;
            t_driver = &w;
        }
    }
    ~acting_as() {
        if (ult_) {
            sched::set_specific(g_rt.worker_key, prev_).ignore();
        } else {
            t_driver = static_cast<worker*>(prev_);
        }
    }
    acting_as(const acting_as&) = delete;
    acting_as& operator=(const acting_as&) = delete;

private:
    bool ult_;
    void* prev_ = nullptr;
};

/// Whether w is to stop looking for work: at shutdown, or for a worker the application
/// drives, when drivers_request_termination() was called.
bool stop_asked(const worker& w) noexcept {
    return g_rt.stopping.load(std::memory_order_acquire) || (w.app && g_rt.drivers_stop.load(std::memory_order_acquire));
}

/// Wakes w if it sleeps; true if this call woke it.
bool kick(worker& w) noexcept {
    if (w.sleeping.load(std::memory_order_seq_cst) == 0 || w.sleeping.exchange(0, std::memory_order_seq_cst) == 0) {
        return false;
    }
    w.idle.lock.lock();
    w.kicked = true;
    detail::gate::wakeups wk = w.idle.notify_locked();
    w.idle.lock.unlock();
    detail::gate::deliver(wk);
    return true;
}

/// Parks until kicked (the kick that claimed this worker's announced sleep).
void await_kick(worker& w) noexcept {
    ++w.sleeps;
    {
        spin_guard g(w.prof_lock);
        w.sleep_since = detail::now_ns();
    }
    if (auto* cb = g_rt.going_to_sleep.load(std::memory_order_acquire); cb != nullptr) {
        cb(static_cast<unsigned>(w.id));
    }
    w.idle.lock.lock();
    w.idle.wait_locked([&w] { return w.kicked; }, "mpc::tg worker idle");
    w.idle.lock.lock();
    w.kicked = false;
    w.idle.lock.unlock();
    if (auto* cb = g_rt.waking_up.load(std::memory_order_acquire); cb != nullptr) {
        cb(static_cast<unsigned>(w.id));
    }
    spin_guard g(w.prof_lock);
    if (detail::g_profiling.load(std::memory_order_relaxed)) {
        const std::uint64_t now = detail::now_ns();
        w.sleep_ns += now - std::max(w.sleep_since, w.prof_start);
    }
    w.sleep_since = 0;
}

/// A worker in scheduling contexts besides 0 (mask: the others): each in turn, starting with
/// the next one each time, so that none starves the others; with priorities set
/// (context_set_priority), the higher contexts first, in turn among equals.
[[gnu::noinline]] task* next_task_contexts(worker& w, std::uint32_t mask, bool idle) noexcept {
    const std::uint32_t all = mask | 1u;
    int order[max_contexts];
    int n = 0;
    for (int c = 0; c < max_contexts; ++c) {
        if ((all & (1u << c)) != 0) {
            order[n++] = c;
        }
    }
    std::rotate(order, order + static_cast<int>(w.ctx_turn++ % static_cast<unsigned>(n)), order + n);
    if (detail::ctx_prios_set()) [[unlikely]] {
        unsigned prio[max_contexts];
        for (int i = 0; i < n; ++i) {
            prio[i] = detail::ctx_prio(order[i], w.id);
        }
        for (int i = 1; i < n; ++i) {  // stable insertion sort, highest first: keeps the turn
            for (int j = i; j > 0 && prio[j - 1] < prio[j]; --j) {
                std::swap(order[j - 1], order[j]);
                std::swap(prio[j - 1], prio[j]);
            }
        }
    }
    for (int i = 0; i < n; ++i) {
        const int c = order[i];
        task* t = c == 0 ? (idle ? g_rt.pol->pop_idle(w.id) : g_rt.pol->pop(w.id))
                         : (idle ? detail::ctx_pop_idle(c, w.id) : detail::ctx_pop(c, w.id));
        if (t != nullptr) {
            return t;
        }
    }
    return nullptr;
}

/// The worker's next task: its own queue first, then the policy's (its contexts' policies).
task* next_task(worker& w) noexcept {
    if (w.npinned.load(std::memory_order_relaxed) != 0) {
        spin_guard g(w.pinned_lock);
        if (task* t = w.pinned.pop_front(); t != nullptr) {
            w.npinned.fetch_sub(1, std::memory_order_relaxed);
            return t;
        }
    }
    if (const std::uint32_t m = detail::ctx_mask(w.id); m != 0) [[unlikely]] {
        return next_task_contexts(w, m, false);
    }
    return g_rt.pol->pop(w.id);
}

/// The policies' last look before the worker parks (pop_idle).
task* idle_task(worker& w) noexcept {
    if (const std::uint32_t m = detail::ctx_mask(w.id); m != 0) [[unlikely]] {
        return next_task_contexts(w, m, true);
    }
    return g_rt.pol->pop_idle(w.id);
}

bool contexts_may_have_work(int w, std::uint32_t mask) noexcept {
    for (int c = 1; c < max_contexts; ++c) {
        if ((mask & (1u << c)) != 0 && detail::ctx_may_have_work(c, w)) {
            return true;
        }
    }
    return false;
}

bool work_or_stop(void* p) {
    auto* w = static_cast<worker*>(p);
    if (w->npinned.load(std::memory_order_relaxed) != 0 || g_rt.pol->may_have_work(w->id) || stop_asked(*w)) {
        return true;
    }
    const std::uint32_t m = detail::ctx_mask(w->id);
    return m != 0 && contexts_may_have_work(w->id, m);
}

/// Holds a worker that has taken a task while paused until resume_workers(). Whether the task
/// was pushed before or after pause_workers() raised the depth, a push after it is seen here:
/// the pop that found the task synchronises with that push.
[[gnu::noinline]] void wait_resumed() noexcept {
    g_rt.paused.lock.lock();
    g_rt.paused.wait_locked([] { return g_rt.pause_depth.load(std::memory_order_relaxed) == 0; },
                            "mpc::tg worker paused (starpu_pause)");
}

/// t starts on w with a known expected duration: tells the ready-soon hook about each successor
/// whose last unmet dependency t is (StarPU's starpu_task_notify_ready_soon_register).
[[gnu::noinline]] void notify_ready_soon(void (*fn)(void*, task*, double), task* t, int w) noexcept {
    if (t->model == nullptr && t->cost_us < 0) {
        return;  // how long t takes is not known
    }
    const double us = task_expected_us(t, w);
    if (!(us >= 0)) {
        return;  // not calibrated
    }
    detail::small_list<task*, 8> soon;
    {
        spin_guard g(t->g.lock);
        for (task* s : t->succs) {
            if (s->ndeps.load(std::memory_order_acquire) == 1) {  // submitted, only t left
                if (!soon.push_back(s)) {
                    break;
                }
            }
        }
    }
    void* arg = g_ready_soon_arg.load(std::memory_order_acquire);
    for (task* s : soon) {
        fn(arg, s, us);  // t holds a reference on each successor until its end
    }
}

/// `look`: when the worker began the search that found t (0 unless profiling).
void run(worker& w, task* t, std::uint64_t look) noexcept {
    if (g_rt.pause_depth.load(std::memory_order_seq_cst) != 0) [[unlikely]] {
        wait_resumed();
    }
    if (t->kind == task_kind::alias) [[unlikely]] {
        w.executed.store(w.executed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        detail::execute_part(t);  // a member's part of a parallel task: no policy saw it
        return;
    }
    if (t->ctx != 0) [[unlikely]] {
        detail::ctx_starting(t, w.id);
    } else if (g_rt.pol_starts) {
        g_rt.pol->starting(t, w.id);
    }
    if (task_times* tt = t->times; tt != nullptr) {
        tt->pop_end = detail::now_ns();
        tt->pop_start = look != 0 ? look : tt->pop_end;
        tt->worker = w.id;
        detail::close_push_stamp(t, tt, tt->pop_end);
    }
    w.running = t;  // starpu_task_get_current(), in the codelet and the callback
    t->ran_on = w.id;
    if (auto* fn = g_ready_soon.load(std::memory_order_relaxed); fn != nullptr) [[unlikely]] {
        notify_ready_soon(fn, t, w.id);
    }
    detail::execute(t);
    w.running = nullptr;
    w.executed.store(w.executed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

/// The start of a search for work, when profiling.
std::uint64_t look_time() noexcept {
    return detail::g_profiling.load(std::memory_order_relaxed) ? detail::now_ns() : 0;
}

/// A worker's life: its tasks as they come, parking when there is none, until stop_asked().
void serve(worker* w) noexcept {
    for (;;) {
        std::uint64_t look = look_time();
        if (task* t = next_task(*w); t != nullptr) {
            run(*w, t, look);
            continue;
        }
        if (stop_asked(*w)) {
            break;
        }
        // StarPU's progression and idle hooks run whenever a worker finds nothing; one that
        // returns 0 keeps the workers polling instead of sleeping.
        if (detail::g_idle_hooks.load(std::memory_order_relaxed) != 0 && !detail::run_idle_hooks()) {
            sched::yield();
            continue;
        }
        if (sched::spin_until(&work_or_stop, w, g_rt.spin_ns)) {
            continue;
        }
        w->sleeping.store(1, std::memory_order_seq_cst);
        mpc::full_fence();
        look = look_time();
        task* t = next_task(*w);
        if (t == nullptr) {
            t = idle_task(*w);  // the policy's last look (HEFT's other queues)
        }
        bool stop = t == nullptr && stop_asked(*w);  // after the fence above
        // A hook registered meanwhile (its registration wakes the sleeping workers: one of the
        // two sees the other) that forbids sleeping: back to polling.
        const bool poll = t == nullptr && !stop && detail::g_idle_hooks.load(std::memory_order_seq_cst) != 0 &&
                          !detail::run_idle_hooks();
        if (t != nullptr || stop || poll) {
            if (w->sleeping.exchange(0, std::memory_order_seq_cst) == 0) {
                await_kick(*w);  // a pusher claimed the sleep: take its kick before going on
            }
            if (t != nullptr) {
                run(*w, t, look);
            }
            if (stop) {
                break;
            }
            continue;
        }
        await_kick(*w);
    }
}

void worker_main(void* p) noexcept {
    auto* w = static_cast<worker*>(p);
    sched::set_specific(g_rt.worker_key, w).ignore();
    serve(w);
    MPC_LOG(debug, tg, "worker %d ends after %llu tasks and %llu wake-ups", w->id,
            static_cast<unsigned long long>(w->executed.load(std::memory_order_relaxed)), static_cast<unsigned long long>(w->sleeps));
    g_rt.all_done.lock.lock();
    --g_rt.alive;
    detail::gate::wakeups wk = g_rt.all_done.notify_locked();
    g_rt.all_done.lock.unlock();
    detail::gate::deliver(wk);
}

/// Wakes one sleeping worker for a task any worker may take; the pusher's own VP comes last.
void wake_any() noexcept {
    const int n = g_rt.nworkers;
    const int here = sched::current_vp();
    unsigned start = g_rt.wake_cursor.fetch_add(1, std::memory_order_relaxed);
    worker* local = nullptr;
    for (int i = 0; i < n; ++i) {
        worker& w = g_rt.workers[(start + static_cast<unsigned>(i)) % static_cast<unsigned>(n)];
        if (w.vp == here) {
            local = local != nullptr ? local : &w;
            continue;
        }
        if (kick(w)) {
            return;
        }
    }
    if (local != nullptr) {
        kick(*local);
    }
}

/// Where each of n workers runs: the VPs the configuration names (config::bindids), else fewer
/// workers than VPs take the last VPs, away from VP 0 where the program runs.
status place_workers(const config& c, int n) noexcept {
    g_rt.vps.reset(new (std::nothrow) int[n]);
    if (!g_rt.vps) {
        return {errc::no_memory, "worker records"};
    }
    const int vps = sched::nr_vps();
    for (int i = 0; i < n; ++i) {
        if (c.bindids != nullptr) {
            const unsigned vp = c.bindids[i % c.nbindids];
            if (vp >= static_cast<unsigned>(vps)) {
                MPC_LOG(error, tg, "worker %d is to be bound to CPU %u, but there are %d VPs (0..%d): it cannot be honoured",
                        i, vp, vps, vps - 1);
                return {errc::invalid_argument, "worker bound to a VP that does not exist"};
            }
            g_rt.vps[i] = static_cast<int>(vp);
        } else {
            g_rt.vps[i] = n >= vps ? i % vps : vps - n + i;
        }
    }
    return {};
}

/// The VPs init() makes when it starts the engine and MPC_VPS is unset: ncpus when given, and
/// at least one more than the largest VP a worker is bound to (up to the allowed PUs). 0: the
/// engine's default.
status vps_to_make(const config& c, int ncpus, int* out) noexcept {
    *out = ncpus > 0 ? ncpus : 0;
    if (c.bindids == nullptr) {
        return {};
    }
    if (status st = topo::load(); !st.ok()) {
        return st;
    }
    const int base = ncpus > 0 ? ncpus : topo::info().allowed_cores;
    const int n = base - std::max(c.reserve, 0);
    unsigned top = 0;
    for (int i = 0; i < n; ++i) {
        top = std::max(top, c.bindids[i % c.nbindids]);
    }
    if (top >= static_cast<unsigned>(topo::info().allowed_pus)) {
        MPC_LOG(error, tg, "a worker is to be bound to CPU %u, but the process may use %d PUs (0..%d): it cannot be honoured",
                top, topo::info().allowed_pus, topo::info().allowed_pus - 1);
        return {errc::invalid_argument, "worker bound to a CPU that does not exist"};
    }
    *out = std::max(base, static_cast<int>(top) + 1);
    return {};
}

/// The workers config::app_workers names (checked against n): flagged in g_rt.workers.
status mark_app_workers(const config& c, int n) noexcept {
    g_rt.napp = 0;
    for (int k = 0; k < c.n_app_workers; ++k) {
        const int id = c.app_workers[k];
        if (id < 0 || id >= n) {
            MPC_LOG(error, tg, "worker %d is to be run by the application (a driver not launched), but the workers are "
                               "0..%d", id, n - 1);
            return {errc::invalid_argument, "application-run worker that does not exist"};
        }
        if (!g_rt.workers[id].app) {
            g_rt.workers[id].app = true;
            ++g_rt.napp;
        }
    }
    return {};
}

status start_workers(const config& c, int n) noexcept {
    g_rt.workers.reset(new (std::nothrow) worker[n]);
    if (!g_rt.workers) {
        return {errc::no_memory, "worker records"};
    }
    if (status st = mark_app_workers(c, n); !st.ok()) {
        return st;
    }
    const int vps = sched::nr_vps();
    if (n - g_rt.napp > vps) {
        MPC_LOG(warn, tg, "%d task workers on %d VPs: some VPs run several workers, which take turns", n - g_rt.napp, vps);
    }
    g_rt.nworkers = n;
    g_rt.drivers_stop.store(false, std::memory_order_relaxed);
    if (g_rt.napp != 0) {
        sched::outside_wakers(1);  // the application's threads may end waits (until shutdown)
    }
    g_rt.all_done.lock.lock();
    g_rt.alive = n - g_rt.napp;
    g_rt.all_done.lock.unlock();
    int started = 0;
    for (int i = 0; i < n; ++i) {
        worker& w = g_rt.workers[i];
        w.id = i;
        w.vp = g_rt.vps[i];
        w.prof_start = g_rt.t0;
        if (w.app) {
            continue;  // the application's thread runs it (driver_init)
        }
        char name[32];
        std::snprintf(name, sizeof name, "tg worker %d", i);
        sched::attr a;
        a.vp = w.vp;
        a.pinned = true;
        a.detached = true;
        a.name = name;
        result<sched::ult*> u = sched::spawn(&worker_main, &w, a);
        if (!u) {
            MPC_LOG(error, tg, "cannot start task worker %d: %s", i, u.error().reason());
            g_rt.all_done.lock.lock();
            g_rt.alive = started;  // the ones never started
            g_rt.all_done.lock.unlock();
            return u.error();
        }
        ++started;
    }
    return {};
}

/// Stops the workers (they finish the queued tasks first) and waits until they have ended.
void stop_workers() noexcept {
    g_rt.stopping.store(true, std::memory_order_seq_cst);
    for (int i = 0; i < g_rt.nworkers; ++i) {
        kick(g_rt.workers[i]);
    }
    g_rt.all_done.lock.lock();
    g_rt.all_done.wait_locked([] { return g_rt.alive == 0; }, "mpc::tg shutdown");
}

/// A short wait of a loop that polls (a ULT lets its VP run others).
void nap() noexcept {
    if (sched::self() != nullptr) {
        sched::sleep_for(std::chrono::microseconds(100));
    } else {
        timespec ts{0, 100 * 1000};
        nanosleep(&ts, nullptr);
    }
}

/// After stop_workers(): waits until no application thread is inside a driver call (driver_run
/// sees the stop and returns), then forgets the application-run workers.
void end_app_workers() noexcept {
    while (g_rt.app_inside.load(std::memory_order_acquire) != 0) {
        nap();
    }
    if (g_rt.napp != 0) {
        sched::outside_wakers(-1);
        g_rt.napp = 0;
    }
}

/// Who calls: the ULT (its record's address | 1, odd), else the plain thread (its pthread_t,
/// glibc's record address, even). Never 0.
std::uintptr_t caller_token() noexcept {
    if (sched::ult* u = sched::self(); u != nullptr) {
        return reinterpret_cast<std::uintptr_t>(u) | 1u;
    }
    return static_cast<std::uintptr_t>(pthread_self()) & ~std::uintptr_t{1};
}

/// The thread holding w.driven lets it go.
void release_driver(worker& w) noexcept {
    w.owner.store(0, std::memory_order_relaxed);
    w.driven.store(false, std::memory_order_release);
}

/// Runs one task worker w may take (its own queue, then the policies', their last look
/// included) on the calling thread, which acts as w; false when there was none.
bool run_one(worker& w) noexcept {
    const std::uint64_t look = look_time();
    task* t = next_task(w);
    if (t == nullptr) {
        t = idle_task(w);
    }
    if (t == nullptr) {
        return false;
    }
    run(w, t, look);
    return true;
}

/// Runs on the calling thread the tasks of worker w, which it holds (w.driven), until none is
/// left for it; true when it ran one.
bool drain(worker& w) noexcept {
    acting_as as(w);
    bool any = false;
    while (run_one(w)) {
        any = true;
    }
    return any;
}

/// shutdown()'s wait for every task while some workers are the application's: the tasks left
/// to one that no thread drives (or that the caller drives itself) would never run, so the
/// caller runs them as they come.
void wait_with_app_workers() noexcept {
    const std::uintptr_t me = caller_token();
    while (g_rt.inflight.load(std::memory_order_acquire) != 0) {
        bool any = false;
        for (int i = 0; i < g_rt.nworkers; ++i) {
            worker& w = g_rt.workers[i];
            if (!w.app) {
                continue;
            }
            if (!w.driven.exchange(true, std::memory_order_acq_rel)) {
                w.owner.store(me, std::memory_order_relaxed);
                any = drain(w) || any;
                release_driver(w);
            } else if (w.owner.load(std::memory_order_relaxed) == me) {
                any = drain(w) || any;  // the caller is its driver
            }
        }
        if (!any) {
            nap();
        }
    }
}

/// heteroprio's buckets from the application (config::heteroprio_setup), checked.
status setup_heteroprio(const config& c, int n, std::unique_ptr<heteroprio_config>* out) noexcept {
    out->reset(new (std::nothrow) heteroprio_config);
    if (!*out) {
        return {errc::no_memory, "heteroprio configuration"};
    }
    c.heteroprio_setup(out->get(), n);
    char why[256];
    if (!(*out)->check(n, why, sizeof why)) {
        MPC_LOG(error, tg, "heteroprio: %s", why);
        return {errc::invalid_argument, "bad heteroprio configuration"};
    }
    return {};
}

/// Tasks the workers have run so far (each counter written by its worker only).
std::uint64_t executed_sum() noexcept {
    std::uint64_t n = 0;
    for (int i = 0; i < g_rt.nworkers; ++i) {
        n += g_rt.workers[i].executed.load(std::memory_order_relaxed);
    }
    return n;
}

/// Waits up to us microseconds on the watchdog's condition; false when asked to stop.
bool watchdog_wait(std::uint64_t us) noexcept {
    std::unique_lock<std::mutex> l(g_rt.watchdog_m);
    g_rt.watchdog_cv.wait_for(l, std::chrono::microseconds(us), [] { return g_rt.watchdog_stop; });
    return !g_rt.watchdog_stop;
}

/// The watchdog: every `timeout` µs, when tasks were in flight and none ended meanwhile, it
/// calls the application's hook or says so (StarPU's STARPU_WATCHDOG_TIMEOUT), then aborts
/// the program when `crash`. Reads only counters, never a task.
void watchdog_main(std::uint64_t timeout, std::uint64_t delay, bool crash) noexcept {
    if (delay != 0 && !watchdog_wait(delay)) {
        return;
    }
    bool hinted = false;
    for (;;) {
        const std::uint64_t ran = executed_sum();
        const long before = g_rt.inflight.load(std::memory_order_acquire);
        if (!watchdog_wait(timeout)) {
            return;
        }
        const long now = g_rt.inflight.load(std::memory_order_acquire);
        if (before <= 0 || now <= 0 || executed_sum() != ran) {
            continue;
        }
        if (auto* hook = g_rt.watchdog_hook.load(std::memory_order_acquire); hook != nullptr) {
            hook(g_rt.watchdog_arg.load(std::memory_order_acquire));
        } else {
            int asleep = 0;
            for (int i = 0; i < g_rt.nworkers; ++i) {
                asleep += g_rt.workers[i].sleeping.load(std::memory_order_relaxed) != 0 ? 1 : 0;
            }
            MPC_LOG(warn, tg, "watchdog: no task ended for %.3f s (STARPU_WATCHDOG_TIMEOUT) with %ld in flight, %ld of them "
                              "ready, %d of %d workers asleep%s", static_cast<double>(timeout) / 1e6, now, tasks_ready(),
                    asleep, g_rt.nworkers,
                    tasks_ready() == 0 ? ": the tasks wait for dependencies, tags or data that nothing will release?"
                                       : ": a task runs longer than that?");
        }
        if (crash) {
            MPC_LOG(fatal, tg, "watchdog: ending the program (STARPU_WATCHDOG_CRASH)");
            std::abort();
        }
        if (!hinted) {
            MPC_LOG(info, tg, "watchdog: set STARPU_WATCHDOG_CRASH=1 to end the program in such a case");
            hinted = true;
        }
    }
}

/// Reads the watchdog's variables and starts it when a timeout is set.
status start_watchdog() noexcept {
    long timeout = -1;
    long crash = -1;
    long delay = -1;
    if (status st = knob("MPC_TG_WATCHDOG_TIMEOUT", "STARPU_WATCHDOG_TIMEOUT", &timeout); !st.ok()) {
        return st;
    }
    if (status st = knob("MPC_TG_WATCHDOG_CRASH", "STARPU_WATCHDOG_CRASH", &crash); !st.ok()) {
        return st;
    }
    if (status st = knob("MPC_TG_WATCHDOG_DELAY", "STARPU_WATCHDOG_DELAY", &delay); !st.ok()) {
        return st;
    }
    if (timeout <= 0) {
        return {};
    }
    g_rt.watchdog_stop = false;
    try {
        g_rt.watchdog = std::thread(watchdog_main, static_cast<std::uint64_t>(timeout),
                                    static_cast<std::uint64_t>(std::max(delay, 0L)), crash > 0);
    } catch (const std::exception&) {
        MPC_LOG(error, tg, "cannot start the watchdog's thread");
        return {errc::no_memory, "watchdog thread"};
    }
    return {};
}

void stop_watchdog() noexcept {
    if (!g_rt.watchdog.joinable()) {
        return;
    }
    {
        std::lock_guard<std::mutex> l(g_rt.watchdog_m);
        g_rt.watchdog_stop = true;
    }
    g_rt.watchdog_cv.notify_all();
    g_rt.watchdog.join();
}

status start(const config& c) noexcept {
    int ncpus = -1;
    const policy_entry* pe = nullptr;
    if (status st = read_ncpus(c, &ncpus); !st.ok()) {
        return st;
    }
    if (status st = read_policy(c, &pe); !st.ok()) {
        return st;
    }
    result<std::int64_t> spin = mpc::config::get_int("MPC_TG_SPIN_US");
    if (!spin || *spin < 0) {
        return {errc::invalid_argument, "malformed MPC_TG_SPIN_US"};
    }
    if (status st = read_memory_knobs(); !st.ok()) {
        return st;
    }
    int prof = 0;
    if (status st = read_profiling(&prof); !st.ok()) {
        return st;
    }
    if (ncpus == 0 || (ncpus > 0 && ncpus <= c.reserve)) {
        MPC_LOG(warn, tg, "no CPU worker configured (STARPU_NCPU / MPC_TG_NCPU = %d, %d reserved): no task could run",
                ncpus, std::max(c.reserve, 0));
        return {errc::unsupported, "no worker"};
    }
    if (c.bindids != nullptr && c.nbindids <= 0) {
        return {errc::invalid_argument, "empty list of worker bindings"};
    }
    if (ncpus > max_workers) {
        MPC_LOG(error, tg, "%d workers asked for; at most %d", ncpus, max_workers);
        return {errc::invalid_argument, "too many workers"};
    }
    g_rt.started_engine = false;
    if (!sched::initialized()) {
        sched::options o;
        // Workers asked for explicitly and MPC_VPS unset: one VP per worker (and per reserved
        // CPU), enough for the VPs they are bound to.
        if (std::getenv("MPC_VPS") == nullptr) {
            if (status st = vps_to_make(c, ncpus, &o.nr_vps); !st.ok()) {
                return st;
            }
        }
        if (status st = sched::init(o); !st.ok()) {
            MPC_LOG(error, tg, "cannot start the engine: %s", st.reason());
            return st;
        }
        g_rt.started_engine = true;
        MPC_LOG(info, tg, "task runtime started the engine (%d VPs)", sched::nr_vps());
    }
    if (g_rt.worker_key < 0) {
        result<sched::key> k = sched::key_create();
        if (!k) {
            return k.error();
        }
        g_rt.worker_key = *k;
    }
    if (g_rt.callback_key < 0) {
        result<sched::key> k = sched::key_create();
        if (!k) {
            return k.error();
        }
        g_rt.callback_key = *k;
    }
    const int n = (ncpus > 0 ? ncpus : sched::nr_vps()) - std::max(c.reserve, 0);
    status placed = n > 0 ? place_workers(c, n) : status{errc::unsupported, "no worker"};
    if (!placed.ok()) {
        if (n <= 0) {
            MPC_LOG(warn, tg, "%d CPUs reserved of %d: no CPU worker left, no task could run", c.reserve, n + c.reserve);
        }
        if (g_rt.started_engine) {
            sched::finalize().ignore();
        }
        return placed;
    }
    model_set_calibrate(c.calibrate, c.config_over_env);
    g_rt.going_to_sleep.store(c.going_to_sleep, std::memory_order_release);
    g_rt.waking_up.store(c.waking_up, std::memory_order_release);
    policy_context ctx;
    ctx.nworkers = n;
    ctx.current_worker = &current_worker;
    ctx.worker_vp = g_rt.vps.get();
    std::unique_ptr<heteroprio_config> hp;
    if (pe->make == &make_heteroprio && c.heteroprio_setup != nullptr) {
        if (status st = setup_heteroprio(c, n, &hp); !st.ok()) {
            if (g_rt.started_engine) {
                sched::finalize().ignore();
            }
            return st;
        }
        ctx.heteroprio = hp.get();
    }
    g_rt.buckets_configured = hp != nullptr;
    g_rt.pol = pe->make(ctx);
    g_rt.pol_measures = g_rt.pol->measures();
    g_rt.pol_starts = g_rt.pol->watches_starts();
    g_rt.pol_pinned = g_rt.pol->watches_pinned();
    g_rt.policy_name = pe->name;
    const bool traced = detail::trace_start(n, g_rt.vps.get());
    detail::g_measure = traced;
    detail::g_policy_done.store(g_rt.pol_measures, std::memory_order_relaxed);
    g_rt.spin_ns = static_cast<std::uint64_t>(*spin) * 1000;
    g_rt.stopping.store(false, std::memory_order_relaxed);
    g_rt.inflight.store(0, std::memory_order_relaxed);
    g_rt.t0 = detail::now_ns();
    if (status st = start_workers(c, n); !st.ok()) {
        stop_workers();
        end_app_workers();
        if (g_rt.started_engine) {
            sched::finalize().ignore();
        }
        return st;
    }
    if (prof > 0) {
        detail::g_profiling.store(true, std::memory_order_relaxed);
    }
    if (status st = start_watchdog(); !st.ok()) {
        stop_workers();
        end_app_workers();
        if (g_rt.started_engine) {
            sched::finalize().ignore();
        }
        return st;
    }
    g_rt.running.store(true, std::memory_order_release);
    g_rt.pol->started();  // worker_count() answers from here on
    MPC_LOG(info, tg, "task runtime: %d CPU workers, policy %s", g_rt.nworkers, g_rt.policy_name);
    return {};
}

}  // namespace

namespace detail {

namespace {
void pin(task* t, worker& w, bool front) noexcept {
    w.pinned_lock.lock();
    if (front) {
        w.pinned.push_front(t);
    } else {
        w.pinned.push_back(t);
    }
    w.npinned.fetch_add(1, std::memory_order_relaxed);
    w.pinned_lock.unlock();
    mpc::full_fence();  // the push before the sleeping check
    kick(w);
}
}  // namespace

namespace {
void push_untimed(task* t) noexcept;

/// push_ready() for a task whose times are recorded. The task may run, end and be freed (with
/// its times) as soon as it is pushed: the pusher holds a reference across the push, and the
/// end stamp goes in only if the worker has not popped the task yet (push_stamp: 0 open,
/// 1 the pusher writes, 2 written, 3 closed by the worker, which then stamps it itself).
void push_timed(task* t, task_times* tt) noexcept {
    tt->push_start = now_ns();
    task_ref(t);
    push_untimed(t);
    const std::uint64_t end = now_ns();
    std::uint8_t open = 0;
    if (t->push_stamp.compare_exchange_strong(open, 1, std::memory_order_acquire)) {
        tt->push_end = end;
        t->push_stamp.store(2, std::memory_order_release);
    }
    task_unref(t);
}
}  // namespace

/// The worker's side of push_stamp (see push_timed), when it pops a timed task.
void close_push_stamp(task* t, task_times* tt, std::uint64_t now) noexcept {
    std::uint8_t open = 0;
    if (t->push_stamp.compare_exchange_strong(open, 3, std::memory_order_acquire)) {
        tt->push_end = now;  // popped before the pusher got back: it ended by now
        return;
    }
    while (t->push_stamp.load(std::memory_order_acquire) == 1) {
        mpc::cpu_relax();  // the pusher is between two stores, with no switch in between
    }
}

void push_ready(task* t) noexcept {
    ready_count(t);
    if (task_times* tt = t->times; tt != nullptr) [[unlikely]] {
        push_timed(t, tt);
        return;
    }
    push_untimed(t);
}

namespace {
void push_untimed(task* t) noexcept {
    if (t->worker >= 0) [[unlikely]] {
        if (t->worker >= g_rt.nworkers) {
            dispatch_parallel(t, t->worker);  // a combined worker's id (task_desc::worker)
            return;
        }
        if (t->ctx != 0) {
            ctx_pinned(t, t->worker);
        } else if (g_rt.pol_pinned) {
            g_rt.pol->pinned(t, t->worker);  // before the push: the worker may end it at once
        }
        pin(t, g_rt.workers[t->worker], false);
        return;
    }
    if (t->ctx != 0) [[unlikely]] {
        ctx_push(t);
        return;
    }
    int target = g_rt.pol->push(t);
    if (target == wake_nobody) [[unlikely]] {
        return;
    }
    mpc::full_fence();  // the push before the sleeping check
    if (target >= 0 && target < g_rt.nworkers) {
        kick(g_rt.workers[target]);
    } else if (target == wake_every_worker) {
        for (int i = 0; i < g_rt.nworkers; ++i) {
            kick(g_rt.workers[i]);
        }
    } else {
        wake_any();
    }
}
}  // namespace

status push_local(task* t, int w, bool front) noexcept {
    if (w < 0 || w >= g_rt.nworkers) {
        MPC_LOG(error, tg, "a task given to worker %d, but there are %d workers", w, g_rt.nworkers);
        return {errc::invalid_argument, "no such worker"};
    }
    pin(t, g_rt.workers[w], front);
    return {};
}

bool wake_worker(int w) noexcept { return w >= 0 && w < g_rt.nworkers && kick(g_rt.workers[w]); }

bool in_task() noexcept { return this_worker() != nullptr; }

task* running_task() noexcept {
    if (worker* w = this_worker(); w != nullptr) {
        return w->running;
    }
    return g_rt.callback_key < 0 ? nullptr : static_cast<task*>(sched::get_specific(g_rt.callback_key));
}

task* set_running_task(task* t) noexcept {
    if (worker* w = this_worker(); w != nullptr) {
        task* prev = w->running;
        w->running = t;
        return prev;
    }
    if (g_rt.callback_key < 0) {
        return nullptr;
    }
    auto* prev = static_cast<task*>(sched::get_specific(g_rt.callback_key));
    sched::set_specific(g_rt.callback_key, t).ignore();
    return prev;
}

void task_ran(task* t, std::uint64_t start_ns, std::uint64_t end_ns) noexcept {
    const double us = static_cast<double>(end_ns - start_ns) / 1000.0;
    worker* w = this_worker();
    const int id = w != nullptr ? w->id : -1;
    if (t->model != nullptr) {
        model_record(t->model, t->impl, t->footprint, t->size, us);  // per implementation
    }
    if (id < 0) {
        return;
    }
    if (t->ctx != 0) [[unlikely]] {
        ctx_done(t, id, us);
    } else if (g_rt.pol_measures) {
        g_rt.pol->done(t, id, us);
    }
    if (g_measure) {
        trace_task(t, id, start_ns, end_ns);
    }
}

bool wait_in_flight(bool (*done)(void*), void* arg, const char* what) noexcept {
    bool ok = false;
    g_rt.all_done.lock.lock();
    g_rt.all_done.wait_locked(
        [&] {
            if (done(arg)) {
                ok = true;
                return true;
            }
            // Woken by wake_in_flight_waiters(), or when nothing is in flight any more (the
            // threshold first, then the count: see runtime::all_done).
            if (g_rt.notify_at.load(std::memory_order_relaxed) < 0) {
                g_rt.notify_at.store(0, std::memory_order_seq_cst);
            }
            return g_rt.inflight.load(std::memory_order_seq_cst) == 0;
        },
        what);
    return ok;
}

void wake_in_flight_waiters() noexcept {
    g_rt.all_done.lock.lock();
    gate::wakeups wk = g_rt.all_done.notify_locked();
    g_rt.all_done.lock.unlock();
    gate::deliver(wk);
}

std::uint64_t next_seq() noexcept { return g_rt.seq.fetch_add(1, std::memory_order_relaxed); }

void inflight_add() noexcept { g_rt.inflight.fetch_add(1, std::memory_order_relaxed); }

void inflight_done() noexcept {
    long left = g_rt.inflight.fetch_sub(1, std::memory_order_seq_cst) - 1;
    if (left > g_rt.notify_at.load(std::memory_order_seq_cst)) {
        return;  // nobody waits for this count
    }
    g_rt.all_done.lock.lock();
    gate::wakeups wk;
    if (g_rt.inflight.load(std::memory_order_seq_cst) <= g_rt.notify_at.load(std::memory_order_relaxed)) {
        wk = g_rt.all_done.notify_locked();
        g_rt.notify_at.store(-1, std::memory_order_relaxed);  // the woken re-register if they still wait
    }
    g_rt.all_done.lock.unlock();
    gate::deliver(wk);
}

}  // namespace detail

status init(const config& c) noexcept {
    lock_settled();
    if (g_rt.ph == runtime::phase::up) {
        ++g_rt.refs;
        g_rt.lifecycle.lock.unlock();
        return {};
    }
    g_rt.ph = runtime::phase::starting;
    g_rt.lifecycle.lock.unlock();
    status st = start(c);
    settle(st.ok() ? runtime::phase::up : runtime::phase::idle, st.ok() ? 1 : 0);
    return st;
}

status shutdown() noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "shutdown called from inside a task");
        return {errc::busy, "shutdown from a task"};
    }
    lock_settled();
    if (g_rt.ph != runtime::phase::up) {
        g_rt.lifecycle.lock.unlock();
        return {errc::not_initialized, "task runtime not running"};
    }
    if (--g_rt.refs > 0) {
        g_rt.lifecycle.lock.unlock();
        return {};
    }
    g_rt.ph = runtime::phase::stopping;
    g_rt.lifecycle.lock.unlock();
    if (pause_depth() != 0) {
        MPC_LOG(warn, tg, "shutdown while paused (%d pauses not resumed): resuming, else the queued tasks would never run",
                pause_depth());
        while (pause_depth() != 0) {
            resume_workers();
        }
    }
    if (g_rt.napp != 0) {
        wait_with_app_workers();
    }
    status st = wait_for_all();
    stop_watchdog();  // before the workers' records go
    detail::ctx_stop_all();  // the contexts' policies, while the workers still run
    detail::combined_reset();
    g_rt.running.store(false, std::memory_order_release);
    stop_workers();
    end_app_workers();
    flush_scratch_cache();  // the workers' kept buffers
    detail::trace_finish(g_rt.policy_name);
    detail::g_measure = false;
    detail::g_policy_done.store(false, std::memory_order_relaxed);
    if (status ms = model_save_all(); !ms.ok() && st.ok()) {
        st = ms;
    }
    model_unload_all();  // the next start reads them again, as a new run would
    g_rt.pol.reset();
    g_rt.workers.reset();
    g_rt.nworkers = 0;
    if (g_rt.started_engine) {
        g_rt.started_engine = false;
        if (status f = sched::finalize(); !f.ok()) {
            MPC_LOG(error, tg, "cannot stop the engine: %s", f.reason());
            st = f;
        }
    }
    settle(runtime::phase::idle, 0);
    return st;
}

namespace {
/// Starts worker w's profiling interval at `now` (under its prof_lock).
void prof_reset_locked(worker& w, std::uint64_t now) noexcept {
    w.prof_start = now;
    w.exec_ns = 0;
    w.sleep_ns = 0;
    w.flops = 0;
    w.tasks_base = w.executed.load(std::memory_order_relaxed);
    if (w.exec_since != 0) {
        w.exec_since = now;
    }
}
}  // namespace

namespace detail {
std::atomic<bool> g_profiling{false};

void prof_exec_begin(std::uint64_t now) noexcept {
    if (worker* w = this_worker(); w != nullptr) {
        spin_guard g(w->prof_lock);
        w->exec_since = now;
    }
}

void prof_exec_end(std::uint64_t start, std::uint64_t end, double flops) noexcept {
    if (worker* w = this_worker(); w != nullptr) {
        spin_guard g(w->prof_lock);
        w->exec_ns += end - std::max(start, w->prof_start);
        w->exec_since = 0;
        w->flops += flops;
    }
}
}  // namespace detail

std::uint64_t clock_ns() noexcept { return detail::now_ns(); }
std::uint64_t started_ns() noexcept { return g_rt.t0; }
bool profiling() noexcept { return detail::g_profiling.load(std::memory_order_relaxed); }

bool set_profiling(bool on) noexcept {
    // Under the lifecycle lock: the worker records stay while it is held.
    g_rt.lifecycle.lock.lock();
    const bool was = detail::g_profiling.exchange(on, std::memory_order_relaxed);
    if (on && g_rt.ph == runtime::phase::up) {
        const std::uint64_t now = detail::now_ns();
        for (int i = 0; i < g_rt.nworkers; ++i) {
            spin_guard g(g_rt.workers[i].prof_lock);
            prof_reset_locked(g_rt.workers[i], now);
        }
    }
    g_rt.lifecycle.lock.unlock();
    return was;
}

status worker_profile_take(int w, worker_profile* out) noexcept {
    g_rt.lifecycle.lock.lock();
    if (g_rt.ph != runtime::phase::up) {
        g_rt.lifecycle.lock.unlock();
        return {errc::not_initialized, "task runtime not running"};
    }
    if (w < 0 || w >= g_rt.nworkers) {
        g_rt.lifecycle.lock.unlock();
        MPC_LOG(error, tg, "worker_profile_take: no worker %d (there are %d)", w, g_rt.nworkers);
        return {errc::invalid_argument, "no such worker"};
    }
    worker& k = g_rt.workers[w];
    {
        spin_guard g(k.prof_lock);
        const std::uint64_t now = detail::now_ns();
        if (out != nullptr) {
            const bool on = detail::g_profiling.load(std::memory_order_relaxed);
            out->start_ns = k.prof_start;
            out->total_ns = now - k.prof_start;
            out->executing_ns = k.exec_ns + (on && k.exec_since != 0 ? now - std::max(k.exec_since, k.prof_start) : 0);
            out->sleeping_ns = k.sleep_ns + (on && k.sleep_since != 0 ? now - std::max(k.sleep_since, k.prof_start) : 0);
            out->tasks = k.executed.load(std::memory_order_relaxed) - k.tasks_base;
            out->flops = k.flops;
        }
        prof_reset_locked(k, now);
    }
    g_rt.lifecycle.lock.unlock();
    return {};
}

bool running() noexcept { return g_rt.running.load(std::memory_order_acquire); }

void wait_initialized() noexcept {
    g_rt.lifecycle.lock.lock();
    g_rt.lifecycle.wait_locked([] { return g_rt.ph == runtime::phase::up; }, "starpu_wait_initialized");
}

void pause_workers() noexcept { g_rt.pause_depth.fetch_add(1, std::memory_order_seq_cst); }

void resume_workers() noexcept {
    g_rt.paused.lock.lock();
    int d = g_rt.pause_depth.load(std::memory_order_relaxed);
    do {
        if (d == 0) {
            g_rt.paused.lock.unlock();
            MPC_LOG(warn, tg, "starpu_resume without a starpu_pause: ignored");
            return;
        }
    } while (!g_rt.pause_depth.compare_exchange_weak(d, d - 1, std::memory_order_seq_cst));
    detail::gate::wakeups wk;
    if (d == 1) {
        wk = g_rt.paused.notify_locked();
    }
    g_rt.paused.lock.unlock();
    detail::gate::deliver(wk);
}

int pause_depth() noexcept { return g_rt.pause_depth.load(std::memory_order_relaxed); }
int worker_count() noexcept { return running() ? g_rt.nworkers : 0; }

int current_worker() noexcept {
    worker* w = this_worker();
    return w != nullptr ? w->id : -1;
}

void current_combined(int* id, int* size, int* rank) noexcept {
    worker* w = this_worker();
    *id = w == nullptr ? -1 : (w->comb_id >= 0 ? w->comb_id : w->id);
    *size = w == nullptr ? 1 : w->comb_size;
    *rank = w == nullptr ? 0 : w->comb_rank;
}

namespace detail {
bool help_one() noexcept {
    worker* w = this_worker();
    if (w == nullptr) {
        return false;
    }
    task* t = next_task(*w);
    if (t == nullptr) {
        t = idle_task(*w);
    }
    if (t == nullptr) {
        return false;
    }
    task* outer = w->running;  // the task this worker is inside, whose wait we help
    run(*w, t, 0);
    w->running = outer;
    return true;
}

void set_combined(int id, int size, int rank) noexcept {
    if (worker* w = this_worker(); w != nullptr) {
        w->comb_id = id;
        w->comb_size = size;
        w->comb_rank = rank;
    }
}
}  // namespace detail

int worker_vp(int w) noexcept { return w >= 0 && w < g_rt.nworkers ? g_rt.workers[w].vp : -1; }

// ---- The driver API: workers the application runs in threads of its own.

namespace {

/// Counts the caller inside a driver call for its duration (shutdown waits for none before it
/// frees the worker records); ok() is false once the runtime stops or before it runs.
class driver_call {
public:
    explicit driver_call(const char* call, bool quiet = false) noexcept : call_(call) {
        g_rt.app_inside.fetch_add(1, std::memory_order_seq_cst);
        ok_ = g_rt.running.load(std::memory_order_seq_cst) && !g_rt.stopping.load(std::memory_order_seq_cst);
        if (!ok_ && !quiet) {
            MPC_LOG(error, tg, "%s: the task runtime is not running", call);
        }
    }
    ~driver_call() { g_rt.app_inside.fetch_sub(1, std::memory_order_acq_rel); }
    driver_call(const driver_call&) = delete;
    driver_call& operator=(const driver_call&) = delete;
    bool ok() const noexcept { return ok_; }
    /// The runtime runs and w is a worker the application runs (with `mine`: one the caller
    /// drives): *out is it; else the refusal (logged).
    status find(int w, bool mine, worker** out) const noexcept {
        if (!ok_) {
            return {errc::not_initialized, "task runtime not running"};
        }
        *out = app(w, mine);
        return *out != nullptr ? status{} : status{errc::invalid_argument, "not an application-run worker of the caller"};
    }

private:
    /// Worker w when it is one the application runs and, with `mine`, the caller drives it.
    worker* app(int w, bool mine) const noexcept {
        if (w < 0 || w >= g_rt.nworkers) {
            MPC_LOG(error, tg, "%s: no worker %d (workers 0..%d)", call_, w, g_rt.nworkers - 1);
            return nullptr;
        }
        worker& x = g_rt.workers[w];
        if (!x.app) {
            MPC_LOG(error, tg, "%s: worker %d is run by the runtime; only a driver not launched (starpu_conf::"
                               "not_launched_drivers) is the application's to run", call_, w);
            return nullptr;
        }
        // Only the holder ever sees itself as the owner: it clears the field before letting go.
        if (mine && x.owner.load(std::memory_order_relaxed) != caller_token()) {
            MPC_LOG(error, tg, "%s: worker %d is not driven by this thread (starpu_driver_init first)", call_, w);
            return nullptr;
        }
        return &x;
    }

    const char* call_;
    bool ok_ = false;
};

status take_driver(worker& w, const char* call) noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "%s called from inside a task", call);
        return {errc::busy, "driver from a task"};
    }
    if (w.driven.exchange(true, std::memory_order_acq_rel)) {
        MPC_LOG(error, tg, "%s: worker %d is driven by a thread already (starpu_driver_deinit it first)", call, w.id);
        return {errc::busy, "driven already"};
    }
    w.owner.store(caller_token(), std::memory_order_relaxed);
    return {};
}

}  // namespace

void set_ready_soon_hook(void (*fn)(void* arg, task* t, double us), void* arg) noexcept {
    g_ready_soon_arg.store(arg, std::memory_order_release);
    g_ready_soon.store(fn, std::memory_order_release);
}

void set_watchdog_hook(void (*hook)(void*), void* arg) noexcept {
    g_rt.watchdog_arg.store(arg, std::memory_order_release);
    g_rt.watchdog_hook.store(hook, std::memory_order_release);
}

void set_going_to_sleep(void (*fn)(unsigned)) noexcept { g_rt.going_to_sleep.store(fn, std::memory_order_release); }
void set_waking_up(void (*fn)(unsigned)) noexcept { g_rt.waking_up.store(fn, std::memory_order_release); }

bool app_worker(int w) noexcept { return running() && w >= 0 && w < g_rt.nworkers && g_rt.workers[w].app; }

status driver_init(int w) noexcept {
    driver_call c("driver_init");
    worker* x = nullptr;
    if (status st = c.find(w, false, &x); !st.ok()) {
        return st;
    }
    return take_driver(*x, "driver_init");
}

status driver_run_once(int w, bool* ran) noexcept {
    if (ran != nullptr) {
        *ran = false;
    }
    driver_call c("driver_run_once");
    worker* x = nullptr;
    if (status st = c.find(w, true, &x); !st.ok()) {
        return st;
    }
    if (detail::in_task()) {
        MPC_LOG(error, tg, "driver_run_once called from inside a task");
        return {errc::busy, "driver from a task"};
    }
    acting_as as(*x);
    const bool one = run_one(*x);
    if (ran != nullptr) {
        *ran = one;
    }
    return {};
}

status driver_deinit(int w) noexcept {
    driver_call c("driver_deinit");
    worker* x = nullptr;
    if (status st = c.find(w, true, &x); !st.ok()) {
        return st;
    }
    release_driver(*x);
    return {};
}

status driver_run(int w) noexcept {
    driver_call c("driver_run");
    worker* x = nullptr;
    if (status st = c.find(w, false, &x); !st.ok()) {
        return st;
    }
    if (status st = take_driver(*x, "driver_run"); !st.ok()) {
        return st;
    }
    {
        acting_as as(*x);
        serve(x);  // until drivers_request_termination() or shutdown
    }
    MPC_LOG(debug, tg, "worker %d (the application's thread) ends its run after %llu tasks", x->id,
            static_cast<unsigned long long>(x->executed.load(std::memory_order_relaxed)));
    release_driver(*x);
    return {};
}

void drivers_request_termination() noexcept {
    driver_call c("drivers_request_termination", true);  // a no-op outside a run
    g_rt.drivers_stop.store(true, std::memory_order_seq_cst);
    if (!c.ok()) {
        return;
    }
    for (int i = 0; i < g_rt.nworkers; ++i) {
        if (g_rt.workers[i].app) {
            kick(g_rt.workers[i]);
        }
    }
}
const char* policy_name() noexcept { return g_rt.policy_name; }

void priority_range(int* min, int* max) noexcept {
    const bool buckets = running() && g_rt.buckets_configured;
    *min = buckets ? 0 : min_priority;
    *max = buckets ? 0 : max_priority;
}

namespace {

/// tasks_ready(): one counter per VP (and one for other threads), each on its own line, so
/// that counting a task costs no cross-core transfer; a task may be counted in on one VP and
/// out on another, only the sum means anything.
struct alignas(64) ready_stripe {
    std::atomic<long> n{0};
};
ready_stripe g_ready[sched::max_vps + 1];
std::atomic<int> g_ready_waiters{0};

std::atomic<int> g_ready_hi{0};  ///< stripes [0, hi) were used (an engine restart may have fewer VPs)

/// VP vp's stripe (0 <= vp < max_vps), recorded as used.
ready_stripe& stripe_of(int vp) noexcept {
    if (g_ready_hi.load(std::memory_order_relaxed) <= vp) [[unlikely]] {
        int hi = g_ready_hi.load(std::memory_order_relaxed);
        while (hi <= vp && !g_ready_hi.compare_exchange_weak(hi, vp + 1, std::memory_order_relaxed)) {
        }
    }
    return g_ready[vp];
}

bool none_ready(void*) { return tasks_ready() == 0; }

}  // namespace

namespace {
void ready_add(int delta) noexcept {
    const int vp = sched::current_vp();
    if (vp >= 0 && vp < sched::max_vps) {
        // A VP's stripe has one writer, the VP itself (its ULTs run one at a time and do not
        // switch here): a plain load and store, no locked instruction on the task path.
        std::atomic<long>& n = stripe_of(vp).n;
        n.store(n.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    } else {
        g_ready[sched::max_vps].n.fetch_add(delta, std::memory_order_relaxed);
    }
}
}  // namespace

void detail::ready_count(task* t) noexcept {
    t->counted_ready = true;
    ready_add(1);
}

void detail::ready_uncount() noexcept {
    ready_add(-1);
    if (g_ready_waiters.load(std::memory_order_relaxed) != 0) [[unlikely]] {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        wake_in_flight_waiters();
    }
}

long tasks_ready() noexcept {
    long sum = g_ready[sched::max_vps].n.load(std::memory_order_relaxed);
    const int n = g_ready_hi.load(std::memory_order_relaxed);
    for (int v = 0; v < n; ++v) {
        sum += g_ready[v].n.load(std::memory_order_relaxed);
    }
    return sum > 0 ? sum : 0;  // a stripe may be read before another's matching count
}

status wait_for_no_ready() noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "wait_for_no_ready called from inside a task or callback: it would wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    g_ready_waiters.fetch_add(1, std::memory_order_seq_cst);
    // Woken by each end while this waits (ready_count), or when nothing is in flight.
    while (tasks_ready() != 0 && detail::wait_in_flight(&none_ready, nullptr, "mpc::tg::wait_for_no_ready")) {
        if (tasks_ready() == 0) {
            break;
        }
    }
    g_ready_waiters.fetch_sub(1, std::memory_order_seq_cst);
    return {};
}

status wait_for_all() noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "wait_for_all called from inside a task or callback: it would wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    return wait_for_n_submitted(0);
}

status wait_for_n_submitted(long n) noexcept {
    if (detail::in_task()) {
        MPC_LOG(error, tg, "wait_for_n_submitted called from inside a task or callback: it may wait for ever");
        return {errc::busy, "blocking call from a task"};
    }
    if (n < 0) {
        return {errc::invalid_argument, "negative task count"};
    }
    g_rt.all_done.lock.lock();
    g_rt.all_done.wait_locked(
        [n] {
            // Threshold first, then the count (see runtime::all_done).
            if (g_rt.notify_at.load(std::memory_order_relaxed) < n) {
                g_rt.notify_at.store(n, std::memory_order_seq_cst);
            }
            return g_rt.inflight.load(std::memory_order_seq_cst) <= n;
        },
        n == 0 ? "mpc::tg::wait_for_all" : "mpc::tg::wait_for_n_submitted");
    return {};
}

long tasks_in_flight() noexcept { return g_rt.inflight.load(std::memory_order_relaxed); }

}  // namespace mpc::tg
