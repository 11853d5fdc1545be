#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "mpi_compat/errhandler.hpp"
#include "mpi_compat/remote.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
namespace {
struct class_info {
    int cls;
    const char* name;
    const char* text;
};
const class_info classes[] = {
    {MPI_SUCCESS, "MPI_SUCCESS", "no error"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "invalid buffer pointer"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT", "invalid count argument"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE", "invalid datatype"},
    {MPI_ERR_TAG, "MPI_ERR_TAG", "invalid tag"},
    {MPI_ERR_COMM, "MPI_ERR_COMM", "invalid communicator"},
    {MPI_ERR_RANK, "MPI_ERR_RANK", "invalid rank"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT", "invalid root"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP", "invalid group"},
    {MPI_ERR_OP, "MPI_ERR_OP", "invalid reduce operation"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "invalid topology"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS", "invalid dimension argument"},
    {MPI_ERR_ARG, "MPI_ERR_ARG", "invalid argument of some other kind"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "unknown error"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "message truncated on receive"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER", "known error not in this list"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN", "internal MPI (implementation) error"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "error code is in status"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING", "pending request"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "invalid request (handle)"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "permission denied"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE", "invalid file access mode"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "invalid file name"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "data conversion failed"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "data representation already defined"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "file exists"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "file in use"},
    {MPI_ERR_FILE, "MPI_ERR_FILE", "invalid file handle"},
    {MPI_ERR_INFO, "MPI_ERR_INFO", "invalid info object"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "invalid info key"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "invalid info value"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "info key not defined"},
    {MPI_ERR_IO, "MPI_ERR_IO", "I/O error"},
    {MPI_ERR_NAME, "MPI_ERR_NAME", "service name not published"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "out of memory"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "arguments not the same on all processes"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "not enough space"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    {MPI_ERR_PORT, "MPI_ERR_PORT", "invalid port name"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "quota exceeded"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "read-only file or file system"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "invalid service name"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "could not spawn processes"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {MPI_ERR_WIN, "MPI_ERR_WIN", "invalid window"},
    {MPI_ERR_BASE, "MPI_ERR_BASE", "invalid base address"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "invalid lock type"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "invalid keyval"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE", "invalid size"},
    {MPI_ERR_DISP, "MPI_ERR_DISP", "invalid displacement"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "invalid assert argument"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE", "target memory not in the window"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    {MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "invalid use of the tool interface"},
};

const class_info* find(int cls) noexcept {
    for (const class_info& c : classes) {
        if (c.cls == cls) {
            return &c;
        }
    }
    return nullptr;
}

/// The handler of the calling member for `h`; errors not tied to a valid communicator use the
/// world's (MPI 3.1 section 8.3).
MPI_Errhandler handler_of(MPI_Comm h, task* t) noexcept {
    if (t == nullptr) {
        return MPI_ERRORS_ARE_FATAL;
    }
    comm* c = lookup_comm(h);
    return local_of(*t, c != nullptr ? c : &world().world).errhandler;
}
}  // namespace

const char* error_text(int cls) noexcept {
    const class_info* c = find(cls);
    return c != nullptr ? c->text : "unknown error class";
}

const char* error_name(int cls) noexcept {
    const class_info* c = find(cls);
    return c != nullptr ? c->name : "MPI_ERR_UNKNOWN";
}

void end_job(int code) noexcept {
    std::fflush(stdout);
    std::fflush(stderr);
    remote::abort_job(code);  // under PMIx: the other processes are ended too
    _exit(code);
}

int raise(MPI_Comm h, int cls, const char* call, const char* fmt, ...) noexcept {
    task* t = current();
    if (t != nullptr && invoke_user_errhandler(*t, h, cls)) {  // MPI_Comm_create_errhandler's
        return cls;
    }
    // Outside any rank (the runtime's own threads, unit tests of the bindings) there is no
    // handler to apply and no job to end: the class is returned.
    if (t == nullptr || handler_of(h, t) == MPI_ERRORS_RETURN) {
        return cls;
    }
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    char line[600];
    int n = std::snprintf(line, sizeof(line), "mpc: fatal: rank %d: %s: %s [%s]\n", t != nullptr ? t->world_rank : -1,
                          call, why, error_name(cls));
    ssize_t w = ::write(2, line, static_cast<std::size_t>(n < 0 ? 0 : n));
    (void)w;
    end_job(1);
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

extern "C" {
int PMPI_Error_class(int errorcode, int* errorclass) {
    if (errorclass == nullptr) {
        return MPI_ERR_ARG;
    }
    int user = user_error_class(errorcode);  // MPI_Add_error_code/class
    *errorclass = user >= 0 ? user : errorcode;
    return MPI_SUCCESS;
}

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
    if (string == nullptr || resultlen == nullptr) {
        return MPI_ERR_ARG;
    }
    if (user_error_string(errorcode, string, resultlen)) {  // MPI_Add_error_string
        return MPI_SUCCESS;
    }
    const class_info* c = find(errorcode);
    int n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", c ? c->name : "MPI_ERR_UNKNOWN",
                          c ? c->text : "unknown error code");
    *resultlen = n < 0 ? 0 : (n >= MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING - 1 : n);
    return c != nullptr ? MPI_SUCCESS : MPI_ERR_ARG;
}

int PMPI_Comm_set_errhandler(MPI_Comm h, MPI_Errhandler eh) {
    task* t = current();
    if (t == nullptr) {
        return MPI_ERR_OTHER;
    }
    comm* c = lookup_comm(h);
    if (c == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_set_errhandler", "invalid communicator %#x", h);
    }
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN && !is_user_errhandler(eh)) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler %#x", eh);
    }
    local_of(*t, c).errhandler = eh;
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm h, MPI_Errhandler* eh) {
    task* t = current();
    if (t == nullptr) {
        return MPI_ERR_OTHER;
    }
    comm* c = lookup_comm(h);
    if (c == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_get_errhandler", "invalid communicator %#x", h);
    }
    if (eh == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "null output pointer");
    }
    *eh = local_of(*t, c).errhandler;
    return MPI_SUCCESS;
}
}


extern "C" {
int MPI_Error_class(int, int*) MPC_WEAK(MPI_Error_class);
int MPI_Error_string(int, char*, int*) MPC_WEAK(MPI_Error_string);
int MPI_Comm_set_errhandler(MPI_Comm, MPI_Errhandler) MPC_WEAK(MPI_Comm_set_errhandler);
int MPI_Comm_get_errhandler(MPI_Comm, MPI_Errhandler*) MPC_WEAK(MPI_Comm_get_errhandler);
}
