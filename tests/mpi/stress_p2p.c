/* Point-to-point stress: every rank sends MSGS messages of random sizes (0 B to 192 KiB: eager and
 * rendezvous) with random tags to random ranks; receivers use wildcards for part of their
 * receives. Every rank can recompute what every other rank sends (per-sender seeded generator),
 * so each receiver knows what it must get, checks the content byte by byte, and checks that
 * messages of the same (source, tag) arrive in send order (MPI's non-overtaking rule).
 * Exit status 0 on success, 1 on the first error (with a message). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSGS 24
#define NTAGS 3
#define MAXBYTES (192 * 1024)

typedef struct {
    int dest, tag, bytes;
} plan_t;

static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void make_plan(int src, int size, plan_t *p) {
    uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(src + 1) * 0x100000001b3ULL;
    for (int i = 0; i < MSGS; ++i) {
        p[i].dest = (int)(next_rand(&s) % (uint64_t)size);
        p[i].tag = (int)(next_rand(&s) % NTAGS);
        uint64_t r = next_rand(&s);
        p[i].bytes = (r & 3) == 0 ? (int)(r % MAXBYTES) : (int)(r % 2048); /* mostly small */
        if (p[i].bytes < 8) p[i].bytes = 8;                                 /* room for the header */
    }
}

static unsigned char pattern(int src, int seq, int i) { return (unsigned char)(src * 31 + seq * 7 + i); }

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    plan_t *plan = malloc(sizeof(plan_t) * MSGS * (size_t)size);
    for (int s = 0; s < size; ++s) make_plan(s, size, plan + (size_t)s * MSGS);

    /* Send everything (non-blocking). Header: sender's global sequence number. */
    plan_t *mine = plan + (size_t)rank * MSGS;
    unsigned char *sbuf[MSGS];
    MPI_Request sreq[MSGS];
    for (int i = 0; i < MSGS; ++i) {
        sbuf[i] = malloc((size_t)mine[i].bytes);
        memcpy(sbuf[i], &i, sizeof(int));
        memcpy(sbuf[i] + 4, &rank, sizeof(int));
        for (int b = 8; b < mine[i].bytes; ++b) sbuf[i][b] = pattern(rank, i, b);
        MPI_Isend(sbuf[i], mine[i].bytes, MPI_BYTE, mine[i].dest, mine[i].tag, MPI_COMM_WORLD, &sreq[i]);
    }

    /* What do I receive? count per (source, tag), and the last sequence seen per (source, tag). */
    int expected = 0;
    for (int s = 0; s < size; ++s)
        for (int i = 0; i < MSGS; ++i) expected += plan[(size_t)s * MSGS + i].dest == rank;
    int *last_seq = malloc(sizeof(int) * (size_t)size * NTAGS);
    for (int i = 0; i < size * NTAGS; ++i) last_seq[i] = -1;
    unsigned char *rbuf = malloc(MAXBYTES);
    for (int got = 0; got < expected; ++got) {
        /* Alternate full wildcards, wildcard source, and probe-then-receive. */
        MPI_Status st;
        int mode = got % 3;
        if (mode == 0) {
            MPI_Recv(rbuf, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        } else if (mode == 1) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Recv(rbuf, MAXBYTES, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        } else {
            int flag = 0;
            while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            MPI_Recv(rbuf, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        }
        int n = 0, seq = -1, src = -1;
        MPI_Get_count(&st, MPI_BYTE, &n);
        memcpy(&seq, rbuf, sizeof(int));
        memcpy(&src, rbuf + 4, sizeof(int));
        if (src != st.MPI_SOURCE || seq < 0 || seq >= MSGS) {
            printf("rank %d: bad header (src %d seq %d) from %d\n", rank, src, seq, st.MPI_SOURCE);
            return 1;
        }
        plan_t *p = &plan[(size_t)src * MSGS + seq];
        if (p->dest != rank || p->tag != st.MPI_TAG || p->bytes != n) {
            printf("rank %d: message %d of %d: tag %d bytes %d, expected tag %d bytes %d dest %d\n", rank, seq, src,
                   st.MPI_TAG, n, p->tag, p->bytes, p->dest);
            return 1;
        }
        int *ls = &last_seq[src * NTAGS + st.MPI_TAG];
        if (seq <= *ls) {
            printf("rank %d: overtaking: message %d of rank %d tag %d after %d\n", rank, seq, src, st.MPI_TAG, *ls);
            return 1;
        }
        *ls = seq;
        for (int b = 8; b < n; ++b) {
            if (rbuf[b] != pattern(src, seq, b)) {
                printf("rank %d: byte %d of message %d from %d is wrong\n", rank, b, seq, src);
                return 1;
            }
        }
    }
    MPI_Waitall(MSGS, sreq, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Nothing may be left over. */
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (flag) {
        printf("rank %d: unexpected extra message\n", rank);
        return 1;
    }
    for (int i = 0; i < MSGS; ++i) free(sbuf[i]);
    free(plan);
    free(last_seq);
    free(rbuf);
    if (rank == 0) printf("stress_p2p: %d ranks x %d messages OK\n", size, MSGS);
    MPI_Finalize();
    return 0;
}
