/// \file
/// The Fortran handle conversions (MPI_Comm_c2f, MPI_Type_f2c, ...) as functions: handles are
/// the same ints in C and Fortran, so each is the identity. mpi.h also defines every one of them
/// (MPI_ and PMPI_ names) as a macro, so that calls cost nothing; these definitions serve tools
/// that take their address, look them up by name, or #undef the macros (as MPICH's test suite
/// does for PMPI_Message_c2f).

#include <mpi.h>

#include "mpi_compat/binding.hpp"

// X(kind, C handle type) for every kind of handle with conversions (MPI 3.1 section 17.2.4).
#define MPC_HANDLE_KINDS(X) \
    X(Comm, MPI_Comm)       \
    X(Type, MPI_Datatype)   \
    X(Group, MPI_Group)     \
    X(Request, MPI_Request) \
    X(Op, MPI_Op)           \
    X(Errhandler, MPI_Errhandler) \
    X(Info, MPI_Info)       \
    X(Message, MPI_Message) \
    X(Win, MPI_Win)

// The macros of mpi.h would expand the names below.
#undef MPI_Comm_c2f
#undef MPI_Comm_f2c
#undef PMPI_Comm_c2f
#undef PMPI_Comm_f2c
#undef MPI_Type_c2f
#undef MPI_Type_f2c
#undef PMPI_Type_c2f
#undef PMPI_Type_f2c
#undef MPI_Group_c2f
#undef MPI_Group_f2c
#undef PMPI_Group_c2f
#undef PMPI_Group_f2c
#undef MPI_Request_c2f
#undef MPI_Request_f2c
#undef PMPI_Request_c2f
#undef PMPI_Request_f2c
#undef MPI_Op_c2f
#undef MPI_Op_f2c
#undef PMPI_Op_c2f
#undef PMPI_Op_f2c
#undef MPI_Errhandler_c2f
#undef MPI_Errhandler_f2c
#undef PMPI_Errhandler_c2f
#undef PMPI_Errhandler_f2c
#undef MPI_Info_c2f
#undef MPI_Info_f2c
#undef PMPI_Info_c2f
#undef PMPI_Info_f2c
#undef MPI_Message_c2f
#undef MPI_Message_f2c
#undef PMPI_Message_c2f
#undef PMPI_Message_f2c
#undef MPI_Win_c2f
#undef MPI_Win_f2c
#undef PMPI_Win_c2f
#undef PMPI_Win_f2c

extern "C" {

#define MPC_DEFINE_CONVERSIONS(kind, type)                                                   \
    MPI_Fint PMPI_##kind##_c2f(type h) { return static_cast<MPI_Fint>(h); }                 \
    type PMPI_##kind##_f2c(MPI_Fint h) { return static_cast<type>(h); }                     \
    MPI_Fint MPI_##kind##_c2f(type) MPC_WEAK(MPI_##kind##_c2f);                              \
    type MPI_##kind##_f2c(MPI_Fint) MPC_WEAK(MPI_##kind##_f2c);
MPC_HANDLE_KINDS(MPC_DEFINE_CONVERSIONS)

}  // extern "C"
