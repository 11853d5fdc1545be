/* The transport's event watcher stays out of the way of an awake VP: run as `mpc_run -n 2 -p 2`
 * with the processes on two nodes, one CPU each (tests/mpi/nodes: nodes.watcher_wakeups).
 * CYCLES times: rank 1 waits 0.1 s for rank 0's message: its VP falls asleep and the watcher
 * of its process sleeps on the transports' event fds. The message wakes the VP; then the ranks
 * ping-pong ROUND_TRIPS 0-byte messages. UCX's event fd wakes a thread polling it at every
 * arrival, even when the VP's own poll takes the data first: a watcher left there while the VP
 * runs woke once every few messages (a context switch on the VP's core each time). Rank 1
 * counts, over the ping-pong, the voluntary context switches of its process's watcher
 * ("mpc-watcher") and of its VP (the thread running it: its sleeps); the watcher may wake
 * twice per VP sleep (the hand-over and its end) and for its timed looks, which start again
 * at 1 ms after each sleep and back off to one per 16 ms (MPC_NET_PROGRESS_US), plus a margin:
 * 8 per VP sleep, one per 16 ms, 50. Exit status 0 when it stayed within that, 1 otherwise. */
#define _GNU_SOURCE
#include <mpi.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { cycles = 5, round_trips = 4000 };

/* voluntary_ctxt_switches of thread tid of this process; -1 if unknown. */
static long voluntary(long tid) {
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE* f = fopen(path, "r");
    long v = -1;
    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1) {
            break;
        }
    }
    fclose(f);
    return v;
}

/* The thread id of this process's thread named NAME; -1 if none. */
static long thread_named(const char* name) {
    DIR* d = opendir("/proc/self/task");
    long found = -1;
    if (d == NULL) {
        return -1;
    }
    for (struct dirent* e; found < 0 && (e = readdir(d)) != NULL;) {
        char path[300], comm[32] = "";
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE* f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, name, strlen(name)) == 0) {
                found = atol(e->d_name);
            }
            fclose(f);
        }
    }
    closedir(d);
    return found;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) {
            fprintf(stderr, "watcher_wakeups: needs 2 ranks in 2 processes (mpc_run -n 2 -p 2)\n");
        }
        MPI_Finalize();
        return 2;
    }
    const long vp = syscall(SYS_gettid);  /* the VP running this rank (one per process here) */
    const long watcher = thread_named("mpc-watcher");
    long w = 0, v = 0;
    double ms = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < cycles; ++c) {
        int token = 0;
        if (rank == 0) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        const long w0 = watcher > 0 ? voluntary(watcher) : -1, v0 = voluntary(vp);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < round_trips; ++i) {
            if (rank == 0) {
                MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        ms += (MPI_Wtime() - t0) * 1e3;
        const long w1 = watcher > 0 ? voluntary(watcher) : -1, v1 = voluntary(vp);
        if (w0 < 0 || w1 < 0 || v0 < 0 || v1 < 0 || syscall(SYS_gettid) != vp) {
            w = v = -1;
        } else if (w >= 0) {
            w += w1 - w0;
            v += v1 - v0;
        }
    }
    int ok = 1;
    if (rank == 1) {
        if (watcher < 0 || w < 0) {
            printf("FAIL: no watcher thread or no switch counts (watcher %ld, VP %ld)\n", watcher, vp);
            ok = 0;
        } else {
            const long allowed = 8 * v + (long)(ms / 16) + 50;
            printf("watcher_wakeups: %d x %d round trips in %.0f ms; watcher woke %ld times, the VP slept %ld "
                   "times (allowed: %ld)\n", cycles, round_trips, ms, w, v, allowed);
            ok = w <= allowed;
            if (!ok) {
                printf("FAIL: the watcher woke %ld times while the VP polled\n", w);
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
