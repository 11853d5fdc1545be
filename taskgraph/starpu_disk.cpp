/// \file
/// StarPU's out-of-core storage (starpu_disk.h): disk memory nodes, the stdio / unistd /
/// unistd O_DIRECT backends, handles whose home is a disk, and the disk side of eviction
/// (the core's detail::spill_ops; data.cpp "Eviction" picks what goes).
///
/// A handle's disk copy is one backend object holding the packed data (starpu_data_pack's
/// bytes): the object of starpu_disk_open() for a home on disk (the application's: never
/// freed here), else an object allocated on the first eviction and freed with the handle.
/// Writes are made by the reservation that evicts (a submitting thread, or a task), on its
/// own thread; a read back for a task's submission runs on one of the engine's helper threads
/// while the submission goes on (interfaces.cpp, ensure_memory), or on the worker that runs the
/// task (no helpers: MPC_SCHED_IO_THREADS=0); any other use reads it on its own thread.

#include <starpu.h>

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

using namespace mpc::tg;

namespace {

// ---- the disks ------------------------------------------------------------------------------

constexpr int max_disks = STARPU_MAXNODES - 1;

struct disk {
    starpu_disk_ops* ops = nullptr;
    void* base = nullptr;
    starpu_ssize_t capacity = -1;         ///< bytes; negative: no limit
    std::atomic<std::size_t> used{0};     ///< bytes of the objects eviction made
};

disk g_disks[max_disks];
std::atomic<int> g_ndisks{0};
std::mutex g_disks_lock;  // registration and shutdown

disk* disk_of(unsigned node) noexcept {
    const int i = static_cast<int>(node) - 1;
    return node >= 1 && i < g_ndisks.load(std::memory_order_acquire) ? &g_disks[i] : nullptr;
}

/// A handle's disk copy (data::spill).
struct copy_rec {
    unsigned node;
    void* obj;
    std::size_t size;  ///< the object's bytes (what eviction took from the disk)
    bool owned;        ///< made by eviction (freed with the handle), else the application's
};

starpu_data_handle_t handle_of(data* d) noexcept { return reinterpret_cast<starpu_data_handle_t>(d); }

/// Takes `n` bytes of disk `k`'s capacity.
bool take_room(disk& k, std::size_t n) noexcept {
    std::size_t u = k.used.load(std::memory_order_relaxed);
    do {
        if (k.capacity >= 0 && u + n > static_cast<std::size_t>(k.capacity)) {
            return false;
        }
    } while (!k.used.compare_exchange_weak(u, u + n, std::memory_order_acq_rel));
    return true;
}

/// A new object of n bytes on a disk with room: the swap disk first, then in node order.
copy_rec* new_copy(std::size_t n) noexcept {
    const int nd = g_ndisks.load(std::memory_order_acquire);
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < nd; ++i) {
            const bool swap = i + 1 == starpu_disk_swap_node;
            if ((pass == 0) != swap) {
                continue;
            }
            disk& k = g_disks[i];
            if (!take_room(k, n)) {
                continue;
            }
            void* obj = k.ops->alloc(k.base, n);
            if (obj == nullptr) {
                k.used.fetch_sub(n, std::memory_order_acq_rel);
                continue;
            }
            auto* r = new (std::nothrow) copy_rec{static_cast<unsigned>(i + 1), obj, n, true};
            if (r == nullptr) {
                k.ops->free(k.base, obj, n);
                k.used.fetch_sub(n, std::memory_order_acq_rel);
                return nullptr;
            }
            return r;
        }
    }
    return nullptr;
}

void drop_copy(copy_rec* r) noexcept {
    if (r->owned) {
        if (disk* k = disk_of(r->node); k != nullptr) {
            k->ops->free(k->base, r->obj, r->size);
            k->used.fetch_sub(r->size, std::memory_order_acq_rel);
        }
    }
    delete r;
}

/// Writes the packed bytes of d's main-memory copy to its disk copy (made if it has none).
bool store(data* d) noexcept {
    starpu_data_handle_t h = handle_of(d);
    void* buf = nullptr;
    starpu_ssize_t n = 0;
    if (starpu_data_pack(h, &buf, &n) != 0 || n < 0) {
        MPC_LOG(error, tg, "eviction to disk: the handle's interface cannot be packed (pack_data)");
        return false;
    }
    auto* r = static_cast<copy_rec*>(d->spill);
    if (r != nullptr && r->owned && r->size != static_cast<std::size_t>(n)) {
        drop_copy(r);  // its size changed (a custom interface): a new object
        d->spill = r = nullptr;
    }
    if (r == nullptr) {
        r = new_copy(static_cast<std::size_t>(n));
        if (r == nullptr) {
            starpu_free_flags(buf, static_cast<size_t>(n), 0);
            MPC_LOG(debug, tg, "eviction to disk: no disk has room for %zd bytes", n);
            return false;
        }
        d->spill = r;
    }
    disk* k = disk_of(r->node);
    int rc = -EIO;
    if (k != nullptr) {
        rc = k->ops->full_write != nullptr ? k->ops->full_write(k->base, r->obj, buf, static_cast<size_t>(n))
                                           : k->ops->write(k->base, r->obj, buf, 0, static_cast<size_t>(n));
    }
    starpu_free_flags(buf, static_cast<size_t>(n), 0);
    if (rc != 0) {
        MPC_LOG(error, tg, "eviction to disk: writing %zd bytes to disk node %u failed", n, r->node);
        return false;
    }
    return true;
}

/// Fills d's new main-memory copy from its disk copy.
bool load(data* d) noexcept {
    starpu_data_handle_t h = handle_of(d);
    const auto* r = static_cast<const copy_rec*>(d->spill);
    disk* k = r != nullptr ? disk_of(r->node) : nullptr;
    starpu_ssize_t n = 0;
    if (k == nullptr || starpu_data_pack(h, nullptr, &n) != 0 || n < 0) {
        MPC_LOG(error, tg, "reading a handle back from disk: no disk copy, or an interface that cannot be packed");
        return false;
    }
    void* buf = nullptr;
    if (k->ops->full_read != nullptr && r->owned) {
        size_t got = 0;
        const int rc = k->ops->full_read(k->base, r->obj, &buf, &got, STARPU_MAIN_RAM);
        if (rc != 0 || got != static_cast<size_t>(n)) {
            MPC_LOG(error, tg, "reading a handle back from disk node %u: %zu bytes, %zd expected", r->node, got, n);
            if (buf != nullptr) {
                starpu_free_flags(buf, got, 0);
            }
            return false;
        }
    } else {
        if (starpu_malloc_flags(&buf, static_cast<size_t>(n), 0) != 0) {
            return false;
        }
        const int got = k->ops->read(k->base, r->obj, buf, 0, static_cast<size_t>(n));
        if (got != n) {
            MPC_LOG(error, tg, "reading a handle from disk node %u: %d bytes of %zd", r->node, got, n);
            starpu_free_flags(buf, static_cast<size_t>(n), 0);
            return false;
        }
    }
    return starpu_data_unpack(h, buf, static_cast<size_t>(n)) == 0;  // frees buf
}

void retire(data* d, bool ram_newer) noexcept {
    auto* r = static_cast<copy_rec*>(d->spill);
    if (r == nullptr) {
        return;
    }
    if (!r->owned && ram_newer && !store(d)) {
        MPC_LOG(error, tg, "unregister: the data could not be written back to its home on disk node %u", r->node);
    }
    drop_copy(r);
}

constexpr detail::spill_ops g_hooks{&store, &load, &retire};

// ---- the built-in backends -----------------------------------------------------------------

/// A directory (the parameter of plug).
struct dir_base {
    std::string path;
    bool direct;   ///< O_DIRECT descriptors (unistd_o_direct)
    bool created;  ///< plug made the directory: unplug removes it (when empty), as StarPU's
};

/// mkdir -p.
bool make_path(const std::string& p) noexcept {
    std::string cur;
    std::size_t i = 0;
    while (i <= p.size()) {
        const std::size_t j = p.find('/', i);
        cur = p.substr(0, j == std::string::npos ? p.size() : j);
        if (!cur.empty() && mkdir(cur.c_str(), S_IRWXU) != 0 && errno != EEXIST) {
            return false;
        }
        if (j == std::string::npos) {
            break;
        }
        i = j + 1;
    }
    struct stat st{};
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void* plug_dir(void* parameter, bool direct) noexcept {
    if (parameter == nullptr) {
        return nullptr;
    }
    try {
        auto* b = new dir_base{static_cast<const char*>(parameter), direct, false};
        struct stat st{};
        b->created = stat(b->path.c_str(), &st) != 0;
        if (!make_path(b->path) || access(b->path.c_str(), W_OK | X_OK) != 0) {
            MPC_LOG(error, tg, "starpu_disk_register: cannot use directory %s: %s", b->path.c_str(), std::strerror(errno));
            delete b;
            return nullptr;
        }
        return b;
    } catch (...) {
        return nullptr;
    }
}

void unplug_dir(void* base) noexcept {
    auto* b = static_cast<dir_base*>(base);
    if (b->created) {
        rmdir(b->path.c_str());  // fails, harmlessly, when files are left in it
    }
    delete b;
}

/// An object: a file of the directory, through a descriptor (unistd) or a FILE (stdio).
struct file_obj {
    std::string path;
    int fd = -1;         ///< unistd: the descriptor (O_DIRECT for unistd_o_direct when possible)
    int plain_fd = -1;   ///< unistd_o_direct: a descriptor without O_DIRECT (unaligned transfers)
    FILE* f = nullptr;   ///< stdio
    std::mutex lock;     ///< stdio: seek + transfer
    bool direct = false;
};

bool open_fds(file_obj* o, bool direct, int flags) noexcept {
    if (direct) {
        o->fd = ::open(o->path.c_str(), flags | O_DIRECT, S_IRUSR | S_IWUSR);
        if (o->fd < 0 && errno == EINVAL) {
            o->fd = -1;  // no O_DIRECT on this file system (tmpfs): plain transfers
        }
        o->direct = o->fd >= 0;
        o->plain_fd = ::open(o->path.c_str(), flags & ~(O_CREAT | O_EXCL), S_IRUSR | S_IWUSR);
        if (o->fd < 0) {
            o->fd = o->plain_fd;
            o->plain_fd = -1;
        }
        return o->fd >= 0;
    }
    o->fd = ::open(o->path.c_str(), flags, S_IRUSR | S_IWUSR);
    return o->fd >= 0;
}

void close_obj(file_obj* o) noexcept {
    if (o->f != nullptr) {
        std::fclose(o->f);
    }
    if (o->fd >= 0) {
        ::close(o->fd);
    }
    if (o->plain_fd >= 0) {
        ::close(o->plain_fd);
    }
    delete o;
}

/// A new file of `size` bytes in the directory (stdio: `stdio` true).
void* alloc_file(void* base, size_t size, bool stdio) noexcept {
    auto* b = static_cast<dir_base*>(base);
    try {
        std::string tmpl = b->path + "/STARPU-MPC-XXXXXX";
        const int fd = mkstemp(tmpl.data());
        if (fd < 0) {
            return nullptr;
        }
        if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
            ::close(fd);
            unlink(tmpl.c_str());
            return nullptr;
        }
        auto* o = new file_obj;
        o->path = tmpl;
        if (stdio) {
            o->f = fdopen(fd, "rb+");
            if (o->f == nullptr) {
                ::close(fd);
                unlink(tmpl.c_str());
                delete o;
                return nullptr;
            }
            return o;
        }
        ::close(fd);
        if (!open_fds(o, b->direct, O_RDWR)) {
            unlink(tmpl.c_str());
            close_obj(o);
            return nullptr;
        }
        return o;
    } catch (...) {
        return nullptr;
    }
}

void free_file(void* /*base*/, void* obj, size_t /*size*/) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    unlink(o->path.c_str());
    close_obj(o);
}

/// An existing file `pos` (a name in the directory, or an absolute path).
void* open_file(void* base, void* pos, size_t /*size*/, bool stdio) noexcept {
    auto* b = static_cast<dir_base*>(base);
    if (pos == nullptr) {
        return nullptr;
    }
    try {
        const std::string name = static_cast<const char*>(pos);
        auto* o = new file_obj;
        o->path = name.starts_with('/') ? name : b->path + "/" + name;
        if (stdio) {
            o->f = std::fopen(o->path.c_str(), "rb+");
            if (o->f == nullptr) {
                MPC_LOG(error, tg, "starpu_disk_open: %s: %s", o->path.c_str(), std::strerror(errno));
                delete o;
                return nullptr;
            }
            return o;
        }
        if (!open_fds(o, b->direct, O_RDWR)) {
            MPC_LOG(error, tg, "starpu_disk_open: %s: %s", o->path.c_str(), std::strerror(errno));
            close_obj(o);
            return nullptr;
        }
        return o;
    } catch (...) {
        return nullptr;
    }
}

void close_file(void* /*base*/, void* obj, size_t /*size*/) noexcept { close_obj(static_cast<file_obj*>(obj)); }

int stdio_read(void* /*base*/, void* obj, void* buf, off_t offset, size_t size) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    std::lock_guard g(o->lock);
    if (fseeko(o->f, offset, SEEK_SET) != 0) {
        return -errno;
    }
    return static_cast<int>(std::fread(buf, 1, size, o->f));
}

int stdio_write(void* /*base*/, void* obj, const void* buf, off_t offset, size_t size) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    std::lock_guard g(o->lock);
    if (fseeko(o->f, offset, SEEK_SET) != 0 || std::fwrite(buf, 1, size, o->f) != size || std::fflush(o->f) != 0) {
        return -EIO;
    }
    return 0;
}

int stdio_full_write(void* base, void* obj, void* ptr, size_t size) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    if (int rc = stdio_write(base, obj, ptr, 0, size); rc != 0) {
        return rc;
    }
    std::lock_guard g(o->lock);
    return ftruncate(fileno(o->f), static_cast<off_t>(size)) == 0 ? 0 : -errno;
}

int stdio_full_read(void* base, void* obj, void** ptr, size_t* size, unsigned /*dst_node*/) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    struct stat st{};
    {
        std::lock_guard g(o->lock);
        if (std::fflush(o->f) != 0 || fstat(fileno(o->f), &st) != 0) {
            return -errno;
        }
    }
    *size = static_cast<size_t>(st.st_size);
    if (starpu_malloc_flags(ptr, *size, 0) != 0) {
        return -ENOMEM;
    }
    return stdio_read(base, obj, *ptr, 0, *size) == static_cast<int>(*size) ? 0 : -EIO;
}

/// Whether a transfer may go through an O_DIRECT descriptor (buffer, offset and size aligned).
bool aligned(const void* buf, off_t offset, size_t size) noexcept {
    constexpr std::uintptr_t a = 4096;
    return reinterpret_cast<std::uintptr_t>(buf) % a == 0 && static_cast<std::uintptr_t>(offset) % a == 0 &&
           size % a == 0;
}

int fd_for(const file_obj* o, const void* buf, off_t offset, size_t size) noexcept {
    return o->direct && o->plain_fd >= 0 && !aligned(buf, offset, size) ? o->plain_fd : o->fd;
}

int unistd_read(void* /*base*/, void* obj, void* buf, off_t offset, size_t size) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    const int fd = fd_for(o, buf, offset, size);
    size_t done = 0;
    while (done < size) {
        const ssize_t r = pread(fd, static_cast<char*>(buf) + done, size - done, offset + static_cast<off_t>(done));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return r < 0 ? -errno : static_cast<int>(done);
        }
        done += static_cast<size_t>(r);
    }
    return static_cast<int>(done);
}

int unistd_write(void* /*base*/, void* obj, const void* buf, off_t offset, size_t size) noexcept {
    auto* o = static_cast<file_obj*>(obj);
    const int fd = fd_for(o, buf, offset, size);
    size_t done = 0;
    while (done < size) {
        const ssize_t r =
            pwrite(fd, static_cast<const char*>(buf) + done, size - done, offset + static_cast<off_t>(done));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return -EIO;
        }
        done += static_cast<size_t>(r);
    }
    return 0;
}

int unistd_full_write(void* base, void* obj, void* ptr, size_t size) noexcept {
    if (int rc = unistd_write(base, obj, ptr, 0, size); rc != 0) {
        return rc;
    }
    return ftruncate(static_cast<file_obj*>(obj)->fd, static_cast<off_t>(size)) == 0 ? 0 : -errno;
}

int unistd_full_read(void* base, void* obj, void** ptr, size_t* size, unsigned /*dst_node*/) noexcept {
    struct stat st{};
    if (fstat(static_cast<file_obj*>(obj)->fd, &st) != 0) {
        return -errno;
    }
    *size = static_cast<size_t>(st.st_size);
    if (starpu_malloc_flags(ptr, *size, 0) != 0) {
        return -ENOMEM;
    }
    return unistd_read(base, obj, *ptr, 0, *size) == static_cast<int>(*size) ? 0 : -EIO;
}

/// The disk can be used: a file can be made, written, read back and removed in it (StarPU
/// measures the bandwidth here; the runtime has no use for the figures).
template <bool Stdio>
int check_dir(unsigned /*node*/, void* base) noexcept {
    void* o = alloc_file(base, 0, Stdio);
    if (o == nullptr) {
        return 0;
    }
    alignas(4096) static thread_local unsigned char probe[4096];
    std::memset(probe, 0x5a, sizeof probe);
    int ok = 0;
    if constexpr (Stdio) {
        ok = stdio_write(base, o, probe, 0, sizeof probe) == 0 && stdio_read(base, o, probe, 0, sizeof probe) == 4096;
    } else {
        ok = unistd_write(base, o, probe, 0, sizeof probe) == 0 && unistd_read(base, o, probe, 0, sizeof probe) == 4096;
    }
    free_file(base, o, 0);
    return ok;
}

void* stdio_plug(void* p, starpu_ssize_t) noexcept { return plug_dir(p, false); }
void* unistd_plug(void* p, starpu_ssize_t) noexcept { return plug_dir(p, false); }
void* direct_plug(void* p, starpu_ssize_t) noexcept { return plug_dir(p, true); }
void* stdio_alloc(void* b, size_t n) noexcept { return alloc_file(b, n, true); }
void* unistd_alloc(void* b, size_t n) noexcept { return alloc_file(b, n, false); }
void* stdio_open(void* b, void* pos, size_t n) noexcept { return open_file(b, pos, n, true); }
void* unistd_open(void* b, void* pos, size_t n) noexcept { return open_file(b, pos, n, false); }

// ---- STARPU_DISK_SWAP ----------------------------------------------------------------------

starpu_disk_ops* backend_named(const char* name) noexcept {
    if (name == nullptr || std::strcmp(name, "unistd") == 0) {
        return &starpu_disk_unistd_ops;
    }
    if (std::strcmp(name, "unistd_o_direct") == 0) {
        return &starpu_disk_unistd_o_direct_ops;
    }
    if (std::strcmp(name, "stdio") == 0) {
        return &starpu_disk_stdio_ops;
    }
    return nullptr;
}

}  // namespace

namespace mpc::tg::starpu {

int disk_count() noexcept { return g_ndisks.load(std::memory_order_acquire); }

bool is_disk_node(int node) noexcept { return node >= 1 && node <= disk_count(); }

void disk_swap_from_env() noexcept {
    const char* path = std::getenv("STARPU_DISK_SWAP");
    if (path == nullptr || *path == '\0' || disk_count() != 0) {
        return;
    }
    const char* backend = std::getenv("STARPU_DISK_SWAP_BACKEND");
    starpu_disk_ops* ops = backend_named(backend);
    if (ops == nullptr) {
        MPC_LOG(error, tg, "STARPU_DISK_SWAP_BACKEND=%s: unknown backend (unistd, unistd_o_direct, stdio; hdf5 and "
                           "leveldb are not provided): no swap disk", backend);
        return;
    }
    const long mib = starpu_get_env_number_default("STARPU_DISK_SWAP_SIZE", -1);
    const starpu_ssize_t size = mib < 0 ? -1 : static_cast<starpu_ssize_t>(mib) * 1024 * 1024;
    const int node = starpu_disk_register(ops, const_cast<char*>(path), size);
    if (node < 0) {
        MPC_LOG(error, tg, "STARPU_DISK_SWAP=%s: the swap disk could not be registered (%s)", path, std::strerror(-node));
        return;
    }
    starpu_disk_swap_node = node;
}

void disks_unplug() noexcept {
    std::lock_guard g(g_disks_lock);
    const int n = g_ndisks.load(std::memory_order_acquire);
    detail::set_spill_ops(nullptr);  // no more eviction, no more pins
    g_ndisks.store(0, std::memory_order_release);
    for (int i = 0; i < n; ++i) {
        g_disks[i].ops->unplug(g_disks[i].base);
        g_disks[i].ops = nullptr;
        g_disks[i].base = nullptr;
        g_disks[i].used.store(0, std::memory_order_relaxed);
    }
    starpu_disk_swap_node = -1;
}

void home_on_disk(data* d, unsigned node, void* obj, std::size_t size) noexcept {
    auto* r = new (std::nothrow) copy_rec{node, obj, size, false};
    if (r == nullptr) {
        fatal("starpu_*_data_register", "no memory for the record of a home on disk");
    }
    spin_guard g(d->g.lock);
    d->runtime_memory = true;  // the main-memory copy is the runtime's (read from the disk)
    d->needs_memory.store(!d->allocated, std::memory_order_release);
    d->content.store(0, std::memory_order_release);  // the disk holds its value
    d->disk_valid = true;
    d->spill = r;
}

bool on_disk_node(const data* d, unsigned node) noexcept {
    const auto* r = static_cast<const copy_rec*>(d->spill);
    return r != nullptr && r->node == node;
}

}  // namespace mpc::tg::starpu

extern "C" {

int starpu_disk_swap_node = -1;

struct starpu_disk_ops starpu_disk_stdio_ops = {
    stdio_plug, unplug_dir, check_dir<true>, stdio_alloc, free_file, stdio_open, close_file, stdio_read, stdio_write,
    stdio_full_read, stdio_full_write, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

struct starpu_disk_ops starpu_disk_unistd_ops = {
    unistd_plug, unplug_dir, check_dir<false>, unistd_alloc, free_file, unistd_open, close_file, unistd_read,
    unistd_write, unistd_full_read, unistd_full_write, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    nullptr};

struct starpu_disk_ops starpu_disk_unistd_o_direct_ops = {
    direct_plug, unplug_dir, check_dir<false>, unistd_alloc, free_file, unistd_open, close_file, unistd_read,
    unistd_write, unistd_full_read, unistd_full_write, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    nullptr};

int starpu_disk_register(struct starpu_disk_ops* func, void* parameter, starpu_ssize_t size) {
    if (!running()) {
        MPC_LOG(error, tg, "starpu_disk_register: StarPU is not initialized (call starpu_init first)");
        return -EINVAL;
    }
    if (func == nullptr || func->plug == nullptr || func->unplug == nullptr || func->alloc == nullptr ||
        func->free == nullptr || func->open == nullptr || func->close == nullptr || func->read == nullptr ||
        func->write == nullptr) {
        MPC_LOG(error, tg, "starpu_disk_register: the ops need plug, unplug, alloc, free, open, close, read and write");
        return -EINVAL;
    }
    if (size >= 0 && size < STARPU_DISK_SIZE_MIN) {
        MPC_LOG(error, tg, "starpu_disk_register: a disk of %zd bytes is below STARPU_DISK_SIZE_MIN (%d)", size,
                STARPU_DISK_SIZE_MIN);
        return -EINVAL;
    }
    std::lock_guard g(g_disks_lock);
    const int n = g_ndisks.load(std::memory_order_acquire);
    if (n >= max_disks) {
        MPC_LOG(error, tg, "starpu_disk_register: %d disks exist already (STARPU_MAXNODES is %d)", n, STARPU_MAXNODES);
        return -EINVAL;
    }
    void* base = func->plug(parameter, size);
    if (base == nullptr) {
        return -ENOENT;
    }
    const unsigned node = static_cast<unsigned>(n + 1);
    if (func->bandwidth != nullptr && func->bandwidth(node, base) == 0) {
        MPC_LOG(error, tg, "starpu_disk_register: the disk cannot be written or read");
        func->unplug(base);
        return -ENOENT;
    }
    disk& k = g_disks[n];
    k.ops = func;
    k.base = base;
    k.capacity = size;
    k.used.store(0, std::memory_order_relaxed);
    g_ndisks.store(n + 1, std::memory_order_release);
    detail::set_spill_ops(&g_hooks);
    MPC_LOG(debug, tg, "disk memory node %u registered (%zd bytes)", node, size);
    return static_cast<int>(node);
}

void* starpu_disk_open(unsigned node, void* pos, size_t size) {
    disk* k = disk_of(node);
    if (k == nullptr) {
        MPC_LOG(error, tg, "starpu_disk_open: memory node %u is not a disk", node);
        return nullptr;
    }
    return k->ops->open(k->base, pos, size);
}

void starpu_disk_close(unsigned node, void* obj, size_t size) {
    disk* k = disk_of(node);
    if (k == nullptr) {
        MPC_LOG(error, tg, "starpu_disk_close: memory node %u is not a disk", node);
        return;
    }
    k->ops->close(k->base, obj, size);
}

}  // extern "C"
