/// \file
/// StarPU 1.3 C API: data registration, unregistration, acquisition, sequential consistency.
/// starpu_data_handle_t is the core's data* (an opaque pointer either way); the interface
/// structures of the C headers are the core's, checked field by field below.

#include <starpu.h>

#include <cerrno>
#include <algorithm>
#include <cstdarg>
#include <cstddef>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

using namespace mpc::tg;

namespace {

#define MPC_SAME_FIELD(c, cxx, f) \
    static_assert(offsetof(c, f) == offsetof(cxx, f) && sizeof(c::f) == sizeof(cxx::f), #c "::" #f)
static_assert(sizeof(starpu_variable_interface) == sizeof(variable_interface));
MPC_SAME_FIELD(starpu_variable_interface, variable_interface, id);
MPC_SAME_FIELD(starpu_variable_interface, variable_interface, ptr);
MPC_SAME_FIELD(starpu_variable_interface, variable_interface, dev_handle);
MPC_SAME_FIELD(starpu_variable_interface, variable_interface, offset);
MPC_SAME_FIELD(starpu_variable_interface, variable_interface, elemsize);
static_assert(sizeof(starpu_vector_interface) == sizeof(vector_interface));
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, ptr);
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, dev_handle);
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, offset);
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, nx);
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, elemsize);
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, slice_base);
MPC_SAME_FIELD(starpu_vector_interface, vector_interface, allocsize);
static_assert(sizeof(starpu_matrix_interface) == sizeof(matrix_interface));
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, ptr);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, dev_handle);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, offset);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, nx);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, ny);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, ld);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, elemsize);
MPC_SAME_FIELD(starpu_matrix_interface, matrix_interface, allocsize);
static_assert(sizeof(starpu_block_interface) == sizeof(block_interface));
MPC_SAME_FIELD(starpu_block_interface, block_interface, ptr);
MPC_SAME_FIELD(starpu_block_interface, block_interface, dev_handle);
MPC_SAME_FIELD(starpu_block_interface, block_interface, offset);
MPC_SAME_FIELD(starpu_block_interface, block_interface, nx);
MPC_SAME_FIELD(starpu_block_interface, block_interface, ny);
MPC_SAME_FIELD(starpu_block_interface, block_interface, nz);
MPC_SAME_FIELD(starpu_block_interface, block_interface, ldy);
MPC_SAME_FIELD(starpu_block_interface, block_interface, ldz);
MPC_SAME_FIELD(starpu_block_interface, block_interface, elemsize);
static_assert(sizeof(starpu_csr_interface) == sizeof(csr_interface));
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, nnz);
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, nrow);
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, nzval);
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, colind);
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, rowptr);
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, firstentry);
static_assert(sizeof(starpu_bcsr_interface) == sizeof(bcsr_interface));
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, nnz);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, nrow);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, nzval);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, colind);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, rowptr);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, firstentry);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, r);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, c);
MPC_SAME_FIELD(starpu_bcsr_interface, bcsr_interface, elemsize);
static_assert(sizeof(starpu_coo_interface) == sizeof(coo_interface));
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, columns);
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, rows);
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, values);
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, nx);
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, ny);
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, n_values);
MPC_SAME_FIELD(starpu_coo_interface, coo_interface, elemsize);
MPC_SAME_FIELD(starpu_csr_interface, csr_interface, elemsize);
#undef MPC_SAME_FIELD
static_assert(static_cast<int>(STARPU_VARIABLE_INTERFACE_ID) == static_cast<int>(interface_id::variable) &&
              static_cast<int>(STARPU_VECTOR_INTERFACE_ID) == static_cast<int>(interface_id::vector) &&
              static_cast<int>(STARPU_MATRIX_INTERFACE_ID) == static_cast<int>(interface_id::matrix) &&
              static_cast<int>(STARPU_BLOCK_INTERFACE_ID) == static_cast<int>(interface_id::block) &&
              static_cast<int>(STARPU_CSR_INTERFACE_ID) == static_cast<int>(interface_id::csr) &&
              static_cast<int>(STARPU_MAX_INTERFACE_ID) == first_custom_id);
static_assert(+STARPU_R == +access_read && +STARPU_W == +access_write && +STARPU_RW == +access_rw &&
              +STARPU_SCRATCH == +access_scratch && +STARPU_REDUX == +access_redux &&
              +STARPU_COMMUTE == +access_commute);
static_assert(STARPU_NMAXBUFS == max_buffers && STARPU_MAXIMPLEMENTATIONS == max_implementations &&
              STARPU_NMAXWORKERS == max_workers);

data* core(starpu_data_handle_t h) noexcept { return reinterpret_cast<data*>(h); }

/// Registration by a void C function: a failure ends the program (StarPU asserts the same way).
/// Home node -1: the runtime makes the memory at the first submission that needs it.
/// Home node a disk (starpu_disk.h): the handle's memory is the runtime's, read from the
/// backend's object `disk_obj` (the registration's pointer) at the first use.
void registered(starpu_data_handle_t* h, int home_node, const char* call, const mpc::status& st, data* d,
                uintptr_t disk_obj = 0) noexcept {
    if (!st.ok()) {
        starpu::fatal(call, st.reason());
    }
    if (home_node == -1 || starpu::is_disk_node(home_node)) {
        if (mpc::status a = allocate_on_use(d); !a.ok()) {
            starpu::fatal(call, a.reason());
        }
    }
    if (starpu::is_disk_node(home_node)) {
        if (disk_obj == 0) {
            starpu::fatal(call, "a handle registered on a disk node needs the object of starpu_disk_open() as its pointer");
        }
        starpu::home_on_disk(d, static_cast<unsigned>(home_node), reinterpret_cast<void*>(disk_obj), data_size(d));
    }
    *h = reinterpret_cast<starpu_data_handle_t>(d);
}

/// The pointer the main-memory interface gets: the registration's, or none for a home on disk
/// (the pointer is the disk object then).
uintptr_t ram_ptr(int home_node, uintptr_t ptr) noexcept { return starpu::is_disk_node(home_node) ? 0 : ptr; }

void check_home(int home_node, const char* call, bool disk_ok = false) noexcept {
    if (home_node == STARPU_MAIN_RAM || home_node == -1 || (disk_ok && starpu::is_disk_node(home_node))) {
        return;
    }
    if (starpu::is_disk_node(home_node)) {
        starpu::fatal(call, "this interface cannot have its home on a disk node (variables, vectors, matrices and "
                            "blocks can); register it on -1: the memory limit may evict it to the disk");
    }
    starpu::fatal(call, "the home node must be STARPU_MAIN_RAM (0), a disk node of starpu_disk_register, or -1 "
                        "(memory allocated by the runtime)");
}

/// Main memory, a disk (an acquisition there holds the main-memory copy: the application can
/// address no other), or no node.
bool valid_node(int node, const char* call) noexcept {
    if (node == STARPU_MAIN_RAM || node == STARPU_ACQUIRE_NO_NODE || node == STARPU_ACQUIRE_NO_NODE_LOCK_ALL ||
        starpu::is_disk_node(node)) {
        return true;
    }
    MPC_LOG(error, tg, "%s: memory node %d does not exist (main memory is node 0, disks 1 to %d)", call, node,
            starpu::disk_count());
    return false;
}

template <class I>
const I* iface(starpu_data_handle_t h, interface_id id, const char* call) noexcept {
    if (h == nullptr || interface_of_kind(core(h)) != id) {
        starpu::fatal(call, "the handle is not of this interface");
    }
    return static_cast<const I*>(interface_of(core(h)));
}

}  // namespace

namespace mpc::tg::starpu {

int check_nodes(const starpu_codelet* cl, int nbuffers) noexcept {
    if (cl == nullptr || cl->specific_nodes == 0) {
        return 0;
    }
    for (int i = 0; i < nbuffers; ++i) {
        if (cl->dyn_nodes == nullptr && i >= STARPU_NMAXBUFS) {
            MPC_LOG(error, tg, "starpu_task_submit: codelet %s has specific_nodes and %d buffers: dyn_nodes is needed",
                    cl->name != nullptr ? cl->name : "(unnamed)", nbuffers);
            return -EINVAL;
        }
        const int node = STARPU_CODELET_GET_NODE(cl, i);
        // Main memory is the only node: the worker's (LOCAL), a CPU node and a slow node are it.
        if (node != STARPU_MAIN_RAM && node != STARPU_SPECIFIC_NODE_LOCAL && node != STARPU_SPECIFIC_NODE_CPU &&
            node != STARPU_SPECIFIC_NODE_SLOW) {
            MPC_LOG(error, tg, "starpu_task_submit: codelet %s puts buffer %d on memory node %d, which does not "
                               "exist (main memory, node 0, is the only one; STARPU_SPECIFIC_NODE_FAST has none)",
                    cl->name != nullptr ? cl->name : "(unnamed)", i, node);
            return -EINVAL;
        }
    }
    return 0;
}

}  // namespace mpc::tg::starpu

extern "C" {

void starpu_variable_data_register(starpu_data_handle_t* handle, int home_node, uintptr_t ptr, size_t size) {
    check_home(home_node, "starpu_variable_data_register", true);
    data* d = nullptr;
    mpc::status st = register_variable(&d, reinterpret_cast<void*>(ram_ptr(home_node, ptr)), size);
    registered(handle, home_node, "starpu_variable_data_register", st, d, ptr);
}

unsigned starpu_data_test_if_allocated_on_node(starpu_data_handle_t handle, unsigned memory_node) {
    if (memory_node != STARPU_MAIN_RAM) {
        return starpu::on_disk_node(core(handle), memory_node) ? 1 : 0;
    }
    return data_has_memory(core(handle)) ? 1 : 0;
}

int starpu_data_pointer_is_inside(starpu_data_handle_t handle, unsigned node, void* ptr) {
    if (starpu_data_test_if_allocated_on_node(handle, node) == 0) {
        return 0;
    }
    starpu_data_interface_ops* ops = starpu_data_get_interface_ops(handle);
    if (ops == nullptr || ops->pointer_is_inside == nullptr) {
        return -1;  // the interface cannot tell (StarPU's answer too)
    }
    return ops->pointer_is_inside(starpu_data_get_interface_on_node(handle, node), node, ptr);
}

void starpu_data_set_wt_mask(starpu_data_handle_t handle, uint32_t /*wt_mask*/) {
    (void)handle;  // one memory node: nothing to write through to
}

void starpu_void_data_register(starpu_data_handle_t* handle) {
    data* d = nullptr;
    mpc::status st = register_void(&d);
    registered(handle, STARPU_MAIN_RAM, "starpu_void_data_register", st, d);
}

void starpu_vector_data_register(starpu_data_handle_t* handle, int home_node, uintptr_t ptr, uint32_t nx,
                                 size_t elemsize) {
    check_home(home_node, "starpu_vector_data_register", true);
    data* d = nullptr;
    mpc::status st = register_vector(&d, reinterpret_cast<void*>(ram_ptr(home_node, ptr)), nx, elemsize);
    registered(handle, home_node, "starpu_vector_data_register", st, d, ptr);
    static_cast<vector_interface*>(interface_of(d))->allocsize = static_cast<size_t>(nx) * elemsize;
}

void starpu_vector_data_register_allocsize(starpu_data_handle_t* handle, int home_node, uintptr_t ptr, uint32_t nx,
                                           size_t elemsize, size_t allocsize) {
    if (allocsize < static_cast<size_t>(nx) * elemsize) {
        starpu::fatal("starpu_vector_data_register_allocsize", "allocsize is smaller than nx * elemsize");
    }
    starpu_vector_data_register(handle, home_node, ptr, nx, elemsize);
    static_cast<vector_interface*>(interface_of(core(*handle)))->allocsize = allocsize;
}

size_t starpu_vector_get_allocsize(starpu_data_handle_t handle) {
    return static_cast<const vector_interface*>(interface_of(core(handle)))->allocsize;
}

void starpu_matrix_data_register(starpu_data_handle_t* handle, int home_node, uintptr_t ptr, uint32_t ld,
                                 uint32_t nx, uint32_t ny, size_t elemsize) {
    check_home(home_node, "starpu_matrix_data_register", true);
    data* d = nullptr;
    const bool disk = starpu::is_disk_node(home_node);  // packed on the disk: no padding in main memory
    mpc::status st = register_matrix(&d, reinterpret_cast<void*>(ram_ptr(home_node, ptr)), disk ? nx : ld, nx, ny, elemsize);
    registered(handle, home_node, "starpu_matrix_data_register", st, d, ptr);
    static_cast<matrix_interface*>(interface_of(d))->allocsize = static_cast<size_t>(nx) * ny * elemsize;
}

void starpu_matrix_data_register_allocsize(starpu_data_handle_t* handle, int home_node, uintptr_t ptr, uint32_t ld,
                                           uint32_t nx, uint32_t ny, size_t elemsize, size_t allocsize) {
    if (allocsize < static_cast<size_t>(nx) * ny * elemsize) {
        starpu::fatal("starpu_matrix_data_register_allocsize", "allocsize is smaller than nx * ny * elemsize");
    }
    starpu_matrix_data_register(handle, home_node, ptr, ld, nx, ny, elemsize);
    static_cast<matrix_interface*>(interface_of(core(*handle)))->allocsize = allocsize;
}

size_t starpu_matrix_get_allocsize(starpu_data_handle_t handle) {
    return static_cast<const matrix_interface*>(interface_of(core(handle)))->allocsize;
}

void starpu_block_data_register(starpu_data_handle_t* handle, int home_node, uintptr_t ptr, uint32_t ldy,
                                uint32_t ldz, uint32_t nx, uint32_t ny, uint32_t nz, size_t elemsize) {
    check_home(home_node, "starpu_block_data_register", true);
    data* d = nullptr;
    const bool disk = starpu::is_disk_node(home_node);  // packed on the disk: no padding in main memory
    mpc::status st = register_block(&d, reinterpret_cast<void*>(ram_ptr(home_node, ptr)), disk ? nx : ldy,
                                    disk ? nx * ny : ldz, nx, ny, nz, elemsize);
    registered(handle, home_node, "starpu_block_data_register", st, d, ptr);
}

void starpu_csr_data_register(starpu_data_handle_t* handle, int home_node, uint32_t nnz, uint32_t nrow,
                              uintptr_t nzval, uint32_t* colind, uint32_t* rowptr, uint32_t firstentry,
                              size_t elemsize) {
    check_home(home_node, "starpu_csr_data_register");
    data* d = nullptr;
    mpc::status st =
        register_csr(&d, nnz, nrow, reinterpret_cast<void*>(nzval), colind, rowptr, firstentry, elemsize);
    registered(handle, home_node, "starpu_csr_data_register", st, d);
}

uint32_t starpu_csr_get_nnz(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_nnz")->nnz;
}
uint32_t starpu_csr_get_nrow(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_nrow")->nrow;
}
uint32_t starpu_csr_get_firstentry(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_firstentry")->firstentry;
}
uintptr_t starpu_csr_get_local_nzval(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_local_nzval")->nzval;
}
uint32_t* starpu_csr_get_local_colind(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_local_colind")->colind;
}
uint32_t* starpu_csr_get_local_rowptr(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_local_rowptr")->rowptr;
}
size_t starpu_csr_get_elemsize(starpu_data_handle_t h) {
    return iface<csr_interface>(h, interface_id::csr, "starpu_csr_get_elemsize")->elemsize;
}

void starpu_bcsr_data_register(starpu_data_handle_t* handle, int home_node, uint32_t nnz, uint32_t nrow,
                               uintptr_t nzval, uint32_t* colind, uint32_t* rowptr, uint32_t firstentry, uint32_t r,
                               uint32_t c, size_t elemsize) {
    check_home(home_node, "starpu_bcsr_data_register");
    data* d = nullptr;
    mpc::status st =
        register_bcsr(&d, nnz, nrow, reinterpret_cast<void*>(nzval), colind, rowptr, firstentry, r, c, elemsize);
    registered(handle, home_node, "starpu_bcsr_data_register", st, d);
}

#define MPC_BCSR_GET(type, name, field) \
    type starpu_bcsr_get_##name(starpu_data_handle_t h) { \
        return iface<bcsr_interface>(h, interface_id::bcsr, "starpu_bcsr_get_" #name)->field; \
    }
MPC_BCSR_GET(uint32_t, nnz, nnz)
MPC_BCSR_GET(uint32_t, nrow, nrow)
MPC_BCSR_GET(uint32_t, firstentry, firstentry)
MPC_BCSR_GET(uint32_t, r, r)
MPC_BCSR_GET(uint32_t, c, c)
MPC_BCSR_GET(size_t, elemsize, elemsize)
MPC_BCSR_GET(uintptr_t, local_nzval, nzval)
MPC_BCSR_GET(uint32_t*, local_colind, colind)
MPC_BCSR_GET(uint32_t*, local_rowptr, rowptr)
#undef MPC_BCSR_GET

void starpu_coo_data_register(starpu_data_handle_t* handleptr, int home_node, uint32_t nx, uint32_t ny,
                              uint32_t n_values, uint32_t* columns, uint32_t* rows, uintptr_t values, size_t elemsize) {
    check_home(home_node, "starpu_coo_data_register");
    data* d = nullptr;
    mpc::status st = register_coo(&d, nx, ny, n_values, columns, rows, reinterpret_cast<void*>(values), elemsize);
    registered(handleptr, home_node, "starpu_coo_data_register", st, d);
}

enum starpu_data_interface_id starpu_data_get_interface_id(starpu_data_handle_t handle) {
    return static_cast<starpu_data_interface_id>(interface_of_kind(core(handle)));
}

size_t starpu_variable_get_elemsize(starpu_data_handle_t h) {
    return iface<variable_interface>(h, interface_id::variable, "starpu_variable_get_elemsize")->elemsize;
}
uintptr_t starpu_variable_get_local_ptr(starpu_data_handle_t h) {
    return iface<variable_interface>(h, interface_id::variable, "starpu_variable_get_local_ptr")->ptr;
}
uint32_t starpu_vector_get_nx(starpu_data_handle_t h) {
    return iface<vector_interface>(h, interface_id::vector, "starpu_vector_get_nx")->nx;
}
size_t starpu_vector_get_elemsize(starpu_data_handle_t h) {
    return iface<vector_interface>(h, interface_id::vector, "starpu_vector_get_elemsize")->elemsize;
}
uintptr_t starpu_vector_get_local_ptr(starpu_data_handle_t h) {
    return iface<vector_interface>(h, interface_id::vector, "starpu_vector_get_local_ptr")->ptr;
}
uint32_t starpu_matrix_get_nx(starpu_data_handle_t h) {
    return iface<matrix_interface>(h, interface_id::matrix, "starpu_matrix_get_nx")->nx;
}
uint32_t starpu_matrix_get_ny(starpu_data_handle_t h) {
    return iface<matrix_interface>(h, interface_id::matrix, "starpu_matrix_get_ny")->ny;
}
uint32_t starpu_matrix_get_local_ld(starpu_data_handle_t h) {
    return iface<matrix_interface>(h, interface_id::matrix, "starpu_matrix_get_local_ld")->ld;
}
uintptr_t starpu_matrix_get_local_ptr(starpu_data_handle_t h) {
    return iface<matrix_interface>(h, interface_id::matrix, "starpu_matrix_get_local_ptr")->ptr;
}
size_t starpu_matrix_get_elemsize(starpu_data_handle_t h) {
    return iface<matrix_interface>(h, interface_id::matrix, "starpu_matrix_get_elemsize")->elemsize;
}

uint32_t starpu_block_get_nx(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_nx")->nx;
}
uint32_t starpu_block_get_ny(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_ny")->ny;
}
uint32_t starpu_block_get_nz(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_nz")->nz;
}
uint32_t starpu_block_get_local_ldy(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_local_ldy")->ldy;
}
uint32_t starpu_block_get_local_ldz(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_local_ldz")->ldz;
}
uintptr_t starpu_block_get_local_ptr(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_local_ptr")->ptr;
}
size_t starpu_block_get_elemsize(starpu_data_handle_t h) {
    return iface<block_interface>(h, interface_id::block, "starpu_block_get_elemsize")->elemsize;
}

void starpu_data_unregister(starpu_data_handle_t handle) {
    if (mpc::status st = unregister(core(handle)); !st.ok()) {
        starpu::fatal("starpu_data_unregister", st.reason());
    }
}

starpu_arbiter_t starpu_arbiter_create(void) {
    mpc::result<mpc::tg::arbiter*> a = mpc::tg::arbiter_create();
    if (!a) {
        starpu::fatal("starpu_arbiter_create", a.error().reason());
    }
    return reinterpret_cast<starpu_arbiter_t>(*a);
}

void starpu_data_assign_arbiter(starpu_data_handle_t handle, starpu_arbiter_t arbiter) {
    if (mpc::status st = mpc::tg::assign_arbiter(core(handle), reinterpret_cast<mpc::tg::arbiter*>(arbiter));
        !st.ok()) {
        starpu::fatal("starpu_data_assign_arbiter", st.reason());
    }
}

void starpu_arbiter_destroy(starpu_arbiter_t arbiter) {
    if (mpc::status st = mpc::tg::arbiter_destroy(reinterpret_cast<mpc::tg::arbiter*>(arbiter)); !st.ok()) {
        starpu::fatal("starpu_arbiter_destroy", st.reason());
    }
}

void starpu_data_unregister_no_coherency(starpu_data_handle_t handle) { starpu_data_unregister(handle); }

void starpu_data_unregister_submit(starpu_data_handle_t handle) {
    if (mpc::status st = unregister_submit(core(handle)); !st.ok()) {
        starpu::fatal("starpu_data_unregister_submit", st.reason());
    }
}

int starpu_data_acquire(starpu_data_handle_t handle, enum starpu_data_access_mode mode) {
    return starpu::errno_of(acquire(core(handle), static_cast<access_mode>(mode)));
}

void starpu_data_release(starpu_data_handle_t handle) {
    if (mpc::status st = release(core(handle)); !st.ok()) {
        starpu::fatal("starpu_data_release", st.reason());
    }
}

int starpu_data_acquire_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode) {
    mpc::status st = acquire_try(core(handle), static_cast<access_mode>(mode));
    return st.code() == mpc::errc::busy ? -EAGAIN : starpu::errno_of(st);
}

int starpu_data_acquire_on_node_try(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode) {
    return valid_node(node, "starpu_data_acquire_on_node_try") ? starpu_data_acquire_try(handle, mode) : -EINVAL;
}

int starpu_data_acquire_on_node(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode) {
    return valid_node(node, "starpu_data_acquire_on_node") ? starpu_data_acquire(handle, mode) : -EINVAL;
}

int starpu_data_acquire_on_node_cb_sequential_consistency(starpu_data_handle_t handle, int node,
                                                          enum starpu_data_access_mode mode, void (*callback)(void*),
                                                          void* arg, int sequential_consistency) {
    if (!valid_node(node, "starpu_data_acquire_cb")) {
        return -EINVAL;
    }
    return starpu::errno_of(
        acquire_async(core(handle), static_cast<access_mode>(mode), callback, arg, sequential_consistency != 0));
}

int starpu_data_acquire_on_node_cb_sequential_consistency_quick(starpu_data_handle_t handle, int node,
                                                                enum starpu_data_access_mode mode,
                                                                void (*callback)(void*), void* arg,
                                                                int sequential_consistency, int /*quick*/) {
    // `quick` skips StarPU's fetch when a valid copy exists: one memory node, nothing to fetch.
    return starpu_data_acquire_on_node_cb_sequential_consistency(handle, node, mode, callback, arg,
                                                                 sequential_consistency);
}

int starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(starpu_data_handle_t handle, int node,
                                                                      enum starpu_data_access_mode mode,
                                                                      void (*callback)(void*), void* arg,
                                                                      int sequential_consistency, int quick,
                                                                      long* pre_sync_jobid, long* post_sync_jobid) {
    // The two synchronisation points (the grant and the release) get job numbers of their own,
    // unique among starpu_task_get_job_id's, as StarPU's traces need.
    if (pre_sync_jobid != nullptr) {
        *pre_sync_jobid = static_cast<long>(starpu::new_job_id());
    }
    if (post_sync_jobid != nullptr) {
        *post_sync_jobid = static_cast<long>(starpu::new_job_id());
    }
    return starpu_data_acquire_on_node_cb_sequential_consistency_quick(handle, node, mode, callback, arg,
                                                                       sequential_consistency, quick);
}

int starpu_data_acquire_cb(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void*),
                           void* arg) {
    return starpu_data_acquire_on_node_cb_sequential_consistency(handle, STARPU_MAIN_RAM, mode, callback, arg, 1);
}

int starpu_data_acquire_on_node_cb(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
                                   void (*callback)(void*), void* arg) {
    return starpu_data_acquire_on_node_cb_sequential_consistency(handle, node, mode, callback, arg, 1);
}

int starpu_data_acquire_cb_sequential_consistency(starpu_data_handle_t handle, enum starpu_data_access_mode mode,
                                                  void (*callback)(void*), void* arg, int sequential_consistency) {
    return starpu_data_acquire_on_node_cb_sequential_consistency(handle, STARPU_MAIN_RAM, mode, callback, arg,
                                                                 sequential_consistency);
}

void starpu_data_release_on_node(starpu_data_handle_t handle, int node) {
    if (!valid_node(node, "starpu_data_release_on_node")) {
        starpu::fatal("starpu_data_release_on_node", "no such memory node");
    }
    starpu_data_release(handle);
}

void starpu_data_set_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[]) {
    mpc::tg::data* d = core(handle);
    const unsigned n = std::min(dimensions, 4u);
    for (unsigned i = 0; i < n; ++i) {
        d->coords[i] = dims[i];
    }
    d->ncoords = n;
}

void starpu_data_set_coordinates(starpu_data_handle_t handle, unsigned dimensions, ...) {
    int dims[4] = {};
    va_list ap;
    va_start(ap, dimensions);
    for (unsigned i = 0; i < dimensions; ++i) {
        const int v = va_arg(ap, int);
        if (i < 4) {
            dims[i] = v;
        }
    }
    va_end(ap);
    starpu_data_set_coordinates_array(handle, dimensions, dims);
}

unsigned starpu_data_get_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[]) {
    const mpc::tg::data* d = core(handle);
    const unsigned n = std::min(dimensions, d->ncoords);
    for (unsigned i = 0; i < n; ++i) {
        dims[i] = d->coords[i];
    }
    return d->ncoords;
}

void starpu_data_set_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet* redux_cl,
                                       struct starpu_codelet* init_cl) {
    // Either may be NULL (StarPU's rule): an init codelet alone initialises the handle's data
    // when it holds no value; a REDUX access needs both.
    if ((redux_cl != nullptr && redux_cl->cpu_funcs[0] == nullptr) ||
        (init_cl != nullptr && init_cl->cpu_funcs[0] == nullptr)) {
        starpu::fatal("starpu_data_set_reduction_methods", "the codelets need a CPU implementation");
    }
    if (mpc::status st = set_reduction(core(handle), redux_cl != nullptr ? redux_cl->cpu_funcs[0] : nullptr, nullptr,
                                       init_cl != nullptr ? init_cl->cpu_funcs[0] : nullptr, nullptr);
        !st.ok()) {
        starpu::fatal("starpu_data_set_reduction_methods", st.reason());
    }
}

namespace {
void release_cb(void* h) { starpu_data_release(static_cast<starpu_data_handle_t>(h)); }
void invalidate_cb(void* h) {
    mark_undefined(core(static_cast<starpu_data_handle_t>(h)));
    starpu_data_release(static_cast<starpu_data_handle_t>(h));
}
}  // namespace

void starpu_data_invalidate_submit(starpu_data_handle_t handle) {
    if (mpc::status st = acquire_async(core(handle), access_write, &invalidate_cb, handle); !st.ok()) {
        starpu::fatal("starpu_data_invalidate_submit", st.reason());
    }
}

void starpu_data_invalidate(starpu_data_handle_t handle) {
    if (int rc = starpu_data_acquire(handle, STARPU_W); rc != 0) {
        starpu::fatal("starpu_data_invalidate", "cannot take the data (called from a task?)");
    }
    mark_undefined(core(handle));
    starpu_data_release(handle);
}

namespace {
/// Main memory: a handle evicted to disk is read back (data's prefetch_memory: a hint, taking
/// memory without waiting; `idle`: only memory that is free). A disk node: the data's disk
/// copy stays as it is (eviction writes it when it must).
int prefetch(starpu_data_handle_t handle, unsigned node, unsigned async, bool idle, const char* call) noexcept {
    if (!valid_node(static_cast<int>(node), call)) {
        return -EINVAL;
    }
    if (node == STARPU_MAIN_RAM) {
        detail::prefetch_memory(core(handle), async != 0, !idle);
    }
    return 0;
}
}  // namespace

int starpu_data_fetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async) {
    if (!valid_node(static_cast<int>(node), "starpu_data_fetch_on_node")) {
        return -EINVAL;
    }
    if (async != 0) {
        return prefetch(handle, node, async, false, "starpu_data_fetch_on_node");
    }
    if (int rc = starpu_data_acquire(handle, STARPU_R); rc != 0) {
        return rc;
    }
    starpu_data_release(handle);
    return 0;
}


int starpu_data_request_allocation(starpu_data_handle_t handle, unsigned node) {
    if (!valid_node(static_cast<int>(node), "starpu_data_request_allocation")) {
        return -EINVAL;
    }
    if (!detail::live(core(handle), "starpu_data_request_allocation").ok()) {
        return -EINVAL;
    }
    if (node != STARPU_MAIN_RAM) {
        return 0;  // a disk's copy is made by the eviction that writes it
    }
    // Memory made now (under the limit: may wait), an evicted value read back on a helper
    // while the caller goes on (the next access waits for it).
    return starpu::errno_of(detail::ensure_memory(core(handle), nullptr, true, true));
}

void starpu_memchunk_tidy(unsigned memory_node) {
    if (memory_node == STARPU_MAIN_RAM) {
        flush_scratch_cache();  // the buffers the workers keep for reuse
    }
}

int starpu_get_prefetch_flag(void) { return starpu_get_env_number_default("STARPU_PREFETCH", 1); }

int starpu_data_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async) {
    return prefetch(handle, node, async, false, "starpu_data_prefetch_on_node");
}

int starpu_data_idle_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async) {
    return prefetch(handle, node, async, true, "starpu_data_idle_prefetch_on_node");
}

unsigned starpu_data_is_on_node(starpu_data_handle_t handle, unsigned node) {
    if (node == STARPU_MAIN_RAM) {
        return 1;  // a handle evicted to disk, or not used yet, is read (or made) at its next use
    }
    unsigned is = 0;
    if (starpu::on_disk_node(core(handle), node)) {
        mpc::spin_guard g(core(handle)->g.lock);
        is = core(handle)->disk_valid ? 1 : 0;
    }
    return is;
}

void starpu_data_wont_use(starpu_data_handle_t handle) {
    // First in the eviction order (to disk, starpu_disk.h) until a task or acquisition names
    // it again; main memory is the only other node, so nothing else is to move.
    data* d = core(handle);
    mpc::spin_guard g(d->g.lock);
    d->last_use = 0;
}

void starpu_data_set_user_data(starpu_data_handle_t handle, void* user_data) { set_user_data(core(handle), user_data); }
void* starpu_data_get_user_data(starpu_data_handle_t handle) { return user_data(core(handle)); }

void starpu_data_set_sequential_consistency_flag(starpu_data_handle_t handle, unsigned flag) {
    set_sequential_consistency(core(handle), flag != 0);
}
unsigned starpu_data_get_sequential_consistency_flag(starpu_data_handle_t handle) {
    return sequential_consistency(core(handle)) ? 1 : 0;
}
void starpu_data_set_default_sequential_consistency_flag(unsigned flag) {
    set_default_sequential_consistency(flag != 0);
}
unsigned starpu_data_get_default_sequential_consistency_flag(void) {
    return default_sequential_consistency() ? 1 : 0;
}

unsigned starpu_task_get_current_data_node(unsigned /*i*/) { return STARPU_MAIN_RAM; }

}  // extern "C"
