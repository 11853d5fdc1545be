/* fault.c DEATH WAIT VICTIM DIR: one rank (VICTIM, world rank) ends its process while the other
 * ranks wait for it in an MPI call; run by fault.sh under mpc_run -p P, which checks how the
 * job ends.
 *
 * Every rank first writes its process id to DIR/pid.<rank> and enters a barrier; before it waits
 * (or dies) it lists the shared memory its process maps in DIR/shm.<rank>. Then each
 * other rank posts what it will wait on (WAIT=waitall: receives from the victim and from any
 * source), tells the victim it is ready (a message with tag 1) and waits:
 *   recv       MPI_Recv from the victim
 *   allreduce  MPI_Allreduce on MPI_COMM_WORLD
 *   barrier    MPI_Barrier on MPI_COMM_WORLD
 *   waitall    MPI_Waitall on its receives
 *   loop       a loop of MPI_Allreduce and a ring exchange, which the victim joins too (the
 *              job is busy when the victim dies: after 50 rounds, or whenever fault.sh kills it)
 *   bigloop    the same with messages of 1 MiB (rendezvous transfers under way)
 *   finalize   MPI_Finalize, then returns 0 from main (its process waits for the others' end)
 *   rndv       (ranks of other processes than the victim's) MPI_Probe of 16 MiB that the
 *              victim sends with MPI_Isend (rendezvous between processes), a message saying
 *              so to the victim, which dies once it has them all, then, once the victim's
 *              process is dead, MPI_Recv of the data: the transfer from a dead process fails,
 *              and the rank must leave the report to the launcher (the victim's own process:
 *              MPI_Recv of a message never sent)
 * The victim receives every ready message, then (loop: after its rounds)
 *   kill       raise(SIGKILL)
 *   segv       writes through a null pointer
 *   exit0      _exit(0) without MPI_Finalize
 *   exit3      exit(3) without MPI_Finalize (atexit handlers run)
 *   return0    returns 0 from main without MPI_Finalize
 *   abort      MPI_Abort(MPI_COMM_WORLD, 5)
 *   external   writes DIR/ready and waits (loop: keeps looping) until fault.sh kills its process
 * A rank whose wait returns prints a FAIL line (finalize excepted): none may, the job must end
 * first. */
#include <mpi.h>
#include <mpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { tag_ready = 1, tag_never = 2, tag_ring = 3, tag_rndv = 4, tag_probed = 5 };
enum { rndv_bytes = 16 << 20 };

int* volatile null_int;  /* null, and the compiler cannot tell (segv) */

static void write_file(const char* dir, const char* name, long value) {
    char path[4096], tmp[4096 + 32];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE* f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%ld\n", value) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "fault: FAIL: cannot write %s\n", path);
        exit(100);
    }
}

/* Writes DIR/shm.<rank>: the shared memory this process has mapped, one object a line:
 * "posix /dev/shm/NAME" (a file under /dev/shm, unlinked or not), "sysv SHMID" (the inode
 * of a SysV segment's mapping is its id) or "memfd NAME" (MPC's shared-memory transport: no
 * name in any file system, gone with its last mapping). fault.sh checks that none is left. */
static void write_shm_list(const char* dir, int rank) {
    char path[4096], tmp[4096 + 32], line[4096 + 256], file[4096];
    snprintf(path, sizeof path, "%s/shm.%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* maps = fopen("/proc/self/maps", "r");
    FILE* f = fopen(tmp, "w");
    if (maps == NULL || f == NULL) {
        fprintf(stderr, "fault: FAIL: cannot read /proc/self/maps or write %s\n", tmp);
        exit(100);
    }
    while (fgets(line, sizeof line, maps) != NULL) {
        unsigned long inode = 0;
        file[0] = '\0';
        if (sscanf(line, "%*s %*s %*s %*s %lu %4095[^\n]", &inode, file) < 2) {
            continue;
        }
        char* deleted = strstr(file, " (deleted)");
        if (deleted != NULL) {
            *deleted = '\0';
        }
        if (strncmp(file, "/dev/shm/", 9) == 0) {
            fprintf(f, "posix %s\n", file);
        } else if (strncmp(file, "/SYSV", 5) == 0) {
            fprintf(f, "sysv %lu\n", inode);
        } else if (strncmp(file, "/memfd:", 7) == 0) {
            fprintf(f, "memfd %s\n", file + 7);
        }
    }
    fclose(maps);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "fault: FAIL: cannot write %s\n", path);
        exit(100);
    }
}

/* One round of the busy loop: an all-reduce and an exchange of `count` ints with both ring
 * neighbours (buf: 3 x count ints). */
static void busy_round(int rank, int size, int* buf, int count) {
    int *in = buf, *left = buf + count, *right = buf + 2 * count, sum = 0;
    for (int i = 0; i < count; ++i) {
        in[i] = rank + i;
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(in, count, MPI_INT, (rank + 1) % size, tag_ring, left, count, MPI_INT, (rank + size - 1) % size,
                 tag_ring, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(in, count, MPI_INT, (rank + size - 1) % size, tag_ring, right, count, MPI_INT, (rank + 1) % size,
                 tag_ring, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const int l = (rank + size - 1) % size, r = (rank + 1) % size, last = count - 1;
    if (sum != size * (size - 1) / 2 || left[0] != l || left[last] != l + last || right[0] != r ||
        right[last] != r + last) {
        fprintf(stderr, "fault: FAIL: rank %d: wrong data in the busy loop\n", rank);
        exit(100);
    }
}

static int read_pid(const char* dir, int rank) {
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
    FILE* f = fopen(path, "r");
    int pid = -1;
    if (f == NULL || fscanf(f, "%d", &pid) != 1) {
        fprintf(stderr, "fault: FAIL: cannot read %s\n", path);
        exit(100);
    }
    fclose(f);
    return pid;
}

/* Whether process pid has ended (a zombie, or reaped already). */
static int process_dead(int pid) {
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
        return 1;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char* end = strrchr(text, ')');  /* "pid (comm) state ..." */
    return end == NULL || end[1] == '\0' || end[2] == 'Z' || end[2] == 'X';
}

/* rndv, the victim: 16 MiB to every rank of another process (pids[r] != its own), then waits
 * until each has probed its message (the rendezvous request is there, the data still here). */
static void send_big_then_wait(int rank, int size, const int* pids) {
    char* big = calloc(1, rndv_bytes);
    MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)size);
    if (big == NULL || sends == NULL) {
        fprintf(stderr, "fault: FAIL: no memory\n");
        exit(100);
    }
    int remote = 0, dummy = 0;
    for (int r = 0; r < size; ++r) {
        if (r != rank && pids[r] != (int)getpid()) {
            MPI_Isend(big, rndv_bytes, MPI_BYTE, r, tag_rndv, MPI_COMM_WORLD, &sends[remote++]);
        }
    }
    for (int i = 0; i < remote; ++i) {
        MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, tag_probed, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* The "segv" death is a real invalid store: UBSan builds must not turn it into their own
 * report and exit status (the test checks the fault handler's). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((no_sanitize("undefined")))
#endif
static int die(const char* death, int rank, const char* dir) {
    if (strcmp(death, "kill") == 0) {
        raise(SIGKILL);
    } else if (strcmp(death, "segv") == 0) {
        *null_int = 1;
    } else if (strcmp(death, "exit0") == 0) {
        _exit(0);
    } else if (strcmp(death, "exit3") == 0) {
        exit(3);
    } else if (strcmp(death, "return0") == 0) {
        return 0;
    } else if (strcmp(death, "abort") == 0) {
        MPI_Abort(MPI_COMM_WORLD, 5);
    } else if (strcmp(death, "external") == 0) {
        write_file(dir, "ready", rank);
        return -1;  /* the caller waits */
    }
    fprintf(stderr, "fault: FAIL: rank %d is still alive after '%s'\n", rank, death);
    exit(100);
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: fault DEATH WAIT VICTIM DIR\n");
        return 2;
    }
    const char *death = argv[1], *wait = argv[2], *dir = argv[4];
    const int victim = atoi(argv[3]);
    /* loop: messages of one int; bigloop: of 1 MiB (rendezvous between processes). */
    const int loop = strcmp(wait, "loop") == 0 || strcmp(wait, "bigloop") == 0;
    const int count = strcmp(wait, "bigloop") == 0 ? 1 << 18 : 1;
    int* buf = malloc(3 * sizeof(int) * (size_t)count);
    if (buf == NULL) {
        fprintf(stderr, "fault: FAIL: no memory\n");
        return 100;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[32];
    snprintf(name, sizeof name, "pid.%d", rank);
    write_file(dir, name, (long)getpid());
    MPI_Barrier(MPI_COMM_WORLD);

    int x = 0, y = 0, dummy = 0;
    int* ready_pids = calloc((size_t)size, sizeof(int));  /* the victim's: the pid of each rank */
    if (ready_pids == NULL) {
        fprintf(stderr, "fault: FAIL: no memory\n");
        return 100;
    }
    if (rank == victim) {
        for (int i = 1; i < size; ++i) {
            MPI_Status st;
            MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, tag_ready, MPI_COMM_WORLD, &st);
            ready_pids[st.MPI_SOURCE] = dummy;
        }
        for (int i = 0; loop && i < 50; ++i) {
            busy_round(rank, size, buf, count);
        }
        write_shm_list(dir, rank);
        if (strcmp(wait, "rndv") == 0) {
            send_big_then_wait(rank, size, ready_pids);
        }
        if (die(death, rank, dir) == 0) {
            return 0;  /* return0: main returns without MPI_Finalize */
        }
        for (;;) {  /* external: until fault.sh kills this process */
            if (loop) {
                busy_round(rank, size, buf, count);
            } else {
                MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, tag_never, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
    MPI_Request reqs[2];
    if (strcmp(wait, "waitall") == 0) {
        MPI_Irecv(&x, 1, MPI_INT, victim, tag_never, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, tag_never, MPI_COMM_WORLD, &reqs[1]);
    }
    const int me = (int)getpid();
    MPI_Send(&me, 1, MPI_INT, victim, tag_ready, MPI_COMM_WORLD);
    write_shm_list(dir, rank);
    if (strcmp(wait, "recv") == 0) {
        MPI_Recv(&x, 1, MPI_INT, victim, tag_never, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(wait, "allreduce") == 0) {
        MPI_Allreduce(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(wait, "barrier") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(wait, "waitall") == 0) {
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    } else if (loop) {
        for (;;) {
            busy_round(rank, size, buf, count);
        }
    } else if (strcmp(wait, "rndv") == 0) {
        if (read_pid(dir, victim) == me) {
            MPI_Recv(&x, 1, MPI_INT, victim, tag_never, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            char* big = malloc(rndv_bytes);
            if (big == NULL) {
                fprintf(stderr, "fault: FAIL: no memory\n");
                return 100;
            }
            MPI_Probe(victim, tag_rndv, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&rank, 1, MPI_INT, victim, tag_probed, MPI_COMM_WORLD);
            const int victim_pid = read_pid(dir, victim);
            while (!process_dead(victim_pid)) {  /* else the data may come before it dies */
                int flag = 0;  /* progress (the message to the victim), and the other ranks here */
                MPI_Iprobe(MPI_ANY_SOURCE, tag_never, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                MPC_Yield();
            }
            MPI_Recv(big, rndv_bytes, MPI_BYTE, victim, tag_rndv, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (strcmp(wait, "finalize") == 0) {
        MPI_Finalize();  /* the process then waits for every other process's end */
        return 0;
    } else {
        fprintf(stderr, "fault: unknown wait '%s'\n", wait);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fprintf(stderr, "fault: FAIL: rank %d returned from its wait (%s) while rank %d was dead\n", rank, wait, victim);
    MPI_Finalize();
    return 100;
}
