/// \file
/// MPI_Type_create_f90_real, _complex and _integer (MPI 3.1 section 17.2.5): the datatype of a
/// Fortran REAL or COMPLEX of KIND selected_real_kind(p, r), or of an INTEGER of KIND
/// selected_int_kind(r).
///
/// Kinds are matched to the predefined types that hold them: float, double and long double
/// reals (their Fortran PRECISION and RANGE come from std::numeric_limits: 6/37, 15/307 and,
/// for the x87 extended type on x86_64, 18/4931), their complex pairs, and integers of 1, 2, 4
/// and 8 bytes, and binary128 (gfortran's REAL(16), 33/4931: MPI_REAL16 / MPI_COMPLEX32).
/// INTEGER(16) has no predefined type in MPC: asking for it is MPI_ERR_ARG, as is a (p, r)
/// that no kind satisfies. Either p or r, not
/// both, may be MPI_UNDEFINED (no requirement).
///
/// The result is a handle of its own per (combiner, p, r), made on the first request and kept
/// for the life of the process (shared by all ranks, as MPI advises implementations to cache
/// them): a datatype::create_f90 type that behaves as the predefined type it stands for, cannot
/// be freed (MPI_ERR_TYPE), and whose envelope is MPI_COMBINER_F90_REAL / _COMPLEX / _INTEGER
/// with contents (p, r) or (r). In the contents of a type built from it, it appears as that
/// predefined type (MPI_COMBINER_NAMED: not to be freed, as the standard's decoding loops
/// expect).
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "mpi_compat/datatype/bindings_common.hpp"
#include "mpi_compat/datatype/float128.hpp"

using namespace mpc::mpi;

namespace {

static_assert(int(combiner::f90_real) == MPI_COMBINER_F90_REAL &&
              int(combiner::f90_complex) == MPI_COMBINER_F90_COMPLEX &&
              int(combiner::f90_integer) == MPI_COMBINER_F90_INTEGER);

/// A Fortran real kind: its PRECISION and RANGE, and the types of a REAL and a COMPLEX of it.
struct real_kind {
    int precision;
    int range;
    MPI_Datatype real;
    MPI_Datatype complex;
};

template <class T>
constexpr real_kind real_kind_of(MPI_Datatype real, MPI_Datatype complex) {
    using lim = std::numeric_limits<T>;
    const int range = lim::max_exponent10 < -lim::min_exponent10 ? lim::max_exponent10 : -lim::min_exponent10;
    return {lim::digits10, range, real, complex};
}

/// By increasing precision, as selected_real_kind picks the smallest.
constexpr real_kind real_kinds[] = {
    real_kind_of<float>(MPI_REAL, MPI_COMPLEX),
    real_kind_of<double>(MPI_DOUBLE_PRECISION, MPI_DOUBLE_COMPLEX),
    real_kind_of<long double>(MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX),
#if MPC_HAVE_FLOAT128
    // binary128 (gfortran's REAL(16)): numeric_limits has no __float128; precision(1.0_16) = 33,
    // range(1.0_16) = 4931
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
#endif
};

/// A Fortran integer kind: its RANGE and its type.
struct int_kind {
    int range;
    MPI_Datatype type;
};

template <class T>
constexpr int_kind int_kind_of(MPI_Datatype type) {
    return {std::numeric_limits<T>::digits10, type};
}

constexpr int_kind int_kinds[] = {
    int_kind_of<std::int8_t>(MPI_INT8_T),
    int_kind_of<std::int16_t>(MPI_INT16_T),
    int_kind_of<std::int32_t>(MPI_INTEGER),
    int_kind_of<std::int64_t>(MPI_INT64_T),
};

/// selected_real_kind(p, r): the smallest kind with at least p digits and range r, or null.
const real_kind* select_real(int p, int r) noexcept {
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
        return nullptr;
    }
    for (const real_kind& k : real_kinds) {
        if (k.precision >= p && k.range >= r) {  // MPI_UNDEFINED is negative: no requirement
            return &k;
        }
    }
    return nullptr;
}

/// selected_int_kind(r): the smallest kind holding every integer of r digits, or null.
const int_kind* select_int(int r) noexcept {
    if (r == MPI_UNDEFINED) {
        return nullptr;
    }
    for (const int_kind& k : int_kinds) {
        if (k.range >= r) {
            return &k;
        }
    }
    return nullptr;
}

/// The handles made so far, by (combiner, p, r); never freed.
struct f90_cache {
    std::mutex lock;
    std::map<std::array<int, 3>, MPI_Datatype> types;
};

f90_cache& cache() {
    static f90_cache* const c = new f90_cache;  // leaked, as the types it names
    return *c;
}

/// The handle of the f90 type (kind, p, r) standing for predefined type `base`, made on first
/// use. MPI_ERR_NO_MEM if it cannot be made.
int f90_handle(combiner kind, int p, int r, MPI_Datatype base, MPI_Datatype* newtype) noexcept {
    f90_cache& c = cache();
    std::lock_guard<std::mutex> g(c.lock);
    try {
        auto [it, fresh] = c.types.try_emplace(std::array<int, 3>{int(kind), p, r}, MPI_DATATYPE_NULL);
        if (fresh) {
            std::vector<int> ints = kind == combiner::f90_integer ? std::vector<int>{r} : std::vector<int>{p, r};
            // The type is never released, like the predefined one it stands for (a failed
            // handle_add leaves a few bytes behind).
            auto h = datatype_handle_add(datatype::create_f90(kind, std::move(ints), *datatype_from_handle(base)));
            if (!h) {
                c.types.erase(it);
                return MPI_ERR_NO_MEM;
            }
            it->second = *h;
        }
        *newtype = it->second;
    } catch (const std::bad_alloc&) {
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_f90_real", [&]() -> int {
        const real_kind* k = select_real(p, r);
        if (newtype == nullptr || k == nullptr) {
            return MPI_ERR_ARG;
        }
        return f90_handle(combiner::f90_real, p, r, k->real, newtype);
    }());
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_f90_complex", [&]() -> int {
        const real_kind* k = select_real(p, r);
        if (newtype == nullptr || k == nullptr) {
            return MPI_ERR_ARG;
        }
        return f90_handle(combiner::f90_complex, p, r, k->complex, newtype);
    }());
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_f90_integer", [&]() -> int {
        const int_kind* k = select_int(r);
        if (newtype == nullptr || k == nullptr) {
            return MPI_ERR_ARG;
        }
        return f90_handle(combiner::f90_integer, MPI_UNDEFINED, r, k->type, newtype);
    }());
}

int MPI_Type_create_f90_real(int, int, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_create_f90_real);
int MPI_Type_create_f90_complex(int, int, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_create_f90_complex);
int MPI_Type_create_f90_integer(int, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_create_f90_integer);

}  // extern "C"
