/* C side of use_mpi_f08.f90: C code called from Fortran recognises mpi_f08's
 * MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE through MPI_F08_STATUS_IGNORE /
 * MPI_F08_STATUSES_IGNORE (the calling rank's copies), and converts a real status. */
#include <mpi.h>

/* 1: s is MPI_F08_STATUS_IGNORE, 2: MPI_F08_STATUSES_IGNORE, 0: a status, whose tag is then
 * checked through MPI_Status_f082c (-1 when the conversion or the tag is wrong). */
int f08_status_kind(const MPI_F08_status *s, int tag) {
    if (s == MPI_F08_STATUS_IGNORE) {
        return 1;
    }
    if (s == MPI_F08_STATUSES_IGNORE) {
        return 2;
    }
    MPI_Status c;
    if (MPI_Status_f082c(s, &c) != MPI_SUCCESS || c.MPI_TAG != tag) {
        return -1;
    }
    return 0;
}
