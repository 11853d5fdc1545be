#include "state.h"

/* Returns the previous state array (glibc: the word before the generator's table). */
MPC_PL_HIDDEN char* initstate(unsigned int seed, char* statebuf, size_t statelen) {
    mpc_pl_random_enter();
    char* old = (char*)&mpc_pl_random_data.state[-1];
    if (initstate_r(seed, statebuf, statelen, &mpc_pl_random_data) < 0) {
        old = NULL;
    }
    mpc_pl_give(&mpc_pl_random_lock);
    return old;
}
