/*
 * realloc_chain.c: a buffer grown by small steps to tens of MiB with realloc (a string
 * builder or a growing array that does not double its capacity itself).
 *
 *   realloc_chain [--threads N] [common options, see common.h]
 *
 * Each of the N threads grows its own buffer from RC_STEP bytes to RC_TARGET (32 MiB) in steps
 * of RC_STEP bytes, one realloc per step, fills each new step, and frees the buffer at the end
 * of the chain. An allocator that grows blocks in place (or moves large ones with mremap) does
 * little per step; one that copies the block on every size-class change, or keeps the old
 * block while it copies, pays in time and in peak RSS (which is the figure to watch here: the
 * ideal is N x 32 MiB plus the program).
 *
 * One unit of work is one chain in every thread; one operation is one realloc. After each
 * realloc the first byte and the last byte of the old contents are checked; at the end of
 * each chain one byte per 4 KiB of the whole buffer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define RC_TARGET (32L << 20)
#define RC_STEP 256L

struct rc_arg {
    _Alignas(64) int id; /* (the structs of two threads never share a cache line) */
    int bad;             /* set by the worker: 1 contents lost, 2 realloc failed */
    long chains;
};

/* The fill byte of the step that starts at offset off, in thread id's buffer. */
static unsigned char fill_byte(long off, int id) { return (unsigned char)((off / RC_STEP) * 31 + id + 1); }

static int chain(int id) {
    unsigned char* buf = NULL;
    long len = 0;
    while (len < RC_TARGET) {
        unsigned char* nb = realloc(buf, (size_t)(len + RC_STEP));
        if (nb == NULL) {
            free(buf);
            return 2;
        }
        if (len > 0 && (nb[0] != fill_byte(0, id) || nb[len - 1] != fill_byte(len - 1, id))) {
            free(nb);
            return 1;
        }
        memset(nb + len, fill_byte(len, id), RC_STEP);
        buf = nb;
        len += RC_STEP;
    }
    int bad = 0;
    for (long off = 0; off < len; off += 4096) {
        bad |= buf[off] != fill_byte(off, id);
    }
    free(buf);
    return bad;
}

static void* worker(void* p) {
    struct rc_arg* a = p;
    for (long c = 0; c < a->chains && a->bad == 0; ++c) {
        a->bad = chain(a->id);
    }
    return NULL;
}

struct rc_ctx {
    int threads;
    struct rc_arg* args;
};

/* One run: n chains in every thread. */
static int run(void* p, long n, double* seconds) {
    struct rc_ctx* c = p;
    for (int i = 0; i < c->threads; ++i) {
        c->args[i].chains = n;
    }
    const double t0 = bench_now();
    if (bench_run_workers(c->threads, worker, c->args, sizeof *c->args) != 0) {
        return -1;
    }
    *seconds = bench_now() - t0;
    for (int i = 0; i < c->threads; ++i) {
        if (c->args[i].bad != 0) {
            fprintf(stderr, "realloc_chain: thread %d: %s\n", i,
                    c->args[i].bad == 1 ? "CONTENTS LOST: realloc did not keep the buffer's bytes" : "realloc failed");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    struct bench_options o;
    if (bench_parse_args(argc, argv, &o, "realloc_chain") != 0) {
        return 2;
    }
    if (bench_check_malloc(&o, "realloc_chain") != 0) {
        return 1;
    }
    const int nt = o.threads;
    struct rc_ctx c = {nt, aligned_alloc(64, (size_t)nt * sizeof(struct rc_arg))};
    if (c.args == NULL) {
        bench_fatal("realloc_chain", "malloc of the thread arguments");
    }
    for (int i = 0; i < nt; ++i) {
        memset(&c.args[i], 0, sizeof c.args[i]);
        c.args[i].id = i;
    }

    struct bench_result r;
    if (bench_measure(&o, run, &c, (double)(RC_TARGET / RC_STEP) * nt, &r) != 0) {
        return 1;
    }
    char what[200];
    snprintf(what, sizeof what, "each thread grows a buffer to %ld MiB by %ld-B reallocs, fills each step, frees it",
             RC_TARGET >> 20, RC_STEP);
    bench_report(&o, "realloc_chain", "Mops/s", &r, what, "chains/thread");
    free(c.args);
    return 0;
}
