#include "lib/config.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "lib/log.hpp"

extern char** environ;

namespace mpc::config {
namespace {

struct table {
    const char* layer;
    std::span<const knob> knobs;
};

// Function-local statics: registration happens from other translation units' initializers.
std::vector<table>& tables() {
    static std::vector<table> t;
    return t;
}
std::mutex& tables_mutex() {
    static std::mutex m;
    return m;
}

const knob* find(const char* env) noexcept {
    std::lock_guard<std::mutex> g(tables_mutex());
    for (const table& t : tables()) {
        for (const knob& k : t.knobs) {
            if (std::strcmp(k.env, env) == 0) {
                return &k;
            }
        }
    }
    return nullptr;
}

const char* type_name(knob_type t) noexcept {
    switch (t) {
        case knob_type::integer: return "int";
        case knob_type::size: return "size";
        case knob_type::boolean: return "bool";
        case knob_type::string: return "string";
        case knob_type::choice: return "choice";
    }
    return "?";
}

void bad_value(const char* env, const char* value, const char* expected) noexcept {
    MPC_LOG(error, core, "%s=\"%s\" is not valid: expected %s", env, value, expected);
}
}  // namespace

std::vector<const knob*> all_knobs() {
    std::lock_guard<std::mutex> g(tables_mutex());
    std::vector<const knob*> out;
    for (const table& t : tables()) {
        for (const knob& k : t.knobs) {
            out.push_back(&k);
        }
    }
    return out;
}


const knob* lookup(const char* env) noexcept { return env != nullptr ? find(env) : nullptr; }

bool validate(const knob& k, const char* value) noexcept {
    std::int64_t i = 0;
    std::size_t z = 0;
    bool b = false;
    switch (k.type) {
        case knob_type::integer: return parse_int(value, &i);
        case knob_type::size: return parse_size(value, &z);
        case knob_type::boolean: return parse_bool(value, &b);
        case knob_type::string: return value != nullptr;
        case knob_type::choice: {
            if (value == nullptr || k.choices == nullptr) {
                return false;
            }
            std::size_t vlen = std::strlen(value);
            for (const char* c = k.choices;;) {
                const char* bar = std::strchr(c, '|');
                std::size_t len = bar ? static_cast<std::size_t>(bar - c) : std::strlen(c);
                if (len == vlen && std::strncmp(c, value, len) == 0) {
                    return true;
                }
                if (bar == nullptr) {
                    return false;
                }
                c = bar + 1;
            }
        }
    }
    return false;
}

void register_table(const char* layer, std::span<const knob> knobs) noexcept {
    std::lock_guard<std::mutex> g(tables_mutex());
    tables().push_back({layer, knobs});
}

const char* raw(const char* env) noexcept {
    const knob* k = find(env);
    if (k == nullptr) {
        return nullptr;
    }
    const char* v = std::getenv(env);
    return (v != nullptr && *v != '\0') ? v : k->def;
}

bool parse_int(const char* s, std::int64_t* out) noexcept {
    if (s == nullptr || *s == '\0') {
        return false;
    }
    const int saved_errno = errno;  // called from MPI calls: leave the program's errno alone
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    const bool range_error = errno != 0;
    errno = saved_errno;
    if (range_error || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

bool parse_size(const char* s, std::size_t* out) noexcept {
    if (s == nullptr || *s == '\0' || *s == '-') {
        return false;
    }
    const int saved_errno = errno;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    const bool range_error = errno != 0;
    errno = saved_errno;
    if (range_error || end == s) {
        return false;
    }
    unsigned shift = 0;
    switch (*end) {
        case 'k': case 'K': shift = 10; ++end; break;
        case 'm': case 'M': shift = 20; ++end; break;
        case 'g': case 'G': shift = 30; ++end; break;
        case 't': case 'T': shift = 40; ++end; break;
        default: break;
    }
    if (*end == 'b' || *end == 'B') {
        ++end;
    }
    if (*end != '\0' || (shift != 0 && v > (ULLONG_MAX >> shift))) {
        return false;
    }
    *out = static_cast<std::size_t>(v << shift);
    return true;
}

bool parse_bool(const char* s, bool* out) noexcept {
    static const char* const yes[] = {"1", "true", "yes", "on"};
    static const char* const no[] = {"0", "false", "no", "off"};
    if (s == nullptr) {
        return false;
    }
    for (const char* y : yes) {
        if (strcasecmp(s, y) == 0) {
            *out = true;
            return true;
        }
    }
    for (const char* n : no) {
        if (strcasecmp(s, n) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

result<std::int64_t> get_int(const char* env) noexcept {
    const char* v = raw(env);
    std::int64_t x = 0;
    if (v == nullptr) {
        return status(errc::invalid_argument, "unknown configuration knob");
    }
    if (!parse_int(v, &x)) {
        bad_value(env, v, "an integer");
        return status(errc::invalid_argument, "malformed integer in the environment");
    }
    return x;
}

result<std::size_t> get_size(const char* env) noexcept {
    const char* v = raw(env);
    std::size_t x = 0;
    if (v == nullptr) {
        return status(errc::invalid_argument, "unknown configuration knob");
    }
    if (!parse_size(v, &x)) {
        bad_value(env, v, "a size such as 65536, 64k or 8M");
        return status(errc::invalid_argument, "malformed size in the environment");
    }
    return x;
}

result<bool> get_bool(const char* env) noexcept {
    const char* v = raw(env);
    bool x = false;
    if (v == nullptr) {
        return status(errc::invalid_argument, "unknown configuration knob");
    }
    if (!parse_bool(v, &x)) {
        bad_value(env, v, "one of 1/0, true/false, yes/no, on/off");
        return status(errc::invalid_argument, "malformed boolean in the environment");
    }
    return x;
}

result<int> get_choice(const char* env) noexcept {
    const knob* k = find(env);
    if (k == nullptr || k->type != knob_type::choice || k->choices == nullptr) {
        return status(errc::invalid_argument, "not a choice knob");
    }
    const char* v = raw(env);
    std::size_t vlen = std::strlen(v);
    int idx = 0;
    for (const char* c = k->choices; *c != '\0'; ++idx) {
        const char* bar = std::strchr(c, '|');
        std::size_t len = bar ? static_cast<std::size_t>(bar - c) : std::strlen(c);
        if (len == vlen && std::strncmp(c, v, len) == 0) {
            return idx;
        }
        if (bar == nullptr) {
            break;
        }
        c = bar + 1;
    }
    bad_value(env, v, k->choices);
    return status(errc::invalid_argument, "value is not one of the knob's choices");
}

int warn_unknown_environment() noexcept {
    int unknown = 0;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        if (std::strncmp(*e, "MPC_", 4) != 0) {
            continue;
        }
        const char* eq = std::strchr(*e, '=');
        std::string name(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
        if (find(name.c_str()) == nullptr) {
            ++unknown;
            MPC_LOG(warn, core, "unknown configuration variable %s is ignored (mpc_run --info lists them)",
                    name.c_str());
        }
    }
    return unknown;
}

void print_info(std::FILE* out) noexcept {
    std::lock_guard<std::mutex> g(tables_mutex());
    for (const table& t : tables()) {
        std::fprintf(out, "[%s]\n", t.layer);
        for (const knob& k : t.knobs) {
            const char* cur = std::getenv(k.env);
            std::fprintf(out, "  %-28s %-6s default=%s%s%s\n      %s%s%s\n", k.env, type_name(k.type),
                         (k.def && *k.def) ? k.def : "\"\"", cur ? " current=" : "", cur ? cur : "", k.doc,
                         k.choices ? "; one of " : "", k.choices ? k.choices : "");
        }
    }
}

}  // namespace mpc::config

MPC_CONFIG_TABLE(core, {
    {"MPC_CC", ::mpc::config::knob_type::string, "cc", "C compiler run by mpc_cc / mpicc"},
    {"MPC_CXX", ::mpc::config::knob_type::string, "c++", "C++ compiler run by mpc_cxx / mpicxx"},
    {"MPC_LOG_LEVEL", ::mpc::config::knob_type::string, "warn",
     "log levels: a default and per-subsystem overrides, e.g. warn,sched:debug (fatal error warn info debug trace; "
     "subsystems core sched alloc net mpi ckpt tg)"},
})
