/**
 * \file mpc/mpi_groups.h
 * Part of <mpi.h>: groups, communicator creation from groups, topologies, attributes, info
 * objects and user error handlers. Include <mpi.h>, not this file.
 */
#ifndef MPC_MPI_GROUPS_H_INCLUDED
#define MPC_MPI_GROUPS_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* MPC_MPI_GROUPS_H_INCLUDED */
