#include "state.h"

MPC_PL_HIDDEN void srand48(long int seedval) {
    mpc_pl_take(&mpc_pl_d48_lock);
    srand48_r(seedval, &mpc_pl_d48);
    mpc_pl_give(&mpc_pl_d48_lock);
}
