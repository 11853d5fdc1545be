/* The installed C header and library, from C. */
#include <mpc.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    if (strcmp(MPC_Version(), "0.1.0") != 0 || MPC_Vp_count() != 0 || MPC_Move_to_vp(0) != MPC_ERR_NOT_INIT) {
        return 1;
    }
    printf("c consumer OK\n");
    return 0;
}
