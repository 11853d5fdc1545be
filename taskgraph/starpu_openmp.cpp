/// \file
/// StarPU 1.3's OpenMP runtime support (starpu_openmp.h): parallel regions and their
/// worksharing constructs over the task runtime.
///
/// A parallel region of n threads (n <= the workers) is n implicit tasks, task i pinned to
/// worker i; the encountering thread waits for them (it is no member of the team: the team's
/// threads are workers, so that starpu_worker_get_id() answers in them, as in StarPU). A region
/// met inside a region runs with a team of one on the encountering thread: its workers are the
/// outer team's, which wait in that team's barriers. Each implicit task's OpenMP state (its
/// region, thread number, construct counters, ICVs) is a ULT-local value of the worker running
/// it, saved and restored around the task so that a team of one nests.
///
/// Synchronisation parks ULTs (detail::gate): barriers, critical sections, locks, ordered
/// iterations, copyprivate. Worksharing constructs are numbered per thread, as in StarPU: the
/// k-th loop (single, sections) a thread meets is the team's k-th, whose record the first
/// thread to arrive makes and the last to leave frees.
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/gate.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace {

using mpc::spin_guard;
using mpc::spinlock;
using mpc::tg::detail::gate;

/// The internal control variables the OpenMP API reads and sets.
struct icvs {
    int nthreads = 1;
    bool dyn = false;
    bool nest = false;
    starpu_omp_sched_value sched = starpu_omp_sched_static;
    int chunk = 0;
    int thread_limit = 1;
    int max_active_levels = 1;
    bool cancellation = false;
    int default_device = 0;
    int max_task_priority = 0;
    starpu_omp_proc_bind_value bind = starpu_omp_proc_bind_false;
};

using mpc::tg::detail::blocking_mutex;

/// A worksharing construct of a team: the k-th loop, or the k-th sections.
struct workshare {
    unsigned long id = 0;
    unsigned long long next = 0;  ///< the next iteration (or section) to hand out
    int done = 0;                 ///< threads that left it
    unsigned long long ordered = 0;  ///< the iteration whose ordered part may run now
    gate ordered_g;
};

struct region {
    int n = 1;
    int level = 0;
    int active_level = 0;
    region* parent = nullptr;
    int parent_num = 0;  ///< the encountering thread's number in the parent
    void (*fn)(void**, void*) = nullptr;
    void** buffers = nullptr;
    void* arg = nullptr;
    icvs inherit;  ///< the implicit tasks' ICVs
    // The barrier.
    gate bar;
    int bar_count = 0;
    unsigned long bar_gen = 0;
    // Worksharing.
    spinlock lock;
    std::list<workshare> loops;
    std::list<workshare> sections;
    std::atomic<unsigned long> single_id{0};
    void* copy_private = nullptr;
    // The end: implicit tasks not finished.
    gate end;
    int left = 0;
    std::atomic<long> ntasks{0};  ///< explicit tasks of the region not finished
    std::atomic<bool> tasks_made{false};  ///< an explicit task was made in the region
};

struct taskgroup {
    std::atomic<long> count{0};  ///< tasks made in it (and their descendants) not finished
    taskgroup* outer = nullptr;
};

/// What counts a task's children: an implicit task's lives on its worker's stack until the
/// region's end (after every explicit task of the region); an explicit task's on the heap,
/// referenced by itself and by each child not finished.
struct task_rec {
    std::atomic<int> refs{1};
    std::atomic<long> children{0};
    taskgroup* group = nullptr;
    bool final = false;
    bool heap = false;
};

/// An explicit task: its record, what it runs, and its codelet (the application's, with our
/// function in place of its CPU function).
struct explicit_task : task_rec {
    region* r = nullptr;
    task_rec* parent = nullptr;  ///< referenced until this task ends
    icvs icv;
    void (*fn)(void**, void*) = nullptr;
    void* arg = nullptr;
    bool arg_free = false;
    starpu_codelet cl{};
    uint32_t workers[(STARPU_NMAXWORKERS + 31) / 32] = {};
    std::atomic<bool> done{false};
};

void unref(task_rec* t) noexcept {
    if (t->heap && t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete static_cast<explicit_task*>(t);
    }
}

/// An implicit task's state.
struct omp_thread {
    region* r = nullptr;
    int num = 0;
    icvs icv;
    task_rec own;               ///< an implicit task's record
    task_rec* task = &own;      ///< the running task's record
    bool initial = false;       ///< the program's initial task
    unsigned long single_id = 0;
    unsigned long loop_id = 0;
    unsigned long sections_id = 0;
    bool single_first = false;
    unsigned long long ordered_first = 0;
    unsigned long long ordered_nb = 0;
};

region g_initial_region;
omp_thread g_initial;  ///< the initial thread's (the program's)
icvs g_global;         ///< the ICVs read from the environment at init
bool g_up = false;
int g_key = -1;        ///< sched key: the running implicit task's omp_thread

omp_thread* me() noexcept {
    if (g_key >= 0) {
        if (void* p = mpc::sched::get_specific(g_key); p != nullptr) {
            return static_cast<omp_thread*>(p);
        }
    }
    return &g_initial;
}

// ---- the environment ---------------------------------------------------------------------------

bool env_bool(const char* name, bool def) {
    const char* s = std::getenv(name);
    if (s == nullptr || *s == '\0') {
        return def;
    }
    std::string v;
    for (const char* p = s; *p != '\0'; ++p) {
        if (!std::isspace(static_cast<unsigned char>(*p))) {
            v += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
        }
    }
    if (v == "true" || v == "1") {
        return true;
    }
    if (v == "false" || v == "0") {
        return false;
    }
    MPC_LOG(warn, tg, "%s=%s: expected true or false; ignored", name, s);
    return def;
}

/// The first number of a comma-separated list (OMP_NUM_THREADS "4, 16, 2"), or def.
int env_int(const char* name, int def, int min) {
    const char* s = std::getenv(name);
    if (s == nullptr || *s == '\0') {
        return def;
    }
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || v < min) {
        MPC_LOG(warn, tg, "%s=%s: expected a number >= %d; ignored", name, s, min);
        return def;
    }
    return static_cast<int>(v);
}

void read_schedule(icvs* c) {
    const char* s = std::getenv("OMP_SCHEDULE");
    if (s == nullptr || *s == '\0') {
        return;
    }
    std::string v(s);
    std::string kind = v.substr(0, v.find(','));
    kind.erase(std::remove_if(kind.begin(), kind.end(), [](unsigned char ch) { return std::isspace(ch); }), kind.end());
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const std::pair<const char*, starpu_omp_sched_value> names[] = {{"static", starpu_omp_sched_static},
                                                                  {"dynamic", starpu_omp_sched_dynamic},
                                                                  {"guided", starpu_omp_sched_guided},
                                                                  {"auto", starpu_omp_sched_auto}};
    bool known = false;
    for (const auto& [n, k] : names) {
        if (kind == n) {
            c->sched = k;
            known = true;
        }
    }
    if (!known) {
        MPC_LOG(warn, tg, "OMP_SCHEDULE=%s: expected static, dynamic, guided or auto[,chunk]; ignored", s);
        return;
    }
    if (const std::size_t comma = v.find(','); comma != std::string::npos) {
        c->chunk = std::max(0, std::atoi(v.c_str() + comma + 1));
    }
}

void read_proc_bind(icvs* c) {
    const char* s = std::getenv("OMP_PROC_BIND");
    if (s == nullptr || *s == '\0') {
        return;
    }
    std::string first(s);
    first = first.substr(0, first.find(','));
    first.erase(std::remove_if(first.begin(), first.end(), [](unsigned char ch) { return std::isspace(ch); }), first.end());
    std::transform(first.begin(), first.end(), first.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const std::pair<const char*, starpu_omp_proc_bind_value> names[] = {
        {"false", starpu_omp_proc_bind_false}, {"true", starpu_omp_proc_bind_true},
        {"master", starpu_omp_proc_bind_master}, {"close", starpu_omp_proc_bind_close},
        {"spread", starpu_omp_proc_bind_spread}};
    for (const auto& [n, k] : names) {
        if (first == n) {
            c->bind = k;
            return;
        }
    }
    MPC_LOG(warn, tg, "OMP_PROC_BIND=%s: expected false, true, master, close or spread; ignored", s);
}

void display_env(const icvs& c) {
    const char* s = std::getenv("OMP_DISPLAY_ENV");
    if (s == nullptr || (std::strcmp(s, "true") != 0 && std::strcmp(s, "TRUE") != 0 && std::strcmp(s, "verbose") != 0 &&
                         std::strcmp(s, "VERBOSE") != 0)) {
        return;
    }
    const char* sched[] = {"undefined", "static", "dynamic", "guided", "auto", "runtime"};
    const char* bind[] = {"false", "true", "master", "close", "spread"};
    std::fprintf(stderr, "OPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '201307'\n  OMP_DYNAMIC = '%s'\n"
                         "  OMP_NESTED = '%s'\n  OMP_NUM_THREADS = '%d'\n  OMP_SCHEDULE = '%s,%d'\n"
                         "  OMP_PROC_BIND = '%s'\n  OMP_THREAD_LIMIT = '%d'\n  OMP_MAX_ACTIVE_LEVELS = '%d'\n"
                         "  OMP_CANCELLATION = '%s'\n  OMP_DEFAULT_DEVICE = '%d'\n  OMP_MAX_TASK_PRIORITY = '%d'\n"
                         "OPENMP DISPLAY ENVIRONMENT END\n",
                 c.dyn ? "TRUE" : "FALSE", c.nest ? "TRUE" : "FALSE", c.nthreads, sched[c.sched], c.chunk,
                 c.bind >= 0 ? bind[c.bind] : "undefined", c.thread_limit, c.max_active_levels,
                 c.cancellation ? "TRUE" : "FALSE", c.default_device, c.max_task_priority);
}

// ---- critical sections and the atomic fallback ----------------------------------------------------

spinlock g_criticals_lock;
std::map<std::string, std::unique_ptr<blocking_mutex>>* g_criticals = nullptr;
blocking_mutex g_atomic;

blocking_mutex& critical_of(const char* name) {
    spin_guard g(g_criticals_lock);
    if (g_criticals == nullptr) {
        g_criticals = new std::map<std::string, std::unique_ptr<blocking_mutex>>;
    }
    std::unique_ptr<blocking_mutex>& m = (*g_criticals)[name != nullptr ? name : ""];
    if (!m) {
        m = std::make_unique<blocking_mutex>();
    }
    return *m;
}

// ---- implicit tasks ------------------------------------------------------------------------------

struct implicit_arg {
    region* r;
    int num;
};

void implicit_task(void** /*buffers*/, void* p) {
    auto* a = static_cast<implicit_arg*>(p);
    region* r = a->r;
    omp_thread t;
    t.r = r;
    t.num = a->num;
    t.icv = r->inherit;
    void* saved = mpc::sched::get_specific(g_key);
    mpc::sched::set_specific(g_key, &t).ignore();
    r->fn(r->buffers, r->arg);
    starpu_omp_barrier();  // the region's implicit barrier: its explicit tasks end first
    mpc::sched::set_specific(g_key, saved).ignore();
    r->end.lock.lock();
    const bool last = --r->left == 0;
    gate::wakeups w;
    if (last) {
        w = r->end.notify_locked();
    }
    r->end.lock.unlock();
    gate::deliver(w);
}

/// The implicit tasks' codelet (filled at init: a codelet is not copied, its deprecated fields
/// would be).
starpu_codelet g_implicit_cl{};

workshare& workshare_begin(std::list<workshare>& l, spinlock& lock, unsigned long id) {
    spin_guard g(lock);
    for (workshare& w : l) {
        if (w.id == id) {
            return w;
        }
    }
    l.emplace_back();
    l.back().id = id;
    return l.back();
}

void workshare_end(region* r, std::list<workshare>& l, workshare& w) {
    spin_guard g(r->lock);
    if (++w.done == r->n) {
        for (auto it = l.begin(); it != l.end(); ++it) {
            if (&*it == &w) {
                l.erase(it);
                break;
            }
        }
    }
}

/// The next chunk of loop w for thread t: first and count (0: none left).
void next_chunk(omp_thread* t, workshare& w, bool first_call, unsigned long long n, unsigned long long chunk,
                int schedule, unsigned long long* first, unsigned long long* nb) {
    region* r = t->r;
    const auto nt = static_cast<unsigned long long>(r->n);
    const auto rank = static_cast<unsigned long long>(t->num);
    *nb = 0;
    if (schedule == starpu_omp_sched_runtime) {
        schedule = t->icv.sched;
        chunk = static_cast<unsigned long long>(t->icv.chunk);
    }
    if (schedule == starpu_omp_sched_auto || schedule == starpu_omp_sched_undefined) {
        schedule = starpu_omp_sched_static;
    }
    if (schedule == starpu_omp_sched_static) {
        if (chunk > 0) {
            // Chunks rank, rank + nt, rank + 2 nt... of `chunk` iterations each.
            const unsigned long long start = first_call ? rank * chunk : *first + nt * chunk;
            if (start < n) {
                *first = start;
                *nb = std::min(chunk, n - start);
            }
        } else if (first_call) {
            // One block per thread, the first n % nt threads one iteration more.
            const unsigned long long base = n / nt;
            const unsigned long long extra = n % nt;
            *nb = base + (rank < extra ? 1 : 0);
            *first = rank * base + std::min(rank, extra);
        }
    } else {
        if (chunk == 0) {
            chunk = 1;
        }
        spin_guard g(r->lock);
        if (w.next < n) {
            unsigned long long take = chunk;
            if (schedule == starpu_omp_sched_guided) {
                take = std::max(chunk, (n - w.next) / nt);
            }
            *first = w.next;
            *nb = std::min(take, n - w.next);
            w.next += *nb;
        }
    }
    t->ordered_first = *first;
    t->ordered_nb = *nb;
}

int for_step(bool first_call, unsigned long long n, unsigned long long chunk, int schedule, int /*ordered*/,
             unsigned long long* first, unsigned long long* nb) {
    omp_thread* t = me();
    region* r = t->r;
    workshare& w = workshare_begin(r->loops, r->lock, t->loop_id);
    next_chunk(t, w, first_call, n, chunk, schedule, first, nb);
    if (*nb == 0) {
        workshare_end(r, r->loops, w);
        ++t->loop_id;
    }
    return *nb != 0 ? 1 : 0;
}

workshare* current_loop(omp_thread* t) {
    spin_guard g(t->r->lock);
    for (workshare& w : t->r->loops) {
        if (w.id == t->loop_id) {
            return &w;
        }
    }
    return nullptr;
}

void sections_run(unsigned long long nb, void (*one)(unsigned long long i, void* ctx), void* ctx, int nowait) {
    omp_thread* t = me();
    region* r = t->r;
    workshare& w = workshare_begin(r->sections, r->lock, t->sections_id);
    for (;;) {
        unsigned long long i = 0;
        {
            spin_guard g(r->lock);
            if (w.next >= nb) {
                break;
            }
            i = w.next++;
        }
        one(i, ctx);
    }
    workshare_end(r, r->sections, w);
    ++t->sections_id;
    if (nowait == 0) {
        starpu_omp_barrier();
    }
}

/// Runs the tasks this worker may take until done() (OpenMP's task scheduling point); a thread
/// that is no worker only yields.
template <class Done>
void help_until(Done&& done) {
    while (!done()) {
        if (!mpc::tg::detail::help_one()) {
            mpc::sched::yield();
        }
    }
}

/// The explicit task's body, on a worker of its team.
void explicit_exec(void** buffers, void* p) {
    auto* e = static_cast<explicit_task*>(p);
    omp_thread t;
    t.r = e->r;
    const int w = starpu_worker_get_id();
    t.num = w >= 0 && w < e->r->n ? w : 0;
    t.icv = e->icv;
    t.task = e;
    void* saved = mpc::sched::get_specific(g_key);
    mpc::sched::set_specific(g_key, &t).ignore();
    e->fn(buffers, e->arg);
    mpc::sched::set_specific(g_key, saved).ignore();
}

/// Its end (the task's callback): its parent's, group's and region's counts, then its record.
void explicit_end(void* p) {
    auto* e = static_cast<explicit_task*>(p);
    if (e->arg_free) {
        std::free(e->arg);
    }
    e->parent->children.fetch_sub(1, std::memory_order_acq_rel);
    if (e->group != nullptr) {
        e->group->count.fetch_sub(1, std::memory_order_acq_rel);
    }
    region* r = e->r;
    task_rec* parent = e->parent;
    e->done.store(true, std::memory_order_release);
    unref(parent);
    r->ntasks.fetch_sub(1, std::memory_order_acq_rel);  // last: the region may end from here on
    unref(e);
}

/// Runs a task at once on the encountering thread (included or merged), its data acquired.
void run_included(const starpu_omp_task_region_attr* attr, omp_thread* t, bool final) {
    const int nbuf = std::max(0, attr->cl.nbuffers);
    std::unique_ptr<void*[]> ifaces(new void*[static_cast<std::size_t>(nbuf > 0 ? nbuf : 1)]);
    const bool acquire = starpu_worker_get_id() < 0;  // a worker inside a task may not acquire
    for (int i = 0; i < nbuf; ++i) {
        if (acquire) {
            const starpu_data_access_mode m = attr->cl.modes[i] != STARPU_NONE ? attr->cl.modes[i] : STARPU_RW;
            if (starpu_data_acquire(attr->handles[i], static_cast<starpu_data_access_mode>(m & (STARPU_R | STARPU_W))) != 0) {
                mpc::tg::starpu::fatal("starpu_omp_task_region", "cannot acquire a handle of an included task");
            }
        }
        ifaces[static_cast<std::size_t>(i)] = starpu_data_get_interface_on_node(attr->handles[i], STARPU_MAIN_RAM);
    }
    const bool was_final = t->task->final;
    t->task->final = final;
    attr->cl.cpu_funcs[0](ifaces.get(), attr->cl_arg);
    t->task->final = was_final;
    if (acquire) {
        for (int i = 0; i < nbuf; ++i) {
            starpu_data_release(attr->handles[i]);
        }
    }
    if (attr->cl_arg_free != 0) {
        std::free(attr->cl_arg);
    }
}

/// detail::g_data_scope while the OpenMP support runs: the running explicit task, else the
/// region of the implicit task (the initial region for the program).
const void* data_scope() {
    omp_thread* t = me();
    return t->task->heap ? static_cast<const void*>(t->task) : static_cast<const void*>(t->r);
}

struct nest_lock {
    blocking_mutex m;
    std::atomic<omp_thread*> owner{nullptr};
    int count = 0;  ///< under m
};

}  // namespace

extern "C" {

int starpu_omp_init(void) noexcept {
    if (g_up) {
        return 0;
    }
    if (int rc = starpu_init(nullptr); rc != 0) {
        return rc;
    }
    if (g_key < 0) {
        mpc::result<mpc::sched::key> k = mpc::sched::key_create();
        if (!k) {
            starpu_shutdown();
            return -ENOMEM;
        }
        g_key = *k;
    }
    const int nw = static_cast<int>(starpu_worker_get_count());
    icvs c;
    c.nthreads = env_int("OMP_NUM_THREADS", nw, 1);
    c.dyn = env_bool("OMP_DYNAMIC", false);
    c.nest = env_bool("OMP_NESTED", false);
    read_schedule(&c);
    const int limit = env_int("OMP_THREAD_LIMIT", nw, 0);
    c.thread_limit = limit > 0 ? limit : nw;
    c.max_active_levels = env_int("OMP_MAX_ACTIVE_LEVELS", 1, 0);
    c.cancellation = env_bool("OMP_CANCELLATION", false);
    c.default_device = env_int("OMP_DEFAULT_DEVICE", 0, 0);
    c.max_task_priority = env_int("OMP_MAX_TASK_PRIORITY", 0, 0);
    read_proc_bind(&c);
    display_env(c);
    g_global = c;
    g_initial_region.n = 1;  // the initial team: the program alone
    g_initial_region.single_id.store(0, std::memory_order_relaxed);
    g_initial.r = &g_initial_region;
    g_initial.num = 0;
    g_initial.icv = c;
    g_initial.initial = true;
    g_initial.task = &g_initial.own;
    g_initial.own.group = nullptr;
    g_initial.single_id = g_initial.loop_id = g_initial.sections_id = 0;
    g_implicit_cl.cpu_funcs[0] = implicit_task;
    g_implicit_cl.nbuffers = 0;
    g_implicit_cl.name = "omp_implicit_task";
    g_up = true;
    mpc::tg::detail::g_data_scope.store(&data_scope, std::memory_order_release);
    return 0;
}

void starpu_omp_shutdown(void) noexcept {
    if (!g_up) {
        return;
    }
    g_up = false;
    mpc::tg::detail::g_data_scope.store(nullptr, std::memory_order_release);
    starpu_shutdown();
}

void starpu_omp_parallel_region(const struct starpu_omp_parallel_region_attr* attr) noexcept {
    if (!g_up) {
        mpc::tg::starpu::fatal("starpu_omp_parallel_region", "starpu_omp_init was not called");
    }
    if (attr == nullptr || attr->cl.cpu_funcs[0] == nullptr) {
        mpc::tg::starpu::fatal("starpu_omp_parallel_region", "the region's codelet needs a CPU function");
    }
    omp_thread* t = me();
    const int nw = static_cast<int>(starpu_worker_get_count());
    int n = attr->if_clause != 0 ? (attr->num_threads > 0 ? attr->num_threads : t->icv.nthreads) : 1;
    // A team of one inside a team (its workers are the outer team's) and beyond the active levels.
    if (t->r->level > 0 || t->r->active_level >= t->icv.max_active_levels) {
        n = 1;
    }
    n = std::max(1, std::min({n, nw, t->icv.thread_limit}));
    region r;
    r.n = n;
    r.level = t->r->level + 1;
    r.active_level = t->r->active_level + (n > 1 ? 1 : 0);
    r.parent = t->r;
    r.parent_num = t->num;
    r.fn = attr->cl.cpu_funcs[0];
    r.arg = attr->cl_arg;
    r.inherit = t->icv;
    const int nbuf = std::max(0, attr->cl.nbuffers);
    std::unique_ptr<void*[]> bufs(new void*[static_cast<std::size_t>(nbuf > 0 ? nbuf : 1)]);
    const bool from_worker = starpu_worker_get_id() >= 0;
    for (int i = 0; i < nbuf; ++i) {
        starpu_data_handle_t h = attr->handles[i];
        if (!from_worker) {
            // The implicit tasks use the data: the encountering thread holds it for them.
            starpu_data_access_mode m = attr->cl.modes[i] != STARPU_NONE ? attr->cl.modes[i] : STARPU_RW;
            if (starpu_data_acquire(h, static_cast<starpu_data_access_mode>(m & (STARPU_R | STARPU_W))) != 0) {
                mpc::tg::starpu::fatal("starpu_omp_parallel_region", "cannot acquire a handle of the region");
            }
        }
        bufs[static_cast<std::size_t>(i)] = starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM);
    }
    r.buffers = bufs.get();
    if (n == 1) {
        implicit_arg a{&r, 0};
        r.left = 1;
        implicit_task(nullptr, &a);
    } else {
        std::unique_ptr<implicit_arg[]> args(new implicit_arg[static_cast<std::size_t>(n)]);
        r.left = n;
        for (int i = 0; i < n; ++i) {
            args[static_cast<std::size_t>(i)] = implicit_arg{&r, i};
            starpu_task* task = starpu_task_create();
            task->cl = &g_implicit_cl;
            task->cl_arg = &args[static_cast<std::size_t>(i)];
            task->execute_on_a_specific_worker = 1;
            task->workerid = static_cast<unsigned>(i);
            task->sched_ctx = 0;
            if (int rc = starpu_task_submit(task); rc != 0) {
                mpc::tg::starpu::fatal("starpu_omp_parallel_region", "cannot submit an implicit task");
            }
        }
        r.end.lock.lock();
        r.end.wait_locked([&r] { return r.left == 0; }, "starpu_omp_parallel_region (its implicit tasks)");
    }
    if (!from_worker) {
        for (int i = 0; i < nbuf; ++i) {
            starpu_data_release(attr->handles[i]);
        }
    }
    if (attr->cl_arg_free != 0) {
        std::free(attr->cl_arg);
    }
}

void starpu_omp_master(void (*f)(void* arg), void* arg) noexcept {
    if (starpu_omp_master_inline() != 0) {
        f(arg);
    }
}

int starpu_omp_master_inline(void) noexcept { return me()->num == 0 ? 1 : 0; }

void starpu_omp_barrier(void) noexcept {
    // Everyone waits until all have arrived and the region has no explicit task left. Until the
    // region makes its first task, waiters park; from then on they run the region's tasks while
    // they wait (OpenMP's task scheduling point), the task's maker waking the parked ones.
    region* r = me()->r;
    r->bar.lock.lock();
    const unsigned long gen = r->bar_gen;
    ++r->bar_count;
    for (;;) {
        if (r->bar_gen != gen) {
            r->bar.lock.unlock();
            return;
        }
        if (r->bar_count == r->n && r->ntasks.load(std::memory_order_acquire) == 0) {
            r->bar_count = 0;
            ++r->bar_gen;
            gate::wakeups w = r->bar.notify_locked();
            r->bar.lock.unlock();
            gate::deliver(w);
            return;
        }
        if (r->tasks_made.load(std::memory_order_acquire)) {
            r->bar.lock.unlock();
            if (!mpc::tg::detail::help_one()) {
                mpc::sched::yield();
            }
            r->bar.lock.lock();
            continue;
        }
        r->bar.wait_locked(
            [r, gen] {
                return r->bar_gen != gen || r->bar_count == r->n || r->tasks_made.load(std::memory_order_acquire);
            },
            "starpu_omp_barrier");
        r->bar.lock.lock();
    }
}

void starpu_omp_critical(void (*f)(void* arg), void* arg, const char* name) noexcept {
    starpu_omp_critical_inline_begin(name);
    f(arg);
    starpu_omp_critical_inline_end(name);
}

void starpu_omp_critical_inline_begin(const char* name) noexcept { critical_of(name).lock(); }
void starpu_omp_critical_inline_end(const char* name) noexcept { critical_of(name).unlock(); }

void starpu_omp_single(void (*f)(void* arg), void* arg, int nowait) noexcept {
    if (starpu_omp_single_inline() != 0) {
        f(arg);
    }
    if (nowait == 0) {
        starpu_omp_barrier();
    }
}

int starpu_omp_single_inline(void) noexcept {
    omp_thread* t = me();
    unsigned long expected = t->single_id;
    const bool first = t->r->single_id.compare_exchange_strong(expected, t->single_id + 1);
    ++t->single_id;
    return first ? 1 : 0;
}

void starpu_omp_single_copyprivate(void (*f)(void* arg, void* data, unsigned long long data_size), void* arg,
                                   void* data, unsigned long long data_size) noexcept {
    omp_thread* t = me();
    const bool first = starpu_omp_single_inline() != 0;
    if (first) {
        t->r->copy_private = data;
        f(arg, data, data_size);
    }
    starpu_omp_barrier();
    if (!first) {
        std::memcpy(data, t->r->copy_private, data_size);
    }
    starpu_omp_barrier();
}

void* starpu_omp_single_copyprivate_inline_begin(void* data) noexcept {
    omp_thread* t = me();
    if (starpu_omp_single_inline() != 0) {
        t->single_first = true;
        t->r->copy_private = data;
        return nullptr;
    }
    starpu_omp_barrier();  // the single thread's data is filled
    return t->r->copy_private;
}

void starpu_omp_single_copyprivate_inline_end(void) noexcept {
    omp_thread* t = me();
    if (t->single_first) {
        t->single_first = false;
        starpu_omp_barrier();  // the others' barrier of _begin
    }
    starpu_omp_barrier();  // everyone has copied
}

int starpu_omp_for_inline_first(unsigned long long nb_iterations, unsigned long long chunk, int schedule, int ordered,
                                unsigned long long* _first_i, unsigned long long* _nb_i) noexcept {
    return for_step(true, nb_iterations, chunk, schedule, ordered, _first_i, _nb_i);
}

int starpu_omp_for_inline_next(unsigned long long nb_iterations, unsigned long long chunk, int schedule, int ordered,
                               unsigned long long* _first_i, unsigned long long* _nb_i) noexcept {
    return for_step(false, nb_iterations, chunk, schedule, ordered, _first_i, _nb_i);
}

int starpu_omp_for_inline_first_alt(unsigned long long nb_iterations, unsigned long long chunk, int schedule,
                                    int ordered, unsigned long long* _begin_i, unsigned long long* _end_i) noexcept {
    unsigned long long nb = 0;
    const int more = starpu_omp_for_inline_first(nb_iterations, chunk, schedule, ordered, _begin_i, &nb);
    *_end_i = *_begin_i + nb;
    return more;
}

int starpu_omp_for_inline_next_alt(unsigned long long nb_iterations, unsigned long long chunk, int schedule,
                                   int ordered, unsigned long long* _begin_i, unsigned long long* _end_i) noexcept {
    unsigned long long nb = 0;
    const int more = starpu_omp_for_inline_next(nb_iterations, chunk, schedule, ordered, _begin_i, &nb);
    *_end_i = *_begin_i + nb;
    return more;
}

void starpu_omp_for(void (*f)(unsigned long long _first_i, unsigned long long _nb_i, void* arg), void* arg,
                    unsigned long long nb_iterations, unsigned long long chunk, int schedule, int ordered,
                    int nowait) noexcept {
    unsigned long long first = 0;
    unsigned long long nb = 0;
    if (starpu_omp_for_inline_first(nb_iterations, chunk, schedule, ordered, &first, &nb) != 0) {
        do {
            f(first, nb, arg);
        } while (starpu_omp_for_inline_next(nb_iterations, chunk, schedule, ordered, &first, &nb) != 0);
    }
    if (nowait == 0) {
        starpu_omp_barrier();
    }
}

void starpu_omp_for_alt(void (*f)(unsigned long long _begin_i, unsigned long long _end_i, void* arg), void* arg,
                        unsigned long long nb_iterations, unsigned long long chunk, int schedule, int ordered,
                        int nowait) noexcept {
    unsigned long long begin = 0;
    unsigned long long end = 0;
    if (starpu_omp_for_inline_first_alt(nb_iterations, chunk, schedule, ordered, &begin, &end) != 0) {
        do {
            f(begin, end, arg);
        } while (starpu_omp_for_inline_next_alt(nb_iterations, chunk, schedule, ordered, &begin, &end) != 0);
    }
    if (nowait == 0) {
        starpu_omp_barrier();
    }
}

void starpu_omp_ordered(void (*f)(void* arg), void* arg) noexcept {
    starpu_omp_ordered_inline_begin();
    f(arg);
    starpu_omp_ordered_inline_end();
}

void starpu_omp_ordered_inline_begin(void) noexcept {
    omp_thread* t = me();
    workshare* w = current_loop(t);
    if (w == nullptr || t->ordered_nb == 0) {
        mpc::tg::starpu::fatal("starpu_omp_ordered", "not inside an iteration of an ordered loop");
    }
    const unsigned long long i = t->ordered_first++;
    --t->ordered_nb;
    w->ordered_g.lock.lock();
    w->ordered_g.wait_locked([w, i] { return w->ordered == i; }, "starpu_omp_ordered (an earlier iteration)");
}

void starpu_omp_ordered_inline_end(void) noexcept {
    omp_thread* t = me();
    workshare* w = current_loop(t);
    if (w == nullptr) {
        mpc::tg::starpu::fatal("starpu_omp_ordered_inline_end", "not inside an ordered loop");
    }
    w->ordered_g.lock.lock();
    ++w->ordered;
    gate::wakeups wk = w->ordered_g.notify_locked();
    w->ordered_g.lock.unlock();
    gate::deliver(wk);
}

void starpu_omp_sections(unsigned long long nb_sections, void (**section_f)(void* arg), void** section_arg,
                         int nowait) noexcept {
    struct ctx {
        void (**f)(void*);
        void** arg;
    } c{section_f, section_arg};
    sections_run(
        nb_sections, [](unsigned long long i, void* p) {
            auto* x = static_cast<ctx*>(p);
            x->f[i](x->arg[i]);
        },
        &c, nowait);
}

void starpu_omp_sections_combined(unsigned long long nb_sections,
                                  void (*section_f)(unsigned long long section_num, void* arg), void* section_arg,
                                  int nowait) noexcept {
    struct ctx {
        void (*f)(unsigned long long, void*);
        void* arg;
    } c{section_f, section_arg};
    sections_run(
        nb_sections, [](unsigned long long i, void* p) {
            auto* x = static_cast<ctx*>(p);
            x->f(i, x->arg);
        },
        &c, nowait);
}

// ---- explicit tasks ------------------------------------------------------------------------------

void starpu_omp_task_region(const struct starpu_omp_task_region_attr* attr) noexcept {
    if (attr == nullptr || attr->cl.cpu_funcs[0] == nullptr) {
        mpc::tg::starpu::fatal("starpu_omp_task_region", "the task's codelet needs a CPU function");
    }
    omp_thread* t = me();
    // As StarPU's: a task made by the initial task, or inside a final task, is included (run at
    // once by its maker); a task without its if clause is undeferred (its maker waits for it).
    const bool included = t->initial || t->task->final;
    const bool undeferred = included || attr->if_clause == 0;
    const bool final = included || attr->final_clause != 0;
    if (included || (undeferred && attr->mergeable_clause != 0)) {
        run_included(attr, t, final);
        return;
    }
    region* r = t->r;
    auto* e = new explicit_task;
    e->heap = true;
    e->final = final;
    e->r = r;
    e->parent = t->task;
    e->icv = t->icv;
    e->fn = attr->cl.cpu_funcs[0];
    e->arg = attr->cl_arg;
    e->arg_free = attr->cl_arg_free != 0;
    std::memcpy(&e->cl, &attr->cl, sizeof e->cl);  // not an assignment: that would copy deprecated fields by name
    e->cl.cpu_funcs[0] = explicit_exec;
    e->cl.cpu_funcs_name[0] = nullptr;
    e->group = attr->nogroup_clause != 0 ? nullptr : t->task->group;
    t->task->refs.fetch_add(1, std::memory_order_relaxed);  // the parent outlives its count
    t->task->children.fetch_add(1, std::memory_order_acq_rel);
    if (e->group != nullptr) {
        e->group->count.fetch_add(1, std::memory_order_acq_rel);
    }
    r->ntasks.fetch_add(1, std::memory_order_acq_rel);
    if (!r->tasks_made.exchange(true, std::memory_order_acq_rel)) {
        r->bar.lock.lock();  // the threads parked in a barrier now run tasks while they wait
        gate::wakeups w = r->bar.notify_locked();
        r->bar.lock.unlock();
        gate::deliver(w);
    }
    e->refs.fetch_add(1, std::memory_order_relaxed);  // ours, while we look at it below
    starpu_task* task = starpu_task_create();
    task->cl = &e->cl;
    task->cl_arg = e;
    task->priority = attr->priority;
    task->callback_func = explicit_end;
    task->callback_arg = e;
    const int nbuf = std::max(0, attr->cl.nbuffers);
    if (nbuf > STARPU_NMAXBUFS) {
        mpc::tg::starpu::fatal("starpu_omp_task_region", "more handles than STARPU_NMAXBUFS");
    }
    for (int i = 0; i < nbuf; ++i) {
        task->handles[i] = attr->handles[i];
    }
    const int nw = static_cast<int>(starpu_worker_get_count());
    if (r->n < nw) {
        // Only the team's threads (workers 0..n-1) run its tasks.
        for (int w = 0; w < r->n; ++w) {
            e->workers[w / 32] |= 1u << (w % 32);
        }
        task->workerids = e->workers;
        task->workerids_len = static_cast<unsigned>((r->n + 31) / 32);
    }
    if (int rc = starpu_task_submit(task); rc != 0) {
        mpc::tg::starpu::fatal("starpu_omp_task_region", "cannot submit the task");
    }
    if (undeferred) {
        help_until([e] { return e->done.load(std::memory_order_acquire); });
    }
    unref(e);
}

void starpu_omp_taskwait(void) noexcept {
    omp_thread* t = me();
    help_until([t] { return t->task->children.load(std::memory_order_acquire) == 0; });
}

void starpu_omp_taskgroup(void (*f)(void* arg), void* arg) noexcept {
    starpu_omp_taskgroup_inline_begin();
    f(arg);
    starpu_omp_taskgroup_inline_end();
}

void starpu_omp_taskgroup_inline_begin(void) noexcept {
    omp_thread* t = me();
    auto* g = new taskgroup;
    g->outer = t->task->group;
    t->task->group = g;
}

void starpu_omp_taskgroup_inline_end(void) noexcept {
    omp_thread* t = me();
    taskgroup* g = t->task->group;
    if (g == nullptr) {
        mpc::tg::starpu::fatal("starpu_omp_taskgroup_inline_end", "no taskgroup begun");
    }
    help_until([g] { return g->count.load(std::memory_order_acquire) == 0; });
    t->task->group = g->outer;
    delete g;
}

void starpu_omp_taskloop_inline_begin(struct starpu_omp_task_region_attr* attr) noexcept {
    if (attr->nogroup_clause == 0) {
        starpu_omp_taskgroup_inline_begin();
    }
    // StarPU's split: num_tasks tasks, else nb_iterations / grainsize, else 4; each task's range
    // in the attr's begin_i/end_i/chunk, which its function reads from cl_arg (the attr itself
    // in StarPU's own uses: a deferred task gets a copy of it).
    unsigned long long parts = attr->num_tasks > 0 ? static_cast<unsigned long long>(attr->num_tasks)
                               : attr->grainsize > 0 ? attr->nb_iterations / attr->grainsize
                                                     : 4;
    parts = std::max(1ULL, parts);
    attr->is_loop = 1;
    const unsigned long long each = attr->nb_iterations / parts;
    for (unsigned long long i = 0; i < parts; ++i) {
        attr->begin_i = each * i;
        attr->end_i = attr->begin_i + each + (i + 1 == parts ? attr->nb_iterations % parts : 0);
        attr->chunk = attr->end_i - attr->begin_i;
        if (attr->cl_arg == attr) {
            // The function reads its range from the attr: a deferred task needs its own copy.
            auto* copy = static_cast<starpu_omp_task_region_attr*>(std::malloc(sizeof *attr));
            if (copy == nullptr) {
                mpc::tg::starpu::fatal("starpu_omp_taskloop_inline_begin", "no memory");
            }
            std::memcpy(copy, attr, sizeof *attr);
            copy->cl_arg = copy;
            copy->cl_arg_free = 1;
            starpu_omp_task_region(copy);
        } else {
            starpu_omp_task_region(attr);
        }
    }
}

void starpu_omp_taskloop_inline_end(const struct starpu_omp_task_region_attr* attr) noexcept {
    if (attr->nogroup_clause == 0) {
        starpu_omp_taskgroup_inline_end();
    }
}

// ---- queries and settings -------------------------------------------------------------------------

void starpu_omp_set_num_threads(int threads) noexcept {
    if (threads > 0) {
        me()->icv.nthreads = threads;
    }
}
int starpu_omp_get_num_threads(void) noexcept { return me()->r->n; }
int starpu_omp_get_thread_num(void) noexcept { return me()->num; }
int starpu_omp_get_max_threads(void) noexcept { return me()->icv.nthreads; }
int starpu_omp_get_num_procs(void) noexcept { return static_cast<int>(starpu_cpu_worker_get_count()); }
int starpu_omp_in_parallel(void) noexcept { return me()->r->active_level > 0 ? 1 : 0; }
void starpu_omp_set_dynamic(int dynamic_threads) noexcept { me()->icv.dyn = dynamic_threads != 0; }
int starpu_omp_get_dynamic(void) noexcept { return me()->icv.dyn ? 1 : 0; }
void starpu_omp_set_nested(int nested) noexcept { me()->icv.nest = nested != 0; }
int starpu_omp_get_nested(void) noexcept { return me()->icv.nest ? 1 : 0; }
int starpu_omp_get_cancellation(void) noexcept { return g_global.cancellation ? 1 : 0; }

void starpu_omp_set_schedule(enum starpu_omp_sched_value kind, int modifier) noexcept {
    omp_thread* t = me();
    t->icv.sched = kind;
    t->icv.chunk = std::max(0, modifier);
}

void starpu_omp_get_schedule(enum starpu_omp_sched_value* kind, int* modifier) noexcept {
    omp_thread* t = me();
    *kind = t->icv.sched;
    *modifier = t->icv.chunk;
}

int starpu_omp_get_thread_limit(void) noexcept { return g_global.thread_limit; }
void starpu_omp_set_max_active_levels(int max_levels) noexcept {
    if (max_levels >= 0) {
        me()->icv.max_active_levels = max_levels;
    }
}
int starpu_omp_get_max_active_levels(void) noexcept { return me()->icv.max_active_levels; }
int starpu_omp_get_level(void) noexcept { return me()->r->level; }

int starpu_omp_get_ancestor_thread_num(int level) noexcept {
    omp_thread* t = me();
    region* r = t->r;
    if (level < 0 || level > r->level) {
        return -1;
    }
    int num = t->num;
    while (r->level > level) {
        num = r->parent_num;
        r = r->parent;
    }
    return num;
}

int starpu_omp_get_team_size(int level) noexcept {
    region* r = me()->r;
    if (level < 0 || level > r->level) {
        return -1;
    }
    while (r->level > level) {
        r = r->parent;
    }
    return r->n;
}

int starpu_omp_get_active_level(void) noexcept { return me()->r->active_level; }
int starpu_omp_in_final(void) noexcept { return me()->task->final ? 1 : 0; }
enum starpu_omp_proc_bind_value starpu_omp_get_proc_bind(void) noexcept { return me()->icv.bind; }
int starpu_omp_get_num_places(void) noexcept { return 0; }
int starpu_omp_get_place_num_procs(int /*place_num*/) noexcept { return 0; }
void starpu_omp_get_place_proc_ids(int /*place_num*/, int* /*ids*/) noexcept {}
int starpu_omp_get_place_num(void) noexcept { return -1; }
int starpu_omp_get_partition_num_places(void) noexcept { return 0; }
void starpu_omp_get_partition_place_nums(int* /*place_nums*/) noexcept {}
void starpu_omp_set_default_device(int device_num) noexcept { g_global.default_device = device_num; }
int starpu_omp_get_default_device(void) noexcept { return g_global.default_device; }
int starpu_omp_get_num_devices(void) noexcept { return 1; }
int starpu_omp_get_num_teams(void) noexcept { return 1; }
int starpu_omp_get_team_num(void) noexcept { return 0; }
int starpu_omp_is_initial_device(void) noexcept { return 1; }
int starpu_omp_get_initial_device(void) noexcept { return 0; }
int starpu_omp_get_max_task_priority(void) noexcept { return g_global.max_task_priority; }

// ---- locks ---------------------------------------------------------------------------------------

void starpu_omp_init_lock(starpu_omp_lock_t* lock) noexcept { lock->internal = new blocking_mutex; }
void starpu_omp_destroy_lock(starpu_omp_lock_t* lock) noexcept {
    delete static_cast<blocking_mutex*>(lock->internal);
    lock->internal = nullptr;
}
void starpu_omp_set_lock(starpu_omp_lock_t* lock) noexcept { static_cast<blocking_mutex*>(lock->internal)->lock(); }
void starpu_omp_unset_lock(starpu_omp_lock_t* lock) noexcept { static_cast<blocking_mutex*>(lock->internal)->unlock(); }
int starpu_omp_test_lock(starpu_omp_lock_t* lock) noexcept {
    return static_cast<blocking_mutex*>(lock->internal)->try_lock() ? 1 : 0;
}

void starpu_omp_init_nest_lock(starpu_omp_nest_lock_t* lock) noexcept { lock->internal = new nest_lock; }
void starpu_omp_destroy_nest_lock(starpu_omp_nest_lock_t* lock) noexcept {
    delete static_cast<nest_lock*>(lock->internal);
    lock->internal = nullptr;
}
void starpu_omp_set_nest_lock(starpu_omp_nest_lock_t* lock) noexcept {
    auto* l = static_cast<nest_lock*>(lock->internal);
    omp_thread* t = me();
    if (l->owner.load(std::memory_order_acquire) == t) {
        ++l->count;
        return;
    }
    l->m.lock();
    l->owner.store(t, std::memory_order_release);
    l->count = 1;
}
void starpu_omp_unset_nest_lock(starpu_omp_nest_lock_t* lock) noexcept {
    auto* l = static_cast<nest_lock*>(lock->internal);
    if (--l->count == 0) {
        l->owner.store(nullptr, std::memory_order_release);
        l->m.unlock();
    }
}
int starpu_omp_test_nest_lock(starpu_omp_nest_lock_t* lock) noexcept {
    auto* l = static_cast<nest_lock*>(lock->internal);
    omp_thread* t = me();
    if (l->owner.load(std::memory_order_acquire) == t) {
        return ++l->count;
    }
    if (!l->m.try_lock()) {
        return 0;
    }
    l->owner.store(t, std::memory_order_release);
    l->count = 1;
    return 1;
}

void starpu_omp_vector_annotate(starpu_data_handle_t handle, uint32_t slice_base) noexcept {
    auto* v = static_cast<starpu_vector_interface*>(starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM));
    if (v == nullptr || v->id != STARPU_VECTOR_INTERFACE_ID) {
        mpc::tg::starpu::fatal("starpu_omp_vector_annotate", "not a vector handle");
    }
    v->slice_base = slice_base;
}

struct starpu_arbiter* starpu_omp_get_default_arbiter(void) noexcept {
    // One for the process, made on first use and kept (handles may stay assigned to it).
    static starpu_arbiter* a = starpu_arbiter_create();
    return a;
}

void starpu_omp_atomic_fallback_inline_begin(void) noexcept { g_atomic.lock(); }
void starpu_omp_atomic_fallback_inline_end(void) noexcept { g_atomic.unlock(); }

double starpu_omp_get_wtime(void) noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double starpu_omp_get_wtick(void) noexcept {
    timespec ts{};
    clock_getres(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // extern "C"
