#include "state.h"

MPC_PL_HIDDEN char* setstate(char* statebuf) {
    mpc_pl_random_enter();
    char* old = (char*)&mpc_pl_random_data.state[-1];
    if (setstate_r(statebuf, &mpc_pl_random_data) < 0) {
        old = NULL;
    }
    mpc_pl_give(&mpc_pl_random_lock);
    return old;
}
