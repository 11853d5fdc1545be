/* Helpers of the generated Fortran wrappers (fortran_bindings.c, see gen.py): the special
 * addresses of the calling rank, and CHARACTER <-> C string conversions (gfortran's ABI: a
 * hidden size_t length per CHARACTER argument, blank padding, no NUL). Internal to libmpc. */
#ifndef MPC_FORTRAN_SUPPORT_H
#define MPC_FORTRAN_SUPPORT_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The addresses of the COMMON blocks that hold MPI_BOTTOM, MPI_IN_PLACE, ... in the calling
 * rank's copy of the program (each privatized rank has its own copy of the COMMON blocks). A
 * block the program does not have gets a private address no argument can equal. */
struct mpc_f_sentinels {
    const void *bottom;
    const void *in_place;
    const void *status_ignore;
    const void *statuses_ignore;
    const void *errcodes_ignore;
    const void *unweighted;
    const void *weights_empty;
};

/* The calling rank's (looked up on its first call, then kept with the rank). */
__attribute__((visibility("hidden"))) const struct mpc_f_sentinels *mpc_f_sentinels_get(void);

static inline void *mpc_f_choice(void *p, const struct mpc_f_sentinels *s) {
    if (p == s->in_place) {
        return MPI_IN_PLACE;
    }
    return p == s->bottom ? MPI_BOTTOM : p;
}
static inline void *mpc_f_status(void *p, const struct mpc_f_sentinels *s) {
    return p == s->status_ignore ? MPI_STATUS_IGNORE : p;
}
static inline void *mpc_f_statuses(void *p, const struct mpc_f_sentinels *s) {
    return p == s->statuses_ignore ? MPI_STATUSES_IGNORE : p;
}
static inline void *mpc_f_weights(void *p, const struct mpc_f_sentinels *s) {
    if (p == s->unweighted) {
        return MPI_UNWEIGHTED;
    }
    return p == s->weights_empty ? MPI_WEIGHTS_EMPTY : p;
}

/* A NUL-terminated copy of a Fortran string without its trailing blanks (malloc'ed), or NULL
 * when out of memory. */
__attribute__((visibility("hidden"))) char *mpc_f_str_in(const char *s, size_t len);
/* mpc_f_str_in() without the leading blanks either (info keys and values). */
__attribute__((visibility("hidden"))) char *mpc_f_str_in_trimmed(const char *s, size_t len);
/* A zeroed buffer for a C call to fill: max(len, MPI_MAX_INFO_VAL) + 1 bytes, or NULL. */
__attribute__((visibility("hidden"))) char *mpc_f_str_buffer(size_t len);
/* Copies the C string c into the Fortran string s of length len, blank-padded, when rc is
 * MPI_SUCCESS; frees c. */
__attribute__((visibility("hidden"))) void mpc_f_str_out(char *s, size_t len, char *c, int rc);
/* LOGICAL results: gfortran's .TRUE. is 1, C's true any non-zero int. */
static inline void mpc_f_logicals_out(MPI_Fint *p, MPI_Fint n) {
    for (MPI_Fint i = 0; i < n; ++i) {
        p[i] = p[i] != 0;
    }
}
/* Request indices: C counts from 0, Fortran from 1; MPI_UNDEFINED (no request) stays. */
static inline void mpc_f_indices_out(MPI_Fint *p, MPI_Fint n) {
    if (n == MPI_UNDEFINED) {
        return;
    }
    for (MPI_Fint i = 0; i < n; ++i) {
        if (p[i] != MPI_UNDEFINED) {
            p[i] += 1;
        }
    }
}
/* An attribute as Fortran sees it: the predefined ones (MPI_TAG_UB...) point to an int, which
 * Fortran gets by value; the others are the value a Fortran program stored. */
__attribute__((visibility("hidden"))) MPI_Aint mpc_f_attr_value(int keyval, void *attr);

/* The calls with Fortran callbacks (callbacks.cpp): the arguments of the PMPI_ call, the
 * callbacks being Fortran procedures and extra_state the Fortran extra state's value. */
__attribute__((visibility("hidden"))) int mpc_f_comm_create_keyval(MPI_Comm_copy_attr_function *copy,
                                                                   MPI_Comm_delete_attr_function *del, int *keyval,
                                                                   void *extra_state);
__attribute__((visibility("hidden"))) int mpc_f_type_create_keyval(MPI_Type_copy_attr_function *copy,
                                                                   MPI_Type_delete_attr_function *del, int *keyval,
                                                                   void *extra_state);
__attribute__((visibility("hidden"))) int mpc_f_keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del,
                                                              int *keyval, void *extra_state);
/* extra_state: the address of the program's EXTRA_STATE variable, which the Fortran callbacks
 * get by reference (gen.py's ADDRESS_IN). */
__attribute__((visibility("hidden"))) int mpc_f_grequest_start(MPI_Grequest_query_function *query,
                                                               MPI_Grequest_free_function *free,
                                                               MPI_Grequest_cancel_function *cancel,
                                                               void *extra_state, MPI_Request *request);

/* How many records of keyvals created from Fortran exist (each is freed when its keyval is
 * freed and the keyval's last attribute is deleted). Exported for the tests
 * (tests/mpi/fortran/callbacks_f.f90); not part of MPC's API. */
long mpc_f_keyval_records(void);

#ifdef __cplusplus
}
#endif

#endif
