#include "state.h"

MPC_PL_HIDDEN void lcong48(unsigned short int param[7]) {
    mpc_pl_take(&mpc_pl_d48_lock);
    lcong48_r(param, &mpc_pl_d48);
    mpc_pl_give(&mpc_pl_d48_lock);
}
