/// \file
/// Traces and the shutdown summary (see trace.hpp).

#include "taskgraph/trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "lib/spinlock.hpp"

namespace mpc::tg::detail {

bool g_measure = false;
std::atomic<bool> g_policy_done{false};
bool g_tracing = false;

std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

namespace {

struct record {
    std::uint64_t id;
    std::uint64_t start;
    std::uint64_t end;
    const char* name;
    std::vector<const data*> handles;
};

struct codelet_stats {
    std::uint64_t count = 0;
    std::uint64_t ns = 0;
};

/// What one worker recorded; only that worker writes it while the runtime runs.
struct alignas(64) worker_log {
    int vp = 0;
    std::uint64_t tasks = 0;
    std::uint64_t busy_ns = 0;
    std::vector<record> records;
    std::unordered_map<const char*, codelet_stats> by_name;
};

struct state {
    std::string path;
    bool summary = false;
    std::uint64_t t0 = 0;
    std::vector<worker_log> workers;
    spinlock edges_lock;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> edges;  ///< under edges_lock
    std::vector<std::pair<std::uint64_t, std::string>> marks;   ///< user events, under edges_lock
    std::unordered_map<const void*, std::string> data_names;  ///< starpu_data_set_name, under edges_lock
    std::atomic<bool> paused{false};                             ///< tasks are not recorded
    std::atomic<std::uint64_t> next_id{1};
};

state g_st;

bool truthy(const char* s) { return s != nullptr && *s != '\0' && std::strcmp(s, "0") != 0; }

void json_string(std::FILE* f, const char* s) {
    std::fputc('"', f);
    for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s != nullptr ? s : ""); *p != 0; ++p) {
        if (*p == '"' || *p == '\\') {
            std::fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            std::fprintf(f, "\\u%04x", *p);
        } else {
            std::fputc(*p, f);
        }
    }
    std::fputc('"', f);
}

double us_since(std::uint64_t t0, std::uint64_t t) { return t >= t0 ? static_cast<double>(t - t0) / 1000.0 : 0.0; }

/// Writes the Chrome trace; false (logged) when the file cannot be written.
bool write_trace(const char* policy) {
    std::FILE* f = std::fopen(g_st.path.c_str(), "w");
    if (f == nullptr) {
        MPC_LOG(error, tg, "cannot write the trace %s (MPC_TG_TRACE): %s", g_st.path.c_str(), std::strerror(errno));
        return false;
    }
    struct where {
        int worker;
        std::uint64_t start;
    };
    std::unordered_map<std::uint64_t, where> placed;
    std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> preds;
    for (const auto& [p, s] : g_st.edges) {
        preds[s].push_back(p);
    }
    std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    std::fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    json_string(f, (std::string("mpc task graph (") + policy + ")").c_str());
    std::fprintf(f, "}}");
    if (!g_st.data_names.empty()) {  // the handles' names, by the addresses the tasks list
        std::fprintf(f, ",\n{\"name\":\"data_names\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{");
        const char* sep = "";
        for (const auto& [d, name] : g_st.data_names) {
            char key[32];
            std::snprintf(key, sizeof key, "%p", d);
            std::fprintf(f, "%s", sep);
            json_string(f, key);
            std::fprintf(f, ":");
            json_string(f, name.c_str());
            sep = ",";
        }
        std::fprintf(f, "}}");
    }
    for (std::size_t w = 0; w < g_st.workers.size(); ++w) {
        std::fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%zu,\"args\":{\"name\":\"worker %zu (VP %d)\"}}",
                     w, w, g_st.workers[w].vp);
        for (const record& r : g_st.workers[w].records) {
            placed[r.id] = {static_cast<int>(w), r.start};
            std::fprintf(f, ",\n{\"name\":");
            json_string(f, r.name);
            std::fprintf(f, ",\"cat\":\"task\",\"ph\":\"X\",\"pid\":1,\"tid\":%zu,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"id\":%llu,\"handles\":[",
                         w, us_since(g_st.t0, r.start), static_cast<double>(r.end - r.start) / 1000.0,
                         static_cast<unsigned long long>(r.id));
            for (std::size_t i = 0; i < r.handles.size(); ++i) {
                std::fprintf(f, "%s\"%p\"", i == 0 ? "" : ",", static_cast<const void*>(r.handles[i]));
            }
            std::fprintf(f, "],\"after\":[");
            auto it = preds.find(r.id);
            if (it != preds.end()) {
                for (std::size_t i = 0; i < it->second.size(); ++i) {
                    std::fprintf(f, "%s%llu", i == 0 ? "" : ",", static_cast<unsigned long long>(it->second[i]));
                }
            }
            std::fprintf(f, "]}}");
        }
    }
    // Flow arrows between executed tasks: from the predecessor's slice to the successor's.
    std::uint64_t flow = 0;
    for (const auto& [p, s] : g_st.edges) {
        auto a = placed.find(p);
        auto b = placed.find(s);
        if (a == placed.end() || b == placed.end()) {
            continue;
        }
        ++flow;
        std::fprintf(f, ",\n{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"s\",\"id\":%llu,\"pid\":1,\"tid\":%d,\"ts\":%.3f}",
                     static_cast<unsigned long long>(flow), a->second.worker, us_since(g_st.t0, a->second.start));
        std::fprintf(f, ",\n{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"pid\":1,\"tid\":%d,\"ts\":%.3f}",
                     static_cast<unsigned long long>(flow), b->second.worker, us_since(g_st.t0, b->second.start));
    }
    for (const auto& [when, what] : g_st.marks) {
        std::fprintf(f, ",\n{\"name\":");
        json_string(f, what.c_str());
        std::fprintf(f, ",\"cat\":\"user\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":0,\"ts\":%.3f}", us_since(g_st.t0, when));
    }
    std::fprintf(f, "\n],\"mpcDependencies\":[");
    for (std::size_t i = 0; i < g_st.edges.size(); ++i) {
        std::fprintf(f, "%s[%llu,%llu]", i == 0 ? "" : ",", static_cast<unsigned long long>(g_st.edges[i].first),
                     static_cast<unsigned long long>(g_st.edges[i].second));
    }
    std::fprintf(f, "]}\n");
    bool ok = std::ferror(f) == 0;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) {
        MPC_LOG(error, tg, "cannot write the trace %s (MPC_TG_TRACE)", g_st.path.c_str());
    }
    return ok;
}

void print_summary(const char* policy, std::uint64_t end) {
    const double wall_ms = static_cast<double>(end - g_st.t0) / 1e6;
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "mpc task graph summary: %zu workers, policy %s, %.3f ms\n", g_st.workers.size(),
                  policy, wall_ms);
    out += line;
    out += "worker  VP      tasks    busy_ms    idle_ms  busy%\n";
    std::map<std::string, codelet_stats> names;
    for (std::size_t w = 0; w < g_st.workers.size(); ++w) {
        const worker_log& l = g_st.workers[w];
        double busy = static_cast<double>(l.busy_ns) / 1e6;
        std::snprintf(line, sizeof line, "%6zu %3d %10llu %10.3f %10.3f %5.1f\n", w, l.vp,
                      static_cast<unsigned long long>(l.tasks), busy, std::max(0.0, wall_ms - busy),
                      wall_ms > 0 ? 100.0 * busy / wall_ms : 0.0);
        out += line;
        for (const auto& [n, st] : l.by_name) {
            codelet_stats& c = names[n != nullptr ? n : "(unnamed)"];
            c.count += st.count;
            c.ns += st.ns;
        }
    }
    out += "codelet                          count    mean_us   total_ms\n";
    for (const auto& [n, c] : names) {
        std::snprintf(line, sizeof line, "%-28s %9llu %10.3f %10.3f\n", n.c_str(), static_cast<unsigned long long>(c.count),
                      c.count != 0 ? static_cast<double>(c.ns) / 1e3 / static_cast<double>(c.count) : 0.0,
                      static_cast<double>(c.ns) / 1e6);
        out += line;
    }
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
}

}  // namespace

bool trace_start(int nworkers, const int* vps) noexcept {
    const char* path = mpc::config::raw("MPC_TG_TRACE");
    const char* sum = mpc::config::raw("MPC_TG_SUMMARY");
    if (sum == nullptr || *sum == '\0') {
        sum = std::getenv("STARPU_WORKER_STATS");
    }
    g_st.path = path != nullptr ? path : "";
    g_st.summary = truthy(sum);
    g_st.workers.assign(static_cast<std::size_t>(nworkers), worker_log{});
    for (int w = 0; w < nworkers; ++w) {
        g_st.workers[static_cast<std::size_t>(w)].vp = vps[w];
    }
    g_st.edges.clear();
    g_st.marks.clear();
    g_st.data_names.clear();
    g_st.t0 = now_ns();
    g_tracing = !g_st.path.empty();
    return g_tracing || g_st.summary;
}

void trace_new_task(task* t) noexcept { t->trace_id = g_st.next_id.fetch_add(1, std::memory_order_relaxed); }

void trace_dependency(const task* pred, const task* succ) noexcept {
    if (pred->trace_id == 0 || succ->trace_id == 0) {
        return;  // created before tracing began
    }
    spin_guard g(g_st.edges_lock);
    g_st.edges.emplace_back(pred->trace_id, succ->trace_id);
}

void trace_task(const task* t, int worker, std::uint64_t start_ns, std::uint64_t end_ns) noexcept {
    if (worker < 0 || static_cast<std::size_t>(worker) >= g_st.workers.size()) {
        return;
    }
    worker_log& l = g_st.workers[static_cast<std::size_t>(worker)];
    ++l.tasks;
    l.busy_ns += end_ns - start_ns;
    if (g_st.summary) {
        codelet_stats& c = l.by_name[t->name];
        ++c.count;
        c.ns += end_ns - start_ns;
    }
    if (g_tracing && !g_st.paused.load(std::memory_order_relaxed)) {
        record r{t->trace_id, start_ns, end_ns, t->name, {}};
        r.handles.reserve(static_cast<std::size_t>(t->nbuffers));
        for (int i = 0; i < t->nbuffers; ++i) {
            r.handles.push_back(t->bufs[i].d);
        }
        l.records.push_back(std::move(r));
    }
}

void trace_pause(bool paused) noexcept { g_st.paused.store(paused, std::memory_order_relaxed); }

bool trace_enabled() noexcept { return g_tracing; }

void trace_name_data(const void* d, const char* name) noexcept {
    if (!g_tracing) {
        return;
    }
    spin_guard g(g_st.edges_lock);
    try {
        g_st.data_names[d] = name;
    } catch (...) {
        // no memory: the name is lost, the run goes on
    }
}

void trace_mark(const char* what) noexcept {
    if (!g_tracing) {
        return;
    }
    const std::uint64_t now = now_ns();
    spin_guard g(g_st.edges_lock);
    try {
        g_st.marks.emplace_back(now, what != nullptr ? what : "");
    } catch (...) {
        // no memory: the mark is lost, the run goes on
    }
}

void trace_finish(const char* policy) noexcept {
    std::uint64_t end = now_ns();
    if (g_tracing) {
        if (write_trace(policy)) {
            MPC_LOG(info, tg, "trace written to %s", g_st.path.c_str());
        }
    }
    if (g_st.summary) {
        print_summary(policy, end);
    }
    g_tracing = false;
    g_st.summary = false;
    g_st.workers.clear();
    g_st.edges.clear();
    g_st.marks.clear();
    g_st.data_names.clear();
}

}  // namespace mpc::tg::detail
