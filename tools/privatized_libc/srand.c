#include "state.h"

MPC_PL_HIDDEN void srand(unsigned int seed) { mpc_pl_random_seed(seed); }
