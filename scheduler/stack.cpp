#include "scheduler/stack.hpp"

#include "lib/sanitizers.hpp"
#if MPC_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include "allocator/slice.hpp"
#include "lib/log.hpp"
#include "lib/spinlock.hpp"

namespace mpc::sched {
namespace {

std::size_t read_max_map_count() noexcept {
    std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r");
    unsigned long v = 65530;
    if (f != nullptr) {
        if (std::fscanf(f, "%lu", &v) != 1) {
            v = 65530;
        }
        std::fclose(f);
    }
    return v;
}

std::size_t round_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) / a * a; }

class mmap_stack_allocator final : public stack_allocator {
public:
    mmap_stack_allocator() {
        std::size_t maps = read_max_map_count();
        // Leave a quarter of the VMAs (at least 8192) to the rest of the process.
        std::size_t reserve = maps / 4 > 8192 ? maps / 4 : 8192;
        budget_.store(maps > reserve ? (maps - reserve) / 2 : 0, std::memory_order_relaxed);
    }

    result<stack_region> allocate(std::size_t size, int owner) noexcept override {
        const std::size_t pg = page_size();
        size = round_up(size < 4 * pg ? 4 * pg : size, pg);
        if (guarded_.fetch_add(1, std::memory_order_relaxed) < budget_.load(std::memory_order_relaxed)) {
            void* m = ::mmap(nullptr, size + pg, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
            if (m == MAP_FAILED) {
                guarded_.fetch_sub(1, std::memory_order_relaxed);
                MPC_LOG(error, sched, "mmap of a %zu-byte ULT stack failed: %m", size);
                return status::from_errno("mmap of a ULT stack");
            }
            if (::mprotect(m, pg, PROT_NONE) != 0) {
                int e = errno;
                ::munmap(m, size + pg);
                guarded_.fetch_sub(1, std::memory_order_relaxed);
                return status::from_errno("mprotect of a stack guard page", e);
            }
            stack_region r;
            r.guard_lo = m;
            r.guard_size = pg;
            r.lo = static_cast<char*>(m) + pg;
            r.size = size;
            r.owner = owner;
            return r;
        }
        guarded_.fetch_sub(1, std::memory_order_relaxed);
        return allocate_unguarded(size, owner);
    }

    void release(const stack_region& s) noexcept override {
        if (s.guard_lo != nullptr) {
#if MPC_ASAN
            // The frames of the ULT that ran here left poisoned redzones in the shadow memory,
            // and ASan does not clear it on munmap: whatever the kernel maps here next (the
            // program's own mmap, a copy of a privatized program) would look poisoned.
            ASAN_UNPOISON_MEMORY_REGION(s.lo, s.size);
#endif
            ::munmap(s.guard_lo, s.size + s.guard_size);
            guarded_.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        spin_guard g(lock_);
        free_.push_back(s);
        unguarded_.fetch_sub(1, std::memory_order_relaxed);
    }

    const char* name() const noexcept override { return "mmap+guard"; }

    stack_stats stats() const noexcept {
        return {guarded_.load(std::memory_order_relaxed), unguarded_.load(std::memory_order_relaxed),
                budget_.load(std::memory_order_relaxed)};
    }
    void set_budget(std::size_t n) noexcept { budget_.store(n, std::memory_order_relaxed); }

private:
    result<stack_region> allocate_unguarded(std::size_t size, int owner) noexcept {
        {
            spin_guard g(lock_);
            for (std::size_t i = free_.size(); i-- > 0;) {
                if (free_[i].size == size) {
                    stack_region r = free_[i];
                    free_[i] = free_.back();
                    free_.pop_back();
                    r.owner = owner;
                    *r.canary = stack_canary_value;
                    unguarded_.fetch_add(1, std::memory_order_relaxed);
                    return r;
                }
            }
        }
        if (!warned_.exchange(true)) {
            MPC_LOG(warn, sched,
                    "vm.max_map_count allows guard pages on %zu ULT stacks; further stacks get a canary "
                    "checked at each switch instead (raise vm.max_map_count to keep guard pages)",
                    budget_.load());
        }
        constexpr std::size_t per_chunk = 32;
        void* m = ::mmap(nullptr, size * per_chunk, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (m == MAP_FAILED) {
            MPC_LOG(error, sched, "mmap of %zu ULT stacks failed: %m", per_chunk);
            return status::from_errno("mmap of a ULT stack chunk");
        }
        stack_region first;
        spin_guard g(lock_);
        for (std::size_t i = 0; i < per_chunk; ++i) {
            stack_region r;
            r.lo = static_cast<char*>(m) + i * size;
            r.size = size;
            r.canary = static_cast<std::uint64_t*>(r.lo);
            *r.canary = stack_canary_value;
            if (i == 0) {
                first = r;
            } else {
                free_.push_back(r);
            }
        }
        first.owner = owner;
        unguarded_.fetch_add(1, std::memory_order_relaxed);
        return first;
    }

    std::atomic<std::size_t> guarded_{0};
    std::atomic<std::size_t> unguarded_{0};
    std::atomic<std::size_t> budget_{0};
    std::atomic<bool> warned_{false};
    spinlock lock_;
    std::vector<stack_region> free_;
};

mmap_stack_allocator& default_impl() noexcept {
    static mmap_stack_allocator a;
    return a;
}

std::atomic<stack_allocator*> current{nullptr};

}  // namespace

std::size_t page_size() noexcept {
    static const std::size_t pg = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return pg;
}

stack_allocator& default_stack_allocator() noexcept { return default_impl(); }

void set_stack_allocator(stack_allocator* a) noexcept { current.store(a, std::memory_order_release); }

stack_allocator& current_stack_allocator() noexcept {
    stack_allocator* a = current.load(std::memory_order_acquire);
    return a != nullptr ? *a : default_impl();
}

stack_stats default_stack_stats() noexcept { return default_impl().stats(); }

namespace {
/// Stacks of tasks in their address slices (allocator/slice.hpp), with a guard page below each;
/// the default allocator for stacks of no task, and when a slice cannot hold one more.
class slice_stack_allocator final : public stack_allocator {
public:
    result<stack_region> allocate(std::size_t size, int owner) noexcept override {
        alloc::slice* s = owner >= 0 ? alloc::slice_of(owner) : nullptr;
        if (s != nullptr) {
            // Cache colouring: every slice starts at a multiple of the slice size, so the tops
            // of all ranks' stacks would share their low address bits and the hot frames of
            // ranks that take turns on one core would fight for the same cache sets (the 1-VP
            // ping-pong measured 20% slower). The top of each rank's stack is moved down by a
            // rank-dependent colour: a cache-line offset inside the page (L1 sets) plus a page
            // offset (L2 sets).
            std::size_t colour = (static_cast<std::size_t>(owner) * 17 % 64) * 64 +
                                 (static_cast<std::size_t>(owner) * 5 % 16) * page_size();
            std::size_t bytes = (size + colour + page_size() - 1) / page_size() * page_size();
            if (auto lo = s->take_stack(bytes); lo) {
                stack_region r;
                r.lo = reinterpret_cast<void*>(*lo);
                r.size = bytes - colour;  // >= size: the colour comes off the top
                r.guard_lo = reinterpret_cast<void*>(*lo - page_size());
                r.guard_size = page_size();
                r.owner = owner;
                return r;
            } else if (!warned_.exchange(true)) {
                MPC_LOG(warn, alloc, "task %d: stack outside its address slice (%s)", owner, lo.error().reason());
            }
        }
        return default_impl().allocate(size, owner);
    }
    void release(const stack_region& r) noexcept override {
        if (alloc::rank_of(r.lo) >= 0) {
            if (alloc::slice* s = alloc::slice_of(alloc::rank_of(r.lo)); s != nullptr) {
                s->give_stack(reinterpret_cast<std::uintptr_t>(r.lo));
                return;
            }
        }
        default_impl().release(r);
    }
    const char* name() const noexcept override { return "slices"; }

private:
    std::atomic<bool> warned_{false};
};
}  // namespace

stack_allocator& slice_stack_allocator() noexcept {
    static class slice_stack_allocator a;
    return a;
}

void set_guard_budget(std::size_t n) noexcept { default_impl().set_budget(n); }

}  // namespace mpc::sched
