/* libc functions with state of their own in glibc (one per process) get one per rank in a
 * privatized program (tools/privatized_libc): every rank seeds rand/random, the drand48 family
 * and strtok differently and draws from them in lock-step with the others, a barrier between
 * draws (so that ranks on one VP interleave and ranks on several VPs draw at the same time),
 * and must get the sequence a process of its own would: glibc's, computed here with the
 * reentrant functions on states of the test's own. Also: initstate/setstate switch a rank's
 * generator and back; seed48 returns the previous seed; localtime/gmtime/asctime/ctime give
 * each rank its own result buffers. Any rank count; exit status 0 on success. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRAWS 64

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "rank %d: line %d: check failed: %s\n", rank, __LINE__, #cond); \
            ++fails;                                                                        \
        }                                                                                   \
    } while (0)

int main(int argc, char **argv) {
    int rank = -1, size = 0, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* glibc's documented first values of rand() without srand (as after srand(1)): the
     * sequence every process starts with */
    if (rank == 0) {
        CHECK(rand() == 1804289383);
        CHECK(rand() == 846930886);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* the references: glibc's generators on states of the test's own */
    char ref_tab[128];
    struct random_data ref;
    memset(&ref, 0, sizeof ref);
    initstate_r(1000u + (unsigned)rank, ref_tab, sizeof ref_tab, &ref);
    struct drand48_data ref48;
    memset(&ref48, 0, sizeof ref48);
    srand48_r(7000L + rank, &ref48);

    srand(1000u + (unsigned)rank);
    srand48(7000L + rank);
    char text[128];
    snprintf(text, sizeof text, "r%d,a%d;b%d,,c%d", rank, rank * 3, rank * 5, rank * 7);
    char ref_text[128];
    memcpy(ref_text, text, sizeof text);
    char *ref_save = NULL;
    char *tok = strtok(text, ",;");
    char *ref_tok = strtok_r(ref_text, ",;", &ref_save);
    for (int i = 0; i < DRAWS; ++i) {
        int32_t want = 0;
        random_r(&ref, &want);
        const int got = i % 2 == 0 ? rand() : (int)random();
        CHECK(got == want);
        double d = 0.0, dwant = 0.0;
        long l = 0, lwant = 0;
        drand48_r(&ref48, &dwant);
        d = drand48();
        CHECK(d == dwant);
        lrand48_r(&ref48, &lwant);
        l = lrand48();
        CHECK(l == lwant);
        mrand48_r(&ref48, &lwant);
        l = mrand48();
        CHECK(l == lwant);
        if (ref_tok != NULL || tok != NULL) {
            CHECK(tok != NULL && ref_tok != NULL && strcmp(tok, ref_tok) == 0);
            tok = strtok(NULL, ",;");
            ref_tok = strtok_r(NULL, ",;", &ref_save);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK(tok == NULL && ref_tok == NULL);

    /* srandom: the same generator as rand's */
    srandom(42u + (unsigned)rank);
    srandom_r(42u + (unsigned)rank, &ref);
    int32_t want = 0;
    random_r(&ref, &want);
    CHECK(rand() == want);

    /* initstate/setstate: a TYPE_1 generator of the rank's own, then back to the old one */
    static char small_tab[32];
    char small_ref_tab[32];
    struct random_data small_ref;
    memset(&small_ref, 0, sizeof small_ref);
    char *old = initstate(5u + (unsigned)rank, small_tab, sizeof small_tab);
    CHECK(old != NULL);
    initstate_r(5u + (unsigned)rank, small_ref_tab, sizeof small_ref_tab, &small_ref);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; ++i) {
        random_r(&small_ref, &want);
        CHECK(random() == want);
    }
    CHECK(setstate(old) == small_tab);
    random_r(&ref, &want);
    CHECK(rand() == want);

    /* seed48 returns the previous seed; erand48/nrand48/jrand48 on the caller's xsubi */
    unsigned short s1[3] = {1, (unsigned short)rank, 3}, s2[3] = {4, 5, (unsigned short)rank};
    seed48(s1);
    unsigned short *prev = seed48(s2);
    CHECK(prev != NULL && prev[0] == s1[0] && prev[1] == s1[1] && prev[2] == s1[2]);
    unsigned short x[3] = {9, 8, (unsigned short)rank}, xr[3] = {9, 8, (unsigned short)rank};
    struct drand48_data d48b;
    memset(&d48b, 0, sizeof d48b);
    double e = 0.0;
    erand48_r(xr, &d48b, &e);
    CHECK(erand48(x) == e);
    CHECK(x[0] == xr[0] && x[1] == xr[1] && x[2] == xr[2]);

    /* localtime/gmtime/asctime/ctime: a rank's buffers hold its own time across a barrier */
    time_t t = (time_t)1700000000 + (time_t)rank * 86400 * 31;
    struct tm *g = gmtime(&t);
    struct tm gr;
    gmtime_r(&t, &gr);
    char *s = asctime(g);
    char sr[64];
    asctime_r(&gr, sr);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(g->tm_mday == gr.tm_mday && g->tm_mon == gr.tm_mon && g->tm_year == gr.tm_year);
    CHECK(strcmp(s, sr) == 0);
    struct tm lr;
    localtime_r(&t, &lr);
    char *c = ctime(&t);
    char cr[64];
    asctime_r(&lr, cr);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(strcmp(c, cr) == 0);

    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(total == 0 ? "libc_state: %d ranks ok\n" : "libc_state: FAILED\n", size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
