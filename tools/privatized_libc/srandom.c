#include "state.h"

MPC_PL_HIDDEN void srandom(unsigned int seed) {
    mpc_pl_random_enter();
    srandom_r(seed, &mpc_pl_random_data);
    mpc_pl_give(&mpc_pl_random_lock);
}
