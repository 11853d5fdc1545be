/// \file
/// StarPU 1.3 C API: initialisation, workers, priorities, memory, and the helpers the other
/// starpu_*.cpp files share.

#include <starpu.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::starpu {
namespace {
constexpr int conf_magic = 42;
std::atomic<std::size_t> g_malloc_align{sizeof(void*)};
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

extern "C" {

int starpu_conf_init(struct starpu_conf* conf) {
    if (conf == nullptr) {
        return -EINVAL;
    }
    conf->magic = starpu::conf_magic;
    conf->sched_policy_name = nullptr;
    conf->sched_policy = nullptr;
    conf->sched_policy_init = nullptr;
    conf->precedence_over_environment_variables = 0;
    conf->ncpus = -1;
    conf->ncuda = -1;
    conf->nopencl = -1;
    conf->nmic = -1;
    conf->nmpi_ms = -1;
    return 0;
}

int starpu_init(struct starpu_conf* conf) {
    config c;
    if (conf != nullptr) {
        if (conf->magic != starpu::conf_magic) {
            MPC_LOG(error, tg, "starpu_init: the configuration was not set up with starpu_conf_init()");
            return -EINVAL;
        }
        if (conf->ncuda > 0 || conf->nopencl > 0 || conf->nmic > 0 || conf->nmpi_ms > 0) {
            // Like a StarPU built without these drivers: no such worker; say so.
            MPC_LOG(warn, tg, "starpu_init: %d CUDA, %d OpenCL, %d MIC and %d MPI-MS workers asked for; only CPU "
                              "workers exist", conf->ncuda, conf->nopencl, conf->nmic, conf->nmpi_ms);
        }
        c.ncpus = conf->ncpus;
        c.sched = conf->sched_policy_name;
        if (conf->sched_policy != nullptr) {
            if (int rc = starpu::user_policy_entry(conf->sched_policy, &c.custom_policy); rc != 0) {
                return rc;
            }
        }
        c.config_over_env = conf->precedence_over_environment_variables != 0;
        starpu::set_policy_init(conf->sched_policy_init);
        if (conf->sched_policy_init != nullptr) {
            c.heteroprio_setup = &starpu::heteroprio_setup;
        }
    }
    return starpu::errno_of(init(c));
}

int starpu_initialize(struct starpu_conf* user_conf, int* /*argc*/, char*** /*argv*/) { return starpu_init(user_conf); }

int starpu_is_initialized(void) { return running() ? 1 : 0; }

void starpu_shutdown(void) {
    if (mpc::status st = shutdown(); !st.ok()) {
        MPC_LOG(error, tg, "starpu_shutdown: %s", st.reason());
    }
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
unsigned starpu_memory_nodes_get_count(void) { return 1; }
enum starpu_node_kind starpu_node_get_kind(unsigned node) { return node == STARPU_MAIN_RAM ? STARPU_CPU_RAM : STARPU_UNUSED; }

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

int starpu_sched_get_min_priority(void) {
    int lo = 0;
    int hi = 0;
    priority_range(&lo, &hi);
    return starpu::heteroprio_setup_workers() != 0 ? 0 : lo;  // 0 also while heteroprio is set up
}
int starpu_sched_get_max_priority(void) {
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
    if (A == nullptr || (flags & ~static_cast<int>(STARPU_MALLOC_PINNED)) != 0) {
        return -EINVAL;
    }
    void* p = nullptr;
    if (posix_memalign(&p, starpu::g_malloc_align.load(std::memory_order_relaxed), dim == 0 ? 1 : dim) != 0) {
        *A = nullptr;
        return -ENOMEM;
    }
    *A = p;
    return 0;
}

int starpu_malloc(void** A, size_t dim) { return starpu_malloc_flags(A, dim, 0); }

int starpu_free_flags(void* A, size_t /*dim*/, int /*flags*/) {
    std::free(A);
    return 0;
}

int starpu_free(void* A) {
    std::free(A);
    return 0;
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
    static starpu_codelet cl = [] {
        starpu_codelet c{};
        c.cpu_funcs[0] = on_worker_kernel;
        c.nbuffers = 0;
        c.name = "execute_on_worker";
        return c;
    }();
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
