/// \file
/// StarPU 1.3 C API: custom data interfaces (struct starpu_data_interface_ops) over the core's
/// interface_ops, and the interface-generic calls: size, local pointer, pack/unpack, memory on
/// a node.
///
/// A custom handle's interface lives in the core handle (register_custom copies it); the
/// interface's register_data_handle then fills it through starpu_data_get_interface_on_node(),
/// as it does in StarPU for each memory node (only node 0 exists; other nodes get a sink).
/// Scratch buffers, redux copies and handles registered on node -1 get their memory from the
/// interface's allocate_data_on_node on a copy of the interface, and give it back with
/// free_data_on_node.

#include <starpu.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

using namespace mpc::tg;

namespace {

data* core(starpu_data_handle_t h) noexcept { return reinterpret_cast<data*>(h); }
starpu_data_handle_t handle_of(const data* d) noexcept {
    return reinterpret_cast<starpu_data_handle_t>(const_cast<data*>(d));
}
const starpu_data_interface_ops* ops_of(const void* ctx) noexcept {
    return static_cast<const starpu_data_interface_ops*>(ctx);
}

long custom_allocate(void* iface, const void* ctx) noexcept {
    return static_cast<long>(ops_of(ctx)->allocate_data_on_node(iface, STARPU_MAIN_RAM));
}
void custom_release(void* iface, const void* ctx) noexcept { ops_of(ctx)->free_data_on_node(iface, STARPU_MAIN_RAM); }
std::size_t custom_size(const void* /*iface*/, const void* ctx, const data* d) noexcept {
    const starpu_data_interface_ops* o = ops_of(ctx);
    if (o->get_alloc_size != nullptr) {
        return o->get_alloc_size(handle_of(d));
    }
    return o->get_size != nullptr ? o->get_size(handle_of(d)) : 0;
}
std::uint32_t custom_footprint(const data* d, const void* ctx) noexcept {
    return ops_of(ctx)->footprint(handle_of(d));
}
/// StarPU's memory cache accepts a buffer for another handle when alloc_compare (else compare)
/// says the two interfaces are compatible (non-zero).
bool custom_same_shape(const void* made, const void* iface, const void* ctx) noexcept {
    const starpu_data_interface_ops* o = ops_of(ctx);
    int (*cmp)(void*, void*) = o->alloc_compare != nullptr ? o->alloc_compare : o->compare;
    return cmp(const_cast<void*>(made), const_cast<void*>(iface)) != 0;
}
void custom_forget(data* d, const void* ctx) noexcept {
    if (ops_of(ctx)->unregister_data_handle != nullptr) {
        ops_of(ctx)->unregister_data_handle(handle_of(d));
    }
}

std::atomic<int> g_next_interface_id{STARPU_MAX_INTERFACE_ID};

bool is_custom(starpu_data_handle_t h) noexcept {
    return custom_storage(static_cast<int>(interface_of_kind(core(h))));
}

bool sparse(starpu_data_handle_t h, void* arrays[3], std::size_t bytes[3]) noexcept {
    return mpc::tg::starpu::sparse_arrays_of(interface_of(core(h)), starpu_data_get_interface_id(h), arrays, bytes);
}

bool dense(starpu_data_handle_t h, mpc::tg::starpu::dense_layout* out) noexcept {
    return mpc::tg::starpu::dense_of(interface_of(core(h)), starpu_data_get_interface_id(h), out);
}

}  // namespace

namespace mpc::tg::starpu {
std::atomic<int> g_on_node_flags{STARPU_MALLOC_PINNED};
int on_node_flags() noexcept { return g_on_node_flags.load(std::memory_order_acquire); }

bool dense_of(void* i, int id, dense_layout* out) noexcept {
    switch (id) {
    case STARPU_VARIABLE_INTERFACE_ID:
        *out = {reinterpret_cast<char*>(STARPU_VARIABLE_GET_PTR(i)), STARPU_VARIABLE_GET_ELEMSIZE(i), 1, 0, 1, 0};
        return true;
    case STARPU_VECTOR_INTERFACE_ID:
        *out = {reinterpret_cast<char*>(STARPU_VECTOR_GET_PTR(i)),
                STARPU_VECTOR_GET_NX(i) * STARPU_VECTOR_GET_ELEMSIZE(i), 1, 0, 1, 0};
        return true;
    case STARPU_MATRIX_INTERFACE_ID: {
        std::size_t e = STARPU_MATRIX_GET_ELEMSIZE(i);
        *out = {reinterpret_cast<char*>(STARPU_MATRIX_GET_PTR(i)), STARPU_MATRIX_GET_NX(i) * e,
                STARPU_MATRIX_GET_NY(i), STARPU_MATRIX_GET_LD(i) * e, STARPU_MATRIX_GET_NY(i), 0};
        return true;
    }
    case STARPU_BLOCK_INTERFACE_ID: {
        std::size_t e = STARPU_BLOCK_GET_ELEMSIZE(i);
        std::size_t ny = STARPU_BLOCK_GET_NY(i);
        *out = {reinterpret_cast<char*>(STARPU_BLOCK_GET_PTR(i)), STARPU_BLOCK_GET_NX(i) * e,
                ny * STARPU_BLOCK_GET_NZ(i), STARPU_BLOCK_GET_LDY(i) * e, ny == 0 ? 1 : ny,
                STARPU_BLOCK_GET_LDZ(i) * e};
        return true;
    }
    default:
        return false;
    }
}

bool sparse_arrays_of(void* i, int id, void* arrays[3], std::size_t bytes[3]) noexcept {
    constexpr std::size_t u32 = sizeof(uint32_t);
    switch (id) {
    case STARPU_CSR_INTERFACE_ID: {
        const std::size_t nnz = STARPU_CSR_GET_NNZ(i);
        arrays[0] = reinterpret_cast<void*>(STARPU_CSR_GET_NZVAL(i));
        arrays[1] = STARPU_CSR_GET_COLIND(i);
        arrays[2] = STARPU_CSR_GET_ROWPTR(i);
        bytes[0] = nnz * STARPU_CSR_GET_ELEMSIZE(i);
        bytes[1] = nnz * u32;
        bytes[2] = (STARPU_CSR_GET_NROW(i) + std::size_t{1}) * u32;
        return true;
    }
    case STARPU_BCSR_INTERFACE_ID: {
        const std::size_t nnz = STARPU_BCSR_GET_NNZ(i);
        arrays[0] = reinterpret_cast<void*>(STARPU_BCSR_GET_NZVAL(i));
        arrays[1] = STARPU_BCSR_GET_COLIND(i);
        arrays[2] = STARPU_BCSR_GET_ROWPTR(i);
        bytes[0] = nnz * STARPU_BCSR_GET_R(i) * STARPU_BCSR_GET_C(i) * STARPU_BCSR_GET_ELEMSIZE(i);
        bytes[1] = nnz * u32;
        bytes[2] = (STARPU_BCSR_GET_NROW(i) + std::size_t{1}) * u32;
        return true;
    }
    case STARPU_COO_INTERFACE_ID: {
        const std::size_t n = STARPU_COO_GET_NVALUES(i);
        arrays[0] = reinterpret_cast<void*>(STARPU_COO_GET_VALUES(i));
        arrays[1] = STARPU_COO_GET_COLUMNS(i);
        arrays[2] = STARPU_COO_GET_ROWS(i);
        bytes[0] = n * STARPU_COO_GET_ELEMSIZE(i);
        bytes[1] = n * u32;
        bytes[2] = n * u32;
        return true;
    }
    default:
        return false;
    }
}

interface_ops core_ops_of(const starpu_data_interface_ops* ops) noexcept {
    interface_ops o{ops->interface_size, &custom_allocate, &custom_release, &custom_size, &custom_forget, ops};
    if (ops->footprint != nullptr) {
        o.footprint = &custom_footprint;
    }
    if (ops->alloc_compare != nullptr || ops->compare != nullptr) {
        o.same_shape = &custom_same_shape;  // else its scratch buffers are not kept for reuse
    }
    return o;
}

}  // namespace mpc::tg::starpu

extern "C" {

void starpu_data_register(starpu_data_handle_t* handleptr, int home_node, void* data_interface,
                          struct starpu_data_interface_ops* ops) {
    if (ops != nullptr && data_interface != nullptr && handleptr != nullptr) {
        // A table of a dense built-in interface (often a copy of starpu_interface_*_ops with
        // methods of the program's own, as StarPU's tests make): the data is that interface's,
        // registered as such (the runtime moves data with its own methods, never the table's).
        const void* i = data_interface;
        switch (ops->interfaceid) {
        case STARPU_VARIABLE_INTERFACE_ID: {
            const auto* v = static_cast<const starpu_variable_interface*>(i);
            starpu_variable_data_register(handleptr, home_node, v->ptr, v->elemsize);
            return;
        }
        case STARPU_VECTOR_INTERFACE_ID: {
            const auto* v = static_cast<const starpu_vector_interface*>(i);
            starpu_vector_data_register(handleptr, home_node, v->ptr, v->nx, v->elemsize);
            return;
        }
        case STARPU_MATRIX_INTERFACE_ID: {
            const auto* m = static_cast<const starpu_matrix_interface*>(i);
            starpu_matrix_data_register(handleptr, home_node, m->ptr, m->ld, m->nx, m->ny, m->elemsize);
            return;
        }
        case STARPU_BLOCK_INTERFACE_ID: {
            const auto* b = static_cast<const starpu_block_interface*>(i);
            starpu_block_data_register(handleptr, home_node, b->ptr, b->ldy, b->ldz, b->nx, b->ny, b->nz,
                                       b->elemsize);
            return;
        }
        default: break;
        }
    }
    if (ops == nullptr || ops->register_data_handle == nullptr || ops->allocate_data_on_node == nullptr ||
        ops->free_data_on_node == nullptr || ops->interface_size == 0 || data_interface == nullptr) {
        mpc::tg::starpu::fatal("starpu_data_register", "the interface ops need register_data_handle, "
                                                       "allocate_data_on_node, free_data_on_node and interface_size");
    }
    if (home_node != STARPU_MAIN_RAM && home_node != -1) {
        mpc::tg::starpu::fatal("starpu_data_register",
                               mpc::tg::starpu::is_disk_node(home_node)
                                   ? "a custom interface cannot have its home on a disk node; register it on -1: the "
                                     "memory limit may evict it to the disk (through its pack_data/unpack_data)"
                                   : "the home node must be STARPU_MAIN_RAM (0) or -1");
    }
    if (static_cast<int>(ops->interfaceid) < STARPU_MAX_INTERFACE_ID) {
        // StarPU asserts the same: the id comes from starpu_data_interface_get_next_id().
        mpc::tg::starpu::fatal("starpu_data_register", "ops->interfaceid must be set, with "
                                                       "starpu_data_interface_get_next_id()");
    }
    const interface_ops core_ops = mpc::tg::starpu::core_ops_of(ops);
    data* d = nullptr;
    if (mpc::status st = register_custom(&d, ops->interfaceid, data_interface, core_ops); !st.ok()) {
        mpc::tg::starpu::fatal("starpu_data_register", st.reason());
    }
    starpu_data_handle_t h = handle_of(d);
    if (ops->init != nullptr) {
        ops->init(interface_of(d));
    }
    ops->register_data_handle(h, static_cast<unsigned>(home_node), data_interface);
    if (home_node == -1) {
        if (mpc::status st = allocate_on_use(d); !st.ok()) {
            mpc::tg::starpu::fatal("starpu_data_register", st.reason());
        }
    }
    *handleptr = h;
}

void starpu_data_register_same(starpu_data_handle_t* handledst, starpu_data_handle_t handlesrc) {
    data* d = nullptr;
    if (mpc::status st = register_same(&d, core(handlesrc)); !st.ok()) {
        mpc::tg::starpu::fatal("starpu_data_register_same", st.reason());
    }
    *handledst = handle_of(d);
}

void* starpu_data_get_interface_on_node(starpu_data_handle_t handle, unsigned memory_node) {
    if (memory_node == STARPU_MAIN_RAM) {
        return interface_of(core(handle));
    }
    return interface_sink(core(handle));
}

int starpu_data_interface_get_next_id(void) { return g_next_interface_id.fetch_add(1); }

struct starpu_data_interface_ops* starpu_data_get_interface_ops(starpu_data_handle_t handle) {
    // A custom handle's interface_ops carry the application's table as their context.
    if (!is_custom(handle)) {
        return mpc::tg::starpu::builtin_ops(starpu_data_get_interface_id(handle));
    }
    return const_cast<starpu_data_interface_ops*>(ops_of(interface_ops_of(core(handle))->ctx));
}

size_t starpu_data_get_size(starpu_data_handle_t handle) { return data_size(core(handle)); }

void* starpu_data_handle_to_pointer(starpu_data_handle_t handle, unsigned node) {
    if (node != STARPU_MAIN_RAM) {
        return nullptr;
    }
    if (is_custom(handle)) {
        const starpu_data_interface_ops* o = starpu_data_get_interface_ops(handle);
        if (o->to_pointer != nullptr) {
            return o->to_pointer(interface_of(core(handle)), node);
        }
        return o->handle_to_pointer != nullptr ? o->handle_to_pointer(handle, node) : nullptr;
    }
    void* arrays[3];
    std::size_t bytes[3];
    if (mpc::tg::starpu::sparse_arrays_of(interface_of(core(handle)), starpu_data_get_interface_id(handle), arrays,
                                          bytes)) {
        return arrays[0];  // the values
    }
    return reinterpret_cast<void*>(STARPU_VARIABLE_GET_PTR(interface_of(core(handle))));  // ptr: same place in each
}

void* starpu_data_get_local_ptr(starpu_data_handle_t handle) {
    return starpu_data_handle_to_pointer(handle, STARPU_MAIN_RAM);
}

starpu_data_handle_t starpu_data_lookup(const void* ptr) {
    if (ptr == nullptr) {
        return nullptr;
    }
    // Under StarPU's OpenMP support the lookup is scoped, as StarPU's: an OpenMP task or region
    // sees the handles registered in it (detail::g_data_scope); otherwise every handle.
    struct key {
        const void* ptr;
        const void* scope;
    };
    const void* (*scope)() = mpc::tg::detail::g_data_scope.load(std::memory_order_acquire);
    const key k{ptr, scope != nullptr ? scope() : nullptr};
    auto match = [](mpc::tg::data* d, const void* kp) {
        const auto* want = static_cast<const key*>(kp);
        return d->scope == want->scope &&
               starpu_data_handle_to_pointer(reinterpret_cast<starpu_data_handle_t>(d), STARPU_MAIN_RAM) == want->ptr;
    };
    return reinterpret_cast<starpu_data_handle_t>(mpc::tg::find_handle(match, &k));
}

int starpu_data_pack(starpu_data_handle_t handle, void** ptr, starpu_ssize_t* count) {
    if (is_custom(handle)) {
        const starpu_data_interface_ops* o = starpu_data_get_interface_ops(handle);
        return o->pack_data != nullptr ? o->pack_data(handle, STARPU_MAIN_RAM, ptr, count) : -ENOSYS;
    }
    void* arrays[3];
    std::size_t bytes[3];
    if (sparse(handle, arrays, bytes)) {
        *count = static_cast<starpu_ssize_t>(bytes[0] + bytes[1] + bytes[2]);
        if (ptr == nullptr) {
            return 0;
        }
        if (starpu_malloc_flags(ptr, static_cast<size_t>(*count), 0) != 0) {
            return -ENOMEM;
        }
        char* out = static_cast<char*>(*ptr);
        for (int k = 0; k < 3; ++k) {
            std::memcpy(out, arrays[k], bytes[k]);
            out += bytes[k];
        }
        return 0;
    }
    mpc::tg::starpu::dense_layout l;
    if (!dense(handle, &l)) {
        MPC_LOG(error, tg, "starpu_data_pack: interface %d cannot be packed", starpu_data_get_interface_id(handle));
        return -ENOSYS;
    }
    *count = static_cast<starpu_ssize_t>(l.len * l.count);
    if (ptr == nullptr) {
        return 0;
    }
    if (starpu_malloc_flags(ptr, static_cast<size_t>(*count), 0) != 0) {
        return -ENOMEM;
    }
    for (std::size_t r = 0; r < l.count; ++r) {
        std::memcpy(static_cast<char*>(*ptr) + r * l.len, l.run(r), l.len);
    }
    return 0;
}

int starpu_data_unpack(starpu_data_handle_t handle, void* ptr, size_t count) {
    if (is_custom(handle)) {
        const starpu_data_interface_ops* o = starpu_data_get_interface_ops(handle);
        return o->unpack_data != nullptr ? o->unpack_data(handle, STARPU_MAIN_RAM, ptr, count) : -ENOSYS;
    }
    void* arrays[3];
    std::size_t bytes[3];
    if (sparse(handle, arrays, bytes)) {
        if (count != bytes[0] + bytes[1] + bytes[2]) {
            MPC_LOG(error, tg, "starpu_data_unpack: %zu bytes given, the data takes %zu", count,
                    bytes[0] + bytes[1] + bytes[2]);
            return -EINVAL;
        }
        const char* in = static_cast<const char*>(ptr);
        for (int k = 0; k < 3; ++k) {
            std::memcpy(arrays[k], in, bytes[k]);
            in += bytes[k];
        }
        starpu_free_flags(ptr, count, 0);
        return 0;
    }
    mpc::tg::starpu::dense_layout l;
    if (!dense(handle, &l)) {
        return -ENOSYS;
    }
    if (count != l.len * l.count) {
        MPC_LOG(error, tg, "starpu_data_unpack: %zu bytes given, the data takes %zu", count, l.len * l.count);
        return -EINVAL;
    }
    for (std::size_t r = 0; r < l.count; ++r) {
        std::memcpy(l.run(r), static_cast<const char*>(ptr) + r * l.len, l.len);
    }
    starpu_free_flags(ptr, count, 0);
    return 0;
}

uintptr_t starpu_malloc_on_node_flags(unsigned dst_node, size_t size, int flags) {
    if (dst_node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_malloc_on_node: memory node %u does not exist", dst_node);
        return 0;
    }
    void* p = nullptr;
    return starpu_malloc_flags(&p, size, flags) == 0 ? reinterpret_cast<uintptr_t>(p) : 0;
}

uintptr_t starpu_malloc_on_node(unsigned dst_node, size_t size) {
    return starpu_malloc_on_node_flags(dst_node, size, starpu::on_node_flags());
}

void starpu_malloc_on_node_set_default_flags(unsigned node, int flags) {
    if (node != STARPU_MAIN_RAM) {
        MPC_LOG(error, tg, "starpu_malloc_on_node_set_default_flags: memory node %u has no allocations of "
                           "starpu_malloc_on_node (main memory, 0, has)", node);
        return;
    }
    starpu::g_on_node_flags.store(flags, std::memory_order_release);
}

void starpu_free_on_node_flags(unsigned dst_node, uintptr_t addr, size_t size, int flags) {
    if (dst_node == STARPU_MAIN_RAM && addr != 0) {
        starpu_free_flags(reinterpret_cast<void*>(addr), size, flags);
    }
}

void starpu_free_on_node(unsigned dst_node, uintptr_t addr, size_t size) {
    starpu_free_on_node_flags(dst_node, addr, size, starpu::on_node_flags());
}

}  // extern "C"
