/// \file
/// The MPI-1 functions that MPI-3.0 removed (include/mpc/removed_mpi1.h), each as its MPI-2
/// replacement under the old name. Exported always, as Open MPI's and MPICH's libraries do: old
/// programs (HPL, HPCC) call them without a declaration and must still link.
#define MPC_ENABLE_MPI1_COMPAT 1
#include <mpi.h>

#include "mpi_compat/binding.hpp"

extern "C" {

int PMPI_Address(void* location, MPI_Aint* address) { return PMPI_Get_address(location, address); }

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
    MPI_Aint lb = 0;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
    MPI_Aint extent = 0;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
    MPI_Aint lb = 0;
    MPI_Aint extent = 0;
    const int err = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (err == MPI_SUCCESS) {
        *displacement = lb + extent;
    }
    return err;
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int PMPI_Type_hindexed(int count, int* array_of_blocklengths, MPI_Aint* array_of_displacements, MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype);
}

int PMPI_Type_struct(int count, int* array_of_blocklengths, MPI_Aint* array_of_displacements,
                     MPI_Datatype* array_of_types, MPI_Datatype* newtype) {
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype);
}

int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
    return PMPI_Comm_create_errhandler(function, errhandler);
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return PMPI_Comm_set_errhandler(comm, errhandler); }

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
    return PMPI_Comm_get_errhandler(comm, errhandler);
}

int MPI_Address(void*, MPI_Aint*) MPC_WEAK(MPI_Address);
int MPI_Type_extent(MPI_Datatype, MPI_Aint*) MPC_WEAK(MPI_Type_extent);
int MPI_Type_lb(MPI_Datatype, MPI_Aint*) MPC_WEAK(MPI_Type_lb);
int MPI_Type_ub(MPI_Datatype, MPI_Aint*) MPC_WEAK(MPI_Type_ub);
int MPI_Type_hvector(int, int, MPI_Aint, MPI_Datatype, MPI_Datatype*) MPC_WEAK(MPI_Type_hvector);
int MPI_Type_hindexed(int, int*, MPI_Aint*, MPI_Datatype, MPI_Datatype*) MPC_WEAK(MPI_Type_hindexed);
int MPI_Type_struct(int, int*, MPI_Aint*, MPI_Datatype*, MPI_Datatype*) MPC_WEAK(MPI_Type_struct);
int MPI_Errhandler_create(MPI_Handler_function*, MPI_Errhandler*) MPC_WEAK(MPI_Errhandler_create);
int MPI_Errhandler_set(MPI_Comm, MPI_Errhandler) MPC_WEAK(MPI_Errhandler_set);
int MPI_Errhandler_get(MPI_Comm, MPI_Errhandler*) MPC_WEAK(MPI_Errhandler_get);

}  // extern "C"
