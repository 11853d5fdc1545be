/* The state of the drand48 family (state.h). */
#include "state.h"

MPC_PL_HIDDEN mpc_pl_lock mpc_pl_d48_lock;
MPC_PL_HIDDEN struct drand48_data mpc_pl_d48;
