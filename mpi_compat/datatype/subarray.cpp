/// \file
/// MPI_Type_create_subarray and MPI_Type_create_darray (MPI 3.1 sections 4.1.3 and 4.1.4).
///
/// Both are built from the simpler constructors, as in MPICH: one contiguous or hvector step
/// per dimension, fastest dimension first, then an hindexed_block that places the local part at
/// its offset in the global array and a create_resized to [0, whole array). The result records
/// the subarray/darray envelope and keeps that equivalent type as its `impl`, whose plan it uses.
/// Darray steps are resized to the full row of their dimension so that a cyclic block of the next
/// dimension steps by whole rows; the process grid is row-major, as in MPI_Cart_create.
#include <algorithm>
#include <new>
#include <vector>

#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi {
namespace {

const status bad_arg{errc::invalid_argument, "invalid subarray/darray argument"};
const status too_big{errc::invalid_argument, "array size overflows 64 bits"};

// Replaces cur by r's type, or returns r's error.
status step(datatype_ref& cur, result<datatype*>&& r) {
    if (!r) {
        return r.error();
    }
    cur = datatype_ref(*r);
    return {};
}

// Wraps the equivalent type `impl` in a type with the given envelope.
result<datatype*> finish(combiner kind, std::vector<int>&& ints, const datatype* old, const datatype_ref& impl) {
    datatype::definition d;
    d.kind = kind;
    d.bounds = impl->bounds();
    d.ints = std::move(ints);
    d.types = {old};
    d.impl = impl.get();
    try {
        return datatype::create(std::move(d));
    } catch (const std::bad_alloc&) {
        return status{errc::no_memory, "allocating a datatype"};
    }
}

// Places cur at byte offset disp and resizes it to [0, total).
status place(datatype_ref& cur, aint disp, aint total) {
    const int one = 1;
    if (status st = step(cur, type_hindexed_block(1, one, &disp, cur.get())); !st) {
        return st;
    }
    return step(cur, type_resized(cur.get(), 0, total));
}

bool valid_order(int order) { return order == order_c || order == order_fortran; }

// Dimension visited at position k, fastest first.
int dim_at(int k, int ndims, int order) { return order == order_c ? ndims - 1 - k : k; }

status check_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                      const datatype* old) {
    if (ndims < 1 || !sizes || !subsizes || !starts || !old || !valid_order(order)) {
        return bad_arg;
    }
    for (int i = 0; i < ndims; ++i) {
        if (sizes[i] < 1 || subsizes[i] < 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
            starts[i] > sizes[i] - subsizes[i]) {
            return bad_arg;
        }
    }
    return {};
}

}  // namespace

result<datatype*> type_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                                const datatype* old) {
    if (status st = check_subarray(ndims, sizes, subsizes, starts, order, old); !st) {
        return st;
    }
    old->retain();
    datatype_ref cur(old);
    aint row = old->extent();  // bytes of one index step in the current dimension
    aint disp = 0;
    bool ovf = false;
    for (int k = 0; k < ndims; ++k) {
        const int d = dim_at(k, ndims, order);
        auto r = k == 0 ? type_contiguous(subsizes[d], cur.get()) : type_hvector(subsizes[d], 1, row, cur.get());
        if (status st = step(cur, std::move(r)); !st) {
            return st;
        }
        aint off = 0;
        ovf |= __builtin_mul_overflow(aint(starts[d]), row, &off);
        ovf |= __builtin_add_overflow(disp, off, &disp);
        ovf |= __builtin_mul_overflow(row, aint(sizes[d]), &row);
    }
    if (ovf) {
        return too_big;
    }
    if (status st = place(cur, disp, row); !st) {
        return st;
    }
    std::vector<int> ints;
    ints.push_back(ndims);
    ints.insert(ints.end(), sizes, sizes + ndims);
    ints.insert(ints.end(), subsizes, subsizes + ndims);
    ints.insert(ints.end(), starts, starts + ndims);
    ints.push_back(order);
    return finish(combiner::subarray, std::move(ints), old, cur);
}

// ---- darray ----------------------------------------------------------------------------------

namespace {

struct darray_args {
    int ndims;
    const int* gsizes;
    const int* distribs;
    const int* dargs;
    const int* psizes;
    int order;
};

status check_darray(int size, int rank, const darray_args& a, const datatype* old) {
    if (size < 1 || rank < 0 || rank >= size || a.ndims < 1 || !a.gsizes || !a.distribs || !a.dargs || !a.psizes ||
        !old || !valid_order(a.order)) {
        return bad_arg;
    }
    long long procs = 1;
    for (int i = 0; i < a.ndims; ++i) {
        const int dist = a.distribs[i];
        const int darg = a.dargs[i];
        if (a.gsizes[i] < 1 || a.psizes[i] < 1) {
            return bad_arg;
        }
        if (dist != distribute_block && dist != distribute_cyclic && dist != distribute_none) {
            return bad_arg;
        }
        if (dist == distribute_none && a.psizes[i] != 1) {
            return bad_arg;
        }
        if (darg != distribute_dflt_darg && darg < 1) {
            return bad_arg;
        }
        if (dist == distribute_block && darg != distribute_dflt_darg && (long long)darg * a.psizes[i] < a.gsizes[i]) {
            return bad_arg;
        }
        procs *= a.psizes[i];
        if (procs > size) {
            return bad_arg;
        }
    }
    return procs == size ? status{} : bad_arg;
}

// One dimension of a darray: the local elements of this process along dimension `dim` of cur
// (a row of the faster dimensions), with `row` the bytes between consecutive indices. Sets
// *start to the global index of the first local element.
result<datatype*> darray_dim(const darray_args& a, int dim, int np, int coord, bool fastest, const datatype* cur,
                             aint row, aint* start) {
    const long long g = a.gsizes[dim];
    const int darg = a.dargs[dim];
    if (a.distribs[dim] != distribute_cyclic) {  // block, or none (one process holds everything)
        const long long blk = darg == distribute_dflt_darg || np == 1 ? (g + np - 1) / np : darg;
        const long long mine = std::max(0LL, std::min(blk, g - blk * coord));
        *start = mine > 0 ? blk * coord : 0;
        return fastest ? type_contiguous(int(mine), cur) : type_hvector(int(mine), 1, row, cur);
    }
    const long long blk = darg == distribute_dflt_darg ? 1 : darg;
    const long long first = blk * coord;
    long long mine = 0;
    if (first < g) {
        const long long span = g - first;
        mine = span / (np * blk) * blk + std::min(span % (np * blk), blk);
    }
    *start = mine > 0 ? first : 0;
    const aint stride = aint(np) * blk * row;
    const int full = int(mine / blk);
    const int rem = int(mine % blk);
    auto blocks = type_hvector(full, int(blk), stride, cur);
    if (!blocks || rem == 0) {
        return blocks;
    }
    datatype_ref body(*blocks);
    const int lens[2] = {1, rem};
    const aint disps[2] = {0, aint(full) * stride};
    const datatype* types[2] = {body.get(), cur};
    return type_struct(2, lens, disps, types);
}

}  // namespace

result<datatype*> type_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs, const int* dargs,
                              const int* psizes, int order, const datatype* old) {
    const darray_args a{ndims, gsizes, distribs, dargs, psizes, order};
    if (status st = check_darray(size, rank, a, old); !st) {
        return st;
    }
    std::vector<int> coords(std::size_t(ndims), 0);
    for (int i = ndims - 1, r = rank; i >= 0; --i) {
        coords[std::size_t(i)] = r % psizes[i];
        r /= psizes[i];
    }
    old->retain();
    datatype_ref cur(old);
    aint row = old->extent();
    aint disp = 0;
    bool ovf = false;
    for (int k = 0; k < ndims; ++k) {
        const int d = dim_at(k, ndims, order);
        aint start = 0;
        auto r = darray_dim(a, d, psizes[d], coords[std::size_t(d)], k == 0, cur.get(), row, &start);
        if (status st = step(cur, std::move(r)); !st) {
            return st;
        }
        aint off = 0;
        ovf |= __builtin_mul_overflow(start, row, &off);
        ovf |= __builtin_add_overflow(disp, off, &disp);
        ovf |= __builtin_mul_overflow(row, aint(gsizes[d]), &row);
        if (status st = step(cur, type_resized(cur.get(), 0, row)); !st) {
            return st;
        }
    }
    if (ovf) {
        return too_big;
    }
    if (status st = place(cur, disp, row); !st) {
        return st;
    }
    std::vector<int> ints;
    ints.push_back(size);
    ints.push_back(rank);
    ints.push_back(ndims);
    for (const int* arr : {gsizes, distribs, dargs, psizes}) {
        ints.insert(ints.end(), arr, arr + ndims);
    }
    ints.push_back(order);
    return finish(combiner::darray, std::move(ints), old, cur);
}

}  // namespace mpc::mpi
