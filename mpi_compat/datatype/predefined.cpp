/// \file
/// The predefined datatypes of mpi.h: C sizes and alignments from the compiler, the real struct
/// layouts of the MINLOC/MAXLOC pair types (padding included) and the external32 sizes of
/// MPI 3.1 table 13.2 (MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes there, MPI_WCHAR 2,
/// MPI_LONG_DOUBLE 16 as IEEE binary128; MPI_REAL16 / MPI_COMPLEX32 are binary128 already).
#include "mpi_compat/datatype/predefined.hpp"

#include <complex>
#include <cstddef>
#include <cstring>

#include "mpi_compat/datatype/datatype.hpp"
#include "mpi_compat/datatype/float128.hpp"

namespace mpc::mpi {
namespace {

template <class A, class B>
struct pair_of {
    A a;
    B b;
};
using float_int = pair_of<float, int>;
using double_int = pair_of<double, int>;
using long_int = pair_of<long, int>;
using short_int = pair_of<short, int>;
using int_int = pair_of<int, int>;
using ldouble_int = pair_of<long double, int>;
using float_float = pair_of<float, float>;
using double_double = pair_of<double, double>;

constexpr int idx(MPI_Datatype h) { return h & 0xffffff; }

// A basic type: one component of itself at offset 0.
template <class T>
constexpr predefined_entry basic_of(int self, const char* name, int ext, int swap, char conv, int tclass) {
    return {{name, int(sizeof(T)), ext, swap, conv, tclass}, int(alignof(T)), int(sizeof(T)), 1, {{0, self}, {0, 0}}};
}
template <class P>
constexpr predefined_entry pair_entry(const char* name, int kind_a, int kind_b) {
    return {{name, int(sizeof(P)), 0, 0, 0, 0},
            int(alignof(P)),
            int(sizeof(P)),
            2,
            {{int(offsetof(P, a)), kind_a}, {int(offsetof(P, b)), kind_b}}};
}
constexpr predefined_entry marker(const char* name) { return {{name, 0, 0, 0, 0, 0}, 1, 0, 0, {{0, 0}, {0, 0}}}; }

constexpr int lds = int(sizeof(long double));

const predefined_entry table[MPC_DATATYPE_PREDEFINED_COUNT] = {
    {{"MPI_DATATYPE_NULL", 0, 0, 0, 0, 0}, 1, 0, 0, {{0, 0}, {0, 0}}},
    basic_of<char>(idx(MPI_CHAR), "MPI_CHAR", 1, 1, 'u', 0),
    basic_of<signed char>(idx(MPI_SIGNED_CHAR), "MPI_SIGNED_CHAR", 1, 1, 'i', 2),
    basic_of<unsigned char>(idx(MPI_UNSIGNED_CHAR), "MPI_UNSIGNED_CHAR", 1, 1, 'u', 2),
    basic_of<unsigned char>(idx(MPI_BYTE), "MPI_BYTE", 1, 1, 'u', 0),
    basic_of<wchar_t>(idx(MPI_WCHAR), "MPI_WCHAR", 2, int(sizeof(wchar_t)), 'u', 0),
    basic_of<short>(idx(MPI_SHORT), "MPI_SHORT", 2, 2, 'i', 2),
    basic_of<unsigned short>(idx(MPI_UNSIGNED_SHORT), "MPI_UNSIGNED_SHORT", 2, 2, 'u', 2),
    basic_of<int>(idx(MPI_INT), "MPI_INT", 4, 4, 'i', 2),
    basic_of<unsigned>(idx(MPI_UNSIGNED), "MPI_UNSIGNED", 4, 4, 'u', 2),
    basic_of<long>(idx(MPI_LONG), "MPI_LONG", 4, int(sizeof(long)), 'i', 2),
    basic_of<unsigned long>(idx(MPI_UNSIGNED_LONG), "MPI_UNSIGNED_LONG", 4, int(sizeof(long)), 'u', 2),
    basic_of<long long>(idx(MPI_LONG_LONG_INT), "MPI_LONG_LONG_INT", 8, 8, 'i', 2),
    basic_of<unsigned long long>(idx(MPI_UNSIGNED_LONG_LONG), "MPI_UNSIGNED_LONG_LONG", 8, 8, 'u', 2),
    basic_of<float>(idx(MPI_FLOAT), "MPI_FLOAT", 4, 4, 'f', 1),
    basic_of<double>(idx(MPI_DOUBLE), "MPI_DOUBLE", 8, 8, 'f', 1),
    basic_of<long double>(idx(MPI_LONG_DOUBLE), "MPI_LONG_DOUBLE", 16, lds, 'l', 1),
    basic_of<bool>(idx(MPI_C_BOOL), "MPI_C_BOOL", 1, 1, 'u', 0),
    basic_of<std::int8_t>(idx(MPI_INT8_T), "MPI_INT8_T", 1, 1, 'i', 2),
    basic_of<std::int16_t>(idx(MPI_INT16_T), "MPI_INT16_T", 2, 2, 'i', 2),
    basic_of<std::int32_t>(idx(MPI_INT32_T), "MPI_INT32_T", 4, 4, 'i', 2),
    basic_of<std::int64_t>(idx(MPI_INT64_T), "MPI_INT64_T", 8, 8, 'i', 2),
    basic_of<std::uint8_t>(idx(MPI_UINT8_T), "MPI_UINT8_T", 1, 1, 'u', 2),
    basic_of<std::uint16_t>(idx(MPI_UINT16_T), "MPI_UINT16_T", 2, 2, 'u', 2),
    basic_of<std::uint32_t>(idx(MPI_UINT32_T), "MPI_UINT32_T", 4, 4, 'u', 2),
    basic_of<std::uint64_t>(idx(MPI_UINT64_T), "MPI_UINT64_T", 8, 8, 'u', 2),
    basic_of<std::complex<float>>(idx(MPI_C_COMPLEX), "MPI_C_COMPLEX", 8, 4, 'f', 3),
    basic_of<std::complex<float>>(idx(MPI_C_FLOAT_COMPLEX), "MPI_C_FLOAT_COMPLEX", 8, 4, 'f', 3),
    basic_of<std::complex<double>>(idx(MPI_C_DOUBLE_COMPLEX), "MPI_C_DOUBLE_COMPLEX", 16, 8, 'f', 3),
    basic_of<std::complex<long double>>(idx(MPI_C_LONG_DOUBLE_COMPLEX), "MPI_C_LONG_DOUBLE_COMPLEX", 32, lds, 'l', 3),
    basic_of<MPI_Aint>(idx(MPI_AINT), "MPI_AINT", 8, 8, 'i', 2),
    basic_of<MPI_Offset>(idx(MPI_OFFSET), "MPI_OFFSET", 8, 8, 'i', 2),
    basic_of<MPI_Count>(idx(MPI_COUNT), "MPI_COUNT", 8, 8, 'i', 2),
    basic_of<unsigned char>(idx(MPI_PACKED), "MPI_PACKED", 1, 1, 'u', 0),
    marker("MPI_LB"),
    marker("MPI_UB"),
    pair_entry<float_int>("MPI_FLOAT_INT", idx(MPI_FLOAT), idx(MPI_INT)),
    pair_entry<double_int>("MPI_DOUBLE_INT", idx(MPI_DOUBLE), idx(MPI_INT)),
    pair_entry<long_int>("MPI_LONG_INT", idx(MPI_LONG), idx(MPI_INT)),
    pair_entry<short_int>("MPI_SHORT_INT", idx(MPI_SHORT), idx(MPI_INT)),
    pair_entry<int_int>("MPI_2INT", idx(MPI_INT), idx(MPI_INT)),
    pair_entry<ldouble_int>("MPI_LONG_DOUBLE_INT", idx(MPI_LONG_DOUBLE), idx(MPI_INT)),
    basic_of<bool>(idx(MPI_CXX_BOOL), "MPI_CXX_BOOL", 1, 1, 'u', 0),
    basic_of<std::complex<float>>(idx(MPI_CXX_FLOAT_COMPLEX), "MPI_CXX_FLOAT_COMPLEX", 8, 4, 'f', 3),
    basic_of<std::complex<double>>(idx(MPI_CXX_DOUBLE_COMPLEX), "MPI_CXX_DOUBLE_COMPLEX", 16, 8, 'f', 3),
    basic_of<std::complex<long double>>(idx(MPI_CXX_LONG_DOUBLE_COMPLEX), "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, lds, 'l',
                                        3),
    basic_of<char>(idx(MPI_CHARACTER), "MPI_CHARACTER", 1, 1, 'u', 0),
    basic_of<int>(idx(MPI_LOGICAL), "MPI_LOGICAL", 4, 4, 'i', 0),
    basic_of<int>(idx(MPI_INTEGER), "MPI_INTEGER", 4, 4, 'i', 2),
    basic_of<float>(idx(MPI_REAL), "MPI_REAL", 4, 4, 'f', 1),
    basic_of<double>(idx(MPI_DOUBLE_PRECISION), "MPI_DOUBLE_PRECISION", 8, 8, 'f', 1),
    basic_of<std::complex<float>>(idx(MPI_COMPLEX), "MPI_COMPLEX", 8, 4, 'f', 3),
    basic_of<std::complex<double>>(idx(MPI_DOUBLE_COMPLEX), "MPI_DOUBLE_COMPLEX", 16, 8, 'f', 3),
    pair_entry<float_float>("MPI_2REAL", idx(MPI_REAL), idx(MPI_REAL)),
    pair_entry<double_double>("MPI_2DOUBLE_PRECISION", idx(MPI_DOUBLE_PRECISION), idx(MPI_DOUBLE_PRECISION)),
    pair_entry<int_int>("MPI_2INTEGER", idx(MPI_INTEGER), idx(MPI_INTEGER)),
    basic_of<float128>(idx(MPI_REAL16), "MPI_REAL16", 16, 16, 'f', 1),
    basic_of<complex128>(idx(MPI_COMPLEX32), "MPI_COMPLEX32", 32, 16, 'f', 3),
};

// The bounds of a predefined type from its entry.
type_bounds bounds_of(int index, const predefined_entry& e) {
    type_bounds b;
    b.align = e.align;
    if (index == idx(MPI_LB) || index == idx(MPI_UB)) {
        b.empty = false;
        b.sticky_lb = index == idx(MPI_LB);
        b.sticky_ub = index == idx(MPI_UB);
        return b;
    }
    b.empty = false;
    b.ub = e.extent;
    b.true_lb = e.comp[0].offset;
    for (int i = 0; i < e.ncomp; ++i) {
        b.size += table[e.comp[i].kind].info.size;
        b.true_ub = e.comp[i].offset + table[e.comp[i].kind].info.size;
    }
    return b;
}

}  // namespace

const predefined_entry& predefined_entry_of(int index) noexcept { return table[index]; }

const basic_info& basic(int index) noexcept { return table[index].info; }

struct predefined_table {
    datatype objs[MPC_DATATYPE_PREDEFINED_COUNT];

    predefined_table() {
        for (int i = 1; i < MPC_DATATYPE_PREDEFINED_COUNT; ++i) {
            datatype& t = objs[i];
            t.predefined_index_ = i;
            t.kind_ = combiner::named;
            t.b_ = bounds_of(i, table[i]);
            t.committed_.store(true, std::memory_order_relaxed);
            std::strncpy(t.name_, table[i].info.name, sizeof t.name_ - 1);
        }
    }
};

std::atomic<const datatype*> detail::predefined_base{nullptr};
std::atomic<const datatype*> detail::fast_p2p_type[MPC_DATATYPE_PREDEFINED_COUNT] = {};

const datatype* detail::init_predefined() noexcept {
    // Leaked on purpose: predefined types must outlive every static destructor that may use them.
    static predefined_table* const tbl = [] {
        auto* t = new predefined_table;
        for (int i = 1; i < MPC_DATATYPE_PREDEFINED_COUNT; ++i) {
            const datatype& d = t->objs[i];
            const bool block = d.size() > 0 && d.true_lb() == 0 && d.is_contiguous();
            fast_p2p_type[i].store(block ? &d : nullptr, std::memory_order_release);
        }
        return t;
    }();
    predefined_base.store(tbl->objs, std::memory_order_release);
    return tbl->objs;
}

}  // namespace mpc::mpi
