/*
 * coll.c: MPI collective benchmarks in the OSU micro-benchmark style, one plain C program
 * compiled unchanged with mpc_cc, Open MPI's mpicc and MPICH's mpicc (benchmarks/coll/run.sh).
 *
 *   coll [--quick] [--impl NAME] [--variant TEXT] [--ops LIST] [--reps N] [--min-ms MS]
 *        [--max-s S] [--sizes LIST]
 *
 * --impl names the implementation in the output; --variant adds "variant": TEXT to each
 * figure's extra keys. Every figure carries "ranks": N (the size of MPI_COMM_WORLD).
 *
 * Operations (comma-separated LIST; default all but gatherv and scatterv), each at its sizes
 * (--sizes overrides them for every operation but barrier and ibarrier):
 *   barrier    MPI_Barrier
 *   bcast      MPI_Bcast of 8 B, 64 KiB, 8 MiB (MPI_BYTE) from root 0
 *   allreduce  MPI_Allreduce of 8 B, 64 KiB, 8 MiB: MPI_DOUBLE, MPI_SUM (1, 8192, 1048576 doubles)
 *   alltoall   MPI_Alltoall of 8 B and 64 KiB per pair of ranks (MPI_BYTE; each rank sends
 *              size x ranks bytes and receives as much)
 *   allgather  MPI_Allgather of 8 B and 64 KiB per rank (MPI_BYTE; each rank receives
 *              size x ranks bytes)
 *   ibarrier   MPI_Ibarrier + MPI_Wait
 *   ibcast     MPI_Ibcast + MPI_Wait of 8 B and 64 KiB (MPI_BYTE) from root 0
 *   iallreduce MPI_Iallreduce + MPI_Wait of 8 B and 64 KiB (MPI_DOUBLE, MPI_SUM)
 *   overlap    at 8 B and 64 KiB, four figures: "compute", a loop of floating-point work
 *              (no MPI call) calibrated on rank 0 to last as long as Iallreduce + Wait of that
 *              size; "iallreduce_compute", MPI_Iallreduce, the loop, MPI_Wait;
 *              "allreduce_compute", MPI_Allreduce then the loop; and "overlap", the share of
 *              the non-blocking call hidden behind the loop (OSU's formula):
 *              100 x (1 - (iallreduce_compute - compute) / iallreduce), at least 0, where
 *              iallreduce is the latency of Iallreduce + Wait measured just before.
 *   gatherv    MPI_Gatherv to rank 0 of 8 B and 64 KiB per rank (MPI_BYTE, every count equal)
 *   scatterv   MPI_Scatterv from rank 0 of 8 B and 64 KiB per rank (the same)
 *   (gatherv and scatterv only when --ops names them: they are not part of the default set)
 * The figure is the latency of one call in us: each rank times its own loop of n back-to-back
 * calls (after an MPI_Barrier) and takes the mean; the figure of a run is the maximum of those
 * means over the ranks (the OSU convention). For Bcast and Allreduce of 8 MiB a second figure
 * gives the bandwidth: message size / latency, in MB/s (10^6 bytes/s), metrics bcast_bw and
 * allreduce_bw.
 *
 * Timing (same for every figure): rank 0 calibrates the iteration count (growing it, broadcast
 * to every rank) until one run lasts at least --min-ms on the slowest rank; the calibration
 * runs are the warm-up (at least two runs, or one call of 0.5 s or more). Then --reps runs are
 * timed (fewer, but at least 3, or 1 with --quick, when they would take more than --max-s
 * seconds together); the median is reported, with the min and the max (for a time the min is
 * the best figure, for a bandwidth the max is). The calls of a run follow each other without a
 * barrier in between: a small Bcast pipelines (the root may run ahead; the slowest rank's mean
 * counts), the other operations cannot finish on any rank before every rank has entered them.
 *
 * Validation: before a figure the receive buffers are cleared (the send buffers filled with a
 * pattern that names sender, receiver and offset); after its timed runs every rank checks
 * every byte (every double) its last call produced. A wrong value: no figure, exit status 1.
 *
 * Rank 0 prints one tab-separated line per figure on stdout, the format benchmarks/lib.sh reads:
 *   ROW <metric> <size> <impl> <value> <unit> <min> <max> <extra json keys> <description>
 *
 * Only MPI_Init, Finalize, Comm_rank/size, Send, Recv, Barrier, Bcast, Allreduce, Alltoall,
 * Allgather, Gatherv, Scatterv, Ibarrier, Ibcast, Iallreduce, Wait and Wtime are used. The program keeps no mutable global or static variable: under
 * mpc_run every rank is a thread of one process.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r, posix_memalign */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLL_MAX_SIZES 16
#define COLL_MAX_REPS 64
#define TAG_RESULT 200
#define TAG_CALIBRATE 201
#define COLL_LONG_CALL_S 0.5 /* a first call this long is warm-up enough */

enum {
    OP_BARRIER,
    OP_BCAST,
    OP_ALLREDUCE,
    OP_ALLTOALL,
    OP_ALLGATHER,
    OP_IBARRIER,
    OP_IBCAST,
    OP_IALLREDUCE,
    OP_OVERLAP,
    OP_GATHERV,
    OP_SCATTERV,
    OP_COUNT,
    /* the loops of the overlap figures (not selectable on their own) */
    OP_COMPUTE = OP_COUNT,
    OP_IALLREDUCE_COMPUTE,
    OP_ALLREDUCE_COMPUTE,
    OP_ALL
};

static const char* const op_names[OP_ALL] = {"barrier",   "bcast",    "allreduce",  "alltoall",
                                             "allgather", "ibarrier", "ibcast",     "iallreduce",
                                             "overlap",   "gatherv",  "scatterv",   "compute",
                                             "iallreduce_compute",   "allreduce_compute"};
/* The operations run when --ops is not given. */
#define DEFAULT_OPS (((1 << OP_COUNT) - 1) & ~((1 << OP_GATHERV) | (1 << OP_SCATTERV)))

/* The sizes of the issue (6): Barrier; Bcast and Allreduce 8 B, 64 KiB, 8 MiB; Alltoall and
 * Allgather 8 B and 64 KiB per rank. */
static const long sizes_large[] = {8, 65536, 8388608};
static const long sizes_small[] = {8, 65536};
#define BW_MIN_SIZE 8388608L /* bandwidth figures from this size on (bcast, allreduce) */

struct options {
    int quick;
    int reps;
    double min_ms;
    double max_s;
    const char* impl;
    const char* variant;
    int ops; /* bit (1 << OP_x) */
    int nsizes;
    long sizes[COLL_MAX_SIZES]; /* --sizes, or none */
};

static void usage(const char* prog) {
    fprintf(stderr,
            "usage: %s [--quick] [--impl NAME] [--variant TEXT] [--ops OP,...]\n"
            "          [--reps N] [--min-ms MS] [--max-s S] [--sizes BYTES,...]\n"
            "  --ops    of barrier, bcast, allreduce, alltoall, allgather, ibarrier, ibcast, iallreduce, overlap\n"
            "           (the default: all of these), gatherv, scatterv\n"
            "  --quick  3 runs of >= 5 ms, at most 1 s of runs per figure (default: 5 runs of >= 50 ms, at most 8 s)\n",
            prog);
}

static int parse_ops(const char* s) {
    int m = 0;
    char buf[128];
    char* save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    for (char* tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < OP_COUNT; ++i) {
            if (strcmp(tok, op_names[i]) == 0) {
                m |= 1 << i;
                found = 1;
            }
        }
        if (!found) {
            return -1;
        }
    }
    return m;
}

static int parse_sizes(const char* s, struct options* o) {
    char buf[512];
    char* save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    o->nsizes = 0;
    for (char* tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char* end = NULL;
        long v = strtol(tok, &end, 10);
        if (*end == 'k' || *end == 'K') {
            v *= 1024;
            ++end;
        } else if (*end == 'm' || *end == 'M') {
            v *= 1024 * 1024;
            ++end;
        }
        /* multiples of 8: an Allreduce sums doubles */
        if (end == tok || *end != '\0' || v <= 0 || v % 8 != 0 || v > (1L << 28) || o->nsizes == COLL_MAX_SIZES) {
            return -1;
        }
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static int parse_args(int argc, char** argv, struct options* o) {
    int reps = -1;
    double min_ms = -1, max_s = -1;
    memset(o, 0, sizeof *o);
    o->impl = "unknown";
    o->variant = "";
    o->ops = DEFAULT_OPS;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            o->quick = 1;
        } else if (v != NULL && strcmp(a, "--impl") == 0) {
            o->impl = v;
            ++i;
        } else if (v != NULL && strcmp(a, "--variant") == 0) {
            o->variant = v;
            ++i;
        } else if (v != NULL && strcmp(a, "--ops") == 0) {
            if ((o->ops = parse_ops(v)) <= 0) {
                return -1;
            }
            ++i;
        } else if (v != NULL && strcmp(a, "--reps") == 0) {
            reps = atoi(v);
            ++i;
        } else if (v != NULL && strcmp(a, "--min-ms") == 0) {
            min_ms = atof(v);
            ++i;
        } else if (v != NULL && strcmp(a, "--max-s") == 0) {
            max_s = atof(v);
            ++i;
        } else if (v != NULL && strcmp(a, "--sizes") == 0) {
            if (parse_sizes(v, o) != 0) {
                return -1;
            }
            ++i;
        } else {
            return -1;
        }
    }
    o->reps = reps > 0 ? (reps < COLL_MAX_REPS ? reps : COLL_MAX_REPS) : (o->quick ? 3 : 5);
    o->min_ms = min_ms > 0 ? min_ms : (o->quick ? 5.0 : 50.0);
    o->max_s = max_s > 0 ? max_s : (o->quick ? 1.0 : 8.0);
    return 0;
}

/* The sizes of one operation (none for barrier, which has one figure, size 0). */
static int op_sizes(const struct options* o, int op, const long** sizes) {
    if (op == OP_BARRIER || op == OP_IBARRIER) {
        static const long zero[] = {0};
        *sizes = zero;
        return 1;
    }
    if (o->nsizes > 0) {
        *sizes = o->sizes;
        return o->nsizes;
    }
    if (op == OP_BCAST || op == OP_ALLREDUCE) {
        *sizes = sizes_large;
        return (int)(sizeof sizes_large / sizeof *sizes_large);
    }
    *sizes = sizes_small;
    return (int)(sizeof sizes_small / sizeof *sizes_small);
}

/* Per-rank state (on main's stack: nothing global). */
struct ctx {
    int rank;
    int nranks;
    char* sbuf;
    char* rbuf;
    int* counts;        /* gatherv, scatterv: every rank's count, then the displacements */
    long compute_iters; /* the overlap figures' loop: iterations of compute() */
    double* sink;       /* where compute() leaves its result (so that it is not optimised away) */
};

/* The overlap figures' work: a chain of dependent multiply-adds, no memory traffic, no MPI. */
static double compute(long iters, double x) {
    for (long i = 0; i < iters; ++i) {
        x = x * 1.0000001 + 1e-9;
    }
    return x;
}

/* The operation whose buffers and result an operation uses (its blocking form). */
static int base_op(int op) {
    switch (op) {
        case OP_IBARRIER: return OP_BARRIER;
        case OP_IBCAST: return OP_BCAST;
        case OP_IALLREDUCE:
        case OP_OVERLAP:
        case OP_IALLREDUCE_COMPUTE:
        case OP_ALLREDUCE_COMPUTE: return OP_ALLREDUCE;
        default: return op;
    }
}

/* The byte at offset i of a block keyed by `key`: never 0 (a cleared byte never passes), and
 * blocks of different keys (mod 251) differ at every offset. */
static unsigned char pattern(long key, long i) {
    return (unsigned char)((key + i) % 251 + 1);
}

/* The key of the block that rank `from` sends to rank `to` (Alltoall; Allgather uses to = 0):
 * distinct senders give distinct keys mod 251 up to 251 ranks. */
static long block_key(int from, int to) {
    return 17L * from + to;
}

/* The value rank `rank` contributes at index i of an Allreduce, and the sum over n ranks:
 * small integers, exact in double whatever the order of the additions. */
static double contribution(int rank, long i) {
    return (double)((rank + 1) * (1 + i % 3));
}

static double expected_sum(int n, long i) {
    return (double)n * (n + 1) / 2.0 * (double)(1 + i % 3);
}

/* Fills the send buffer of this rank and clears its receive buffer before a figure. */
static void prepare(const struct ctx* c, int op, long size) {
    const int n = c->nranks;
    switch (base_op(op)) {
        case OP_BCAST:
            if (c->rank == 0) {
                for (long i = 0; i < size; ++i) {
                    c->rbuf[i] = (char)pattern(block_key(0, 1), i);
                }
            } else {
                memset(c->rbuf, 0, (size_t)size);
            }
            break;
        case OP_ALLREDUCE: {
            double* s = (double*)(void*)c->sbuf;
            for (long i = 0; i < size / 8; ++i) {
                s[i] = contribution(c->rank, i);
            }
            memset(c->rbuf, 0, (size_t)size);
            break;
        }
        case OP_ALLTOALL:
            for (int to = 0; to < n; ++to) {
                for (long i = 0; i < size; ++i) {
                    c->sbuf[(long)to * size + i] = (char)pattern(block_key(c->rank, to), i);
                }
            }
            memset(c->rbuf, 0, (size_t)size * (size_t)n);
            break;
        case OP_ALLGATHER:
        case OP_GATHERV:
            for (long i = 0; i < size; ++i) {
                c->sbuf[i] = (char)pattern(block_key(c->rank, 0), i);
            }
            memset(c->rbuf, 0, (size_t)size * (size_t)n);
            break;
        case OP_SCATTERV:
            for (int to = 0; to < n && c->rank == 0; ++to) {
                for (long i = 0; i < size; ++i) {
                    c->sbuf[(long)to * size + i] = (char)pattern(block_key(0, to), i);
                }
            }
            memset(c->rbuf, 0, (size_t)size);
            break;
        default:
            break;
    }
    for (int i = 0; i < n; ++i) { /* gatherv, scatterv: blocks of `size` bytes side by side */
        c->counts[i] = (int)size;
        c->counts[n + i] = (int)(size * i);
    }
}

/* Checks what the last call left in this rank's receive buffer. Returns 0 when right. */
static int check(const struct ctx* c, const struct options* o, int op, long size) {
    const int n = c->nranks;
    long bad_at = -1;
    double got = 0, want = 0;
    if (op == OP_GATHERV && c->rank != 0) {
        return 0;
    }
    switch (base_op(op)) {
        case OP_BCAST:
            for (long i = 0; i < size && bad_at < 0; ++i) {
                if ((unsigned char)c->rbuf[i] != pattern(block_key(0, 1), i)) {
                    bad_at = i;
                    got = (unsigned char)c->rbuf[i];
                    want = pattern(block_key(0, 1), i);
                }
            }
            break;
        case OP_ALLREDUCE: {
            const double* r = (const double*)(const void*)c->rbuf;
            for (long i = 0; i < size / 8 && bad_at < 0; ++i) {
                if (r[i] != expected_sum(n, i)) {
                    bad_at = i * 8;
                    got = r[i];
                    want = expected_sum(n, i);
                }
            }
            break;
        }
        case OP_SCATTERV:
            for (long i = 0; i < size && bad_at < 0; ++i) {
                if ((unsigned char)c->rbuf[i] != pattern(block_key(0, c->rank), i)) {
                    bad_at = i;
                    got = (unsigned char)c->rbuf[i];
                    want = pattern(block_key(0, c->rank), i);
                }
            }
            break;
        case OP_GATHERV: /* only the root receives (checked as an allgather) */
        case OP_ALLTOALL:
        case OP_ALLGATHER:
            for (int from = 0; from < n && bad_at < 0; ++from) {
                const long key = block_key(from, base_op(op) == OP_ALLTOALL ? c->rank : 0);
                for (long i = 0; i < size; ++i) {
                    if ((unsigned char)c->rbuf[(long)from * size + i] != pattern(key, i)) {
                        bad_at = (long)from * size + i;
                        got = (unsigned char)c->rbuf[bad_at];
                        want = pattern(key, i);
                        break;
                    }
                }
            }
            break;
        default:
            break;
    }
    if (bad_at >= 0) {
        fprintf(stderr, "coll: %s: rank %d: WRONG RESULT of %s of %ld bytes with %d ranks: byte %ld holds %g, expected %g\n",
                o->impl, c->rank, op_names[op], size, n, bad_at, got, want);
        return 1;
    }
    return 0;
}

/* n calls of `op`; returns this rank's seconds. Every rank calls it. */
static double run_once(const struct ctx* c, int op, long size, long n) {
    MPI_Request req = MPI_REQUEST_NULL;
    double x = 1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    switch (op) {
        case OP_BARRIER:
            for (long i = 0; i < n; ++i) {
                MPI_Barrier(MPI_COMM_WORLD);
            }
            break;
        case OP_BCAST:
            for (long i = 0; i < n; ++i) {
                MPI_Bcast(c->rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
            }
            break;
        case OP_ALLREDUCE:
            for (long i = 0; i < n; ++i) {
                MPI_Allreduce(c->sbuf, c->rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            }
            break;
        case OP_ALLTOALL:
            for (long i = 0; i < n; ++i) {
                MPI_Alltoall(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
            }
            break;
        case OP_ALLGATHER:
            for (long i = 0; i < n; ++i) {
                MPI_Allgather(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
            }
            break;
        case OP_GATHERV:
            for (long i = 0; i < n; ++i) {
                MPI_Gatherv(c->sbuf, (int)size, MPI_BYTE, c->rbuf, c->counts, c->counts + c->nranks, MPI_BYTE, 0,
                            MPI_COMM_WORLD);
            }
            break;
        case OP_SCATTERV:
            for (long i = 0; i < n; ++i) {
                MPI_Scatterv(c->sbuf, c->counts, c->counts + c->nranks, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE, 0,
                             MPI_COMM_WORLD);
            }
            break;
        case OP_IBARRIER:
            for (long i = 0; i < n; ++i) {
                MPI_Ibarrier(MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            break;
        case OP_IBCAST:
            for (long i = 0; i < n; ++i) {
                MPI_Ibcast(c->rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            break;
        case OP_IALLREDUCE:
            for (long i = 0; i < n; ++i) {
                MPI_Iallreduce(c->sbuf, c->rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            break;
        case OP_COMPUTE:
            for (long i = 0; i < n; ++i) {
                x = compute(c->compute_iters, x);
            }
            break;
        case OP_IALLREDUCE_COMPUTE:
            for (long i = 0; i < n; ++i) {
                MPI_Iallreduce(c->sbuf, c->rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
                x = compute(c->compute_iters, x);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            break;
        case OP_ALLREDUCE_COMPUTE:
            for (long i = 0; i < n; ++i) {
                MPI_Allreduce(c->sbuf, c->rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                x = compute(c->compute_iters, x);
            }
            break;
        default:
            break;
    }
    const double t = MPI_Wtime() - t0;
    *c->sink += x;
    return t;
}

/* The maximum of t over the ranks, on rank 0 (point-to-point: not a collective under test). */
static double max_over_ranks(const struct ctx* c, double t) {
    if (c->rank != 0) {
        MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_CALIBRATE, MPI_COMM_WORLD);
        return t;
    }
    for (int i = 1; i < c->nranks; ++i) {
        double theirs = 0;
        MPI_Recv(&theirs, 1, MPI_DOUBLE, i, TAG_CALIBRATE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t = theirs > t ? theirs : t;
    }
    return t;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median_of(const double* v, int k) {
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* The extra JSON keys of a figure. */
static void extra_keys(const struct ctx* c, const struct options* o, char* buf, size_t len) {
    snprintf(buf, len, "\"ranks\": %d", c->nranks);
    if (o->variant[0] != '\0') {
        const size_t used = strlen(buf);
        snprintf(buf + used, len - used, ", \"variant\": \"%s\"", o->variant);
    }
}

/* Prints the figures of one measurement (rank 0): lat[] the per-run latencies in us, sorted. */
static void report(const struct ctx* c, const struct options* o, int op, long size, long n, const double* lat,
                   int reps) {
    char extra[160];
    char what[256];
    extra_keys(c, o, extra, sizeof extra);
    switch (op) {
        case OP_BARRIER:
            snprintf(what, sizeof what, "MPI_Barrier, max over ranks of the mean per call (%ld calls per run)", n);
            break;
        case OP_BCAST:
            snprintf(what, sizeof what, "MPI_Bcast of %ld B from rank 0, max over ranks of the mean per call (%ld per run)",
                     size, n);
            break;
        case OP_ALLREDUCE:
            snprintf(what, sizeof what,
                     "MPI_Allreduce of %ld MPI_DOUBLE, MPI_SUM, max over ranks of the mean per call (%ld per run)",
                     size / 8, n);
            break;
        case OP_ALLTOALL:
            snprintf(what, sizeof what,
                     "MPI_Alltoall, %ld B per pair of ranks, max over ranks of the mean per call (%ld per run)", size, n);
            break;
        case OP_ALLGATHER:
            snprintf(what, sizeof what,
                     "MPI_Allgather, %ld B per rank, max over ranks of the mean per call (%ld per run)", size, n);
            break;
        case OP_GATHERV:
        case OP_SCATTERV:
            snprintf(what, sizeof what, "%s to rank 0, %ld B per rank, max over ranks of the mean per call (%ld per run)",
                     op == OP_GATHERV ? "MPI_Gatherv" : "MPI_Scatterv", size, n);
            break;
        case OP_IBARRIER:
            snprintf(what, sizeof what, "MPI_Ibarrier + MPI_Wait, max over ranks of the mean per call (%ld per run)", n);
            break;
        case OP_IBCAST:
            snprintf(what, sizeof what,
                     "MPI_Ibcast + MPI_Wait of %ld B from rank 0, max over ranks of the mean per call (%ld per run)",
                     size, n);
            break;
        case OP_IALLREDUCE:
            snprintf(what, sizeof what,
                     "MPI_Iallreduce + MPI_Wait of %ld MPI_DOUBLE, MPI_SUM, max over ranks of the mean per call (%ld per run)",
                     size / 8, n);
            break;
        case OP_COMPUTE:
            snprintf(what, sizeof what,
                     "the overlap loop alone (%ld iterations), max over ranks of the mean per call (%ld per run)",
                     c->compute_iters, n);
            break;
        case OP_IALLREDUCE_COMPUTE:
            snprintf(what, sizeof what,
                     "MPI_Iallreduce of %ld MPI_DOUBLE + the overlap loop + MPI_Wait, max over ranks of the mean (%ld per run)",
                     size / 8, n);
            break;
        default:
            snprintf(what, sizeof what,
                     "MPI_Allreduce of %ld MPI_DOUBLE + the overlap loop, max over ranks of the mean (%ld per run)",
                     size / 8, n);
            break;
    }
    const double med = median_of(lat, reps);
    printf("ROW\t%s\t%ld\t%s\t%.4f\tus\t%.4f\t%.4f\t%s\t%s\n", op_names[op], size, o->impl, med, lat[0],
           lat[reps - 1], extra, what);
    fprintf(stderr, "%-10s %8ld B  %3d ranks  %-8s %12.3f us  [%.3f .. %.3f] n=%ld runs=%d\n", op_names[op], size,
            c->nranks, o->impl, med, lat[0], lat[reps - 1], n, reps);
    if ((op == OP_BCAST || op == OP_ALLREDUCE) && size >= BW_MIN_SIZE) {
        /* bandwidth = size / latency: the median is size / the median latency (odd reps) */
        snprintf(what, sizeof what, "%s of %ld B: message size / latency, 10^6 B/s (%ld per run)",
                 op == OP_BCAST ? "MPI_Bcast" : "MPI_Allreduce", size, n);
        printf("ROW\t%s_bw\t%ld\t%s\t%.4f\tMB/s\t%.4f\t%.4f\t%s\t%s\n", op_names[op], size, o->impl,
               (double)size / med, (double)size / lat[reps - 1], (double)size / lat[0], extra, what);
    }
    fflush(stdout);
}

/* Times one operation: calibration, then the timed runs; on rank 0, lat[] receives the
 * sorted per-run figures (max over the ranks), *reps_out their number and *n_out the calls per
 * run. Returns nonzero when a result was wrong (on any rank; rank 0 knows). */
static int timed(const struct ctx* c, const struct options* o, int op, long size, double* lat, int* reps_out,
                 long* n_out) {
    prepare(c, op, size);
    /* Calibration: rank 0 decides from the slowest rank's time of each run (in a Bcast the
     * root may finish long before the others), everybody follows (Bcast of the next count,
     * 0 = done). The target count comes from the time per call of the latest run, the one
     * with the most calls: the time per call of oversubscribed peers grows with the number of
     * back-to-back calls (MPICH at 64 ranks: 2.6 us per Bcast of 8 B over 16 calls, 3.9 ms over
     * 256). At least two runs, the first of them (one call) a warm-up, unless that one call took
     * COLL_LONG_CALL_S or more (the peers at 64 ranks on 2 cores take seconds per call): then
     * it is the whole warm-up. Rank 0 also decides how many timed runs fit in --max-s. */
    long n = 1;
    int runs = 0;
    long plan[2] = {0, 0}; /* next count, timed runs */
    for (;;) {
        const double t = max_over_ranks(c, run_once(c, op, size, n));
        if (c->rank == 0) {
            const double per = t / (double)n; /* seconds per call */
            const double want = per > 0 ? o->min_ms * 1e-3 / per : 1e12;
            plan[0] = 0;
            if ((double)n < want) {
                double scale = 1.2 * want / (double)n;
                scale = scale < 2.0 ? 2.0 : (scale > 16.0 ? 16.0 : scale);
                plan[0] = (long)((double)n * scale);
            } else if (runs == 0 && t < COLL_LONG_CALL_S) {
                plan[0] = n; /* long enough, but the first run only warms up */
            }
            const double run_s = per * (double)(plan[0] > 0 ? plan[0] : n);
            long reps = o->reps;
            if (run_s * (double)reps > o->max_s) {
                const long least = o->quick ? 1 : 3;
                reps = (long)(o->max_s / run_s);
                reps = reps < least ? least : reps;
                reps = reps > o->reps ? o->reps : reps;
            }
            plan[1] = reps;
        }
        MPI_Bcast(plan, 2, MPI_LONG, 0, MPI_COMM_WORLD);
        ++runs;
        if (plan[0] == 0) {
            break;
        }
        n = plan[0];
    }

    const int reps = (int)plan[1];
    double mine[COLL_MAX_REPS + 1]; /* this rank's mean per call of each run (us); then its check */
    for (int r = 0; r < reps; ++r) {
        mine[r] = run_once(c, op, size, n) * 1e6 / (double)n;
    }
    mine[reps] = (double)check(c, o, op, size);
    /* Every rank sends its means and its verdict to rank 0 (point-to-point, not a collective
     * under test). */
    if (c->rank != 0) {
        MPI_Send(mine, reps + 1, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
        return mine[reps] != 0;
    }
    int bad = mine[reps] != 0;
    memcpy(lat, mine, (size_t)reps * sizeof *lat);
    for (int i = 1; i < c->nranks; ++i) {
        double theirs[COLL_MAX_REPS + 1];
        MPI_Recv(theirs, reps + 1, MPI_DOUBLE, i, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 0; r < reps; ++r) {
            lat[r] = theirs[r] > lat[r] ? theirs[r] : lat[r];
        }
        bad |= theirs[reps] != 0;
    }
    if (bad) {
        fprintf(stderr, "coll: %s: wrong result of %s of %ld bytes with %d ranks: figure left out\n", o->impl,
                op_names[op], size, c->nranks);
        return 1;
    }
    qsort(lat, (size_t)reps, sizeof *lat, cmp_double);
    *reps_out = reps;
    *n_out = n;
    return 0;
}

/* Measures and reports one figure; returns nonzero when a result was wrong (on any rank). */
static int measure(const struct ctx* c, const struct options* o, int op, long size) {
    double lat[COLL_MAX_REPS];
    int reps = 0;
    long n = 0;
    if (timed(c, o, op, size, lat, &reps, &n) != 0) {
        return 1;
    }
    if (c->rank == 0) {
        report(c, o, op, size, n, lat, reps);
    }
    return 0;
}

/* The overlap figures of one size (see the file comment). Rank 0 calibrates the loop to last
 * as long as one Iallreduce + Wait on its own, then every rank runs it at once (ranks that share
 * a core take turns: 4 or 32 per core at 8 and 64 ranks here) and rank 0 rescales it so that
 * the slowest rank's loop lasts that long, twice; the iteration count is broadcast each time.
 * Every rank makes every step whatever the verdicts (only rank 0 knows them all); a wrong result
 * drops the figures. */
static int measure_overlap(struct ctx* c, const struct options* o, long size) {
    double lat[COLL_MAX_REPS];
    int reps = 1;
    long n = 0;
    double pure = 0; /* us per Iallreduce + Wait (median) */
    lat[0] = 0;
    int bad = timed(c, o, OP_IALLREDUCE, size, lat, &reps, &n);
    long iters = 0;
    if (c->rank == 0) {
        pure = median_of(lat, reps);
        long k = 1000;
        double t = 0;
        for (;;) { /* at least 1 ms of work to scale from */
            const double t0 = MPI_Wtime();
            *c->sink += compute(k, 1.0);
            t = MPI_Wtime() - t0;
            if (t >= 1e-3 || k > (1L << 40)) {
                break;
            }
            k *= 4;
        }
        iters = (long)((double)k * pure * 1e-6 / t);
        iters = iters < 1 ? 1 : iters;
    }
    for (int round = 0; round < 3; ++round) {
        MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        c->compute_iters = iters;
        if (round == 2) {
            break;
        }
        const double t = max_over_ranks(c, run_once(c, OP_COMPUTE, size, 1)); /* all at once */
        if (c->rank == 0 && t > 0) {
            iters = (long)((double)iters * pure * 1e-6 / t);
            iters = iters < 1 ? 1 : iters;
        }
    }
    double med[3] = {0, 0, 0};
    static const int ops[3] = {OP_COMPUTE, OP_IALLREDUCE_COMPUTE, OP_ALLREDUCE_COMPUTE};
    for (int i = 0; i < 3; ++i) {
        bad |= timed(c, o, ops[i], size, lat, &reps, &n);
        if (c->rank == 0 && !bad) {
            report(c, o, ops[i], size, n, lat, reps);
            med[i] = median_of(lat, reps);
        }
    }
    if (c->rank == 0 && !bad) {
        double overlap = pure > 0 ? 100.0 * (1.0 - (med[1] - med[0]) / pure) : 0;
        overlap = overlap < 0 ? 0 : (overlap > 100 ? 100 : overlap);
        char extra[160];
        extra_keys(c, o, extra, sizeof extra);
        printf("ROW\toverlap\t%ld\t%s\t%.1f\t%%\t%.1f\t%.1f\t%s\tshare of MPI_Iallreduce of %ld B (%.3f us) hidden "
               "behind the loop: 100 x (1 - (iallreduce_compute - compute) / iallreduce)\n",
               size, o->impl, overlap, overlap, overlap, extra, size, pure);
        fprintf(stderr, "%-10s %8ld B  %3d ranks  %-8s %12.1f %%  (Iallreduce %.3f us, compute %.3f, both %.3f, "
                "blocking + compute %.3f)\n", "overlap", size, c->nranks, o->impl, overlap, pure, med[0], med[1], med[2]);
        fflush(stdout);
    }
    return bad;
}

int main(int argc, char** argv) {
    struct ctx c;
    struct options o;
    memset(&c, 0, sizeof c);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    if (parse_args(argc, argv, &o) != 0) {
        if (c.rank == 0) {
            usage(argv[0]);
        }
        MPI_Finalize();
        return 2;
    }
    /* Buffer sizes: the largest need of the selected operations. */
    long sbytes = 8, rbytes = 8;
    for (int op = 0; op < OP_COUNT; ++op) {
        const long* sizes = NULL;
        const int k = op_sizes(&o, op, &sizes);
        if (!(o.ops & (1 << op))) {
            continue;
        }
        for (int i = 0; i < k; ++i) {
            const long all = sizes[i] * c.nranks;
            const long s = op == OP_ALLTOALL || op == OP_SCATTERV ? all : sizes[i];
            const long r = op == OP_ALLTOALL || op == OP_ALLGATHER || op == OP_GATHERV ? all : sizes[i];
            sbytes = s > sbytes ? s : sbytes;
            rbytes = r > rbytes ? r : rbytes;
        }
    }
    void* s = NULL;
    void* r = NULL;
    if (posix_memalign(&s, 4096, (size_t)sbytes) != 0 || posix_memalign(&r, 4096, (size_t)rbytes) != 0) {
        fprintf(stderr, "coll: rank %d: cannot allocate %ld + %ld bytes\n", c.rank, sbytes, rbytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    c.sbuf = s;
    c.rbuf = r;
    double sink = 0;
    c.sink = &sink;
    c.counts = malloc(2 * (size_t)c.nranks * sizeof *c.counts);
    if (c.counts == NULL) {
        fprintf(stderr, "coll: rank %d: cannot allocate the counts\n", c.rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(c.sbuf, 0, (size_t)sbytes); /* touched before the first figure */
    memset(c.rbuf, 0, (size_t)rbytes);
    if (c.rank == 0) {
        fprintf(stderr, "coll: %s, %d ranks, buffers %ld + %ld bytes per rank\n", o.impl, c.nranks, sbytes, rbytes);
    }

    int failed = 0;
    for (int op = 0; op < OP_COUNT; ++op) {
        if (!(o.ops & (1 << op))) {
            continue;
        }
        const long* sizes = NULL;
        const int k = op_sizes(&o, op, &sizes);
        for (int i = 0; i < k; ++i) {
            failed |= op == OP_OVERLAP ? measure_overlap(&c, &o, sizes[i]) : measure(&c, &o, op, sizes[i]);
        }
    }
    free(s);
    free(r);
    free(c.counts);
    MPI_Finalize();
    return failed ? 1 : 0;
}
