/// \file
/// Environment calls: initialization, finalization, abort, versions, time, the size and rank
/// queries of the predefined communicators, profiling control (MPI_Pcontrol), the parent
/// query of dynamic processes (there is never a parent) and the Fortran status conversions.

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "mpi_compat/attr.hpp"
#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/remote.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
double wtime() noexcept;
}

using namespace mpc::mpi;

namespace {
/// The calling rank, or nullptr after reporting that the call needs one.
task* rank_or_null() noexcept { return current(); }

int init_common(const char* call, int required, int* provided) noexcept {
    task* t = rank_or_null();
    if (t == nullptr) {
        std::fprintf(stderr, "mpc: %s called outside an MPI rank (was the program built with mpc_cc?)\n", call);
        return MPI_ERR_OTHER;
    }
    if (t->initialized) {
        return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, call, "MPI is already initialized in this rank");
    }
    if (t->finalized) {
        return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, call, "MPI cannot be initialized again after MPI_Finalize");
    }
    t->initialized = true;
    // What was asked for, up to MPI_THREAD_MULTIPLE (which is fully supported). Below it, no
    // two threads of the rank call MPI at once, and the rank's request pool takes no lock.
    int level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                                             : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    t->thread_level = level;
    t->requests.set_locking(level == MPI_THREAD_MULTIPLE);
    if (provided != nullptr) {
        *provided = level;
    }
    return MPI_SUCCESS;
}
}  // namespace

namespace {

/// The status conversions: the C, INTEGER-array and TYPE(MPI_Status) forms have one layout.
template <class From, class To>
int copy_status(const char* call, const From* from, To* to) noexcept {
    if (from == nullptr || to == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, call, "null or ignored status");
    }
    std::memcpy(static_cast<void*>(to), from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}
}  // namespace

extern "C" {
int PMPI_Init(int* /*argc*/, char*** /*argv*/) { return init_common("MPI_Init", MPI_THREAD_SINGLE, nullptr); }

int PMPI_Init_thread(int* /*argc*/, char*** /*argv*/, int required, int* provided) {
    if (provided == nullptr) {
        return MPI_ERR_ARG;
    }
    return init_common("MPI_Init_thread", required, provided);
}

int PMPI_Initialized(int* flag) {
    if (flag == nullptr) {
        return MPI_ERR_ARG;
    }
    task* t = rank_or_null();
    *flag = t != nullptr && t->initialized ? 1 : 0;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
    if (flag == nullptr) {
        return MPI_ERR_ARG;
    }
    task* t = rank_or_null();
    *flag = t != nullptr && t->finalized ? 1 : 0;
    return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
    task* t = rank_or_null();
    if (t == nullptr || !t->initialized || t->finalized) {
        return t == nullptr ? MPI_ERR_OTHER
                            : raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Finalize",
                                    t->finalized ? "MPI_Finalize called twice" : "MPI_Init was not called");
    }
    if (int e = on_finalize(*t); e != MPI_SUCCESS) {  // attributes of COMM_SELF, then COMM_WORLD
        return raise(MPI_COMM_WORLD, e, "MPI_Finalize", "an attribute delete callback returned %d", e);
    }
    t->finalized = true;
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
    task* t = rank_or_null();
    char line[200];
    int n = std::snprintf(line, sizeof(line), "mpc: rank %d called MPI_Abort(%s, %d): ending the job\n",
                          t != nullptr ? t->world_rank : -1,
                          comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : comm == MPI_COMM_SELF ? "MPI_COMM_SELF" : "comm",
                          errorcode);
    ssize_t w = ::write(2, line, static_cast<std::size_t>(n < 0 ? 0 : n));
    (void)w;
    end_job(errorcode == 0 ? 1 : (errorcode & 0xff) == 0 ? 1 : errorcode & 0xff);
}

int PMPI_Query_thread(int* provided) {
    task* t = rank_or_null();
    if (provided == nullptr || t == nullptr) {
        return MPI_ERR_ARG;
    }
    *provided = t->thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
    task* t = rank_or_null();
    if (flag == nullptr) {
        return MPI_ERR_ARG;
    }
    *flag = t != nullptr && mpc::sched::self() == t->ult ? 1 : 0;
    return MPI_SUCCESS;
}

int PMPI_Get_version(int* version, int* subversion) {
    if (version == nullptr || subversion == nullptr) {
        return MPI_ERR_ARG;
    }
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
    if (version == nullptr || resultlen == nullptr) {
        return MPI_ERR_ARG;
    }
    int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "MPC 0.1.0 (thread-based MPI %d.%d)",
                          MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
    if (name == nullptr || resultlen == nullptr) {
        return MPI_ERR_ARG;
    }
    std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", mpc::mpi::remote::node_name());
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

double PMPI_Wtime(void) { return wtime(); }
double PMPI_Wtick(void) { return 1e-9; }

// Profiling levels mean something to a profiling library only (MPI 3.1 section 14.2.4).
int PMPI_Pcontrol(const int /*level*/, ...) { return MPI_SUCCESS; }

// No process is ever spawned (MPI 3.1 section 10.3.2: MPI_COMM_NULL for a process not spawned).
int PMPI_Comm_get_parent(MPI_Comm* parent) {
    if (parent == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent", "null output pointer");
    }
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static_assert(sizeof(MPI_Status) == MPI_STATUS_SIZE * sizeof(MPI_Fint), "a Fortran status is the C one");

static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "TYPE(MPI_Status) is the C status");

int PMPI_Status_c2f(const MPI_Status* c, MPI_Fint* f) { return copy_status("MPI_Status_c2f", c, f); }
int PMPI_Status_f2c(const MPI_Fint* f, MPI_Status* c) { return copy_status("MPI_Status_f2c", f, c); }
int PMPI_Status_c2f08(const MPI_Status* c, MPI_F08_status* f) { return copy_status("MPI_Status_c2f08", c, f); }
int PMPI_Status_f082c(const MPI_F08_status* f, MPI_Status* c) { return copy_status("MPI_Status_f082c", f, c); }
int PMPI_Status_f2f08(const MPI_Fint* f, MPI_F08_status* f08) { return copy_status("MPI_Status_f2f08", f, f08); }
int PMPI_Status_f082f(const MPI_F08_status* f08, MPI_Fint* f) { return copy_status("MPI_Status_f082f", f08, f); }

int PMPI_Comm_size(MPI_Comm c, int* size) {
    comm* cm = lookup_comm(c);
    if (cm == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_size", "invalid communicator %#x", c);
    }
    if (size == nullptr) {
        return raise(c, MPI_ERR_ARG, "MPI_Comm_size", "null output pointer");
    }
    task* t = rank_or_null();
    *size = t != nullptr ? cm->local_size(*t) : cm->size();
    return MPI_SUCCESS;
}

int PMPI_Comm_rank(MPI_Comm c, int* rank) {
    comm* cm = lookup_comm(c);
    task* t = rank_or_null();
    if (cm == nullptr || t == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_rank", "invalid communicator %#x", c);
    }
    if (rank == nullptr) {
        return raise(c, MPI_ERR_ARG, "MPI_Comm_rank", "null output pointer");
    }
    *rank = cm->rank_of(*t);
    return MPI_SUCCESS;
}
}


extern "C" {
int MPI_Init(int*, char***) MPC_WEAK(MPI_Init);
int MPI_Init_thread(int*, char***, int, int*) MPC_WEAK(MPI_Init_thread);
int MPI_Initialized(int*) MPC_WEAK(MPI_Initialized);
int MPI_Finalized(int*) MPC_WEAK(MPI_Finalized);
int MPI_Finalize(void) MPC_WEAK(MPI_Finalize);
int MPI_Abort(MPI_Comm, int) MPC_WEAK(MPI_Abort);
int MPI_Query_thread(int*) MPC_WEAK(MPI_Query_thread);
int MPI_Is_thread_main(int*) MPC_WEAK(MPI_Is_thread_main);
int MPI_Get_version(int*, int*) MPC_WEAK(MPI_Get_version);
int MPI_Get_library_version(char*, int*) MPC_WEAK(MPI_Get_library_version);
int MPI_Get_processor_name(char*, int*) MPC_WEAK(MPI_Get_processor_name);
double MPI_Wtime(void) MPC_WEAK(MPI_Wtime);
double MPI_Wtick(void) MPC_WEAK(MPI_Wtick);
int MPI_Pcontrol(const int, ...) MPC_WEAK(MPI_Pcontrol);
int MPI_Comm_get_parent(MPI_Comm*) MPC_WEAK(MPI_Comm_get_parent);
int MPI_Status_c2f(const MPI_Status*, MPI_Fint*) MPC_WEAK(MPI_Status_c2f);
int MPI_Status_f2c(const MPI_Fint*, MPI_Status*) MPC_WEAK(MPI_Status_f2c);
int MPI_Status_c2f08(const MPI_Status*, MPI_F08_status*) MPC_WEAK(MPI_Status_c2f08);
int MPI_Status_f082c(const MPI_F08_status*, MPI_Status*) MPC_WEAK(MPI_Status_f082c);
int MPI_Status_f2f08(const MPI_Fint*, MPI_F08_status*) MPC_WEAK(MPI_Status_f2f08);
int MPI_Status_f082f(const MPI_F08_status*, MPI_Fint*) MPC_WEAK(MPI_Status_f082f);
int MPI_Comm_size(MPI_Comm, int*) MPC_WEAK(MPI_Comm_size);
int MPI_Comm_rank(MPI_Comm, int*) MPC_WEAK(MPI_Comm_rank);
}
