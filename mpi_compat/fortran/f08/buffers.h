/* Choice buffers of module mpi_f08 (docs/fortran.md, "Array sections"): the generated wrappers
 * (mpc_f08_send_...) receive each buffer as a TS 29113 C descriptor (TYPE(*), DIMENSION(..)).
 * A contiguous buffer (or a scalar, MPI_BOTTOM, MPI_IN_PLACE) goes to the Fortran-ABI wrapper
 * (pmpi_send_) as its address: mpc_f08_contiguous() is the whole cost. A non-contiguous
 * section goes through mpc_f08_begin / mpc_f08_buffer / mpc_f08_end, which describe it by a
 * derived datatype built from the descriptor's strides (or, where one datatype argument
 * cannot describe it, a contiguous copy), released when the call or its request completes.
 * Internal to libmpc; compiled only with the Fortran bindings (ISO_Fortran_binding.h comes
 * with gfortran). */
#ifndef MPC_FORTRAN_F08_BUFFERS_H
#define MPC_FORTRAN_F08_BUFFERS_H

#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a call does with a buffer (gen.py works them out from the parameter names). */
enum {
    MPC_F08_OUT = 1,      /* the call writes it: a temporary copy is copied back */
    MPC_F08_WHOLE = 2,    /* (count, datatype) span the whole buffer (point to point, MPI_Bcast,
                             reductions...): checked against the section */
    MPC_F08_OWN_TYPE = 4, /* the datatype argument is this buffer's alone, so it may be replaced */
    MPC_F08_ADDRESS = 8,  /* only its address is used (MPI_Get_address, MPI_Free_mem) */
    MPC_F08_NO_COPY = 16  /* it outlives the call (persistent requests, MPI_Buffer_attach) */
};

/* Whether the described array is contiguous in array element order (scalars and empty arrays
 * are). The fast path of every wrapper. */
static inline int mpc_f08_contiguous(const CFI_cdesc_t *d) {
    CFI_index_t want = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; ++i) {
        const CFI_index_t n = d->dim[i].extent;
        if (n != 1 && d->dim[i].sm != want) {
            return 0;
        }
        want *= n;
    }
    return 1;
}

/* A non-contiguous section, its dimensions merged where they continue each other. */
struct mpc_f08_section {
    char *base;
    size_t elem_len;
    int rank;
    CFI_index_t n[CFI_MAX_RANK];
    CFI_index_t sm[CFI_MAX_RANK];
};
/* What one buffer of a call holds until the call or its request completes. */
struct mpc_f08_held {
    MPI_Datatype type; /* a derived type describing the section, or MPI_DATATYPE_NULL */
    void *tmp;         /* a contiguous copy of the section, or NULL */
    int copy_out;      /* copy tmp back into the section when done */
    struct mpc_f08_section sec;
};
#define MPC_F08_MAX_BUFFERS 2
struct mpc_f08_call {
    const char *name;
    MPI_Comm comm; /* whose error handler reports a bad buffer */
    int err;
    int n;
    struct mpc_f08_held held[MPC_F08_MAX_BUFFERS];
};

__attribute__((visibility("hidden"))) void mpc_f08_begin(struct mpc_f08_call *c, const char *name, MPI_Fint comm);
/* Sets *p, and *count / *type (NULL when the buffer has none) to what the C call gets for the
 * buffer of descriptor d. On a bad buffer, c->err is the error (raised on c->comm). */
__attribute__((visibility("hidden"))) void mpc_f08_buffer(struct mpc_f08_call *c, const CFI_cdesc_t *d, void **p,
                                                          MPI_Fint *count, MPI_Fint *type, int flags);
/* After the call: *ierror gets c->err if a buffer was bad; what the buffers hold is released
 * now, or when the request completes (or, persistent, is freed) if request is not NULL. */
__attribute__((visibility("hidden"))) void mpc_f08_end(struct mpc_f08_call *c, MPI_Fint *ierror,
                                                       const MPI_Fint *request);

/* Runs fn(arg) once the request is done with: after its completion by a wait or test
 * (non-persistent), or when MPI_Request_free frees it (persistent). MPI_ERR_REQUEST for an
 * invalid or null request or one that has a release function already (p2p_ext.cpp). */
__attribute__((visibility("hidden"))) int mpc_request_on_release(MPI_Request h, void (*fn)(void *), void *arg);

/* How many derived types and copies the f08 buffers hold now (all ranks of the process), for
 * the tests' leak checks. Exported; not part of MPC's API. */
long mpc_f08_buffers_held(void);

#ifdef __cplusplus
}
#endif

#endif
