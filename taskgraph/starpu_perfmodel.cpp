/// \file
/// StarPU 1.3 C API: performance models (starpu_perfmodel.h, the model queries of
/// starpu_scheduler.h) over the core's models (perfmodel.hpp).

#include <algorithm>
#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <tuple>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/perfmodel.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::starpu {
namespace {

bool model_type_of(enum starpu_perfmodel_type t, model_type* out) noexcept {
    switch (t) {
    case STARPU_HISTORY_BASED:
    case STARPU_MULTIPLE_REGRESSION_BASED:  // answered from its history
        *out = model_type::history;
        return true;
    case STARPU_REGRESSION_BASED:
        *out = model_type::regression;
        return true;
    case STARPU_NL_REGRESSION_BASED:
        *out = model_type::nl_regression;
        return true;
    default:
        return false;
    }
}

/// The core model behind a measured model (history or regression with a symbol), or nullptr.
perfmodel* core_of(starpu_perfmodel* m) noexcept {
    if (m == nullptr) {
        return nullptr;
    }
    if (m->state == nullptr) {
        starpu_perfmodel_init(m);
    }
    return reinterpret_cast<perfmodel*>(m->state);
}

data* const* handles_of(starpu_task* t) noexcept {
    return reinterpret_cast<data* const*>(t->dyn_handles != nullptr ? t->dyn_handles : t->handles);
}

int nbuffers_of(const starpu_task* t) noexcept {
    if (t->cl == nullptr) {
        return 0;
    }
    return t->cl->nbuffers == STARPU_VARIABLE_NBUFFERS ? t->nbuffers : t->cl->nbuffers;
}

starpu_perfmodel_per_arch_size_base cpu_size_of(const starpu_perfmodel* m, unsigned impl) noexcept;
extern starpu_perfmodel_arch g_cpu_arch;

std::size_t size_of(starpu_perfmodel* m, starpu_task* t) noexcept {
    if (starpu_perfmodel_per_arch_size_base f = cpu_size_of(m, 0); f != nullptr) {
        return f(t, &g_cpu_arch, 0);
    }
    if (m->size_base != nullptr) {
        return m->size_base(t, 0);
    }
    std::size_t bytes = 0;
    data_footprint(handles_of(t), nbuffers_of(t), &bytes);
    return bytes;
}

bool is_cpu(const starpu_perfmodel_arch* arch) noexcept {
    return arch == nullptr || arch->ndevices < 1 || arch->devices == nullptr ||
           arch->devices[0].type == STARPU_CPU_WORKER;
}

starpu_perfmodel_device g_cpu_device = {STARPU_CPU_WORKER, 0, 1};
starpu_perfmodel_arch g_cpu_arch = {1, &g_cpu_device};

/// Functions given per combination of devices (starpu_perfmodel_set_per_devices_*), by model
/// and implementation; only the CPU workers' combination is ever asked for.
struct per_devices {
    std::mutex m;
    /// The records by model, implementation and combination of devices ((type, devid, ncores)
    /// triples); the program may write into them (starpu_perfmodel_get_model_per_devices).
    std::map<std::tuple<const starpu_perfmodel*, unsigned, std::vector<int>>, std::unique_ptr<starpu_perfmodel_per_arch>> recs;
    starpu_perfmodel_per_arch* get(const starpu_perfmodel* model, unsigned impl, std::vector<int> devs) {
        std::unique_ptr<starpu_perfmodel_per_arch>& r = recs[{model, impl, std::move(devs)}];
        if (!r) {
            r.reset(new starpu_perfmodel_per_arch{});
        }
        return r.get();
    }
};
const std::vector<int> g_cpu_combination{STARPU_CPU_WORKER, 0, 1};
/// Set at the first function recorded: until then a task's model lookups take no lock.
constinit std::atomic<bool> g_per_devices_used{false};
per_devices& devices_table() noexcept {
    static per_devices* t = new per_devices;  // never destroyed: models outlive shutdown
    return *t;
}
/// The CPU workers' record of (m, impl), or nullptr.
const starpu_perfmodel_per_arch* cpu_rec_of(const starpu_perfmodel* m, unsigned impl) noexcept {
    if (!g_per_devices_used.load(std::memory_order_acquire)) {
        return nullptr;
    }
    per_devices& t = devices_table();
    std::lock_guard g(t.m);
    auto it = t.recs.find({m, impl, g_cpu_combination});
    return it != t.recs.end() ? it->second.get() : nullptr;
}
starpu_perfmodel_per_arch_cost_function cpu_cost_of(const starpu_perfmodel* m, unsigned impl) noexcept {
    const starpu_perfmodel_per_arch* r = cpu_rec_of(m, impl);
    return r != nullptr ? r->cost_function : nullptr;
}
starpu_perfmodel_per_arch_size_base cpu_size_of(const starpu_perfmodel* m, unsigned impl) noexcept {
    const starpu_perfmodel_per_arch* r = cpu_rec_of(m, impl);
    return r != nullptr ? r->size_base : nullptr;
}

/// Reads the (type, devid, ncores) triples ended by -1; false for a bad list.
bool read_devices(va_list ap, std::vector<int>* out) noexcept {
    try {
        for (int k = 0; k < STARPU_NMAXWORKERS; ++k) {
            const int type = va_arg(ap, int);
            if (type == -1) {
                return !out->empty();
            }
            const int devid = va_arg(ap, int);
            const int ncores = va_arg(ap, int);
            if (type < STARPU_CPU_WORKER || type > STARPU_MPI_MS_WORKER || devid < 0 || ncores < 1) {
                return false;
            }
            out->insert(out->end(), {type, devid, ncores});
        }
    } catch (...) {
        fatal("starpu_perfmodel_set_per_devices", "no memory");
    }
    return false;
}

/// Records func for (model, impl) when ap names the CPU workers' combination; any other
/// combination is accepted and unused (no other workers exist).
/// The record of (model, impl) on the combination ap lists (made on first use), or nullptr
/// after logging for a bad list.
starpu_perfmodel_per_arch* per_devices_rec(starpu_perfmodel* model, int impl, va_list ap, const char* call) noexcept {
    std::vector<int> devs;
    if (model == nullptr || impl < 0 || impl >= STARPU_MAXIMPLEMENTATIONS || !read_devices(ap, &devs)) {
        MPC_LOG(error, tg, "%s: expected a model, an implementation below %d and (type, devid, ncores) triples "
                           "ended by -1", call, STARPU_MAXIMPLEMENTATIONS);
        return nullptr;
    }
    per_devices& t = devices_table();
    std::lock_guard g(t.m);
    starpu_perfmodel_per_arch* r = nullptr;
    try {
        r = t.get(model, static_cast<unsigned>(impl), std::move(devs));
    } catch (...) {
        fatal(call, "no memory");
    }
    g_per_devices_used.store(true, std::memory_order_release);  // its fields may be written from now on
    return r;
}

/// Sets one field of the record (other combinations are kept and unused: no other workers).
template <class Fn>
int set_per_devices(starpu_perfmodel* model, int impl, Fn func, va_list ap, Fn starpu_perfmodel_per_arch::*field,
                    const char* call) noexcept {
    starpu_perfmodel_per_arch* r = per_devices_rec(model, impl, ap, call);
    if (r == nullptr) {
        return -EINVAL;
    }
    per_devices& t = devices_table();
    std::lock_guard g(t.m);
    r->*field = func;
    return 0;
}

/// Expected value of model m for t (µs for a duration model): see starpu_task_expected_length.
double expected(starpu_perfmodel* m, starpu_task* t, starpu_perfmodel_arch* arch, unsigned nimpl) noexcept {
    if (m == nullptr) {
        return 0.0;
    }
    if (m->type == STARPU_COMMON) {
        return m->cost_function != nullptr ? m->cost_function(t, nimpl) : std::nan("");
    }
    if (m->type == STARPU_PER_ARCH) {
        if (m->arch_cost_function != nullptr) {
            return m->arch_cost_function(t, arch != nullptr ? arch : &g_cpu_arch, nimpl);
        }
        starpu_perfmodel_per_arch_cost_function f = is_cpu(arch) ? cpu_cost_of(m, nimpl) : nullptr;
        return f != nullptr ? f(t, arch != nullptr ? arch : &g_cpu_arch, nimpl) : std::nan("");
    }
    perfmodel* core = core_of(m);
    if (core == nullptr) {
        return 0.0;  // no symbol: StarPU ignores the model
    }
    if (!is_cpu(arch)) {
        return std::nan("");
    }
    return model_expected_us(core, static_cast<int>(std::min<unsigned>(nimpl, STARPU_MAXIMPLEMENTATIONS - 1)),
                             starpu_task_footprint(m, t, arch, nimpl), size_of(m, t));  // per implementation
}

/// Reads the "symbol" and "type" lines of a model file.
bool peek(const char* path, std::string* symbol, enum starpu_perfmodel_type* type) {
    std::ifstream in(path);
    std::string line;
    *type = STARPU_PERFMODEL_INVALID;
    while (in && std::getline(in, line)) {
        std::istringstream ls(line);
        std::string key;
        std::string value;
        ls >> key >> value;
        if (key == "symbol") {
            *symbol = value;
        } else if (key == "type") {
            *type = value == "history"         ? STARPU_HISTORY_BASED
                    : value == "regression"    ? STARPU_REGRESSION_BASED
                    : value == "nl_regression" ? STARPU_NL_REGRESSION_BASED
                                               : STARPU_PERFMODEL_INVALID;
        }
    }
    return !symbol->empty() && *type != STARPU_PERFMODEL_INVALID;
}

int load(const char* path, const char* symbol, starpu_perfmodel* model) {
    std::string sym = symbol != nullptr ? symbol : "";
    std::string file_sym;
    enum starpu_perfmodel_type file_type = STARPU_PERFMODEL_INVALID;
    std::ifstream probe(path);
    if (!probe) {
        return 1;  // StarPU 1.3 answers 1 for a model it does not find
    }
    if (!peek(path, &file_sym, &file_type) || (!sym.empty() && file_sym != sym)) {
        MPC_LOG(warn, tg, "performance model file %s ignored: no valid symbol and type lines", path);
        return -EINVAL;
    }
    model_type mt{};
    if (model->type == STARPU_PERFMODEL_INVALID) {
        model->type = file_type;
    }
    if (!model_type_of(model->type, &mt)) {
        return -EINVAL;
    }
    perfmodel* core = model_get(file_sym.c_str(), mt);
    std::string why;
    if (status st = model_load_file(core, path, &why); !st.ok()) {
        MPC_LOG(warn, tg, "performance model file %s ignored: %s", path, why.c_str());
        return st.code() == errc::system && st.sys_errno() == ENOENT ? 1 : -EINVAL;
    }
    if (model->symbol == nullptr) {
        model->symbol = model_symbol(core);  // lives as long as the process
    }
    model->state = reinterpret_cast<starpu_perfmodel_state_t>(core);
    model->is_init = 1;
    model->is_loaded = 1;
    return 0;
}

}  // namespace

void fill_model(starpu_task* t, task_desc* d) noexcept {
    starpu_perfmodel* m = t->cl != nullptr ? t->cl->model : nullptr;
    if (m == nullptr) {
        return;
    }
    if (m->type == STARPU_COMMON || m->type == STARPU_PER_ARCH) {
        double c = expected(m, t, &g_cpu_arch, 0);
        d->cost_us = std::isnan(c) ? -1.0 : c;
        return;
    }
    perfmodel* core = core_of(m);
    if (core == nullptr) {
        return;
    }
    d->model = core;
    std::size_t bytes = 0;
    std::uint32_t fp = data_footprint(d->handles, d->nbuffers, &bytes);
    d->footprint = m->footprint != nullptr ? m->footprint(t) : fp;
    d->size = m->size_base != nullptr ? m->size_base(t, 0) : bytes;
}

}  // namespace mpc::tg::starpu

using namespace mpc::tg;
using namespace mpc::tg::starpu;

extern "C" {

void starpu_perfmodel_init(struct starpu_perfmodel* model) {
    if (model == nullptr || model->is_init != 0) {
        return;
    }
    model_type mt{};
    if (model->symbol != nullptr && model->symbol[0] != '\0' && model_type_of(model->type, &mt)) {
        model->state = reinterpret_cast<starpu_perfmodel_state_t>(model_get(model->symbol, mt));
    }
    model->is_init = 1;
}

int starpu_perfmodel_load_symbol(const char* symbol, struct starpu_perfmodel* model) {
    if (symbol == nullptr || *symbol == '\0' || model == nullptr) {
        return -EINVAL;
    }
    return load(model_path(symbol).c_str(), symbol, model);
}

int starpu_perfmodel_load_file(const char* filename, struct starpu_perfmodel* model) {
    if (filename == nullptr || model == nullptr) {
        return -EINVAL;
    }
    return load(filename, nullptr, model);
}

int starpu_perfmodel_unload_model(struct starpu_perfmodel* model) {
    if (model == nullptr) {
        return -EINVAL;
    }
    model->is_loaded = 0;
    return 0;
}

void starpu_perfmodel_get_model_path(const char* symbol, char* path, size_t maxlen) {
    if (path == nullptr || maxlen == 0) {
        return;
    }
    std::snprintf(path, maxlen, "%s", symbol != nullptr ? model_path(symbol).c_str() : "");
}

void starpu_perfmodel_free_sampling(void) { model_unload_all(); }

void starpu_perfmodel_update_history(struct starpu_perfmodel* model, struct starpu_task* task,
                                     struct starpu_perfmodel_arch* arch, unsigned /*cpuid*/, unsigned nimpl,
                                     double measured) {
    perfmodel* core = core_of(model);
    if (core == nullptr || task == nullptr || !is_cpu(arch)) {
        return;
    }
    model_record(core, static_cast<int>(std::min<unsigned>(nimpl, STARPU_MAXIMPLEMENTATIONS - 1)),
                 starpu_task_footprint(model, task, arch, nimpl), size_of(model, task), measured, true);
}

double starpu_perfmodel_history_based_expected_perf(struct starpu_perfmodel* model,
                                                    struct starpu_perfmodel_arch* arch, uint32_t footprint) {
    perfmodel* core = core_of(model);
    if (core == nullptr || !is_cpu(arch)) {
        return std::nan("");
    }
    return model_expected_us(core, arch_cpu, footprint, 0);
}

struct starpu_perfmodel_arch* starpu_worker_get_perf_archtype(int workerid, unsigned /*sched_ctx_id*/) {
    if (workerid < 0 || workerid >= worker_count()) {
        return nullptr;
    }
    return &g_cpu_arch;
}

char* starpu_perfmodel_get_archtype_name(enum starpu_worker_archtype archtype) {
    static char cpu[] = "cpu", cuda[] = "cuda", opencl[] = "opencl", any[] = "any";
    switch (archtype) {
    case STARPU_CPU_WORKER:
        return cpu;
    case STARPU_CUDA_WORKER:
        return cuda;
    case STARPU_OPENCL_WORKER:
        return opencl;
    default:
        return any;
    }
}

void starpu_perfmodel_get_arch_name(struct starpu_perfmodel_arch* arch, char* archname, size_t maxlen,
                                    unsigned nimpl) {
    if (archname == nullptr || maxlen == 0) {
        return;
    }
    enum starpu_worker_archtype t =
        arch != nullptr && arch->ndevices > 0 && arch->devices != nullptr ? arch->devices[0].type : STARPU_CPU_WORKER;
    std::snprintf(archname, maxlen, "%s_impl%u", starpu_perfmodel_get_archtype_name(t), nimpl);
}

uint32_t starpu_task_data_footprint(struct starpu_task* task) {
    if (task == nullptr) {
        return 0;
    }
    return data_footprint(handles_of(task), nbuffers_of(task), nullptr);
}

uint32_t starpu_task_footprint(struct starpu_perfmodel* model, struct starpu_task* task,
                               struct starpu_perfmodel_arch* /*arch*/, unsigned /*nimpl*/) {
    if (model != nullptr && model->footprint != nullptr) {
        return model->footprint(task);
    }
    return starpu_task_data_footprint(task);
}

int starpu_perfmodel_set_per_devices_cost_function(struct starpu_perfmodel* model, int impl,
                                                   starpu_perfmodel_per_arch_cost_function func, ...) {
    va_list ap;
    va_start(ap, func);
    const int rc = starpu::set_per_devices(model, impl, func, ap, &starpu_perfmodel_per_arch::cost_function,
                                           "starpu_perfmodel_set_per_devices_cost_function");
    va_end(ap);
    return rc;
}

int starpu_perfmodel_set_per_devices_size_base(struct starpu_perfmodel* model, int impl,
                                               starpu_perfmodel_per_arch_size_base func, ...) {
    va_list ap;
    va_start(ap, func);
    const int rc = starpu::set_per_devices(model, impl, func, ap, &starpu_perfmodel_per_arch::size_base,
                                           "starpu_perfmodel_set_per_devices_size_base");
    va_end(ap);
    return rc;
}

struct starpu_perfmodel_per_arch* starpu_perfmodel_get_model_per_devices(struct starpu_perfmodel* model, int impl, ...) {
    va_list ap;
    va_start(ap, impl);
    starpu_perfmodel_per_arch* r = starpu::per_devices_rec(model, impl, ap, "starpu_perfmodel_get_model_per_devices");
    va_end(ap);
    return r;
}

namespace {
starpu_perfmodel_per_arch* per_arch_rec(starpu_perfmodel* model, starpu_perfmodel_arch* arch, unsigned impl, ...) {
    va_list ap;
    va_start(ap, impl);
    starpu_perfmodel_per_arch* r = starpu::per_devices_rec(model, static_cast<int>(impl), ap, "starpu_perfmodel_get_model_per_arch");
    va_end(ap);
    (void)arch;
    return r;
}
}  // namespace

struct starpu_perfmodel_per_arch* starpu_perfmodel_get_model_per_arch(struct starpu_perfmodel* model,
                                                                      struct starpu_perfmodel_arch* arch, unsigned impl) {
    if (arch == nullptr || arch->ndevices != 1 || arch->devices == nullptr) {
        MPC_LOG(error, tg, "starpu_perfmodel_get_model_per_arch: expected an architecture of one device");
        return nullptr;
    }
    return per_arch_rec(model, arch, impl, static_cast<int>(arch->devices[0].type), arch->devices[0].devid,
                        arch->devices[0].ncores, -1);
}

double starpu_task_expected_length(struct starpu_task* task, struct starpu_perfmodel_arch* arch, unsigned nimpl) {
    if (task == nullptr || task->cl == nullptr) {
        return 0.0;
    }
    return expected(task->cl->model, task, arch, nimpl);
}

double starpu_task_expected_energy(struct starpu_task* task, struct starpu_perfmodel_arch* arch, unsigned nimpl) {
    if (task == nullptr || task->cl == nullptr) {
        return 0.0;
    }
    return expected(task->cl->energy_model, task, arch, nimpl);
}

double starpu_worker_get_relative_speedup(struct starpu_perfmodel_arch* perf_arch) {
    return is_cpu(perf_arch) ? 1.0 : std::nan("");
}

static double nop_cost(struct starpu_task* /*task*/, struct starpu_perfmodel_arch* /*arch*/, unsigned /*nimpl*/) {
    return 0.000001;
}

struct starpu_perfmodel starpu_perfmodel_nop = [] {
    starpu_perfmodel m{};
    m.type = STARPU_PER_ARCH;
    m.arch_cost_function = nop_cost;
    return m;
}();


// ---- Tools: what starpu_perfmodel_display and starpu_perfmodel_plot read.

void starpu_perfmodel_initialize(void) {}  // the models are read on first use, with or without starpu_init

void starpu_perfmodel_directory(FILE* output) { std::fprintf(output, "directory: <%s>\n", model_dir().c_str()); }

int starpu_perfmodel_list(FILE* output) {
    std::vector<std::string> syms;
    if (!model_stored(&syms)) {
        MPC_LOG(error, tg, "starpu_perfmodel_list: cannot open the model directory %s", model_dir().c_str());
        return 1;
    }
    for (const std::string& sym : syms) {
        std::fprintf(output, "file: <%s>\n", sym.c_str());
    }
    return 0;
}

namespace {
/// The architecture index (the CPU, implementation nimpl) of arch, or -1.
int arch_index(const starpu_perfmodel_arch* arch, unsigned nimpl) noexcept {
    return (arch == nullptr || starpu::is_cpu(arch)) && nimpl < STARPU_MAXIMPLEMENTATIONS ? static_cast<int>(nimpl) : -1;
}

void print_arch(perfmodel* core, int a, const char* parameter, const uint32_t* footprint, FILE* out) {
    double ra = 0, rb = 0, rc = 0;
    const bool fit = model_fit(core, a, &ra, &rb, &rc);
    if (parameter != nullptr) {  // one parameter of the regression, as StarPU prints it
        if (!fit) {
            std::fprintf(out, "nan\n");
        } else if (std::strcmp(parameter, "a") == 0) {
            std::fprintf(out, "%e\n", ra);
        } else if (std::strcmp(parameter, "b") == 0) {
            std::fprintf(out, "%e\n", rb);
        } else if (std::strcmp(parameter, "c") == 0) {
            std::fprintf(out, "%e\n", rc);
        } else {
            MPC_LOG(error, tg, "starpu_perfmodel_print: unknown parameter '%s' (a, b or c)", parameter);
        }
        return;
    }
    if (fit) {
        std::fprintf(out, "# regression: a * size^b + c\n# a\t\tb\t\tc\n%e\t%e\t%e\n", ra, rb, rc);
    }
    std::vector<model_entry> es = model_entries(core, a);
    if (es.empty()) {
        return;
    }
    std::fprintf(out, "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tn\n");
    for (const model_entry& e : es) {
        if (footprint == nullptr || *footprint == e.footprint) {
            std::fprintf(out, "%08x\t%-15zu\t%-15e\t%-15e\t%-15e\t%u\n", e.footprint, e.size, 0.0, e.mean_us, e.stddev_us,
                         e.n);
        }
    }
}
}  // namespace

void starpu_perfmodel_print(struct starpu_perfmodel* model, struct starpu_perfmodel_arch* arch, unsigned nimpl,
                            char* parameter, uint32_t* footprint, FILE* output) {
    perfmodel* core = starpu::core_of(model);
    const int a = arch_index(arch, nimpl);
    if (core == nullptr || a < 0) {
        MPC_LOG(error, tg, "starpu_perfmodel_print: %s", core == nullptr ? "not a measured model (history or regression "
                                                                          "with a symbol)" : "no such architecture");
        return;
    }
    print_arch(core, a, parameter, footprint, output);
}

int starpu_perfmodel_print_all(struct starpu_perfmodel* model, char* arch, char* parameter, uint32_t* footprint,
                               FILE* output) {
    perfmodel* core = starpu::core_of(model);
    if (core == nullptr) {
        MPC_LOG(error, tg, "starpu_perfmodel_print_all: not a measured model (history or regression with a symbol)");
        return -EINVAL;
    }
    bool any = false;
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS; ++k) {
        char name[32];
        starpu_perfmodel_get_arch_name(&starpu::g_cpu_arch, name, sizeof name, k);
        if (arch != nullptr && std::strcmp(arch, name) != 0 && std::strcmp(arch, "cpu") != 0) {
            continue;
        }
        any = any || arch != nullptr;
        double ra, rb, rc;
        if (model_entries(core, static_cast<int>(k)).empty() && !model_fit(core, static_cast<int>(k), &ra, &rb, &rc)) {
            continue;
        }
        if (parameter == nullptr) {
            std::fprintf(output, "performance model for %s\n", name);
        }
        print_arch(core, static_cast<int>(k), parameter, footprint, output);
    }
    if (arch != nullptr && !any) {
        MPC_LOG(error, tg, "starpu_perfmodel_print_all: unknown architecture '%s' (cpu, or cpu_impl<k>)", arch);
        return -EINVAL;
    }
    return 0;
}

int starpu_perfmodel_print_estimations(struct starpu_perfmodel* model, uint32_t footprint, FILE* output) {
    perfmodel* core = starpu::core_of(model);
    if (core == nullptr) {
        MPC_LOG(error, tg, "starpu_perfmodel_print_estimations: not a measured model");
        return -EINVAL;
    }
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS; ++k) {
        for (const model_entry& e : model_entries(core, static_cast<int>(k))) {
            if (e.footprint == footprint) {
                char name[32];
                starpu_perfmodel_get_arch_name(&starpu::g_cpu_arch, name, sizeof name, k);
                std::fprintf(output, "%s\t%f\t%f\t%u\n", name, e.mean_us, e.stddev_us, e.n);
            }
        }
    }
    return 0;
}

void starpu_perfmodel_debugfilepath(struct starpu_perfmodel* model, struct starpu_perfmodel_arch* arch, char* path,
                                    size_t maxlen, unsigned nimpl) {
    if (path == nullptr || maxlen == 0) {
        return;
    }
    char name[32];
    starpu_perfmodel_get_arch_name(arch, name, sizeof name, nimpl);
    // StarPU writes such a file with STARPU_MODEL_DEBUG; MPC writes none (the trace, MPC_TG_TRACE,
    // holds every run): the name says where it would be.
    std::snprintf(path, maxlen, "%s.%s.debug",
                  model != nullptr && model->symbol != nullptr ? model_path(model->symbol).c_str() : "", name);
}

void starpu_perfmodel_dump_xml(FILE* output, struct starpu_perfmodel* model) {
    perfmodel* core = starpu::core_of(model);
    if (core == nullptr) {
        MPC_LOG(error, tg, "starpu_perfmodel_dump_xml: not a measured model (history or regression with a symbol)");
        return;
    }
    std::fprintf(output, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                         "<!DOCTYPE StarPUPerfmodel SYSTEM \"starpu-perfmodel.dtd\">\n"
                         "<!-- %s -->\n<!-- All times in us -->\n<perfmodel version=\"45\">\n"
                         "  <combination>\n    <device type=\"CPU\" id=\"0\" ncores=\"1\"/>\n",
                 model_symbol(core));
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS; ++k) {
        std::vector<model_entry> es = model_entries(core, static_cast<int>(k));
        double ra, rb, rc;
        const bool fit = model_fit(core, static_cast<int>(k), &ra, &rb, &rc);
        if (es.empty() && !fit) {
            continue;
        }
        std::fprintf(output, "    <implementation id=\"%u\">\n", k);
        if (fit) {
            std::fprintf(output, "      <nl_regression a=\"%e\" b=\"%e\" c=\"%e\"/>\n", ra, rb, rc);
        }
        for (const model_entry& e : es) {
            std::fprintf(output,
                         "      <entry footprint=\"%08x\" size=\"%zu\" flops=\"%e\" mean=\"%e\" deviation=\"%e\" "
                         "sum=\"%e\" sum2=\"%e\" nsample=\"%u\"/>\n",
                         e.footprint, e.size, 0.0, e.mean_us, e.stddev_us, e.sum, e.sum2, e.n);
        }
        std::fprintf(output, "    </implementation>\n");
    }
    std::fprintf(output, "  </combination>\n</perfmodel>\n");
}

// Combinations of devices: the CPU workers' one (STARPU_CPU_WORKER, 0, 1) is 0; the others a
// program adds are kept (numbered from 1) and used by no worker.
namespace {
std::mutex g_combs_lock;
std::vector<std::vector<starpu_perfmodel_device>> g_combs;  ///< those added, from 1
std::vector<std::unique_ptr<starpu_perfmodel_arch>> g_comb_archs;

bool same(int n, const starpu_perfmodel_device* a, const std::vector<starpu_perfmodel_device>& b) noexcept {
    if (static_cast<std::size_t>(n) != b.size()) {
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (a[i].type != b[static_cast<std::size_t>(i)].type || a[i].devid != b[static_cast<std::size_t>(i)].devid ||
            a[i].ncores != b[static_cast<std::size_t>(i)].ncores) {
            return false;
        }
    }
    return true;
}
}  // namespace

int starpu_perfmodel_get_narch_combs(void) {
    std::lock_guard<std::mutex> g(g_combs_lock);
    return 1 + static_cast<int>(g_combs.size());
}

int starpu_perfmodel_arch_comb_get(int ndevices, struct starpu_perfmodel_device* devices) {
    if (ndevices <= 0 || devices == nullptr) {
        return -1;
    }
    if (ndevices == 1 && devices[0].type == STARPU_CPU_WORKER &&
        devices[0].ncores == 1) {
        return 0;  // every CPU worker's combination
    }
    std::lock_guard<std::mutex> g(g_combs_lock);
    for (std::size_t i = 0; i < g_combs.size(); ++i) {
        if (same(ndevices, devices, g_combs[i])) {
            return static_cast<int>(i) + 1;
        }
    }
    return -1;
}

int starpu_perfmodel_arch_comb_add(int ndevices, struct starpu_perfmodel_device* devices) {
    if (ndevices <= 0 || devices == nullptr) {
        MPC_LOG(error, tg, "starpu_perfmodel_arch_comb_add: %d devices", ndevices);
        return -EINVAL;
    }
    if (int c = starpu_perfmodel_arch_comb_get(ndevices, devices); c >= 0) {
        return c;
    }
    std::lock_guard<std::mutex> g(g_combs_lock);
    try {
        g_combs.emplace_back(devices, devices + ndevices);
        auto a = std::make_unique<starpu_perfmodel_arch>();
        a->ndevices = ndevices;
        a->devices = g_combs.back().data();
        g_comb_archs.push_back(std::move(a));
    } catch (const std::bad_alloc&) {
        return -ENOMEM;
    }
    return static_cast<int>(g_combs.size());
}

struct starpu_perfmodel_arch* starpu_perfmodel_arch_comb_fetch(int comb) {
    if (comb == 0) {
        return &starpu::g_cpu_arch;
    }
    std::lock_guard<std::mutex> g(g_combs_lock);
    return comb > 0 && static_cast<std::size_t>(comb) <= g_comb_archs.size() ? g_comb_archs[static_cast<std::size_t>(comb) - 1].get()
                                                                             : nullptr;
}

int starpu_perfmodel_list_combs(FILE* output, struct starpu_perfmodel* model) {
    perfmodel* core = starpu::core_of(model);
    if (core == nullptr) {
        return -EINVAL;
    }
    std::fprintf(output, "Model <%s>\n", model_symbol(core));
    bool has = false;
    for (unsigned k = 0; k < STARPU_MAXIMPLEMENTATIONS && !has; ++k) {
        double ra, rb, rc;
        has = !model_entries(core, static_cast<int>(k)).empty() || model_fit(core, static_cast<int>(k), &ra, &rb, &rc);
    }
    if (has) {
        std::fprintf(output, "\t0: CPU (devid 0, ncores 1)\n");
    }
    return 0;
}

}  // extern "C"
