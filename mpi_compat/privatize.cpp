/// \file
/// Privatized programs: one copy of the program image per rank (see privatize.hpp).

#include "mpi_compat/privatize.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <ctime>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "allocator/malloc.hpp"
#include "allocator/slice.hpp"
#include "lib/elf_image.hpp"
#include "mpi_compat/runtime.hpp"
#include "scheduler/sched.hpp"

namespace mpc::mpi::priv {
namespace {

/// What a copy's DTPMOD64 slots hold: the address of its module record (glibc's module ids
/// are small integers; ours are never called with theirs, see resolve()).
struct tls_module {
    static constexpr std::uint64_t magic_value = 0x6d70635f544c534dULL;  // "mpc_TLSM"
    std::uint64_t magic;
    elf::copy* c;      ///< owned: the copy stays mapped until the process ends
    tls_module* next;  ///< every copy of the process, from g_modules
};

/// glibc's argument of __tls_get_addr.
struct tls_index {
    std::uint64_t module;
    std::uint64_t offset;
};

/// A thread-local destructor registered by the program (C++ thread_local objects).
struct tls_dtor {
    void (*fn)(void*);
    void* obj;
    tls_dtor* next;
};

/// Thread-local state of one user-level thread (or plain thread) for one copy: its block.
struct tls_binding {
    const tls_module* module;
    char* block;
    tls_binding* next;
};

/// The state a ULT's user_tls slot points to (and each plain thread's).
struct tls_state {
    tls_binding* bindings = nullptr;
    tls_dtor* dtors = nullptr;  ///< LIFO
    tls_state() = default;
    tls_state(const tls_state&) = delete;
    tls_state& operator=(const tls_state&) = delete;
    ~tls_state() {  // the thread or ULT has ended: its blocks go (destructors have run)
        while (bindings != nullptr) {
            tls_binding* b = bindings;
            bindings = b->next;
            std::free(b->block);
            std::free(b);
        }
    }
};

/// Every copy mapped in this process (they stay mapped: other ranks may hold their addresses).
std::atomic<tls_module*> g_modules{nullptr};

std::unique_ptr<elf::image> g_image;
void* (*g_register_frame_info)(const void*, void*) = nullptr;
thread_local tls_state t_thread_state;  // plain threads (no ULT): their own blocks

tls_state* current_state() noexcept {
    void** slot = sched::user_tls_slot();
    if (slot == nullptr) {
        return &t_thread_state;
    }
    if (*slot == nullptr) {
        *slot = new (std::nothrow) tls_state();
    }
    return static_cast<tls_state*>(*slot);
}

[[noreturn]] void tls_fatal(const char* why) noexcept {
    std::fprintf(stderr, "mpc: fatal: thread-local storage of the program: %s\n", why);
    std::abort();
}

/// A new block for `m`, from the calling task's heap, with the copy's initial data.
char* new_block(const tls_module* m) noexcept {
    const elf::tls_template& t = g_image->tls();
    std::size_t align = t.align < alignof(std::max_align_t) ? alignof(std::max_align_t) : t.align;
    std::size_t size = (t.size + align - 1) / align * align;
    void* p = std::aligned_alloc(align, size == 0 ? align : size);
    if (p == nullptr) {
        return nullptr;
    }
    auto* b = static_cast<char*>(p);
    std::memcpy(b, reinterpret_cast<const void*>(m->c->bias() + t.vaddr), t.filesz);
    std::memset(b + t.filesz, 0, t.size - t.filesz);
    return b;
}

}  // namespace

}  // namespace mpc::mpi::priv

/// The privatized program's __tls_get_addr (its relocations bind it here): the block of the
/// calling ULT (a rank's thread-local variables follow the rank from VP to VP), or of the
/// calling plain thread, for the copy whose module record `ti` names. The first access of a
/// thread to a copy allocates its block.
extern "C" __attribute__((force_align_arg_pointer)) void* mpc_image_tls_get_addr(mpc::mpi::priv::tls_index* ti) {
    using namespace mpc::mpi::priv;
    tls_state* s = current_state();
    if (s == nullptr) {
        tls_fatal("out of memory");
    }
    for (tls_binding* b = s->bindings; b != nullptr; b = b->next) {
        if (reinterpret_cast<std::uint64_t>(b->module) == ti->module) {
            return b->block + ti->offset;
        }
    }
    const auto* m = reinterpret_cast<const tls_module*>(ti->module);
    if (m == nullptr || m->magic != tls_module::magic_value) {
        tls_fatal("a thread-local variable of an unknown module");
    }
    auto* b = static_cast<tls_binding*>(std::malloc(sizeof(tls_binding)));
    char* block = b != nullptr ? new_block(m) : nullptr;
    if (block == nullptr) {
        tls_fatal("out of memory for a thread's thread-local variables");
    }
    *b = {m, block, s->bindings};
    s->bindings = b;
    return block + ti->offset;
}

namespace mpc::mpi::priv {
namespace {
/// Registers a thread-local destructor for the calling rank's ULT; false outside a ULT.
bool add_ult_tls_dtor(void (*fn)(void*), void* obj, int& rc) {
    if (sched::user_tls_slot() == nullptr) {
        return false;
    }
    tls_state* s = current_state();
    auto* d = static_cast<tls_dtor*>(std::malloc(sizeof(tls_dtor)));
    if (s == nullptr || d == nullptr) {
        std::free(d);
        rc = -1;
        return true;
    }
    *d = {fn, obj, s->dtors};
    s->dtors = d;
    rc = 0;
    return true;
}

/// Both thread-atexit entry points: the rank's ULT keeps the destructor; a plain thread goes to
/// the real function `name` of the libraries.
int thread_atexit(const char* name, void (*fn)(void*), void* obj, void* dso) {
    if (int rc = 0; add_ult_tls_dtor(fn, obj, rc)) {
        return rc;
    }
    using thread_atexit_fn = int (*)(void (*)(void*), void*, void*);
    auto real = reinterpret_cast<thread_atexit_fn>(dlsym(RTLD_DEFAULT, name));
    return real != nullptr ? real(fn, obj, dso) : -1;
}
}  // namespace
}  // namespace mpc::mpi::priv

/// The program's __cxa_thread_atexit (libstdc++'s, what g++ calls for a thread_local object
/// with a destructor) and __cxa_thread_atexit_impl (glibc's): in a rank's ULT the destructor
/// runs when the rank's main returns; in a plain thread the real one runs it when the thread
/// ends.
extern "C" int mpc_image_cxa_thread_atexit(void (*fn)(void*), void* obj, void* dso) {
    return mpc::mpi::priv::thread_atexit("__cxa_thread_atexit", fn, obj, dso);
}

extern "C" int mpc_image_cxa_thread_atexit_impl(void (*fn)(void*), void* obj, void* dso) {
    return mpc::mpi::priv::thread_atexit("__cxa_thread_atexit_impl", fn, obj, dso);
}

/// localtime() of a privatized program (tools/privatized_libc/localtime.c): glibc's localtime,
/// which reads TZ again on every call, into the rank's own struct tm. tzset() changes glibc's
/// process-wide time zone state under a lock of glibc's own that sanitizers do not see; this
/// mutex, one for the process, orders the ranks' calls where they can see it.
extern "C" struct tm* mpc_image_localtime(const time_t* t, struct tm* out) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    tzset();
    struct tm* r = localtime_r(t, out);
    pthread_mutex_unlock(&lock);
    return r;
}

namespace mpc::mpi::priv {
namespace {

void* resolve(const elf::symbol_ref& s, void*) {
    if (std::strcmp(s.name, "__tls_get_addr") == 0) {
        return reinterpret_cast<void*>(&mpc_image_tls_get_addr);
    }
    if (std::strcmp(s.name, "__cxa_thread_atexit") == 0) {
        return reinterpret_cast<void*>(&mpc_image_cxa_thread_atexit);
    }
    if (std::strcmp(s.name, "__cxa_thread_atexit_impl") == 0) {
        return reinterpret_cast<void*>(&mpc_image_cxa_thread_atexit_impl);
    }
    void* p = s.version != nullptr ? dlvsym(RTLD_DEFAULT, s.name, s.version) : nullptr;
    if (p == nullptr) {
        p = dlsym(RTLD_DEFAULT, s.name);
    }
    return p;
}

/// Runs and frees the thread-local destructors of the calling ULT, newest first (a destructor
/// may register more).
void run_tls_dtors(tls_state* s) {
    while (s->dtors != nullptr) {
        tls_dtor* d = s->dtors;
        s->dtors = d->next;
        d->fn(d->obj);
        std::free(d);
    }
}

}  // namespace

/// A shared library built with `mpc_cc -shared` that the program links: its globals would be
/// shared by the ranks (only the program is copied), so the program is refused.
int find_own_library(dl_phdr_info* info, std::size_t, void* data) {
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {
        return 0;
    }
    void* h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
    if (h == nullptr) {
        return 0;
    }
    void* mark = dlsym(h, "mpc_library_built_with_mpc_cc");
    Dl_info where;
    if (mark != nullptr && dladdr(mark, &where) != 0 && where.dli_fname != nullptr &&
        std::strcmp(where.dli_fname, info->dlpi_name) == 0) {
        *static_cast<std::string*>(data) = info->dlpi_name;
    }
    dlclose(h);
    return 0;
}

bool open_program(std::string& err) {
    std::string own;
    dl_iterate_phdr(&find_own_library, &own);
    if (!own.empty()) {
        err = "it links the shared library " + own +
              ", built with mpc_cc: only the program is copied per rank, so that library's globals would be "
              "shared by the ranks. Link it statically (an .a archive), or build the program with -fno-mpc-privatize";
        return false;
    }
    g_image = elf::image::open("/proc/self/exe", err);
    if (!g_image) {
        return false;
    }
    if (!g_image->defines("main")) {
        err = "the program exports no 'main' (link it with mpc_cc, or with -Wl,--export-dynamic-symbol=main)";
        return false;
    }
    if (!g_image->resolve(&resolve, nullptr, err)) {
        return false;
    }
    // Exceptions thrown through a copy's code: the unwinder finds its frames through the
    // frame tables registered here (the dynamic linker does not know the copies).
    g_register_frame_info = reinterpret_cast<void* (*)(const void*, void*)>(dlsym(RTLD_DEFAULT, "__register_frame_info"));
    return true;
}

bool run_rank(int rank, int argc, char** argv, char** envp, int& exit_code, std::string& err) {
    std::uintptr_t at = 0;
    alloc::slice* sl = alloc::interposing() ? alloc::slice_of(rank) : nullptr;
    if (sl != nullptr) {
        auto a = sl->take_image_area(g_image->span());
        if (!a) {
            err = a.error().reason();
            return false;
        }
        at = *a;
    }
    auto* module = static_cast<tls_module*>(std::malloc(sizeof(tls_module)));
    if (module == nullptr) {
        err = "out of memory";
        return false;
    }
    std::unique_ptr<elf::copy> c = g_image->map(at, reinterpret_cast<std::uint64_t>(module), err);
    if (!c) {
        std::free(module);
        return false;
    }
    module->magic = tls_module::magic_value;
    module->c = c.release();
    module->next = g_modules.load(std::memory_order_relaxed);
    while (!g_modules.compare_exchange_weak(module->next, module, std::memory_order_release, std::memory_order_relaxed)) {
    }
    const elf::copy* cp = module->c;
    if (task* t = current(); t != nullptr) {
        t->image = cp;
    }
    if (sl != nullptr && sl->numa_node >= 0) {
        (void)sl->bind(sl->numa_node);  // the new mappings take the slice's NUMA policy again
    }
    if (g_register_frame_info != nullptr && cp->eh_frame() != nullptr) {
        // libgcc's `struct object` (opaque, 7 words today): never freed, the copy stays mapped.
        void* ob = std::calloc(1, 128);
        if (ob != nullptr) {
            g_register_frame_info(cp->eh_frame(), ob);
        }
    }
    auto main_fn = reinterpret_cast<int (*)(int, char**, char**)>(cp->symbol("main"));
    cp->run_init(argc, argv, envp);
    exit_code = main_fn(argc, argv, envp);
    void** slot = sched::user_tls_slot();
    if (slot != nullptr && *slot != nullptr) {
        run_tls_dtors(static_cast<tls_state*>(*slot));
    }
    cp->run_fini();
    if (slot != nullptr && *slot != nullptr) {  // the rank's thread-local blocks
        delete static_cast<tls_state*>(*slot);
        *slot = nullptr;
    }
    return true;
}

void* rank_symbol(const char* name) noexcept {
    const task* t = current();
    if (t != nullptr && t->image != nullptr) {
        return static_cast<const elf::copy*>(t->image)->symbol(name);
    }
    return dlsym(RTLD_DEFAULT, name);
}

}  // namespace mpc::mpi::priv
