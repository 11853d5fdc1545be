#include "state.h"

MPC_PL_HIDDEN long int random(void) {
    int32_t r = 0;
    mpc_pl_random_enter();
    random_r(&mpc_pl_random_data, &r);
    mpc_pl_give(&mpc_pl_random_lock);
    return r;
}
