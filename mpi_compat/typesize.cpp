/// \file
/// Element sizes of the predefined datatypes, for point-to-point until the datatype engine
/// (mpi_compat/datatype/) is wired to the bindings.

#include <wchar.h>

#include <cstdint>

#include "mpi_compat/binding.hpp"

namespace mpc::mpi {
namespace {
template <class A>
struct pair_of {
    A a;
    int i;
};
}  // namespace

std::size_t type_size(MPI_Datatype t) noexcept {
    switch (t) {
        case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_PACKED:
        case MPI_INT8_T: case MPI_UINT8_T: case MPI_CHARACTER: return 1;
        case MPI_C_BOOL: case MPI_CXX_BOOL: return sizeof(bool);
        case MPI_WCHAR: return sizeof(wchar_t);
        case MPI_SHORT: case MPI_UNSIGNED_SHORT: case MPI_INT16_T: case MPI_UINT16_T: return 2;
        case MPI_INT: case MPI_UNSIGNED: case MPI_INT32_T: case MPI_UINT32_T: case MPI_FLOAT:
        case MPI_INTEGER: case MPI_REAL: case MPI_LOGICAL: return 4;
        case MPI_LONG: case MPI_UNSIGNED_LONG: return sizeof(long);
        case MPI_LONG_LONG_INT: case MPI_UNSIGNED_LONG_LONG: case MPI_INT64_T: case MPI_UINT64_T:
        case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_COUNT: case MPI_OFFSET: return 8;
        case MPI_AINT: return sizeof(MPI_Aint);
        case MPI_LONG_DOUBLE: return sizeof(long double);
        case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX:
        case MPI_2INT: case MPI_2REAL: case MPI_2INTEGER: return 8;
        case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
        case MPI_2DOUBLE_PRECISION: return 16;
        case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX: return 2 * sizeof(long double);
        case MPI_FLOAT_INT: return sizeof(pair_of<float>);
        case MPI_DOUBLE_INT: return sizeof(pair_of<double>);
        case MPI_LONG_INT: return sizeof(pair_of<long>);
        case MPI_SHORT_INT: return sizeof(pair_of<short>);
        case MPI_LONG_DOUBLE_INT: return sizeof(pair_of<long double>);
        default: return 0;
    }
}

}  // namespace mpc::mpi
