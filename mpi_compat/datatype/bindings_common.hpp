/// \file
/// Internal helpers of the datatype C bindings (bindings.cpp, bindings_pack.cpp): error classes
/// of engine statuses, handle output, the status byte count. The bindings return error classes
/// and call no error handler; the caller (mpi_compat core) routes them through the handler.
#pragma once

#include <mpi.h>

#include "mpi_compat/errors.hpp"

#include <new>

#include "mpi_compat/datatype/datatype.hpp"
#include "mpi_compat/datatype/handles.hpp"

/// Declares MPI_name as a weak alias of PMPI_name (profiling interface, MPI 3.1 section 14.2).
#define MPC_DT_WEAK(name) __attribute__((weak, alias("P" #name)))

namespace mpc::mpi::dtb {

static_assert(int(combiner::struct_) == MPI_COMBINER_STRUCT && int(combiner::resized) == MPI_COMBINER_RESIZED &&
              int(combiner::hindexed_block) == MPI_COMBINER_HINDEXED_BLOCK);
static_assert(order_c == MPI_ORDER_C && order_fortran == MPI_ORDER_FORTRAN);
static_assert(distribute_block == MPI_DISTRIBUTE_BLOCK && distribute_none == MPI_DISTRIBUTE_NONE &&
              distribute_dflt_darg == MPI_DISTRIBUTE_DFLT_DARG);

/// The MPI error class of an engine status.
inline int class_of(const status& st) noexcept {
    switch (st.code()) {
        case errc::ok:
            return MPI_SUCCESS;
        case errc::invalid_argument:
            return MPI_ERR_ARG;
        case errc::no_memory:
            return MPI_ERR_NO_MEM;
        case errc::unsupported:
            return MPI_ERR_UNSUPPORTED_OPERATION;
        default:
            return MPI_ERR_INTERN;
    }
}

/// Every PMPI_ datatype call ends here with its result: the one place where a failure can be
/// routed to an error handler (MPI 3.1 section 8.3: the handler of MPI_COMM_WORLD for calls not
/// tied to a communicator). The engine itself calls no handler: it returns the class, and the
/// mpi_compat core is expected to wire this to its raise().
/// Applies the error handler (MPI_COMM_WORLD's: datatype calls have no communicator).
inline int report(const char* call, int cls) noexcept {
    return cls == MPI_SUCCESS ? cls : raise(MPI_COMM_WORLD, cls, call, "%s", error_text(cls));
}

/// Stores a handle for a constructor's result in *newtype, or returns the error class.
inline int out_handle(result<datatype*>&& r, MPI_Datatype* newtype) noexcept {
    if (!r) {
        return class_of(r.error());
    }
    auto h = datatype_handle_add(*r);
    if (!h) {
        datatype::release(*r);
        return MPI_ERR_NO_MEM;
    }
    *newtype = *h;
    return MPI_SUCCESS;
}

/// Received bytes recorded in a status (the encoding of mpi.h).
inline count_t status_bytes(const MPI_Status& st) noexcept {
    return count_t(static_cast<unsigned>(st.mpc_count_lo)) |
           count_t(static_cast<unsigned>(st.mpc_count_hi_and_cancelled) >> 1) << 32;
}

/// Records `bytes` received bytes in a status, keeping its cancelled bit.
inline void set_status_bytes(MPI_Status& st, count_t bytes) noexcept {
    st.mpc_count_lo = static_cast<int>(static_cast<unsigned>(bytes & 0xffffffff));
    st.mpc_count_hi_and_cancelled = static_cast<int>((static_cast<unsigned>(bytes >> 32) << 1) |
                                                     (static_cast<unsigned>(st.mpc_count_hi_and_cancelled) & 1));
}

}  // namespace mpc::mpi::dtb
