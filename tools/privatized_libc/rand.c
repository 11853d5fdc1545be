#include "state.h"

MPC_PL_HIDDEN int rand(void) { return mpc_pl_random_draw(); }
