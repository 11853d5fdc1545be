/// \file
/// StarPU 1.3 C API: partitioning with filters (starpu_data_filters.h) over the core's
/// partitioning (partition.cpp), and StarPU's standard filter functions for the vector, matrix
/// and block interfaces. Parts are as equal as possible, the first n % nparts one element
/// larger, at the offsets StarPU uses, so that a program's index arithmetic stays valid. A
/// child keeps its parent's dev_handle and gets offset = parent's + its byte offset (StarPU's
/// convention), and ptr = dev_handle + offset. A filter with get_child_ops (the BCSR canonical
/// block filter: one dense matrix per block) gives its children another interface kind through
/// the core's child_kind_fn.

#include <starpu.h>

#include <algorithm>
#include <cstdarg>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

using namespace mpc::tg;

namespace {

data* core(starpu_data_handle_t h) noexcept { return reinterpret_cast<data*>(h); }

void fill_bridge(void* ctx, void* parent_iface, void* child_iface, int i, int n) noexcept {
    auto* f = static_cast<starpu_data_filter*>(ctx);
    f->filter_func(parent_iface, child_iface, f, static_cast<unsigned>(i), static_cast<unsigned>(n));
}

/// A filter's get_child_ops as the core's child_kind_fn: a built-in table (StarPU's
/// starpu_interface_*_ops) gives its built-in kind, an application's table a custom kind.
bool kind_bridge(void* ctx, int i, child_kind* out) noexcept {
    auto* f = static_cast<starpu_data_filter*>(ctx);
    const starpu_data_interface_ops* o = f->get_child_ops(f, static_cast<unsigned>(i));
    if (o == nullptr) {
        starpu::fatal("starpu_data_partition", "the filter's get_child_ops returned NULL");
    }
    const int id = static_cast<int>(o->interfaceid);
    if (id < STARPU_MAX_INTERFACE_ID) {
        if (starpu::builtin_ops(id) == nullptr) {
            starpu::fatal("starpu_data_partition", "get_child_ops gave a built-in interface MPC does not have");
        }
    } else if (o->allocate_data_on_node == nullptr || o->free_data_on_node == nullptr || o->interface_size == 0) {
        starpu::fatal("starpu_data_partition", "get_child_ops gave interface ops without allocate_data_on_node, "
                                               "free_data_on_node or interface_size");
    } else {
        out->ops = starpu::core_ops_of(o);
    }
    out->id = static_cast<interface_id>(id);
    return true;
}

child_kind_fn kind_of(const starpu_data_filter* f) noexcept { return f->get_child_ops != nullptr ? &kind_bridge : nullptr; }

int nparts_of(starpu_data_handle_t h, starpu_data_filter* f, const char* call) noexcept {
    if (f == nullptr || f->filter_func == nullptr) {
        starpu::fatal(call, "a filter with a filter_func is needed");
    }
    unsigned n = f->get_nchildren != nullptr ? f->get_nchildren(f, h) : f->nchildren;
    if (n == 0 || n > 1u << 20) {
        starpu::fatal(call, "the filter gives no children (nchildren 0)");
    }
    return static_cast<int>(n);
}

void check(const mpc::status& st, const char* call) noexcept {
    if (!st.ok()) {
        starpu::fatal(call, st.reason());
    }
}

/// Part `id` of `nparts` of n elements: its length and its first element.
void chunk(std::uint32_t n, unsigned nparts, unsigned id, std::uint32_t* len, std::size_t* first,
           const char* filter) noexcept {
    if (nparts > n) {
        MPC_LOG(fatal, tg, "%s: cannot cut %u elements into %u parts", filter, n, nparts);
        std::abort();
    }
    const std::uint32_t base = n / nparts;
    const std::uint32_t rem = n % nparts;
    *len = base + (id < rem ? 1 : 0);
    *first = static_cast<std::size_t>(id) * base + std::min<std::uint32_t>(id, rem);
}

/// Moves a child's start by `bytes` (StarPU's ptr/offset convention).
template <class I>
void shift(const I* father, I* child, std::size_t bytes) noexcept {
    child->dev_handle = father->dev_handle;
    child->offset = father->offset + bytes;
    if (father->ptr != 0) {
        child->ptr = father->ptr + bytes;
    }
}

/// Cuts dimension `dim` of the father (less 2 * `shadow`, added back to each part) into part
/// `id` of `nparts`; elements of that dimension are `stride` elements apart. Returns the child.
template <class I>
I* cut(void* father_interface, void* child_interface, std::uint32_t I::*dim, unsigned shadow, std::size_t stride,
       unsigned id, unsigned nparts, const char* filter) noexcept {
    auto* fa = static_cast<I*>(father_interface);
    auto* ch = static_cast<I*>(child_interface);
    std::size_t first = 0;
    chunk(fa->*dim - 2 * shadow, nparts, id, &(ch->*dim), &first, filter);
    ch->*dim += 2 * shadow;
    shift(fa, ch, first * stride * fa->elemsize);
    return ch;
}

/// The shadow of a *_shadow filter: StarPU passes it in filter_arg_ptr (cast to uintptr_t),
/// checked against the dimension it widens.
unsigned shadow_of(const starpu_data_filter* f, std::uint32_t n) noexcept {
    const auto shadow = reinterpret_cast<std::uintptr_t>(f->filter_arg_ptr);
    if (2ull * shadow > n) {
        starpu::fatal("starpu_*_filter_*_shadow", "the shadow (filter_arg_ptr) is wider than half the dimension");
    }
    return static_cast<unsigned>(shadow);
}

/// Rows [first, first + n) of a CSR or BCSR father: the child's index arrays point into the
/// father's, its values start at its first entry; firstentry stays in the father's numbering.
template <class I>
void sparse_rows(const I* fa, I* ch, std::size_t first, std::uint32_t n, std::size_t block_elems) noexcept {
    const std::uint32_t start = fa->rowptr[first] - fa->firstentry;   // the child's first entry
    const std::uint32_t end = fa->rowptr[first + n] - fa->firstentry;  // one past its last
    ch->nrow = n;
    ch->nnz = end - start;
    ch->firstentry = fa->firstentry + start;
    ch->rowptr = fa->rowptr + first;
    ch->colind = fa->colind + start;
    ch->nzval = fa->nzval + static_cast<std::size_t>(start) * block_elems * fa->elemsize;
}

void matrix_allocsize(starpu_matrix_interface* m) noexcept {
    m->allocsize = m->ny == 0 ? 0 : (static_cast<std::size_t>(m->ld) * (m->ny - 1) + m->nx) * m->elemsize;
}

/// Part `id` of a vector cut into the lengths of a list (StarPU's filter_list: uint32_t or long).
template <class Len>
void vector_list(void* father_interface, void* child_interface, const struct starpu_data_filter* f,
                        unsigned id, unsigned nparts, const char* filter) noexcept {
    auto* fa = static_cast<starpu_vector_interface*>(father_interface);
    auto* ch = static_cast<starpu_vector_interface*>(child_interface);
    const auto* len = static_cast<const Len*>(f->filter_arg_ptr);
    if (len == nullptr) {
        starpu::fatal(filter, "filter_arg_ptr must point to the lengths of the parts");
    }
    std::uint64_t first = 0;
    std::uint64_t total = 0;
    for (unsigned i = 0; i < nparts; ++i) {
        first += i < id ? static_cast<std::uint64_t>(len[i]) : 0;
        total += static_cast<std::uint64_t>(len[i]);
    }
    if (total > fa->nx) {
        starpu::fatal(filter, "the lengths add up to more than the vector");
    }
    ch->nx = static_cast<std::uint32_t>(len[id]);
    shift(fa, ch, first * fa->elemsize);
    ch->allocsize = ch->nx * ch->elemsize;
}

void apply(starpu_data_handle_t h, std::vector<starpu_data_filter*>::const_iterator first,
           std::vector<starpu_data_filter*>::const_iterator last) noexcept {
    if (first == last) {
        return;
    }
    starpu_data_partition(h, *first);
    for (int i = 0, n = starpu_data_get_nb_children(h); i < n; ++i) {
        apply(starpu_data_get_child(h, static_cast<unsigned>(i)), first + 1, last);
    }
}

}  // namespace

extern "C" {

void starpu_data_partition(starpu_data_handle_t initial_handle, struct starpu_data_filter* f) {
    int n = nparts_of(initial_handle, f, "starpu_data_partition");
    check(partition(core(initial_handle), n, &fill_bridge, f, kind_of(f)), "starpu_data_partition");
}

void starpu_data_unpartition(starpu_data_handle_t root_data, unsigned gathering_node) {
    if (gathering_node != STARPU_MAIN_RAM) {
        starpu::fatal("starpu_data_unpartition", "the gathering node must be STARPU_MAIN_RAM");
    }
    // As StarPU: the children's own partitions are gathered first (tiles).
    for (int i = 0, n = nchildren(core(root_data)); i < n; ++i) {
        starpu_data_handle_t c = starpu_data_get_child(root_data, static_cast<unsigned>(i));
        if (nchildren(core(c)) > 0) {
            starpu_data_unpartition(c, gathering_node);
        }
    }
    check(unpartition(core(root_data)), "starpu_data_unpartition");
}

starpu_data_handle_t starpu_data_get_child(starpu_data_handle_t handle, unsigned i) {
    data* c = child(core(handle), static_cast<int>(i));
    if (c == nullptr) {
        starpu::fatal("starpu_data_get_child", "no such child (is the handle partitioned?)");
    }
    return reinterpret_cast<starpu_data_handle_t>(c);
}

int starpu_data_get_nb_children(starpu_data_handle_t handle) { return nchildren(core(handle)); }

starpu_data_handle_t starpu_data_vget_sub_data(starpu_data_handle_t root_data, unsigned depth, va_list pa) {
    starpu_data_handle_t h = root_data;
    for (unsigned k = 0; k < depth; ++k) {
        h = starpu_data_get_child(h, va_arg(pa, unsigned));
    }
    return h;
}

starpu_data_handle_t starpu_data_get_sub_data(starpu_data_handle_t root_data, unsigned depth, ...) {
    va_list pa;
    va_start(pa, depth);
    starpu_data_handle_t h = starpu_data_vget_sub_data(root_data, depth, pa);
    va_end(pa);
    return h;
}

void starpu_data_vmap_filters(starpu_data_handle_t root_data, unsigned nfilters, va_list pa) {
    std::vector<starpu_data_filter*> fs(nfilters);
    for (unsigned i = 0; i < nfilters; ++i) {
        fs[i] = va_arg(pa, starpu_data_filter*);
    }
    apply(root_data, fs.begin(), fs.end());
}

void starpu_data_map_filters(starpu_data_handle_t root_data, unsigned nfilters, ...) {
    va_list pa;
    va_start(pa, nfilters);
    starpu_data_vmap_filters(root_data, nfilters, pa);
    va_end(pa);
}

void starpu_data_partition_plan(starpu_data_handle_t initial_handle, struct starpu_data_filter* f,
                                starpu_data_handle_t* children) {
    int n = nparts_of(initial_handle, f, "starpu_data_partition_plan");
    check(partition_plan(core(initial_handle), n, &fill_bridge, f, reinterpret_cast<data**>(children), kind_of(f)),
          "starpu_data_partition_plan");
}

/// The children given must be one plan of the handle, in order (StarPU asserts the same).
static data* plan_of(starpu_data_handle_t h, unsigned nparts, starpu_data_handle_t* children, const char* call) {
    if (nparts == 0 || children == nullptr) {
        starpu::fatal(call, "a partition plan has at least one child (nparts 0 or children NULL)");
    }
    if (!is_plan(core(h), reinterpret_cast<data* const*>(children), static_cast<int>(nparts))) {
        starpu::fatal(call, "children[0..nparts) are not the handles starpu_data_partition_plan gave for this handle");
    }
    return core(children[0]);
}

/// StarPU accepts the handle's home node or -1.
static void check_gathering(int node, const char* call) {
    if (node != STARPU_MAIN_RAM && node != -1) {
        starpu::fatal(call, "the gathering node must be the home node (STARPU_MAIN_RAM) or -1");
    }
}

void starpu_data_partition_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                  starpu_data_handle_t* children) {
    data* w = plan_of(initial_handle, nparts, children, "starpu_data_partition_submit");
    check(partition_submit(core(initial_handle), w), "starpu_data_partition_submit");
}

void starpu_data_partition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts,
                                                         starpu_data_handle_t* children, int sequential_consistency) {
    const char* call = "starpu_data_partition_submit_sequential_consistency";
    data* w = plan_of(initial_handle, nparts, children, call);
    check(partition_submit(core(initial_handle), w, false, sequential_consistency != 0), call);
}

void starpu_data_partition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                           starpu_data_handle_t* children) {
    data* w = plan_of(initial_handle, nparts, children, "starpu_data_partition_readonly_submit");
    check(partition_submit(core(initial_handle), w, true), "starpu_data_partition_readonly_submit");
}

void starpu_data_partition_readwrite_upgrade_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                                    starpu_data_handle_t* children) {
    const char* call = "starpu_data_partition_readwrite_upgrade_submit";
    data* w = plan_of(initial_handle, nparts, children, call);
    check(partition_upgrade(core(initial_handle), w), call);
}

void starpu_data_unpartition_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                    starpu_data_handle_t* children, int gathering_node) {
    check_gathering(gathering_node, "starpu_data_unpartition_submit");
    data* w = plan_of(initial_handle, nparts, children, "starpu_data_unpartition_submit");
    check(unpartition_submit(core(initial_handle), w), "starpu_data_unpartition_submit");
}

void starpu_data_unpartition_submit_sequential_consistency_cb(starpu_data_handle_t initial_handle, unsigned nparts,
                                                              starpu_data_handle_t* children, int gather_node,
                                                              int sequential_consistency,
                                                              void (*callback_func)(void*), void* callback_arg) {
    const char* call = "starpu_data_unpartition_submit_sequential_consistency_cb";
    check_gathering(gather_node, call);
    data* w = plan_of(initial_handle, nparts, children, call);
    unpartition_options o;
    o.parent_seq = sequential_consistency != 0;
    o.callback = callback_func;
    o.callback_arg = callback_arg;
    check(unpartition_submit(core(initial_handle), w, o), call);
}

void starpu_data_unpartition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts,
                                                           starpu_data_handle_t* children, int gathering_node,
                                                           int sequential_consistency) {
    starpu_data_unpartition_submit_sequential_consistency_cb(initial_handle, nparts, children, gathering_node,
                                                             sequential_consistency, nullptr, nullptr);
}

void starpu_data_unpartition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts,
                                             starpu_data_handle_t* children, int gathering_node) {
    const char* call = "starpu_data_unpartition_readonly_submit";
    check_gathering(gathering_node, call);
    data* w = plan_of(initial_handle, nparts, children, call);
    unpartition_options o;
    o.to_readonly = true;
    check(unpartition_submit(core(initial_handle), w, o), call);
}

void starpu_data_unpartition_submit_r(starpu_data_handle_t initial_handle, int gathering_node) {
    check_gathering(gathering_node, "starpu_data_unpartition_submit_r");
    check(unpartition_all(core(initial_handle)), "starpu_data_unpartition_submit_r");
}

void starpu_data_partition_clean(starpu_data_handle_t root_data, unsigned nparts, starpu_data_handle_t* children) {
    data* w = plan_of(root_data, nparts, children, "starpu_data_partition_clean");
    check(partition_clean(core(root_data), w), "starpu_data_partition_clean");
}

void starpu_vector_filter_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                                unsigned id, unsigned nparts) {
    auto* ch = cut(father_interface, child_interface, &starpu_vector_interface::nx, 0, 1, id, nparts,
                   "starpu_vector_filter_block");
    ch->allocsize = ch->nx * ch->elemsize;
}

void starpu_vector_filter_block_shadow(void* father_interface, void* child_interface, struct starpu_data_filter* f,
                                       unsigned id, unsigned nparts) {
    const unsigned shadow = shadow_of(f, static_cast<starpu_vector_interface*>(father_interface)->nx);
    auto* ch = cut(father_interface, child_interface, &starpu_vector_interface::nx, shadow, 1, id, nparts,
                   "starpu_vector_filter_block_shadow");
    ch->allocsize = ch->nx * ch->elemsize;
}

void starpu_matrix_filter_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                                unsigned id, unsigned nparts) {
    matrix_allocsize(cut(father_interface, child_interface, &starpu_matrix_interface::nx, 0, 1, id, nparts,
                         "starpu_matrix_filter_block"));
}

void starpu_matrix_filter_vertical_block(void* father_interface, void* child_interface,
                                         struct starpu_data_filter* /*f*/, unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_matrix_interface*>(father_interface);
    matrix_allocsize(cut(father_interface, child_interface, &starpu_matrix_interface::ny, 0, fa->ld, id, nparts,
                         "starpu_matrix_filter_vertical_block"));
}

void starpu_vector_filter_list(void* father_interface, void* child_interface, struct starpu_data_filter* f,
                               unsigned id, unsigned nparts) {
    vector_list<std::uint32_t>(father_interface, child_interface, f, id, nparts, "starpu_vector_filter_list");
}

void starpu_vector_filter_list_long(void* father_interface, void* child_interface, struct starpu_data_filter* f,
                                    unsigned id, unsigned nparts) {
    vector_list<long>(father_interface, child_interface, f, id, nparts, "starpu_vector_filter_list_long");
}

void starpu_matrix_filter_block_shadow(void* father_interface, void* child_interface, struct starpu_data_filter* f,
                                       unsigned id, unsigned nparts) {
    matrix_allocsize(cut(father_interface, child_interface, &starpu_matrix_interface::nx,
                         shadow_of(f, static_cast<starpu_matrix_interface*>(father_interface)->nx), 1, id, nparts,
                         "starpu_matrix_filter_block_shadow"));
}

void starpu_matrix_filter_vertical_block_shadow(void* father_interface, void* child_interface,
                                                struct starpu_data_filter* f, unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_matrix_interface*>(father_interface);
    matrix_allocsize(cut(father_interface, child_interface, &starpu_matrix_interface::ny, shadow_of(f, fa->ny),
                         fa->ld, id, nparts, "starpu_matrix_filter_vertical_block_shadow"));
}

void starpu_block_filter_block_shadow(void* father_interface, void* child_interface, struct starpu_data_filter* f,
                                      unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_block_interface*>(father_interface);
    cut(father_interface, child_interface, &starpu_block_interface::nx, shadow_of(f, fa->nx), 1, id, nparts,
        "starpu_block_filter_block_shadow");
}

void starpu_block_filter_vertical_block_shadow(void* father_interface, void* child_interface,
                                               struct starpu_data_filter* f, unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_block_interface*>(father_interface);
    cut(father_interface, child_interface, &starpu_block_interface::ny, shadow_of(f, fa->ny), fa->ldy, id, nparts,
        "starpu_block_filter_vertical_block_shadow");
}

void starpu_block_filter_depth_block_shadow(void* father_interface, void* child_interface,
                                            struct starpu_data_filter* f, unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_block_interface*>(father_interface);
    cut(father_interface, child_interface, &starpu_block_interface::nz, shadow_of(f, fa->nz), fa->ldz, id, nparts,
        "starpu_block_filter_depth_block_shadow");
}

void starpu_block_filter_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                               unsigned id, unsigned nparts) {
    cut(father_interface, child_interface, &starpu_block_interface::nx, 0, 1, id, nparts, "starpu_block_filter_block");
}

void starpu_block_filter_vertical_block(void* father_interface, void* child_interface,
                                        struct starpu_data_filter* /*f*/, unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_block_interface*>(father_interface);
    cut(father_interface, child_interface, &starpu_block_interface::ny, 0, fa->ldy, id, nparts,
        "starpu_block_filter_vertical_block");
}

void starpu_block_filter_depth_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                                     unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_block_interface*>(father_interface);
    cut(father_interface, child_interface, &starpu_block_interface::nz, 0, fa->ldz, id, nparts,
        "starpu_block_filter_depth_block");
}

void starpu_vector_filter_divide_in_2(void* father_interface, void* child_interface, struct starpu_data_filter* f,
                                     unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_vector_interface*>(father_interface);
    auto* ch = static_cast<starpu_vector_interface*>(child_interface);
    if (nparts != 2) {
        starpu::fatal("starpu_vector_filter_divide_in_2", "the filter makes exactly 2 parts (nchildren must be 2)");
    }
    if (f->filter_arg >= fa->nx) {
        starpu::fatal("starpu_vector_filter_divide_in_2", "the first part (filter_arg) must be shorter than the vector");
    }
    const std::uint32_t first_len = f->filter_arg;  // the first part's length; the second has the rest
    ch->nx = id == 0 ? first_len : fa->nx - first_len;
    shift(fa, ch, id == 0 ? 0 : static_cast<std::size_t>(first_len) * fa->elemsize);
    ch->allocsize = ch->nx * ch->elemsize;
}

void starpu_csr_filter_vertical_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                                      unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_csr_interface*>(father_interface);
    std::uint32_t n = 0;
    std::size_t first = 0;
    chunk(fa->nrow, nparts, id, &n, &first, "starpu_csr_filter_vertical_block");
    sparse_rows(fa, static_cast<starpu_csr_interface*>(child_interface), first, n, 1);
}

void starpu_bcsr_filter_vertical_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                                       unsigned id, unsigned nparts) {
    auto* fa = static_cast<starpu_bcsr_interface*>(father_interface);
    auto* ch = static_cast<starpu_bcsr_interface*>(child_interface);
    std::uint32_t n = 0;
    std::size_t first = 0;
    chunk(fa->nrow, nparts, id, &n, &first, "starpu_bcsr_filter_vertical_block");
    sparse_rows(fa, ch, first, n, static_cast<std::size_t>(fa->r) * fa->c);
}

void starpu_bcsr_filter_canonical_block(void* father_interface, void* child_interface, struct starpu_data_filter* /*f*/,
                                        unsigned id, unsigned /*nparts*/) {
    auto* fa = static_cast<starpu_bcsr_interface*>(father_interface);
    auto* ch = static_cast<starpu_matrix_interface*>(child_interface);
    if (id >= fa->nnz) {
        starpu::fatal("starpu_bcsr_filter_canonical_block",
                      "more children than blocks (get_nchildren must be starpu_bcsr_filter_canonical_block_get_nchildren)");
    }
    // Block `id` of the father's (its nzval starts at its own first block), r rows of c.
    const std::size_t block = static_cast<std::size_t>(fa->r) * fa->c * fa->elemsize;
    ch->id = STARPU_MATRIX_INTERFACE_ID;
    ch->nx = fa->c;
    ch->ny = fa->r;
    ch->ld = fa->c;
    ch->elemsize = fa->elemsize;
    ch->allocsize = block;
    ch->ptr = fa->nzval == 0 ? 0 : fa->nzval + id * block;
    ch->dev_handle = ch->ptr;
    ch->offset = 0;
}

unsigned starpu_bcsr_filter_canonical_block_get_nchildren(struct starpu_data_filter* /*f*/,
                                                          starpu_data_handle_t handle) {
    if (starpu_data_get_interface_id(handle) != STARPU_BCSR_INTERFACE_ID) {
        starpu::fatal("starpu_bcsr_filter_canonical_block_get_nchildren", "the handle is not a BCSR matrix");
    }
    return starpu_bcsr_get_nnz(handle);
}

struct starpu_data_interface_ops* starpu_bcsr_filter_canonical_block_child_ops(struct starpu_data_filter* /*f*/,
                                                                               unsigned /*child*/) {
    return &starpu_interface_matrix_ops;
}

}  // extern "C"
