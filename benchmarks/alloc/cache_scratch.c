/*
 * cache_scratch.c: Hoard's cache-scratch, the passive false-sharing test (E. Berger et al.,
 * "Hoard: A Scalable Memory Allocator for Multithreaded Applications", ASPLOS 2000), with
 * mimalloc-bench's object size (1 byte).
 *
 *   cache_scratch [--threads N] [common options, see common.h]
 *
 * Main mallocs N 1-byte objects one after the other (with most allocators they share a cache
 * line) and hands one to each of N threads. Each thread frees the object it was given, then
 * repeatedly mallocs a 1-byte object, writes it and reads it back 1,000,000 / N times, and
 * frees it. An allocator that hands the freed neighbours to different threads makes the
 * threads write to one cache line: the writes then bounce the line between cores and the test
 * stops scaling. The total number of writes is the same for any N, so the ideal time with N
 * threads on N cores is 1/N of one thread's.
 *
 * One unit of work is one malloc / writes / free cycle in every thread; one operation is one
 * write and read-back of a byte (the figure is in millions of writes per second). Every
 * read-back is checked.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define CS_OBJSIZE 1
#define CS_REPETITIONS 1000000L /* writes per cycle, shared out among the threads */

struct cs_arg {
    _Alignas(64) int id; /* (the structs of two threads never share a cache line) */
    int bad;             /* set by the worker: 1 a read-back differed, 2 malloc failed */
    char* given;         /* main's object, freed by this thread */
    long repetitions;
    long iterations;
};

static void* worker(void* p) {
    struct cs_arg* a = p;
    free(a->given);
    const char salt = (char)(a->id + 1);
    int bad = 0;
    for (long it = 0; it < a->iterations; ++it) {
        volatile char* obj = malloc(CS_OBJSIZE);
        if (obj == NULL) {
            a->bad = 2;
            return NULL;
        }
        for (long j = 0; j < a->repetitions; ++j) {
            for (int k = 0; k < CS_OBJSIZE; ++k) {
                obj[k] = (char)(k + salt);
                bad |= obj[k] != (char)(k + salt);
            }
        }
        free((void*)obj);
    }
    a->bad = bad;
    return NULL;
}

struct cs_ctx {
    int threads;
    struct cs_arg* args;
};

/* One run: main's objects handed out, then n cycles in every thread. */
static int run(void* p, long n, double* seconds) {
    struct cs_ctx* c = p;
    for (int i = 0; i < c->threads; ++i) {
        if ((c->args[i].given = malloc(CS_OBJSIZE)) == NULL) {
            bench_fatal("cache_scratch", "malloc");
        }
        c->args[i].iterations = n;
    }
    const double t0 = bench_now();
    if (bench_run_workers(c->threads, worker, c->args, sizeof *c->args) != 0) {
        return -1;
    }
    *seconds = bench_now() - t0;
    for (int i = 0; i < c->threads; ++i) {
        if (c->args[i].bad != 0) {
            fprintf(stderr, "cache_scratch: thread %d: %s\n", i,
                    c->args[i].bad == 1 ? "WRONG READ-BACK: the object changed under the thread" : "malloc failed");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    struct bench_options o;
    if (bench_parse_args(argc, argv, &o, "cache_scratch") != 0) {
        return 2;
    }
    if (bench_check_malloc(&o, "cache_scratch") != 0) {
        return 1;
    }
    const int nt = o.threads;
    struct cs_ctx c = {nt, aligned_alloc(64, (size_t)nt * sizeof(struct cs_arg))};
    if (c.args == NULL) {
        bench_fatal("cache_scratch", "malloc of the thread arguments");
    }
    for (int i = 0; i < nt; ++i) {
        memset(&c.args[i], 0, sizeof c.args[i]);
        c.args[i].id = i;
        c.args[i].repetitions = CS_REPETITIONS / nt;
    }

    struct bench_result r;
    if (bench_measure(&o, run, &c, (double)(CS_REPETITIONS / nt) * nt * CS_OBJSIZE, &r) != 0) {
        return 1;
    }
    char what[200];
    snprintf(what, sizeof what,
             "main's %d-B objects freed by the threads, then malloc %d B, write+read it %ld times, free (Hoard)",
             CS_OBJSIZE, CS_OBJSIZE, CS_REPETITIONS / nt);
    bench_report(&o, "cache_scratch", "Mwrites/s", &r, what, "cycles");
    free(c.args);
    return 0;
}
