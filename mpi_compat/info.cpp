/// \file
/// Info objects (MPI 3.1 section 9): ordered (key, value) lists of strings, keys in the order
/// they were first set. Handles index a process-wide table (index 0: MPI_INFO_NULL, 1:
/// MPI_INFO_ENV); every call holds the table's lock for its whole duration (info calls are rare
/// and never call back into user code).
///
/// MPI_INFO_ENV (read-only) is filled on first use with `command` and `argv` (from
/// /proc/self/cmdline: mpc_run execs the program), `maxprocs` (the world size), `host`, `arch`,
/// `wdir` and `thread_level`.

#include "mpi_compat/info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
namespace {

using info_obj = std::vector<std::pair<std::string, std::string>>;

constexpr std::size_t env_index = MPI_INFO_ENV & 0xffffff;

struct info_table {
    std::mutex lock;
    std::vector<std::unique_ptr<info_obj>> slots = std::vector<std::unique_ptr<info_obj>>(2);  ///< 0: MPI_INFO_NULL, 1: MPI_INFO_ENV
    std::vector<std::size_t> free_slots;
};

info_table& table() {
    static info_table t;
    return t;
}

void fill_env(info_obj& env) {
    std::vector<std::string> args;
    if (FILE* f = std::fopen("/proc/self/cmdline", "r"); f != nullptr) {
        std::string cur;
        for (int ch = std::fgetc(f); ch != EOF; ch = std::fgetc(f)) {
            if (ch == '\0') {
                args.push_back(cur);
                cur.clear();
            } else {
                cur.push_back(static_cast<char>(ch));
            }
        }
        std::fclose(f);
    }
    if (!args.empty()) {
        env.emplace_back("command", args[0]);
        std::string rest;
        for (std::size_t i = 1; i < args.size(); ++i) {
            rest += (i > 1 ? " " : "") + args[i];
        }
        env.emplace_back("argv", rest);
    }
    env.emplace_back("maxprocs", std::to_string(world().size));
    char buf[512];
    if (gethostname(buf, sizeof(buf)) == 0) {
        buf[sizeof(buf) - 1] = '\0';
        env.emplace_back("host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0) {
        env.emplace_back("arch", u.machine);
    }
    if (getcwd(buf, sizeof(buf)) != nullptr) {
        env.emplace_back("wdir", buf);
    }
    env.emplace_back("thread_level", "MPI_THREAD_MULTIPLE");
}

/// The object behind h (table lock held), or null. Fills MPI_INFO_ENV on first use.
info_obj* find(info_table& t, MPI_Info h) {
    if ((static_cast<unsigned>(h) >> 24) != MPC_HANDLE_KIND_INFO) {
        return nullptr;
    }
    auto idx = static_cast<std::size_t>(h & 0xffffff);
    if (idx == env_index && t.slots[env_index] == nullptr) {
        t.slots[env_index] = std::make_unique<info_obj>();
        fill_env(*t.slots[env_index]);
    }
    return idx != 0 && idx < t.slots.size() ? t.slots[idx].get() : nullptr;
}

/// Stores a new object; returns its handle.
MPI_Info add(info_table& t, std::unique_ptr<info_obj> obj) {
    std::size_t idx = 0;
    if (!t.free_slots.empty()) {
        idx = t.free_slots.back();
        t.free_slots.pop_back();
    } else {
        idx = t.slots.size();
        t.slots.emplace_back();
    }
    t.slots[idx] = std::move(obj);
    return MPC_HANDLE(MPC_HANDLE_KIND_INFO, static_cast<int>(idx));
}

info_obj::iterator find_key(info_obj& o, const char* key) {
    info_obj::iterator it = o.begin();
    while (it != o.end() && it->first != key) {
        ++it;
    }
    return it;
}

}  // namespace

bool info_valid(MPI_Info h) noexcept {
    info_table& t = table();
    std::lock_guard<std::mutex> g(t.lock);
    try {
        return find(t, h) != nullptr;
    } catch (const std::bad_alloc&) {
        return false;
    }
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

namespace {

/// The locked table and the object of a call; err is set (and raised) when the handle is bad
/// or, for `writes`, is MPI_INFO_ENV.
struct info_call {
    std::unique_lock<std::mutex> lk;
    info_obj* obj = nullptr;
    int err = MPI_SUCCESS;
};

/// Raises an error of a call, after releasing the table (a user error handler may call back).
[[gnu::format(printf, 4, 5)]] int fail(info_call& k, int cls, const char* call, const char* fmt, ...) noexcept {
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (k.lk.owns_lock()) {
        k.lk.unlock();
    }
    return raise(MPI_COMM_NULL, cls, call, "%s", why);
}

info_call enter(const char* call, MPI_Info h, bool writes) noexcept {
    info_call k;
    info_table& t = table();
    k.lk = std::unique_lock<std::mutex>(t.lock);
    try {
        k.obj = find(t, h);
    } catch (const std::bad_alloc&) {
        k.obj = nullptr;
    }
    if (k.obj == nullptr) {
        k.err = fail(k, MPI_ERR_INFO, call, "invalid info %#x", h);
    } else if (writes && (h & 0xffffff) == static_cast<int>(env_index)) {
        k.err = fail(k, MPI_ERR_INFO, call, "MPI_INFO_ENV is read-only");
    }
    return k;
}

int check_key(info_call& k, const char* call, const char* key) noexcept {
    if (key == nullptr) {
        return fail(k, MPI_ERR_INFO_KEY, call, "null key");
    }
    std::size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (n == 0 || n > MPI_MAX_INFO_KEY) {
        return fail(k, MPI_ERR_INFO_KEY, call, n == 0 ? "empty key" : "key longer than %d characters",
                    MPI_MAX_INFO_KEY);
    }
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Info_create(MPI_Info* out) {
    if (out == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_create", "null output pointer");
    }
    info_table& t = table();
    try {
        auto obj = std::make_unique<info_obj>();
        std::lock_guard<std::mutex> g(t.lock);
        *out = add(t, std::move(obj));
    } catch (const std::bad_alloc&) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    }
    return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info h, const char* key, const char* value) {
    info_call k = enter("MPI_Info_set", h, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_key(k, "MPI_Info_set", key); e != MPI_SUCCESS) {
        return e;
    }
    if (value == nullptr || strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL) {
        return fail(k, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                     value == nullptr ? "null value" : "value longer than %d characters", MPI_MAX_INFO_VAL);
    }
    try {
        auto it = find_key(*k.obj, key);
        if (it != k.obj->end()) {
            it->second = value;
        } else {
            k.obj->emplace_back(key, value);
        }
    } catch (const std::bad_alloc&) {
        return fail(k, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
    }
    return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info h, const char* key, int valuelen, char* value, int* flag) {
    info_call k = enter("MPI_Info_get", h, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_key(k, "MPI_Info_get", key); e != MPI_SUCCESS) {
        return e;
    }
    if (valuelen < 0 || value == nullptr || flag == nullptr) {
        return fail(k, MPI_ERR_ARG, "MPI_Info_get",
                     valuelen < 0 ? "negative valuelen %d" : "null value or flag pointer", valuelen);
    }
    auto it = find_key(*k.obj, key);
    *flag = it != k.obj->end() ? 1 : 0;
    if (*flag != 0) {
        std::size_t n = std::min(it->second.size(), static_cast<std::size_t>(valuelen));
        std::memcpy(value, it->second.data(), n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info h, const char* key, int* valuelen, int* flag) {
    info_call k = enter("MPI_Info_get_valuelen", h, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_key(k, "MPI_Info_get_valuelen", key); e != MPI_SUCCESS) {
        return e;
    }
    if (valuelen == nullptr || flag == nullptr) {
        return fail(k, MPI_ERR_ARG, "MPI_Info_get_valuelen", "null output pointer");
    }
    auto it = find_key(*k.obj, key);
    *flag = it != k.obj->end() ? 1 : 0;
    if (*flag != 0) {
        *valuelen = static_cast<int>(it->second.size());
    }
    return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info h, int* nkeys) {
    info_call k = enter("MPI_Info_get_nkeys", h, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (nkeys == nullptr) {
        return fail(k, MPI_ERR_ARG, "MPI_Info_get_nkeys", "null output pointer");
    }
    *nkeys = static_cast<int>(k.obj->size());
    return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info h, int n, char* key) {
    info_call k = enter("MPI_Info_get_nthkey", h, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (key == nullptr || n < 0 || n >= static_cast<int>(k.obj->size())) {
        return fail(k, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                     key == nullptr ? "null key buffer" : "n = %d is not below the number of keys (%d)", n,
                     static_cast<int>(k.obj->size()));
    }
    const std::string& s = (*k.obj)[static_cast<std::size_t>(n)].first;
    std::memcpy(key, s.c_str(), s.size() + 1);
    return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info h, const char* key) {
    info_call k = enter("MPI_Info_delete", h, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_key(k, "MPI_Info_delete", key); e != MPI_SUCCESS) {
        return e;
    }
    auto it = find_key(*k.obj, key);
    if (it == k.obj->end()) {
        return fail(k, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key \"%s\"", key);
    }
    k.obj->erase(it);
    return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info h, MPI_Info* out) {
    info_call k = enter("MPI_Info_dup", h, false);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (out == nullptr) {
        return fail(k, MPI_ERR_ARG, "MPI_Info_dup", "null output pointer");
    }
    try {
        *out = add(table(), std::make_unique<info_obj>(*k.obj));
    } catch (const std::bad_alloc&) {
        return fail(k, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    }
    return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* h) {
    if (h == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_free", "null info pointer");
    }
    info_call k = enter("MPI_Info_free", *h, true);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    info_table& t = table();
    auto idx = static_cast<std::size_t>(*h & 0xffffff);
    t.slots[idx].reset();
    t.free_slots.push_back(idx);
    *h = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int MPI_Info_create(MPI_Info*) MPC_WEAK(MPI_Info_create);
int MPI_Info_set(MPI_Info, const char*, const char*) MPC_WEAK(MPI_Info_set);
int MPI_Info_get(MPI_Info, const char*, int, char*, int*) MPC_WEAK(MPI_Info_get);
int MPI_Info_get_valuelen(MPI_Info, const char*, int*, int*) MPC_WEAK(MPI_Info_get_valuelen);
int MPI_Info_get_nkeys(MPI_Info, int*) MPC_WEAK(MPI_Info_get_nkeys);
int MPI_Info_get_nthkey(MPI_Info, int, char*) MPC_WEAK(MPI_Info_get_nthkey);
int MPI_Info_delete(MPI_Info, const char*) MPC_WEAK(MPI_Info_delete);
int MPI_Info_dup(MPI_Info, MPI_Info*) MPC_WEAK(MPI_Info_dup);
int MPI_Info_free(MPI_Info*) MPC_WEAK(MPI_Info_free);
}
