/// \file
/// Non-contiguous choice buffers of module mpi_f08 (buffers.h, docs/fortran.md "Array
/// sections"). A section is a strided array of elements of `elem_len` bytes; the user's
/// (count, datatype) describe data laid out over the section's elements as if they were
/// contiguous. Three ways to hand it to the C layer, tried in this order:
///  - whole buffers (the count covers the buffer: point to point, MPI_Bcast, persistent
///    requests, MPI_Pack..., checked against the section, as are the reductions' buffers)
///    with a datatype of their own whose extent is the element length or divides it: one
///    derived type (nested hvectors of the datatype, a struct of them for a partial last
///    row) that selects the first `count` datatypes of the section in order; count becomes 1;
///  - a buffer with its own datatype and per-rank counts or displacements (MPI_Gather's
///    receive buffer, the v / w collectives): when the section is one-dimensional once merged
///    and the extent is the element length, the datatype resized to the section's stride
///    (counts and displacements stay valid);
///  - otherwise (reductions, whose two buffers share one datatype; datatypes spanning several
///    elements) a contiguous copy of the section, copied back after an output.
/// The types (and copies) are released when the call returns, or when its request completes
/// (a persistent one: when freed), through mpc_request_on_release.
#include "mpi_compat/fortran/f08/buffers.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/errors.hpp"

namespace {

std::atomic<long> held_count{0};

/// The section of d with extent-1 dimensions dropped and each dimension merged into the
/// previous one when it continues it (stride = previous stride x previous extent). Returns the
/// number of elements.
CFI_index_t collapse(const CFI_cdesc_t* d, mpc_f08_section* s) noexcept {
    s->base = static_cast<char*>(d->base_addr);
    s->elem_len = d->elem_len;
    s->rank = 0;
    CFI_index_t total = 1;
    for (int i = 0; i < d->rank; ++i) {
        const CFI_index_t n = d->dim[i].extent;
        total *= n;
        if (n == 1) {
            continue;
        }
        if (s->rank > 0 && d->dim[i].sm == s->sm[s->rank - 1] * s->n[s->rank - 1]) {
            s->n[s->rank - 1] *= n;
            continue;
        }
        s->n[s->rank] = n;
        s->sm[s->rank] = d->dim[i].sm;
        ++s->rank;
    }
    return total;
}

/// Calls f(element address, index) for each element of s in array element order.
template <class F>
void for_each_element(const mpc_f08_section& s, F&& f) noexcept {
    CFI_index_t idx[CFI_MAX_RANK] = {};
    char* p = s.base;
    for (CFI_index_t k = 0;; ++k) {
        f(p, k);
        int i = 0;
        for (; i < s.rank; ++i) {  // odometer: the first dimension turns fastest
            p += s.sm[i];
            if (++idx[i] < s.n[i]) {
                break;
            }
            p -= s.sm[i] * s.n[i];
            idx[i] = 0;
        }
        if (i == s.rank) {
            return;
        }
    }
}

void gather(const mpc_f08_section& s, char* tmp) noexcept {
    for_each_element(s, [&](const char* p, CFI_index_t k) { std::memcpy(tmp + k * s.elem_len, p, s.elem_len); });
}

void scatter(const mpc_f08_section& s, const char* tmp) noexcept {
    for_each_element(s, [&](char* p, CFI_index_t k) { std::memcpy(p, tmp + k * s.elem_len, s.elem_len); });
}

void release(mpc_f08_held* h, int n, bool copy_out) noexcept {
    for (int i = 0; i < n; ++i) {
        if (h[i].type != MPI_DATATYPE_NULL) {
            (void)PMPI_Type_free(&h[i].type);
            held_count.fetch_sub(1, std::memory_order_relaxed);
        }
        if (h[i].tmp != nullptr) {
            if (copy_out && h[i].copy_out) {
                scatter(h[i].sec, static_cast<const char*>(h[i].tmp));
            }
            std::free(h[i].tmp);
            held_count.fetch_sub(1, std::memory_order_relaxed);
        }
    }
}

/// What a request keeps until it is done with (the held buffers of its call).
struct deferred {
    int n;
    mpc_f08_held held[MPC_F08_MAX_BUFFERS];
};

void release_deferred(void* arg) noexcept {
    auto* d = static_cast<deferred*>(arg);
    release(d->held, d->n, true);
    delete d;
}

/// A committed type made of `pieces` types at byte displacements (freed after use), or the
/// one piece itself when it sits at 0.
int combine(int pieces, MPI_Datatype* types, MPI_Aint* displs, MPI_Datatype* out) noexcept {
    if (pieces == 1 && displs[0] == 0) {
        *out = types[0];
        return MPI_SUCCESS;
    }
    int lens[CFI_MAX_RANK + 1];
    for (int i = 0; i < pieces; ++i) {
        lens[i] = 1;
    }
    int rc = PMPI_Type_create_struct(pieces, lens, displs, types, out);
    for (int i = 0; i < pieces; ++i) {
        (void)PMPI_Type_free(&types[i]);
    }
    return rc;
}

/// The type selecting the first `count` datatypes `t` (extent `ext`, which divides the element
/// length) of section s, in order: nested hvectors over the dimensions for the whole elements,
/// and the datatypes left in the last, partial element.
int section_type(const mpc_f08_section& s, int count, MPI_Datatype t, MPI_Aint ext, MPI_Datatype* out) noexcept {
    const auto per = static_cast<int>(static_cast<MPI_Aint>(s.elem_len) / ext);
    const int rem = count % per;
    CFI_index_t q = count / per;  // whole elements
    MPI_Datatype unit = t;
    int rc = per == 1 ? MPI_SUCCESS : PMPI_Type_contiguous(per, t, &unit);
    CFI_index_t span[CFI_MAX_RANK];  // elements in one step of each dimension
    MPI_Datatype full[CFI_MAX_RANK];    // full[k]: the elements of dimensions 0..k-1
    span[0] = 1;
    full[0] = unit;
    int top = 0;
    while (top + 1 < s.rank && span[top] * s.n[top] <= q) {
        span[top + 1] = span[top] * s.n[top];
        ++top;
    }
    for (int k = 1; k <= top && rc == MPI_SUCCESS; ++k) {
        rc = PMPI_Type_create_hvector(static_cast<int>(s.n[k - 1]), 1, s.sm[k - 1], full[k - 1], &full[k]);
    }
    MPI_Datatype pieces[CFI_MAX_RANK + 1];
    MPI_Aint displs[CFI_MAX_RANK + 1];
    int npieces = 0;
    MPI_Aint off = 0;
    for (int k = top; k >= 0 && rc == MPI_SUCCESS; --k) {
        const CFI_index_t steps = q / span[k];
        q %= span[k];
        if (steps > 0) {
            displs[npieces] = off;
            rc = PMPI_Type_create_hvector(static_cast<int>(steps), 1, s.sm[k], full[k], &pieces[npieces++]);
            off += steps * s.sm[k];
        }
    }
    if (rem > 0 && rc == MPI_SUCCESS) {
        displs[npieces] = off;
        rc = PMPI_Type_contiguous(rem, t, &pieces[npieces++]);
    }
    for (int k = 1; k <= top; ++k) {
        (void)PMPI_Type_free(&full[k]);
    }
    if (per != 1) {
        (void)PMPI_Type_free(&unit);
    }
    if (rc == MPI_SUCCESS) {
        rc = combine(npieces, pieces, displs, out);
    }
    return rc == MPI_SUCCESS ? PMPI_Type_commit(out) : rc;
}

[[gnu::format(printf, 3, 4)]] void fail(mpc_f08_call* c, int cls, const char* fmt, ...) noexcept {
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    c->err = mpc::mpi::raise(c->comm, cls, c->name, "%s", why);
    if (c->err == MPI_SUCCESS) {
        c->err = cls;  // a user handler returned: the call still fails
    }
}

}  // namespace

extern "C" {

void mpc_f08_begin(mpc_f08_call* c, const char* name, MPI_Fint comm) {
    c->name = name;
    c->comm = comm;
    c->err = MPI_SUCCESS;
    c->n = 0;
}

void mpc_f08_buffer(mpc_f08_call* c, const CFI_cdesc_t* d, void** p, MPI_Fint* count, MPI_Fint* type, int flags) {
    *p = d->base_addr;
    if (c->err != MPI_SUCCESS || (flags & MPC_F08_ADDRESS) != 0 || mpc_f08_contiguous(d)) {
        return;
    }
    mpc_f08_held& h = c->held[c->n];
    const CFI_index_t elems = collapse(d, &h.sec);
    if (elems == 0) {
        return;
    }
    h.type = MPI_DATATYPE_NULL;
    h.tmp = nullptr;
    h.copy_out = 0;
    const auto bytes = static_cast<MPI_Aint>(elems * static_cast<CFI_index_t>(d->elem_len));
    const mpc::mpi::datatype* t = type != nullptr ? mpc::mpi::datatype_for_comm(*type) : nullptr;
    if (type != nullptr && (t == nullptr || count == nullptr || *count <= 0)) {
        return;  // the call reports the bad datatype or count (or, count 0, reads nothing)
    }
    if (t != nullptr && (flags & MPC_F08_WHOLE) != 0) {
        if (t->true_lb() < 0) {
            fail(c, MPI_ERR_BUFFER, "the datatype's data starts %lld bytes before the array section",
                 static_cast<long long>(-t->true_lb()));
            return;
        }
        const MPI_Aint need = (*count - 1) * t->extent() + t->true_lb() + t->true_extent();
        if (need > bytes) {
            fail(c, MPI_ERR_COUNT, "count %lld of this datatype needs %lld bytes but the array section has %lld",
                 static_cast<long long>(*count), static_cast<long long>(need), static_cast<long long>(bytes));
            return;
        }
        const MPI_Aint ext = t->extent();
        if ((flags & MPC_F08_OWN_TYPE) != 0 && ext > 0 && static_cast<MPI_Aint>(d->elem_len) % ext == 0) {
            if (section_type(h.sec, *count, *type, ext, &h.type) != MPI_SUCCESS) {
                fail(c, MPI_ERR_NO_MEM, "no datatype for an array section of %lld elements", static_cast<long long>(elems));
                return;
            }
            *count = 1;
            *type = h.type;
            held_count.fetch_add(1, std::memory_order_relaxed);
            ++c->n;
            return;
        }
    } else if (t != nullptr && (flags & MPC_F08_OWN_TYPE) != 0 && h.sec.rank == 1 && h.sec.sm[0] > 0 &&
               t->extent() == static_cast<MPI_Aint>(d->elem_len)) {
        if (PMPI_Type_create_resized(*type, t->lb(), h.sec.sm[0], &h.type) != MPI_SUCCESS ||
            PMPI_Type_commit(&h.type) != MPI_SUCCESS) {
            fail(c, MPI_ERR_NO_MEM, "no datatype for an array section of %lld elements", static_cast<long long>(elems));
            return;
        }
        *type = h.type;
        held_count.fetch_add(1, std::memory_order_relaxed);
        ++c->n;
        return;
    }
    if ((flags & MPC_F08_NO_COPY) != 0) {
        fail(c, MPI_ERR_BUFFER,
             "a non-contiguous array section (%lld elements of %lld bytes) that this datatype cannot describe "
             "in place (extent %lld) cannot be used by a persistent request or as an attached buffer",
             static_cast<long long>(elems), static_cast<long long>(d->elem_len),
             static_cast<long long>(t != nullptr ? t->extent() : 0));
        return;
    }
    h.tmp = std::malloc(static_cast<std::size_t>(bytes));
    if (h.tmp == nullptr) {
        fail(c, MPI_ERR_NO_MEM, "no memory for a copy of an array section of %lld bytes", static_cast<long long>(bytes));
        return;
    }
    gather(h.sec, static_cast<char*>(h.tmp));
    h.copy_out = (flags & MPC_F08_OUT) != 0;
    *p = h.tmp;
    held_count.fetch_add(1, std::memory_order_relaxed);
    ++c->n;
}

void mpc_f08_end(mpc_f08_call* c, MPI_Fint* ierror, const MPI_Fint* request) {
    if (c->err != MPI_SUCCESS) {
        *ierror = c->err;
        release(c->held, c->n, false);
        return;
    }
    if (c->n == 0) {
        return;
    }
    if (request != nullptr && *ierror == MPI_SUCCESS && *request != MPI_REQUEST_NULL) {
        auto* d = new (std::nothrow) deferred;
        if (d != nullptr) {
            d->n = c->n;
            std::memcpy(static_cast<void*>(d->held), c->held, sizeof(mpc_f08_held) * static_cast<std::size_t>(c->n));
            if (mpc_request_on_release(*request, release_deferred, d) == MPI_SUCCESS) {
                return;
            }
            delete d;
        }
        // cannot happen for a request just made; released now rather than leaked
    }
    release(c->held, c->n, true);
}

long mpc_f08_buffers_held(void) { return held_count.load(std::memory_order_relaxed); }

}  // extern "C"
