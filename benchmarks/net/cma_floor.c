/* The host floor of one copier between two processes: process 0 (pinned to core 0) reads SIZE
 * bytes of process 1's buffer (core 1) into its own with one process_vm_readv, CALLS times per
 * chunk, as the shared-memory transport's rendezvous does without a shared copy (network/shm.hpp).
 * No MPI, no library. Reported: the best chunk's mean per call (a chunk the kernel preempted
 * does not count, as hw_barrier.c) and the mean over all chunks, in 10^6 B/s.
 *
 *   cma_floor [SIZE [CHUNKS [CALLS]]]   (defaults 1048576, 20, 64)
 *
 * Build: cc -O2 cma_floor.c -o cma_floor (benchmarks/net/run.sh does not run it;
 * benchmarks/RESULTS.md gives the command it was measured with). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); sched_setaffinity(0, sizeof s, &s); }
int main(int argc, char** argv) {
    size_t size = argc > 1 ? strtoul(argv[1], 0, 0) : 1 << 20;
    int chunks = argc > 2 ? atoi(argv[2]) : 20, calls = argc > 3 ? atoi(argv[3]) : 64;
    char* src = aligned_alloc(4096, size); memset(src, 1, size);
    int p[2]; if (pipe(p)) return 1;
    pid_t pid = fork();
    if (pid == 0) { pin(1); char c; if (read(p[0], &c, 1) < 0) {} _exit(0); }
    pin(0);
    char* dst = aligned_alloc(4096, size); memset(dst, 0, size);
    double best = 1e9, sum = 0;
    for (int k = 0; k < chunks; ++k) {
        double t0 = now();
        for (int i = 0; i < calls; ++i) {
            struct iovec l = {dst, size}, r = {src, size};
            if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)size) { perror("readv"); return 1; }
        }
        double t = (now() - t0) / calls; sum += t; if (t < best) best = t;
    }
    if (write(p[1], "x", 1) < 0) {} waitpid(pid, 0, 0);
    printf("cma_floor %zu B: best %.0f MB/s, mean %.0f MB/s (%d x %d)\n", size, size / best / 1e6, size / (sum / chunks) / 1e6, chunks, calls);
    return 0;
}
