#include "lib/status.hpp"

namespace mpc {

const char* to_string(errc e) noexcept {
    switch (e) {
        case errc::ok: return "success";
        case errc::invalid_argument: return "invalid argument";
        case errc::no_memory: return "out of memory";
        case errc::busy: return "resource busy";
        case errc::not_initialized: return "runtime not initialized";
        case errc::already_initialized: return "runtime already initialized";
        case errc::not_in_ult: return "call made outside a user-level thread";
        case errc::unsupported: return "operation not supported";
        case errc::system: return "system call failed";
        case errc::deadlock: return "deadlock";
        case errc::internal: return "internal error";
    }
    return "unknown error";
}

}  // namespace mpc
