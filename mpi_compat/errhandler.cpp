/// \file
/// User error handlers (MPI_Comm_create_errhandler, MPI_Comm_call_errhandler,
/// MPI_Errhandler_free) and user error classes, codes and strings (MPI 3.1 sections 8.3, 8.5).
///
/// Handlers: a process-wide table of function pointers, indices from 3 (1 and 2 are
/// MPI_ERRORS_ARE_FATAL and MPI_ERRORS_RETURN). A handler is a few bytes and communicators keep
/// using it after MPI_Errhandler_free, so entries are never deleted or reused. Errors are raised
/// with no table locked: raise() looks the caller's handler up in the handler table, and a user
/// handler may call MPI.
///
/// Codes: one process-wide table, so that any rank can decode a code any rank added. The values
/// are still deterministic per rank, as MPI advises: each rank numbers its additions from
/// MPI_ERR_LASTCODE + 1 on, and a number already taken by another rank is shared when it means
/// the same (the same class, or a class) and skipped otherwise. Ranks that add the same classes
/// and codes in the same order therefore get the same values (and share their strings).

#include "mpi_compat/errhandler.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"

namespace mpc::mpi {
namespace {

constexpr int first_user_handler = 3;
constexpr int first_user_code = MPI_ERR_LASTCODE + 1;
constexpr int last_predefined_class = MPI_T_ERR_INVALID;

struct handler_table {
    std::mutex lock;
    std::vector<MPI_Comm_errhandler_function*> fns =
        std::vector<MPI_Comm_errhandler_function*>(first_user_handler, nullptr);
};

handler_table& handlers() {
    static handler_table t;
    return t;
}

MPI_Comm_errhandler_function* user_handler(MPI_Errhandler eh) noexcept {
    if ((static_cast<unsigned>(eh) >> 24) != MPC_HANDLE_KIND_ERRHANDLER) {
        return nullptr;
    }
    auto idx = static_cast<std::size_t>(eh & 0xffffff);
    handler_table& t = handlers();
    std::lock_guard<std::mutex> g(t.lock);
    return idx < t.fns.size() ? t.fns[idx] : nullptr;
}

struct code_info {
    int cls;
    std::string text;
};

struct code_table {
    std::mutex lock;
    std::map<int, code_info> codes;               ///< user code -> class (a class maps to itself)
    std::unordered_map<int, int> next_of_rank;    ///< world rank -> its next number
    std::unordered_map<int, int> lastused_of_rank;  ///< storage of each rank's MPI_LASTUSEDCODE
    int max_code = MPI_ERR_LASTCODE;
};

code_table& codes() {
    static code_table t;
    return t;
}

/// Adds a class (cls < 0) or a code of class cls for rank r; returns its value.
int add_code(int r, int cls) {
    code_table& t = codes();
    std::lock_guard<std::mutex> g(t.lock);
    int& next = t.next_of_rank.try_emplace(r, first_user_code).first->second;
    for (;; ++next) {
        int meaning = cls < 0 ? next : cls;
        auto it = t.codes.find(next);
        if (it == t.codes.end()) {
            t.codes.emplace(next, code_info{meaning, std::string()});
            break;
        }
        if (it->second.cls == meaning) {
            break;  // the same addition by another rank
        }
    }
    int code = next++;
    t.max_code = std::max(t.max_code, code);
    return code;
}

bool is_class(int cls) noexcept {
    if (cls > 0 && cls <= last_predefined_class) {
        return true;
    }
    code_table& t = codes();
    std::lock_guard<std::mutex> g(t.lock);
    auto it = t.codes.find(cls);
    return it != t.codes.end() && it->second.cls == cls;
}

}  // namespace

bool is_user_errhandler(MPI_Errhandler eh) noexcept { return user_handler(eh) != nullptr; }

bool invoke_user_errhandler(task& self, MPI_Comm h, int code) noexcept {
    comm* c = lookup_comm(h);
    if (c == nullptr) {
        c = &world().world;
    }
    MPI_Comm_errhandler_function* fn = user_handler(local_of(self, c).errhandler);
    if (fn == nullptr) {
        return false;
    }
    MPI_Comm ch = c->handle;
    int cd = code;
    fn(&ch, &cd);
    return true;
}

int user_error_class(int code) noexcept {
    code_table& t = codes();
    std::lock_guard<std::mutex> g(t.lock);
    auto it = t.codes.find(code);
    return it != t.codes.end() ? it->second.cls : -1;
}

bool user_error_string(int code, char* out, int* len) noexcept {
    code_table& t = codes();
    std::lock_guard<std::mutex> g(t.lock);
    auto it = t.codes.find(code);
    if (it == t.codes.end()) {
        return false;
    }
    std::size_t n = std::min(it->second.text.size(), static_cast<std::size_t>(MPI_MAX_ERROR_STRING - 1));
    std::memcpy(out, it->second.text.data(), n);
    out[n] = '\0';
    *len = static_cast<int>(n);
    return true;
}

int* lastusedcode(task& self) noexcept {
    code_table& t = codes();
    std::lock_guard<std::mutex> g(t.lock);
    try {
        int& v = t.lastused_of_rank[self.world_rank];
        v = t.max_code;
        return &v;
    } catch (...) {
        static int fallback = MPI_ERR_LASTCODE;
        return &fallback;
    }
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

extern "C" {

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* eh) {
    if (fn == nullptr || eh == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "null function or output pointer");
    }
    // raise() only once the table is unlocked: applying a handler looks it up in the table.
    handler_table& t = handlers();
    std::size_t idx = 0;
    try {
        std::lock_guard<std::mutex> g(t.lock);
        if (t.fns.size() < 0xffffff) {
            t.fns.push_back(fn);
            idx = t.fns.size() - 1;
        }
    } catch (...) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler", "out of memory");
    }
    if (idx == 0) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler", "no handler left");
    }
    *eh = MPC_HANDLE(MPC_HANDLE_KIND_ERRHANDLER, static_cast<int>(idx));
    return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm h, int code) {
    comm_call k = enter_comm("MPI_Comm_call_errhandler", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (!invoke_user_errhandler(*k.self, h, code)) {
        (void)raise(h, code, "MPI_Comm_call_errhandler", "error code %d raised by the program", code);
    }
    return MPI_SUCCESS;  // the handler was called (and returned)
}

int PMPI_Errhandler_free(MPI_Errhandler* eh) {
    if (eh == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "null handler pointer");
    }
    if (*eh != MPI_ERRORS_ARE_FATAL && *eh != MPI_ERRORS_RETURN && !is_user_errhandler(*eh)) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler %#x", *eh);
    }
    *eh = MPI_ERRHANDLER_NULL;  // the handler itself stays: communicators may still use it
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int* errorclass) {
    task* self = current();
    if (errorclass == nullptr || self == nullptr) {
        return raise(MPI_COMM_NULL, errorclass == nullptr ? MPI_ERR_ARG : MPI_ERR_OTHER, "MPI_Add_error_class",
                     errorclass == nullptr ? "null output pointer" : "called outside an MPI rank");
    }
    try {
        *errorclass = add_code(self->world_rank, -1);
    } catch (...) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Add_error_class", "out of memory");
    }
    return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
    task* self = current();
    if (errorcode == nullptr || self == nullptr) {
        return raise(MPI_COMM_NULL, errorcode == nullptr ? MPI_ERR_ARG : MPI_ERR_OTHER, "MPI_Add_error_code",
                     errorcode == nullptr ? "null output pointer" : "called outside an MPI rank");
    }
    if (!is_class(errorclass)) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class", errorclass);
    }
    try {
        *errorcode = add_code(self->world_rank, errorclass);
    } catch (...) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Add_error_code", "out of memory");
    }
    return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char* string) {
    if (string == nullptr || strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                     string == nullptr ? "null string" : "string longer than %d characters", MPI_MAX_ERROR_STRING - 1);
    }
    code_table& t = codes();
    bool known = false;
    try {
        std::lock_guard<std::mutex> g(t.lock);  // released before raise(): handlers may call MPI
        auto it = t.codes.find(errorcode);
        if (it != t.codes.end()) {
            known = true;
            it->second.text = string;
        }
    } catch (...) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string", "out of memory");
    }
    if (!known) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string", "%d is not a user error code or class",
                     errorcode);
    }
    return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function*, MPI_Errhandler*) MPC_WEAK(MPI_Comm_create_errhandler);
int MPI_Comm_call_errhandler(MPI_Comm, int) MPC_WEAK(MPI_Comm_call_errhandler);
int MPI_Errhandler_free(MPI_Errhandler*) MPC_WEAK(MPI_Errhandler_free);
int MPI_Add_error_class(int*) MPC_WEAK(MPI_Add_error_class);
int MPI_Add_error_code(int, int*) MPC_WEAK(MPI_Add_error_code);
int MPI_Add_error_string(int, const char*) MPC_WEAK(MPI_Add_error_string);
}
