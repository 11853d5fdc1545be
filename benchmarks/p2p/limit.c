/*
 * limit.c: physical limits of the p2p figures, no MPI; compiled with the plain C compiler
 * (benchmarks/p2p/run.sh). Output: ROW lines as in p2p.c, impl "limit".
 *
 *   limit [--quick] [--handoff] [--reps N] [--min-ms MS] [--sizes BYTES,...]
 *
 * --handoff: the latency limit only (run.sh uses it to see whether the machine changed state
 * during a run).
 *
 * bandwidth: single-thread memcpy bandwidth (glibc memcpy, one thread pinned to the first CPU
 * it may use) at the sizes of p2p.c, two variants (extra key "copy"):
 *   warm  the same source and destination buffers every time (as p2p.c reuses its buffers):
 *         after the first copy both sit in the caches as far as they fit (2 x 4 MiB fits the
 *         L3 of most machines, not L2);
 *   cold  every copy takes the next source and destination block of two pools of
 *         max(64 MiB, 4 x last-level cache) each (at most 256 MiB), one page-aligned block
 *         after the other, so each copy reads and writes memory that was evicted since its
 *         last use (DRAM bandwidth for large sizes; a cache and TLB miss per copy for small
 *         ones).
 *   Bandwidth is size / time per copy in MB/s (10^6 bytes/s): bytes copied, not bytes moved
 *   (a copy reads and writes each byte), the same accounting as the MPI bandwidth.
 * latency (size 0): two threads pinned to two different cores hand one atomic word back and
 *   forth; one hand-off (half a round trip) in us. No message can go from one core to another
 *   faster than the cache line that announces it, so this bounds any 0-byte latency between
 *   ranks on two cores; it also shows the state of the machine (on a VM it moves with the
 *   placement of the virtual CPUs).
 * Timing: calibrate the count until one run lasts --min-ms (at the fastest speed seen), then
 * --reps runs; median, min, max.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 32

static const long full_sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
static const long quick_sizes[] = {64, 4096, 262144, 1048576, 4194304};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* Size of the last-level cache: sysfs (what lscpu shows), else sysconf. */
static long l3_bytes(void) {
    long best = 0;
    for (int i = 0; i < 8; ++i) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE* f = fopen(path, "r");
        if (f == NULL) {
            break;
        }
        long v = 0;
        char unit = 0;
        if (fscanf(f, "%ld%c", &v, &unit) >= 1) {
            v *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
            best = v > best ? v : best;
        }
        fclose(f);
    }
    return best > 0 ? best : sysconf(_SC_LEVEL3_CACHE_SIZE);
}

struct pool {
    char* src;
    char* dst;
    size_t bytes; /* of each of src and dst */
};

/* n copies of `size` bytes; cold: walk through the pools. Returns seconds. */
static double run(const struct pool* p, size_t size, long n, int cold) {
    const size_t step = (size + 4095) & ~(size_t)4095;
    size_t off = 0;
    const double t0 = now_s();
    if (cold) {
        for (long i = 0; i < n; ++i) {
            memcpy(p->dst + off, p->src + off, size);
            __asm__ volatile("" : : "r"(p->dst + off) : "memory");
            off += step;
            if (off + step > p->bytes) {
                off = 0;
            }
        }
    } else {
        for (long i = 0; i < n; ++i) {
            memcpy(p->dst, p->src, size);
            __asm__ volatile("" : : "r"(p->dst) : "memory");
        }
    }
    return now_s() - t0;
}

static void measure(const struct pool* p, long size, int cold, int reps, double min_ms) {
    long n = 1;
    int runs = 0;
    double best = 0; /* seconds per copy, fastest run */
    for (;;) {       /* calibration, doubles as warm-up; as in p2p.c */
        const double per = run(p, (size_t)size, n, cold) / (double)n;
        best = runs == 0 || per < best ? per : best;
        ++runs;
        const double want = best > 0 ? min_ms * 1e-3 / best : 1e12;
        if ((double)n >= want) {
            if (runs >= 2) {
                break;
            }
            continue;
        }
        double scale = 1.2 * want / (double)n;
        scale = scale < 2.0 ? 2.0 : (scale > 16.0 ? 16.0 : scale);
        n = (long)((double)n * scale);
    }
    double vals[64];
    reps = reps < 64 ? reps : 64;
    for (int r = 0; r < reps; ++r) {
        vals[r] = (double)size * (double)n / run(p, (size_t)size, n, cold) / 1e6;
    }
    qsort(vals, (size_t)reps, sizeof *vals, cmp_double);
    const double med = reps % 2 ? vals[reps / 2] : (vals[reps / 2 - 1] + vals[reps / 2]) / 2;
    char what[200];
    if (cold) {
        snprintf(what, sizeof what,
                 "single-thread memcpy, cache-cold: next block of 2 pools of %zu MiB each copy (%ld copies per run)",
                 p->bytes >> 20, n);
    } else {
        snprintf(what, sizeof what,
                 "single-thread memcpy, cache-warm: same src and dst every copy (%ld copies per run)", n);
    }
    printf("ROW\tbandwidth\t%ld\tlimit\t%.4f\tMB/s\t%.4f\t%.4f\t\"copy\": \"%s\"\t%s\n", size, med, vals[0],
           vals[reps - 1], cold ? "cold" : "warm", what);
    fflush(stdout);
    fprintf(stderr, "memcpy %-4s %8ld B %12.1f MB/s [%.1f .. %.1f] n=%ld\n", cold ? "cold" : "warm", size, med, vals[0],
            vals[reps - 1], n);
}

/* ---- core-to-core hand-off ------------------------------------------------------------- */

struct handoff {
    _Alignas(64) atomic_long word; /* even: the main thread's turn, odd: the partner's */
    _Alignas(64) atomic_long go;   /* > 0: round trips the partner plays next; -1: stop */
    atomic_long done;              /* runs the partner finished */
    int cpu;
};

static int pin_self(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

static void* partner_main(void* arg) {
    struct handoff* h = arg;
    pin_self(h->cpu);
    long runs = 0;
    for (;;) {
        long n;
        while ((n = atomic_load_explicit(&h->go, memory_order_acquire)) == 0) {
        }
        if (n < 0) {
            return NULL;
        }
        atomic_store_explicit(&h->go, 0, memory_order_relaxed);
        for (long i = 0; i < n; ++i) {
            while (atomic_load_explicit(&h->word, memory_order_acquire) != 2 * i + 1) {
            }
            atomic_store_explicit(&h->word, 2 * i + 2, memory_order_release);
        }
        atomic_store_explicit(&h->done, ++runs, memory_order_release);
    }
}

/* n round trips; returns seconds. */
static double handoff_run(struct handoff* h, long n) {
    const long before = atomic_load_explicit(&h->done, memory_order_acquire);
    atomic_store_explicit(&h->word, 0, memory_order_relaxed);
    atomic_store_explicit(&h->go, n, memory_order_release);
    while (atomic_load_explicit(&h->go, memory_order_acquire) != 0) { /* the partner took it */
    }
    const double t0 = now_s();
    for (long i = 0; i < n; ++i) {
        atomic_store_explicit(&h->word, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&h->word, memory_order_acquire) != 2 * i + 2) {
        }
    }
    const double t = now_s() - t0;
    while (atomic_load_explicit(&h->done, memory_order_acquire) == before) {
    }
    return t;
}

static void measure_handoff(int cpu0, int cpu1, int reps, double min_ms) {
    struct handoff h;
    atomic_init(&h.word, 0);
    atomic_init(&h.go, 0);
    atomic_init(&h.done, 0);
    h.cpu = cpu1;
    pthread_t t;
    if (pthread_create(&t, NULL, partner_main, &h) != 0) {
        fprintf(stderr, "limit: pthread_create failed; no latency limit\n");
        return;
    }
    long n = 1;
    int runs = 0;
    double best = 0;
    for (;;) {
        const double per = handoff_run(&h, n) / (double)n;
        best = runs == 0 || per < best ? per : best;
        ++runs;
        const double want = best > 0 ? min_ms * 1e-3 / best : 1e12;
        if ((double)n >= want) {
            if (runs >= 2) {
                break;
            }
            continue;
        }
        double scale = 1.2 * want / (double)n;
        scale = scale < 2.0 ? 2.0 : (scale > 16.0 ? 16.0 : scale);
        n = (long)((double)n * scale);
    }
    double vals[64];
    reps = reps < 64 ? reps : 64;
    for (int r = 0; r < reps; ++r) {
        vals[r] = handoff_run(&h, n) * 1e6 / (2.0 * (double)n);
    }
    atomic_store_explicit(&h.go, -1, memory_order_release);
    pthread_join(t, NULL);
    qsort(vals, (size_t)reps, sizeof *vals, cmp_double);
    const double med = reps % 2 ? vals[reps / 2] : (vals[reps / 2 - 1] + vals[reps / 2]) / 2;
    printf(
        "ROW\tlatency\t0\tlimit\t%.4f\tus\t%.4f\t%.4f\t\"copy\": \"atomic hand-off\"\t"
        "two threads on CPUs %d and %d hand an atomic word back and forth, one way (%ld round trips per run)\n",
        med, vals[0], vals[reps - 1], cpu0, cpu1, n);
    fflush(stdout);
    fprintf(stderr, "hand-off CPUs %d,%d %8.4f us [%.4f .. %.4f] n=%ld\n", cpu0, cpu1, med, vals[0], vals[reps - 1], n);
}

/* The first allowed CPU, and the first allowed CPU on another core (-1 when none). */
static void two_cores(int* c0, int* c1) {
    cpu_set_t set;
    *c0 = 0;
    *c1 = -1;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        return;
    }
    int first = -1;
    char sib[256] = "";
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) {
            continue;
        }
        if (first < 0) {
            first = c;
            char path[128];
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
            FILE* f = fopen(path, "r");
            if (f != NULL) {
                if (fgets(sib, sizeof sib, f) == NULL) {
                    sib[0] = '\0';
                }
                fclose(f);
            }
            continue;
        }
        /* a sibling of `first` (same core) is skipped when the list names it */
        char name[16];
        snprintf(name, sizeof name, "%d", c);
        int sibling = 0;
        char copy[256];
        char* save = NULL;
        snprintf(copy, sizeof copy, "%s", sib);
        for (char* tok = strtok_r(copy, ",\n", &save); tok != NULL; tok = strtok_r(NULL, ",\n", &save)) {
            int lo = -1, hi = -1;
            if (sscanf(tok, "%d-%d", &lo, &hi) == 2 ? (c >= lo && c <= hi) : (atoi(tok) == c)) {
                sibling = 1;
            }
        }
        if (!sibling) {
            *c0 = first;
            *c1 = c;
            return;
        }
    }
    *c0 = first < 0 ? 0 : first;
}

int main(int argc, char** argv) {
    int quick = 0, reps = -1, nsizes = 0, handoff_only = 0;
    double min_ms = -1;
    long sizes[MAX_SIZES];
    for (int i = 1; i < argc; ++i) {
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--handoff") == 0) {
            handoff_only = 1;
        } else if (v != NULL && strcmp(argv[i], "--reps") == 0) {
            reps = atoi(v);
            ++i;
        } else if (v != NULL && strcmp(argv[i], "--min-ms") == 0) {
            min_ms = atof(v);
            ++i;
        } else if (v != NULL && strcmp(argv[i], "--sizes") == 0) {
            char buf[512];
            char* save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            for (char* t = strtok_r(buf, ",", &save); t != NULL && nsizes < MAX_SIZES; t = strtok_r(NULL, ",", &save)) {
                char* end = NULL;
                long s = strtol(t, &end, 10);
                s *= (*end == 'k' || *end == 'K') ? 1024 : (*end == 'm' || *end == 'M') ? 1024 * 1024 : 1;
                if (s > 0) {
                    sizes[nsizes++] = s;
                }
            }
            ++i;
        } else {
            fprintf(stderr, "usage: %s [--quick] [--handoff] [--reps N] [--min-ms MS] [--sizes BYTES,...]\n", argv[0]);
            return 2;
        }
    }
    if (reps <= 0) {
        reps = quick ? 3 : 11;
    }
    if (min_ms <= 0) {
        min_ms = quick ? 4.0 : 20.0;
    }
    if (nsizes == 0) {
        const long* s = quick ? quick_sizes : full_sizes;
        nsizes = (int)(quick ? sizeof quick_sizes / sizeof *quick_sizes : sizeof full_sizes / sizeof *full_sizes);
        memcpy(sizes, s, (size_t)nsizes * sizeof *s);
    }

    /* The hand-off needs two cores; then the copies run pinned to the first CPU (the 2-rank
     * MPI runs are pinned one rank per core too). */
    int cpu0 = 0, cpu1 = -1;
    two_cores(&cpu0, &cpu1);
    if (cpu1 >= 0) {
        pin_self(cpu0);
        measure_handoff(cpu0, cpu1, reps, min_ms);
    } else {
        fprintf(stderr, "limit: fewer than two cores allowed: no latency limit\n");
    }
    if (handoff_only) {
        return 0;
    }
    pin_self(cpu0);

    const long l3 = l3_bytes();
    size_t pool_bytes = (size_t)64 << 20;
    if (l3 > 0 && (size_t)l3 * 4 > pool_bytes) {
        pool_bytes = (size_t)l3 * 4;
    }
    if (pool_bytes > (size_t)256 << 20) {
        pool_bytes = (size_t)256 << 20;
    }
    struct pool p = {NULL, NULL, pool_bytes};
    void* s = NULL;
    void* d = NULL;
    if (posix_memalign(&s, 4096, pool_bytes) != 0 || posix_memalign(&d, 4096, pool_bytes) != 0) {
        fprintf(stderr, "limit: cannot allocate 2 x %zu bytes\n", pool_bytes);
        return 1;
    }
    p.src = s;
    p.dst = d;
    memset(p.src, 'x', pool_bytes); /* touch every page of both pools */
    memset(p.dst, 0, pool_bytes);
    fprintf(stderr, "limit: L3 %ld bytes, cold pools 2 x %zu MiB\n", l3, pool_bytes >> 20);

    for (int i = 0; i < nsizes; ++i) {
        measure(&p, sizes[i], 0, reps, min_ms);
        measure(&p, sizes[i], 1, reps, min_ms);
    }
    free(s);
    free(d);
    return 0;
}
