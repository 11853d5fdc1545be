/// \file
/// Run-time helpers of the generated Fortran wrappers (support.h): the calling rank's special
/// addresses (the COMMON blocks of mpif.h / module mpi / module mpi_f08, looked up in the rank's
/// copy of the program: docs/fortran.md) and the CHARACTER conversions.
#include "mpi_compat/fortran/support.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "mpi_compat/privatize.hpp"
#include "mpi_compat/runtime.hpp"

namespace {

/// gfortran's names of the COMMON blocks, in the order of mpc_f_sentinels' fields.
constexpr const char* sentinel_symbols[] = {
    "mpi_fortran_bottom_",     "mpi_fortran_in_place_",  "mpi_fortran_status_ignore_",
    "mpi_fortran_statuses_ignore_", "mpi_fortran_errcodes_ignore_", "mpi_fortran_unweighted_",
    "mpi_fortran_weights_empty_"};
constexpr std::size_t sentinel_count = sizeof(sentinel_symbols) / sizeof(sentinel_symbols[0]);
static_assert(sizeof(mpc_f_sentinels) == sentinel_count * sizeof(void*));

/// Addresses that stand for a block the program lacks: no Fortran argument can equal them.
const unsigned char absent[sentinel_count] = {};

mpc_f_sentinels* lookup() {
    auto* s = new mpc_f_sentinels;
    const void* found[sentinel_count];
    for (std::size_t i = 0; i < sentinel_count; ++i) {
        const void* p = mpc::mpi::priv::rank_symbol(sentinel_symbols[i]);
        found[i] = p != nullptr ? p : &absent[i];
    }
    std::memcpy(static_cast<void*>(s), found, sizeof found);
    return s;
}

}  // namespace

extern "C" const mpc_f_sentinels* mpc_f_sentinels_get(void) {
    mpc::mpi::task* t = mpc::mpi::current();
    if (t == nullptr) {  // outside the ranks (a runtime thread): the host copy's
        static const mpc_f_sentinels* const host = lookup();
        return host;
    }
    const mpc_f_sentinels* s = t->fortran.load(std::memory_order_acquire);
    if (s != nullptr) [[likely]] {
        return s;
    }
    mpc_f_sentinels* mine = lookup();
    if (!t->fortran.compare_exchange_strong(s, mine, std::memory_order_acq_rel)) {
        delete mine;  // another thread of the rank was first
        return s;
    }
    return mine;
}

extern "C" MPI_F08_status* mpc_f08_status_ignore(void) {
    return static_cast<MPI_F08_status*>(const_cast<void*>(mpc_f_sentinels_get()->status_ignore));
}

extern "C" MPI_F08_status* mpc_f08_statuses_ignore(void) {
    return static_cast<MPI_F08_status*>(const_cast<void*>(mpc_f_sentinels_get()->statuses_ignore));
}

extern "C" char* mpc_f_str_in(const char* s, std::size_t len) {
    while (len > 0 && s[len - 1] == ' ') {
        --len;
    }
    auto* c = static_cast<char*>(std::malloc(len + 1));
    if (c != nullptr) {
        std::memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

extern "C" char* mpc_f_str_in_trimmed(const char* s, std::size_t len) {
    std::size_t skip = 0;
    while (skip < len && s[skip] == ' ') {
        ++skip;
    }
    return mpc_f_str_in(s + skip, len - skip);
}

extern "C" char* mpc_f_str_buffer(std::size_t len) {
    return static_cast<char*>(std::calloc(std::max<std::size_t>(len, MPI_MAX_INFO_VAL) + 1, 1));
}

extern "C" void mpc_f_str_out(char* s, std::size_t len, char* c, int rc) {
    if (rc == MPI_SUCCESS) {
        std::size_t n = std::min(std::strlen(c), len);
        std::memcpy(s, c, n);
        std::memset(s + n, ' ', len - n);
    }
    std::free(c);
}

extern "C" MPI_Aint mpc_f_attr_value(int keyval, void* attr) {
    switch (keyval) {
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_LASTUSEDCODE:
    case MPI_APPNUM:
        return *static_cast<const int*>(attr);
    default:
        return reinterpret_cast<MPI_Aint>(attr);
    }
}

// MPI_F_SYNC_REG (MPI 3.1 section 17.1.8): nothing to do; being an external call that takes the
// buffer is what makes the compiler reload and store it around. mpif.h / module mpi pass the
// address, module mpi_f08 a C descriptor (mpc_f08_f_sync_reg_): neither is looked at.
extern "C" {
void pmpi_f_sync_reg_(void* buf) { asm volatile("" : : "r"(buf) : "memory"); }
void pmpi_f_sync_reg__(void*) __attribute__((alias("pmpi_f_sync_reg_")));
void PMPI_F_SYNC_REG(void*) __attribute__((alias("pmpi_f_sync_reg_")));
void mpi_f_sync_reg_(void*) __attribute__((weak, alias("pmpi_f_sync_reg_")));
void mpi_f_sync_reg__(void*) __attribute__((weak, alias("pmpi_f_sync_reg_")));
void MPI_F_SYNC_REG(void*) __attribute__((weak, alias("pmpi_f_sync_reg_")));
void mpc_f08_f_sync_reg_(void*) __attribute__((alias("pmpi_f_sync_reg_")));
}
