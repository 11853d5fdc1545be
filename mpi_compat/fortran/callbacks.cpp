/// \file
/// Fortran callbacks (docs/fortran.md): MPI_COMM_CREATE_KEYVAL, MPI_TYPE_CREATE_KEYVAL,
/// MPI_KEYVAL_CREATE and MPI_GREQUEST_START with Fortran procedures, and the predefined
/// procedures MPI_COMM_NULL_COPY_FN... A Fortran callback takes every argument by reference,
/// handles as INTEGERs, attribute values and extra states as INTEGER(KIND=MPI_ADDRESS_KIND)
/// (default INTEGER for the MPI-1 MPI_KEYVAL_CREATE), LOGICAL flags and a trailing ierror. The
/// C layer gets a C trampoline whose extra_state is a record holding the Fortran procedures and
/// the Fortran extra state; the attribute a Fortran program stores is the integer value itself
/// (the generated MPI_COMM_SET_ATTR passes it as the void * of the C call). A keyval's record is
/// freed by the C layer's release hook once the keyval is freed and its last attribute is gone.
#include <atomic>
#include <new>

#include "mpi_compat/attr.hpp"
#include "mpi_compat/fortran/support.h"
#include "mpi_compat/type_attr.hpp"

namespace {

/// The Fortran procedure behind a function pointer of the C prototype (through void (*)(),
/// the generic function pointer type).
template <class To, class From>
To* as_fortran(From* f) {
    return reinterpret_cast<To*>(reinterpret_cast<void (*)()>(f));
}

/// Fortran copy / delete callbacks of value kind V (MPI_Aint; MPI_Fint for MPI-1).
template <class V>
using f_copy_fn = void(MPI_Fint* old, MPI_Fint* keyval, V* extra, V* in, V* out, MPI_Fint* flag, MPI_Fint* ierr);
template <class V>
using f_delete_fn = void(MPI_Fint* handle, MPI_Fint* keyval, V* value, V* extra, MPI_Fint* ierr);

template <class V>
struct keyval_record {
    f_copy_fn<V>* copy;
    f_delete_fn<V>* del;
    V extra;
};

/// Records of keyvals created from Fortran that still exist (mpc_f_keyval_records()).
std::atomic<long> g_live_records{0};

/// The C layer calls this once the keyval is freed and none of its attributes is left.
template <class V>
void release_record(void* r) {
    delete static_cast<keyval_record<V>*>(r);
    g_live_records.fetch_sub(1, std::memory_order_relaxed);
}

// C handles are ints, so one trampoline serves communicators and datatypes.
template <class V>
int copy_trampoline(int old, int keyval, void* extra, void* in, void* out, int* flag) {
    auto* r = static_cast<keyval_record<V>*>(extra);
    MPI_Fint h = old;
    MPI_Fint k = keyval;
    MPI_Fint f = 0;
    MPI_Fint ierr = MPI_SUCCESS;
    V e = r->extra;
    auto vin = static_cast<V>(reinterpret_cast<MPI_Aint>(in));
    V vout = 0;
    r->copy(&h, &k, &e, &vin, &vout, &f, &ierr);
    *flag = f != 0;
    if (*flag) {
        *static_cast<void**>(out) = reinterpret_cast<void*>(static_cast<MPI_Aint>(vout));
    }
    return ierr;
}

template <class V>
int delete_trampoline(int handle, int keyval, void* value, void* extra) {
    auto* r = static_cast<keyval_record<V>*>(extra);
    MPI_Fint h = handle;
    MPI_Fint k = keyval;
    MPI_Fint ierr = MPI_SUCCESS;
    V e = r->extra;
    auto v = static_cast<V>(reinterpret_cast<MPI_Aint>(value));
    r->del(&h, &k, &v, &e, &ierr);
    return ierr;
}

/// Creates a keyval through create (create_comm_keyval or create_type_keyval, which take the
/// record's release function) with the Fortran procedures copy and del and the Fortran extra
/// state carried in the void * of the generated wrapper.
template <class V, class Create, class Copy, class Delete>
int create(Create create, Copy* copy, Delete* del, int* keyval, void* extra) {
    if (copy == nullptr || del == nullptr) {
        return MPI_ERR_ARG;
    }
    auto* r = new (std::nothrow) keyval_record<V>{as_fortran<f_copy_fn<V>>(copy), as_fortran<f_delete_fn<V>>(del),
                                                  static_cast<V>(reinterpret_cast<MPI_Aint>(extra))};
    if (r == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    g_live_records.fetch_add(1, std::memory_order_relaxed);
    int rc = create(copy_trampoline<V>, delete_trampoline<V>, keyval, r, release_record<V>);
    if (rc != MPI_SUCCESS) {  // the record stays ours
        delete r;
        g_live_records.fetch_sub(1, std::memory_order_relaxed);
    }
    return rc;
}

/// create_comm_keyval with the name of the MPI call for its errors.
auto comm_keyval(const char* call) {
    return [call](MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del, int* keyval, void* extra,
                  void (*release)(void*)) { return mpc::mpi::create_comm_keyval(call, copy, del, keyval, extra, release); };
}

/// Fortran generalized request callbacks.
using f_query_fn = void(MPI_Aint* extra, MPI_Fint* status, MPI_Fint* ierr);
using f_free_fn = void(MPI_Aint* extra, MPI_Fint* ierr);
using f_cancel_fn = void(MPI_Aint* extra, MPI_Fint* complete, MPI_Fint* ierr);

struct grequest_record {
    f_query_fn* query;
    f_free_fn* free;
    f_cancel_fn* cancel;
    MPI_Aint* extra;  ///< the program's EXTRA_STATE variable (gen.py's ADDRESS_IN)
};

int grequest_query(void* extra, MPI_Status* status) {
    auto* r = static_cast<grequest_record*>(extra);
    MPI_Fint ierr = MPI_SUCCESS;
    // a Fortran status is MPI_STATUS_SIZE integers laid out as the C MPI_Status
    r->query(r->extra, reinterpret_cast<MPI_Fint*>(status), &ierr);
    return ierr;
}

int grequest_free(void* extra) {
    auto* r = static_cast<grequest_record*>(extra);
    MPI_Fint ierr = MPI_SUCCESS;
    r->free(r->extra, &ierr);
    delete r;  // the C layer calls free_fn once, last
    return ierr;
}

int grequest_cancel(void* extra, int complete) {
    auto* r = static_cast<grequest_record*>(extra);
    MPI_Fint c = complete != 0;  // LOGICAL
    MPI_Fint ierr = MPI_SUCCESS;
    r->cancel(r->extra, &c, &ierr);
    return ierr;
}

}  // namespace

extern "C" {

int mpc_f_comm_create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del, int* keyval,
                             void* extra) {
    return create<MPI_Aint>(comm_keyval("MPI_Comm_create_keyval"), copy, del, keyval, extra);
}

int mpc_f_type_create_keyval(MPI_Type_copy_attr_function* copy, MPI_Type_delete_attr_function* del, int* keyval,
                             void* extra) {
    return create<MPI_Aint>(mpc::mpi::create_type_keyval, copy, del, keyval, extra);
}

int mpc_f_keyval_create(MPI_Copy_function* copy, MPI_Delete_function* del, int* keyval, void* extra) {
    return create<MPI_Fint>(comm_keyval("MPI_Keyval_create"), copy, del, keyval, extra);
}

int mpc_f_grequest_start(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free,
                         MPI_Grequest_cancel_function* cancel, void* extra, MPI_Request* request) {
    if (query == nullptr || free == nullptr || cancel == nullptr) {
        return MPI_ERR_ARG;
    }
    auto* r = new grequest_record{as_fortran<f_query_fn>(query), as_fortran<f_free_fn>(free),
                                  as_fortran<f_cancel_fn>(cancel), static_cast<MPI_Aint*>(extra)};
    int rc = PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, r, request);
    if (rc != MPI_SUCCESS) {
        delete r;
    }
    return rc;
}

long mpc_f_keyval_records(void) { return g_live_records.load(std::memory_order_relaxed); }

// The predefined Fortran procedures (gfortran's symbol names). The datatype ones have the same
// arguments as the communicator ones.
void mpi_comm_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint* flag, MPI_Fint* ierr) {
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
void mpi_comm_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierr) {
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void mpi_comm_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierr) { *ierr = MPI_SUCCESS; }
void mpi_type_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*, MPI_Fint*)
    __attribute__((alias("mpi_comm_null_copy_fn_")));
void mpi_type_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*, MPI_Fint*)
    __attribute__((alias("mpi_comm_dup_fn_")));
void mpi_type_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint*)
    __attribute__((alias("mpi_comm_null_delete_fn_")));
// MPI-1 (MPI_KEYVAL_CREATE): default INTEGER values.
void mpi_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* flag, MPI_Fint* ierr) {
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
void mpi_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* in, MPI_Fint* out, MPI_Fint* flag, MPI_Fint* ierr) {
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void mpi_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* ierr) { *ierr = MPI_SUCCESS; }

}  // extern "C"
