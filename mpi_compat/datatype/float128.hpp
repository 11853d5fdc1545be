/// \file
/// IEEE binary128, the format of MPI_REAL16 / MPI_COMPLEX32 (gfortran's REAL(16) and
/// COMPLEX(16)): GCC's and Clang's __float128 on x86-64, its arithmetic in libgcc (soft-float,
/// no libquadmath). Where the compiler has none, a 16-byte stand-in keeps the types' size and
/// alignment (they can be sent, not reduced: MPC_HAVE_FLOAT128 is 0).
#pragma once

namespace mpc::mpi {

#if defined(__SIZEOF_FLOAT128__)
#define MPC_HAVE_FLOAT128 1
using float128 = __float128;
#else
#define MPC_HAVE_FLOAT128 0
struct alignas(16) float128 {
    unsigned char bytes[16];
};
#endif

/// COMPLEX(16): the real part, then the imaginary part (C's __complex128 layout).
struct complex128 {
    float128 re;
    float128 im;
};

}  // namespace mpc::mpi
