/// \file
/// StarPU 1.3 C API: initialisation, workers, priorities, memory, and the helpers the other
/// starpu_*.cpp files share.

#include <starpu.h>

#include <starpu_profiling.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lib/log.hpp"
#include "lib/topology.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::starpu {
namespace {
constexpr int conf_magic = 42;
std::atomic<std::size_t> g_malloc_align{sizeof(void*)};
/// Successful outermost starpu_init() calls so far (what lists made for one run key on).
std::atomic<unsigned long long> g_runs{0};
unsigned long long run_number() noexcept { return g_runs.load(std::memory_order_acquire); }

/// starpu_malloc_set_hooks: the application's allocator (both set, or neither).
std::atomic<starpu_malloc_hook> g_malloc_hook{nullptr};
std::atomic<starpu_free_hook> g_free_hook{nullptr};

/// The core's handle memory through the application's hooks (STARPU_MAIN_RAM, the default
/// flags of starpu_malloc_on_node).
int hooked_alloc(void** p, std::size_t n) noexcept {
    starpu_malloc_hook h = g_malloc_hook.load(std::memory_order_acquire);
    return h != nullptr ? h(STARPU_MAIN_RAM, p, n, on_node_flags()) : -ENOMEM;
}
void hooked_release(void* p, std::size_t n) noexcept {
    if (starpu_free_hook h = g_free_hook.load(std::memory_order_acquire); h != nullptr) {
        h(STARPU_MAIN_RAM, p, n, on_node_flags());
    }
}

/// What the last starpu_init() took from its configuration: the asynchronous-copy flags (all,
/// CUDA, OpenCL, MIC, MPI-MS; 0 before any starpu_init, as in StarPU) and the global
/// context's priority range (-1: the policy's).
std::atomic<int> g_async_disabled[5]{};
std::atomic<int> g_min_prio{-1};
std::atomic<int> g_max_prio{-1};
constexpr const char* async_vars[5] = {"STARPU_DISABLE_ASYNCHRONOUS_COPY", "STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY",
                                       "STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY", "STARPU_DISABLE_ASYNCHRONOUS_MIC_COPY",
                                       "STARPU_DISABLE_ASYNCHRONOUS_MPI_MS_COPY"};

/// An integer variable (StarPU's starpu_get_env_number), else `def` (malformed: logged).
int env_number(const char* name, int def) noexcept {
    const char* s = std::getenv(name);
    if (s == nullptr || *s == '\0') {
        return def;
    }
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < INT_MIN || v > INT_MAX) {
        MPC_LOG(warn, tg, "%s=%s: not a number; %d is used", name, s, def);
        return def;
    }
    return static_cast<int>(v);
}

/// The configuration's value, or the variable's when set and the configuration does not win.
int conf_or_env(const char* name, int value, bool conf_wins) noexcept {
    return conf_wins ? value : env_number(name, value);
}

/// Appends to out the CPUs of a STARPU_WORKERS_CPUID list ("1 0 3", "0-3", commas too).
bool parse_cpu_list(const char* s, std::vector<unsigned>* out) noexcept {
    for (const char* p = s;;) {
        while (*p == ' ' || *p == ',' || *p == '\t') {
            ++p;
        }
        if (*p == '\0') {
            return !out->empty();
        }
        char* end = nullptr;
        const unsigned long a = std::strtoul(p, &end, 10);
        unsigned long b = a;
        if (end != p && *end == '-') {
            const char* q = end + 1;
            b = std::strtoul(q, &end, 10);
            if (end == q) {
                return false;
            }
        }
        if (end == p || b < a || b - a >= STARPU_NMAXWORKERS || b >= 1u << 20) {
            return false;
        }
        for (unsigned long c = a; c <= b && out->size() < STARPU_NMAXWORKERS; ++c) {
            out->push_back(static_cast<unsigned>(c));
        }
        p = end;
    }
}

/// The workers' CPUs: STARPU_WORKERS_CPUID, unless the configuration's explicit list wins.
/// Empty: no binding asked for. -EINVAL for a malformed variable (logged).
int worker_bindings(const starpu_conf& conf, bool conf_wins, std::vector<unsigned>* out) noexcept {
    const bool explicit_list = conf.use_explicit_workers_bindid != 0;
    if (const char* s = std::getenv("STARPU_WORKERS_CPUID"); s != nullptr && *s != '\0' && !(conf_wins && explicit_list)) {
        if (!parse_cpu_list(s, out)) {
            MPC_LOG(error, tg, "STARPU_WORKERS_CPUID=%s: expected CPU numbers or ranges (\"1 0\", \"0-3\")", s);
            return -EINVAL;
        }
        return 0;
    }
    if (explicit_list) {
        out->assign(conf.workers_bindid, conf.workers_bindid + STARPU_NMAXWORKERS);
    }
    return 0;
}

/// What starpu_init() refuses or reports among the fields about other drivers; the CPU
/// workers the application runs itself (not_launched_drivers) go into *app.
int check_drivers(const starpu_conf& conf, std::vector<int>* app) noexcept {
    if (conf.n_not_launched_drivers > 0 && conf.not_launched_drivers == nullptr) {
        MPC_LOG(error, tg, "starpu_init: %u drivers not to be launched, but not_launched_drivers is NULL",
                conf.n_not_launched_drivers);
        return -EINVAL;
    }
    for (unsigned i = 0; i < conf.n_not_launched_drivers; ++i) {
        const starpu_driver& d = conf.not_launched_drivers[i];
        if (d.type != STARPU_CPU_WORKER) {
            MPC_LOG(warn, tg, "starpu_init: a driver not to be launched of type %d: only CPU workers exist, ignored",
                    static_cast<int>(d.type));
            continue;
        }
        try {
            app->push_back(static_cast<int>(std::min(d.id.cpu_id, 1u << 30)));
        } catch (const std::bad_alloc&) {
            return -ENOMEM;
        }
    }
    if (conf.ncuda > 0 || conf.nopencl > 0 || conf.nmic > 0 || conf.nmpi_ms > 0) {
        // Like a StarPU built without these drivers: no such worker; say so.
        MPC_LOG(warn, tg, "starpu_init: %d CUDA, %d OpenCL, %d MIC and %d MPI-MS workers asked for; only CPU "
                          "workers exist", conf.ncuda, conf.nopencl, conf.nmic, conf.nmpi_ms);
    }
    return 0;
}

/// Keeps what the StarPU layer answers from the configuration (before init(): its callers see it).
void keep_answers(const starpu_conf& conf, bool conf_wins) noexcept {
    const int flags[5] = {conf.disable_asynchronous_copy, conf.disable_asynchronous_cuda_copy,
                          conf.disable_asynchronous_opencl_copy, conf.disable_asynchronous_mic_copy,
                          conf.disable_asynchronous_mpi_ms_copy};
    for (int i = 0; i < 5; ++i) {
        g_async_disabled[i].store(conf_or_env(async_vars[i], flags[i], conf_wins), std::memory_order_relaxed);
    }
    g_min_prio.store(conf.global_sched_ctx_min_priority, std::memory_order_relaxed);
    g_max_prio.store(conf.global_sched_ctx_max_priority, std::memory_order_relaxed);
}
}  // namespace

int errno_of(const status& st) noexcept {
    switch (st.code()) {
        case errc::ok:
            return 0;
        case errc::no_memory:
            return -ENOMEM;
        case errc::unsupported:
        case errc::not_initialized:
            return -ENODEV;
        case errc::busy:
            return -EDEADLK;
        default:
            return -EINVAL;
    }
}

void fatal(const char* call, const char* reason) noexcept {
    MPC_LOG(fatal, tg, "%s: %s", call, reason);
    std::abort();
}

}  // namespace mpc::tg::starpu

using namespace mpc::tg;

namespace mpc::tg::starpu {
namespace {

/// Application threads bound to binding ids (VPs): StarPU's currently_bound/_shared lists and
/// its per-PU owner and name, made at the first call after starpu_init (the workers' VPs are
/// bound then) and dropped at shutdown.
struct bindings {
    static constexpr int no_one = -1, active_thread = -2, passive_thread = -3;
    std::mutex m;
    bool made = false;
    std::vector<char> bound, shared;
    std::vector<int> owner;
    std::vector<std::string> name;
    unsigned next = 0;
};
bindings& binding_table() noexcept {
    static bindings* b = new bindings;  // never destroyed: threads may bind at exit
    return *b;
}

/// The table for the running engine (b.m held).
void make_bindings(bindings& b) {
    if (b.made) {
        return;
    }
    const auto n = static_cast<std::size_t>(std::max(sched::nr_vps(), 1));
    b.bound.assign(n, 0);
    b.shared.assign(n, 0);
    b.owner.assign(n, bindings::no_one);
    b.name.assign(n, std::string());
    for (int w = 0; w < worker_count(); ++w) {
        const int vp = worker_vp(w);
        if (vp >= 0 && static_cast<std::size_t>(vp) < n) {
            b.bound[static_cast<std::size_t>(vp)] = 1;
            b.owner[static_cast<std::size_t>(vp)] = w;
        }
    }
    b.next = 0;
    b.made = true;
}

}  // namespace

void forget_bindings() noexcept {
    bindings& b = binding_table();
    std::lock_guard g(b.m);
    b.made = false;
}

}  // namespace mpc::tg::starpu

extern "C" {

int starpu_conf_init(struct starpu_conf* conf) {
    if (conf == nullptr) {
        return -EINVAL;
    }
    std::memset(conf, 0, sizeof *conf);  // every list, flag and pointer StarPU leaves at 0
    conf->magic = starpu::conf_magic;
    const int ncpus = starpu::env_number("STARPU_NCPU", -1);
    conf->ncpus = ncpus != -1 ? ncpus : starpu::env_number("STARPU_NCPUS", -1);  // StarPU's older name
    conf->reserve_ncpus = starpu::env_number("STARPU_RESERVE_NCPU", -1);
    conf->ncuda = starpu::env_number("STARPU_NCUDA", -1);
    conf->nopencl = starpu::env_number("STARPU_NOPENCL", -1);
    conf->nmic = starpu::env_number("STARPU_NMIC", -1);
    conf->nmpi_ms = starpu::env_number("STARPU_NMPI_MS", -1);
    conf->calibrate = std::max(starpu::env_number("STARPU_CALIBRATE", 0), 0);
    conf->bus_calibrate = std::max(starpu::env_number("STARPU_BUS_CALIBRATE", 0), 0);
    conf->single_combined_worker = std::max(starpu::env_number("STARPU_SINGLE_COMBINED_WORKER", 0), 0);
    conf->mic_sink_program_path = std::getenv("STARPU_MIC_PROGRAM_PATH");
    conf->disable_asynchronous_copy = std::max(starpu::env_number(starpu::async_vars[0], 0), 0);
    conf->disable_asynchronous_cuda_copy = std::max(starpu::env_number(starpu::async_vars[1], 0), 0);
    conf->disable_asynchronous_opencl_copy = std::max(starpu::env_number(starpu::async_vars[2], 0), 0);
    conf->disable_asynchronous_mic_copy = std::max(starpu::env_number(starpu::async_vars[3], 0), 0);
    conf->disable_asynchronous_mpi_ms_copy = std::max(starpu::env_number(starpu::async_vars[4], 0), 0);
    conf->trace_buffer_size = static_cast<uint64_t>(std::max(starpu::env_number("STARPU_TRACE_BUFFER_SIZE", 64), 0)) << 20;
    conf->global_sched_ctx_min_priority = starpu::env_number("STARPU_MIN_PRIO", -1);
    conf->global_sched_ctx_max_priority = starpu::env_number("STARPU_MAX_PRIO", -1);
    conf->catch_signals = starpu::env_number("STARPU_CATCH_SIGNALS", 1);
    conf->driver_spinning_backoff_min = static_cast<unsigned>(starpu::env_number("STARPU_BACKOFF_MIN", 1));
    conf->driver_spinning_backoff_max = static_cast<unsigned>(starpu::env_number("STARPU_BACKOFF_MAX", 32));
    return 0;
}

int starpu_init(struct starpu_conf* user_conf) {
    starpu_conf defaults;
    if (user_conf == nullptr) {
        starpu_conf_init(&defaults);
    }
    const starpu_conf& conf = user_conf != nullptr ? *user_conf : defaults;
    if (conf.magic != starpu::conf_magic) {
        MPC_LOG(error, tg, "starpu_init: the configuration was not set up with starpu_conf_init()");
        return -EINVAL;
    }
    std::vector<int> app_workers;
    if (int rc = starpu::check_drivers(conf, &app_workers); rc != 0) {
        return rc;
    }
    const bool conf_wins = conf.precedence_over_environment_variables != 0;
    config c;
    c.app_workers = app_workers.data();
    c.n_app_workers = static_cast<int>(app_workers.size());
    c.ncpus = conf.ncpus;
    c.sched = conf.sched_policy_name;
    if (conf.sched_policy != nullptr) {
        if (int rc = starpu::user_policy_entry(conf.sched_policy, &c.custom_policy); rc != 0) {
            return rc;
        }
    }
    c.config_over_env = conf_wins;
    c.reserve = starpu::conf_or_env("STARPU_RESERVE_NCPU", conf.reserve_ncpus, conf_wins);
    c.calibrate = conf.calibrate;  // against STARPU_CALIBRATE / MPC_TG_CALIBRATE in the core
    std::vector<unsigned> bindings;
    if (int rc = starpu::worker_bindings(conf, conf_wins, &bindings); rc != 0) {
        return rc;
    }
    if (!bindings.empty()) {
        c.bindids = bindings.data();
        c.nbindids = static_cast<int>(bindings.size());
    }
    c.going_to_sleep = conf.callback_worker_going_to_sleep;
    c.waking_up = conf.callback_worker_waking_up;
    if (!running()) {  // a nested starpu_init() changes nothing
        starpu::keep_answers(conf, conf_wins);
        starpu::set_policy_init(conf.sched_policy_init);
    }
    if (conf.sched_policy_init != nullptr) {
        c.heteroprio_setup = &starpu::heteroprio_setup;
    }
    const bool was_running = running();
    const int rc = starpu::errno_of(init(c));
    if (rc == 0) {
        if (!was_running) {
            starpu::g_runs.fetch_add(1, std::memory_order_acq_rel);
        }
        starpu::disk_swap_from_env();  // STARPU_DISK_SWAP
    }
    return rc;
}

int starpu_initialize(struct starpu_conf* user_conf, int* /*argc*/, char*** /*argv*/) { return starpu_init(user_conf); }

int starpu_is_initialized(void) { return running() ? 1 : 0; }

void starpu_wait_initialized(void) { wait_initialized(); }

void starpu_pause(void) { pause_workers(); }
void starpu_resume(void) { resume_workers(); }

int starpu_asynchronous_copy_disabled(void) { return starpu::g_async_disabled[0].load(std::memory_order_relaxed); }
int starpu_asynchronous_cuda_copy_disabled(void) { return starpu::g_async_disabled[1].load(std::memory_order_relaxed); }
int starpu_asynchronous_opencl_copy_disabled(void) { return starpu::g_async_disabled[2].load(std::memory_order_relaxed); }
int starpu_asynchronous_mic_copy_disabled(void) { return starpu::g_async_disabled[3].load(std::memory_order_relaxed); }
int starpu_asynchronous_mpi_ms_copy_disabled(void) { return starpu::g_async_disabled[4].load(std::memory_order_relaxed); }

void starpu_display_stats(void) {
    starpu_profiling_bus_helper_display_summary();
    starpu_profiling_worker_helper_display_summary();
}

void starpu_shutdown(void) {
    if (mpc::status st = shutdown(); !st.ok()) {
        MPC_LOG(error, tg, "starpu_shutdown: %s", st.reason());
    }
    if (!running()) {
        starpu::disks_unplug();
        starpu::forget_bindings();
        starpu::forget_worker_orders();
        tags_clear();  // as StarPU's shutdown: tags do not outlive the runtime
    }
}

unsigned starpu_get_next_bindid(unsigned flags, unsigned* preferred, unsigned npreferred) {
    if (!running()) {
        starpu::fatal("starpu_get_next_bindid", "StarPU is not initialized (call starpu_init first)");
    }
    if (npreferred != 0 && preferred == nullptr) {
        starpu::fatal("starpu_get_next_bindid", "a NULL preference list with npreferred > 0");
    }
    const bool active = (flags & STARPU_THREAD_ACTIVE) != 0;
    starpu::bindings& b = starpu::binding_table();
    std::lock_guard g(b.m);
    try {
        starpu::make_bindings(b);
    } catch (...) {
        starpu::fatal("starpu_get_next_bindid", "no memory for the binding table");
    }
    const auto n = static_cast<unsigned>(b.bound.size());
    auto take = [&](unsigned i) {
        b.bound[i] = 1;
        if (!active) {
            b.shared[i] = 1;
        }
        return i;
    };
    for (unsigned k = 0; k < npreferred; ++k) {
        // A preference names a core; each VP is pinned to one core.
        for (unsigned i = 0; i < n; ++i) {
            if (mpc::sched::vp_place(static_cast<int>(i)).core == static_cast<int>(preferred[k]) &&
                (b.bound[i] == 0 || (b.shared[i] != 0 && !active))) {
                return take(i);
            }
        }
    }
    if (!active) {
        for (unsigned i = 0; i < n; ++i) {
            if (b.shared[i] != 0) {
                return i;
            }
        }
    }
    unsigned i = b.next;
    while (i < n && b.bound[i] != 0) {
        ++i;
    }
    if (i == n) {
        std::fill(b.bound.begin(), b.bound.end(), 0);  // every one taken: overloading, from the first
        i = 0;
    }
    b.next = i;
    return take(i);
}

int starpu_bind_thread_on(int cpuid, unsigned flags, const char* name) {
    if (cpuid < 0) {
        return 0;
    }
    if (!mpc::sched::initialized() || cpuid >= mpc::sched::nr_vps()) {
        MPC_LOG(error, tg, "starpu_bind_thread_on: no binding id %d (there are %d)", cpuid,
                mpc::sched::initialized() ? mpc::sched::nr_vps() : 0);
        return -1;
    }
    const bool active = (flags & STARPU_THREAD_ACTIVE) != 0;
    const int me = active ? starpu::bindings::active_thread : starpu::bindings::passive_thread;
    int ret = 0;
    {
        starpu::bindings& b = starpu::binding_table();
        std::lock_guard g(b.m);
        try {
            if (running()) {
                starpu::make_bindings(b);
            }
            if (b.made) {
                const auto i = static_cast<std::size_t>(cpuid);
                const int previous = b.owner[i];
                const bool same_name = name != nullptr && !b.name[i].empty() && b.name[i] == name;
                if (previous != starpu::bindings::no_one && !same_name &&
                    !(previous == starpu::bindings::passive_thread && me == starpu::bindings::passive_thread)) {
                    if (previous >= 0) {
                        MPC_LOG(warn, tg, "starpu_bind_thread_on: worker %d was already bound to %d, and thread %s is "
                                          "bound to it too: this will strongly degrade performance", previous, cpuid,
                                name != nullptr ? name : "(unnamed)");
                    } else {
                        MPC_LOG(warn, tg, "starpu_bind_thread_on: %s thread %s was already bound to %d, and thread %s "
                                          "is bound to it too: this will strongly degrade performance",
                                previous == starpu::bindings::active_thread ? "active" : "non-active",
                                b.name[i].c_str(), cpuid, name != nullptr ? name : "(unnamed)");
                    }
                    ret = -1;
                } else {
                    b.owner[i] = me;
                    if (name != nullptr) {
                        b.name[i] = name;
                    }
                }
            }
        } catch (...) {
            starpu::fatal("starpu_bind_thread_on", "no memory for the binding table");
        }
    }
    if (mpc::sched::self() != nullptr) {
        // A user-level thread: it runs on that VP from now on (no rebalance moves it back).
        if (mpc::status st = mpc::sched::move_to(cpuid); !st.ok()) {
            MPC_LOG(error, tg, "starpu_bind_thread_on: moving to VP %d: %s", cpuid, st.reason());
            return -1;
        }
    } else if (mpc::status st = mpc::topo::bind_this_thread(mpc::sched::vp_place(cpuid)); !st.ok()) {
        MPC_LOG(error, tg, "starpu_bind_thread_on: pinning the thread to VP %d's PU: %s", cpuid, st.reason());
        return -1;
    }
    return ret;
}

void starpu_get_version(int* major, int* minor, int* release) {
    *major = STARPU_MAJOR_VERSION;
    *minor = STARPU_MINOR_VERSION;
    *release = STARPU_RELEASE_VERSION;
}

double starpu_timing_now(void) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

// ---- workers ---------------------------------------------------------------------------------

unsigned starpu_worker_get_count(void) {
    int n = worker_count();
    if (n == 0 && starpu::user_policy() != nullptr) {
        n = starpu::policy_workers();  // asked by the application's policy's init_sched
    }
    if (n == 0) {
        n = starpu::heteroprio_setup_workers();  // asked by heteroprio's sched_policy_init
    }
    return static_cast<unsigned>(n);
}
unsigned starpu_cpu_worker_get_count(void) { return starpu_worker_get_count(); }
unsigned starpu_cuda_worker_get_count(void) { return 0; }
unsigned starpu_opencl_worker_get_count(void) { return 0; }
unsigned starpu_mic_worker_get_count(void) { return 0; }
unsigned starpu_mpi_ms_worker_get_count(void) { return 0; }
unsigned starpu_mic_device_get_count(void) { return 0; }

int starpu_worker_get_count_by_type(enum starpu_worker_archtype type) {
    return type == STARPU_CPU_WORKER || type == STARPU_ANY_WORKER ? worker_count() : 0;
}

int starpu_worker_get_id(void) { return current_worker(); }

unsigned starpu_worker_get_id_check(void) {
    const int w = current_worker();
    if (w < 0) {
        starpu::fatal("starpu_worker_get_id_check", "not called by a worker");
    }
    return static_cast<unsigned>(w);
}

unsigned starpu_worker_get_memory_node(unsigned /*workerid*/) { return STARPU_MAIN_RAM; }
void starpu_worker_relax_on(void) {}
void starpu_worker_relax_off(void) {}
int starpu_worker_get_relax_state(void) { return 1; }

enum starpu_worker_archtype starpu_worker_get_type(int /*id*/) { return STARPU_CPU_WORKER; }

namespace {
bool of_type(enum starpu_worker_archtype type) noexcept { return type == STARPU_CPU_WORKER || type == STARPU_ANY_WORKER; }
}  // namespace

unsigned starpu_worker_get_ids_by_type(enum starpu_worker_archtype type, int* workerids, unsigned maxsize) {
    const unsigned n = of_type(type) ? starpu_worker_get_count() : 0;
    for (unsigned i = 0; i < n; ++i) {
        if (i >= maxsize) {
            return static_cast<unsigned>(-ERANGE);  // StarPU's answer (an unsigned -ERANGE)
        }
        workerids[i] = static_cast<int>(i);
    }
    return n;
}

int starpu_worker_get_by_type(enum starpu_worker_archtype type, int num) {
    return of_type(type) && num >= 0 && num < static_cast<int>(starpu_worker_get_count()) ? num : -1;
}

int starpu_worker_get_by_devid(enum starpu_worker_archtype type, int devid) {
    return type == STARPU_CPU_WORKER ? starpu_worker_get_by_type(type, devid) : -1;
}

int starpu_worker_get_devid(int id) { return id >= 0 && id < static_cast<int>(starpu_worker_get_count()) ? id : -1; }

int starpu_worker_get_devids(enum starpu_worker_archtype type, int* devids, int num) {
    const int n = type == STARPU_CPU_WORKER ? std::min(num, static_cast<int>(starpu_worker_get_count())) : 0;
    for (int i = 0; i < n; ++i) {
        devids[i] = i;
    }
    return std::max(n, 0);
}

int starpu_worker_get_bindid(int workerid) { return worker_vp(workerid); }

// ---- combined workers ------------------------------------------------------------------------

unsigned starpu_combined_worker_get_count(void) { return static_cast<unsigned>(combined_worker_count()); }

unsigned starpu_worker_is_combined_worker(int id) {
    const int n = worker_count();
    return id >= n && id < n + combined_worker_count() ? 1 : 0;
}

int starpu_combined_worker_get_id(void) {
    int id = 0;
    int size = 0;
    int rank = 0;
    current_combined(&id, &size, &rank);
    return id;
}

int starpu_combined_worker_get_size(void) {
    int id = 0;
    int size = 0;
    int rank = 0;
    current_combined(&id, &size, &rank);
    return size;
}

int starpu_combined_worker_get_rank(void) {
    int id = 0;
    int size = 0;
    int rank = 0;
    current_combined(&id, &size, &rank);
    return rank;
}

int starpu_combined_worker_assign_workerid(int nworkers, int workerid_array[]) {
    mpc::result<int> id = combined_worker_add(workerid_array, nworkers);
    return id ? *id : -EINVAL;
}

int starpu_combined_worker_get_description(int workerid, int* worker_size, int** combined_workerid) {
    // The arrays stay valid until the process ends (one per combined worker id ever asked).
    static std::mutex m;
    static std::vector<std::unique_ptr<int[]>> arrays;
    int ids[STARPU_NMAXWORKERS];
    const int n = combined_worker_members(workerid, ids, STARPU_NMAXWORKERS);
    if (n == 0) {
        MPC_LOG(error, tg, "starpu_combined_worker_get_description: %d is no combined worker", workerid);
        return -EINVAL;
    }
    std::lock_guard g(m);
    const auto slot = static_cast<std::size_t>(workerid);
    if (arrays.size() <= slot) {
        arrays.resize(slot + 1);
    }
    if (!arrays[slot]) {
        arrays[slot].reset(new int[STARPU_NMAXWORKERS]);
    }
    std::copy(ids, ids + n, arrays[slot].get());
    if (worker_size != nullptr) {
        *worker_size = n;
    }
    if (combined_workerid != nullptr) {
        *combined_workerid = arrays[slot].get();
    }
    return 0;
}

int starpu_combined_worker_can_execute_task(unsigned workerid, struct starpu_task* task, unsigned nimpl) {
    const auto n = static_cast<unsigned>(worker_count());
    if (workerid < n) {
        return starpu_worker_can_execute_task(workerid, task, nimpl);
    }
    int ids[STARPU_NMAXWORKERS];
    const int size = combined_worker_members(static_cast<int>(workerid), ids, STARPU_NMAXWORKERS);
    if (size == 0 || task == nullptr || task->cl == nullptr || nimpl != 0 || task->cl->max_parallelism < size) {
        return 0;
    }
    int type = 0;  // read as an int: a C program may store any int in the enum
    std::memcpy(&type, &task->cl->type, sizeof type);
    if (type != STARPU_SPMD && type != STARPU_FORKJOIN) {
        return 0;
    }
    for (int i = 0; i < size; ++i) {
        if (starpu_worker_can_execute_task(static_cast<unsigned>(ids[i]), task, 0) == 0) {
            return 0;
        }
    }
    return 1;
}

void starpu_sched_find_all_worker_combinations(void) {
    int min_size = starpu_get_env_number_default("STARPU_MIN_WORKERSIZE", 2);
    int max_size = starpu_get_env_number_default("STARPU_MAX_WORKERSIZE", STARPU_NMAXWORKERS);
    find_worker_combinations(std::max(min_size, 2), max_size > 0 ? max_size : STARPU_NMAXWORKERS);
}

hwloc_topology_t starpu_get_hwloc_topology(void) { return static_cast<hwloc_topology_t>(mpc::topo::hwloc_handle()); }

hwloc_obj_t starpu_worker_get_hwloc_obj(int workerid) {
    const int vp = worker_vp(workerid);
    auto topo = starpu_get_hwloc_topology();
    if (vp < 0 || topo == nullptr) {
        return nullptr;
    }
    const int pu = mpc::sched::vp_place(vp).pu;
    return pu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, static_cast<unsigned>(pu)) : nullptr;
}

hwloc_cpuset_t starpu_worker_get_hwloc_cpuset(int workerid) {
    hwloc_obj_t obj = starpu_worker_get_hwloc_obj(workerid);
    return obj != nullptr && obj->cpuset != nullptr ? hwloc_bitmap_dup(obj->cpuset) : hwloc_bitmap_alloc();
}

int starpu_get_pu_os_index(unsigned logical_index) {
    hwloc_topology_t topo = starpu_get_hwloc_topology();
    hwloc_obj_t pu = topo != nullptr ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, logical_index) : nullptr;
    return pu != nullptr ? static_cast<int>(pu->os_index) : static_cast<int>(logical_index);
}

int starpu_bindid_get_workerids(int bindid, int** workerids) {
    // Lists per binding id (VP), made once per run of the workers: the pointers stay valid until
    // starpu_shutdown, as StarPU's.
    static std::mutex m;
    static std::vector<std::vector<int>> lists;
    static unsigned long long made_for = ~0ull;
    std::lock_guard<std::mutex> g(m);
    const unsigned long long run = starpu::run_number();
    if (made_for != run) {
        lists.assign(static_cast<std::size_t>(std::max(mpc::sched::nr_vps(), 0)), {});
        for (int w = 0; w < worker_count(); ++w) {
            const int vp = worker_vp(w);
            if (vp >= 0 && static_cast<std::size_t>(vp) < lists.size()) {
                lists[static_cast<std::size_t>(vp)].push_back(w);
            }
        }
        made_for = run;
    }
    if (bindid < 0 || static_cast<std::size_t>(bindid) >= lists.size() || lists[static_cast<std::size_t>(bindid)].empty()) {
        if (workerids != nullptr) {
            *workerids = nullptr;
        }
        return 0;
    }
    auto& l = lists[static_cast<std::size_t>(bindid)];
    if (workerids != nullptr) {
        *workerids = l.data();
    }
    return static_cast<int>(l.size());
}

void starpu_display_bindings(void) {
    // StarPU runs hwloc-ps; here the runtime says where its threads are.
    std::printf("MPC task runtime: %d workers on %d VPs\n", worker_count(), mpc::sched::nr_vps());
    for (int w = 0; w < worker_count(); ++w) {
        const int vp = worker_vp(w);
        const mpc::topo::place p = vp >= 0 ? mpc::sched::vp_place(vp) : mpc::topo::place{};
        std::printf("  worker %d: VP %d, PU %d (OS index), core %d, NUMA node %d%s\n", w, vp, p.pu, p.core, p.numa,
                    app_worker(w) ? " (run by an application thread: starpu_driver_run)" : "");
    }
    std::fflush(stdout);
}

void starpu_bus_print_bandwidth(FILE* f) {
    // One memory node holds the data: no bus to measure (StarPU's matrix for it alone).
    std::fprintf(f, "from/to\tNUMA 0\nNUMA 0\t0\n\nNUMA 0\tdirect (main memory only)\n");
}

void starpu_bus_print_affinity(FILE* f) { std::fprintf(f, "# GPU\tCPU workers (no GPU here)\n"); }

void starpu_bus_print_filenames(FILE* f) {
    std::fprintf(f, "no bus calibration files: main memory is the only node with workers, nothing to calibrate\n");
}

char* starpu_worker_get_type_as_string(enum starpu_worker_archtype type) {
    // StarPU returns its string literals as char*; callers must not write to them.
    switch (type) {
        case STARPU_CPU_WORKER: return const_cast<char*>("STARPU_CPU_WORKER");
        case STARPU_CUDA_WORKER: return const_cast<char*>("STARPU_CUDA_WORKER");
        case STARPU_OPENCL_WORKER: return const_cast<char*>("STARPU_OPENCL_WORKER");
        case STARPU_MIC_WORKER: return const_cast<char*>("STARPU_MIC_WORKER");
        case STARPU_MPI_MS_WORKER: return const_cast<char*>("STARPU_MPI_MS_WORKER");
        case STARPU_ANY_WORKER: return const_cast<char*>("STARPU_ANY_WORKER");
    }
    return const_cast<char*>("STARPU_unknown_WORKER");
}

unsigned starpu_worker_get_local_memory_node(void) { return STARPU_MAIN_RAM; }
unsigned starpu_memory_nodes_get_count(void) { return 1 + static_cast<unsigned>(starpu::disk_count()); }
enum starpu_node_kind starpu_node_get_kind(unsigned node) {
    return node == STARPU_MAIN_RAM                          ? STARPU_CPU_RAM
           : starpu::is_disk_node(static_cast<int>(node)) ? STARPU_DISK_RAM
                                                            : STARPU_UNUSED;
}

int starpu_memory_node_get_name(unsigned node, char* name, size_t size) {
    if (node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_memory_node_get_name: no memory node %u (main memory, 0, is the only one)", node);
        return -1;
    }
    return std::snprintf(name, size, "NUMA %d", 0);
}

void starpu_worker_get_name(int id, char* dst, size_t maxlen) {
    std::snprintf(dst, maxlen, "CPU %d (VP %d)", id, worker_vp(id));
}

void starpu_task_watchdog_set_hook(void (*hook)(void*), void* hook_arg) { set_watchdog_hook(hook, hook_arg); }

void starpu_worker_set_going_to_sleep_callback(void (*callback)(unsigned workerid)) { set_going_to_sleep(callback); }
void starpu_worker_set_waking_up_callback(void (*callback)(unsigned workerid)) { set_waking_up(callback); }

void starpu_worker_display_names(FILE* output, enum starpu_worker_archtype type) {
    const char* kind = type == STARPU_CPU_WORKER      ? "CPU"
                       : type == STARPU_CUDA_WORKER   ? "CUDA"
                       : type == STARPU_OPENCL_WORKER ? "OpenCL"
                       : type == STARPU_MIC_WORKER    ? "MIC"
                       : type == STARPU_MPI_MS_WORKER ? "MPI_MS"
                                                      : "any";
    const int n = starpu_worker_get_count_by_type(type);
    if (n <= 0) {
        std::fprintf(output, "No %s worker\n", kind);
        return;
    }
    std::fprintf(output, "%d %s worker%s:\n", n, kind, n == 1 ? "" : "s");
    for (int id = 0; id < n; ++id) {
        char name[64];
        starpu_worker_get_name(id, name, sizeof name);
        std::fprintf(output, "\t%s\n", name);
    }
}

void starpu_topology_print(FILE* f) {
    const int n = worker_count();
    for (int id = 0; id < n; ++id) {
        char name[64];
        starpu_worker_get_name(id, name, sizeof name);
        std::fprintf(f, "worker %d: %s\n", id, name);
    }
}

// starpu_conf::global_sched_ctx_min/max_priority, when set (not -1), else the policy's.
int starpu_sched_get_min_priority(void) {
    if (const unsigned c = starpu::submit_context(); c != 0 || starpu_sched_ctx_min_priority_is_set(0)) {
        return starpu_sched_ctx_get_min_priority(c);
    }
    if (const int set = starpu::g_min_prio.load(std::memory_order_relaxed); set != -1) {
        return set;
    }
    int lo = 0;
    int hi = 0;
    priority_range(&lo, &hi);
    return starpu::heteroprio_setup_workers() != 0 ? 0 : lo;  // 0 also while heteroprio is set up
}
int starpu_sched_get_max_priority(void) {
    if (const unsigned c = starpu::submit_context(); c != 0 || starpu_sched_ctx_max_priority_is_set(0)) {
        return starpu_sched_ctx_get_max_priority(c);
    }
    if (const int set = starpu::g_max_prio.load(std::memory_order_relaxed); set != -1) {
        return set;
    }
    int lo = 0;
    int hi = 0;
    priority_range(&lo, &hi);
    return starpu::heteroprio_setup_workers() != 0 ? 0 : hi;
}

// ---- memory ----------------------------------------------------------------------------------

void starpu_malloc_set_align(size_t align) {
    if (align < sizeof(void*) || (align & (align - 1)) != 0) {
        MPC_LOG(error, tg, "starpu_malloc_set_align(%zu): not a power of two of at least %zu", align, sizeof(void*));
        return;
    }
    // StarPU keeps the largest alignment asked for.
    std::size_t cur = starpu::g_malloc_align.load(std::memory_order_relaxed);
    while (align > cur && !starpu::g_malloc_align.compare_exchange_weak(cur, align)) {
    }
}

int starpu_malloc_flags(void** A, size_t dim, int flags) {
    constexpr int known = STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT | STARPU_MALLOC_NORECLAIM | STARPU_MEMORY_WAIT |
                          STARPU_MALLOC_SIMULATION_FOLDED;
    if (A == nullptr || (flags & ~known) != 0) {
        return -EINVAL;
    }
    const bool count = (flags & STARPU_MALLOC_COUNT) != 0;
    if (count) {
        // StarPU's order: make room from the caches (unless NORECLAIM), wait only when asked.
        using mpc::tg::account_how;
        const bool wait = (flags & STARPU_MEMORY_WAIT) != 0;
        account_how how = (flags & STARPU_MALLOC_NORECLAIM) != 0 ? (wait ? account_how::wait : account_how::overflow)
                                                                  : account_how::reclaim;
        mpc::status st = mpc::tg::account_memory(dim, how);
        if (!st.ok() && wait && how == account_how::reclaim) {
            st = mpc::tg::account_memory(dim, account_how::wait);
        }
        if (!st.ok()) {
            *A = nullptr;
            return -ENOMEM;
        }
    }
    void* p = nullptr;
    const int rc = [&] {
        if (starpu_malloc_hook h = starpu::g_malloc_hook.load(std::memory_order_acquire); h != nullptr) {
            return h(STARPU_MAIN_RAM, &p, dim == 0 ? 1 : dim, flags) == 0 && p != nullptr ? 0 : -1;
        }
        return posix_memalign(&p, starpu::g_malloc_align.load(std::memory_order_relaxed), dim == 0 ? 1 : dim);
    }();
    if (rc != 0) {
        if (count) {
            mpc::tg::unaccount_memory(dim);
        }
        *A = nullptr;
        return -ENOMEM;
    }
    *A = p;
    return 0;
}

int starpu_malloc(void** A, size_t dim) { return starpu_malloc_flags(A, dim, 0); }

int starpu_free_flags(void* A, size_t dim, int flags) {
    if (starpu_free_hook h = starpu::g_free_hook.load(std::memory_order_acquire); h != nullptr) {
        if (A != nullptr) {
            h(STARPU_MAIN_RAM, A, dim, flags);
        }
    } else {
        std::free(A);
    }
    if ((flags & STARPU_MALLOC_COUNT) != 0 && A != nullptr) {
        mpc::tg::unaccount_memory(dim);
    }
    return 0;
}

int starpu_memory_allocate(unsigned node, size_t size, int flags) {
    if (node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_memory_allocate: no memory node %u (main memory, 0, is the only one)", node);
        return -EINVAL;
    }
    using mpc::tg::account_how;
    const account_how how = (flags & STARPU_MEMORY_WAIT) != 0       ? account_how::wait
                            : (flags & STARPU_MEMORY_OVERFLOW) != 0 ? account_how::overflow
                                                                    : account_how::now;
    return mpc::tg::account_memory(size, how).ok() ? 0 : -ENOMEM;
}

void starpu_memory_deallocate(unsigned node, size_t size) {
    if (node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_memory_deallocate: no memory node %u (main memory, 0, is the only one)", node);
        return;
    }
    mpc::tg::unaccount_memory(size);
}

void starpu_memory_wait_available(unsigned node, size_t size) {
    if (node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_memory_wait_available: no memory node %u (main memory, 0, is the only one)", node);
        return;
    }
    (void)mpc::tg::wait_memory_room(size);
}

int starpu_free(void* A) {
    if (starpu_free_hook h = starpu::g_free_hook.load(std::memory_order_acquire); h != nullptr) {
        if (A != nullptr) {
            h(STARPU_MAIN_RAM, A, 0, STARPU_MALLOC_PINNED);  // StarPU's: the size is not known
        }
        return 0;
    }
    std::free(A);
    return 0;
}

void starpu_malloc_set_hooks(starpu_malloc_hook malloc_hook, starpu_free_hook free_hook) {
    if ((malloc_hook == nullptr) != (free_hook == nullptr)) {
        MPC_LOG(error, tg, "starpu_malloc_set_hooks: give both hooks, or neither (memory one made would be freed by "
                           "the other's counterpart); nothing changed");
        return;
    }
    if (running()) {
        MPC_LOG(error, tg, "starpu_malloc_set_hooks: call it before starpu_init (memory made meanwhile would be freed "
                           "by the other allocator); nothing changed");
        return;
    }
    starpu::g_malloc_hook.store(malloc_hook, std::memory_order_release);
    starpu::g_free_hook.store(free_hook, std::memory_order_release);
    mpc::tg::memory_hooks h;
    if (malloc_hook != nullptr) {
        h.alloc = &starpu::hooked_alloc;
        h.release = &starpu::hooked_release;
    }
    mpc::tg::set_memory_hooks(h);
}

int starpu_memory_pin(void* /*addr*/, size_t /*size*/) { return 0; }  // no GPU to transfer to

// ---- running a function on workers -------------------------------------------------------------

}  // extern "C"

namespace {

struct on_worker_call {
    void (*func)(void*);
    void* arg;
};

void on_worker_kernel(void** /*buffers*/, void* cl_arg) {
    auto* c = static_cast<on_worker_call*>(cl_arg);
    c->func(c->arg);
}

/// One task per listed worker, pinned to it, all submitted, then waited for.
void run_on_workers(void (*func)(void*), void* arg, const unsigned* workers, unsigned n, const char* name) {
    if (func == nullptr || n == 0) {
        return;
    }
    static starpu_codelet cl{};  // filled once in place: copying one would copy its deprecated fields
    static std::once_flag filled;
    std::call_once(filled, [] {
        cl.cpu_funcs[0] = on_worker_kernel;
        cl.nbuffers = 0;
        cl.name = "execute_on_worker";
    });
    on_worker_call call{func, arg};
    std::vector<starpu_task*> tasks;
    tasks.reserve(n);
    for (unsigned i = 0; i < n; ++i) {
        starpu_task* t = starpu_task_create();
        if (t == nullptr) {
            break;
        }
        t->cl = &cl;
        t->cl_arg = &call;
        t->name = name;
        t->execute_on_a_specific_worker = 1;
        t->workerid = workers[i];
        t->detach = 0;
        t->destroy = 0;
        if (int rc = starpu_task_submit(t); rc != 0) {
            MPC_LOG(error, tg, "starpu_execute_on_specific_workers: worker %u: submission failed (%d)", workers[i], rc);
            starpu_task_destroy(t);
            continue;
        }
        tasks.push_back(t);
    }
    for (starpu_task* t : tasks) {
        if (int rc = starpu_task_wait(t); rc != 0) {
            MPC_LOG(error, tg, "starpu_execute_on_specific_workers: waiting for a call failed (%d)", rc);
        }
        starpu_task_destroy(t);
    }
}

}  // namespace

extern "C" {

void starpu_execute_on_specific_workers(void (*func)(void*), void* arg, unsigned num_workers, unsigned* workers,
                                        const char* name) {
    run_on_workers(func, arg, workers, workers != nullptr ? num_workers : 0, name);
}

void starpu_execute_on_each_worker_ex(void (*func)(void*), void* arg, uint32_t where, const char* name) {
    if ((where & STARPU_CPU) == 0) {
        return;  // only CPU workers exist
    }
    std::vector<unsigned> ids(static_cast<std::size_t>(worker_count()));
    for (unsigned i = 0; i < ids.size(); ++i) {
        ids[i] = i;
    }
    run_on_workers(func, arg, ids.data(), static_cast<unsigned>(ids.size()), name);
}

void starpu_execute_on_each_worker(void (*func)(void*), void* arg, uint32_t where) {
    starpu_execute_on_each_worker_ex(func, arg, where, "execute_on_each_worker");
}

int starpu_memory_unpin(void* /*addr*/, size_t /*size*/) { return 0; }

void starpu_cublas_init(void) {}  // no CUDA worker: nothing to set up (starpu_cublas.h)
void starpu_cublas_set_stream(void) {}
void starpu_cublas_shutdown(void) {}

}  // extern "C"
