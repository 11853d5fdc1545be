/* Persistent requests, buffered sends, matched probes, cancel, Waitsome, generalized requests
 * and argument errors under MPI_ERRORS_RETURN. Exit status 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(c) do { if (!(c)) { printf("rank %d: check failed line %d: %s\n", rank, __LINE__, #c); return 1; } } while (0)
static int qfn(void* s, MPI_Status* st) { (void)s; st->MPI_SOURCE = 77; st->MPI_TAG = 78; st->MPI_ERROR = 0; return 0; }
static int ffn(void* s) { *(int*)s = 1; return 0; }
int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  /* persistent */
  int sv, rv; MPI_Request pr[2];
  MPI_Send_init(&sv, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &pr[0]);
  MPI_Recv_init(&rv, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &pr[1]);
  for (int it = 0; it < 10; ++it) { sv = rank * 100 + it; MPI_Startall(2, pr); MPI_Waitall(2, pr, MPI_STATUSES_IGNORE); CHECK(rv == left * 100 + it); CHECK(pr[0] != MPI_REQUEST_NULL); }
  MPI_Request_free(&pr[0]); MPI_Request_free(&pr[1]); CHECK(pr[0] == MPI_REQUEST_NULL);
  /* persistent requests whose derived types were freed right after the *_init call (MPI 3.1
   * section 4.1.9: the requests keep using them); the receive matches any source */
  {
    MPI_Datatype st_, rt_; int sv2[2], rv2[2]; MPI_Request q[2];
    MPI_Type_contiguous(2, MPI_INT, &st_); MPI_Type_commit(&st_);
    MPI_Type_dup(st_, &rt_);
    MPI_Send_init(sv2, 1, st_, right, 4, MPI_COMM_WORLD, &q[0]);
    MPI_Recv_init(rv2, 1, rt_, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &q[1]);
    MPI_Type_free(&st_); MPI_Type_free(&rt_); CHECK(st_ == MPI_DATATYPE_NULL);
    for (int it = 0; it < 5; ++it) {
      sv2[0] = rank; sv2[1] = it; rv2[0] = rv2[1] = -1;
      CHECK(MPI_Startall(2, q) == MPI_SUCCESS); MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
      CHECK(rv2[0] == left && rv2[1] == it);
    }
    MPI_Request_free(&q[0]); MPI_Request_free(&q[1]);
  }
  /* bsend */
  int bsz = 10 * (1000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD); void* bb = malloc(bsz);
  MPI_Buffer_attach(bb, bsz);
  int* big = malloc(1000 * sizeof(int)); for (int i = 0; i < 1000; ++i) big[i] = rank + i;
  for (int k = 0; k < 5; ++k) MPI_Bsend(big, 1000, MPI_INT, right, 2, MPI_COMM_WORLD);
  memset(big, 0, 1000 * sizeof(int));
  int* rb = malloc(1000 * sizeof(int));
  for (int k = 0; k < 5; ++k) { MPI_Recv(rb, 1000, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); CHECK(rb[999] == left + 999); }
  void* ba; int bs; MPI_Buffer_detach(&ba, &bs); CHECK(ba == bb && bs == bsz);
  /* mprobe */
  int m = rank; MPI_Send(&m, 1, MPI_INT, right, 3, MPI_COMM_WORLD);
  MPI_Message msg; MPI_Status st; MPI_Mprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &msg, &st);
  CHECK(st.MPI_SOURCE == left); int got = -1; MPI_Mrecv(&got, 1, MPI_INT, &msg, &st); CHECK(got == left && msg == MPI_MESSAGE_NULL);
  /* cancel */
  MPI_Request cr; int dummy; MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &cr);
  MPI_Cancel(&cr); MPI_Wait(&cr, &st); int canc = 0; MPI_Test_cancelled(&st, &canc); CHECK(canc == 1);
  /* cancel of sends: a synchronous and a large (rendezvous) send nobody receives are cancelled
   * and never arrive; a send already matched, and a small (eager, already complete) one, are
   * not cancelled and arrive. */
  enum { BIGN = 32768 };
  int* bigc = malloc(BIGN * sizeof(int)); for (int i = 0; i < BIGN; ++i) bigc[i] = rank;
  MPI_Request sc[2];
  MPI_Issend(&m, 1, MPI_INT, right, 998, MPI_COMM_WORLD, &sc[0]);
  MPI_Isend(bigc, BIGN, MPI_INT, right, 997, MPI_COMM_WORLD, &sc[1]);
  for (int i = 0; i < 2; ++i) {
    MPI_Cancel(&sc[i]); MPI_Wait(&sc[i], &st); canc = 0; MPI_Test_cancelled(&st, &canc); CHECK(canc == 1);
  }
  /* A cancelled send must withdraw that message only: an earlier message sent through the same
   * request object (freed, then reused by the next send) stays. */
  int early = rank + 1000, early_in = -1;
  MPI_Request rq; MPI_Isend(&early, 1, MPI_INT, right, 990, MPI_COMM_WORLD, &rq); MPI_Wait(&rq, &st);
  MPI_Issend(&m, 1, MPI_INT, right, 989, MPI_COMM_WORLD, &rq);
  MPI_Cancel(&rq); MPI_Wait(&rq, &st); canc = 0; MPI_Test_cancelled(&st, &canc); CHECK(canc == 1);
  MPI_Barrier(MPI_COMM_WORLD);  /* the early message has arrived (it went before the cancel) */
  int there = 0; MPI_Iprobe(left, 990, MPI_COMM_WORLD, &there, &st); CHECK(there == 1);
  MPI_Recv(&early_in, 1, MPI_INT, left, 990, MPI_COMM_WORLD, &st); CHECK(early_in == left + 1000);
  int matched = -1, eager_in = -1, mine = rank;
  MPI_Request mr, er, ms, es;
  MPI_Irecv(&matched, 1, MPI_INT, left, 996, MPI_COMM_WORLD, &mr);
  MPI_Barrier(MPI_COMM_WORLD);  /* every receive of tag 996 is posted */
  MPI_Issend(&mine, 1, MPI_INT, right, 996, MPI_COMM_WORLD, &ms);
  MPI_Isend(&mine, 1, MPI_INT, right, 995, MPI_COMM_WORLD, &es);
  MPI_Cancel(&ms); MPI_Cancel(&es);
  MPI_Wait(&ms, &st); canc = 1; MPI_Test_cancelled(&st, &canc); CHECK(canc == 0);
  MPI_Wait(&es, &st); canc = 1; MPI_Test_cancelled(&st, &canc); CHECK(canc == 0);
  MPI_Wait(&mr, &st); CHECK(matched == left);
  MPI_Irecv(&eager_in, 1, MPI_INT, left, 995, MPI_COMM_WORLD, &er); MPI_Wait(&er, &st); CHECK(eager_in == left);
  MPI_Barrier(MPI_COMM_WORLD);  /* every cancelled send has been withdrawn */
  int pending = 1; MPI_Iprobe(left, 998, MPI_COMM_WORLD, &pending, &st); CHECK(pending == 0);
  MPI_Iprobe(left, 997, MPI_COMM_WORLD, &pending, &st); CHECK(pending == 0);
  free(bigc);
  /* waitsome */
  MPI_Request ws[3]; int a[3], b[3] = {1,2,3};
  for (int i = 0; i < 3; ++i) MPI_Irecv(&a[i], 1, MPI_INT, left, 10 + i, MPI_COMM_WORLD, &ws[i]);
  for (int i = 2; i >= 0; --i) MPI_Send(&b[i], 1, MPI_INT, right, 10 + i, MPI_COMM_WORLD);
  int done = 0; while (done < 3) { int oc, idx[3]; MPI_Waitsome(3, ws, &oc, idx, MPI_STATUSES_IGNORE); CHECK(oc != MPI_UNDEFINED); done += oc; }
  CHECK(a[0] == 1 && a[2] == 3);
  int oc; int idx[3]; MPI_Waitsome(3, ws, &oc, idx, MPI_STATUSES_IGNORE); CHECK(oc == MPI_UNDEFINED);
  /* grequest */
  int freed = 0; MPI_Request g; MPI_Grequest_start(qfn, ffn, NULL, &freed, &g);
  int fl; MPI_Test(&g, &fl, &st); CHECK(fl == 0);
  MPI_Grequest_complete(g); MPI_Wait(&g, &st); CHECK(st.MPI_SOURCE == 77 && freed == 1);
  /* Sendrecv_replace around the ring, Alloc_mem, Status_set_cancelled */
  int rep[3] = {rank, rank + 1, rank + 2};
  MPI_Sendrecv_replace(rep, 3, MPI_INT, right, 20, left, 20, MPI_COMM_WORLD, &st);
  CHECK(rep[0] == left && rep[2] == left + 2 && st.MPI_SOURCE == left);
  double* mem = NULL; MPI_Alloc_mem(64 * sizeof(double), MPI_INFO_NULL, &mem); CHECK(mem != NULL); mem[63] = 1; MPI_Free_mem(mem);
  MPI_Status_set_cancelled(&st, 1); MPI_Test_cancelled(&st, &canc); CHECK(canc == 1);
  /* errors */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Send(&m, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
  CHECK(MPI_Send(&m, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
  CHECK(MPI_Send(&m, 1, MPI_INT, 0, -5, MPI_COMM_WORLD) == MPI_ERR_TAG);
  CHECK(MPI_Send(&m, 1, MPI_INT, 0, 0, 12345) == MPI_ERR_COMM);
  CHECK(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  MPI_Request bad = 0x2c00ffff; CHECK(MPI_Wait(&bad, &st) == MPI_ERR_REQUEST);
  CHECK(MPI_Bsend(&m, 1, MPI_INT, right, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  CHECK(MPI_Allreduce(&m, &m, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  free(big); free(rb); free(bb);
  if (rank == 0) printf("OK %d\n", size);
  return 0;
}
