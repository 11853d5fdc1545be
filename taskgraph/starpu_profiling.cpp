/// \file
/// StarPU 1.3 C API: profiling (starpu_profiling.h) on the core's task times and worker
/// counters (tg.hpp, "Profiling").
///
/// A task submitted while profiling is on gets a profile_block: StarPU's
/// starpu_profiling_task_info, which starpu_task::profiling_info points to, followed by the
/// core's task_times, which the runtime stamps. The stamps become StarPU's dates (relative to
/// starpu_init) when the task ends, before the application's callback, whose own dates are
/// written around it.

#include <starpu.h>
#include <starpu_profiling.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::starpu {
namespace {

/// What starpu_task::profiling_info points to (its first member).
struct profile_block {
    starpu_profiling_task_info info;
    task_times times;
    bool armed = false;  ///< the task's current submission is timed
};

profile_block* block_of(starpu_profiling_task_info* info) noexcept {
    return reinterpret_cast<profile_block*>(info);  // info is the block's first member
}

timespec to_timespec(std::uint64_t ns) noexcept {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / 1000000000u);
    ts.tv_nsec = static_cast<long>(ns % 1000000000u);
    return ts;
}

/// A date of the core's clock relative to starpu_init; 0 (a stage not gone through) stays 0.
timespec date_of(std::uint64_t ns) noexcept {
    const std::uint64_t t0 = started_ns();
    return ns == 0 ? timespec{} : to_timespec(ns > t0 ? ns - t0 : 0);
}

bool bad_bus(int busid, const char* call) noexcept {
    MPC_LOG(error, tg, "%s: no bus %d (main memory is the only memory node: there is no bus)", call, busid);
    return true;
}

bool env_on(const char* name) noexcept {
    const char* s = std::getenv(name);
    return s != nullptr && std::atoi(s) != 0;
}

}  // namespace

task_times* profile_for_submit(starpu_task* t) noexcept {
    if (!profiling()) {
        if (t->profiling_info != nullptr) {
            block_of(t->profiling_info)->armed = false;  // the last profiled run's dates stay
        }
        return nullptr;
    }
    if (t->profiling_info == nullptr) {
        auto* b = new (std::nothrow) profile_block{};
        if (b == nullptr) {
            MPC_LOG(warn, tg, "task %s: no memory for its profiling record; it is not profiled",
                    t->name != nullptr ? t->name : "(unnamed)");
            return nullptr;
        }
        t->profiling_info = &b->info;
    }
    profile_block* b = block_of(t->profiling_info);
    *b = profile_block{};  // a task submitted again starts a new record
    b->info.workerid = -1;
    b->times.flops = t->flops;
    b->armed = true;
    return &b->times;
}

void profile_free(starpu_task* t) noexcept {
    delete block_of(t->profiling_info);
    t->profiling_info = nullptr;
}

void profile_task_end(starpu_task* t) noexcept {
    if (t->profiling_info == nullptr || !block_of(t->profiling_info)->armed) {
        return;
    }
    profile_block* b = block_of(t->profiling_info);
    const task_times& s = b->times;
    starpu_profiling_task_info& i = b->info;
    i.submit_time = date_of(s.submit);
    i.push_start_time = date_of(s.push_start);
    i.push_end_time = date_of(s.push_end);
    i.pop_start_time = date_of(s.pop_start);
    i.pop_end_time = date_of(s.pop_end);
    i.acquire_data_start_time = date_of(s.fetch_start);
    i.acquire_data_end_time = date_of(s.fetch_end);
    i.start_time = date_of(s.start);
    i.end_time = date_of(s.end);
    i.release_data_start_time = date_of(s.release_start);
    i.release_data_end_time = date_of(s.release_end);
    i.workerid = s.worker;
}

void profile_callback(starpu_task* t, bool end) noexcept {
    if (t->profiling_info != nullptr && block_of(t->profiling_info)->armed) {
        (end ? t->profiling_info->callback_end_time : t->profiling_info->callback_start_time) = date_of(clock_ns());
    }
}

}  // namespace mpc::tg::starpu

using namespace mpc::tg;

extern "C" {

void starpu_profiling_init(void) {
    // Enabling resets the counters; a disabled profiling has none to reset.
    if (starpu::env_on("STARPU_PROFILING") || profiling()) {
        set_profiling(true);
    }
}

void starpu_profiling_set_id(int /*new_id*/) {}

int starpu_profiling_status_set(int status) {
    if (status != STARPU_PROFILING_ENABLE && status != STARPU_PROFILING_DISABLE) {
        MPC_LOG(error, tg, "starpu_profiling_status_set(%d): expected STARPU_PROFILING_ENABLE or _DISABLE", status);
        return -EINVAL;
    }
    return set_profiling(status == STARPU_PROFILING_ENABLE) ? STARPU_PROFILING_ENABLE : STARPU_PROFILING_DISABLE;
}

int starpu_profiling_status_get(void) { return profiling() ? STARPU_PROFILING_ENABLE : STARPU_PROFILING_DISABLE; }

int starpu_profiling_worker_get_info(int workerid, struct starpu_profiling_worker_info* worker_info) {
    worker_profile p;
    if (mpc::status st = worker_profile_take(workerid, worker_info != nullptr ? &p : nullptr); !st.ok()) {
        return st.code() == mpc::errc::not_initialized ? -ENODEV : -EINVAL;
    }
    if (worker_info != nullptr) {
        std::memset(worker_info, 0, sizeof *worker_info);
        worker_info->start_time = starpu::date_of(p.start_ns);
        worker_info->total_time = starpu::to_timespec(p.total_ns);
        worker_info->executing_time = starpu::to_timespec(p.executing_ns);
        worker_info->sleeping_time = starpu::to_timespec(p.sleeping_ns);
        worker_info->executed_tasks = static_cast<int>(p.tasks);
        worker_info->flops = p.flops;
    }
    return 0;
}

int starpu_bus_get_count(void) { return 0; }
int starpu_bus_get_id(int /*src*/, int /*dst*/) { return -1; }
int starpu_bus_get_src(int busid) { return starpu::bad_bus(busid, "starpu_bus_get_src") ? -1 : 0; }
int starpu_bus_get_dst(int busid) { return starpu::bad_bus(busid, "starpu_bus_get_dst") ? -1 : 0; }
void starpu_bus_set_direct(int busid, int /*direct*/) { starpu::bad_bus(busid, "starpu_bus_set_direct"); }
int starpu_bus_get_direct(int busid) { return starpu::bad_bus(busid, "starpu_bus_get_direct") ? -1 : 0; }
void starpu_bus_set_ngpus(int busid, int /*ngpus*/) { starpu::bad_bus(busid, "starpu_bus_set_ngpus"); }
int starpu_bus_get_ngpus(int busid) { return starpu::bad_bus(busid, "starpu_bus_get_ngpus") ? -1 : 0; }
int starpu_bus_get_profiling_info(int busid, struct starpu_profiling_bus_info* /*bus_info*/) {
    return starpu::bad_bus(busid, "starpu_bus_get_profiling_info") ? -EINVAL : 0;
}

double starpu_timing_timespec_to_us(struct timespec* ts) {
    return static_cast<double>(ts->tv_sec) * 1e6 + static_cast<double>(ts->tv_nsec) / 1e3;
}

double starpu_timing_timespec_delay_us(struct timespec* start, struct timespec* end) {
    timespec d;
    starpu_timespec_sub(end, start, &d);
    return starpu_timing_timespec_to_us(&d);
}

void starpu_profiling_bus_helper_display_summary(void) {
    if (!starpu::env_on("STARPU_BUS_STATS")) {
        return;
    }
    std::fprintf(stderr, "\n#---------------------\nData transfer stats:\nTotal transfers: 0.0000 GB "
                         "(main memory only: no bus)\n#---------------------\n");
}

void starpu_profiling_worker_helper_display_summary(void) {
    if (!starpu::env_on("STARPU_WORKER_STATS")) {
        return;
    }
    std::FILE* f = stderr;
    const char* path = std::getenv("STARPU_WORKER_STATS_FILE");
    if (path != nullptr) {
        f = std::fopen(path, "w");
        if (f == nullptr) {
            MPC_LOG(error, tg, "STARPU_WORKER_STATS_FILE=%s: cannot open it (%s); worker stats not written", path,
                    std::strerror(errno));
            return;
        }
    }
    const bool prof = profiling();
    std::fprintf(f, "\n#---------------------\nWorker stats:\n");
    const int n = worker_count();
    for (int w = 0; w < n; ++w) {
        starpu_profiling_worker_info info;
        if (starpu_profiling_worker_get_info(w, &info) != 0) {
            continue;
        }
        char name[64];
        starpu_worker_get_name(w, name, sizeof name);
        std::fprintf(f, "%-32s\n\t%d task(s)\n", name, info.executed_tasks);
        if (prof) {
            const double total = starpu_timing_timespec_to_us(&info.total_time) / 1000.;
            const double exec = starpu_timing_timespec_to_us(&info.executing_time) / 1000.;
            const double sleep = starpu_timing_timespec_to_us(&info.sleeping_time) / 1000.;
            std::fprintf(f, "\ttotal: %.2lf ms executing: %.2lf ms sleeping: %.2lf ms overhead %.2lf ms\n", total, exec,
                         sleep, total - exec - sleep);
            if (info.flops != 0) {
                std::fprintf(f, "\t%f GFlop/s\n\n", info.flops / total / 1e6);
            }
        }
    }
    std::fprintf(f, "#---------------------\n");
    if (f != stderr) {
        std::fclose(f);
    }
}

void starpu_data_display_memory_stats(void) {}

}  // extern "C"
