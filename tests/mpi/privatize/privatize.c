/* privatize.c: each rank of a privatized program (mpc_cc's default) has its own copy of every
 * global, static and thread-local variable. Every check below fails when the ranks share them:
 * the ranks update their variables in lock step (a barrier between steps lets the others run),
 * so shared variables would hold the sum of every rank's updates.
 *
 * Checks: a global counter each rank increments to its rank number (at most 64); a file-scope static; a
 * static local in a function called from every rank; a global of a static library; a
 * _Thread_local variable (and a pthread of the rank sees its initial value, not the rank's);
 * errno kept across a blocking MPI call; the variables' addresses differ between ranks and,
 * with MPC's allocator, lie in the rank's own address slice. Exit status 1 on any error. */
#include <errno.h>
#include <mpc.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int counter = 0;
static int file_static = 100;
_Thread_local int tls_var = 7;
int initialized_array[4] = {1, 2, 3, 4};

extern int lib_global;
int lib_bump(void);
int* lib_address(void);

static int next_id(void) {
    static int calls = 0;
    return ++calls;
}

static int errors = 0;
static int my_rank = -1;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            char msg_[256];                                                  \
            snprintf(msg_, sizeof msg_, __VA_ARGS__);                        \
            fprintf(stderr, "privatize: rank %d: FAIL: %s\n", my_rank, msg_); \
            ++errors;                                                        \
        }                                                                    \
    } while (0)

static void* thread_body(void* arg) {
    int* seen = (int*)arg;
    *seen = tls_var; /* a new thread: the initial value */
    tls_var = -1;    /* its own copy: the rank's stays */
    return NULL;
}

int main(int argc, char** argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_rank = rank;

    CHECK(counter == 0 && file_static == 100 && lib_global == 0 && tls_var == 7,
          "initial values: counter %d, file_static %d, lib_global %d, tls_var %d", counter, file_static,
          lib_global, tls_var);
    CHECK(initialized_array[3] == 4, "initialized data: %d", initialized_array[3]);
    tls_var = rank;
    int id = 0;
    /* Lock step over at most 64 steps (1000 ranks x 1000 barriers would be slow under
     * sanitizers); rank r updates at steps < r, so it counts min(r, steps). */
    const int steps = size < 64 ? size : 64;
    const int want = rank < steps ? rank : steps;
    for (int step = 0; step < steps; ++step) {
        if (step < rank) {
            ++counter;
            file_static += 2;
            lib_bump();
            id = next_id();
            initialized_array[0] += 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* errno is the rank's own: the ranks that run on this VP meanwhile set theirs */
        errno = 1000 + rank;
        MPC_Yield();
        CHECK(errno == 1000 + rank, "errno %d after MPC_Yield, expected %d", errno, 1000 + rank);
    }
    CHECK(counter == want, "counter %d, expected %d", counter, want);
    CHECK(file_static == 100 + 2 * want, "file_static %d, expected %d", file_static, 100 + 2 * want);
    CHECK(lib_global == want, "lib_global %d, expected %d", lib_global, want);
    CHECK(id == want, "static local counted %d calls, expected %d", id, want);
    CHECK(initialized_array[0] == 1 + want, "initialized_array[0] %d, expected %d", initialized_array[0], 1 + want);
    CHECK(tls_var == rank, "tls_var %d, expected %d", tls_var, rank);

    /* A thread of the rank has its own thread-local copy. */
    pthread_t th;
    int seen = -100;
    if (pthread_create(&th, NULL, thread_body, &seen) == 0) {
        pthread_join(th, NULL);
        CHECK(seen == 7, "a new thread saw tls_var %d, expected the initial 7", seen);
        CHECK(tls_var == rank, "tls_var %d after the thread, expected %d", tls_var, rank);
    } else {
        CHECK(0, "pthread_create failed");
    }

    /* Every rank's variables are at different addresses, in its own slice: job-wide with the
     * slices (the same layout in every process), else among the ranks of one process (ranks of
     * two processes may use one address each in their own address space: sanitizer builds). */
    uintptr_t mine[4] = {(uintptr_t)&counter, (uintptr_t)lib_address(), (uintptr_t)&tls_var, (uintptr_t)getpid()};
    uintptr_t* all = malloc(sizeof(mine) * (size_t)size);
    MPI_Allgather(mine, 4 * (int)sizeof(uintptr_t), MPI_BYTE, all, 4 * (int)sizeof(uintptr_t), MPI_BYTE,
                  MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r) {
        if (r != rank && (MPC_Allocator_active() || all[4 * r + 3] == mine[3])) {
            for (int k = 0; k < 3; ++k) {
                CHECK(all[4 * r + k] != mine[k], "variable %d at the same address as in rank %d", k, r);
            }
        }
    }
    free(all);
    if (MPC_Allocator_active()) {
        CHECK(MPC_Allocator_slice_of(&counter) == rank, "counter lies in the slice of %d",
              MPC_Allocator_slice_of(&counter));
        CHECK(MPC_Allocator_slice_of(lib_address()) == rank, "lib_global lies in the slice of %d",
              MPC_Allocator_slice_of(lib_address()));
        CHECK(MPC_Allocator_slice_of(&tls_var) == rank, "tls_var lies in the slice of %d",
              MPC_Allocator_slice_of(&tls_var));
    }

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf(total == 0 ? "privatize: %d ranks ok\n" : "privatize: %d ranks, errors\n", size);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
