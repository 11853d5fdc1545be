/// \file
/// StarPU 1.3 C API: small calls of starpu.h, starpu_hash.h, starpu_helper.h, starpu_stdlib.h,
/// starpu_task.h and starpu_worker.h that need no runtime state of their own (hashes,
/// environment helpers, sleeps, task names and copies, memory nodes, the memory limit).

#include <starpu.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <strings.h>
#include <unistd.h>

#include "lib/log.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/pool.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::starpu {
namespace {

/// CRC32C most significant bit first (StarPU's footprint hash): a byte-at-a-time table.
constexpr std::uint32_t crc_poly = 0x1EDC6F41u;
constexpr std::array<std::uint32_t, 256> crc_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t c = b << 24;
        for (int k = 0; k < 8; ++k) {
            c = (c & 0x80000000u) != 0 ? (c << 1) ^ crc_poly : c << 1;
        }
        t[b] = c;
    }
    return t;
}();

std::uint32_t crc_bytes(const unsigned char* p, std::size_t n, std::uint32_t crc) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        crc = (crc << 8) ^ crc_table[((crc >> 24) ^ p[i]) & 0xffu];
    }
    return crc;
}

/// The machine's memory in bytes (what StarPU counts for main memory without a limit).
std::size_t physical_memory() noexcept {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(size) : 0;
}

void sleep_ns(double ns) noexcept {
    if (ns > 0) {
        sched::sleep_for(std::chrono::nanoseconds(static_cast<std::int64_t>(ns)));
    }
}

}  // namespace
}  // namespace mpc::tg::starpu

using namespace mpc::tg;
namespace sp = mpc::tg::starpu;

extern "C" {

uint32_t starpu_hash_crc32c_be_n(const void* input, size_t n, uint32_t inputcrc) {
    return sp::crc_bytes(static_cast<const unsigned char*>(input), n, inputcrc);
}

uint32_t starpu_hash_crc32c_be(uint32_t input, uint32_t inputcrc) {
    return sp::crc_bytes(reinterpret_cast<const unsigned char*>(&input), sizeof input, inputcrc);
}

uint32_t starpu_hash_crc32c_string(const char* str, uint32_t inputcrc) {
    return sp::crc_bytes(reinterpret_cast<const unsigned char*>(str), std::strlen(str), inputcrc);
}

int starpu_get_env_string_var_default(const char* str, const char* strings[], int defvalue) {
    const char* v = std::getenv(str);
    if (v == nullptr) {
        return defvalue;
    }
    for (int i = 0; strings[i] != nullptr; ++i) {
        if (strcasecmp(v, strings[i]) == 0) {
            return i;
        }
    }
    std::string valid;
    for (int i = 0; strings[i] != nullptr; ++i) {
        valid += i == 0 ? "" : ", ";
        valid += strings[i];
    }
    MPC_LOG(fatal, tg, "invalid value '%s' for environment variable %s; valid values: %s", v, str, valid.c_str());
    std::abort();
}

int starpu_get_env_size_default(const char* str, int defval) {
    const char* v = std::getenv(str);
    if (v == nullptr) {
        return defval;
    }
    std::string s;
    for (const char* p = v; *p != '\0'; ++p) {
        if (std::isspace(static_cast<unsigned char>(*p)) == 0) {
            s += *p;
        }
    }
    if (s.empty()) {
        return defval;
    }
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(s.c_str(), &end, 10);
    long long mult = 1024;  // a number alone is in KiB, as in StarPU
    bool ok = errno == 0 && end != s.c_str();
    if (ok && *end != '\0') {
        switch (*end) {
            case 'b': case 'B': mult = 1; break;
            case 'k': case 'K': mult = 1024; break;
            case 'm': case 'M': mult = 1024LL * 1024; break;
            case 'g': case 'G': mult = 1024LL * 1024 * 1024; break;
            default: ok = false;
        }
        ok = ok && end[1] == '\0';
    }
    const long long bytes = static_cast<long long>(n) * mult;
    if (!ok || bytes > INT_MAX || bytes < INT_MIN) {
        MPC_LOG(fatal, tg, "environment variable %s=%s: expected a size (a number, in KiB, or with a B, K, M or G "
                           "suffix) that fits an int", str, v);
        std::abort();
    }
    return static_cast<int>(bytes);
}

void starpu_sleep(float nb_sec) { sp::sleep_ns(static_cast<double>(nb_sec) * 1e9); }
void starpu_usleep(float nb_micro_sec) { sp::sleep_ns(static_cast<double>(nb_micro_sec) * 1e3); }

starpu_ssize_t starpu_memory_get_total(unsigned node) {
    if (node != STARPU_MAIN_RAM) {
        return -1;
    }
    const std::size_t limit = memory_limit();
    return static_cast<starpu_ssize_t>(limit != 0 ? limit : sp::physical_memory());
}

starpu_ssize_t starpu_memory_get_available(unsigned node) {
    const starpu_ssize_t total = starpu_memory_get_total(node);
    if (total < 0) {
        return -1;
    }
    const auto used = static_cast<starpu_ssize_t>(memory_used());
    return used >= total ? 0 : total - used;
}

starpu_ssize_t starpu_memory_get_total_all_nodes(void) { return starpu_memory_get_total(STARPU_MAIN_RAM); }
starpu_ssize_t starpu_memory_get_available_all_nodes(void) { return starpu_memory_get_available(STARPU_MAIN_RAM); }

int starpu_memory_nodes_get_numa_count(void) { return 1; }

int starpu_memory_node_get_devid(unsigned node) {
    if (node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_memory_node_get_devid: no memory node %u (main memory, 0, is the only one)", node);
        return -1;
    }
    return 0;
}

int starpu_memory_nodes_numa_id_to_devid(int osid) { return osid == 0 ? 0 : -1; }
int starpu_memory_nodes_numa_devid_to_id(unsigned id) { return id == 0 ? 0 : -1; }

const char* starpu_task_get_model_name(struct starpu_task* task) {
    if (task == nullptr || task->cl == nullptr) {
        return nullptr;
    }
    const starpu_perfmodel* m = task->cl->model;
    return m != nullptr && m->symbol != nullptr && m->symbol[0] != '\0' ? m->symbol : task->cl->name;
}

const char* starpu_task_get_name(struct starpu_task* task) {
    if (task == nullptr) {
        return nullptr;
    }
    return task->name != nullptr ? task->name : starpu_task_get_model_name(task);
}

struct starpu_task* starpu_task_dup(struct starpu_task* task) {
    auto* d = static_cast<starpu_task*>(detail::starpu_task_pool().get());
    if (d == nullptr) {
        return nullptr;
    }
    *d = *task;
    d->starpu_private = nullptr;
    d->profiling_info = nullptr;
    d->cl_arg_free = 0;
    d->callback_arg_free = 0;
    d->prev = nullptr;
    d->next = nullptr;
    const int n = task->cl != nullptr && task->cl->nbuffers != STARPU_VARIABLE_NBUFFERS ? task->cl->nbuffers
                                                                                          : task->nbuffers;
    const std::size_t count = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (task->dyn_handles != nullptr) {
        d->dyn_handles = static_cast<starpu_data_handle_t*>(std::malloc(count * sizeof *d->dyn_handles + 1));
        if (d->dyn_handles != nullptr) {
            std::memcpy(d->dyn_handles, task->dyn_handles, count * sizeof *d->dyn_handles);
        }
    }
    if (task->dyn_modes != nullptr) {
        d->dyn_modes = static_cast<starpu_data_access_mode*>(std::malloc(count * sizeof *d->dyn_modes + 1));
        if (d->dyn_modes != nullptr) {
            std::memcpy(d->dyn_modes, task->dyn_modes, count * sizeof *d->dyn_modes);
        }
    }
    if ((task->dyn_handles != nullptr && d->dyn_handles == nullptr) ||
        (task->dyn_modes != nullptr && d->dyn_modes == nullptr)) {
        std::free(d->dyn_handles);
        std::free(d->dyn_modes);
        detail::starpu_task_pool().put(d);
        return nullptr;
    }
    return d;
}

void starpu_iteration_push(unsigned long /*iteration*/) {}
void starpu_iteration_pop(void) {}

}  // extern "C"
