#include "state.h"

MPC_PL_HIDDEN long int nrand48(unsigned short int xsubi[3]) {
    long int r = 0;
    mpc_pl_take(&mpc_pl_d48_lock);
    nrand48_r(xsubi, &mpc_pl_d48, &r);
    mpc_pl_give(&mpc_pl_d48_lock);
    return r;
}
