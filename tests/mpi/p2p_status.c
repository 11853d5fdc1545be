/* The MPI_ERROR field of a status (MPI 3.1 section 3.2.5): "message-passing calls do not modify"
 * it; only the calls that return several statuses set it, in every status, and only when they
 * return MPI_ERR_IN_STATUS (section 3.7.5). Every call that fills one status (receives, waits
 * and tests of all kinds, probes, matched probes and receives, Sendrecv, Request_get_status,
 * MPI_PROC_NULL included) must leave a sentinel there (MPICH's threads/pt2pt/mt_*probe* tests
 * check it), but an empty status (MPI_REQUEST_NULL, section 3.7.3) says MPI_SUCCESS (MPICH's
 * rqstatus); Waitall and Testsome with a truncated receive must
 * say MPI_SUCCESS or MPI_ERR_TRUNCATE in each status. Ranks in pairs (0-1, 2-3, ...); an odd
 * last rank only runs the MPI_PROC_NULL part. Exit status 0 on success. */
#include <mpi.h>
#include <stdio.h>

#define SENTINEL 12345
/* Both macros count into a local `fails` (no mutable globals: the ranks are threads). */
#define KEPT(what, st)                                                                    \
    do {                                                                                  \
        if ((st).MPI_ERROR != SENTINEL) {                                                 \
            printf("rank %d: %s set MPI_ERROR to %d\n", rank, what, (st).MPI_ERROR);      \
            ++fails;                                                                      \
        }                                                                                 \
        (st).MPI_ERROR = SENTINEL;                                                        \
    } while (0)
#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            printf("rank %d: check failed line %d: %s\n", rank, __LINE__, #c);            \
            ++fails;                                                                      \
        }                                                                                 \
    } while (0)

static int receiver(int rank, int peer) {
    int fails = 0;
    MPI_Status st = {0};
    MPI_Request r;
    MPI_Message m;
    int v = 0, flag = 0, idx = 0, outc = 0, ind = 0;
    st.MPI_ERROR = SENTINEL;
    MPI_Recv(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st); KEPT("MPI_Recv", st);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 0 && v == 100);
    MPI_Irecv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &r); MPI_Wait(&r, &st); KEPT("MPI_Wait", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &r);
    for (flag = 0; !flag;) MPI_Test(&r, &flag, &st);
    KEPT("MPI_Test", st);
    MPI_Probe(peer, 3, MPI_COMM_WORLD, &st); KEPT("MPI_Probe", st);
    for (flag = 0; !flag;) MPI_Iprobe(peer, 3, MPI_COMM_WORLD, &flag, &st);
    KEPT("MPI_Iprobe", st);
    MPI_Recv(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &st); KEPT("MPI_Recv", st);
    MPI_Mprobe(peer, 4, MPI_COMM_WORLD, &m, &st); KEPT("MPI_Mprobe", st);
    MPI_Mrecv(&v, 1, MPI_INT, &m, &st); KEPT("MPI_Mrecv", st);
    CHECK(st.MPI_TAG == 4 && v == 104);
    for (flag = 0; !flag;) MPI_Improbe(peer, 5, MPI_COMM_WORLD, &flag, &m, &st);
    KEPT("MPI_Improbe", st);
    MPI_Imrecv(&v, 1, MPI_INT, &m, &r); MPI_Wait(&r, &st); KEPT("MPI_Imrecv + MPI_Wait", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r); MPI_Waitany(1, &r, &idx, &st); KEPT("MPI_Waitany", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &r);
    for (flag = 0; !flag;) MPI_Testany(1, &r, &idx, &flag, &st);
    KEPT("MPI_Testany", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r); MPI_Waitall(1, &r, &st); KEPT("MPI_Waitall", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &r); MPI_Waitsome(1, &r, &outc, &ind, &st);
    KEPT("MPI_Waitsome", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &r);
    for (flag = 0; !flag;) MPI_Request_get_status(r, &flag, &st);
    KEPT("MPI_Request_get_status", st);
    MPI_Wait(&r, &st); KEPT("MPI_Wait", st);
    MPI_Irecv(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &r);
    for (flag = 0; !flag;) MPI_Testall(1, &r, &flag, &st);
    KEPT("MPI_Testall", st);
    CHECK(v == 111);

    /* several statuses, one receive truncated: every status says its error */
    MPI_Status sts[3];
    MPI_Request rs[3];
    int w[3] = {0, 0, 0}, big[2];
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < 3; ++i) sts[i].MPI_ERROR = SENTINEL;
        for (int i = 0; i < 3; ++i) MPI_Irecv(&w[i], 1, MPI_INT, peer, 20 + i, MPI_COMM_WORLD, &rs[i]);
        MPI_Send(big, 0, MPI_INT, peer, 30, MPI_COMM_WORLD); /* go */
        if (pass == 0) {
            CHECK(MPI_Waitall(3, rs, sts) == MPI_ERR_IN_STATUS);
            CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_TRUNCATE &&
                  sts[2].MPI_ERROR == MPI_SUCCESS);
        } else {
            /* each call's statuses: kept when it returns MPI_SUCCESS, set when MPI_ERR_IN_STATUS */
            int got = 0, truncated = 0, indices[3];
            while (got < 3) {
                int n = 0;
                for (int i = 0; i < 3; ++i) sts[i].MPI_ERROR = SENTINEL;
                int e = MPI_Testsome(3, rs, &n, indices, sts);
                CHECK(e == MPI_SUCCESS || e == MPI_ERR_IN_STATUS);
                for (int k = 0; k < n; ++k, ++got) {
                    int want = e == MPI_SUCCESS ? SENTINEL : indices[k] == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
                    CHECK(sts[k].MPI_ERROR == want);
                    truncated += indices[k] == 1 && e == MPI_ERR_IN_STATUS;
                }
            }
            CHECK(truncated == 1);
        }
        CHECK(w[0] == 20 && w[2] == 22);
    }
    return fails;
}

static void sender(int peer) {
    int v, big[2] = {21, 21}, go;
    for (int i = 0; i < 12; ++i) {
        v = 100 + i;
        MPI_Send(&v, 1, MPI_INT, peer, i, MPI_COMM_WORLD);
    }
    for (int pass = 0; pass < 2; ++pass) {
        MPI_Recv(&go, 0, MPI_INT, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v = 20;
        MPI_Send(&v, 1, MPI_INT, peer, 20, MPI_COMM_WORLD);
        MPI_Send(big, 2, MPI_INT, peer, 21, MPI_COMM_WORLD); /* 2 ints into room for 1 */
        v = 22;
        MPI_Send(&v, 1, MPI_INT, peer, 22, MPI_COMM_WORLD);
    }
}

int main(int argc, char** argv) {
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = rank ^ 1;
    if (peer < size) {
        if (rank % 2) {
            fails += receiver(rank, peer);
        } else {
            sender(peer);
        }
        MPI_Status st;
        int v = rank, got = -1;
        st.MPI_ERROR = SENTINEL;
        MPI_Sendrecv(&v, 1, MPI_INT, peer, 40, &got, 1, MPI_INT, peer, 40, MPI_COMM_WORLD, &st);
        KEPT("MPI_Sendrecv", st);
        CHECK(got == peer);
        MPI_Sendrecv_replace(&v, 1, MPI_INT, peer, 41, peer, 41, MPI_COMM_WORLD, &st);
        KEPT("MPI_Sendrecv_replace", st);
    }
    /* MPI_PROC_NULL: MPI_ERROR kept */
    MPI_Status st;
    MPI_Request r;
    MPI_Message m;
    int v = 0, flag = 0;
    st.MPI_ERROR = SENTINEL;
    MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st); KEPT("MPI_Recv(MPI_PROC_NULL)", st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st); KEPT("MPI_Probe(MPI_PROC_NULL)", st);
    MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st); KEPT("MPI_Iprobe(MPI_PROC_NULL)", st);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st); KEPT("MPI_Mprobe(MPI_PROC_NULL)", st);
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    MPI_Mrecv(&v, 1, MPI_INT, &m, &st); KEPT("MPI_Mrecv(MPI_MESSAGE_NO_PROC)", st);
    MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, &st); KEPT("MPI_Wait(MPI_PROC_NULL)", st);
    /* an empty status (MPI 3.1 section 3.7.3) says MPI_SUCCESS (MPICH's rqstatus) */
    r = MPI_REQUEST_NULL;
    MPI_Wait(&r, &st);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && st.MPI_ERROR == MPI_SUCCESS);
    st.MPI_ERROR = SENTINEL;
    MPI_Test(&r, &flag, &st);
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && st.MPI_ERROR == MPI_SUCCESS);
    st.MPI_ERROR = SENTINEL;
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    CHECK(flag == 1 && st.MPI_ERROR == MPI_SUCCESS);
    MPI_Finalize();
    if (fails == 0 && rank == 0) printf("OK %d\n", size);
    return fails != 0;
}
