// The interposed malloc family and new/delete (allocator/malloc.cpp): every entry point, its
// alignment and error contracts, thread heaps with frees across threads and heaps adopted after
// their thread ended, fork, and MPC_ALLOCATOR=system (in a child process: the mode is chosen at
// the first allocation). In sanitizer builds the sanitizer's malloc serves and interposing() is
// false; the contracts are checked all the same.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "allocator/heap.hpp"
#include "allocator/malloc.hpp"
#include "allocator/slice.hpp"

// Sanitizer builds: the sanitizer's malloc must honour the same contracts (return null / an
// error code) instead of aborting on the bad requests below.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __tsan_default_options() { return "allocator_may_return_null=1"; }

namespace {

using namespace mpc::alloc;

bool is_ours(const void* p) { return heap::of(p) != nullptr; }

/// Keeps the compiler from eliding an allocation or a free (it may drop malloc/free pairs).
void escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }
/// The same pointer, but the compiler no longer knows where it came from (the deliberate bad
/// frees below would otherwise draw -Wuse-after-free / -Wfree-nonheap-object).
void* opaque(void* p) {
    asm volatile("" : "+r"(p));
    return p;
}

/// Child modes: the tests below exec this binary with MPC_TEST_CHILD set (and the environment
/// under test); the child does its part here, before main, and exits.
const int child_mode_done = [] {
    const char* m = std::getenv("MPC_TEST_CHILD");
    if (m == nullptr) {
        return 0;
    }
    if (std::strcmp(m, "who-serves") == 0) {
        void* p = std::malloc(100);
        escape(p);
        std::printf("served by: %s (interposing %d)\n", is_ours(p) ? "mpc" : "glibc", interposing() ? 1 : 0);
        std::fflush(stdout);
        std::free(p);
    } else if (std::strcmp(m, "double-free") == 0) {
        void* p = std::malloc(48);
        void* same = opaque(p);
        std::free(p);
        std::free(same);  // must abort here
    } else if (std::strcmp(m, "interior-free") == 0) {
        auto* p = static_cast<char*>(std::malloc(100000));
        escape(p);
        std::free(opaque(p + 64));  // must abort here
    } else if (std::strcmp(m, "large-double-free") == 0 || std::strcmp(m, "run-start-free") == 0) {
        // A large block at a colour (not on its run's 64 KiB boundary; the first one may be).
        void* before = std::malloc(std::size_t{1} << 20);
        void* p = std::malloc(std::size_t{1} << 20);
        escape(before);
        escape(p);
        auto run = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{0xffff};
        if (run == reinterpret_cast<std::uintptr_t>(p)) {
            std::printf("not coloured\n");
            std::fflush(stdout);
            std::_Exit(3);
        }
        if (std::strcmp(m, "run-start-free") == 0) {
            std::free(opaque(reinterpret_cast<void*>(run)));  // must abort here
        }
        void* same = opaque(p);
        std::free(before);
        std::free(p);  // its run merges into the one before
        std::free(same);  // must abort here
    }
    std::_Exit(0);
}();

/// Runs this binary as a child with MPC_TEST_CHILD=mode and env NAME=VALUE; returns its wait
/// status and what it wrote (stdout and stderr).
int run_child(const char* mode, const char* name, const char* value, std::string* out) {
    int fds[2];
    if (pipe(fds) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setenv("MPC_TEST_CHILD", mode, 1);
        setenv(name, value, 1);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execl("/proc/self/exe", "malloc_test", nullptr);
        std::_Exit(127);
    }
    close(fds[1]);
    char buf[4096];
    for (ssize_t r; (r = read(fds[0], buf, sizeof buf)) > 0;) {
        out->append(buf, static_cast<std::size_t>(r));
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}
bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(Malloc, EveryEntryPointServesAndFrees) {
    void* a = std::malloc(100);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(is_ours(a), interposing());
    EXPECT_GE(malloc_usable_size(a), 100u);
    EXPECT_TRUE(aligned(a, alignof(std::max_align_t)));
    std::memset(a, 0xab, 100);

    auto* z = static_cast<unsigned char*>(std::calloc(1000, 3));
    ASSERT_NE(z, nullptr);
    for (int i = 0; i < 3000; ++i) {
        ASSERT_EQ(z[i], 0) << i;
    }
    std::memset(z, 0xcd, 3000);
    std::free(z);
    z = static_cast<unsigned char*>(std::calloc(3000, 1));  // the same block again, zeroed again
    for (int i = 0; i < 3000; ++i) {
        ASSERT_EQ(z[i], 0) << i;
    }

    void* b = std::realloc(a, 100000);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(static_cast<unsigned char*>(b)[99], 0xab);
    b = reallocarray(b, 1000, 300);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(static_cast<unsigned char*>(b)[99], 0xab);

    for (std::size_t al : {8u, 16u, 64u, 256u, 4096u, 65536u, 1u << 21}) {
        void* p = nullptr;
        ASSERT_EQ(posix_memalign(&p, al, 1000), 0) << al;
        EXPECT_TRUE(aligned(p, al)) << al;
        void* q = aligned_alloc(al, 3 * al);
        EXPECT_TRUE(q != nullptr && aligned(q, al)) << al;
        void* r = memalign(al, 10);
        EXPECT_TRUE(r != nullptr && aligned(r, al)) << al;
        std::free(p);
        std::free(q);
        std::free(r);
    }
    // Tiny requests: 8-byte blocks, 8-byte aligned (enough for any object that fits), but 16
    // when asked; from 9 bytes on, max_align_t.
    for (std::size_t n : {1u, 8u}) {
        void* t = std::malloc(n);
        void* t16 = nullptr;
        ASSERT_EQ(posix_memalign(&t16, 16, n), 0);
        void* m16 = memalign(16, n);
        EXPECT_TRUE(t != nullptr && aligned(t, 8)) << n;
        EXPECT_TRUE(aligned(t16, 16) && m16 != nullptr && aligned(m16, 16)) << n;
        std::free(t);
        std::free(t16);
        std::free(m16);
    }
    void* nine = std::malloc(9);
    EXPECT_TRUE(nine != nullptr && aligned(nine, alignof(std::max_align_t)));
    std::free(nine);
    void* v = valloc(10);
    EXPECT_TRUE(v != nullptr && aligned(v, 4096));
    void* pv = pvalloc(5000);
    EXPECT_TRUE(pv != nullptr && aligned(pv, 4096));
    EXPECT_GE(malloc_usable_size(pv), 8192u);
    std::free(v);
    std::free(pv);
    std::free(b);
    std::free(z);
    std::free(nullptr);
    EXPECT_EQ(malloc_usable_size(nullptr), 0u);
}

TEST(Malloc, LargeAlignedBlocksFromEveryEntryPoint) {
    // Large blocks start at a colour inside their first page (allocator/heap.hpp): every aligned
    // entry point must still honour its alignment, and the plain ones max_align_t.
    constexpr std::size_t sizes[] = {20000, 100000, std::size_t{1} << 20, (std::size_t{3} << 20) + 17};
    auto use = [](void* p, std::size_t n, std::size_t al, const char* how) {
        ASSERT_NE(p, nullptr) << how << " " << n << " aligned to " << al;
        EXPECT_TRUE(aligned(p, al)) << how << " " << n << " aligned to " << al << ": " << p;
        EXPECT_GE(malloc_usable_size(p), n) << how;
        static_cast<unsigned char*>(p)[0] = 1;
        static_cast<unsigned char*>(p)[n - 1] = 1;
    };
    for (std::size_t n : sizes) {
        for (std::size_t al = 16; al <= (std::size_t{1} << 21); al *= 2) {
            void* p = nullptr;
            ASSERT_EQ(posix_memalign(&p, al, n), 0);
            use(p, n, al, "posix_memalign");
            void* q = aligned_alloc(al, (n + al - 1) / al * al);
            use(q, n, al, "aligned_alloc");
            void* r = memalign(al, n);
            use(r, n, al, "memalign");
            void* o = ::operator new(n, std::align_val_t(al));
            use(o, n, al, "operator new");
            void* oa = ::operator new[](n, std::align_val_t(al), std::nothrow);
            use(oa, n, al, "operator new[] nothrow");
            std::free(p);
            std::free(q);
            std::free(r);
            ::operator delete(o, n, std::align_val_t(al));
            ::operator delete[](oa, std::align_val_t(al));
        }
        void* v = valloc(n);
        use(v, n, 4096, "valloc");
        void* pv = pvalloc(n);
        use(pv, n, 4096, "pvalloc");
        void* m = std::malloc(n);
        use(m, n, alignof(std::max_align_t), "malloc");
        void* c = std::calloc(1, n);
        use(c, n, alignof(std::max_align_t), "calloc");
        void* g = std::realloc(m, 2 * n);
        use(g, 2 * n, alignof(std::max_align_t), "realloc");
        std::free(v);
        std::free(pv);
        std::free(g);
        std::free(c);
    }
}

TEST(Malloc, StreamsArraysDoNotShareTheirLowAddressBits) {
    // STREAM's three arrays of 166,666 doubles, allocated in a row: with our heap they start at
    // different offsets in their pages (address bits 6-11), so the triad's three streams do not
    // fall in the same cache sets.
    if (!interposing()) {
        return;  // sanitizer builds: glibc's malloc
    }
    constexpr std::size_t n = 166666 * sizeof(double);
    void* a = std::malloc(n);
    void* b = std::malloc(n);
    void* c = std::malloc(n);
    ASSERT_TRUE(a && b && c);
    auto line = [](void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096 / 64; };
    EXPECT_NE(line(a), line(b)) << a << " " << b;
    EXPECT_NE(line(b), line(c)) << b << " " << c;
    EXPECT_NE(line(a), line(c)) << a << " " << c;
    std::free(a);
    std::free(b);
    std::free(c);
}

TEST(Malloc, BadRequestsFailCleanly) {
    void* p = reinterpret_cast<void*>(0x1);
    EXPECT_EQ(posix_memalign(&p, 3, 100), EINVAL);
    EXPECT_EQ(posix_memalign(&p, 4, 100), EINVAL) << "less than sizeof(void*)";
    EXPECT_EQ(p, reinterpret_cast<void*>(0x1)) << "untouched on failure";
    volatile std::size_t big = SIZE_MAX / 2;  // opaque to the compiler's size checks
    errno = 0;
    EXPECT_EQ(std::calloc(big, 3), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(reallocarray(nullptr, big, 3), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    void* huge = std::malloc(big);
    EXPECT_EQ(huge, nullptr);
    EXPECT_EQ(errno, ENOMEM);
    if (interposing()) {  // ASan's operator new reports the failure and ends the process
        EXPECT_THROW((void)::operator new(big), std::bad_alloc);
    }
    EXPECT_EQ(::operator new(big, std::nothrow), nullptr);
}

TEST(Malloc, NewAndDeleteInAllForms) {
    auto* i = new int(7);
    EXPECT_EQ(is_ours(i), interposing());
    delete i;
    auto* arr = new double[1000]();
    EXPECT_EQ(arr[999], 0.0);
    delete[] arr;
    struct alignas(256) wide {
        char c[300];
    };
    auto* w = new wide;
    EXPECT_TRUE(aligned(w, 256));
    delete w;
    auto* ws = new wide[5];
    EXPECT_TRUE(aligned(ws, 256));
    delete[] ws;
    void* raw = ::operator new(64, std::align_val_t(4096));
    EXPECT_TRUE(aligned(raw, 4096));
    ::operator delete(raw, 64, std::align_val_t(4096));
    auto* nt = new (std::nothrow) char[100];
    EXPECT_NE(nt, nullptr);
    delete[] nt;
}

TEST(Malloc, ThreadsHaveTheirOwnHeapsAndFreeEachOthersBlocks) {
    // Each thread allocates from its own heap; blocks are freed by another thread (remote). Then
    // more threads than there are thread slices start one after the other: ended threads'
    // heaps are adopted (blocks made by a dead thread can still be freed later).
    constexpr int n = 1000;
    std::vector<void*> made(n);
    std::thread producer([&] {
        for (int i = 0; i < n; ++i) {
            made[static_cast<std::size_t>(i)] = std::malloc(static_cast<std::size_t>(16 + i * 7));
            std::memset(made[static_cast<std::size_t>(i)], 1, static_cast<std::size_t>(16 + i * 7));
        }
    });
    producer.join();
    void* mine = std::malloc(64);
    if (interposing()) {
        EXPECT_NE(heap::of(made[0]), heap::of(mine)) << "another thread, another heap";
    }
    std::thread consumer([&] {
        for (void* p : made) {
            std::free(p);
        }
    });
    consumer.join();
    std::free(mine);
    std::vector<void*> leftovers;
    for (int t = 0; t < 300; ++t) {
        std::thread([&leftovers, t] {
            void* p = std::malloc(static_cast<std::size_t>(100 + t));
            std::memset(p, 2, static_cast<std::size_t>(100 + t));
            leftovers.push_back(p);  // threads run one at a time
        }).join();
    }
    for (void* p : leftovers) {
        std::free(p);
    }
}

TEST(Malloc, WorksInAForkedChild) {
    void* before = std::malloc(1000);
    std::memset(before, 3, 1000);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        bool ok = static_cast<unsigned char*>(before)[999] == 3;
        std::free(before);
        std::vector<void*> v;
        for (int i = 0; i < 10000; ++i) {
            v.push_back(std::malloc(static_cast<std::size_t>(i % 5000 + 1)));
        }
        for (void* p : v) {
            std::free(p);
        }
        std::_Exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::free(before);
}

TEST(Malloc, AForkRacingAnotherThreadsSliceLockLeavesTheChildUnlocked) {
    // Another thread takes and releases its slice's lock without a pause (heap_room() holds it
    // for a few instructions, as a heap growth does for an mprotect()). Without the allocator's
    // pthread_atfork handlers a fork() lands inside that critical section often enough that
    // some child finds the lock taken for ever; alarm() turns that hang into a failure.
    std::atomic<slice*> other{nullptr};
    std::atomic<bool> stop{false};
    std::thread hammer([&] {
        slice* s = claim_thread_slice();
        other.store(s);
        if (s == nullptr) {
            return;
        }
        while (!stop.load(std::memory_order_relaxed)) {
            (void)s->heap_room();
        }
    });
    while (other.load() == nullptr) {
        std::this_thread::yield();
    }
    slice* s = other.load();
    ASSERT_NE(s, nullptr) << "no thread slice left";
    int hung = 0, failed = 0;
    for (int i = 0; i < 200; ++i) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            alarm(5);
            bool ok = s->heap_room() > 0;  // the other thread's slice: its lock must be free
            // A new thread slot (claimed under the lock that guards slice creation) and an
            // allocation. (Not from a new thread: ThreadSanitizer cannot start threads in the
            // child of a multi-threaded fork.)
            slice* fresh = claim_thread_slice();
            ok = ok && fresh != nullptr && fresh->heap_room() > 0;
            void* p = std::malloc(1 << 20);
            ok = ok && p != nullptr;
            std::free(p);
            std::_Exit(ok ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        hung += WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (failed != 0) {
            break;
        }
    }
    stop = true;
    hammer.join();
    EXPECT_EQ(hung, 0) << "children that found a slice lock taken";
    EXPECT_EQ(failed, 0);
}

TEST(Malloc, MallocTrimGivesTheFreePagesBackNow) {
    // A freed 16 MiB block stays resident for a while (it is likely to be asked for again);
    // malloc_trim() gives it back at once.
    const std::size_t n = std::size_t{16} << 20;
    auto* p = static_cast<unsigned char*>(std::malloc(n));
    ASSERT_NE(p, nullptr);
    std::memset(p, 7, n);
    escape(p);  // (the memset before a free is otherwise a dead store)
    volatile std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);  // its pages are looked at after the free
    // The block starts at a colour inside its first page (allocator/heap.hpp). The vector is
    // made before the free: made after, it could take a span of the freed run.
    std::uintptr_t lo = at / 4096 * 4096;
    std::vector<unsigned char> vec((at + n - lo + 4095) / 4096);
    std::free(p);
    int released = malloc_trim(0);
    if (interposing()) {
        EXPECT_EQ(released, 1);
        ASSERT_EQ(::mincore(reinterpret_cast<void*>(lo), vec.size() * 4096, vec.data()), 0);
        EXPECT_LE(std::count_if(vec.begin(), vec.end(), [](unsigned char c) { return (c & 1) != 0; }), 1);
        EXPECT_EQ(malloc_trim(0), 0) << "nothing left to give back";
    }
}

TEST(Malloc, SystemModeLeavesEverythingToGlibc) {
    // The mode is chosen at the first allocation: a fresh process with MPC_ALLOCATOR=system.
    std::string out;
    int status = run_child("who-serves", "MPC_ALLOCATOR", "system", &out);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find("served by: glibc (interposing 0)"), std::string::npos) << out;
    out.clear();
    status = run_child("who-serves", "MPC_ALLOCATOR", "mpc", &out);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_NE(out.find(interposing() ? "served by: mpc (interposing 1)" : "served by: glibc"), std::string::npos) << out;
}

TEST(Malloc, DebugModeReportsBadFreesWithTheAddress) {
    if (!interposing()) {
        return;  // sanitizer builds: the sanitizer's malloc reports bad frees itself
    }
    for (const char* mode : {"double-free", "interior-free", "large-double-free", "run-start-free"}) {
        std::string out;
        int status = run_child(mode, "MPC_ALLOC_DEBUG", "1", &out);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << mode << ": " << out;
        EXPECT_NE(out.find("free(0x"), std::string::npos) << mode << ": names the address: " << out;
        EXPECT_NE(out.find("not a live block"), std::string::npos) << mode << ": " << out;
    }
}

}  // namespace
