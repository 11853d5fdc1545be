/* Progress while ranks yield: run as `mpc_run -n 3 -p 2 -c 1`, ranks 0 and 1 share the one VP of
 * process 0 and rank 2 is in process 1. Rank 0 yields in a loop (MPC_Yield, no MPI call) until
 * rank 1 sets a flag; rank 1 meanwhile ping-pongs with rank 2. Rank 1's messages come from the
 * other process, so they reach it only if the VP polls the network while rank 0 yields: without
 * that, rank 1 stays blocked until rank 0 gives up (after 30 s) and the test fails.
 * Exit status 0 when rank 1 finished first; 1 otherwise. */
#include <mpi.h>
#include <mpc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { rounds = 200 };
static const double give_up_s = 30.0;

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0) {
            fprintf(stderr, "progress_yield: needs 3 ranks (mpc_run -n 3 -p 2 -c 1)\n");
        }
        MPI_Finalize();
        return 2;
    }
    int ok = 1;
    if (rank == 1) {  /* ranks 0 and 1 are threads of one process: a flag both see */
        atomic_int* flag = malloc(sizeof *flag);
        atomic_init(flag, 0);
        uintptr_t addr = (uintptr_t)flag;
        MPI_Send(&addr, sizeof addr, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        int token = 0;
        for (int i = 0; i < rounds; ++i) {
            MPI_Send(&token, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        ok = token == rounds;
        atomic_store(flag, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        free(flag);
    } else if (rank == 0) {
        uintptr_t addr = 0;
        MPI_Recv(&addr, sizeof addr, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        atomic_int* flag = (atomic_int*)addr;
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        long yields = 0;
        while (!atomic_load(flag) && MPI_Wtime() - start < give_up_s) {
            MPC_Yield();
            ++yields;
        }
        ok = atomic_load(flag);
        if (!ok) {
            fprintf(stderr, "progress_yield: rank 1 did not finish its %d round trips with rank 2 while rank 0 "
                            "yielded (%ld yields in %.0f s): the VP does not poll the network\n",
                    rounds, yields, give_up_s);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        int token = 0;
        for (int i = 0; i < rounds; ++i) {
            MPI_Recv(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++token;
            MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0 && all) {
        printf("progress_yield: OK\n");
    }
    MPI_Finalize();
    return all ? 0 : 1;
}
