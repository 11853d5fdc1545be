/* The cost of a full fence on this machine: MFENCE against a locked no-op on the stack (what
 * lib/fence.hpp's mpc::full_fence uses on x86-64) against a compiler barrier, each after a
 * store, 10^8 times, three repetitions. Plain C, no MPI:
 *   gcc -O2 fence_cost.c -o fence_cost && ./fence_cost */
#include <stdio.h>
#include <time.h>
#include <stdatomic.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
volatile long x;
int main(void){
  const long N=100000000;
  for (int rep=0;rep<3;rep++){
  double t0=now();
  for(long i=0;i<N;i++){ x=i; __asm__ volatile("mfence":::"memory"); }
  double t1=now();
  for(long i=0;i<N;i++){ x=i; __asm__ volatile("lock; orl $0,-8(%%rsp)":::"memory","cc"); }
  double t2=now();
  for(long i=0;i<N;i++){ x=i; __asm__ volatile("":::"memory"); }
  double t3=now();
  printf("mfence %.2f ns, lock or %.2f ns, none %.2f ns\n",(t1-t0)/N*1e9,(t2-t1)/N*1e9,(t3-t2)/N*1e9);
  }
}
