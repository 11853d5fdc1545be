/* A thread started by another library's constructor before libmpc's initialisers ran (see
 * ctor_threads_lib.c): it must work (it crashed when the interposers' next definitions were
 * only set by libmpc's initialiser). A plain program (not under mpc_run): libmpc is loaded,
 * its interposers active, MPI not started. */
#include <mpi.h>
#include <stdio.h>

extern int ctor_threads_result;

int main(void)
{
	int flag = -1;
	MPI_Initialized(&flag); /* a call into libmpc, so that it stays linked */
	if (ctor_threads_result != 0 || flag != 0) {
		printf("ctor_threads: FAILED: the constructor's thread gave %d (MPI_Initialized: %d)\n", ctor_threads_result, flag);
		return 1;
	}
	printf("ctor_threads: OK\n");
	return 0;
}
