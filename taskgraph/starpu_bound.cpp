/// \file
/// StarPU 1.3 C API: the theoretical lower bound of a run (starpu_bound.h). Tasks submitted
/// between starpu_bound_start and _stop are counted by class (codelet name and footprint) with
/// their expected lengths on a CPU worker; the bound is the recorded work spread over the CPU
/// workers (with one kind of worker, the linear program StarPU writes has that optimum, and so
/// has its integer version). Dependencies are not recorded.
#include <starpu.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace mpc::tg::starpu {

std::atomic<bool> g_bound_on{false};

namespace {

struct task_class {
    std::string name;
    unsigned long count = 0;
    double us = 0;  ///< the sum of the expected lengths
};

struct bound_state {
    std::mutex m;
    std::map<std::pair<std::string, uint32_t>, task_class> classes;
    bool uncalibrated = false;  ///< a recorded task had no calibrated model
    bool deps_asked = false;
};

bound_state& state() {
    static bound_state* s = new bound_state;  // used by destructors of programs too
    return *s;
}

starpu_perfmodel_device g_cpu_dev = {STARPU_CPU_WORKER, 0, 1};
starpu_perfmodel_arch g_cpu = {1, &g_cpu_dev};

int cpu_workers() {
    const int n = static_cast<int>(starpu_cpu_worker_get_count());
    return n > 0 ? n : 1;
}

/// The bound in ms, and whether every class had a length.
double bound_ms(bound_state& s) {
    double total = 0;
    for (const auto& [key, c] : s.classes) {
        total += c.us;
    }
    return total / cpu_workers() / 1000.0;
}

}  // namespace

void bound_record(starpu_task* t) noexcept {
    if (t->cl == nullptr) {
        return;  // an empty task: no work
    }
    const char* name = t->name != nullptr ? t->name : (t->cl->name != nullptr ? t->cl->name : "(unnamed)");
    const uint32_t fp = starpu_task_footprint(t->cl->model, t, &g_cpu, 0);
    const double us = starpu_task_expected_length(t, &g_cpu, 0);
    bound_state& s = state();
    std::lock_guard g(s.m);
    task_class& c = s.classes[{name, fp}];
    c.name = name;
    ++c.count;
    if (std::isnan(us) || us < 0) {
        s.uncalibrated = true;
    } else {
        c.us += us;
    }
}

}  // namespace mpc::tg::starpu

namespace sp = mpc::tg::starpu;

extern "C" {

void starpu_bound_start(int deps, int /*prio*/) {
    sp::bound_state& s = sp::state();
    {
        std::lock_guard g(s.m);
        s.classes.clear();
        s.uncalibrated = false;
        s.deps_asked = deps != 0;
    }
    if (deps != 0) {
        MPC_LOG(info, tg, "starpu_bound_start: dependencies are not recorded; the bound is the work spread over "
                          "the workers");
    }
    sp::g_bound_on.store(true, std::memory_order_relaxed);
}

void starpu_bound_stop(void) { sp::g_bound_on.store(false, std::memory_order_relaxed); }

void starpu_bound_compute(double* res, double* integer_res, int /*integer*/) {
    sp::bound_state& s = sp::state();
    std::lock_guard g(s.m);
    const double ms = s.uncalibrated ? 0.0 : sp::bound_ms(s);
    if (res != nullptr) {
        *res = ms;
    }
    if (integer_res != nullptr) {
        *integer_res = ms;
    }
}

void starpu_bound_print_lp(FILE* output) {
    sp::bound_state& s = sp::state();
    std::lock_guard g(s.m);
    const int nw = sp::cpu_workers();
    std::fprintf(output, "/* StarPU upper bound linear programming problem (MPC) */\n");
    std::fprintf(output, "/* We want to minimize total execution time (ms) */\nmin: tmax;\n\n");
    std::fprintf(output, "/* Which is the maximum of all worker execution times (ms) */\n");
    for (int w = 0; w < nw; ++w) {
        std::fprintf(output, "c%d: t%d <= tmax;\n", w, w);
    }
    std::fprintf(output, "\n/* Each worker's execution time: the work of the tasks it gets (ms) */\n");
    int cls = 0;
    for (int w = 0; w < nw; ++w) {
        std::fprintf(output, "t%d = 0", w);
        cls = 0;
        for (const auto& [key, c] : s.classes) {
            const double each = c.count > 0 ? c.us / static_cast<double>(c.count) / 1000.0 : 0.0;
            std::fprintf(output, " + %.6f n%d_%d", each, w, cls++);
        }
        std::fprintf(output, ";\n");
    }
    std::fprintf(output, "\n/* Each class of task must be done */\n");
    cls = 0;
    for (const auto& [key, c] : s.classes) {
        std::fprintf(output, "/* %s, footprint %08x */\n", c.name.c_str(), key.second);
        for (int w = 0; w < nw; ++w) {
            std::fprintf(output, "%sn%d_%d", w == 0 ? "" : " + ", w, cls);
        }
        std::fprintf(output, " = %lu;\n", c.count);
        ++cls;
    }
    std::fprintf(output, "\n/* Task counts are non-negative */\n");
    for (int w = 0; w < nw; ++w) {
        for (int k = 0; k < cls; ++k) {
            std::fprintf(output, "n%d_%d >= 0;\n", w, k);
        }
    }
}

void starpu_bound_print_mps(FILE* output) {
    sp::bound_state& s = sp::state();
    std::lock_guard g(s.m);
    const int nw = sp::cpu_workers();
    const int ncls = static_cast<int>(s.classes.size());
    // Rows: the objective, W_w (t_w - tmax <= 0 with t_w substituted), C_k (each class done).
    std::fprintf(output, "NAME           StarPU theoretical bound (MPC)\nROWS\n N  TMAX\n");
    for (int w = 0; w < nw; ++w) {
        std::fprintf(output, " L  W%d\n", w);
    }
    for (int k = 0; k < ncls; ++k) {
        std::fprintf(output, " E  C%d\n", k);
    }
    std::fprintf(output, "COLUMNS\n    tmax      TMAX      1.0\n");
    for (int w = 0; w < nw; ++w) {
        std::fprintf(output, "    tmax      W%-8d -1.0\n", w);
    }
    int k = 0;
    for (const auto& [key, c] : s.classes) {
        const double each = c.count > 0 ? c.us / static_cast<double>(c.count) / 1000.0 : 0.0;
        for (int w = 0; w < nw; ++w) {
            std::fprintf(output, "    n%d_%-6d W%-8d %.6f\n", w, k, w, each);
            std::fprintf(output, "    n%d_%-6d C%-8d 1.0\n", w, k, k);
        }
        ++k;
    }
    std::fprintf(output, "RHS\n");
    k = 0;
    for (const auto& [key, c] : s.classes) {
        std::fprintf(output, "    RHS       C%-8d %lu\n", k++, c.count);
    }
    std::fprintf(output, "ENDATA\n");
}

void starpu_bound_print_dot(FILE* output) {
    sp::bound_state& s = sp::state();
    std::lock_guard g(s.m);
    std::fprintf(output, "strict digraph bounddeps {\n\tsize=\"8,6\";\n\tratio=\"fill\";\n");
    int k = 0;
    for (const auto& [key, c] : s.classes) {
        std::fprintf(output, "\t\"c%d\" [label=\"%s (%08x) x%lu\"];\n", k++, c.name.c_str(), key.second, c.count);
    }
    std::fprintf(output, "}\n");
}

void starpu_bound_print(FILE* output, int /*integer*/) {
    sp::bound_state& s = sp::state();
    std::lock_guard g(s.m);
    if (s.uncalibrated) {
        std::fprintf(output, "Some tasks had no calibrated performance model: no bound\n");
        return;
    }
    std::fprintf(output, "Theoretical minimum execution time: %f ms (%d CPU workers)\n", sp::bound_ms(s), sp::cpu_workers());
    for (const auto& [key, c] : s.classes) {
        std::fprintf(output, "%s (%08x): %lu tasks, %f ms of work\n", c.name.c_str(), key.second, c.count, c.us / 1000.0);
    }
}

}  // extern "C"
