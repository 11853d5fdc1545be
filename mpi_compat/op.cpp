#include "mpi_compat/op.hpp"

#include <complex>
#include <cstring>
#include <type_traits>
#include <cstdint>
#include <mutex>
#include <vector>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/datatype/float128.hpp"
#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/errors.hpp"

namespace mpc::mpi {
namespace {

/// The groups of basic types of MPI 3.1 section 5.9.2. MPI_CHAR and MPI_CHARACTER belong to
/// none there; they are taken as C integers (a char's range), as Open MPI and MPICH both take
/// them, so that programs written for either run unchanged. MPI_WCHAR stays outside every group.
enum class cls { c_integer, f_integer, multi, floating, complex_, logical, byte, pair, none };

cls class_of(MPI_Datatype t) noexcept {
    switch (t) {
        case MPI_CHAR: case MPI_CHARACTER:
        case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR: case MPI_SHORT: case MPI_UNSIGNED_SHORT: case MPI_INT:
        case MPI_UNSIGNED: case MPI_LONG: case MPI_UNSIGNED_LONG: case MPI_LONG_LONG_INT: case MPI_UNSIGNED_LONG_LONG:
        case MPI_INT8_T: case MPI_INT16_T: case MPI_INT32_T: case MPI_INT64_T: case MPI_UINT8_T: case MPI_UINT16_T:
        case MPI_UINT32_T: case MPI_UINT64_T: return cls::c_integer;
        case MPI_INTEGER: return cls::f_integer;
        case MPI_AINT: case MPI_OFFSET: case MPI_COUNT: return cls::multi;
        case MPI_FLOAT: case MPI_DOUBLE: case MPI_LONG_DOUBLE: case MPI_REAL: case MPI_DOUBLE_PRECISION:
            return cls::floating;
        case MPI_REAL16: return MPC_HAVE_FLOAT128 ? cls::floating : cls::none;
        case MPI_COMPLEX32: return MPC_HAVE_FLOAT128 ? cls::complex_ : cls::none;
        case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_C_DOUBLE_COMPLEX: case MPI_C_LONG_DOUBLE_COMPLEX:
        case MPI_CXX_FLOAT_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX: case MPI_COMPLEX:
        case MPI_DOUBLE_COMPLEX: return cls::complex_;
        case MPI_C_BOOL: case MPI_CXX_BOOL: case MPI_LOGICAL: return cls::logical;
        case MPI_BYTE: return cls::byte;
        case MPI_FLOAT_INT: case MPI_DOUBLE_INT: case MPI_LONG_INT: case MPI_SHORT_INT: case MPI_2INT:
        case MPI_LONG_DOUBLE_INT: case MPI_2REAL: case MPI_2DOUBLE_PRECISION: case MPI_2INTEGER: return cls::pair;
        default: return cls::none;
    }
}

/// The predefined type that an f90 type (MPI_Type_create_f90_*) stands for; t itself otherwise.
MPI_Datatype named_type(MPI_Datatype t) noexcept {
    if ((t & 0xffffff) < MPC_DATATYPE_PREDEFINED_COUNT) {
        return t;
    }
    const datatype* d = datatype_from_handle(t);
    return d != nullptr && d->is_predefined() ? MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, d->predefined_index()) : t;
}

/// The table of MPI 3.1 section 5.9.2, with one extension that Open MPI and MPICH both make:
/// the logical operations on the multi-language integers (MPI_AINT, MPI_OFFSET, MPI_COUNT), which
/// the standard lists under every other integer operation. MPI_REPLACE and MPI_NO_OP are
/// defined for one-sided accumulates only (section 11.3.4), not for the collectives and
/// MPI_Reduce_local.
bool defined_on(int op_index, cls c) noexcept {
    bool integer = c == cls::c_integer || c == cls::f_integer || c == cls::multi;
    switch (op_index) {
        case 1: case 2: return integer || c == cls::floating;                         // MAX MIN
        case 3: case 4: return integer || c == cls::floating || c == cls::complex_;   // SUM PROD
        case 5: case 7: case 9:                                                       // LAND LOR LXOR
            return c == cls::c_integer || c == cls::multi || c == cls::logical;
        case 6: case 8: case 10: return integer || c == cls::byte;                    // BAND BOR BXOR
        case 11: case 12: return c == cls::pair;                                      // MINLOC MAXLOC
        default: return false;                                                        // REPLACE NO_OP
    }
}

/// a + b (op.hpp) and a * b; integers wrap around (computed unsigned: signed overflow is undefined).
template <class T>
T add(T a, T b) noexcept {
    return op_add(a, b);
}

template <class T>
T mul(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<std::common_type_t<T, unsigned>>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
        return a * b;
    }
}

template <class T>
void arith(int op, const T* in, T* io, int n) noexcept {
    for (int i = 0; i < n; ++i) {
        switch (op) {
            case 1: io[i] = in[i] > io[i] ? in[i] : io[i]; break;
            case 2: io[i] = in[i] < io[i] ? in[i] : io[i]; break;
            case 3: io[i] = add(in[i], io[i]); break;
            case 4: io[i] = mul(in[i], io[i]); break;
            default: break;
        }
    }
}

template <class T>
void bits(int op, const T* in, T* io, int n) noexcept {
    for (int i = 0; i < n; ++i) {
        switch (op) {
            case 3: io[i] = add(in[i], io[i]); break;
            case 4: io[i] = mul(in[i], io[i]); break;
            case 5: io[i] = static_cast<T>(in[i] && io[i]); break;
            case 6: io[i] = static_cast<T>(in[i] & io[i]); break;
            case 7: io[i] = static_cast<T>(in[i] || io[i]); break;
            case 8: io[i] = static_cast<T>(in[i] | io[i]); break;
            case 9: io[i] = static_cast<T>(!in[i] != !io[i]); break;
            case 10: io[i] = static_cast<T>(in[i] ^ io[i]); break;
            default: break;  // MAX and MIN go through arith()
        }
    }
}

template <class T>
void integer_op(int op, const void* in, void* io, int n) noexcept {
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(io);
    if (op == 1 || op == 2) {
        arith(op, a, b, n);
    } else {
        bits(op, a, b, n);
    }
}

template <class T>
void complex_op(int op, const void* in, void* io, int n) noexcept {
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(io);
    for (int i = 0; i < n; ++i) {
        b[i] = op == 3 ? a[i] + b[i] : a[i] * b[i];
    }
}

#if MPC_HAVE_FLOAT128
/// COMPLEX(16) sums and products, by the textbook formulas (as gfortran computes them).
void complex128_op(int op, const void* in, void* io, int n) noexcept {
    const auto* a = static_cast<const complex128*>(in);
    auto* b = static_cast<complex128*>(io);
    for (int i = 0; i < n; ++i) {
        if (op == 3) {
            b[i] = {a[i].re + b[i].re, a[i].im + b[i].im};
        } else {
            b[i] = {a[i].re * b[i].re - a[i].im * b[i].im, a[i].re * b[i].im + a[i].im * b[i].re};
        }
    }
}
#endif

template <class V, class I>
struct pair_t {
    V v;
    I i;
};

template <class V, class I>
void loc_op(int op, const void* in, void* io, int n) noexcept {
    const auto* a = static_cast<const pair_t<V, I>*>(in);
    auto* b = static_cast<pair_t<V, I>*>(io);
    for (int k = 0; k < n; ++k) {
        bool take = op == 11 ? a[k].v < b[k].v : a[k].v > b[k].v;
        if (take || (a[k].v == b[k].v && a[k].i < b[k].i)) {
            b[k] = a[k];
        }
    }
}

void logical_op(int op, const void* in, void* io, int n, MPI_Datatype t) noexcept {
    if (t == MPI_LOGICAL) {
        integer_op<int>(op, in, io, n);
    } else {
        integer_op<unsigned char>(op, in, io, n);  // C and C++ bool are one byte here
    }
}

void apply_predefined(int op, const void* in, void* io, int n, MPI_Datatype t) noexcept {
    switch (t) {
        case MPI_CHAR: case MPI_CHARACTER: integer_op<char>(op, in, io, n); break;
        case MPI_SIGNED_CHAR: case MPI_INT8_T: integer_op<std::int8_t>(op, in, io, n); break;
        case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: case MPI_BYTE: integer_op<std::uint8_t>(op, in, io, n); break;
        case MPI_SHORT: case MPI_INT16_T: integer_op<std::int16_t>(op, in, io, n); break;
        case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: integer_op<std::uint16_t>(op, in, io, n); break;
        case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: integer_op<std::int32_t>(op, in, io, n); break;
        case MPI_UNSIGNED: case MPI_UINT32_T: integer_op<std::uint32_t>(op, in, io, n); break;
        case MPI_LONG: integer_op<long>(op, in, io, n); break;
        case MPI_UNSIGNED_LONG: integer_op<unsigned long>(op, in, io, n); break;
        case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_OFFSET: case MPI_COUNT:
            integer_op<long long>(op, in, io, n);
            break;
        case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: integer_op<unsigned long long>(op, in, io, n); break;
        case MPI_AINT: integer_op<MPI_Aint>(op, in, io, n); break;
        case MPI_FLOAT: case MPI_REAL:
            arith(op, static_cast<const float*>(in), static_cast<float*>(io), n);
            break;
        case MPI_DOUBLE: case MPI_DOUBLE_PRECISION:
            arith(op, static_cast<const double*>(in), static_cast<double*>(io), n);
            break;
        case MPI_LONG_DOUBLE:
            arith(op, static_cast<const long double*>(in), static_cast<long double*>(io), n);
            break;
#if MPC_HAVE_FLOAT128
        case MPI_REAL16:
            arith(op, static_cast<const float128*>(in), static_cast<float128*>(io), n);
            break;
        case MPI_COMPLEX32: complex128_op(op, in, io, n); break;
#endif
        case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX:
            complex_op<std::complex<float>>(op, in, io, n);
            break;
        case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
            complex_op<std::complex<double>>(op, in, io, n);
            break;
        case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
            complex_op<std::complex<long double>>(op, in, io, n);
            break;
        case MPI_C_BOOL: case MPI_CXX_BOOL: case MPI_LOGICAL: logical_op(op, in, io, n, t); break;
        case MPI_FLOAT_INT: loc_op<float, int>(op, in, io, n); break;
        case MPI_DOUBLE_INT: loc_op<double, int>(op, in, io, n); break;
        case MPI_LONG_INT: loc_op<long, int>(op, in, io, n); break;
        case MPI_SHORT_INT: loc_op<short, int>(op, in, io, n); break;
        case MPI_2INT: case MPI_2INTEGER: loc_op<int, int>(op, in, io, n); break;
        case MPI_LONG_DOUBLE_INT: loc_op<long double, int>(op, in, io, n); break;
        case MPI_2REAL: loc_op<float, float>(op, in, io, n); break;
        case MPI_2DOUBLE_PRECISION: loc_op<double, double>(op, in, io, n); break;
        default: break;
    }
}

// ---- user operations --------------------------------------------------------------------------

struct user_op {
    MPI_User_function* fn = nullptr;
    bool commute = true;
    /// MPI_Op_free was called: invalid for new calls, but operations pending at the time may
    /// still apply fn (MPI 3.1 section 5.9.5; indices are never reused, so nothing is lost).
    bool freed = false;
    bool valid() const noexcept { return fn != nullptr && !freed; }
};

constexpr int first_user_index = 32;

std::mutex ops_lock;
std::vector<user_op> user_ops;  // index - first_user_index


/// A copy of the user operation with handle index idx (fn null if there is none): the table may
/// grow or change under other ranks, so nothing points into it outside the lock.
user_op find_user(int idx) noexcept {
    std::lock_guard<std::mutex> g(ops_lock);
    auto u = static_cast<std::size_t>(idx - first_user_index);
    return idx >= first_user_index && u < user_ops.size() ? user_ops[u] : user_op{};
}

}  // namespace

int op_check(MPI_Op op, MPI_Datatype type) noexcept {
    int idx = op_index(op);
    if (idx >= 1 && idx <= 14) {
        return defined_on(idx, class_of(named_type(type))) ? MPI_SUCCESS : MPI_ERR_OP;
    }
    return find_user(idx).valid() ? MPI_SUCCESS : MPI_ERR_OP;
}

void op_apply(MPI_Op op, const void* in, void* inout, int count, MPI_Datatype type) noexcept {
    int idx = op_index(op);
    if (idx == 13) {  // MPI_REPLACE
        std::memcpy(inout, in, static_cast<std::size_t>(count) * type_size(type));
        return;
    }
    if (idx == 14) {  // MPI_NO_OP
        return;
    }
    if (idx >= 1 && idx <= 12) {
        apply_predefined(idx, in, inout, count, named_type(type));
        return;
    }
    if (user_op u = find_user(idx); u.fn != nullptr) {
        int n = count;
        MPI_Datatype t = type;
        u.fn(const_cast<void*>(in), inout, &n, &t);
    }
}

bool op_is_user(MPI_Op op) noexcept { return op_index(op) >= first_user_index; }

bool op_commutes(MPI_Op op) noexcept {
    user_op u = find_user(op_index(op));
    return u.fn == nullptr || u.commute;
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

extern "C" {
int PMPI_Op_create(MPI_User_function* fn, int commute, MPI_Op* op) {
    if (fn == nullptr || op == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create", "null function or output pointer");
    }
    std::lock_guard<std::mutex> g(ops_lock);
    user_ops.push_back({fn, commute != 0});
    *op = MPC_HANDLE(MPC_HANDLE_KIND_OP, first_user_index + static_cast<int>(user_ops.size()) - 1);
    return MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op* op) {
    if (op == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_free", "null op pointer");
    }
    int idx = op_index(*op);
    if (!find_user(idx).valid()) {
        return raise(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free", "not a user-defined operation %#x", *op);
    }
    {
        std::lock_guard<std::mutex> g(ops_lock);
        user_ops[static_cast<std::size_t>(idx - first_user_index)].freed = true;  // fn stays for pending calls
    }
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
    int idx = op_index(op);
    if (commute == nullptr || ((idx < 1 || idx > 14) && !find_user(idx).valid())) {
        return raise(MPI_COMM_WORLD, commute == nullptr ? MPI_ERR_ARG : MPI_ERR_OP, "MPI_Op_commutative",
                     "invalid operation %#x", op);
    }
    *commute = op_commutes(op) ? 1 : 0;
    return MPI_SUCCESS;
}

int MPI_Op_create(MPI_User_function*, int, MPI_Op*) MPC_WEAK(MPI_Op_create);
int MPI_Op_free(MPI_Op*) MPC_WEAK(MPI_Op_free);
int MPI_Op_commutative(MPI_Op, int*) MPC_WEAK(MPI_Op_commutative);
}
