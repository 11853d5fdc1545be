/* <mpc.h> is plain C99: this file is compiled with -std=c99 -pedantic -Werror and also checks,
 * at run time, the calls that are meaningful while the runtime is not running, then a task
 * (MPC_Task_create starts the runtime in a plain program). */
#include <mpc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* Returns a block of its own heap, which main frees. */
static void *double_it(void *arg) {
    int *out = malloc(sizeof *out);
    if (out != NULL) {
        *out = 2 * *(int *)arg;
    }
    return out;
}

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "mpc_h_c99: FAILED: %s\n", what);
        ++failures;
    }
}

int main(void) {
    char expected[32];
    const char *v = MPC_Version();
    sprintf(expected, "%d.%d.%d", MPC_VERSION_MAJOR, MPC_VERSION_MINOR, MPC_VERSION_PATCH);
    check(v != NULL, "MPC_Version() is not NULL");
    check(v != NULL && strcmp(v, expected) == 0, "MPC_Version() matches MPC_VERSION_*");
    check(MPC_Vp_count() == 0, "MPC_Vp_count() is 0 before the runtime starts");
    check(MPC_Vp_self() == -1, "MPC_Vp_self() is -1 outside the runtime");
    MPC_Yield(); /* does nothing outside a ULT */
    check(MPC_Move_to_vp(0) == MPC_ERR_NOT_INIT, "MPC_Move_to_vp() returns MPC_ERR_NOT_INIT when the runtime is not running");
    check(MPC_SUCCESS == 0 && MPC_ERR_ARG != MPC_SUCCESS && MPC_ERR_NOT_INIT != MPC_SUCCESS,
          "return codes are distinct from MPC_SUCCESS");
    {
        MPC_Task t = NULL;
        void *r = NULL;
        int in = 21;
        check(MPC_Task_create(NULL, double_it, &in) == MPC_ERR_ARG, "MPC_Task_create(NULL, ...) is MPC_ERR_ARG");
        check(MPC_Task_create(&t, NULL, &in) == MPC_ERR_ARG, "MPC_Task_create(&t, NULL, ...) is MPC_ERR_ARG");
        check(MPC_Task_join(NULL, &r) == MPC_ERR_ARG, "MPC_Task_join(NULL, ...) is MPC_ERR_ARG");
        check(MPC_Vp_count() == 0, "a refused MPC_Task_create() does not start the runtime");
        /* A task from a plain C program: the first call starts the runtime. */
        check(MPC_Task_create(&t, double_it, &in) == MPC_SUCCESS, "MPC_Task_create() from a plain program");
        check(MPC_Vp_count() > 0, "MPC_Task_create() started the runtime");
        check(t != NULL && MPC_Task_join(t, &r) == MPC_SUCCESS, "MPC_Task_join()");
        check(r != NULL && *(int *)r == 42, "MPC_Task_join() returns what the task returned");
        check(MPC_Task_join(t, &r) == MPC_ERR_ARG, "a second MPC_Task_join() is MPC_ERR_ARG");
        free(r);
    }
    if (failures == 0) {
        printf("mpc_h_c99: MPC_Version() = %s\n", v);
    }
    return failures == 0 ? 0 : 1;
}
