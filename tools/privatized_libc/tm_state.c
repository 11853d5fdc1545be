/* The struct tm of localtime/gmtime and the string of asctime/ctime (state.h). */
#include "state.h"

MPC_PL_HIDDEN struct tm mpc_pl_tm;
MPC_PL_HIDDEN char mpc_pl_asctime_buf[64];
