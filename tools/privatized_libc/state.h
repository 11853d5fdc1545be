/**
 * \file state.h
 * libmpc_image_libc.a: libc functions whose state glibc keeps in one place per process (rand,
 * random, the drand48 family, strtok, localtime/gmtime/asctime/ctime), compiled into each
 * privatized program (mpc_cc's default, docs/privatization.md) so that their state is one of the
 * program's globals and every rank, which runs its own copy of the program, has its own: in
 * processes, each MPI rank has its own libc. Every function is glibc's reentrant variant on that
 * state, so a rank gets the same numbers as a process would (srand(s) then rand() gives glibc's
 * sequence for s). The archive is linked normally (not as a whole archive), one function per
 * member, after the program's own objects: a program that defines one of these functions keeps
 * its own. Symbols are hidden: only the program's own calls reach them; a shared library it
 * loads still calls libc's. A lock per family keeps a rank's plain threads
 * (MPI_THREAD_MULTIPLE) as safe as glibc's own lock does.
 */
#ifndef MPC_PRIVATIZED_LIBC_STATE_H
#define MPC_PRIVATIZED_LIBC_STATE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define MPC_PL_HIDDEN __attribute__((visibility("hidden")))

/* A lock of one family of functions: one byte, taken with an atomic exchange. */
typedef struct {
    char held;
} mpc_pl_lock;
static inline void mpc_pl_take(mpc_pl_lock* l) {
    while (__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&l->held, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    }
}
static inline void mpc_pl_give(mpc_pl_lock* l) { __atomic_store_n(&l->held, 0, __ATOMIC_RELEASE); }

/* rand, srand, random, srandom, initstate, setstate: glibc's one generator (TYPE_3 until
 * initstate says otherwise), initially as after initstate(1, ..., 128) like glibc's table. */
extern MPC_PL_HIDDEN mpc_pl_lock mpc_pl_random_lock;
extern MPC_PL_HIDDEN struct random_data mpc_pl_random_data;
/* Takes the lock and sets the generator up on first use. */
MPC_PL_HIDDEN void mpc_pl_random_enter(void);
/* The generator's next number, and its seeding (rand and random, srand and srandom). */
MPC_PL_HIDDEN int32_t mpc_pl_random_draw(void);
MPC_PL_HIDDEN void mpc_pl_random_seed(unsigned int seed);

/* drand48 and its family: a zeroed drand48_data is glibc's initial state. */
extern MPC_PL_HIDDEN mpc_pl_lock mpc_pl_d48_lock;
extern MPC_PL_HIDDEN struct drand48_data mpc_pl_d48;

/* localtime and gmtime return one struct tm; asctime and ctime one string (as glibc's). */
extern MPC_PL_HIDDEN struct tm mpc_pl_tm;
extern MPC_PL_HIDDEN char mpc_pl_asctime_buf[64];

#endif
