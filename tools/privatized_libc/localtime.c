#include "state.h"

/* libmpc: tzset() and localtime_r() under one lock for the process (glibc's localtime reads TZ
 * again on every call; localtime_r need not). */
extern struct tm* mpc_image_localtime(const time_t* t, struct tm* out);

MPC_PL_HIDDEN struct tm* localtime(const time_t* t) { return mpc_image_localtime(t, &mpc_pl_tm); }
