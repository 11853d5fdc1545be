/* Checks shared by the group/topology/attribute/info/error-handler tests. No mutable globals
 * (the ranks of one process share them until globals are privatized): each test function keeps
 * `fails` and `rank` as locals and returns its failure count. */
#ifndef MPC_TEST_GROUPS_CHECK_H
#define MPC_TEST_GROUPS_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond); \
            ++fails;                                                                             \
        }                                                                                        \
    } while (0)

/* `call` must fail with error class `cls` (MPI_ERRORS_RETURN must be in effect). */
#define CHECK_CLASS(call, cls)                                                                    \
    do {                                                                                          \
        int e_ = (call);                                                                          \
        int c_ = -1;                                                                              \
        MPI_Error_class(e_, &c_);                                                                 \
        if (c_ != (cls)) {                                                                        \
            fprintf(stderr, "rank %d: %s:%d: %s returned %d (class %d), expected class %d (%s)\n", rank, \
                    __FILE__, __LINE__, #call, e_, c_, (cls), #cls);                              \
            ++fails;                                                                              \
        }                                                                                         \
    } while (0)

#define CHECK_OK(call) CHECK_CLASS(call, MPI_SUCCESS)

#endif
