/*
 * common.c: the shared part of the allocator workloads (see common.h). No mutable global or
 * static variable.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, dladdr */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#ifdef BENCH_MPC_TASKS
#include <mpc.h>
#endif

#define BENCH_MAX_THREADS 1024

static void usage(const char* prog) {
    fprintf(stderr,
            "usage: %s [--threads N] [--impl NAME] [--expect glibc|jemalloc|tcmalloc|mimalloc|mpc]\n"
            "          [--variant TEXT] [--quick] [--reps N] [--min-ms MS]\n"
            "  --quick  3 runs of >= 10 ms (default: 11 runs of >= 100 ms)\n",
            prog);
}

int bench_parse_args(int argc, char** argv, struct bench_options* o, const char* workload) {
    int reps = -1;
    double min_ms = -1;
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->variant = "";
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            o->quick = 1;
            continue;
        }
        if (v == NULL) {
            usage(argv[0]);
            return -1;
        }
        if (strcmp(a, "--threads") == 0) {
            o->threads = atoi(v);
        } else if (strcmp(a, "--impl") == 0) {
            o->impl = v;
        } else if (strcmp(a, "--expect") == 0) {
            o->expect = v;
        } else if (strcmp(a, "--variant") == 0) {
            o->variant = v;
        } else if (strcmp(a, "--reps") == 0) {
            reps = atoi(v);
        } else if (strcmp(a, "--min-ms") == 0) {
            min_ms = atof(v);
        } else {
            usage(argv[0]);
            return -1;
        }
        ++i;
    }
    if (o->threads < 1 || o->threads > BENCH_MAX_THREADS / 2) {
        fprintf(stderr, "%s: --threads must be between 1 and %d\n", workload, BENCH_MAX_THREADS / 2);
        return -1;
    }
    o->reps = reps > 0 ? (reps < BENCH_MAX_REPS ? reps : BENCH_MAX_REPS) : (o->quick ? 3 : 11);
    o->min_ms = min_ms > 0 ? min_ms : (o->quick ? 10.0 : 100.0);
    return 0;
}

/* ---- which malloc is active ------------------------------------------------------------- */

/* Each allocator is recognised by a symbol only it exports. */
struct malloc_probe {
    const char* name;
    const char* marker;
};

static const struct malloc_probe probes[] = {
    {"mpc", "mpc_allocator_name"},
    {"jemalloc", "mallctl"},
    {"tcmalloc", "tc_version"},
    {"mimalloc", "mi_version"},
};

/* The shared object that defines the address p ("?" when unknown). */
static const char* object_of(const void* p) {
    Dl_info info;
    if (p == NULL || dladdr(p, &info) == 0 || info.dli_fname == NULL) {
        return "?";
    }
    return info.dli_fname;
}

/* The allocator's version, as it reports it (" 5.3.0"; "" when it does not). */
static void version_of(const char* name, void* marker, char* buf, size_t len) {
    buf[0] = '\0';
    if (strcmp(name, "glibc") == 0) {
        snprintf(buf, len, " %s", gnu_get_libc_version());
    } else if (strcmp(name, "jemalloc") == 0) {
        int (*mallctl)(const char*, void*, size_t*, void*, size_t);
        memcpy(&mallctl, &marker, sizeof mallctl);
        const char* v = NULL;
        size_t vlen = sizeof v;
        if (mallctl("version", (void*)&v, &vlen, NULL, 0) == 0 && v != NULL) {
            snprintf(buf, len, " %s", v);
        }
    } else if (strcmp(name, "tcmalloc") == 0) {
        const char* (*tc_version)(int*, int*, const char**);
        memcpy(&tc_version, &marker, sizeof tc_version);
        int major = 0, minor = 0;
        const char* patch = NULL;
        const char* v = tc_version(&major, &minor, &patch);
        if (v != NULL) {
            snprintf(buf, len, " %s", v);
        }
    } else if (strcmp(name, "mimalloc") == 0) {
        int (*mi_version)(void);
        memcpy(&mi_version, &marker, sizeof mi_version);
        const int v = mi_version();
        snprintf(buf, len, " %d.%d.%d", v / 100, v / 10 % 10, v % 10);
    }
}

int bench_check_malloc(struct bench_options* o, const char* workload) {
    const char* name = "glibc";
    void* marker = NULL;
    for (size_t i = 0; i < sizeof probes / sizeof *probes; ++i) {
        marker = dlsym(RTLD_DEFAULT, probes[i].marker);
        if (marker != NULL) {
            name = probes[i].name;
            break;
        }
    }
    const char* malloc_obj = object_of(dlsym(RTLD_DEFAULT, "malloc"));
    const char* base = strrchr(malloc_obj, '/');
    base = base != NULL ? base + 1 : malloc_obj;
    char version[128];
    version_of(name, marker, version, sizeof version);
    fprintf(stderr, "%s: allocator %s%s; malloc() resolves to %s\n", workload, name, version, malloc_obj);

    /* The marker and malloc() must come from the same object (mpc: malloc() must not be
     * glibc's; its marker may sit in another of its libraries). */
    int consistent = 1;
    if (strcmp(name, "glibc") == 0) {
        consistent = strncmp(base, "libc.so", 7) == 0;
    } else if (strcmp(name, "mpc") == 0) {
        consistent = strncmp(base, "libc.so", 7) != 0;
    } else {
        consistent = strcmp(object_of(marker), malloc_obj) == 0;
    }
    if (!consistent) {
        fprintf(stderr, "%s: malloc() is served by %s, not by %s's library (%s)%s\n", workload, malloc_obj, name,
                marker != NULL ? object_of(marker) : "libc", o->expect != NULL ? ": refusing to run" : "");
        if (o->expect != NULL) {
            return -1;
        }
        name = "other"; /* a sanitizer's malloc, or an allocator without a known symbol */
    }
    if (o->expect != NULL && strcmp(o->expect, name) != 0) {
        fprintf(stderr, "%s: expected malloc %s but %s is active (did LD_PRELOAD take effect?): refusing to run\n",
                workload, o->expect, name);
        return -1;
    }
    if (o->impl == NULL) {
        o->impl = name;
    }
    return 0;
}

/* ---- timing -------------------------------------------------------------------------------- */

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

int bench_measure(const struct bench_options* o, bench_body body, void* ctx, double ops_per_unit,
                  struct bench_result* r) {
    /* Calibration as in benchmarks/p2p/p2p.c: the target count comes from the fastest run so
     * far (a run slowed down by a preemption does not end it); the first run only warms up. */
    long n = 1;
    int runs = 0;
    double best = 0; /* seconds per unit, fastest run */
    for (;;) {
        double t = 0;
        if (body(ctx, n, &t) != 0) {
            return -1;
        }
        const double per = t / (double)n;
        best = runs == 0 || per < best ? per : best;
        ++runs;
        const double want = best > 0 ? o->min_ms * 1e-3 / best : 1e12;
        if ((double)n >= want) {
            if (runs >= 2) {
                break;
            }
            continue; /* long enough, but the first run only warmed up */
        }
        double scale = 1.2 * want / (double)n;
        scale = scale < 2.0 ? 2.0 : (scale > 16.0 ? 16.0 : scale);
        n = (long)((double)n * scale);
    }
    r->n = n;
    r->reps = o->reps;
    for (int i = 0; i < r->reps; ++i) {
        double t = 0;
        if (body(ctx, n, &t) != 0) {
            return -1;
        }
        r->vals[i] = ops_per_unit * (double)n / (t > 0 ? t : 1e-9) / 1e6;
    }
    qsort(r->vals, (size_t)r->reps, sizeof *r->vals, cmp_double);
    return 0;
}

double bench_peak_rss_mib(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        return 0;
    }
    return (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

void bench_report(const struct bench_options* o, const char* workload, const char* unit, const struct bench_result* r,
                  const char* what, const char* units) {
    char extra[160] = "";
    if (o->variant[0] != '\0') {
        snprintf(extra, sizeof extra, "\"variant\": \"%s\"", o->variant);
    }
    const int k = r->reps;
    const double med = k % 2 ? r->vals[k / 2] : (r->vals[k / 2 - 1] + r->vals[k / 2]) / 2;
    const double rss = bench_peak_rss_mib();
    printf("ROW\t%s\t%d\t%s\t%.4f\t%s\t%.4f\t%.4f\t%s\t%s (%ld %s per run)\n", workload, o->threads, o->impl, med, unit,
           r->vals[0], r->vals[k - 1], extra, what, r->n, units);
    printf(
        "ROW\t%s_rss\t%d\t%s\t%.2f\tMiB\t%.2f\t%.2f\t%s\tpeak RSS of the process (ru_maxrss) over calibration and "
        "%d runs\n",
        workload, o->threads, o->impl, rss, rss, rss, extra, k);
    fflush(stdout);
    fprintf(stderr, "%-13s %3d thr  %-9s %10.3f %s  [%.3f .. %.3f] n=%ld  peak RSS %.1f MiB\n", workload, o->threads,
            o->impl, med, unit, r->vals[0], r->vals[k - 1], r->n, rss);
}

/* ---- threads ------------------------------------------------------------------------------ */

#ifdef BENCH_MPC_TASKS
/* The tasks variant (built with -DBENCH_MPC_TASKS and linked with libmpc, see run.sh): each
 * worker runs as an MPC task, a user-level thread with a heap in an address slice of its own
 * (MPC_Task_create, mpc.h), instead of a pthread. The first call starts MPC's runtime, with one
 * VP per worker unless MPC_VPS says otherwise, and worker i moves itself to VP i.
 *
 * Limit: a task that blocks in the kernel blocks its whole VP, and xmalloc's workers wait for
 * each other on a pthread mutex and condition variables: two of them sharing a VP could wait
 * for each other forever. So every worker needs a VP of its own, and more workers than VPs is
 * refused (exit status 1). With more workers than cores (xmalloc at 2 threads: 4 workers) the
 * VPs share the cores, as the pthreads of the other rows do. The main thread becomes VP 0's
 * primary ULT; it parks in MPC_Task_join while worker 0 runs on VP 0. */
struct bench_task_start {
    void* (*worker)(void*);
    void* arg;
    int vp;
};

static void* bench_task_main(void* p) {
    const struct bench_task_start* s = p;
    const int rc = MPC_Move_to_vp(s->vp);
    if (rc != MPC_SUCCESS) {
        fprintf(stderr, "MPC_Move_to_vp(%d): error %d\n", s->vp, rc);
        exit(1);
    }
    return s->worker(s->arg);
}

static void* bench_task_noop(void* p) { return p; }

/* Starts the runtime (one VP per worker unless MPC_VPS is set) and checks that each of the n
 * workers can have a VP of its own. */
static void bench_tasks_start(int n) {
    if (MPC_Vp_count() == 0) {
        if (getenv("MPC_VPS") == NULL) {
            char vps[16];
            snprintf(vps, sizeof vps, "%d", n);
            setenv("MPC_VPS", vps, 1);
        }
        MPC_Task t;
        const int rc = MPC_Task_create(&t, bench_task_noop, NULL);
        if (rc != MPC_SUCCESS || MPC_Task_join(t, NULL) != MPC_SUCCESS) {
            fprintf(stderr, "MPC_Task_create: error %d: MPC's runtime did not start\n", rc);
            exit(1);
        }
    }
    if (n > MPC_Vp_count()) {
        fprintf(stderr, "%d workers as MPC tasks need a VP each, but MPC's runtime has %d (MPC_VPS)\n", n,
                MPC_Vp_count());
        exit(1);
    }
}

int bench_run_workers(int n, void* (*worker)(void*), void* args, size_t arg_size) {
    MPC_Task task[BENCH_MAX_THREADS];
    struct bench_task_start start[BENCH_MAX_THREADS];
    if (n > BENCH_MAX_THREADS) {
        return -1;
    }
    bench_tasks_start(n);
    for (int i = 0; i < n; ++i) {
        start[i].worker = worker;
        start[i].arg = (char*)args + (size_t)i * arg_size;
        start[i].vp = i;
        const int e = MPC_Task_create(&task[i], bench_task_main, &start[i]);
        if (e != MPC_SUCCESS) { /* the started workers may wait for this one: give up at once */
            fprintf(stderr, "MPC_Task_create (task %d of %d): error %d\n", i + 1, n, e);
            exit(1);
        }
    }
    for (int i = 0; i < n; ++i) {
        MPC_Task_join(task[i], NULL);
    }
    return 0;
}
#else
int bench_run_workers(int n, void* (*worker)(void*), void* args, size_t arg_size) {
    pthread_t tid[BENCH_MAX_THREADS];
    if (n > BENCH_MAX_THREADS) {
        return -1;
    }
    for (int i = 0; i < n; ++i) {
        const int e = pthread_create(&tid[i], NULL, worker, (char*)args + (size_t)i * arg_size);
        if (e != 0) { /* the started workers may wait for this one: give up at once */
            fprintf(stderr, "pthread_create (thread %d of %d): %s\n", i + 1, n, strerror(e));
            exit(1);
        }
    }
    for (int i = 0; i < n; ++i) {
        pthread_join(tid[i], NULL);
    }
    return 0;
}
#endif

void bench_fatal(const char* workload, const char* what) {
    fprintf(stderr, "%s: %s: %s\n", workload, what, strerror(errno));
    exit(1);
}
