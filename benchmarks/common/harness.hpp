/// \file
/// A tiny timing harness shared by the benchmark programs of every implementation (ours and
/// the peers), so that all of them are measured the same way.
///
/// A measured body is a callable `double body(std::uint64_t iters)` that performs `iters`
/// operations and returns the elapsed nanoseconds it measured itself (so that set-up, thread
/// start and tear-down stay outside the timed region). measure() calibrates `iters` by doubling
/// until one run lasts at least `min_ms`, then repeats the run `reps` times and keeps the median
/// (and the min and max, to show the spread) of the time per operation.
///
/// Each result is printed as one tab-separated line that benchmarks/<name>/run.sh collects:
///
///     ROW <metric> <vps> <impl> <value> <unit> <min> <max> <extra json keys> <description>
///
/// `vps` is the number of cores (VPs, or kernel threads pinned to distinct cores) the figure
/// used; `extra json keys` is a JSON fragment without braces ("" when none), e.g.
/// `"primitive": "semaphore"`.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mpc_bench {

struct config {
    bool quick = false;
    int reps = 11;          ///< repetitions after calibration; the median is reported
    double min_ms = 50.0;   ///< minimum duration of one repetition
    std::string only;       ///< run only the metrics whose name contains this text
};

inline void usage(const char* prog) {
    std::fprintf(stderr,
                 "usage: %s [--quick] [--reps N] [--min-ms MS] [--only TEXT]\n"
                 "  --quick     5 repetitions of >= 10 ms (default: 11 of >= 50 ms)\n",
                 prog);
}

inline config parse_args(int argc, char** argv) {
    config c;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                usage(argv[0]);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--quick") {
            c.quick = true;
            c.reps = 5;
            c.min_ms = 10.0;
        } else if (a == "--reps") {
            c.reps = std::max(1, std::atoi(next()));
        } else if (a == "--min-ms") {
            c.min_ms = std::max(0.1, std::atof(next()));
        } else if (a == "--only") {
            c.only = next();
        } else {
            usage(argv[0]);
            std::exit(2);
        }
    }
    return c;
}

/// True if the metric should run under c.only.
inline bool selected(const config& c, const std::string& metric) {
    return c.only.empty() || metric.find(c.only) != std::string::npos;
}

inline std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

/// Keeps the compiler from optimising a value away.
template <class T>
inline void do_not_optimize(T const& v) noexcept {
    asm volatile("" : : "r,m"(v) : "memory");
}

struct sample {
    double median = 0;  ///< ns per operation
    double min = 0;
    double max = 0;
    std::uint64_t iters = 0;  ///< operations per repetition
    bool ok = false;
};

/// Calibrates, repeats, and returns ns per operation. `ops_per_iter` divides the time of one
/// iteration (e.g. 2 for a ping-pong round trip reported per one-way wake-up). `max_iters`
/// caps calibration (for expensive operations such as thread creation).
template <class Body>
sample measure(const config& c, Body&& body, double ops_per_iter = 1.0, std::uint64_t max_iters = 1ULL << 34) {
    sample s;
    std::uint64_t iters = 256;
    const double min_ns = c.min_ms * 1e6;
    double t = 0;
    for (;;) {  // calibration; the runs also warm caches, stacks and pools
        t = body(iters);
        if (t < 0) {
            return s;
        }
        if (t >= min_ns || iters >= max_iters) {
            break;
        }
        const double scale = t > 0 ? std::min(16.0, std::max(2.0, 1.2 * min_ns / t)) : 16.0;
        iters = std::min<std::uint64_t>(max_iters, static_cast<std::uint64_t>(static_cast<double>(iters) * scale));
    }
    std::vector<double> per_op;
    per_op.reserve(static_cast<std::size_t>(c.reps));
    for (int r = 0; r < c.reps; ++r) {
        t = body(iters);
        if (t < 0) {
            return s;
        }
        per_op.push_back(t / (static_cast<double>(iters) * ops_per_iter));
    }
    std::sort(per_op.begin(), per_op.end());
    s.median = per_op[per_op.size() / 2];
    if (per_op.size() % 2 == 0) {
        s.median = (s.median + per_op[per_op.size() / 2 - 1]) / 2;
    }
    s.min = per_op.front();
    s.max = per_op.back();
    s.iters = iters;
    s.ok = true;
    return s;
}

/// Prints one ROW line (see the file comment). Also echoes a readable line on stderr.
inline void emit(const char* metric, int vps, const char* impl, const sample& s, const char* unit,
                 const std::string& extra_json, const char* description) {
    if (!s.ok) {
        std::fprintf(stderr, "%-14s vps=%d %-12s FAILED (%s)\n", metric, vps, impl, description);
        return;
    }
    std::printf("ROW\t%s\t%d\t%s\t%.2f\t%s\t%.2f\t%.2f\t%s\t%s\n", metric, vps, impl, s.median, unit, s.min, s.max,
                extra_json.c_str(), description);
    std::fflush(stdout);
    std::fprintf(stderr, "%-14s vps=%d %-12s %10.2f %s  [%.2f .. %.2f] x%llu  %s\n", metric, vps, impl, s.median, unit,
                 s.min, s.max, static_cast<unsigned long long>(s.iters), description);
}

/// Pins the calling thread to one CPU (OS index). Returns false (and says why) on failure.
inline bool pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (rc != 0) {
        std::fprintf(stderr, "pthread_setaffinity_np(cpu %d): %s\n", cpu, std::strerror(rc));
        return false;
    }
    return true;
}

/// The CPUs this process may run on (OS indices), in order. Read once, at the first call:
/// call it (or two_cores()) before pinning the main thread, since pinning narrows the mask.
inline const std::vector<int>& allowed_cpus() {
    static const std::vector<int> cpus = [] {
        cpu_set_t set;
        CPU_ZERO(&set);
        std::vector<int> out;
        if (sched_getaffinity(0, sizeof(set), &set) == 0) {
            for (int i = 0; i < CPU_SETSIZE; ++i) {
                if (CPU_ISSET(i, &set)) {
                    out.push_back(i);
                }
            }
        }
        if (out.empty()) {
            out.push_back(0);
        }
        return out;
    }();
    return cpus;
}

/// Two CPUs on different cores (not SMT siblings) when the process may use two cores:
/// {first allowed CPU, first allowed CPU on another core}. Falls back to {c0, c1} or {c0, c0}.
inline std::pair<int, int> two_cores() {
    const std::vector<int>& cpus = allowed_cpus();
    const int c0 = cpus.front();
    std::vector<int> siblings;
    char path[128];
    std::snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", c0);
    if (FILE* f = std::fopen(path, "r")) {  // "0,64" or "0-1" or "0"
        int a = 0;
        int b = 0;
        char sep = 0;
        while (std::fscanf(f, "%d", &a) == 1) {
            b = a;
            if (std::fscanf(f, "%c", &sep) == 1 && sep == '-' && std::fscanf(f, "%d", &b) == 1) {
                (void)std::fscanf(f, "%c", &sep);
            }
            for (int i = a; i <= b; ++i) {
                siblings.push_back(i);
            }
        }
        std::fclose(f);
    }
    for (int c : cpus) {
        if (c != c0 && std::find(siblings.begin(), siblings.end(), c) == siblings.end()) {
            return {c0, c};
        }
    }
    return {c0, cpus.size() > 1 ? cpus[1] : c0};
}

/// Spin-wait hint for loops that wait on another thread.
inline void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace mpc_bench
