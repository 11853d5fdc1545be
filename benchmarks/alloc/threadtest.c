/*
 * threadtest.c: Hoard's threadtest (E. Berger et al., "Hoard: A Scalable Memory Allocator for
 * Multithreaded Applications", ASPLOS 2000), with its default parameters: 30,000 objects of
 * 8 bytes in all, shared out among the threads, no work between the calls.
 *
 *   threadtest [--threads N] [common options, see common.h]
 *
 * Each of the N threads repeatedly mallocs its 30000 / N objects, one after the other, and
 * then frees them all, in the same order. Every object is allocated and freed by the same
 * thread: the test measures the fast paths and how they scale (the total work is the same
 * for any N, so the ideal time with N threads on N cores is 1/N of one thread's).
 *
 * One unit of work is one iteration (allocate all, free all) in every thread; one operation
 * is one malloc + one free. Each object holds an 8-byte tag derived from its address and its
 * index, checked before it is freed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define TT_OBJECTS 30000
#define TT_SIZE 8

struct tt_arg {
    _Alignas(64) int id; /* (the structs of two threads never share a cache line) */
    int bad;             /* set by the worker: 1 a broken object, 2 malloc failed */
    int nobjects;
    long iterations;
};

static void* worker(void* p) {
    struct tt_arg* a = p;
    void** obj = malloc((size_t)a->nobjects * sizeof *obj);
    if (obj == NULL) {
        a->bad = 2;
        return NULL;
    }
    for (long it = 0; it < a->iterations; ++it) {
        int made = 0;
        for (; made < a->nobjects; ++made) {
            void* o = malloc(TT_SIZE);
            if (o == NULL) {
                a->bad = 2;
                break;
            }
            const uint64_t t = bench_tag(o, TT_SIZE, (uint64_t)made);
            memcpy(o, &t, sizeof t);
            obj[made] = o;
        }
        for (int i = 0; i < made; ++i) {
            uint64_t t;
            memcpy(&t, obj[i], sizeof t);
            if (t != bench_tag(obj[i], TT_SIZE, (uint64_t)i)) {
                a->bad = 1;
            }
            free(obj[i]);
        }
        if (a->bad != 0) {
            break;
        }
    }
    free(obj);
    return NULL;
}

struct tt_ctx {
    int threads;
    struct tt_arg* args;
};

/* One run: n iterations in every thread. */
static int run(void* p, long n, double* seconds) {
    struct tt_ctx* c = p;
    for (int i = 0; i < c->threads; ++i) {
        c->args[i].iterations = n;
    }
    const double t0 = bench_now();
    if (bench_run_workers(c->threads, worker, c->args, sizeof *c->args) != 0) {
        return -1;
    }
    *seconds = bench_now() - t0;
    for (int i = 0; i < c->threads; ++i) {
        if (c->args[i].bad != 0) {
            fprintf(stderr, "threadtest: thread %d: %s\n", i,
                    c->args[i].bad == 1 ? "BROKEN OBJECT: its tag changed before free" : "malloc failed");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    struct bench_options o;
    if (bench_parse_args(argc, argv, &o, "threadtest") != 0) {
        return 2;
    }
    if (bench_check_malloc(&o, "threadtest") != 0) {
        return 1;
    }
    const int nt = o.threads;
    struct tt_ctx c = {nt, aligned_alloc(64, (size_t)nt * sizeof(struct tt_arg))};
    if (c.args == NULL) {
        bench_fatal("threadtest", "malloc of the thread arguments");
    }
    for (int i = 0; i < nt; ++i) {
        memset(&c.args[i], 0, sizeof c.args[i]);
        c.args[i].id = i;
        c.args[i].nobjects = TT_OBJECTS / nt;
    }

    struct bench_result r;
    if (bench_measure(&o, run, &c, (double)(TT_OBJECTS / nt) * nt, &r) != 0) {
        return 1;
    }
    char what[200];
    snprintf(what, sizeof what, "each thread mallocs %d objects of %d B, then frees them (Hoard threadtest)",
             TT_OBJECTS / nt, TT_SIZE);
    bench_report(&o, "threadtest", "Mops/s", &r, what, "iterations");
    free(c.args);
    return 0;
}
