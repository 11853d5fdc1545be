/* The state of rand/random and their seeding functions (state.h). */
#include "state.h"

MPC_PL_HIDDEN mpc_pl_lock mpc_pl_random_lock;
MPC_PL_HIDDEN struct random_data mpc_pl_random_data;
static int32_t random_table[32]; /* 128 bytes: TYPE_3, glibc's default */
static int random_ready;

void mpc_pl_random_enter(void) {
    mpc_pl_take(&mpc_pl_random_lock);
    if (!random_ready) {
        initstate_r(1, (char*)random_table, sizeof random_table, &mpc_pl_random_data);
        random_ready = 1;
    }
}

int32_t mpc_pl_random_draw(void) {
    int32_t r = 0;
    mpc_pl_random_enter();
    random_r(&mpc_pl_random_data, &r);
    mpc_pl_give(&mpc_pl_random_lock);
    return r;
}

void mpc_pl_random_seed(unsigned int seed) {
    mpc_pl_random_enter();
    srandom_r(seed, &mpc_pl_random_data);
    mpc_pl_give(&mpc_pl_random_lock);
}
