/* MPI_THREAD_MULTIPLE: every rank starts THREADS pthreads; thread t of each rank exchanges
 * messages (tag t) with thread t of its neighbours, concurrently with the other threads and with
 * the rank's main thread, which does its own ring exchange. Each thread also sets and reads the
 * error handler of MPI_COMM_WORLD while the others do (MPICH's threaded_sr: a data race under
 * TSan before the handler became atomic). Exit status 0 on success.
 * (No mutable globals: ranks share them until global privatization exists.) */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 50

typedef struct {
    int rank, size, t, errors;
} job_t;

static void *worker(void *p) {
    job_t *job = p;
    int rank = job->rank, size = job->size, t = job->t;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < ROUNDS; ++i) {
        int out = rank * 1000 + t * 100 + i, in = -1;
        MPI_Request r;
        MPI_Irecv(&in, 1, MPI_INT, left, t, MPI_COMM_WORLD, &r);
        MPI_Send(&out, 1, MPI_INT, right, t, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (in != left * 1000 + t * 100 + i) job->errors++;
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, i % 2 ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL);
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
        if (eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL) job->errors++;
    }
    int flag = 1;
    MPI_Is_thread_main(&flag);
    if (flag) job->errors++;
    return NULL;
}

int main(int argc, char **argv) {
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        printf("provided %d\n", provided);
        return 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t th[THREADS];
    job_t jobs[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        jobs[t] = (job_t){rank, size, t, 0};
        pthread_create(&th[t], NULL, worker, &jobs[t]);
    }
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 99, &got, 1, MPI_INT, (rank + size - 1) % size, 99,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    int bad = got != (rank + size - 1) % size;
    for (int t = 0; t < THREADS; ++t) bad += jobs[t].errors;
    int main_flag = 0;
    MPI_Is_thread_main(&main_flag);
    if (!main_flag || bad) {
        printf("rank %d: %d errors (main flag %d)\n", rank, bad, main_flag);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("thread_multiple: %d ranks x %d threads OK\n", size, THREADS);
    return 0;
}
