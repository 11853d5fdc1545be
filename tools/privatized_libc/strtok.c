#include <string.h>

#include "state.h"

static char* strtok_next; /* where the next strtok(NULL, ...) goes on */

MPC_PL_HIDDEN char* strtok(char* str, const char* delim) { return strtok_r(str, delim, &strtok_next); }
