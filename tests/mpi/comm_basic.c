/* MPI_Comm_dup, MPI_Comm_split (key order), MPI_Bcast and MPI_Barrier on derived communicators,
 * traffic isolation between communicators, compare, names, free. Exit status 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int r2, s2; MPI_Comm_rank(dup, &r2); MPI_Comm_size(dup, &s2);
  if (r2 != rank || s2 != size) { printf("dup bad\n"); return 1; }
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int hr, hs; MPI_Comm_rank(half, &hr); MPI_Comm_size(half, &hs);
  int exp_size = (size + 1 - rank % 2) / 2;
  if (hs != exp_size) { printf("rank %d split size %d exp %d\n", rank, hs, exp_size); return 1; }
  /* key = -rank: reversed order */
  int exp_rank = (size - 1 - rank) / 2; 
  if (hr != exp_rank) { printf("rank %d split rank %d exp %d\n", rank, hr, exp_rank); return 1; }
  int v = rank; MPI_Bcast(&v, 1, MPI_INT, 0, half);
  if (v != (rank % 2 == 0 ? ((size-1)%2==0 ? size-1 : size-2) : ((size-1)%2==1 ? size-1 : size-2))) { printf("rank %d bcast %d\n", rank, v); return 1; }
  /* p2p on split comm doesn't mix with world */
  int x = 100 + rank, y = -1;
  MPI_Sendrecv(&x, 1, MPI_INT, (hr+1)%hs, 5, &y, 1, MPI_INT, (hr+hs-1)%hs, 5, half, MPI_STATUS_IGNORE);
  for (int i = 0; i < 100; ++i) MPI_Barrier(dup);
  int cmp; MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp); if (cmp != MPI_CONGRUENT) { printf("cmp %d\n", cmp); return 1; }
  char name[MPI_MAX_OBJECT_NAME]; int len; MPI_Comm_get_name(MPI_COMM_WORLD, name, &len); if (strcmp(name, "MPI_COMM_WORLD")) return 1;
  MPI_Comm_free(&half); MPI_Comm_free(&dup);
  if (half != MPI_COMM_NULL) return 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (MPI_Comm_free(&dup) != MPI_ERR_COMM) { printf("free null\n"); return 1; }
  MPI_Finalize();
  if (rank == 0) printf("OK %d\n", size);
  return 0;
}
