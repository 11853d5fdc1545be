/// \file
/// Performance models: measurement, prediction, storage (see perfmodel.hpp).

#include "taskgraph/perfmodel.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include <dirent.h>
#include <set>
#include <sstream>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "lib/spinlock.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {

namespace {

struct entry {
    unsigned n = 0;
    double sum = 0;
    double sum2 = 0;
    std::size_t size = 0;
};

/// Least-squares sums of ln(time) against ln(size).
struct reg_sums {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
};

struct arch_data {
    std::map<std::uint32_t, entry> hist;
    reg_sums reg;
};

constexpr int narchs = max_implementations;  // the CPU, per implementation of the codelet

}  // namespace

struct perfmodel {
    std::string symbol;
    model_type type = model_type::history;
    spinlock lock;  ///< guards what follows
    bool loaded = false;
    bool dirty = false;
    arch_data arch[narchs];
    // The non-linear fit, cached until the next run is recorded.
    bool nl_valid = false;
    bool nl_ok = false;
    double nl_a = 0, nl_b = 0, nl_c = 0;
};

namespace {

std::mutex g_models_lock;
std::map<std::string, std::unique_ptr<perfmodel>>& models() {
    static std::map<std::string, std::unique_ptr<perfmodel>> m;
    return m;
}
/// Files already reported as unreadable. Its own lock: reports come from under a model's lock,
/// and g_models_lock is taken before models' locks (save, unload).
std::mutex g_reported_lock;
std::set<std::string> g_reported;  ///< under g_reported_lock
std::atomic<int> g_calibrate{-1};  ///< -1: not read yet

/// The level the environment asks for (MPC_TG_CALIBRATE, else STARPU_CALIBRATE), -1 if none.
int env_calibrate_level() noexcept {
    const char* s = mpc::config::raw("MPC_TG_CALIBRATE");
    if (s == nullptr || *s == '\0') {
        s = std::getenv("STARPU_CALIBRATE");
    }
    if (s == nullptr || *s == '\0') {
        return -1;
    }
    if (std::strcmp(s, "0") == 0 || std::strcmp(s, "1") == 0 || std::strcmp(s, "2") == 0) {
        return *s - '0';
    }
    MPC_LOG(warn, tg, "calibration level '%s' is not 0, 1 or 2 (STARPU_CALIBRATE / MPC_TG_CALIBRATE): 0 is used", s);
    return 0;
}

int calibrate_level() noexcept {
    int c = g_calibrate.load(std::memory_order_relaxed);
    if (c < 0) {
        c = std::max(env_calibrate_level(), 0);
        g_calibrate.store(c, std::memory_order_relaxed);
    }
    return c;
}

const char* type_name(model_type t) noexcept {
    switch (t) {
    case model_type::history:
        return "history";
    case model_type::regression:
        return "regression";
    case model_type::nl_regression:
        return "nl_regression";
    }
    return "?";
}

std::string host_name() {
    char h[256] = {};
    if (gethostname(h, sizeof h - 1) != 0 || h[0] == '\0') {
        return "localhost";
    }
    return h;
}

void clear(perfmodel* m) noexcept {
    for (arch_data& a : m->arch) {
        a.hist.clear();
        a.reg = {};
    }
    m->nl_valid = false;
}

/// Reports a file problem once per file (and per process).
void report_once(const std::string& path, const std::string& why) {
    std::lock_guard<std::mutex> g(g_reported_lock);
    if (g_reported.insert(path).second) {
        MPC_LOG(warn, tg, "performance model file %s ignored: %s", path.c_str(), why.c_str());
    }
}

/// Parses `in` into m's (cleared) data; the reason on failure.
bool parse(perfmodel* m, std::istream& in, std::string* why) {
    std::string line;
    int lineno = 0;
    int arch = -1;
    bool header = false;
    auto fail = [&](const char* what) {
        *why = "line " + std::to_string(lineno) + ": " + what;
        return false;
    };
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream ls(line);
        std::string key;
        ls >> key;
        if (!header) {
            int version = 0;
            if (key != "mpc-perfmodel" || !(ls >> version) || version != 1) {
                return fail("not an MPC performance model (expected 'mpc-perfmodel 1')");
            }
            header = true;
            continue;
        }
        if (key == "symbol") {
            std::string s;
            if (!(ls >> s) || s != m->symbol) {
                return fail("the symbol is not the model's");
            }
        } else if (key == "type") {
            std::string s;
            if (!(ls >> s) || s != type_name(m->type)) {
                return fail("the model type differs from the codelet's");
            }
        } else if (key == "arch") {
            std::string s;
            if (!(ls >> s) || arch >= 0) {
                return fail("arch without a name, or inside another arch");
            }
            arch = -1;
            for (int a = 0; a < narchs; ++a) {
                if (s == arch_name(a)) {
                    arch = a;
                }
            }
            if (arch < 0) {
                return fail("unknown architecture");
            }
        } else if (key == "entry") {
            std::string fp;
            entry e;
            if (arch < 0 || !(ls >> fp >> e.size >> e.n >> e.sum >> e.sum2) || fp.size() != 8 ||
                fp.find_first_not_of("0123456789abcdef") != std::string::npos || !std::isfinite(e.sum) ||
                !std::isfinite(e.sum2) || e.sum < 0) {
                return fail("malformed entry");
            }
            m->arch[arch].hist[static_cast<std::uint32_t>(std::strtoul(fp.c_str(), nullptr, 16))] = e;
        } else if (key == "reg") {
            reg_sums r;
            if (arch < 0 || !(ls >> r.n >> r.sx >> r.sy >> r.sxx >> r.sxy) || !std::isfinite(r.sx + r.sy + r.sxx + r.sxy) ||
                r.n < 0) {
                return fail("malformed regression sums");
            }
            m->arch[arch].reg = r;
        } else if (key == "end") {
            if (arch < 0) {
                return fail("end outside an arch");
            }
            arch = -1;
        } else {
            return fail("unknown record");
        }
        std::string extra;
        if (ls >> extra) {
            return fail("trailing text");
        }
    }
    if (!header) {
        return fail("empty file");
    }
    if (arch >= 0) {
        return fail("arch not ended");
    }
    return true;
}

/// Reads m's file if not done yet. Under m->lock.
void ensure_loaded(perfmodel* m) noexcept {
    if (m->loaded) {
        return;
    }
    m->loaded = true;
    if (calibrate_level() == 2) {
        return;  // calibration from scratch: what is stored is dropped (and overwritten)
    }
    std::string path = model_path(m->symbol.c_str());
    std::string why;
    if (status st = model_load_file(m, path.c_str(), &why);
        !st.ok() && !(st.code() == errc::system && st.sys_errno() == ENOENT)) {
        report_once(path, why);
    }
}

/// a * size^b + c through the per-size means of the history: for each b of a grid, then a
/// refinement around the best, a and c by linear least squares. Under m->lock.
void fit_nl(perfmodel* m) noexcept {
    m->nl_valid = true;
    m->nl_ok = false;
    std::map<std::size_t, std::pair<double, double>> by_size;  // size -> (runs, sum)
    unsigned total = 0;
    for (const auto& [fp, e] : m->arch[arch_cpu].hist) {
        if (e.n > 0 && e.size > 0) {
            by_size[e.size].first += e.n;
            by_size[e.size].second += e.sum;
            total += e.n;
        }
    }
    if (by_size.size() < 3 || total < calibrate_minimum) {
        return;
    }
    auto solve = [&](double b, double* a, double* c) {
        // Weighted least squares of y = a x + c with x = size^b, weights = runs.
        double w = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (const auto& [size, v] : by_size) {
            double x = std::pow(static_cast<double>(size), b);
            double y = v.second / v.first;
            w += v.first;
            sx += v.first * x;
            sy += v.first * y;
            sxx += v.first * x * x;
            sxy += v.first * x * y;
        }
        double den = w * sxx - sx * sx;
        if (den == 0) {
            return std::numeric_limits<double>::infinity();
        }
        *a = (w * sxy - sx * sy) / den;
        *c = (sy - *a * sx) / w;
        double err = 0;
        for (const auto& [size, v] : by_size) {
            double r = *a * std::pow(static_cast<double>(size), b) + *c - v.second / v.first;
            err += v.first * r * r;
        }
        return err;
    };
    double best_b = 1, best_err = std::numeric_limits<double>::infinity();
    for (double b = 0.05; b <= 4.0; b += 0.05) {
        double a = 0, c = 0;
        if (double e = solve(b, &a, &c); e < best_err) {
            best_err = e;
            best_b = b;
        }
    }
    for (double step = 0.025; step > 1e-4; step /= 2) {
        for (double b : {best_b - step, best_b + step}) {
            double a = 0, c = 0;
            if (double e = solve(b, &a, &c); b > 0 && e < best_err) {
                best_err = e;
                best_b = b;
            }
        }
    }
    double a = 0, c = 0;
    if (std::isfinite(solve(best_b, &a, &c))) {
        m->nl_a = a;
        m->nl_b = best_b;
        m->nl_c = c;
        m->nl_ok = true;
    }
}

double history_expected(const arch_data& a, std::uint32_t footprint) noexcept {
    auto it = a.hist.find(footprint);
    if (it == a.hist.end() || it->second.n < calibrate_minimum) {
        return std::nan("");
    }
    return it->second.sum / it->second.n;
}

}  // namespace

const char* arch_name(int arch) noexcept {
    // A codelet's implementations are measured apart: implementation k > 0 is its own arch.
    static constexpr const char* names[] = {"cpu", "cpu_impl1", "cpu_impl2", "cpu_impl3", "cpu_impl4", "cpu_impl5",
                                            "cpu_impl6", "cpu_impl7"};
    static_assert(max_implementations <= 8);
    return arch >= 0 && arch < max_implementations ? names[arch] : "?";
}

perfmodel* model_get(const char* symbol, model_type type) noexcept {
    if (symbol == nullptr || *symbol == '\0') {
        return nullptr;
    }
    std::lock_guard<std::mutex> g(g_models_lock);
    auto& ms = models();
    auto it = ms.find(symbol);
    if (it != ms.end()) {
        if (it->second->type != type) {
            MPC_LOG(warn, tg, "performance model %s used with two types (%s, then %s): the first is kept", symbol,
                    type_name(it->second->type), type_name(type));
        }
        return it->second.get();
    }
    auto m = std::make_unique<perfmodel>();
    m->symbol = symbol;
    m->type = type;
    perfmodel* p = m.get();
    ms.emplace(symbol, std::move(m));
    return p;
}

const char* model_symbol(const perfmodel* m) noexcept { return m->symbol.c_str(); }
model_type model_kind(const perfmodel* m) noexcept { return m->type; }

double model_expected_us(perfmodel* m, int arch, std::uint32_t footprint, std::size_t size) noexcept {
    if (arch < 0 || arch >= narchs) {
        return std::nan("");
    }
    spin_guard g(m->lock);
    ensure_loaded(m);
    const arch_data& a = m->arch[arch];
    if (m->type == model_type::regression && size > 0) {
        const reg_sums& r = a.reg;
        double den = r.n * r.sxx - r.sx * r.sx;
        if (r.n >= calibrate_minimum && den > 1e-12 * r.n * r.sxx) {  // two sizes at least
            double b = (r.n * r.sxy - r.sx * r.sy) / den;
            double lna = (r.sy - b * r.sx) / r.n;
            return std::exp(lna) * std::pow(static_cast<double>(size), b);
        }
    } else if (m->type == model_type::nl_regression && size > 0) {
        if (!m->nl_valid) {
            fit_nl(m);
        }
        if (m->nl_ok) {
            return m->nl_a * std::pow(static_cast<double>(size), m->nl_b) + m->nl_c;
        }
    }
    return history_expected(a, footprint);
}

void model_record(perfmodel* m, int arch, std::uint32_t footprint, std::size_t size, double us, bool always) noexcept {
    if (arch < 0 || arch >= narchs || !(us >= 0)) {
        return;
    }
    const int level = calibrate_level();
    spin_guard g(m->lock);
    ensure_loaded(m);
    arch_data& a = m->arch[arch];
    entry& e = a.hist[footprint];
    if (level == 0 && !always && e.n >= calibrate_minimum) {
        return;  // calibrated: StarPU stops measuring unless asked to (STARPU_CALIBRATE=1)
    }
    e.n += 1;
    e.sum += us;
    e.sum2 += us * us;
    e.size = size;
    if (size > 0 && us > 0) {
        double x = std::log(static_cast<double>(size));
        double y = std::log(us);
        a.reg.n += 1;
        a.reg.sx += x;
        a.reg.sy += y;
        a.reg.sxx += x * x;
        a.reg.sxy += x * y;
    }
    m->dirty = true;
    m->nl_valid = false;
}

unsigned model_samples(perfmodel* m, int arch, std::uint32_t footprint) noexcept {
    if (arch < 0 || arch >= narchs) {
        return 0;
    }
    spin_guard g(m->lock);
    ensure_loaded(m);
    auto it = m->arch[arch].hist.find(footprint);
    return it == m->arch[arch].hist.end() ? 0 : it->second.n;
}

std::vector<model_entry> model_entries(perfmodel* m, int arch) {
    std::vector<model_entry> out;
    if (arch < 0 || arch >= narchs) {
        return out;
    }
    spin_guard g(m->lock);
    ensure_loaded(m);
    for (const auto& [fp, e] : m->arch[arch].hist) {
        if (e.n == 0) {
            continue;
        }
        const double mean = e.sum / e.n;
        const double var = e.n > 1 ? std::max(0.0, (e.sum2 - e.sum * mean) / (e.n - 1)) : 0.0;
        out.push_back({fp, e.size, e.n, mean, std::sqrt(var), e.sum, e.sum2});
    }
    return out;
}

bool model_fit(perfmodel* m, int arch, double* a, double* b, double* c) noexcept {
    if (arch < 0 || arch >= narchs) {
        return false;
    }
    spin_guard g(m->lock);
    ensure_loaded(m);
    if (m->type == model_type::nl_regression) {
        if (!m->nl_valid) {
            fit_nl(m);
        }
        if (!m->nl_ok) {
            return false;
        }
        *a = m->nl_a;
        *b = m->nl_b;
        *c = m->nl_c;
        return true;
    }
    const reg_sums& r = m->arch[arch].reg;
    const double den = r.n * r.sxx - r.sx * r.sx;
    if (m->type != model_type::regression || r.n < calibrate_minimum || !(den > 1e-12 * r.n * r.sxx)) {
        return false;
    }
    *b = (r.n * r.sxy - r.sx * r.sy) / den;
    *a = std::exp((r.sy - *b * r.sx) / r.n);
    *c = 0;
    return true;
}

bool model_stored(std::vector<std::string>* out) {
    out->clear();
    const std::string dir = model_dir();
    const std::string tail = "." + host_name() + ".mpc";
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
        return false;
    }
    while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0) {
            out->push_back(n.substr(0, n.size() - tail.size()));
        }
    }
    closedir(d);
    std::sort(out->begin(), out->end());
    return true;
}

std::string model_dir() {
    if (const char* d = mpc::config::raw("MPC_TG_PERFMODEL_DIR"); d != nullptr && *d != '\0') {
        return d;
    }
    if (const char* d = std::getenv("STARPU_PERF_MODEL_DIR"); d != nullptr && *d != '\0') {
        return d;
    }
    const char* home = std::getenv("STARPU_HOME");
    if (home == nullptr || *home == '\0') {
        home = std::getenv("HOME");
    }
    return std::string(home != nullptr && *home != '\0' ? home : "/tmp") + "/.starpu/sampling/codelets/mpc";
}

std::string model_path(const char* symbol) { return model_dir() + "/" + symbol + "." + host_name() + ".mpc"; }

status model_load_file(perfmodel* m, const char* path, std::string* why) noexcept {
    errno = 0;
    std::ifstream in(path);
    if (!in) {
        int e = errno != 0 ? errno : EIO;
        *why = std::strerror(e);
        return status::from_errno("cannot open a performance model file", e);
    }
    clear(m);
    if (!parse(m, in, why)) {
        clear(m);
        return {errc::invalid_argument, "malformed performance model file"};
    }
    if (in.bad()) {
        clear(m);
        *why = "read error";
        return status::from_errno("cannot read a performance model file", EIO);
    }
    return {};
}

namespace {

status save(perfmodel* m, const std::string& dir) {
    std::string path = dir + "/" + m->symbol + "." + host_name() + ".mpc";
    std::string tmp = path + ".tmp" + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) {
            MPC_LOG(warn, tg, "cannot write performance model %s: %s", tmp.c_str(), std::strerror(errno));
            return status::from_errno("cannot write a performance model", EIO);
        }
        out << "mpc-perfmodel 1\n# MPC task-graph performance model (taskgraph/perfmodel.hpp)\n";
        out << "symbol " << m->symbol << "\ntype " << type_name(m->type) << "\n";
        out.precision(17);
        for (int a = 0; a < narchs; ++a) {
            if (a != arch_cpu && m->arch[a].hist.empty() && m->arch[a].reg.n == 0) {
                continue;  // an implementation never run
            }
            out << "arch " << arch_name(a) << "\n";
            for (const auto& [fp, e] : m->arch[a].hist) {
                char hex[9];
                std::snprintf(hex, sizeof hex, "%08x", fp);
                out << "entry " << hex << ' ' << e.size << ' ' << e.n << ' ' << e.sum << ' ' << e.sum2 << "\n";
            }
            const reg_sums& r = m->arch[a].reg;
            out << "reg " << r.n << ' ' << r.sx << ' ' << r.sy << ' ' << r.sxx << ' ' << r.sxy << "\nend\n";
        }
        if (!out.flush()) {
            std::remove(tmp.c_str());
            return status::from_errno("cannot write a performance model", EIO);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        MPC_LOG(warn, tg, "cannot write performance model %s: %s", path.c_str(), std::strerror(errno));
        std::remove(tmp.c_str());
        return status::from_errno("cannot write a performance model", EIO);
    }
    m->dirty = false;
    return {};
}

}  // namespace

status model_save_all() noexcept {
    std::lock_guard<std::mutex> g(g_models_lock);
    status first;
    std::string dir;
    for (auto& [name, m] : models()) {
        spin_guard mg(m->lock);
        if (!m->dirty) {
            continue;
        }
        if (dir.empty()) {
            dir = model_dir();
            std::error_code ec;
            std::filesystem::create_directories(dir, ec);
            if (ec) {
                MPC_LOG(warn, tg, "cannot create the performance model directory %s: %s", dir.c_str(),
                        ec.message().c_str());
                return status::from_errno("cannot create the performance model directory", ec.value());
            }
        }
        if (status st = save(m.get(), dir); !st.ok() && first.ok()) {
            first = st;
        }
    }
    return first;
}

void model_set_calibrate(int level, bool over_env) noexcept {
    const int env = over_env && level >= 0 ? -1 : env_calibrate_level();
    int c = env >= 0 ? env : level;
    if (c > 2) {
        MPC_LOG(warn, tg, "calibration level %d is not 0, 1 or 2 (starpu_conf::calibrate): 2 is used", c);
        c = 2;
    }
    g_calibrate.store(std::max(c, 0), std::memory_order_relaxed);
}

int model_calibrate_level() noexcept { return calibrate_level(); }

void model_unload_all() noexcept {
    std::lock_guard<std::mutex> g(g_models_lock);
    for (auto& [name, m] : models()) {
        spin_guard mg(m->lock);
        clear(m.get());
        m->loaded = false;
        m->dirty = false;
    }
    {
        std::lock_guard<std::mutex> r(g_reported_lock);
        g_reported.clear();
    }
    g_calibrate.store(-1, std::memory_order_relaxed);
}

std::uint32_t data_footprint(data* const* handles, int n, std::size_t* size) noexcept {
    std::uint32_t h = 0x811c9dc5u;
    auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= static_cast<std::uint32_t>(v & 0xff);
            h *= 16777619u;
            v >>= 8;
        }
    };
    std::size_t bytes = 0;
    for (int i = 0; i < n; ++i) {
        const data* d = handles[i];
        mix(static_cast<std::uint64_t>(d->id));
        switch (d->id) {
        case interface_id::variable:
            mix(d->iface.var.elemsize);
            bytes += d->iface.var.elemsize;
            break;
        case interface_id::vector:
            mix(d->iface.vec.nx);
            mix(d->iface.vec.elemsize);
            bytes += std::size_t{d->iface.vec.nx} * d->iface.vec.elemsize;
            break;
        case interface_id::matrix:
            mix(d->iface.mat.nx);
            mix(d->iface.mat.ny);
            mix(d->iface.mat.elemsize);
            bytes += std::size_t{d->iface.mat.nx} * d->iface.mat.ny * d->iface.mat.elemsize;
            break;
        case interface_id::block:
            mix(d->iface.blk.nx);
            mix(d->iface.blk.ny);
            mix(d->iface.blk.nz);
            mix(d->iface.blk.elemsize);
            bytes += std::size_t{d->iface.blk.nx} * d->iface.blk.ny * d->iface.blk.nz * d->iface.blk.elemsize;
            break;
        case interface_id::csr:
            mix(d->iface.csr.nnz);
            mix(d->iface.csr.nrow);
            mix(d->iface.csr.elemsize);
            bytes += std::size_t{d->iface.csr.nnz} * (d->iface.csr.elemsize + sizeof(std::uint32_t)) +
                     (std::size_t{d->iface.csr.nrow} + 1) * sizeof(std::uint32_t);
            break;
        case interface_id::bcsr:
            mix(d->iface.bcsr.nnz);
            mix(d->iface.bcsr.nrow);
            mix(d->iface.bcsr.r);
            mix(d->iface.bcsr.c);
            mix(d->iface.bcsr.elemsize);
            bytes += std::size_t{d->iface.bcsr.nnz} *
                         (std::size_t{d->iface.bcsr.r} * d->iface.bcsr.c * d->iface.bcsr.elemsize + sizeof(std::uint32_t)) +
                     (std::size_t{d->iface.bcsr.nrow} + 1) * sizeof(std::uint32_t);
            break;
        case interface_id::coo:
            mix(d->iface.coo.nx);
            mix(d->iface.coo.ny);
            mix(d->iface.coo.n_values);
            mix(d->iface.coo.elemsize);
            bytes += std::size_t{d->iface.coo.n_values} * (d->iface.coo.elemsize + 2 * sizeof(std::uint32_t));
            break;
        default:
            // Custom interfaces: their kind, the bytes their ops table says they describe, and
            // their own footprint method's answer when they have one.
            if (d->ops != nullptr && d->ops->size != nullptr) {
                const std::size_t b = d->ops->size(d->ifp, d->ops->ctx, d);
                mix(b);
                bytes += b;
            }
            if (d->ops != nullptr && d->ops->footprint != nullptr) {
                mix(d->ops->footprint(d, d->ops->ctx));  // the interface's own (its layout beyond its size)
            }
            break;
        }
    }
    if (size != nullptr) {
        *size = bytes;
    }
    return h;
}

double task_expected_us(const task* t, int worker) noexcept {
    if (t->cost_us >= 0) {
        return t->cost_us;
    }
    if (t->model == nullptr) {
        return 0.0;
    }
    if (t->nimpls > 1) [[unlikely]] {
        int impl = 0;
        return detail::best_impl(t, worker, &impl);
    }
    return model_expected_us(t->model, arch_cpu, t->footprint, t->size);
}

namespace detail {

std::atomic<bool (*)(const task*, int, int)> g_impl_filter{nullptr};

double best_impl(const task* t, int worker, int* impl) noexcept {
    bool (*ok)(const task*, int, int) = g_impl_filter.load(std::memory_order_acquire);
    auto allowed = [&](int k) {
        return t->impl_fns[k] != nullptr && (ok == nullptr || worker < 0 || ok(t, worker, k));
    };
    if (t->forced_impl >= 0 && t->forced_impl < t->nimpls && allowed(t->forced_impl)) {
        *impl = t->forced_impl;
        return t->model != nullptr && t->cost_us < 0 ? model_expected_us(t->model, *impl, t->footprint, t->size)
                                                     : t->cost_us;
    }
    int first = -1, best = -1;
    double best_us = 0;
    for (int k = 0; k < t->nimpls; ++k) {
        if (!allowed(k)) {
            continue;
        }
        if (first < 0) {
            first = k;
        }
        if (t->model == nullptr || t->cost_us >= 0) {
            break;  // no model: the first implementation the worker may run, as StarPU's drivers take
        }
        const double us = model_expected_us(t->model, k, t->footprint, t->size);
        if (std::isnan(us)) {  // not calibrated yet: run it, so that it is
            *impl = k;
            return us;
        }
        if (best < 0 || us < best_us) {
            best = k;
            best_us = us;
        }
    }
    if (best >= 0) {
        *impl = best;
        return best_us;
    }
    *impl = first >= 0 ? first : 0;
    return t->cost_us >= 0 ? t->cost_us : 0.0;
}

void pick_impl(task* t, int worker) noexcept {
    int impl = 0;
    (void)best_impl(t, worker, &impl);
    t->impl = static_cast<std::uint8_t>(impl);
    t->fn = t->impl_fns[impl] != nullptr ? t->impl_fns[impl] : t->impl_fns[0];
}

}  // namespace detail

}  // namespace mpc::tg
