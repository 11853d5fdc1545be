/// \file
/// StarPU 1.3 C API: starpu_data_cpy, a task that reads the source handle and writes the
/// destination (so it is ordered with the tasks around it like any task), copying with the
/// interface's own means: row by row for the dense built-ins (their leading dimensions may
/// differ), the three arrays of a CSR, BCSR or COO, and a custom interface's copy methods (ram_to_ram, else
/// any_to_any; the only memory node is 0). The shapes are checked at the call: equal sizes for
/// the built-ins, the interface's compare method for custom ones (StarPU's meaning: non-zero
/// when the two interfaces are compatible).

#include <starpu.h>

#include <cerrno>
#include <cstring>

#include "lib/log.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace mpc::tg::starpu {
namespace {

/// What the copy task needs besides the two interfaces (packed by value in its cl_arg).
struct cpy_arg {
    int id;  ///< StarPU interface id
    const starpu_data_interface_ops* ops;  ///< custom interfaces
};

void copy_kernel(void* buffers[], void* arg) {
    cpy_arg a{};
    starpu_codelet_unpack_args(arg, &a);
    void* src = buffers[0];
    void* dst = buffers[1];
    if (a.ops != nullptr) {
        const starpu_data_copy_methods* m = a.ops->copy_methods;
        int rc = m->ram_to_ram != nullptr ? m->ram_to_ram(src, STARPU_MAIN_RAM, dst, STARPU_MAIN_RAM)
                                          : m->any_to_any(src, STARPU_MAIN_RAM, dst, STARPU_MAIN_RAM, nullptr);
        if (rc != 0) {
            MPC_LOG(error, tg, "starpu_data_cpy: the interface's copy method returned %d", rc);
        }
        return;
    }
    void* sa[3];
    void* da[3];
    std::size_t sb[3];
    std::size_t db[3];
    if (sparse_arrays_of(src, a.id, sa, sb) && sparse_arrays_of(dst, a.id, da, db)) {
        for (int k = 0; k < 3; ++k) {
            std::memcpy(da[k], sa[k], sb[k]);
        }
        return;
    }
    dense_layout s;
    dense_layout d;
    if (dense_of(src, a.id, &s) && dense_of(dst, a.id, &d)) {
        for (std::size_t r = 0; r < s.count; ++r) {
            std::memcpy(d.run(r), s.run(r), s.len);
        }
    }
}

starpu_codelet g_copy_cl = [] {
    starpu_codelet cl{};
    cl.cpu_funcs[0] = &copy_kernel;
    cl.nbuffers = 2;
    cl.modes[0] = STARPU_R;
    cl.modes[1] = STARPU_W;
    cl.name = "starpu_data_cpy";
    return cl;
}();

/// Whether the two built-in interfaces have the same shape (what a copy needs).
bool same_shape(void* a, void* b, int id) noexcept {
    void* pa[3];
    void* pb[3];
    std::size_t na[3];
    std::size_t nb[3];
    if (sparse_arrays_of(a, id, pa, na) && sparse_arrays_of(b, id, pb, nb)) {
        return na[0] == nb[0] && na[1] == nb[1] && na[2] == nb[2] &&
               (id != STARPU_BCSR_INTERFACE_ID ||
                (STARPU_BCSR_GET_R(a) == STARPU_BCSR_GET_R(b) && STARPU_BCSR_GET_C(a) == STARPU_BCSR_GET_C(b)));
    }
    dense_layout x;
    dense_layout y;
    return dense_of(a, id, &x) && dense_of(b, id, &y) && x.len == y.len && x.count == y.count && x.ny == y.ny;
}

/// 0, or the negative errno (logged) that refuses the copy.
int check(starpu_data_handle_t dst, starpu_data_handle_t src, cpy_arg* a) noexcept {
    const int id = starpu_data_get_interface_id(src);
    if (id != starpu_data_get_interface_id(dst)) {
        MPC_LOG(error, tg, "starpu_data_cpy: the handles have different interfaces (%d and %d)", id,
                starpu_data_get_interface_id(dst));
        return -EINVAL;
    }
    void* si = starpu_data_get_interface_on_node(src, STARPU_MAIN_RAM);
    void* di = starpu_data_get_interface_on_node(dst, STARPU_MAIN_RAM);
    a->id = id;
    a->ops = mpc::tg::custom_storage(id) ? starpu_data_get_interface_ops(src) : nullptr;  // custom ones (and multiformat)
    if (a->ops == nullptr) {
        if (!same_shape(si, di, id)) {
            MPC_LOG(error, tg, "starpu_data_cpy: the handles' shapes differ");
            return -EINVAL;
        }
        return 0;
    }
    const starpu_data_copy_methods* m = a->ops->copy_methods;
    if (m == nullptr || (m->ram_to_ram == nullptr && m->any_to_any == nullptr)) {
        MPC_LOG(error, tg, "starpu_data_cpy: interface %d has no ram_to_ram nor any_to_any copy method", id);
        return -ENOSYS;
    }
    if (a->ops->compare != nullptr && a->ops->compare(si, di) == 0) {
        MPC_LOG(error, tg, "starpu_data_cpy: the interface's compare method says the handles differ");
        return -EINVAL;
    }
    return 0;
}

}  // namespace
}  // namespace mpc::tg::starpu

extern "C" int starpu_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
                               void (*callback_func)(void*), void* callback_arg) {
    using namespace mpc::tg::starpu;
    if (dst_handle == nullptr || src_handle == nullptr) {
        MPC_LOG(error, tg, "starpu_data_cpy: null handle");
        return -EINVAL;
    }
    if (dst_handle == src_handle) {
        return 0;  // nothing to do (StarPU copies the data onto itself)
    }
    cpy_arg a{};
    if (int rc = check(dst_handle, src_handle, &a); rc != 0) {
        return rc;
    }
    return starpu_task_insert(&g_copy_cl, STARPU_R, src_handle, STARPU_W, dst_handle, STARPU_VALUE, &a, sizeof a,
                              STARPU_CALLBACK_WITH_ARG_NFREE, callback_func, callback_arg, STARPU_TASK_SYNCHRONOUS,
                              asynchronous ? 0 : 1, STARPU_NAME, "starpu_data_cpy", 0);
}
