/// \file
/// Data interfaces beyond registration of the dense ones (data.cpp): the allocation ops of the
/// built-in interfaces (how the runtime makes a buffer of a handle's shape: scratch buffers,
/// redux copies, handles without memory), CSR and custom interfaces, user data.
///
/// Memory the runtime makes for a built-in interface is one block, 64-byte aligned, laid out
/// densely (a matrix copy has ld = nx, a block copy ldy = nx and ldz = nx * ny, as StarPU's);
/// a CSR copy holds its values, then its column indices, then its row pointers.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "scheduler/sched.hpp"
#include "taskgraph/detail.hpp"

namespace mpc::tg {
namespace {

/// Bytes of a sparse copy's values, rounded so that the indices after them are aligned.
constexpr std::size_t values_bytes(std::size_t n, std::size_t elemsize) noexcept {
    return (n * elemsize + alignof(std::uint32_t) - 1) / alignof(std::uint32_t) * alignof(std::uint32_t);
}
constexpr std::size_t index_bytes(std::size_t n) noexcept { return n * sizeof(std::uint32_t); }

/// The layout of a sparse interface's copy: its values, then two index arrays of n1 and n2
/// entries. false for the dense interfaces.
struct sparse_layout {
    std::size_t vbytes = 0;
    std::size_t n1 = 0;
    std::size_t n2 = 0;
};
bool sparse(const builtin_iface* u, sparse_layout* l) noexcept {
    switch (u->var.id) {
    case interface_id::csr:
        *l = {values_bytes(u->csr.nnz, u->csr.elemsize), u->csr.nnz, std::size_t{u->csr.nrow} + 1};
        return true;
    case interface_id::bcsr:
        *l = {values_bytes(std::size_t{u->bcsr.nnz} * u->bcsr.r * u->bcsr.c, u->bcsr.elemsize), u->bcsr.nnz,
              std::size_t{u->bcsr.nrow} + 1};
        return true;
    case interface_id::coo:
        *l = {values_bytes(u->coo.n_values, u->coo.elemsize), u->coo.n_values, u->coo.n_values};
        return true;
    default:
        return false;
    }
}

std::size_t builtin_size(const void* iface, const void* /*ctx*/, const data* /*d*/) noexcept {
    const auto* u = static_cast<const builtin_iface*>(iface);
    switch (u->var.id) {
    case interface_id::variable:
        return u->var.elemsize;
    case interface_id::vector:
        return static_cast<std::size_t>(u->vec.nx) * u->vec.elemsize;
    case interface_id::matrix:
        return static_cast<std::size_t>(u->mat.nx) * u->mat.ny * u->mat.elemsize;
    case interface_id::block:
        return static_cast<std::size_t>(u->blk.nx) * u->blk.ny * u->blk.nz * u->blk.elemsize;
    default:
        break;
    }
    sparse_layout l;
    return sparse(u, &l) ? l.vbytes + index_bytes(l.n1 + l.n2) : 0;
}

std::atomic<int (*)(void**, std::size_t) noexcept> g_alloc_hook{nullptr};
std::atomic<void (*)(void*, std::size_t) noexcept> g_release_hook{nullptr};

long builtin_allocate(void* iface, const void* ctx) noexcept {
    std::size_t n = builtin_size(iface, ctx, nullptr);
    if (const auto* b = static_cast<const builtin_iface*>(iface);
        b->var.id == interface_id::vector || b->var.id == interface_id::matrix) {
        // A vector or matrix registered with a larger allocsize is allocated that large.
        n = std::max(n, b->var.id == interface_id::vector ? b->vec.allocsize : b->mat.allocsize);
    }
    void* p = nullptr;
    if (auto* hook = g_alloc_hook.load(std::memory_order_acquire); hook != nullptr) {
        if (hook(&p, n == 0 ? 1 : n) != 0 || p == nullptr) {
            return -1;
        }
    } else if (posix_memalign(&p, 64, n == 0 ? 1 : n) != 0) {
        return -1;
    }
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto* u = static_cast<builtin_iface*>(iface);
    switch (u->var.id) {
    case interface_id::variable:
        u->var.ptr = u->var.dev_handle = a;
        u->var.offset = 0;
        break;
    case interface_id::vector:
        u->vec.ptr = u->vec.dev_handle = a;
        u->vec.offset = 0;
        u->vec.slice_base = 0;
        u->vec.allocsize = n;
        break;
    case interface_id::matrix:
        u->mat.ptr = u->mat.dev_handle = a;
        u->mat.offset = 0;
        u->mat.ld = u->mat.nx;
        u->mat.allocsize = n;
        break;
    case interface_id::block:
        u->blk.ptr = u->blk.dev_handle = a;
        u->blk.offset = 0;
        u->blk.ldy = u->blk.nx;
        u->blk.ldz = u->blk.nx * u->blk.ny;
        break;
    case interface_id::csr:
    case interface_id::bcsr:
    case interface_id::coo: {
        sparse_layout l;
        sparse(u, &l);
        auto* i1 = reinterpret_cast<std::uint32_t*>(a + l.vbytes);
        std::uint32_t* i2 = i1 + l.n1;
        if (u->var.id == interface_id::csr) {
            u->csr.nzval = a;
            u->csr.colind = i1;
            u->csr.rowptr = i2;
        } else if (u->var.id == interface_id::bcsr) {
            u->bcsr.nzval = a;
            u->bcsr.colind = i1;
            u->bcsr.rowptr = i2;
        } else {
            u->coo.values = a;
            u->coo.columns = i1;
            u->coo.rows = i2;
        }
        break;
    }
    case interface_id::void_:        // has its own ops (register_void)
    case interface_id::multiformat:  // a custom interface (starpu_multiformat.cpp)
        break;
    }
    return static_cast<long>(n);
}

void builtin_release(void* iface, const void* /*ctx*/) noexcept {
    auto* u = static_cast<builtin_iface*>(iface);
    // The block's start: the values of the sparse layouts, the first pointer field of the dense.
    std::uintptr_t p = u->var.id == interface_id::csr    ? u->csr.nzval
                       : u->var.id == interface_id::bcsr ? u->bcsr.nzval
                       : u->var.id == interface_id::coo  ? u->coo.values
                                                         : u->var.ptr;
    if (auto* hook = g_release_hook.load(std::memory_order_acquire); hook != nullptr) {
        // The size allocate() was given: the allocation size of a vector or matrix, else the data's.
        std::size_t n = builtin_size(iface, nullptr, nullptr);
        if (u->var.id == interface_id::vector || u->var.id == interface_id::matrix) {
            n = std::max(n, u->var.id == interface_id::vector ? u->vec.allocsize : u->mat.allocsize);
        }
        hook(reinterpret_cast<void*>(p), n == 0 ? 1 : n);
        return;
    }
    std::free(reinterpret_cast<void*>(p));
}

/// Whether a buffer made for one built-in handle has the shape of another's interface: equal
/// kind, dimensions, element size (and CSR/BCSR first entry), so that it may be reused
/// (scratch_cache.cpp). The memory-dependent fields (ld, offsets) are allocate()'s, the same.
bool builtin_same_shape(const void* made, const void* iface, const void* /*ctx*/) noexcept {
    const auto* a = static_cast<const builtin_iface*>(made);
    const auto* b = static_cast<const builtin_iface*>(iface);
    if (a->var.id != b->var.id) {
        return false;
    }
    switch (a->var.id) {
    case interface_id::variable:
        return a->var.elemsize == b->var.elemsize;
    case interface_id::vector:
        return a->vec.nx == b->vec.nx && a->vec.elemsize == b->vec.elemsize;
    case interface_id::matrix:
        return a->mat.nx == b->mat.nx && a->mat.ny == b->mat.ny && a->mat.elemsize == b->mat.elemsize;
    case interface_id::block:
        return a->blk.nx == b->blk.nx && a->blk.ny == b->blk.ny && a->blk.nz == b->blk.nz &&
               a->blk.elemsize == b->blk.elemsize;
    case interface_id::csr:
        return a->csr.nnz == b->csr.nnz && a->csr.nrow == b->csr.nrow && a->csr.firstentry == b->csr.firstentry &&
               a->csr.elemsize == b->csr.elemsize;
    case interface_id::bcsr:
        return a->bcsr.nnz == b->bcsr.nnz && a->bcsr.nrow == b->bcsr.nrow &&
               a->bcsr.firstentry == b->bcsr.firstentry && a->bcsr.r == b->bcsr.r && a->bcsr.c == b->bcsr.c &&
               a->bcsr.elemsize == b->bcsr.elemsize;
    case interface_id::coo:
        return a->coo.nx == b->coo.nx && a->coo.ny == b->coo.ny && a->coo.n_values == b->coo.n_values &&
               a->coo.elemsize == b->coo.elemsize;
    default:
        return false;
    }
}

constexpr interface_ops g_builtin_ops{sizeof(builtin_iface), &builtin_allocate, &builtin_release, &builtin_size,
                                      nullptr, nullptr, nullptr, &builtin_same_shape};

}  // namespace

const interface_ops* detail::builtin_ops(interface_id /*id*/) noexcept { return &g_builtin_ops; }

status register_csr(data** out, std::uint32_t nnz, std::uint32_t nrow, void* nzval, std::uint32_t* colind,
                    std::uint32_t* rowptr, std::uint32_t firstentry, std::size_t elemsize) noexcept {
    if ((nnz > 0 && (nzval == nullptr || colind == nullptr)) || (rowptr == nullptr && nzval != nullptr)) {
        MPC_LOG(error, tg, "register_csr: %u values need nzval, colind and rowptr arrays", nnz);
        return {errc::invalid_argument, "csr arrays missing"};
    }
    status st = detail::new_handle(out, interface_id::csr);
    if (st.ok()) {
        (*out)->iface.csr = {interface_id::csr, nnz, nrow, reinterpret_cast<std::uintptr_t>(nzval), colind, rowptr,
                             firstentry, elemsize};
    }
    return detail::listed(st, out);
}

status register_bcsr(data** out, std::uint32_t nnz, std::uint32_t nrow, void* nzval, std::uint32_t* colind,
                     std::uint32_t* rowptr, std::uint32_t firstentry, std::uint32_t r, std::uint32_t c,
                     std::size_t elemsize) noexcept {
    if ((nnz > 0 && (nzval == nullptr || colind == nullptr)) || (rowptr == nullptr && nzval != nullptr)) {
        MPC_LOG(error, tg, "register_bcsr: %u blocks need nzval, colind and rowptr arrays", nnz);
        return {errc::invalid_argument, "bcsr arrays missing"};
    }
    if (r == 0 || c == 0) {
        MPC_LOG(error, tg, "register_bcsr: blocks of %u x %u elements", r, c);
        return {errc::invalid_argument, "empty bcsr blocks"};
    }
    status st = detail::new_handle(out, interface_id::bcsr);
    if (st.ok()) {
        (*out)->iface.bcsr = {interface_id::bcsr, nnz, nrow, reinterpret_cast<std::uintptr_t>(nzval), colind, rowptr,
                              firstentry, r, c, elemsize};
    }
    return detail::listed(st, out);
}

status register_coo(data** out, std::uint32_t nx, std::uint32_t ny, std::uint32_t n_values, std::uint32_t* columns,
                    std::uint32_t* rows, void* values, std::size_t elemsize) noexcept {
    if (n_values > 0 && (columns == nullptr || rows == nullptr || values == nullptr) &&
        !(columns == nullptr && rows == nullptr && values == nullptr)) {
        MPC_LOG(error, tg, "register_coo: %u values need the columns, rows and values arrays", n_values);
        return {errc::invalid_argument, "coo arrays missing"};
    }
    status st = detail::new_handle(out, interface_id::coo);
    if (st.ok()) {
        (*out)->iface.coo = {interface_id::coo, columns, rows, reinterpret_cast<std::uintptr_t>(values), nx, ny,
                             n_values, elemsize};
    }
    return detail::listed(st, out);
}

status register_custom(data** out, int id, const void* iface, const interface_ops& ops) noexcept {
    if (iface == nullptr || ops.interface_size == 0 || ops.allocate == nullptr || ops.release == nullptr ||
        ops.size == nullptr) {
        MPC_LOG(error, tg, "register_custom: an interface and its size, allocate, release and size functions are "
                           "needed");
        return {errc::invalid_argument, "incomplete custom interface"};
    }
    if (!custom_storage(id)) {
        MPC_LOG(error, tg, "register_custom: interface id %d is a built-in one (custom ids start at %d)", id,
                first_custom_id);
        return {errc::invalid_argument, "custom interface id"};
    }
    std::unique_ptr<std::byte[]> mem(new (std::nothrow) std::byte[2 * ops.interface_size]());
    if (!mem) {
        return {errc::no_memory, "custom interface"};
    }
    status st = detail::new_handle(out, static_cast<interface_id>(id));
    if (st.ok()) {
        data* d = *out;
        std::memcpy(mem.get(), iface, ops.interface_size);
        d->custom = std::move(mem);
        d->ifp = d->custom.get();
        d->custom_ops = ops;
        d->ops = &d->custom_ops;
    }
    return detail::listed(st, out);
}

namespace {
/// The void interface's buffer: nothing (a placeholder the codelets receive).
struct void_iface {
    interface_id id;
};
long void_allocate(void* /*iface*/, const void* /*ctx*/) noexcept { return 0; }
void void_release(void* /*iface*/, const void* /*ctx*/) noexcept {}
std::size_t void_size(const void* /*iface*/, const void* /*ctx*/, const data* /*d*/) noexcept { return 0; }
bool void_same_shape(const void* /*made*/, const void* /*iface*/, const void* /*ctx*/) noexcept { return true; }
constexpr interface_ops g_void_ops{sizeof(void_iface), &void_allocate, &void_release, &void_size, nullptr, nullptr,
                                   nullptr, &void_same_shape};
}  // namespace

status register_void(data** out) noexcept {
    std::unique_ptr<std::byte[]> mem(new (std::nothrow) std::byte[2 * sizeof(void_iface)]());
    if (!mem) {
        return {errc::no_memory, "void interface"};
    }
    status st = detail::new_handle(out, interface_id::void_);
    if (st.ok()) {
        data* d = *out;
        const void_iface v{interface_id::void_};
        std::memcpy(mem.get(), &v, sizeof v);
        d->custom = std::move(mem);
        d->ifp = d->custom.get();
        d->custom_ops = g_void_ops;
        d->ops = &d->custom_ops;
    }
    return detail::listed(st, out);
}

void mark_undefined(data* d) noexcept { d->content.store(1, std::memory_order_release); }

bool data_has_memory(const data* d) noexcept { return !d->needs_memory.load(std::memory_order_acquire); }

status allocate_on_use(data* d) noexcept {
    if (status st = detail::live(d, "allocate_on_use"); !st.ok()) {
        return st;
    }
    spin_guard g(d->g.lock);
    d->runtime_memory = true;
    d->needs_memory.store(!d->allocated, std::memory_order_release);
    if (!d->allocated) {
        d->content.store(1, std::memory_order_release);  // no value until something writes one
    }
    return {};
}

namespace {

/// Whether d's memory must be pinned between ensure_memory() and attach: disks exist and the
/// runtime made (or makes) d's memory, so that eviction could take it.
bool pin_wanted(const data* d) noexcept { return detail::spill_hooks() != nullptr && d->runtime_memory; }

}  // namespace

namespace {

/// The read back of a submission's handle, on a helper thread (ensure_memory): its end is the
/// content's new value, then the waiters' wake-up.
void async_load(void* p) noexcept {
    auto* d = static_cast<data*>(p);
    const bool ok = detail::spill_hooks()->load(d);
    if (!ok) {
        MPC_LOG(error, tg, "reading a handle's data back from disk failed: a task reading it cannot run");
    }
    d->content.store(ok ? 0 : detail::content_lost, std::memory_order_release);
    d->loaded.wake_all();
}

/// async_load() on a helper thread: d is not touched after the count goes down (wait_no_load).
void async_load_out(void* p) noexcept {
    auto* d = static_cast<data*>(p);
    async_load(d);
    d->loads_out.fetch_sub(1, std::memory_order_release);
}

bool not_loading(void* p) noexcept {
    return static_cast<data*>(p)->content.load(std::memory_order_acquire) != detail::content_loading;
}

/// Waits while a read back is in flight (content_loading).
void wait_loaded(data* d) noexcept {
    if (not_loading(d)) [[likely]] {
        return;
    }
    if (sched::self() == nullptr) {  // a plain thread of the program
        while (!not_loading(d)) {
            cpu_relax();
        }
        return;
    }
    while (!not_loading(d)) {
        d->loaded.wait_unless(&not_loading, d, "mpc::tg: a handle's data being read back from disk");
    }
}

}  // namespace

void detail::wait_no_load(data* d) noexcept {
    wait_loaded(d);
    while (d->loads_out.load(std::memory_order_acquire) != 0) {  // its helper's wake-up: short
        sched::yield();
        cpu_relax();
    }
}

void detail::prefetch_memory(data* d, bool async, bool evict) noexcept {
    stamp_use(d);  // first: used soon, so eviction (for its own room too) takes others before it
    if (spill_hooks() == nullptr || !d->needs_memory.load(std::memory_order_acquire)) {
        return;  // no disk, or in memory (or being made by a submission)
    }
    {
        spin_guard g(d->g.lock);
        const int c = d->content.load(std::memory_order_acquire);
        if (d->allocating || d->evicting || d->allocated || !d->runtime_memory || !d->disk_valid ||
            (c != 0 && c != content_on_disk)) {
            return;  // busy, or nothing on disk to read: its first use makes it
        }
        d->allocating = true;
    }
    const std::size_t n = d->ops->size(d->ifp, d->ops->ctx, d);
    bool ok = account_memory(n, evict ? account_how::reclaim : account_how::now).ok();
    if (ok && d->ops->allocate(d->ifp, d->ops->ctx) < 0) {
        unaccount_memory(n);
        ok = false;
    }
    if (ok) {
        d->content.store(content_loading, std::memory_order_release);
        d->loads_out.fetch_add(1, std::memory_order_relaxed);
        if (!async || !sched::blocking_start(&async_load_out, d)) {
            d->loads_out.fetch_sub(1, std::memory_order_relaxed);
            const bool read = spill_hooks()->load(d);  // a failure: the next use tries again
            d->content.store(read ? 0 : content_on_disk, std::memory_order_release);
            d->loaded.wake_all();
        }
    }
    spin_guard g(d->g.lock);
    d->allocating = false;
    if (ok) {
        d->allocated = true;
        d->fresh = false;
        d->needs_memory.store(false, std::memory_order_release);
    }
}

void detail::load_deferred(data* d, bool reads) noexcept {
    int c = d->content.load(std::memory_order_acquire);
    while (c >= content_on_disk) {
        if (c == content_loading) {  // being read now: wait for it
            wait_loaded(d);
            c = d->content.load(std::memory_order_acquire);
            continue;
        }
        if (!reads) {  // written whole: the disk's value is not needed
            if (d->content.compare_exchange_weak(c, 0, std::memory_order_acq_rel)) {
                return;
            }
            continue;
        }
        if (c == content_lost) {
            // The task would compute on memory that never got its value: nothing to go on with.
            MPC_LOG(fatal, tg, "a task or acquisition reads a handle whose data could not be read back from disk "
                               "(see above): its value is lost");
            std::abort();
        }
        if (!d->content.compare_exchange_weak(c, content_loading, std::memory_order_acq_rel)) {
            continue;
        }
        async_load(d);  // here: the content, then the waiters
        c = d->content.load(std::memory_order_acquire);
    }
}

status detail::ensure_memory(data* d, bool* pinned, bool defer_load, bool reads) noexcept {
    if (pinned != nullptr) {
        *pinned = false;
    }
    const bool wanted = pin_wanted(d);
    const bool pin = pinned != nullptr && wanted;
    // With disks, even an unpinned use (partitioning) takes the lock: it waits for an eviction
    // or a write-behind under way, which the memory's presence does not show.
    if (!wanted && !d->needs_memory.load(std::memory_order_acquire)) {
        if (!defer_load && d->content.load(std::memory_order_acquire) >= content_on_disk) [[unlikely]] {
            load_deferred(d, true);
        }
        return {};
    }
    d->g.lock.lock();
    while (d->allocating || d->evicting || d->cleaning) {  // being made, or written out (rare)
        d->g.lock.unlock();
        sched::yield();
        d->g.lock.lock();
    }
    if (d->allocated) {
        if (pin) {
            ++d->pins;
            *pinned = true;
        }
        d->g.lock.unlock();
        if (!defer_load && d->content.load(std::memory_order_acquire) >= content_on_disk) [[unlikely]] {
            load_deferred(d, true);  // a submitted task has not read it yet: this use reads it now
        }
        return {};
    }
    d->allocating = true;
    const int c = d->content.load(std::memory_order_acquire);
    const bool reload = d->disk_valid && (c == 0 || c == content_on_disk);
    d->g.lock.unlock();
    // Made at the first submission that needs it (or the first after an eviction), where
    // waiting for memory is safe, and where a failure is an error code for the program
    // (-ENOMEM), not a crash.
    const std::size_t n = d->ops->size(d->ifp, d->ops->ctx, d);
    status st = mem_reserve(n, "a handle registered without memory");
    if (st.ok() && d->ops->allocate(d->ifp, d->ops->ctx) < 0) {
        mem_release(n);
        MPC_LOG(error, tg, "no memory for a handle registered without memory (%zu bytes)", n);
        st = {errc::no_memory, "handle memory"};
    }
    if (st.ok() && reload) {
        if (defer_load) {
            // Read on a helper while the submission goes on (a task that reads it), else by
            // the first task's worker (a write-only one: dropped).
            d->content.store(reads ? content_loading : content_on_disk, std::memory_order_release);
            if (reads) {
                d->loads_out.fetch_add(1, std::memory_order_relaxed);
                if (!sched::blocking_start(&async_load_out, d)) {
                    d->loads_out.fetch_sub(1, std::memory_order_relaxed);
                    d->content.store(content_on_disk, std::memory_order_release);
                }
            }
        } else if (spill_hooks()->load(d)) {
            d->content.store(0, std::memory_order_release);
        } else {
            d->ops->release(d->ifp, d->ops->ctx);
            mem_release(n);
            st = {errc::system, "reading a handle's data back from disk"};
        }
    }
    spin_guard g(d->g.lock);
    d->allocating = false;
    if (st.ok()) {
        d->allocated = true;
        d->fresh = !reload && !d->disk_valid;
        d->needs_memory.store(false, std::memory_order_release);
        if (pin) {
            ++d->pins;
            *pinned = true;
        }
    }
    return st;
}

status register_same(data** out, const data* src) noexcept {
    if (status st = detail::live(src, "register_same"); !st.ok()) {
        return st;
    }
    status st = src->custom ? register_custom(out, static_cast<int>(src->id), src->ifp, src->custom_ops)
                            : detail::new_handle(out, src->id);
    if (!st.ok()) {
        return st;
    }
    if (!src->custom) {
        (*out)->iface = src->iface;
    }
    st = allocate_on_use(*out);  // the shape is src's, the memory its own (made at first use)
    return src->custom ? st : detail::listed(st, out);  // register_custom listed it
}

void* interface_sink(data* d) noexcept {
    if (d->custom) {
        return d->custom.get() + d->ops->interface_size;
    }
    return nullptr;
}

std::size_t data_size(const data* d) noexcept { return d->ops->size(d->ifp, d->ops->ctx, d); }
const interface_ops* interface_ops_of(const data* d) noexcept { return d->ops; }
void set_user_data(data* d, void* p) noexcept { d->user = p; }
void* user_data(const data* d) noexcept { return d->user; }

void set_memory_hooks(const memory_hooks& h) noexcept {
    g_alloc_hook.store(h.alloc, std::memory_order_release);
    g_release_hook.store(h.release, std::memory_order_release);
}

}  // namespace mpc::tg
