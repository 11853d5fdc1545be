#include "state.h"

/* asctime(localtime(t)), as glibc's: the same struct tm and string. */
MPC_PL_HIDDEN char* ctime(const time_t* t) {
    struct tm* tm = localtime(t);
    return tm != NULL ? asctime(tm) : NULL;
}
