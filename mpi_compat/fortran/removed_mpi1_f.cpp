/// \file
/// The Fortran bindings of the MPI-1 functions MPI-3.0 removed (MPI_ADDRESS, MPI_TYPE_EXTENT,
/// MPI_TYPE_LB, MPI_TYPE_UB, MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED, MPI_TYPE_STRUCT,
/// MPI_ERRHANDLER_SET, MPI_ERRHANDLER_GET), which old Fortran programs call as external
/// procedures (mpif.h and module mpi declare nothing for them, as in MPICH). Their address-sized
/// arguments are default INTEGERs in MPI-1's Fortran binding, so these are written by hand
/// rather than generated from the C declarations: displacements and extents are converted, and
/// an extent or bound that does not fit an INTEGER is MPI_ERR_ARG. MPI_ADDRESS keeps the low 32
/// bits of the address, as MPICH does: every rank's memory lies above 16 TiB here (its address
/// slice), so no address fits, but the differences of addresses within 2 GiB of each other (a
/// structure's displacements, what such programs compute) come out right in INTEGER arithmetic.
/// The C functions themselves are mpi_compat/removed_mpi1.cpp's.

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <new>
#include <vector>

#include "mpc/removed_mpi1.h"

namespace {

/// `v` as a default INTEGER, or MPI_ERR_ARG when it does not fit.
int to_fint(MPI_Aint v, MPI_Fint* out) noexcept {
    if (v < INT_MIN || v > INT_MAX) {
        return MPI_ERR_ARG;
    }
    *out = static_cast<MPI_Fint>(v);
    return MPI_SUCCESS;
}

/// Address-sized results (the C function fills an MPI_Aint) into an INTEGER.
template <class F>
void aint_out(F&& call, MPI_Fint* out, MPI_Fint* ierr) noexcept {
    MPI_Aint v = 0;
    int rc = call(&v);
    *ierr = rc == MPI_SUCCESS ? to_fint(v, out) : rc;
}

/// INTEGER displacements as MPI_Aint (out of memory: empty, the caller reports it).
std::vector<MPI_Aint> widen(const MPI_Fint* d, MPI_Fint n) noexcept {
    try {
        return std::vector<MPI_Aint>(d, d + (n > 0 ? n : 0));
    } catch (const std::bad_alloc&) {
        return {};
    }
}

}  // namespace

// Each binding under gfortran's names: pmpi_x_ (the code), pmpi_x__ and PMPI_X, and the weak
// MPI names mpi_x_, mpi_x__ and MPI_X that a profiling library may replace.
#define MPC_F_NAMES(lower, upper, params)                                               \
    void pmpi_##lower##__ params __attribute__((alias("pmpi_" #lower "_")));            \
    void PMPI_##upper params __attribute__((alias("pmpi_" #lower "_")));                \
    void mpi_##lower##_ params __attribute__((weak, alias("pmpi_" #lower "_")));        \
    void mpi_##lower##__ params __attribute__((weak, alias("pmpi_" #lower "_")));       \
    void MPI_##upper params __attribute__((weak, alias("pmpi_" #lower "_")));

extern "C" {

void pmpi_address_(void* location, MPI_Fint* address, MPI_Fint* ierr) {
    MPI_Aint v = 0;
    *ierr = PMPI_Address(location, &v);
    if (*ierr == MPI_SUCCESS) {
        *address = static_cast<MPI_Fint>(static_cast<std::uint32_t>(static_cast<std::uintptr_t>(v)));
    }
}
MPC_F_NAMES(address, ADDRESS, (void*, MPI_Fint*, MPI_Fint*))

void pmpi_type_extent_(MPI_Fint* type, MPI_Fint* extent, MPI_Fint* ierr) {
    aint_out([&](MPI_Aint* v) { return PMPI_Type_extent(*type, v); }, extent, ierr);
}
MPC_F_NAMES(type_extent, TYPE_EXTENT, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_type_lb_(MPI_Fint* type, MPI_Fint* lb, MPI_Fint* ierr) {
    aint_out([&](MPI_Aint* v) { return PMPI_Type_lb(*type, v); }, lb, ierr);
}
MPC_F_NAMES(type_lb, TYPE_LB, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_type_ub_(MPI_Fint* type, MPI_Fint* ub, MPI_Fint* ierr) {
    aint_out([&](MPI_Aint* v) { return PMPI_Type_ub(*type, v); }, ub, ierr);
}
MPC_F_NAMES(type_ub, TYPE_UB, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_type_hvector_(MPI_Fint* count, MPI_Fint* blocklength, MPI_Fint* stride, MPI_Fint* oldtype,
                        MPI_Fint* newtype, MPI_Fint* ierr) {
    *ierr = PMPI_Type_hvector(*count, *blocklength, *stride, *oldtype, newtype);
}
MPC_F_NAMES(type_hvector, TYPE_HVECTOR, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_type_hindexed_(MPI_Fint* count, MPI_Fint* blocklengths, MPI_Fint* displacements, MPI_Fint* oldtype,
                         MPI_Fint* newtype, MPI_Fint* ierr) {
    std::vector<MPI_Aint> d = widen(displacements, *count);
    *ierr = *count > 0 && d.empty() ? MPI_ERR_NO_MEM
                                    : PMPI_Type_hindexed(*count, blocklengths, d.data(), *oldtype, newtype);
}
MPC_F_NAMES(type_hindexed, TYPE_HINDEXED, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_type_struct_(MPI_Fint* count, MPI_Fint* blocklengths, MPI_Fint* displacements, MPI_Fint* types,
                       MPI_Fint* newtype, MPI_Fint* ierr) {
    std::vector<MPI_Aint> d = widen(displacements, *count);
    *ierr = *count > 0 && d.empty() ? MPI_ERR_NO_MEM
                                    : PMPI_Type_struct(*count, blocklengths, d.data(), types, newtype);
}
MPC_F_NAMES(type_struct, TYPE_STRUCT, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_errhandler_set_(MPI_Fint* comm, MPI_Fint* errhandler, MPI_Fint* ierr) {
    *ierr = PMPI_Errhandler_set(*comm, *errhandler);
}
MPC_F_NAMES(errhandler_set, ERRHANDLER_SET, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_errhandler_get_(MPI_Fint* comm, MPI_Fint* errhandler, MPI_Fint* ierr) {
    *ierr = PMPI_Errhandler_get(*comm, errhandler);
}
MPC_F_NAMES(errhandler_get, ERRHANDLER_GET, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

}  // extern "C"
