/* Point-to-point semantics: a ring with MPI_Sendrecv, eager completion of small standard sends
 * before the receive is posted, rendezvous of large ones with MPI_ANY_SOURCE, MPI_Ssend waiting
 * for the match, 40 large messages in flight received in reverse order, truncation
 * (MPI_ERR_TRUNCATE, nothing written past the buffer; small and large), MPI_PROC_NULL,
 * Waitany/Testany, and error classes of bad arguments. Exit status 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            printf("rank %d: line %d: check failed: %s\n", rank, __LINE__, #c);   \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* ring */
    int token = rank, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    CHECK(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 7);

    /* eager: the small send completes although the receive is posted only after a barrier */
    int small = 1234 + rank;
    MPI_Send(&small, 1, MPI_INT, right, 8, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&got, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &st);
    CHECK(got == 1234 + left);

    /* rendezvous with wildcards: 1 MiB from every rank to rank 0 */
    int n = 1 << 20;
    char *buf = malloc((size_t)n);
    if (rank == 0) {
        for (int i = 1; i < size; ++i) {
            MPI_Recv(buf, n, MPI_CHAR, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
            int c = 0;
            MPI_Get_count(&st, MPI_CHAR, &c);
            CHECK(c == n && buf[0] == (char)st.MPI_SOURCE && buf[n - 1] == (char)st.MPI_SOURCE);
        }
    } else {
        memset(buf, rank, (size_t)n);
        MPI_Send(buf, n, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
    }

    /* 40 large messages in flight at once from rank 1 to rank 0 (more than a process's 32
     * shared-copy descriptors), each its own bytes and an odd length, received in the reverse
     * order of their tags, then a large one truncated: MPI_ERR_TRUNCATE, the bytes that fit,
     * nothing written past the buffer */
    if (size >= 2 && rank < 2) {
        enum { many = 40 };
        const int len = 3 * 64 * 1024 + 123;
        char *big = malloc((size_t)many * (size_t)(len + 1));
        MPI_Request rs[many];
        CHECK(big != NULL);
        for (int i = 0; i < many; ++i) {
            char *m = big + (size_t)i * (size_t)(len + 1);
            if (rank == 1) {
                for (int k = 0; k < len; ++k) m[k] = (char)(i * 7 + k % 251);
                MPI_Isend(m, len, MPI_CHAR, 0, 100 + i, MPI_COMM_WORLD, &rs[i]);
            } else {
                m[len] = 'z';
                MPI_Irecv(m, len, MPI_CHAR, 1, 100 + many - 1 - i, MPI_COMM_WORLD, &rs[i]);
            }
        }
        MPI_Waitall(many, rs, MPI_STATUSES_IGNORE);
        for (int i = 0; rank == 0 && i < many; ++i) {
            const char *m = big + (size_t)i * (size_t)(len + 1);
            const int tag = many - 1 - i;
            int ok = m[len] == 'z';
            for (int k = 0; k < len && ok; ++k) ok = m[k] == (char)(tag * 7 + k % 251);
            CHECK(ok);
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rank == 1) {
            MPI_Send(big, len, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
        } else {
            const int room = len - 1000;
            memset(big, 0, (size_t)len);
            int e = MPI_Recv(big, room, MPI_CHAR, 1, 99, MPI_COMM_WORLD, &st);
            CHECK(e == MPI_ERR_TRUNCATE);
            int ok = 1;
            for (int k = 0; k < room && ok; ++k) ok = big[k] == (char)(k % 251); /* message 0's bytes */
            CHECK(ok && big[room] == 0 && big[len - 1] == 0);
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        free(big);
    }

    /* Issend does not complete before the receive is posted */
    if (size >= 2 && rank < 2) {
        if (rank == 0) {
            MPI_Request r;
            int flag = 0;
            MPI_Issend(&small, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &r);
            for (int i = 0; i < 100; ++i) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            CHECK(flag == 0);
            MPI_Send(&small, 0, MPI_INT, 1, 11, MPI_COMM_WORLD); /* tells rank 1 to receive */
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&got, 0, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&got, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }

    /* truncation: 4 ints into room for 2, sentinels around the buffer stay intact */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size >= 2 && rank == 1) {
        int x[4] = {1, 2, 3, 4};
        MPI_Send(x, 4, MPI_INT, 0, 12, MPI_COMM_WORLD);
    }
    if (size >= 2 && rank == 0) {
        int y[4] = {-1, 0, 0, -1};
        int e = MPI_Recv(&y[1], 2, MPI_INT, 1, 12, MPI_COMM_WORLD, &st);
        CHECK(e == MPI_ERR_TRUNCATE);
        CHECK(y[0] == -1 && y[1] == 1 && y[2] == 2 && y[3] == -1);
    }

    /* MPI_PROC_NULL */
    CHECK(MPI_Send(&token, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);

    /* Waitany / Testany */
    MPI_Request rq[2];
    int a = -1, b = -1, idx = -1, flag = 0;
    MPI_Irecv(&a, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&b, 1, MPI_INT, left, 14, MPI_COMM_WORLD, &rq[1]);
    MPI_Send(&token, 1, MPI_INT, right, 14, MPI_COMM_WORLD);
    MPI_Waitany(2, rq, &idx, &st);
    CHECK(idx == 1 && b == left && rq[1] == MPI_REQUEST_NULL);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody sends tag 13 before every Waitany has returned */
    MPI_Send(&token, 1, MPI_INT, right, 13, MPI_COMM_WORLD);
    while (!flag) MPI_Testany(2, rq, &idx, &flag, &st);
    CHECK(idx == 0 && a == left);
    MPI_Testany(2, rq, &idx, &flag, &st);
    CHECK(flag == 1 && idx == MPI_UNDEFINED);

    /* bad arguments: each gets its class */
    CHECK(MPI_Send(&token, 1, MPI_INT, size, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
    CHECK(MPI_Send(&token, 1, MPI_INT, -7, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
    CHECK(MPI_Recv(&got, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st) == MPI_ERR_RANK);
    CHECK(MPI_Send(&token, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
    CHECK(MPI_Send(&token, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
    CHECK(MPI_Send(&token, 1, MPI_INT, 0, -3, MPI_COMM_WORLD) == MPI_ERR_TAG);
    CHECK(MPI_Recv(&got, 1, MPI_INT, 0, -3, MPI_COMM_WORLD, &st) == MPI_ERR_TAG);
    CHECK(MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_NULL) == MPI_ERR_COMM);
    CHECK(MPI_Send(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
    MPI_Request bogus = MPI_COMM_WORLD; /* not a request handle */
    CHECK(MPI_Wait(&bogus, &st) == MPI_ERR_REQUEST);
    CHECK(MPI_Get_count(&st, MPI_DATATYPE_NULL, &got) == MPI_ERR_TYPE);

    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("p2p_basic: %d ranks OK\n", size);
    return 0;
}
