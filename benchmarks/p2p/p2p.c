/*
 * p2p.c: point-to-point MPI benchmarks in the OSU micro-benchmark style, one plain C program
 * compiled unchanged with mpc_cc, Open MPI's mpicc and MPICH's mpicc (benchmarks/p2p/run.sh).
 *
 *   p2p [--quick] [--impl NAME] [--variant TEXT] [--modes LIST] [--reps N] [--min-ms MS]
 *       [--sizes LIST]
 *
 * --impl names the implementation in the output; --variant adds "variant": TEXT to each
 * figure's extra keys (a placement, such as both ranks on one VP).
 *
 * Modes (comma-separated LIST; default latency,bandwidth,bibw,msgrate):
 *   latency    ranks 0 and 1 ping-pong (MPI_Send / MPI_Recv); half a round trip, in us
 *   bandwidth  rank 0 posts a window of 64 MPI_Isend, rank 1 64 MPI_Irecv, both MPI_Waitall,
 *              then rank 1 sends a 4-byte ack; bytes moved / time, in MB/s (10^6 bytes/s)
 *   bibw       as bandwidth, both directions at once (each rank 64 Irecv + 64 Isend, Waitall)
 *   msgrate    multi-pair message rate (osu_mbw_mr): rank r < P sends windows of 64 messages to
 *              rank r + P (P = ranks / 2), each window acknowledged; all messages of all pairs
 *              / time, in millions of messages per second. Timed from a barrier to a barrier.
 * Send and receive buffers are reused by every message (as OSU does), page-aligned, touched
 * before the first run: large messages are cache-warm, like the "warm" memcpy limit. Each
 * rank's send buffer holds its own letter; before a figure the receive buffers are cleared and
 * after it every received byte is checked (a wrong byte: no figure, exit status 1).
 *
 * Timing (same for every mode): rank 0 calibrates the iteration count (growing it, broadcast to
 * every rank) until one run lasts at least --min-ms at the fastest speed seen; the calibration
 * runs are the warm-up. Then --reps runs are timed with MPI_Wtime (each starts after an
 * MPI_Barrier); the median is reported, with the min and the max.
 * Rank 0 prints one tab-separated line per figure on stdout, the format benchmarks/lib.sh reads:
 *   ROW <metric> <size> <impl> <value> <unit> <min> <max> <extra json keys> <description>
 * (for a time the min is the best figure, for a rate the max is).
 *
 * Only MPI_Init, Finalize, Comm_rank/size, Send, Recv, Isend, Irecv, Waitall, Barrier, Bcast
 * and Wtime are used, with MPI_BYTE. The program keeps no mutable global or static variable:
 * under mpc_run every rank is a thread of one process.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r, posix_memalign */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P2P_WINDOW 64
#define P2P_MAX_SIZES 32
#define TAG_DATA 100
#define TAG_ACK 101

enum { MODE_LATENCY = 1, MODE_BANDWIDTH = 2, MODE_BIBW = 4, MODE_MSGRATE = 8 };

struct options {
    int quick;
    int reps;
    double min_ms;
    const char* impl;
    const char* variant;
    int modes;
    int nsizes;
    long sizes[P2P_MAX_SIZES];
};

static const long full_sizes[] = {0, 1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
static const long quick_sizes[] = {0, 64, 4096, 262144, 1048576, 4194304};

static void usage(const char* prog) {
    fprintf(stderr,
            "usage: %s [--quick] [--impl NAME] [--variant TEXT] [--modes latency,bandwidth,bibw,msgrate]\n"
            "          [--reps N] [--min-ms MS] [--sizes BYTES,...]\n"
            "  --quick  sizes 0 64 4K 256K 1M 4M, 3 runs of >= 4 ms (default: 10 sizes, 11 runs of >= 20 ms)\n",
            prog);
}

static int parse_modes(const char* s) {
    int m = 0;
    char buf[128];
    char* save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    for (char* tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "latency") == 0) {
            m |= MODE_LATENCY;
        } else if (strcmp(tok, "bandwidth") == 0 || strcmp(tok, "bw") == 0) {
            m |= MODE_BANDWIDTH;
        } else if (strcmp(tok, "bibw") == 0) {
            m |= MODE_BIBW;
        } else if (strcmp(tok, "msgrate") == 0) {
            m |= MODE_MSGRATE;
        } else {
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
        if (end == tok || *end != '\0' || v < 0 || v > (1L << 30) || o->nsizes == P2P_MAX_SIZES) {
            return -1;
        }
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static int parse_args(int argc, char** argv, struct options* o) {
    int reps = -1, have_sizes = 0;
    double min_ms = -1;
    memset(o, 0, sizeof *o);
    o->impl = "unknown";
    o->variant = "";
    o->modes = MODE_LATENCY | MODE_BANDWIDTH | MODE_BIBW | MODE_MSGRATE;
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
        } else if (v != NULL && strcmp(a, "--modes") == 0) {
            if ((o->modes = parse_modes(v)) <= 0) {
                return -1;
            }
            ++i;
        } else if (v != NULL && strcmp(a, "--reps") == 0) {
            reps = atoi(v);
            ++i;
        } else if (v != NULL && strcmp(a, "--min-ms") == 0) {
            min_ms = atof(v);
            ++i;
        } else if (v != NULL && strcmp(a, "--sizes") == 0) {
            if (parse_sizes(v, o) != 0) {
                return -1;
            }
            have_sizes = 1;
            ++i;
        } else {
            return -1;
        }
    }
    o->reps = reps > 0 ? reps : (o->quick ? 3 : 11);
    o->min_ms = min_ms > 0 ? min_ms : (o->quick ? 4.0 : 20.0);
    if (!have_sizes) {
        const long* s = o->quick ? quick_sizes : full_sizes;
        o->nsizes = (int)(o->quick ? sizeof quick_sizes / sizeof *quick_sizes : sizeof full_sizes / sizeof *full_sizes);
        memcpy(o->sizes, s, (size_t)o->nsizes * sizeof *s);
    }
    return 0;
}

/* Per-rank state (on main's stack: nothing global). */
struct ctx {
    int rank;
    int nranks;
    char* sbuf;
    char* rbuf;
    MPI_Request reqs[2 * P2P_WINDOW];
};

/* One ping-pong run of n round trips between ranks 0 and 1; other ranks idle. */
static void run_latency(struct ctx* c, int size, long n) {
    if (c->rank == 0) {
        for (long i = 0; i < n; ++i) {
            MPI_Send(c->sbuf, size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(c->rbuf, size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (c->rank == 1) {
        for (long i = 0; i < n; ++i) {
            MPI_Recv(c->rbuf, size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(c->sbuf, size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
        }
    }
}

/* n windows from `sender` to `receiver`, each acknowledged (osu_bw, osu_mbw_mr). */
static void run_windows(struct ctx* c, int size, long n, int sender, int receiver) {
    if (c->rank == sender) {
        for (long i = 0; i < n; ++i) {
            for (int w = 0; w < P2P_WINDOW; ++w) {
                MPI_Isend(c->sbuf, size, MPI_BYTE, receiver, TAG_DATA, MPI_COMM_WORLD, &c->reqs[w]);
            }
            MPI_Waitall(P2P_WINDOW, c->reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(c->rbuf, 4, MPI_BYTE, receiver, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (c->rank == receiver) {
        for (long i = 0; i < n; ++i) {
            for (int w = 0; w < P2P_WINDOW; ++w) {
                MPI_Irecv(c->rbuf, size, MPI_BYTE, sender, TAG_DATA, MPI_COMM_WORLD, &c->reqs[w]);
            }
            MPI_Waitall(P2P_WINDOW, c->reqs, MPI_STATUSES_IGNORE);
            MPI_Send(c->sbuf, 4, MPI_BYTE, sender, TAG_ACK, MPI_COMM_WORLD);
        }
    }
}

/* n windows in both directions at once between ranks 0 and 1 (osu_bibw). */
static void run_bibw(struct ctx* c, int size, long n) {
    if (c->rank > 1) {
        return;
    }
    const int peer = 1 - c->rank;
    for (long i = 0; i < n; ++i) {
        for (int w = 0; w < P2P_WINDOW; ++w) {
            MPI_Irecv(c->rbuf, size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &c->reqs[w]);
        }
        for (int w = 0; w < P2P_WINDOW; ++w) {
            MPI_Isend(c->sbuf, size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &c->reqs[P2P_WINDOW + w]);
        }
        MPI_Waitall(2 * P2P_WINDOW, c->reqs, MPI_STATUSES_IGNORE);
    }
}

/* One timed run of n iterations of `mode`; every rank calls it; the time is rank 0's. */
static double run_once(struct ctx* c, int mode, int size, long n) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    switch (mode) {
        case MODE_LATENCY:
            run_latency(c, size, n);
            break;
        case MODE_BANDWIDTH:
            run_windows(c, size, n, 0, 1);
            break;
        case MODE_BIBW:
            run_bibw(c, size, n);
            break;
        case MODE_MSGRATE: {
            const int pairs = c->nranks / 2;
            if (c->rank < pairs) {
                run_windows(c, size, n, c->rank, c->rank + pairs);
            } else if (c->rank < 2 * pairs) {
                run_windows(c, size, n, c->rank - pairs, c->rank);
            }
            MPI_Barrier(MPI_COMM_WORLD); /* the time covers every pair */
            break;
        }
        default:
            break;
    }
    return MPI_Wtime() - t0;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* The figure of one run of n iterations that took t seconds. */
static double figure(const struct ctx* c, int mode, long size, long n, double t) {
    switch (mode) {
        case MODE_LATENCY:
            return t * 1e6 / (2.0 * (double)n);
        case MODE_BANDWIDTH:
            return (double)size * P2P_WINDOW * (double)n / t / 1e6;
        case MODE_BIBW:
            return 2.0 * (double)size * P2P_WINDOW * (double)n / t / 1e6;
        default:
            return (double)(c->nranks / 2) * P2P_WINDOW * (double)n / t / 1e6;
    }
}

/* The rank whose data lands in this rank's receive buffer in `mode`, or -1 when this rank
 * receives no data (a pure sender: it gets 4-byte acks only, or it idles). */
static int data_source(const struct ctx* c, int mode) {
    const int pairs = mode == MODE_MSGRATE ? c->nranks / 2 : 1;
    switch (mode) {
        case MODE_LATENCY:
        case MODE_BIBW:
            return c->rank < 2 ? 1 - c->rank : -1;
        default:
            return c->rank >= pairs && c->rank < 2 * pairs ? c->rank - pairs : -1;
    }
}

/* Clears the receive buffer before a measurement and checks after it that every byte came
 * from the right sender (each rank's send buffer holds its own letter). Returns 0 when right. */
static int check_received(const struct ctx* c, int mode, long size, int clear) {
    const int from = data_source(c, mode);
    if (from < 0 || size == 0) {
        return 0;
    }
    if (clear) {
        memset(c->rbuf, 0, (size_t)size);
        return 0;
    }
    const char want = (char)('a' + from % 26);
    for (long i = 0; i < size; ++i) {
        if (c->rbuf[i] != want) {
            fprintf(stderr,
                    "p2p: rank %d: WRONG DATA after %ld-byte messages (mode %d): byte %ld is 0x%02x, expected '%c'\n",
                    c->rank, size, mode, i, (unsigned char)c->rbuf[i], want);
            return 1;
        }
    }
    return 0;
}

/* Measures one figure; returns nonzero when the data received was wrong (on any rank). */
static int measure(struct ctx* c, const struct options* o, int mode, long size) {
    check_received(c, mode, size, 1);
    /* Calibration: rank 0 decides, everybody follows (Bcast). The target count comes from the
     * fastest run so far (a run slowed down by a preemption does not end the calibration);
     * at least two runs, the first of them a warm-up. */
    long n = 1;
    int runs = 0;
    double best = 0; /* seconds per iteration, fastest run */
    for (;;) {
        const double t = run_once(c, mode, (int)size, n);
        long next = 0;
        if (c->rank == 0) {
            const double per = t / (double)n;
            best = runs == 0 || per < best ? per : best;
            const double want = best > 0 ? o->min_ms * 1e-3 / best : 1e12;
            if ((double)n >= want) {
                next = runs >= 1 ? 0 : n; /* long enough (the first run only warms up) */
            } else {
                double scale = 1.2 * want / (double)n;
                scale = scale < 2.0 ? 2.0 : (scale > 16.0 ? 16.0 : scale);
                next = (long)((double)n * scale);
            }
        }
        MPI_Bcast(&next, (int)sizeof next, MPI_BYTE, 0, MPI_COMM_WORLD);
        ++runs;
        if (next == 0) {
            break;
        }
        n = next;
    }

    double vals[64];
    const int reps = o->reps < 64 ? o->reps : 64;
    for (int r = 0; r < reps; ++r) {
        const double t = run_once(c, mode, (int)size, n);
        vals[r] = figure(c, mode, size, n, t);
    }
    /* Every rank checks its data; rank 0 learns of a failure through a 1-byte message each. */
    char bad = (char)check_received(c, mode, size, 0);
    if (c->rank != 0) {
        MPI_Send(&bad, 1, MPI_BYTE, 0, TAG_ACK + 1, MPI_COMM_WORLD);
        return bad;
    }
    for (int i = 1; i < c->nranks; ++i) {
        char b = 0;
        MPI_Recv(&b, 1, MPI_BYTE, i, TAG_ACK + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = (char)(bad | b);
    }
    if (bad) {
        fprintf(stderr, "p2p: %s: wrong data received with %ld-byte messages: figure left out\n", o->impl, size);
        return 1;
    }
    qsort(vals, (size_t)reps, sizeof *vals, cmp_double);
    const double med = reps % 2 ? vals[reps / 2] : (vals[reps / 2 - 1] + vals[reps / 2]) / 2;

    const char* metric = "latency";
    const char* unit = "us";
    char extra[160] = "";
    char what[160];
    switch (mode) {
        case MODE_LATENCY:
            snprintf(what, sizeof what, "ping-pong MPI_Send/MPI_Recv, half round trip (%ld round trips per run)", n);
            break;
        case MODE_BANDWIDTH:
            metric = "bandwidth";
            unit = "MB/s";
            snprintf(what, sizeof what, "window of %d MPI_Isend -> MPI_Irecv + ack, 10^6 B/s (%ld windows per run)",
                     P2P_WINDOW, n);
            break;
        case MODE_BIBW:
            metric = "bibw";
            unit = "MB/s";
            snprintf(what, sizeof what, "windows of %d Isend+Irecv both ways, sum of both directions (%ld per run)",
                     P2P_WINDOW, n);
            break;
        default:
            metric = "msgrate";
            unit = "Mmsg/s";
            snprintf(extra, sizeof extra, "\"ranks\": %d", c->nranks);
            snprintf(what, sizeof what, "%d pair(s), %d ranks, windows of %d Isend + ack, all pairs (%ld per run)",
                     c->nranks / 2, c->nranks, P2P_WINDOW, n);
            break;
    }
    if (o->variant[0] != '\0') {
        const size_t len = strlen(extra);
        snprintf(extra + len, sizeof extra - len, "%s\"variant\": \"%s\"", len > 0 ? ", " : "", o->variant);
    }
    printf("ROW\t%s\t%ld\t%s\t%.4f\t%s\t%.4f\t%.4f\t%s\t%s\n", metric, size, o->impl, med, unit, vals[0],
           vals[reps - 1], extra, what);
    fflush(stdout);
    fprintf(stderr, "%-9s %8ld B  %-8s %12.3f %s  [%.3f .. %.3f] n=%ld\n", metric, size, o->impl, med, unit, vals[0],
            vals[reps - 1], n);
    return 0;
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
    if (c.nranks < 2) {
        if (c.rank == 0) {
            fprintf(stderr, "p2p: needs at least 2 ranks\n");
        }
        MPI_Finalize();
        return 2;
    }
    long max_size = 4;
    for (int i = 0; i < o.nsizes; ++i) {
        max_size = o.sizes[i] > max_size ? o.sizes[i] : max_size;
    }
    void* s = NULL;
    void* r = NULL;
    if (posix_memalign(&s, 4096, (size_t)max_size) != 0 || posix_memalign(&r, 4096, (size_t)max_size) != 0) {
        fprintf(stderr, "p2p: rank %d: cannot allocate 2 x %ld bytes\n", c.rank, max_size);
        exit(1);
    }
    c.sbuf = s;
    c.rbuf = r;
    memset(c.sbuf, 'a' + c.rank % 26, (size_t)max_size);
    memset(c.rbuf, 0, (size_t)max_size);

    int failed = 0;
    static const int order[] = {MODE_LATENCY, MODE_BANDWIDTH, MODE_BIBW, MODE_MSGRATE};
    for (int m = 0; m < 4; ++m) {
        if (!(o.modes & order[m])) {
            continue;
        }
        for (int i = 0; i < o.nsizes; ++i) {
            /* A bandwidth of 0-byte messages is 0: the bandwidths start at 1 byte. */
            if (o.sizes[i] == 0 && (order[m] == MODE_BANDWIDTH || order[m] == MODE_BIBW)) {
                continue;
            }
            failed |= measure(&c, &o, order[m], o.sizes[i]);
        }
    }
    free(s);
    free(r);
    MPI_Finalize();
    return failed ? 1 : 0;
}
