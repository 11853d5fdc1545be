#include "state.h"

MPC_PL_HIDDEN long int random(void) { return mpc_pl_random_draw(); }
