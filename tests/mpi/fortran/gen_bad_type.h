/* A header the Fortran generator must refuse: a parameter type it cannot map. */
int MPI_Frobnicate(struct mystery *m, int *ierr);
int PMPI_Frobnicate(struct mystery *m, int *ierr);
