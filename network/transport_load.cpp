/// \file
/// Loading the UCX transport module (transport.hpp): libmpc never links UCX; a job of several
/// processes dlopens libmpc_net_ucx.so, looked for next to libmpc first (the build tree and an
/// installation both put it there), then on the library path.

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "network/transport.hpp"

namespace mpc::net {
namespace {
constexpr const char* module_name = "libmpc_net_ucx.so";

/// The directory libmpc was loaded from ("" when unknown).
std::string libmpc_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&load_transport), &info) == 0 || info.dli_fname == nullptr) {
        return {};
    }
    std::string path = info.dli_fname;
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

/// Keeps the reason of the last failure (status holds static strings only).
thread_local char t_why[512];
}  // namespace

result<std::unique_ptr<transport>> load_transport(const ucx_options& opts) noexcept {
    // libucm, loaded with UCX, replaces mmap/munmap/madvise process-wide to track registered
    // memory (a lock per call on the allocator's paths; a crash under ThreadSanitizer). The
    // transports used here (shared memory, CMA, TCP) need no registration cache: off unless the
    // user asks for it.
    ::setenv("UCX_MEM_EVENTS", "no", 0);
    void* h = nullptr;
    std::string dir = libmpc_dir();
    std::string first_error;
    if (!dir.empty()) {
        std::string path = dir + "/" + module_name;
        h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            const char* e = ::dlerror();
            first_error = e != nullptr ? e : "";
        }
    }
    if (h == nullptr) {
        h = ::dlopen(module_name, RTLD_NOW | RTLD_LOCAL);
    }
    if (h == nullptr) {
        const char* e = ::dlerror();
        std::snprintf(t_why, sizeof(t_why), "cannot load the UCX transport module %s: %s", module_name,
                      !first_error.empty() ? first_error.c_str() : (e != nullptr ? e : "not found"));
        return status{errc::unsupported, t_why};
    }
    auto factory = reinterpret_cast<transport_factory>(::dlsym(h, transport_factory_symbol));
    if (factory == nullptr) {
        std::snprintf(t_why, sizeof(t_why), "%s has no %s: not an MPC transport module", module_name,
                      transport_factory_symbol);
        return status{errc::unsupported, t_why};
    }
    char why[400] = "";
    transport* t = factory(&opts, why, sizeof(why));
    if (t == nullptr) {
        std::snprintf(t_why, sizeof(t_why), "cannot start the UCX transport: %s", why);
        return status{errc::internal, t_why};
    }
    // The module stays loaded for the life of the process (its code runs until exit).
    return std::unique_ptr<transport>(t);
}

}  // namespace mpc::net
