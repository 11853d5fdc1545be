#include "lib/log.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace mpc {
namespace detail {
std::atomic<int> log_levels[static_cast<int>(subsys::count_)] = {
    2, 2, 2, 2, 2, 2, 2,  // warn
};
}  // namespace detail

namespace {
std::atomic<log_prefix_fn> prefix_fn{nullptr};

const char* const subsys_names[] = {"core", "sched", "alloc", "net", "mpi", "ckpt", "tg"};
const char* const level_names[] = {"fatal", "error", "warn", "info", "debug", "trace"};

int parse_level(const char* s, std::size_t n) noexcept {
    for (int i = 0; i < 6; ++i) {
        if (std::strlen(level_names[i]) == n && std::strncmp(level_names[i], s, n) == 0) {
            return i;
        }
    }
    return -1;
}

int parse_subsys(const char* s, std::size_t n) noexcept {
    for (int i = 0; i < static_cast<int>(subsys::count_); ++i) {
        if (std::strlen(subsys_names[i]) == n && std::strncmp(subsys_names[i], s, n) == 0) {
            return i;
        }
    }
    return -1;
}
}  // namespace

const char* to_string(subsys s) noexcept {
    int i = static_cast<int>(s);
    return (i >= 0 && i < static_cast<int>(subsys::count_)) ? subsys_names[i] : "?";
}

bool log_configure(const char* spec) noexcept {
    constexpr int n = static_cast<int>(subsys::count_);
    int levels[n];
    for (int i = 0; i < n; ++i) {
        levels[i] = detail::log_levels[i].load(std::memory_order_relaxed);
    }
    const char* p = spec;
    while (p != nullptr && *p != '\0') {
        const char* end = std::strchr(p, ',');
        std::size_t len = end ? static_cast<std::size_t>(end - p) : std::strlen(p);
        const char* colon = static_cast<const char*>(std::memchr(p, ':', len));
        if (colon == nullptr) {
            int lvl = parse_level(p, len);
            if (lvl < 0) {
                return false;
            }
            for (int& l : levels) {
                l = lvl;
            }
        } else {
            int sub = parse_subsys(p, static_cast<std::size_t>(colon - p));
            int lvl = parse_level(colon + 1, len - static_cast<std::size_t>(colon - p) - 1);
            if (sub < 0 || lvl < 0) {
                return false;
            }
            levels[sub] = lvl;
        }
        p = end ? end + 1 : nullptr;
    }
    for (int i = 0; i < n; ++i) {
        detail::log_levels[i].store(levels[i], std::memory_order_relaxed);
    }
    return true;
}

void set_log_prefix_fn(log_prefix_fn fn) noexcept { prefix_fn.store(fn, std::memory_order_release); }

namespace detail {
void log_write(log_level lvl, subsys s, const char* fmt, ...) noexcept {
    char line[1024];
    int n = std::snprintf(line, sizeof(line), "mpc[%d", static_cast<int>(::getpid()));
    if (auto fn = prefix_fn.load(std::memory_order_acquire); fn != nullptr && n > 0) {
        line[n++] = ' ';
        n += static_cast<int>(fn(line + n, sizeof(line) - static_cast<std::size_t>(n)));
    }
    n += std::snprintf(line + n, sizeof(line) - static_cast<std::size_t>(n), "] %s %s: ",
                       level_names[static_cast<int>(lvl)], subsys_names[static_cast<int>(s)]);
    va_list ap;
    va_start(ap, fmt);
    if (n < static_cast<int>(sizeof(line))) {
        n += std::vsnprintf(line + n, sizeof(line) - static_cast<std::size_t>(n), fmt, ap);
    }
    va_end(ap);
    if (n > static_cast<int>(sizeof(line)) - 2) {
        n = static_cast<int>(sizeof(line)) - 2;
    }
    line[n++] = '\n';
    ssize_t w = ::write(2, line, static_cast<std::size_t>(n));
    (void)w;
}
}  // namespace detail

}  // namespace mpc
