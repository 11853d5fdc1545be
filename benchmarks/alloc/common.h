/*
 * common.h: what the allocator workloads of benchmarks/alloc/ share (common.c): options,
 * a deterministic pseudo-random generator, block tags, the timing loop, the check of which
 * malloc is active, the peak RSS and the output lines.
 *
 * Every workload is a plain C11 program with pthreads, built with gcc -O2 -pthread together
 * with common.c (benchmarks/alloc/run.sh) and run once per allocator, the allocator preloaded
 * with LD_PRELOAD (glibc: none). A program keeps no mutable global or static variable: its
 * state lives in main and in the struct argument of its `void* worker(void*)`, and
 * bench_run_workers() is the one place that starts threads. The tasks variant is the same
 * sources built with -DBENCH_MPC_TASKS and linked with libmpc: bench_run_workers() then runs
 * each worker as an MPC task (MPC_Task_create, mpc.h), one VP per worker (see common.c).
 *
 * Options of every program:
 *   --threads N     worker threads (default 1)
 *   --impl NAME     the allocator's name in the output (default: the one detected)
 *   --expect NAME   refuse to run unless the active malloc is NAME (glibc, jemalloc, tcmalloc,
 *                   mimalloc, mpc): a preload that did not take effect fails (exit 1); without
 *                   it an unknown malloc (a sanitizer's) runs as "other"
 *   --variant TEXT  adds "variant": TEXT to the figures' extra keys
 *   --quick         3 runs of >= 10 ms (default 11 runs of >= 100 ms)
 *   --reps N, --min-ms MS
 *
 * Output (stdout), the format benchmarks/lib.sh reads, two lines per program:
 *   ROW <workload> <threads> <impl> <median> <unit> <min> <max> <extra json keys> <description>
 *   ROW <workload>_rss <threads> <impl> <MiB> MiB <MiB> <MiB> <extra json keys> <description>
 * Everything else goes to stderr. A block whose contents changed between its allocation and
 * its free, or a failed allocation, prints a message and exits with status 1 (and no ROW).
 */
#ifndef MPC_BENCH_ALLOC_COMMON_H
#define MPC_BENCH_ALLOC_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BENCH_MAX_REPS 64

struct bench_options {
    int quick;
    int threads;
    int reps;
    double min_ms;
    const char* impl;    /* name in the output */
    const char* expect;  /* required malloc, or NULL */
    const char* variant; /* "" when none */
};

/* Parses the common options; extra workload options are not accepted. Prints the usage and
 * returns -1 on a bad option. */
int bench_parse_args(int argc, char** argv, struct bench_options* o, const char* workload);

/* Detects the active malloc (logged on stderr) and checks it against o->expect; sets o->impl
 * to the detected name when --impl was not given. Returns 0 when it may run, -1 otherwise. */
int bench_check_malloc(struct bench_options* o, const char* workload);

/* One timed run of n units of work; stores the seconds it took in *seconds. Returns 0, or -1
 * when the workload found a broken block (it has printed why). */
typedef int (*bench_body)(void* ctx, long n, double* seconds);

struct bench_result {
    double vals[BENCH_MAX_REPS]; /* figures of the runs, sorted */
    int reps;
    long n; /* units of work per run */
};

/* Calibrates n (doubling or more, at least two runs, the first one a warm-up) until one run
 * lasts at least o->min_ms at the fastest speed seen, then makes o->reps runs of n units.
 * Each run's figure is ops_per_unit * n / seconds / 1e6. Returns 0, or -1 (body failed). */
int bench_measure(const struct bench_options* o, bench_body body, void* ctx, double ops_per_unit,
                  struct bench_result* r);

/* Prints the throughput ROW (median, min, max of r; the description is what, followed by
 * "(n <units> per run)") and the peak-RSS ROW of the process. */
void bench_report(const struct bench_options* o, const char* workload, const char* unit, const struct bench_result* r,
                  const char* what, const char* units);

/* Peak resident set size of the process so far (getrusage ru_maxrss), in MiB. */
double bench_peak_rss_mib(void);

/* Monotonic clock, in seconds. */
double bench_now(void);

/* Runs worker on args[0 .. n-1] (each arg_size bytes apart), one thread each (with
 * BENCH_MPC_TASKS: one MPC task each, worker i on VP i), and joins them all. Returns 0, or -1
 * when n is above the limit (1024); a thread that cannot be created ends the program (exit
 * status 1), since the started workers may be waiting for it. */
int bench_run_workers(int n, void* (*worker)(void*), void* args, size_t arg_size);

/* Aborts the program with a message (exit status 1): a failed allocation outside the workers. */
void bench_fatal(const char* workload, const char* what);

/* ---- deterministic pseudo-random numbers (xorshift64*, seeded through splitmix64) ------- */
struct bench_rng {
    uint64_t s;
};

static inline uint64_t bench_mix64(uint64_t x) { /* splitmix64's finaliser */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline void bench_rng_seed(struct bench_rng* r, uint64_t seed) {
    r->s = bench_mix64(seed + 0x9e3779b97f4a7c15ULL);
    if (r->s == 0) {
        r->s = 1;
    }
}

static inline uint64_t bench_rng_next(struct bench_rng* r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n) for 0 < n < 2^32 (multiply-shift of the high 32 bits; bias below n / 2^32). */
static inline uint32_t bench_rng_below(struct bench_rng* r, uint32_t n) {
    return (uint32_t)(((bench_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* ---- block tags: 8 bytes derived from a block's address, its size and an owner's salt ---- */
/* (the salt, such as the slot or the index the block is kept at, tells apart two owners that
 * a broken allocator gave the same block) */
static inline uint64_t bench_tag(const void* p, size_t size, uint64_t salt) {
    return bench_mix64((uint64_t)(uintptr_t)p ^ ((uint64_t)size << 48) ^ bench_mix64(salt + 1));
}

/* Writes the tag at the start and at the end of a block of size >= 16. */
static inline void bench_tag_write(void* p, size_t size, uint64_t salt) {
    const uint64_t t = bench_tag(p, size, salt);
    memcpy(p, &t, sizeof t);
    memcpy((char*)p + size - sizeof t, &t, sizeof t);
}

/* 1 when both tags of a block written by bench_tag_write are intact. */
static inline int bench_tag_ok(const void* p, size_t size, uint64_t salt) {
    const uint64_t t = bench_tag(p, size, salt);
    uint64_t a, b;
    memcpy(&a, p, sizeof a);
    memcpy(&b, (const char*)p + size - sizeof b, sizeof b);
    return a == t && b == t;
}

#endif
