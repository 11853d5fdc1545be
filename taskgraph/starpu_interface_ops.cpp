/// \file
/// StarPU 1.3 C API: the built-in interfaces' ops tables (starpu_interface_variable_ops,
/// _vector_ops, _matrix_ops, _block_ops, _csr_ops, _bcsr_ops, _coo_ops), which
/// starpu_data_get_interface_ops() gives for a built-in handle. They describe the interfaces to a
/// program that inspects a handle generically: interfaceid, interface_size, name, get_size,
/// footprint, compare, to_pointer, handle_to_pointer, pack_data / unpack_data (the runtime's
/// own, as starpu_data_pack), describe (StarPU's short text: a letter, then the sizes) and
/// display (StarPU's tab-separated sizes), with the same methods present as in StarPU 1.3.10
/// (ops_compare.c compares them): CSR and BCSR have no display, CSR and COO no to_pointer. The registration and memory methods stay NULL: the
/// built-ins are registered with their own starpu_*_data_register calls, and their memory is
/// the runtime's business (interfaces.cpp).

#include <starpu.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace {

/// StarPU's describe texts (checked against Debian's StarPU by ops_compare.c).
starpu_ssize_t describe_variable(void* i, char* buf, size_t size) {
    auto* v = static_cast<starpu_variable_interface*>(i);
    return std::snprintf(buf, size, "v%u", static_cast<unsigned>(v->elemsize));
}
starpu_ssize_t describe_vector(void* i, char* buf, size_t size) {
    auto* v = static_cast<starpu_vector_interface*>(i);
    return std::snprintf(buf, size, "V%ux%u", v->nx, static_cast<unsigned>(v->elemsize));
}
starpu_ssize_t describe_matrix(void* i, char* buf, size_t size) {
    auto* m = static_cast<starpu_matrix_interface*>(i);
    return std::snprintf(buf, size, "M%ux%ux%u", m->nx, m->ny, static_cast<unsigned>(m->elemsize));
}
starpu_ssize_t describe_block(void* i, char* buf, size_t size) {
    auto* b = static_cast<starpu_block_interface*>(i);
    return std::snprintf(buf, size, "B%ux%ux%ux%u", b->nx, b->ny, b->nz, static_cast<unsigned>(b->elemsize));
}
starpu_ssize_t describe_csr(void* i, char* buf, size_t size) {
    auto* c = static_cast<starpu_csr_interface*>(i);
    return std::snprintf(buf, size, "C%ux%ux%u", c->nnz, c->nrow, static_cast<unsigned>(c->elemsize));
}
starpu_ssize_t describe_bcsr(void* i, char* buf, size_t size) {
    auto* b = static_cast<starpu_bcsr_interface*>(i);
    return std::snprintf(buf, size, "b%ux%ux%ux%ux%u", b->nnz, b->nrow, b->r, b->c, static_cast<unsigned>(b->elemsize));
}
starpu_ssize_t describe_coo(void* i, char* buf, size_t size) {
    auto* c = static_cast<starpu_coo_interface*>(i);
    // StarPU 1.3.10 writes COO with the matrix's letter.
    return std::snprintf(buf, size, "M%ux%ux%ux%u", c->nx, c->ny, c->n_values, static_cast<unsigned>(c->elemsize));
}

void* iface(starpu_data_handle_t h) { return starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM); }

void display_variable(starpu_data_handle_t h, FILE* f) {
    std::fprintf(f, "%ld\t", static_cast<long>(static_cast<starpu_variable_interface*>(iface(h))->elemsize));
}
void display_vector(starpu_data_handle_t h, FILE* f) {
    std::fprintf(f, "%u\t", static_cast<starpu_vector_interface*>(iface(h))->nx);
}
void display_matrix(starpu_data_handle_t h, FILE* f) {
    auto* m = static_cast<starpu_matrix_interface*>(iface(h));
    std::fprintf(f, "%u\t%u\t", m->nx, m->ny);
}
void display_block(starpu_data_handle_t h, FILE* f) {
    auto* b = static_cast<starpu_block_interface*>(iface(h));
    std::fprintf(f, "%u\t%u\t%u\t", b->nx, b->ny, b->nz);
}
void display_coo(starpu_data_handle_t h, FILE* f) {
    auto* c = static_cast<starpu_coo_interface*>(iface(h));
    std::fprintf(f, "%u\t%u", c->nx, c->ny);
}

/// The describe text of an interface, through its table.
template <starpu_ssize_t (*Describe)(void*, char*, size_t)>
uint32_t shape_footprint(starpu_data_handle_t h) {
    char buf[128];
    Describe(iface(h), buf, sizeof buf);
    uint32_t x = 2166136261u;  // FNV-1a over the shape text: equal shapes, equal footprints
    for (const char* p = buf; *p != '\0'; ++p) {
        x = (x ^ static_cast<unsigned char>(*p)) * 16777619u;
    }
    return x;
}

template <starpu_ssize_t (*Describe)(void*, char*, size_t)>
int shape_compare(void* a, void* b) {
    char x[128], y[128];
    Describe(a, x, sizeof x);
    Describe(b, y, sizeof y);
    return std::strcmp(x, y) == 0 ? 1 : 0;
}

size_t get_size(starpu_data_handle_t h) { return starpu_data_get_size(h); }
void* handle_to_pointer(starpu_data_handle_t h, unsigned node) { return starpu_data_handle_to_pointer(h, node); }

/// The first field after the id is the data pointer in every dense built-in (StarPU's layouts).
void* dense_to_pointer(void* i, unsigned node) {
    return node == STARPU_MAIN_RAM ? reinterpret_cast<void*>(static_cast<starpu_vector_interface*>(i)->ptr) : nullptr;
}
void* bcsr_to_pointer(void* i, unsigned node) {
    return node == STARPU_MAIN_RAM ? reinterpret_cast<void*>(static_cast<starpu_bcsr_interface*>(i)->nzval) : nullptr;
}

int pack(starpu_data_handle_t h, unsigned node, void** ptr, starpu_ssize_t* count) {
    return node == STARPU_MAIN_RAM ? starpu_data_pack(h, ptr, count) : -ENODEV;
}
int unpack(starpu_data_handle_t h, unsigned node, void* ptr, size_t count) {
    return node == STARPU_MAIN_RAM ? starpu_data_unpack(h, ptr, count) : -ENODEV;
}

template <class I, starpu_ssize_t (*Describe)(void*, char*, size_t), void (*Display)(starpu_data_handle_t, FILE*)>
starpu_data_interface_ops table(enum starpu_data_interface_id id, const char* name, void* (*to_ptr)(void*, unsigned)) {
    starpu_data_interface_ops o{};
    o.handle_to_pointer = &handle_to_pointer;
    o.to_pointer = to_ptr;
    o.get_size = &get_size;
    o.footprint = &shape_footprint<Describe>;
    o.compare = &shape_compare<Describe>;
    o.display = Display;
    o.describe = Describe;
    o.interfaceid = id;
    o.interface_size = sizeof(I);
    o.pack_data = &pack;
    o.unpack_data = &unpack;
    o.name = const_cast<char*>(name);
    return o;
}

/// Whether p lies in [base, base + bytes).
bool within(const void* p, std::uintptr_t base, std::size_t bytes) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return a >= base && a - base < bytes;
}
// pointer_is_inside, StarPU 1.3.10's answers: the span from the first to the last element of
// a dense layout (its leading dimensions included), any of a sparse layout's arrays; never for
// the void interface.
int variable_inside(void* i, unsigned /*node*/, void* p) {
    const auto* v = static_cast<starpu_variable_interface*>(i);
    return within(p, v->ptr, v->elemsize);
}
int vector_inside(void* i, unsigned /*node*/, void* p) {
    const auto* v = static_cast<starpu_vector_interface*>(i);
    return within(p, v->ptr, std::size_t{v->nx} * v->elemsize);
}
int bcsr_inside(void* i, unsigned /*node*/, void* p) {
    const auto* c = static_cast<starpu_bcsr_interface*>(i);
    return within(p, c->nzval, std::size_t{c->nnz} * c->r * c->c * c->elemsize) ||
           within(p, reinterpret_cast<std::uintptr_t>(c->colind), std::size_t{c->nnz} * sizeof(uint32_t)) ||
           within(p, reinterpret_cast<std::uintptr_t>(c->rowptr), (std::size_t{c->nrow} + 1) * sizeof(uint32_t));
}
int matrix_inside(void* i, unsigned /*node*/, void* p) {
    const auto* m = static_cast<starpu_matrix_interface*>(i);
    if (m->nx == 0 || m->ny == 0) {
        return 0;
    }
    return within(p, m->ptr, (std::size_t{m->ny} - 1) * m->ld * m->elemsize + std::size_t{m->nx} * m->elemsize);
}
int block_inside(void* i, unsigned /*node*/, void* p) {
    const auto* b = static_cast<starpu_block_interface*>(i);
    if (b->nx == 0 || b->ny == 0 || b->nz == 0) {
        return 0;
    }
    return within(p, b->ptr, (std::size_t{b->nz} - 1) * b->ldz * b->elemsize +
                                 (std::size_t{b->ny} - 1) * b->ldy * b->elemsize + std::size_t{b->nx} * b->elemsize);
}
int csr_inside(void* i, unsigned /*node*/, void* p) {
    const auto* c = static_cast<starpu_csr_interface*>(i);
    return within(p, c->nzval, std::size_t{c->nnz} * c->elemsize) ||
           within(p, reinterpret_cast<std::uintptr_t>(c->colind), std::size_t{c->nnz} * sizeof(uint32_t)) ||
           within(p, reinterpret_cast<std::uintptr_t>(c->rowptr), (std::size_t{c->nrow} + 1) * sizeof(uint32_t));
}
int coo_inside(void* i, unsigned /*node*/, void* p) {
    const auto* c = static_cast<starpu_coo_interface*>(i);
    return within(p, reinterpret_cast<std::uintptr_t>(c->columns), std::size_t{c->n_values} * sizeof(uint32_t)) ||
           within(p, reinterpret_cast<std::uintptr_t>(c->rows), std::size_t{c->n_values} * sizeof(uint32_t)) ||
           within(p, c->values, std::size_t{c->n_values} * c->elemsize);
}
int void_inside(void* /*i*/, unsigned /*node*/, void* /*p*/) { return 0; }

template <int (*Inside)(void*, unsigned, void*)>
starpu_data_interface_ops with_inside(starpu_data_interface_ops o) {
    o.pointer_is_inside = Inside;
    return o;
}

// The memory methods of the dense built-ins (StarPU's tables have them; a program may copy a
// table and register data with starpu_data_register, or call them from its own methods). A
// dense layout as runs: `count` runs of `len` bytes, `stride` bytes apart.
struct runs {
    std::size_t len, count, stride;
};
runs runs_of(const void* i) {
    switch (*static_cast<const starpu_data_interface_id*>(i)) {
    case STARPU_VARIABLE_INTERFACE_ID: return {static_cast<const starpu_variable_interface*>(i)->elemsize, 1, 0};
    case STARPU_VECTOR_INTERFACE_ID: {
        const auto* v = static_cast<const starpu_vector_interface*>(i);
        return {std::size_t{v->nx} * v->elemsize, 1, 0};
    }
    case STARPU_MATRIX_INTERFACE_ID: {
        const auto* m = static_cast<const starpu_matrix_interface*>(i);
        return {std::size_t{m->nx} * m->elemsize, m->ny, std::size_t{m->ld} * m->elemsize};
    }
    default: {  // block: ny * nz rows
        const auto* b = static_cast<const starpu_block_interface*>(i);
        return {std::size_t{b->nx} * b->elemsize, std::size_t{b->ny} * b->nz, std::size_t{b->ldy} * b->elemsize};
    }
    }
}
/// Address of run r of a block (rows of each plane, then planes).
char* run_at(void* i, std::size_t r) {
    auto* base = reinterpret_cast<char*>(static_cast<starpu_vector_interface*>(i)->ptr);
    if (*static_cast<starpu_data_interface_id*>(i) == STARPU_BLOCK_INTERFACE_ID) {
        const auto* b = static_cast<const starpu_block_interface*>(i);
        return base + (r / b->ny) * b->ldz * b->elemsize + (r % b->ny) * b->ldy * b->elemsize;
    }
    return base + r * runs_of(i).stride;
}

/// Node 0 gets the registered interface; the other nodes (disks) hold nothing addressable.
void dense_register(starpu_data_handle_t h, unsigned home_node, void* data_interface) {
    const starpu_data_interface_ops* o = starpu_data_get_interface_ops(h);
    void* mine = starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM);
    if (mine != nullptr && mine != data_interface) {
        std::memcpy(mine, data_interface, o->interface_size);
        if (home_node != STARPU_MAIN_RAM) {
            auto* v = static_cast<starpu_vector_interface*>(mine);
            v->ptr = v->dev_handle = 0;
            v->offset = 0;
        }
    }
}

/// New compact memory (leading dimensions the row and plane sizes); returns the bytes.
starpu_ssize_t dense_allocate(void* i, unsigned node) {
    if (node != STARPU_MAIN_RAM) {
        return -ENODEV;
    }
    const runs r = runs_of(i);
    const std::size_t bytes = r.len * r.count;
    const uintptr_t p = starpu_malloc_on_node(node, bytes);
    if (p == 0 && bytes != 0) {
        return -ENOMEM;
    }
    auto* v = static_cast<starpu_vector_interface*>(i);
    v->ptr = v->dev_handle = p;
    v->offset = 0;
    if (v->id == STARPU_MATRIX_INTERFACE_ID) {
        auto* m = static_cast<starpu_matrix_interface*>(i);
        m->ld = m->nx;
    } else if (v->id == STARPU_BLOCK_INTERFACE_ID) {
        auto* b = static_cast<starpu_block_interface*>(i);
        b->ldy = b->nx;
        b->ldz = b->nx * b->ny;
    }
    return static_cast<starpu_ssize_t>(bytes);
}

void dense_free(void* i, unsigned node) {
    auto* v = static_cast<starpu_vector_interface*>(i);
    const runs r = runs_of(i);
    starpu_free_on_node(node, v->ptr, r.len * r.count);
    v->ptr = v->dev_handle = 0;
}

/// Copies the data between two interfaces of the same shape (in main memory).
int dense_copy(void* src, unsigned src_node, void* dst, unsigned dst_node, void* /*async_data*/) {
    if (src_node != STARPU_MAIN_RAM || dst_node != STARPU_MAIN_RAM) {
        return -ENODEV;
    }
    const runs r = runs_of(src);
    for (std::size_t k = 0; k < r.count; ++k) {
        std::memmove(run_at(dst, k), run_at(src, k), r.len);
    }
    return 0;
}
int dense_ram_to_ram(void* src, unsigned src_node, void* dst, unsigned dst_node) {
    return dense_copy(src, src_node, dst, dst_node, nullptr);
}

const starpu_data_copy_methods g_dense_copy = [] {
    starpu_data_copy_methods m{};
    m.ram_to_ram = &dense_ram_to_ram;
    m.any_to_any = &dense_copy;
    return m;
}();

starpu_data_interface_ops with_memory(starpu_data_interface_ops o) {
    o.register_data_handle = &dense_register;
    o.allocate_data_on_node = &dense_allocate;
    o.free_data_on_node = &dense_free;
    o.copy_methods = &g_dense_copy;
    return o;
}

/// StarPU's void interface: no data, a size of 0, a footprint of 0 (every void handle is alike).
struct void_interface_layout {
    int id;
};
starpu_ssize_t describe_void(void* /*i*/, char* buf, size_t size) { return snprintf(buf, size, "0"); }
uint32_t void_footprint(starpu_data_handle_t /*h*/) { return 0; }
int void_compare(void* /*a*/, void* /*b*/) { return 1; }
void display_void(starpu_data_handle_t /*h*/, FILE* f) { fprintf(f, "void\t"); }
starpu_data_interface_ops void_table() {
    starpu_data_interface_ops o{};
    o.get_size = &get_size;
    o.footprint = &void_footprint;
    o.compare = &void_compare;
    o.display = &display_void;
    o.describe = &describe_void;
    o.interfaceid = STARPU_VOID_INTERFACE_ID;
    o.pointer_is_inside = &void_inside;
    o.interface_size = sizeof(void_interface_layout);
    o.name = const_cast<char*>("STARPU_VOID_INTERFACE");
    return o;
}

}  // namespace

extern "C" {

struct starpu_data_interface_ops starpu_interface_variable_ops = with_memory(with_inside<variable_inside>(
    table<starpu_variable_interface, describe_variable, display_variable>(STARPU_VARIABLE_INTERFACE_ID,
                                                                         "STARPU_VARIABLE_INTERFACE", dense_to_pointer)));
struct starpu_data_interface_ops starpu_interface_vector_ops = with_memory(with_inside<vector_inside>(
    table<starpu_vector_interface, describe_vector, display_vector>(STARPU_VECTOR_INTERFACE_ID,
                                                                   "STARPU_VECTOR_INTERFACE", dense_to_pointer)));
struct starpu_data_interface_ops starpu_interface_matrix_ops = with_memory(with_inside<matrix_inside>(
    table<starpu_matrix_interface, describe_matrix, display_matrix>(STARPU_MATRIX_INTERFACE_ID,
                                                                   "STARPU_MATRIX_INTERFACE", dense_to_pointer)));
struct starpu_data_interface_ops starpu_interface_block_ops = with_memory(with_inside<block_inside>(
    table<starpu_block_interface, describe_block, display_block>(STARPU_BLOCK_INTERFACE_ID, "STARPU_BLOCK_INTERFACE",
                                                                dense_to_pointer)));
// As in StarPU 1.3.10: CSR and BCSR have no display, CSR and COO no to_pointer.
struct starpu_data_interface_ops starpu_interface_csr_ops = with_inside<csr_inside>(
    table<starpu_csr_interface, describe_csr, nullptr>(STARPU_CSR_INTERFACE_ID, "STARPU_CSR_INTERFACE", nullptr));
struct starpu_data_interface_ops starpu_interface_bcsr_ops = with_inside<bcsr_inside>(
    table<starpu_bcsr_interface, describe_bcsr, nullptr>(STARPU_BCSR_INTERFACE_ID, "STARPU_BCSR_INTERFACE",
                                                        bcsr_to_pointer));
struct starpu_data_interface_ops starpu_interface_coo_ops = with_inside<coo_inside>(
    table<starpu_coo_interface, describe_coo, display_coo>(STARPU_COO_INTERFACE_ID, "STARPU_COO_INTERFACE", nullptr));
struct starpu_data_interface_ops starpu_interface_void_ops = void_table();

}  // extern "C"

namespace mpc::tg::starpu {

starpu_data_interface_ops* builtin_ops(int id) noexcept {
    switch (id) {
    case STARPU_VARIABLE_INTERFACE_ID: return &starpu_interface_variable_ops;
    case STARPU_VECTOR_INTERFACE_ID: return &starpu_interface_vector_ops;
    case STARPU_MATRIX_INTERFACE_ID: return &starpu_interface_matrix_ops;
    case STARPU_BLOCK_INTERFACE_ID: return &starpu_interface_block_ops;
    case STARPU_CSR_INTERFACE_ID: return &starpu_interface_csr_ops;
    case STARPU_BCSR_INTERFACE_ID: return &starpu_interface_bcsr_ops;
    case STARPU_COO_INTERFACE_ID: return &starpu_interface_coo_ops;
    case STARPU_VOID_INTERFACE_ID: return &starpu_interface_void_ops;
    default: return nullptr;
    }
}

}  // namespace mpc::tg::starpu
