/* A header the Fortran generator must refuse: MPI_Lonely has no PMPI_ twin. */
int MPI_Paired(int x);
int PMPI_Paired(int x);
int MPI_Lonely(int x);
