#include "state.h"

MPC_PL_HIDDEN long int mrand48(void) {
    long int r = 0;
    mpc_pl_take(&mpc_pl_d48_lock);
    jrand48_r(mpc_pl_d48.__x, &mpc_pl_d48, &r);
    mpc_pl_give(&mpc_pl_d48_lock);
    return r;
}
