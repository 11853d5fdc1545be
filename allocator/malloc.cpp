/// \file
/// The malloc family and C++ new/delete, interposed by libmpc for the whole process.
///
/// Which heap serves a call: the running task's (the scheduler sets it at every switch, see
/// set_task_heap()), else the calling thread's own heap in a thread slice (created on its first
/// allocation, abandoned to the next thread when it ends). free() and friends find the owner
/// from the address; a block of another heap is a remote free. Blocks that are not ours (made
/// by glibc before this library was in place, or in system mode) go to glibc's functions.
///
/// `MPC_ALLOCATOR=system` (read once, at the first call) sends everything to glibc, for
/// comparisons; it is the default under Valgrind. Sanitizer builds never define these functions: ASan and TSan
/// interpose malloc themselves.

#include "allocator/malloc.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "allocator/heap.hpp"

#include "lib/sanitizers.hpp"
#include "lib/valgrind.hpp"
#if MPC_ASAN || MPC_TSAN
#define MPC_SYSTEM_MALLOC_ONLY 1
#endif

extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace mpc::alloc {
namespace {

enum : int { mode_unknown = 0, mode_mpc = 1, mode_system = 2 };
int g_mode = mode_unknown;
bool g_debug = false;  ///< MPC_ALLOC_DEBUG: check every free (read with the mode)

[[gnu::tls_model("initial-exec")]] thread_local heap* t_task = nullptr;    ///< set by the scheduler
[[gnu::tls_model("initial-exec")]] thread_local heap* t_thread = nullptr;  ///< this thread's own heap
[[gnu::tls_model("initial-exec")]] thread_local bool t_failed = false;     ///< no thread slice left
/// The heap that serves this thread now: t_task, else t_thread (one load on every call).
[[gnu::tls_model("initial-exec")]] thread_local heap* t_cur = nullptr;
pthread_key_t g_exit_key;

int mode() noexcept {
    int m = __atomic_load_n(&g_mode, __ATOMIC_RELAXED);
    if (m != mode_unknown) {
        return m;
    }
#if MPC_SYSTEM_MALLOC_ONLY
    m = mode_system;
#else
    const char* v = std::getenv("MPC_ALLOCATOR");  // getenv does not allocate
    m = v != nullptr && std::strcmp(v, "system") == 0 ? mode_system : mode_mpc;
    // Under Valgrind, glibc's malloc (which memcheck replaces and checks) unless the user
    // asks for ours by name: memcheck cannot follow blocks carved from our slices.
    if (v == nullptr && running_on_valgrind()) {
        m = mode_system;
    }
    const char* d = std::getenv("MPC_ALLOC_DEBUG");
    g_debug = d != nullptr && (std::strcmp(d, "1") == 0 || std::strcmp(d, "yes") == 0 || std::strcmp(d, "true") == 0 ||
                               std::strcmp(d, "on") == 0);
#endif
    __atomic_store_n(&g_mode, m, __ATOMIC_RELAXED);
    return m;
}

void thread_exit(void* s) noexcept {
    // What this thread still allocates (other destructors) goes to glibc: the heap is another
    // thread's as soon as it is released.
    t_thread = nullptr;
    t_failed = true;
    if (t_task == nullptr) {
        t_cur = nullptr;
    }
    release_thread_slice(static_cast<slice*>(s));
}

/// The heap of the calling thread, created on first use; nullptr when none can be had (then
/// glibc serves the thread).
heap* thread_heap() noexcept {
    if (t_thread != nullptr || t_failed) {
        return t_thread;
    }
    static const bool key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0;
    slice* s = claim_thread_slice();
    heap* h = s != nullptr ? heap::create_in(*s) : nullptr;
    if (h == nullptr) {
        t_failed = true;
        return nullptr;
    }
    if (key_ok) {
        pthread_setspecific(g_exit_key, s);
    }
    t_thread = h;
    if (t_task == nullptr) {
        t_cur = h;
    }
    return h;
}

inline heap* current() noexcept {
    if (heap* h = t_cur; h != nullptr) {
        return h;
    }
    return thread_heap();  // no task runs, and the thread has no heap yet
}

inline bool ours(const void* p) noexcept { return heap::of(p) != nullptr; }

std::size_t (*glibc_usable_size)(void*) = nullptr;

std::size_t foreign_usable_size(void* p) noexcept {
    if (glibc_usable_size == nullptr) {
        glibc_usable_size = reinterpret_cast<std::size_t (*)(void*)>(dlsym(RTLD_NEXT, "malloc_usable_size"));
    }
    return glibc_usable_size != nullptr ? glibc_usable_size(p) : 0;
}

}  // namespace

void set_task_heap(heap* h) noexcept {
    t_task = h;
    t_cur = h != nullptr ? h : t_thread;
}
heap* task_heap() noexcept { return t_task; }
bool interposing() noexcept { return mode() == mode_mpc; }

namespace {
/// Serves a request from the current heap with `take(heap&)` (ENOMEM when it is full), or from
/// glibc with `system()` when the allocator is off or the thread has no heap.
template <class Take, class System>
inline void* serve(Take take, System system) noexcept {
    if (mode() == mode_mpc) {
        if (heap* h = current(); h != nullptr) {
            void* p = take(*h);
            if (p == nullptr) {
                errno = ENOMEM;
            }
            return p;
        }
    }
    return system();
}
}  // namespace

void* allocate(std::size_t n) noexcept {
    return serve([n](heap& h) noexcept { return h.alloc(n); }, [n]() noexcept { return __libc_malloc(n); });
}

void* allocate_zeroed(std::size_t total, std::size_t n, std::size_t size) noexcept {
    return serve([total](heap& h) noexcept { return h.alloc_zeroed(total); },
                 [n, size]() noexcept { return __libc_calloc(n, size); });
}

void* allocate_aligned(std::size_t n, std::size_t align) noexcept {
    return serve([n, align](heap& h) noexcept { return h.alloc_aligned(n, align); },
                 [n, align]() noexcept { return __libc_memalign(align, n); });
}

/// MPC_ALLOC_DEBUG: a pointer into our spaces that is not a live block start is reported with
/// its address and the process ends (async-signal-safe output, no allocation).
[[noreturn]] void bad_pointer(const char* call, const void* p) noexcept {
    char line[160];
    int n = std::snprintf(line, sizeof line,
                          "mpc: fatal: %s(%p): not a live block of this allocator (double free, or a pointer that "
                          "malloc did not return)\n",
                          call, p);
    if (n > 0) {
        (void)!::write(2, line, static_cast<std::size_t>(n < static_cast<int>(sizeof line) ? n : sizeof line - 1));
    }
    std::abort();
}

/// MPC_ALLOC_DEBUG: p (not null) must be a live block if it lies in our spaces.
void check_block(const char* call, const void* p) noexcept {
    if ((rank_of(p) >= 0 || thread_slot_of(p) >= 0) && !heap::is_live_block(p)) {
        bad_pointer(call, p);
    }
}

void release(void* p) noexcept {
    if (p == nullptr) {
        return;
    }
    if (g_debug) {
        check_block("free", p);
    }
    heap* cur = t_cur;
    if (cur != nullptr && cur->holds(p)) {  // the common case: the caller's own block
        cur->free_own(p);
        return;
    }
    if (heap* h = heap::of(p); h != nullptr) {
        heap::free_in(h, cur, p);
    } else {
        __libc_free(p);
    }
}

void* reallocate(void* p, std::size_t n) noexcept {
    if (p == nullptr) {
        return allocate(n);
    }
    if (g_debug) {
        check_block("realloc", p);
    }
    if (!ours(p)) {
        return __libc_realloc(p, n);
    }
    heap* h = mode() == mode_mpc ? current() : nullptr;
    if (h == nullptr) {  // a thread without a heap resizes one of ours: copy into glibc's
        void* q = __libc_malloc(n);
        if (q != nullptr) {
            std::size_t have = heap::usable_size(p);
            std::memcpy(q, p, n < have ? n : have);
            heap::free(nullptr, p);
        }
        return q;
    }
    void* q = h->realloc(p, n);
    if (q == nullptr) {
        errno = ENOMEM;
    }
    return q;
}

/// malloc_trim(): the calling task's (or thread's) heap gives its free pages back now, and
/// glibc trims its own arenas (blocks made before this library was in place, system mode).
int trim(std::size_t pad) noexcept {
    static auto glibc_trim = reinterpret_cast<int (*)(std::size_t)>(dlsym(RTLD_NEXT, "malloc_trim"));
    int released = 0;
    if (mode() == mode_mpc) {
        if (heap* h = t_cur; h != nullptr && h->trim()) {
            released = 1;
        }
    }
    if (glibc_trim != nullptr && glibc_trim(pad) != 0) {
        released = 1;
    }
    return released;
}

std::size_t usable_size(void* p) noexcept {
    if (p == nullptr) {
        return 0;
    }
    return ours(p) ? heap::usable_size(p) : foreign_usable_size(p);
}

// ---- fork ------------------------------------------------------------------------------------
// No slice lock may be held by another thread at the fork (it would stay taken in the child):
// the handlers hold them all across it but the forking thread's own heap's slice (see
// detail::lock_all_for_fork()).

namespace {
const slice* g_fork_keep = nullptr;  ///< written and read by the forking thread only

void fork_prepare() noexcept {
    heap* h = mode() == mode_mpc ? current() : nullptr;  // made now: no thread slot is claimed later
    g_fork_keep = h != nullptr ? &h->owner_slice() : nullptr;
    detail::lock_all_for_fork(g_fork_keep);
}
void fork_done() noexcept { detail::unlock_all_after_fork(g_fork_keep); }

/// Registered when the library is loaded, before the program can fork. Prepare handlers run in
/// the reverse order of registration: libraries loaded later run theirs before ours.
[[gnu::constructor]] void register_fork_handlers() noexcept {
    if (::pthread_atfork(fork_prepare, fork_done, fork_done) != 0) {
        static const char msg[] = "mpc: warning: pthread_atfork() failed: a fork() racing a heap growth may hang the child\n";
        (void)!::write(2, msg, sizeof msg - 1);
    }
}
}  // namespace

}  // namespace mpc::alloc

extern "C" {
/// Lets a program (benchmarks/alloc) check that this allocator was preloaded.
const char* mpc_allocator_name(void) { return "mpc"; }
int MPC_Allocator_slice_of(const void* p) { return mpc::alloc::rank_of(p); }
int MPC_Allocator_active(void) { return mpc::alloc::interposing() ? 1 : 0; }
}

// ---- the interposed C functions ---------------------------------------------------------------

#if !MPC_SYSTEM_MALLOC_ONLY
using namespace mpc::alloc;

extern "C" {

void* malloc(std::size_t n) { return allocate(n); }

void free(void* p) { release(p); }

void* calloc(std::size_t n, std::size_t size) {
    std::size_t total = 0;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return nullptr;
    }
    return allocate_zeroed(total, n, size);
}

void* realloc(void* p, std::size_t n) { return reallocate(p, n); }

void* reallocarray(void* p, std::size_t n, std::size_t size) {
    std::size_t total = 0;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return nullptr;
    }
    return reallocate(p, total);
}

int posix_memalign(void** out, std::size_t align, std::size_t n) {
    if (align < sizeof(void*) || (align & (align - 1)) != 0) {
        return EINVAL;
    }
    void* p = allocate_aligned(n, align);
    if (p == nullptr) {
        return ENOMEM;
    }
    *out = p;
    return 0;
}

void* aligned_alloc(std::size_t align, std::size_t n) {
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return nullptr;
    }
    return allocate_aligned(n, align);
}

void* memalign(std::size_t align, std::size_t n) {
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return nullptr;
    }
    return allocate_aligned(n, align);
}

void* valloc(std::size_t n) { return allocate_aligned(n, mpc::alloc::page_size); }

void* pvalloc(std::size_t n) {
    std::size_t rounded = (n + mpc::alloc::page_size - 1) / mpc::alloc::page_size * mpc::alloc::page_size;
    return allocate_aligned(rounded == 0 ? mpc::alloc::page_size : rounded, mpc::alloc::page_size);
}

std::size_t malloc_usable_size(void* p) { return usable_size(p); }

int malloc_trim(std::size_t pad) { return trim(pad); }

}  // extern "C"

// ---- C++ new and delete -----------------------------------------------------------------------

namespace {
// The new_handler and the std::bad_alloc are the program's C++ runtime's (looked up by name when
// an allocation fails): libmpc_malloc.so carries a private copy of the C++ runtime pieces it
// needs, whose new_handler the program's std::set_new_handler() does not set, and an exception
// must be thrown by the runtime that will catch it. In libmpc the lookup finds the same
// libstdc++ that the fallbacks would use.
std::new_handler current_new_handler() noexcept {
    using fn_t = std::new_handler (*)();
    static const auto fn = reinterpret_cast<fn_t>(dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv"));
    return fn != nullptr ? fn() : std::get_new_handler();
}
[[noreturn]] void throw_bad_alloc() {
    using fn_t = void (*)();
    static const auto fn = reinterpret_cast<fn_t>(dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv"));
    if (fn != nullptr) {
        fn();  // std::__throw_bad_alloc() does not return
    }
    throw std::bad_alloc();
}
void* new_block(std::size_t n, std::size_t align) noexcept {
    return align == 0 ? allocate(n) : allocate_aligned(n, align);
}
void* new_or_throw(std::size_t n, std::size_t align) {
    for (;;) {
        if (void* p = new_block(n, align); p != nullptr) {
            return p;
        }
        std::new_handler h = current_new_handler();
        if (h == nullptr) {
            throw_bad_alloc();
        }
        h();
    }
}
void* new_nothrow(std::size_t n, std::size_t align) noexcept {
    for (;;) {
        if (void* p = new_block(n, align); p != nullptr) {
            return p;
        }
        std::new_handler h = current_new_handler();
        if (h == nullptr) {
            return nullptr;
        }
        try {
            h();  // it may throw std::bad_alloc: the nothrow forms then return null
        } catch (...) {
            return nullptr;
        }
    }
}
}  // namespace

// Opaque to the optimizer, in libmpc too (GCC's noipa: no inlining, no cloning, no identical
// code folding): Valgrind replaces these functions by address, so a delete inlined into
// libmpc's own code (LTO), or a new whose callers were redirected to a clone of its body (-O3),
// paired a block of Valgrind's operator new with free() or of malloc() with Valgrind's
// delete, and memcheck reported every such pair as mismatched.
#if defined(__clang__)
#define MPC_NOINLINE_NEW [[gnu::noinline]]
#else
#define MPC_NOINLINE_NEW [[gnu::noipa]]
#endif
MPC_NOINLINE_NEW void* operator new(std::size_t n) { return new_or_throw(n, 0); }
MPC_NOINLINE_NEW void* operator new[](std::size_t n) { return new_or_throw(n, 0); }
MPC_NOINLINE_NEW void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return new_nothrow(n, 0); }
MPC_NOINLINE_NEW void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return new_nothrow(n, 0); }
MPC_NOINLINE_NEW void* operator new(std::size_t n, std::align_val_t a) { return new_or_throw(n, static_cast<std::size_t>(a)); }
MPC_NOINLINE_NEW void* operator new[](std::size_t n, std::align_val_t a) { return new_or_throw(n, static_cast<std::size_t>(a)); }
MPC_NOINLINE_NEW void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return new_nothrow(n, static_cast<std::size_t>(a));
}
MPC_NOINLINE_NEW void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return new_nothrow(n, static_cast<std::size_t>(a));
}

MPC_NOINLINE_NEW void operator delete(void* p) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete[](void* p) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete(void* p, std::size_t) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete[](void* p, std::size_t) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete(void* p, std::align_val_t) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
MPC_NOINLINE_NEW void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
#endif
