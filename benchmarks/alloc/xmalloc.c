/*
 * xmalloc.c: producer/consumer cross-thread frees, after the xmalloc-test of C. Lever and
 * D. Boreham, "malloc() Performance in a Multithreaded Linux Environment", USENIX 2000
 * (FREENIX track), as mimalloc-bench runs it (-w N: N producers and N consumers).
 *
 *   xmalloc [--threads N] [common options, see common.h]
 *
 * N producer threads and N consumer threads share one queue of batches (a LIFO stack under a
 * mutex, with condition variables for "not empty" and "not full", as xmalloc-test). A producer
 * mallocs batches of 4096 objects whose sizes are drawn from xmalloc-test's list (8 .. 2048
 * bytes), fills the first min(size, 128) bytes of each, and pushes the batch; a consumer pops a
 * batch, checks its objects and frees them and the batch. Every object is freed by a thread
 * other than the one that allocated it. The queue holds at most 8 batches (xmalloc-test: 100;
 * fewer keeps the memory in flight, and so the peak RSS, about the allocator rather than the
 * queue: 8 batches are about 14 MiB of objects).
 *
 * One unit of work is one batch per producer; one operation is one malloc + one (remote)
 * free of an object. Each object's filled bytes hold one byte derived from its address and
 * index; the consumer checks the first and the last of them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define XM_BATCH 4096
#define XM_QUEUE_LIMIT 8
#define XM_SEED 1201

static const uint16_t xm_sizes[] = {8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};

struct xm_batch {
    struct xm_batch* next;
    void* obj[XM_BATCH];
    uint16_t size[XM_BATCH];
};

struct xm_queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
    struct xm_batch* top;
    int count;
    int producers; /* still running; consumers stop when 0 and the queue is empty */
};

enum { XM_PRODUCER, XM_CONSUMER };

struct xm_arg {
    _Alignas(64) int id; /* (the structs of two threads never share a cache line) */
    int role;
    int bad;      /* set by the worker: 1 a broken object, 2 malloc failed */
    long batches; /* producer: batches to make */
    struct xm_queue* q;
    struct bench_rng rng;
};

static unsigned char fill_byte(const void* p, int i) { return (unsigned char)(((uintptr_t)p >> 4) ^ (unsigned)i); }

static size_t fill_len(size_t size) { return size < 128 ? size : 128; }

static void push(struct xm_queue* q, struct xm_batch* b) {
    pthread_mutex_lock(&q->lock);
    while (q->count >= XM_QUEUE_LIMIT) {
        pthread_cond_wait(&q->not_full, &q->lock);
    }
    b->next = q->top;
    q->top = b;
    ++q->count;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* The next batch, or NULL once every producer has finished and the queue is empty. */
static struct xm_batch* pop(struct xm_queue* q) {
    pthread_mutex_lock(&q->lock);
    while (q->top == NULL && q->producers > 0) {
        pthread_cond_wait(&q->not_empty, &q->lock);
    }
    struct xm_batch* b = q->top;
    if (b != NULL) {
        q->top = b->next;
        --q->count;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return b;
}

static void produce(struct xm_arg* a) {
    struct bench_rng rng = a->rng;
    for (long k = 0; k < a->batches && a->bad == 0; ++k) {
        struct xm_batch* b = malloc(sizeof *b);
        if (b == NULL) {
            a->bad = 2;
            break;
        }
        for (int i = 0; i < XM_BATCH; ++i) {
            const uint16_t size = xm_sizes[bench_rng_below(&rng, sizeof xm_sizes / sizeof *xm_sizes)];
            void* p = malloc(size);
            if (p == NULL) { /* the consumer frees what was made so far */
                b->obj[i] = NULL;
                a->bad = 2;
                break;
            }
            memset(p, fill_byte(p, i), fill_len(size));
            b->obj[i] = p;
            b->size[i] = size;
        }
        push(a->q, b);
    }
    a->rng = rng;
    pthread_mutex_lock(&a->q->lock);
    if (--a->q->producers == 0) {
        pthread_cond_broadcast(&a->q->not_empty);
    }
    pthread_mutex_unlock(&a->q->lock);
}

static void consume(struct xm_arg* a) {
    struct xm_batch* b;
    while ((b = pop(a->q)) != NULL) {
        for (int i = 0; i < XM_BATCH; ++i) {
            unsigned char* p = b->obj[i];
            if (p == NULL) {
                break;
            }
            const size_t len = fill_len(b->size[i]);
            if (p[0] != fill_byte(p, i) || p[len - 1] != fill_byte(p, i)) {
                a->bad = 1;
            }
            free(p);
        }
        free(b);
    }
}

static void* worker(void* p) {
    struct xm_arg* a = p;
    if (a->role == XM_PRODUCER) {
        produce(a);
    } else {
        consume(a);
    }
    return NULL;
}

struct xm_ctx {
    int pairs;
    struct xm_queue* q;
    struct xm_arg* args; /* producers, then consumers */
};

/* One run: every producer makes n batches, the consumers free them all. */
static int run(void* p, long n, double* seconds) {
    struct xm_ctx* c = p;
    c->q->producers = c->pairs;
    for (int i = 0; i < c->pairs; ++i) {
        c->args[i].batches = n;
    }
    const double t0 = bench_now();
    if (bench_run_workers(2 * c->pairs, worker, c->args, sizeof *c->args) != 0) {
        return -1;
    }
    *seconds = bench_now() - t0;
    for (int i = 0; i < 2 * c->pairs; ++i) {
        if (c->args[i].bad != 0) {
            fprintf(stderr, "xmalloc: %s %d: %s\n", c->args[i].role == XM_PRODUCER ? "producer" : "consumer",
                    c->args[i].id,
                    c->args[i].bad == 1 ? "BROKEN OBJECT: its bytes changed before free" : "malloc failed");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    struct bench_options o;
    if (bench_parse_args(argc, argv, &o, "xmalloc") != 0) {
        return 2;
    }
    if (bench_check_malloc(&o, "xmalloc") != 0) {
        return 1;
    }
    const int pairs = o.threads;
    struct xm_queue q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.not_empty, NULL);
    pthread_cond_init(&q.not_full, NULL);
    struct xm_ctx c = {pairs, &q, aligned_alloc(64, 2 * (size_t)pairs * sizeof(struct xm_arg))};
    if (c.args == NULL) {
        bench_fatal("xmalloc", "malloc of the thread arguments");
    }
    struct bench_rng seeder;
    bench_rng_seed(&seeder, XM_SEED);
    for (int i = 0; i < 2 * pairs; ++i) {
        memset(&c.args[i], 0, sizeof c.args[i]);
        c.args[i].id = i % pairs;
        c.args[i].role = i < pairs ? XM_PRODUCER : XM_CONSUMER;
        c.args[i].q = &q;
        bench_rng_seed(&c.args[i].rng, bench_rng_next(&seeder));
    }

    struct bench_result r;
    if (bench_measure(&o, run, &c, (double)XM_BATCH * pairs, &r) != 0) {
        return 1;
    }
    char what[200];
    snprintf(
        what, sizeof what,
        "%d producer(s) malloc batches of %d objects (8 .. 2048 B), %d consumer(s) free them; malloc + remote free",
        pairs, XM_BATCH, pairs);
    bench_report(&o, "xmalloc", "Mops/s", &r, what, "batches/producer");
    free(c.args);
    pthread_cond_destroy(&q.not_full);
    pthread_cond_destroy(&q.not_empty);
    pthread_mutex_destroy(&q.lock);
    return 0;
}
