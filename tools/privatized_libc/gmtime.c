#include "state.h"

MPC_PL_HIDDEN struct tm* gmtime(const time_t* t) { return gmtime_r(t, &mpc_pl_tm); }
