#include "state.h"

/* Returns the previous seed (glibc: kept in the state's __old_x). */
MPC_PL_HIDDEN unsigned short int* seed48(unsigned short int seed16v[3]) {
    mpc_pl_take(&mpc_pl_d48_lock);
    seed48_r(seed16v, &mpc_pl_d48);
    mpc_pl_give(&mpc_pl_d48_lock);
    return mpc_pl_d48.__old_x;
}
