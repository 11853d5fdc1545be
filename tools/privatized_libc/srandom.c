#include "state.h"

MPC_PL_HIDDEN void srandom(unsigned int seed) { mpc_pl_random_seed(seed); }
