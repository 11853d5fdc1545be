/// \file
/// Address slices (DESIGN.md decision 2): one fixed range of virtual addresses per global rank,
/// at the same address in every process, `base + rank * slice_size`. The whole space is
/// reserved once, PROT_NONE and MAP_NORESERVE (no memory, no commit charge); a slice commits
/// (mprotect read-write) what it uses, from both ends:
///
///     lo                                                                               hi
///     | header | heap: committed, grows up -> |   reserved   | g | stack | g | stack |
///              ^ lo + header_size           ^ heap_top     ^ stack_lo  (g: guard page)
///
/// The header (this struct) lives in the slice's first page, and everything the heap needs
/// lives above it, so a slice's memory describes itself: checkpoint and migration copy the
/// committed ranges and the state comes back with them. A slice never shrinks its committed
/// ranges (freed memory is given back with madvise(MADV_DONTNEED) by the heap), so it costs at
/// most three kernel VMAs however it is used.
///
/// Thread-safe: the heap grows from the task's own ULT, stacks are taken by whoever spawns the
/// task; both take the slice's spinlock for the few instructions that move a boundary.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>

#include "lib/sanitizers.hpp"
#include "lib/spinlock.hpp"
#include "lib/status.hpp"

namespace mpc::alloc {

inline constexpr std::size_t page_size = 4096;

/// Where the slices go. Zero fields take the defaults (see reserve_space()).
struct space_options {
    std::uintptr_t base = 0;     ///< first slice's address (MPC_SLICE_BASE; default 16 TiB)
    std::size_t slice_size = 0;  ///< bytes per slice (MPC_SLICE_SIZE; default: see reserve_space)
};

/// A committed range [lo, hi).
struct range {
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    std::size_t size() const noexcept { return hi - lo; }
};

struct slice {
    static constexpr std::uint64_t magic_value = 0x6d70635f534c4943ULL;  // "mpc_SLIC"
    static constexpr std::size_t header_size = page_size;
    static constexpr int max_stacks = 32;

    /// A ULT stack carved from the slice: [lo, lo + size) committed, the page below a guard.
    struct stack_slot {
        std::uintptr_t lo;
        std::size_t size;
        bool used;
    };

    std::uint64_t magic;
    int rank;
    int numa_node;          ///< node its pages are bound to, -1: none
    std::uintptr_t lo;      ///< the slice: [lo, hi)
    std::uintptr_t hi;
    std::uintptr_t heap_top;  ///< heap area committed: [lo + header_size, heap_top)
    std::uintptr_t stack_lo;  ///< stack area (stacks and their guard pages): [stack_lo, hi)
    void* heap;               ///< the heap's state (inside the slice), set by its owner
    spinlock lock;
    int nstacks;
    stack_slot stacks[max_stacks];
    std::uintptr_t image_lo;  ///< the task's copy of the program: [image_lo, image_hi), or 0
    std::uintptr_t image_hi;

    /// Commits `bytes` (a multiple of page_size) more at the top of the heap area and returns
    /// their start; errc::no_memory when they would meet the stack area (the slice is full) or
    /// the kernel refuses (errno in the message).
    result<std::uintptr_t> grow_heap(std::size_t bytes) noexcept;
    /// A stack of `bytes` (a multiple of page_size) with a guard page below it: a released one of
    /// that size, else carved below the stack area. errc::no_memory when the slice is full,
    /// errc::busy when it already holds max_stacks stacks.
    result<std::uintptr_t> take_stack(std::size_t bytes) noexcept;
    /// Address space for the task's private copy of the program (privatized globals, see
    /// lib/elf_image.hpp): `bytes` (a multiple of page_size) carved below the stack area, with a
    /// guard page below, left PROT_NONE for the loader to map. One per slice: errc::busy on a
    /// second call; errc::no_memory when the slice is full.
    result<std::uintptr_t> take_image_area(std::size_t bytes) noexcept;
    /// Gives a stack back (its pages to the kernel); take_stack() reuses it.
    void give_stack(std::uintptr_t lo) noexcept;
    /// Calls fn(r, arg) for each committed range, lowest first (header + heap, then each stack;
    /// guard pages excluded). Does not allocate. The image area is not included: its mappings
    /// (file-backed text, private data) are described by the program image itself.
    void for_each_committed(void (*fn)(range r, void* arg), void* arg) const noexcept;
    /// Binds the slice's pages, present and future, to NUMA node `node` (mbind, MPOL_PREFERRED:
    /// a full node falls back to another rather than failing the allocation).
    [[nodiscard]] status bind(int node) noexcept;
    /// Moves the slice's committed pages to `node` (move_pages) and binds the slice there: for a
    /// task that moved to a VP of another node. Pages never touched are skipped.
    [[nodiscard]] status move_to_node(int node) noexcept;
    /// Bytes of heap area still uncommitted (what grow_heap can still give).
    std::size_t heap_room() const noexcept;
};

/// Reserves the address space for `count` slices (once per process; errc::busy if done). The
/// default slice size is the largest power of two, at most 1 TiB and at least 64 MiB, such that
/// `count` slices fit between the base and space_default_end() (85 TiB, below where Linux loads
/// position-independent executables), or, when even 64 MiB slices do not fit there, between the
/// base and space_end_limit() (0x7e0000000000, below the kernel's mmap area). Clear errors: errc::invalid_argument when the slices do not fit (says how
/// much is needed and what to set), errc::busy when part of the range is already mapped.
[[nodiscard]] status reserve_space(int count, const space_options& opts = {}) noexcept;
/// reserve_space() with MPC_SLICE_BASE / MPC_SLICE_SIZE from the environment.
[[nodiscard]] status reserve_space_from_config(int count) noexcept;
/// Unmaps the space (tests; every slice pointer becomes invalid).
void release_space() noexcept;

/// Where the slices go by default (16 TiB; 64 GiB under ThreadSanitizer, whose shadow memory
/// takes the high ranges), the address they must end below, and the address slices of the
/// default size end below (the same as space_end_limit() under ThreadSanitizer).
std::uintptr_t default_space_base() noexcept;
std::uintptr_t space_end_limit() noexcept;
std::uintptr_t space_default_end() noexcept;

bool space_reserved() noexcept;
std::uintptr_t space_base() noexcept;
std::size_t space_slice_size() noexcept;
int space_count() noexcept;

/// The slice of `rank` (0 <= rank < space_count()), its header committed and initialized on
/// first use; nullptr if no space is reserved, the rank is out of range, or the header page
/// cannot be committed.
slice* slice_of(int rank) noexcept;
/// The rank whose slice contains p, or -1 when p lies outside every slice. Two loads.
int rank_of(const void* p) noexcept;

// ---- thread slices ---------------------------------------------------------------------------
// Threads that run no task (plain threads, the runtime's own, a program without mpc_run) get
// their heap in a slice of a second space, reserved on first use wherever the kernel puts it
// (256 regions of 16 GiB; 64 of 1 GiB under ThreadSanitizer). A thread that ends abandons its
// slice and the next thread to start adopts it, heap and live blocks included. Thread slices have
// rank -2 - slot.

/// A slice for the calling thread (an abandoned one first); nullptr when all are taken.
slice* claim_thread_slice() noexcept;
/// The thread ends: its slice (and heap) wait for another thread.
void release_thread_slice(slice* s) noexcept;
/// The thread slot containing p, or -1.
int thread_slot_of(const void* p) noexcept;

namespace detail {
/// fork() support (pthread_atfork handlers of malloc.cpp): takes the lock of every initialized
/// slice but `keep` (the forking thread's own) and the lock that guards slice creation; the
/// other releases them, in the parent and in the child.
void lock_all_for_fork(const slice* keep) noexcept;
void unlock_all_after_fork(const slice* keep) noexcept;

/// Commits and fills a slice header at lo (size bytes, id = rank or -2 - slot); false on failure.
bool init_header(std::uintptr_t lo, std::size_t size, int id) noexcept;

// MPC_SMALL_THREAD_REGIONS: for a build whose allocator runs under valgrind's cachegrind or
// callgrind (valgrind 3.19 refuses a reservation of 64 GiB): 8 regions of 1 GiB;
// `-DCMAKE_CXX_FLAGS=-DMPC_SMALL_THREAD_REGIONS=1`.
#if MPC_SMALL_THREAD_REGIONS
inline constexpr std::size_t thread_region = std::size_t{1} << 30;  // 1 GiB
inline constexpr int thread_regions = 8;
#elif MPC_TSAN
inline constexpr std::size_t thread_region = std::size_t{1} << 30;  // 1 GiB
inline constexpr int thread_regions = 64;
#else
inline constexpr std::size_t thread_region = std::size_t{16} << 30;  // 16 GiB
inline constexpr int thread_regions = 256;
#endif
/// The thread space (0 until reserved) and its slots' states: read by the inline lookups of
/// every free().
extern std::uintptr_t thread_base;
extern std::atomic<std::uint8_t> thread_state[thread_regions];

/// The thread slice holding p (claimed or abandoned), or nullptr. Inline: on every free().
inline slice* thread_slice_holding(const void* p) noexcept {
    std::uintptr_t base = __atomic_load_n(&thread_base, __ATOMIC_RELAXED);
    std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - base;
    if (base == 0 || off >= thread_region * thread_regions) {
        return nullptr;
    }
    std::size_t slot = off / thread_region;
    return thread_state[slot].load(std::memory_order_relaxed) != 0 ? reinterpret_cast<slice*>(base + slot * thread_region)
                                                                     : nullptr;
}
}  // namespace detail

}  // namespace mpc::alloc
