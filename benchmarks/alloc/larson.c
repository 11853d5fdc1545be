/*
 * larson.c: the server simulation of P. Larson and M. Krishnan, "Memory allocation for
 * long-running server applications", ISMM 1998 (the larson test of Hoard and mimalloc-bench,
 * with mimalloc-bench's parameters: 5000 blocks per thread, sizes drawn uniformly, 100
 * replacements per block in each thread's lifetime).
 *
 *   larson [--threads N] [common options, see common.h]
 *
 * Each thread owns an array of 5000 slots holding blocks of random size (16 .. 1000 bytes).
 * It repeatedly picks a random slot, checks and frees its block and puts a new block of random
 * size there. After 500,000 replacements the thread exits and a new thread takes its array
 * over (the original respawns each thread from the exiting one; here main starts the next
 * generation of all threads once the current one has ended: a "round"). Before the first
 * round main allocates every block, shuffles them over all arrays and replaces 4 x N of them
 * at random (larson's warm-up), so the first frees of every thread are of blocks main
 * allocated, and later ones of blocks an exited thread allocated.
 *
 * One operation is one free + one malloc. Every block carries a tag at its start and its end
 * (bench_tag_write, salted with the slot's index), checked before it is freed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define LARSON_SLOTS 5000
#define LARSON_MIN 16 /* larson uses 8; 16 holds the two tags */
#define LARSON_MAX 1000
#define LARSON_LIFETIME (100L * LARSON_SLOTS) /* replacements per thread per round */
#define LARSON_SEED 4141

/* One thread's array; handed to the thread of each round. */
struct larson_arg {
    _Alignas(64) int id;  /* (the structs of two threads never share a cache line) */
    int bad;              /* set by the worker: 1 a broken block, 2 malloc failed */
    size_t first;         /* index of slot[0] among all slots (the tags' salt) */
    char** slot;          /* LARSON_SLOTS blocks */
    uint32_t* size;       /* their sizes */
    struct bench_rng rng; /* the array's generator, carried from round to round */
};

static size_t random_size(struct bench_rng* r) { return LARSON_MIN + bench_rng_below(r, LARSON_MAX - LARSON_MIN + 1); }

static void* worker(void* p) {
    struct larson_arg* a = p;
    struct bench_rng rng = a->rng;
    char** slot = a->slot;
    uint32_t* size = a->size;
    for (long i = 0; i < LARSON_LIFETIME; ++i) {
        const uint32_t v = bench_rng_below(&rng, LARSON_SLOTS);
        if (!bench_tag_ok(slot[v], size[v], a->first + v)) {
            a->bad = 1;
            break;
        }
        free(slot[v]);
        const size_t sz = random_size(&rng);
        char* b = malloc(sz);
        if (b == NULL) {
            slot[v] = NULL;
            a->bad = 2;
            break;
        }
        bench_tag_write(b, sz, a->first + v);
        slot[v] = b;
        size[v] = (uint32_t)sz;
    }
    a->rng = rng;
    return NULL;
}

struct larson_ctx {
    int threads;
    struct larson_arg* args;
};

/* n rounds: each starts a new thread on every array and waits for all of them. */
static int run(void* p, long n, double* seconds) {
    struct larson_ctx* c = p;
    const double t0 = bench_now();
    for (long r = 0; r < n; ++r) {
        if (bench_run_workers(c->threads, worker, c->args, sizeof *c->args) != 0) {
            return -1;
        }
        for (int i = 0; i < c->threads; ++i) {
            if (c->args[i].bad != 0) {
                fprintf(stderr, "larson: thread on array %d: %s\n", i,
                        c->args[i].bad == 1 ? "BROKEN BLOCK: its tag changed before free" : "malloc failed");
                return -1;
            }
        }
    }
    *seconds = bench_now() - t0;
    return 0;
}

int main(int argc, char** argv) {
    struct bench_options o;
    if (bench_parse_args(argc, argv, &o, "larson") != 0) {
        return 2;
    }
    if (bench_check_malloc(&o, "larson") != 0) {
        return 1;
    }
    const int nt = o.threads;
    const size_t total = (size_t)nt * LARSON_SLOTS;
    struct larson_ctx c = {nt, aligned_alloc(64, (size_t)nt * sizeof(struct larson_arg))};
    char** blocks = malloc(total * sizeof *blocks);
    uint32_t* sizes = malloc(total * sizeof *sizes);
    if (c.args == NULL || blocks == NULL || sizes == NULL) {
        bench_fatal("larson", "malloc of the arrays");
    }
    /* larson's warm-up, by main: allocate, shuffle over all arrays, replace 4 x total. */
    struct bench_rng rng;
    bench_rng_seed(&rng, LARSON_SEED);
    for (size_t i = 0; i < total; ++i) {
        sizes[i] = (uint32_t)random_size(&rng);
        if ((blocks[i] = malloc(sizes[i])) == NULL) {
            bench_fatal("larson", "malloc");
        }
    }
    for (size_t i = total - 1; i > 0; --i) {
        const size_t j = bench_rng_below(&rng, (uint32_t)(i + 1));
        char* b = blocks[i];
        const uint32_t s = sizes[i];
        blocks[i] = blocks[j];
        sizes[i] = sizes[j];
        blocks[j] = b;
        sizes[j] = s;
    }
    for (size_t i = 0; i < total; ++i) {
        bench_tag_write(blocks[i], sizes[i], i);
    }
    for (size_t k = 0; k < 4 * total; ++k) {
        const size_t v = bench_rng_below(&rng, (uint32_t)total);
        free(blocks[v]);
        sizes[v] = (uint32_t)random_size(&rng);
        if ((blocks[v] = malloc(sizes[v])) == NULL) {
            bench_fatal("larson", "malloc");
        }
        bench_tag_write(blocks[v], sizes[v], v);
    }
    for (int i = 0; i < nt; ++i) {
        memset(&c.args[i], 0, sizeof c.args[i]);
        c.args[i].id = i;
        c.args[i].first = (size_t)i * LARSON_SLOTS;
        c.args[i].slot = blocks + (size_t)i * LARSON_SLOTS;
        c.args[i].size = sizes + (size_t)i * LARSON_SLOTS;
        bench_rng_seed(&c.args[i].rng, bench_rng_next(&rng));
    }

    struct bench_result r;
    if (bench_measure(&o, run, &c, (double)LARSON_LIFETIME * nt, &r) != 0) {
        return 1;
    }
    for (size_t i = 0; i < total; ++i) {
        if (!bench_tag_ok(blocks[i], sizes[i], i)) {
            fprintf(stderr, "larson: BROKEN BLOCK at the end (slot %zu)\n", i);
            return 1;
        }
    }
    char what[200];
    snprintf(what, sizeof what,
             "free + malloc of a random slot (%d .. %d B), %d slots/thread, new threads every %ld ops/thread",
             LARSON_MIN, LARSON_MAX, LARSON_SLOTS, LARSON_LIFETIME);
    bench_report(&o, "larson", "Mops/s", &r, what, "rounds");
    for (size_t i = 0; i < total; ++i) {
        free(blocks[i]);
    }
    free(blocks);
    free(sizes);
    free(c.args);
    return 0;
}
