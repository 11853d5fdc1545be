/// \file
/// Cartesian topologies, MPI_Dims_create and MPI_Topo_test (MPI 3.1 sections 7.5.1-7.5.5).
/// Ranks are laid out in row-major order (the last dimension varies fastest); reorder is
/// ignored, so rank r of the new communicator is rank r of the old one.

#include "mpi_compat/topo.hpp"

#include <climits>
#include <memory>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"

namespace mpc::mpi {

topo_call enter_topo(const char* call, MPI_Comm h, int kind) noexcept {
    comm_call k = enter_comm(call, h);
    topo_call r;
    r.self = k.self;
    r.c = k.c;
    r.err = k.err;
    if (r.err != MPI_SUCCESS) {
        return r;
    }
    r.t = local_of(*r.self, r.c).topo.get();
    if (kind != 0 && (r.t == nullptr || r.t->kind != kind)) {
        r.err = raise(h, MPI_ERR_TOPOLOGY, call, "the communicator has no %s topology",
                      kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : "distributed graph");
    }
    return r;
}

int cart_shift(const virtual_topology& t, int rank, int dim, long long disp) noexcept {
    auto d = static_cast<std::size_t>(dim);
    long long stride = 1;  // of dimension dim: the product of the dimensions after it
    for (std::size_t i = d + 1; i < t.dims.size(); ++i) {
        stride *= t.dims[i];
    }
    long long n = t.dims[d];
    long long here = (rank / stride) % n;
    long long pos = here + disp;  // |disp| < 2^32: no overflow
    if (t.periods[d] == 0 && (pos < 0 || pos >= n)) {
        return MPI_PROC_NULL;
    }
    pos = ((pos % n) + n) % n;
    return static_cast<int>(rank + (pos - here) * stride);
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

namespace {

/// Smallest d with d^k >= m (k >= 1, m >= 1).
int root_ceil(int m, int k) {
    int d = 1;
    for (;;) {
        long long p = 1;
        for (int i = 0; i < k && p < m; ++i) {
            p *= d;
        }
        if (p >= m) {
            return d;
        }
        ++d;
    }
}

/// The most balanced factorization of m into k factors, each at most cap, in non-increasing
/// order: the smallest possible largest factor, then recursively the same for the rest.
/// `divisors` holds the divisors of the original number, ascending (those of m are among them).
bool balanced(int m, int k, int cap, const std::vector<int>& divisors, std::vector<int>& out) {
    if (k == 1) {
        if (m > cap) {
            return false;
        }
        out.push_back(m);
        return true;
    }
    int lo = root_ceil(m, k);
    for (int d : divisors) {
        if (d > m || d > cap) {
            break;
        }
        if (d < lo || m % d != 0) {
            continue;
        }
        out.push_back(d);
        if (balanced(m / d, k - 1, d, divisors, out)) {
            return true;
        }
        out.pop_back();
    }
    return false;
}

std::vector<int> divisors_of(int m) {
    std::vector<int> small;
    std::vector<int> large;
    for (int d = 1; static_cast<long long>(d) * d <= m; ++d) {
        if (m % d == 0) {
            small.push_back(d);
            if (d != m / d) {
                large.push_back(m / d);
            }
        }
    }
    small.insert(small.end(), large.rbegin(), large.rend());
    return small;
}

/// Checks ndims/dims/periods of Cart_create and Cart_map; sets the number of grid points.
int check_grid(const char* call, MPI_Comm h, int size, int ndims, const int* dims, const int* periods,
               int* points) noexcept {
    if (ndims < 0) {
        return raise(h, MPI_ERR_DIMS, call, "negative ndims %d", ndims);
    }
    if (ndims > 0 && (dims == nullptr || periods == nullptr)) {
        return raise(h, MPI_ERR_ARG, call, "null dims or periods array");
    }
    long long n = 1;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] <= 0) {
            return raise(h, MPI_ERR_DIMS, call, "dims[%d] = %d is not positive", i, dims[i]);
        }
        n *= dims[i];
        if (n > size) {
            break;
        }
    }
    if (n > size) {
        return raise(h, MPI_ERR_ARG, call, "the grid has more points than the communicator has ranks (%d)", size);
    }
    *points = static_cast<int>(n);
    return MPI_SUCCESS;
}

/// Coordinates of `rank` in a row-major grid.
void coords_of(const virtual_topology& t, int rank, int* coords) {
    for (int i = static_cast<int>(t.dims.size()) - 1; i >= 0; --i) {
        coords[i] = rank % t.dims[static_cast<std::size_t>(i)];
        rank /= t.dims[static_cast<std::size_t>(i)];
    }
}

/// The rank at `coords` (periodic dimensions wrapped), or -1 outside a non-periodic dimension.
int rank_at(const virtual_topology& t, const int* coords) {
    int rank = 0;
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
        int d = t.dims[i];
        int c = coords[i];
        if (t.periods[i] != 0) {
            c = ((c % d) + d) % d;
        } else if (c < 0 || c >= d) {
            return -1;
        }
        rank = rank * d + c;
    }
    return rank;
}

std::shared_ptr<const virtual_topology> make_cart(int ndims, const int* dims, const int* periods) {
    auto t = std::make_shared<virtual_topology>();
    t->kind = MPI_CART;
    t->dims.assign(dims, dims + ndims);
    for (int i = 0; i < ndims; ++i) {
        t->periods.push_back(periods[i] != 0 ? 1 : 0);
    }
    return t;
}

}  // namespace

extern "C" {

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    const char* call = "MPI_Dims_create";
    if (ndims < 0) {
        return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call, "negative ndims %d", ndims);
    }
    if (nnodes < 1 || (ndims > 0 && dims == nullptr)) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, nnodes < 1 ? "nnodes %d is not positive" : "null dims",
                     nnodes);
    }
    int fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] < 0) {
            return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call, "dims[%d] = %d is negative", i, dims[i]);
        }
        if (dims[i] == 0) {
            ++free_dims;
        } else if (nnodes % (static_cast<long long>(fixed) * dims[i]) != 0) {
            return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call, "the fixed dimensions do not divide nnodes = %d", nnodes);
        } else {
            fixed *= dims[i];
        }
    }
    int m = nnodes / fixed;
    if (free_dims == 0) {
        if (m != 1) {
            return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call, "the dimensions multiply to %d, not nnodes = %d", fixed,
                         nnodes);
        }
        return MPI_SUCCESS;
    }
    std::vector<int> f;
    f.reserve(static_cast<std::size_t>(free_dims));
    balanced(m, free_dims, m, divisors_of(m), f);  // always succeeds: m, 1, 1, ... fits
    std::size_t next = 0;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] == 0) {
            dims[i] = f[next++];
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm h, int ndims, const int dims[], const int periods[], int /*reorder*/,
                     MPI_Comm* newcomm) {
    comm_call k = enter_comm("MPI_Cart_create", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int points = 0;
    if (int e = check_grid("MPI_Cart_create", h, k.c->size(), ndims, dims, periods, &points); e != MPI_SUCCESS) {
        return e;
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_create", "null output pointer");
    }
    if (k.c->rank_of(*k.self) >= points) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    std::vector<int> members = members_of(*k.self, *k.c);
    members.resize(static_cast<std::size_t>(points));
    *newcomm = make_comm(*k.self, *k.c, members, tag_make_comm, make_cart(ndims, dims, periods));
    return MPI_SUCCESS;
}

int PMPI_Cart_map(MPI_Comm h, int ndims, const int dims[], const int periods[], int* newrank) {
    comm_call k = enter_comm("MPI_Cart_map", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int points = 0;
    if (int e = check_grid("MPI_Cart_map", h, k.c->size(), ndims, dims, periods, &points); e != MPI_SUCCESS) {
        return e;
    }
    if (newrank == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_map", "null output pointer");
    }
    int me = k.c->rank_of(*k.self);
    *newrank = me < points ? me : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm h, int* ndims) {
    topo_call k = enter_topo("MPI_Cartdim_get", h, MPI_CART);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (ndims == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Cartdim_get", "null output pointer");
    }
    *ndims = static_cast<int>(k.t->dims.size());
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm h, int maxdims, int dims[], int periods[], int coords[]) {
    topo_call k = enter_topo("MPI_Cart_get", h, MPI_CART);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int nd = static_cast<int>(k.t->dims.size());
    if (maxdims < nd || (nd > 0 && (dims == nullptr || periods == nullptr || coords == nullptr))) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_get", maxdims < nd ? "maxdims %d is below ndims %d" : "null array",
                     maxdims, nd);
    }
    for (int i = 0; i < nd; ++i) {
        dims[i] = k.t->dims[static_cast<std::size_t>(i)];
        periods[i] = k.t->periods[static_cast<std::size_t>(i)];
    }
    if (nd > 0) {
        coords_of(*k.t, k.c->rank_of(*k.self), coords);
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm h, int rank, int maxdims, int coords[]) {
    topo_call k = enter_topo("MPI_Cart_coords", h, MPI_CART);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (rank < 0 || rank >= k.c->size()) {
        return raise(h, MPI_ERR_RANK, "MPI_Cart_coords", "invalid rank %d (the communicator has %d ranks)", rank,
                     k.c->size());
    }
    int nd = static_cast<int>(k.t->dims.size());
    if (maxdims < nd || (nd > 0 && coords == nullptr)) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_coords", maxdims < nd ? "maxdims %d is below ndims %d" : "null coords",
                     maxdims, nd);
    }
    if (nd > 0) {
        coords_of(*k.t, rank, coords);
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm h, const int coords[], int* rank) {
    topo_call k = enter_topo("MPI_Cart_rank", h, MPI_CART);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int nd = static_cast<int>(k.t->dims.size());
    if (rank == nullptr || (nd > 0 && coords == nullptr)) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_rank", "null coords or rank pointer");
    }
    int r = nd > 0 ? rank_at(*k.t, coords) : 0;
    if (r < 0) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_rank", "coordinates outside a non-periodic dimension");
    }
    *rank = r;
    return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm h, int direction, int disp, int* source, int* dest) {
    topo_call k = enter_topo("MPI_Cart_shift", h, MPI_CART);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int nd = static_cast<int>(k.t->dims.size());
    if (direction < 0 || direction >= nd) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_shift", "invalid direction %d (ndims %d)", direction, nd);
    }
    if (source == nullptr || dest == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_shift", "null output pointer");
    }
    int me = k.c->rank_of(*k.self);
    *dest = cart_shift(*k.t, me, direction, disp);
    *source = cart_shift(*k.t, me, direction, -static_cast<long long>(disp));
    return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm h, const int remain_dims[], MPI_Comm* newcomm) {
    topo_call k = enter_topo("MPI_Cart_sub", h, MPI_CART);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    const virtual_topology& t = *k.t;
    int nd = static_cast<int>(t.dims.size());
    if ((nd > 0 && remain_dims == nullptr) || newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Cart_sub", "null remain_dims or output pointer");
    }
    // Every member knows the grid: the members of my sub-grid are the ranks whose dropped
    // coordinates equal mine, in rank order (so the kept coordinates stay row-major).
    auto sub = std::make_shared<virtual_topology>();
    sub->kind = MPI_CART;
    for (int i = 0; i < nd; ++i) {
        if (remain_dims[i] != 0) {
            sub->dims.push_back(t.dims[static_cast<std::size_t>(i)]);
            sub->periods.push_back(t.periods[static_cast<std::size_t>(i)]);
        }
    }
    std::vector<int> mine(static_cast<std::size_t>(nd));
    std::vector<int> other(static_cast<std::size_t>(nd));
    coords_of(t, k.c->rank_of(*k.self), mine.data());
    std::vector<int> all = members_of(*k.self, *k.c);
    std::vector<int> members;
    int points = 1;
    for (int d : t.dims) {
        points *= d;
    }
    for (int r = 0; r < points; ++r) {
        coords_of(t, r, other.data());
        bool same = true;
        for (int i = 0; i < nd && same; ++i) {
            same = remain_dims[i] != 0 || other[static_cast<std::size_t>(i)] == mine[static_cast<std::size_t>(i)];
        }
        if (same) {
            members.push_back(all[static_cast<std::size_t>(r)]);
        }
    }
    *newcomm = make_comm(*k.self, *k.c, members, tag_make_comm, std::move(sub));
    return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm h, int* status) {
    topo_call k = enter_topo("MPI_Topo_test", h, 0);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (status == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Topo_test", "null output pointer");
    }
    *status = k.t != nullptr ? k.t->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Dims_create(int, int, int[]) MPC_WEAK(MPI_Dims_create);
int MPI_Cart_create(MPI_Comm, int, const int[], const int[], int, MPI_Comm*) MPC_WEAK(MPI_Cart_create);
int MPI_Cart_map(MPI_Comm, int, const int[], const int[], int*) MPC_WEAK(MPI_Cart_map);
int MPI_Cartdim_get(MPI_Comm, int*) MPC_WEAK(MPI_Cartdim_get);
int MPI_Cart_get(MPI_Comm, int, int[], int[], int[]) MPC_WEAK(MPI_Cart_get);
int MPI_Cart_coords(MPI_Comm, int, int, int[]) MPC_WEAK(MPI_Cart_coords);
int MPI_Cart_rank(MPI_Comm, const int[], int*) MPC_WEAK(MPI_Cart_rank);
int MPI_Cart_shift(MPI_Comm, int, int, int*, int*) MPC_WEAK(MPI_Cart_shift);
int MPI_Cart_sub(MPI_Comm, const int[], MPI_Comm*) MPC_WEAK(MPI_Cart_sub);
int MPI_Topo_test(MPI_Comm, int*) MPC_WEAK(MPI_Topo_test);
}
