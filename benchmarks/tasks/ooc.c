/* Out-of-core streaming: NH vectors of MIB MiB each, registered without memory (the runtime
 * makes it), more of them than the memory limit (STARPU_LIMIT_CPU_MEM) holds, with a swap disk
 * (STARPU_DISK_SWAP): each pass submits one read-write task per vector in turn, so every task
 * finds its vector on disk, and the runtime writes others out to make room. A task adds 1.0 to
 * every element REPS times (its compute time). Plain StarPU 1.3 code: the same source is built
 * against MPC's starpu-1.3.pc and Debian's StarPU (benchmarks/tasks/ooc.sh).
 *
 *   ooc LABEL NH MIB PASSES REPS
 *
 * OOC_DISK_DIR=DIR [OOC_DISK_DELAY_US=D]: instead of STARPU_DISK_SWAP, a disk registered by the
 * program (starpu_disk_register, 4 GiB in DIR): the unistd backend with every read and write
 * made D microseconds later (a slower device: a remote file system, a loaded disk), its
 * asynchronous methods removed, so that both runtimes make the same synchronous calls.
 *
 * Prints "ROW ooc LABEL NH MIB PASSES REPS seconds MiB/s" (the passes after the first touch; the
 * MiB/s are the vectors' bytes over that time), after checking every element. */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int reps;

static void init_cpu(void* buffers[], void* arg) {
    double* v = (double*)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    intptr_t h = (intptr_t)arg;
    for (unsigned i = 0; i < n; i++) v[i] = (double)(i % 1000 + h);
}

static void add_cpu(void* buffers[], void* arg) {
    (void)arg;
    double* v = (double*)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (int r = 0; r < reps; r++)
        for (unsigned i = 0; i < n; i++) v[i] += 1.0;
}

static struct starpu_codelet init_cl = {.cpu_funcs = {init_cpu}, .nbuffers = 1, .modes = {STARPU_W}, .name = "init"};
static struct starpu_codelet add_cl = {.cpu_funcs = {add_cpu}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "add"};

static struct starpu_disk_ops slow_ops;
static int delay_us;

static int slow_read(void* base, void* obj, void* buf, off_t offset, size_t size) {
    usleep((useconds_t)delay_us);
    return starpu_disk_unistd_ops.read(base, obj, buf, offset, size);
}
static int slow_write(void* base, void* obj, const void* buf, off_t offset, size_t size) {
    usleep((useconds_t)delay_us);
    return starpu_disk_unistd_ops.write(base, obj, buf, offset, size);
}
static int slow_full_read(void* base, void* obj, void** ptr, size_t* size, unsigned node) {
    usleep((useconds_t)delay_us);
    return starpu_disk_unistd_ops.full_read(base, obj, ptr, size, node);
}
static int slow_full_write(void* base, void* obj, void* ptr, size_t size) {
    usleep((useconds_t)delay_us);
    return starpu_disk_unistd_ops.full_write(base, obj, ptr, size);
}

/* The program's own disk (OOC_DISK_DIR), or none (STARPU_DISK_SWAP, if set, is the runtime's). */
static int register_disk(void) {
    const char* dir = getenv("OOC_DISK_DIR");
    if (dir == NULL) return 0;
    const char* d = getenv("OOC_DISK_DELAY_US");
    delay_us = d != NULL ? atoi(d) : 0;
    slow_ops = starpu_disk_unistd_ops;
    slow_ops.read = slow_read;
    slow_ops.write = slow_write;
    slow_ops.full_read = slow_full_read;
    slow_ops.full_write = slow_full_write;
    slow_ops.async_read = NULL;
    slow_ops.async_write = NULL;
    slow_ops.async_full_read = NULL;
    slow_ops.async_full_write = NULL;
    slow_ops.copy = NULL;
    slow_ops.wait_request = NULL;
    slow_ops.test_request = NULL;
    slow_ops.free_request = NULL;
    if (starpu_disk_register(&slow_ops, (void*)dir, (starpu_ssize_t)4 << 30) < 0) {
        fprintf(stderr, "ooc: starpu_disk_register(%s) failed\n", dir);
        return -1;
    }
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s LABEL NH MIB PASSES REPS\n", argv[0]);
        return 2;
    }
    const char* label = argv[1];
    int nh = atoi(argv[2]), mib = atoi(argv[3]), passes = atoi(argv[4]);
    reps = atoi(argv[5]);
    if (nh < 1 || mib < 1 || passes < 1 || reps < 0) {
        fprintf(stderr, "ooc: NH, MIB and PASSES must be positive, REPS not negative\n");
        return 2;
    }
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "ooc: starpu_init failed\n");
        return 1;
    }
    if (register_disk() != 0) return 1;
    const unsigned n = (unsigned)((size_t)mib * 1024 * 1024 / sizeof(double));
    starpu_data_handle_t* h = malloc(sizeof(*h) * (size_t)nh);
    for (int i = 0; i < nh; i++) {
        starpu_vector_data_register(&h[i], -1, 0, n, sizeof(double));
        struct starpu_task* t = starpu_task_create();
        t->cl = &init_cl;
        t->handles[0] = h[i];
        t->cl_arg = (void*)(intptr_t)i;
        if (starpu_task_submit(t) != 0) {
            fprintf(stderr, "ooc: submitting init %d failed\n", i);
            return 1;
        }
    }
    starpu_task_wait_for_all();
    double t0 = now();
    for (int p = 0; p < passes; p++)
        for (int i = 0; i < nh; i++)
            if (starpu_task_insert(&add_cl, STARPU_RW, h[i], 0) != 0) {
                fprintf(stderr, "ooc: submitting pass %d, vector %d failed\n", p, i);
                return 1;
            }
    starpu_task_wait_for_all();
    double t = now() - t0;
    long bad = 0;
    for (int i = 0; i < nh; i++) {
        starpu_data_acquire(h[i], STARPU_R);
        const double* v = (const double*)starpu_data_get_local_ptr(h[i]);
        for (unsigned k = 0; k < n; k++)
            if (v[k] != (double)(k % 1000 + i) + (double)passes * reps) bad++;
        starpu_data_release(h[i]);
        starpu_data_unregister(h[i]);
    }
    free(h);
    starpu_shutdown();
    if (bad != 0) {
        fprintf(stderr, "ooc: %ld wrong elements\n", bad);
        return 1;
    }
    printf("ROW\tooc\t%s\t%d\t%d\t%d\t%d\t%.4f\t%.1f\n", label, nh, mib, passes, reps, t,
           (double)nh * mib * passes / t);
    return 0;
}
