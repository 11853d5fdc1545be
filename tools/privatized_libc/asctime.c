#include "state.h"

MPC_PL_HIDDEN char* asctime(const struct tm* tm) { return asctime_r(tm, mpc_pl_asctime_buf); }
