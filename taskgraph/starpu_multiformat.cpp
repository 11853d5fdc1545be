/// \file
/// StarPU's multiformat interface (starpu_data_interfaces.h) on CPU workers: a handle of
/// nobjects elements in CPU format, kept as a custom interface of the core with StarPU's id 7
/// and a table of this file's methods (allocation, size, footprint, pack/unpack, copies). The
/// conversion codelets are kept for the program and never run: no worker needs another format.

#include <starpu.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

using namespace mpc::tg;

namespace {

using mf = starpu_multiformat_interface;

std::size_t bytes_of(const mf* i) noexcept { return std::size_t{i->nx} * (i->ops != nullptr ? i->ops->cpu_elemsize : 0); }

mf* mine(starpu_data_handle_t h) noexcept {
    return static_cast<mf*>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
}

void mf_register(starpu_data_handle_t h, unsigned home_node, void* data_interface) {
    const auto* src = static_cast<const mf*>(data_interface);
    for (unsigned node : {0u, 1u}) {  // node 0, and the one scratch structure of the other nodes
        auto* dst = static_cast<mf*>(starpu_data_get_interface_on_node(h, node));
        if (dst == nullptr) {
            continue;
        }
        *dst = *src;
        if (node != home_node) {
            dst->cpu_ptr = nullptr;
        }
        dst->cuda_ptr = dst->opencl_ptr = dst->mic_ptr = nullptr;
    }
}

starpu_ssize_t mf_allocate(void* i, unsigned node) {
    auto* m = static_cast<mf*>(i);
    const std::size_t n = bytes_of(m);
    const uintptr_t p = starpu_malloc_on_node(node, n);
    if (p == 0 && n != 0) {
        return -ENOMEM;
    }
    m->cpu_ptr = reinterpret_cast<void*>(p);
    return static_cast<starpu_ssize_t>(n);
}

void mf_free(void* i, unsigned node) {
    auto* m = static_cast<mf*>(i);
    starpu_free_on_node(node, reinterpret_cast<uintptr_t>(m->cpu_ptr), bytes_of(m));
    m->cpu_ptr = nullptr;
}

size_t mf_size(starpu_data_handle_t h) { return bytes_of(mine(h)); }

uint32_t mf_footprint(starpu_data_handle_t h) { return starpu_hash_crc32c_be(mine(h)->nx, 0); }

int mf_compare(void* a, void* b) {
    const auto* x = static_cast<const mf*>(a);
    const auto* y = static_cast<const mf*>(b);
    return x->nx == y->nx && x->ops != nullptr && y->ops != nullptr && x->ops->cpu_elemsize == y->ops->cpu_elemsize
               ? 1
               : 0;
}

int mf_pack(starpu_data_handle_t h, unsigned node, void** ptr, starpu_ssize_t* count) {
    if (node != STARPU_MAIN_RAM) {
        return -ENODEV;
    }
    const mf* m = mine(h);
    *count = static_cast<starpu_ssize_t>(bytes_of(m));
    if (ptr == nullptr) {
        return 0;
    }
    if (starpu_malloc_flags(ptr, bytes_of(m), 0) != 0) {
        return -ENOMEM;
    }
    std::memcpy(*ptr, m->cpu_ptr, bytes_of(m));
    return 0;
}

int mf_unpack(starpu_data_handle_t h, unsigned node, void* ptr, size_t count) {
    mf* m = mine(h);
    if (node != STARPU_MAIN_RAM || count != bytes_of(m)) {
        return -EINVAL;
    }
    std::memcpy(m->cpu_ptr, ptr, count);
    starpu_free_flags(ptr, count, 0);
    return 0;
}

void* mf_to_pointer(void* i, unsigned node) { return node == STARPU_MAIN_RAM ? static_cast<mf*>(i)->cpu_ptr : nullptr; }

void* mf_handle_to_pointer(starpu_data_handle_t h, unsigned node) {
    return node == STARPU_MAIN_RAM ? mine(h)->cpu_ptr : nullptr;
}

int mf_pointer_is_inside(void* i, unsigned /*node*/, void* p) {
    const auto* m = static_cast<const mf*>(i);
    const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(m->cpu_ptr);
    return m->cpu_ptr != nullptr && a >= b && a - b < bytes_of(m) ? 1 : 0;
}

starpu_ssize_t mf_describe(void* i, char* buf, size_t size) {
    const auto* m = static_cast<const mf*>(i);
    return std::snprintf(buf, size, "M%ux%zu", m->nx, m->ops != nullptr ? m->ops->cpu_elemsize : 0);
}

void mf_display(starpu_data_handle_t h, FILE* f) { std::fprintf(f, "%u\t", mine(h)->nx); }

int mf_copy(void* src, unsigned src_node, void* dst, unsigned dst_node, void* /*async*/) {
    if (src_node != STARPU_MAIN_RAM || dst_node != STARPU_MAIN_RAM) {
        return -ENODEV;
    }
    const auto* s = static_cast<const mf*>(src);
    auto* d = static_cast<mf*>(dst);
    std::memmove(d->cpu_ptr, s->cpu_ptr, bytes_of(s));
    return 0;
}
int mf_ram_to_ram(void* src, unsigned src_node, void* dst, unsigned dst_node) {
    return mf_copy(src, src_node, dst, dst_node, nullptr);
}

starpu_multiformat_data_interface_ops* mf_get_ops(void* i) { return static_cast<mf*>(i)->ops; }

const starpu_data_copy_methods g_copy = [] {
    starpu_data_copy_methods m{};
    m.ram_to_ram = &mf_ram_to_ram;
    m.any_to_any = &mf_copy;
    return m;
}();

starpu_data_interface_ops g_ops = [] {
    starpu_data_interface_ops o{};
    o.register_data_handle = &mf_register;
    o.allocate_data_on_node = &mf_allocate;
    o.free_data_on_node = &mf_free;
    o.copy_methods = &g_copy;
    o.handle_to_pointer = &mf_handle_to_pointer;
    o.to_pointer = &mf_to_pointer;
    o.pointer_is_inside = &mf_pointer_is_inside;
    o.get_size = &mf_size;
    o.footprint = &mf_footprint;
    o.compare = &mf_compare;
    o.display = &mf_display;
    o.describe = &mf_describe;
    o.interfaceid = STARPU_MULTIFORMAT_INTERFACE_ID;
    o.interface_size = sizeof(mf);
    o.is_multiformat = 1;
    o.get_mf_ops = &mf_get_ops;
    o.pack_data = &mf_pack;
    o.unpack_data = &mf_unpack;
    o.name = const_cast<char*>("STARPU_MULTIFORMAT_INTERFACE");
    return o;
}();

}  // namespace

extern "C" {

void starpu_multiformat_data_register(starpu_data_handle_t* handle, int home_node, void* ptr, uint32_t nobjects,
                                      struct starpu_multiformat_data_interface_ops* format_ops) {
    if (handle == nullptr || format_ops == nullptr || format_ops->cpu_elemsize == 0) {
        starpu::fatal("starpu_multiformat_data_register", "a handle pointer and format ops with cpu_elemsize are needed");
    }
    if (home_node != STARPU_MAIN_RAM && home_node != -1) {
        starpu::fatal("starpu_multiformat_data_register", "the home node must be STARPU_MAIN_RAM (0) or -1");
    }
    if (home_node == STARPU_MAIN_RAM && ptr == nullptr && nobjects != 0) {
        starpu::fatal("starpu_multiformat_data_register", "NULL data registered on STARPU_MAIN_RAM");
    }
    mf m{STARPU_MULTIFORMAT_INTERFACE_ID, home_node == STARPU_MAIN_RAM ? ptr : nullptr, nullptr, nullptr, nullptr,
         nobjects, format_ops};
    data* d = nullptr;
    if (mpc::status st = register_custom(&d, STARPU_MULTIFORMAT_INTERFACE_ID, &m, starpu::core_ops_of(&g_ops));
        !st.ok()) {
        starpu::fatal("starpu_multiformat_data_register", st.reason());
    }
    auto h = reinterpret_cast<starpu_data_handle_t>(d);
    mf_register(h, static_cast<unsigned>(home_node), &m);
    if (home_node == -1) {
        if (mpc::status st = allocate_on_use(d); !st.ok()) {
            starpu::fatal("starpu_multiformat_data_register", st.reason());
        }
    }
    *handle = h;
}

}  // extern "C"
