// libmpc_malloc.so preloaded into a C++ program that does not link libmpc (how benchmarks/alloc
// and users without mpc_run use the allocator alone). The library carries its own copy of the
// few C++ runtime pieces it needs and exports only the malloc family, new/delete and the
// introspection calls: this checks that the program's own libstdc++ still catches the
// std::bad_alloc that our operator new throws, and that every entry point serves from our heaps.
#include <dlfcn.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {
int failures = 0;
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "preload_check: FAILED: %s\n", what);
        ++failures;
    }
}
}  // namespace

int main() {
    using name_fn = const char* (*)();
    using active_fn = int (*)();
    using slice_fn = int (*)(const void*);
    auto name = reinterpret_cast<name_fn>(dlsym(RTLD_DEFAULT, "mpc_allocator_name"));
    auto active = reinterpret_cast<active_fn>(dlsym(RTLD_DEFAULT, "MPC_Allocator_active"));
    auto slice_of = reinterpret_cast<slice_fn>(dlsym(RTLD_DEFAULT, "MPC_Allocator_slice_of"));
    if (name == nullptr || active == nullptr || slice_of == nullptr) {
        std::fprintf(stderr, "preload_check: libmpc_malloc.so is not preloaded\n");
        return 2;
    }
    check(std::strcmp(name(), "mpc") == 0, "mpc_allocator_name() is \"mpc\"");
    check(active() == 1, "the allocator interposes");
    // Internal symbols stay inside the library.
    check(dlsym(RTLD_DEFAULT, "_ZN3mpc5alloc4heap9free_slowEPS1_S2_Pv") == nullptr, "no internal symbol exported");

    // Every entry point, and the blocks' contents.
    std::vector<void*> blocks;
    for (std::size_t n = 1; n < (std::size_t{1} << 22); n = n * 3 + 1) {
        auto* p = static_cast<unsigned char*>(std::malloc(n));
        check(p != nullptr && malloc_usable_size(p) >= n, "malloc");
        std::memset(p, static_cast<int>(n & 0xff), n);
        blocks.push_back(p);
    }
    for (void* p : blocks) {
        std::free(p);
    }
    void* a = nullptr;
    check(posix_memalign(&a, 4096, 100) == 0 && reinterpret_cast<std::uintptr_t>(a) % 4096 == 0, "posix_memalign");
    a = std::realloc(a, 1 << 20);
    check(a != nullptr, "realloc");
    std::free(a);
    auto* z = static_cast<unsigned char*>(std::calloc(1000, 10));
    check(z != nullptr && z[0] == 0 && z[9999] == 0, "calloc");
    std::free(z);

    // C++: new/delete in their forms, and a std::bad_alloc caught by the program's runtime.
    auto* v = new std::vector<std::string>(100, std::string(100, 'x'));
    check(v->at(99).size() == 100, "new");
    delete v;
    struct alignas(256) big_aligned {
        char c[256];
    };
    auto* b = new big_aligned[3];
    check(reinterpret_cast<std::uintptr_t>(b) % 256 == 0, "aligned new[]");
    delete[] b;
    auto huge_new_throws = [] {
        try {
            static char* volatile sink;  // the allocation cannot be elided
            volatile std::size_t huge = std::size_t{1} << 62;
            sink = new char[huge];
            delete[] sink;
        } catch (const std::bad_alloc&) {
            return true;
        }
        return false;
    };
    check(huge_new_throws(), "std::bad_alloc from operator new caught by the program");
    check(new (std::nothrow) char[std::size_t{1} << 62] == nullptr, "nothrow new returns null");
    // The program's std::set_new_handler() is the one operator new calls before giving up.
    static int handler_calls = 0;
    std::set_new_handler([] {
        ++handler_calls;
        std::set_new_handler(nullptr);  // the next failure throws
    });
    bool caught = huge_new_throws();
    check(caught && handler_calls == 1, "operator new calls the program's new_handler, then throws");

    // Threads (each its own heap) free each other's blocks; a forked child allocates.
    std::vector<void*> from_thread(1000);
    std::thread t([&] {
        for (auto& p : from_thread) {
            p = std::malloc(48);
        }
    });
    t.join();
    for (void* p : from_thread) {
        check(slice_of(p) == -1, "a thread heap is not a rank slice");
        std::free(p);
    }
    pid_t pid = fork();
    if (pid == 0) {
        void* p = std::malloc(1000);
        std::_Exit(p != nullptr ? 0 : 1);
    }
    int status = 0;
    check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "malloc in a forked child");
    check(malloc_trim(0) >= 0, "malloc_trim");
    if (failures == 0) {
        std::printf("preload_check: libmpc_malloc.so serves this program\n");
    }
    return failures == 0 ? 0 : 1;
}
