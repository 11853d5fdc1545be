/// \file
/// ULT stacks. The scheduler asks a stack_allocator for every stack; the default one maps each
/// stack with a PROT_NONE guard page below it. The allocator layer replaces it with one that
/// carves stacks out of the task's address slice.
///
/// Guard pages cost two kernel VMAs per stack, and Linux caps a process at vm.max_map_count
/// VMAs (65530 by default). The default allocator therefore keeps guard pages while a budget
/// derived from that cap allows, and past it carves guard-less stacks out of shared chunks,
/// each with a canary word at its low end that the scheduler checks whenever the ULT is switched
/// out: an overflow is then reported at the next switch instead of at the faulting access.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lib/status.hpp"

namespace mpc::sched {

/// One stack: [lo, lo+size) is usable; the guard (if any) is [guard_lo, lo).
struct stack_region {
    void* lo = nullptr;
    std::size_t size = 0;
    void* guard_lo = nullptr;  ///< null when the stack has no guard page
    std::size_t guard_size = 0;
    std::uint64_t* canary = nullptr;  ///< non-null for guard-less stacks
    int owner = -1;                   ///< task the stack was made for, -1 if none
};

inline constexpr std::uint64_t stack_canary_value = 0x6d70635f5354414bULL;  // "mpc_STAK"

/// Where ULT stacks come from. Implementations must be thread-safe.
class stack_allocator {
public:
    virtual ~stack_allocator() = default;
    /// A stack of at least `size` usable bytes for task `owner` (-1: no task). Does not block.
    virtual result<stack_region> allocate(std::size_t size, int owner) noexcept = 0;
    virtual void release(const stack_region& s) noexcept = 0;
    virtual const char* name() const noexcept = 0;
};

/// The mmap + guard page allocator described above.
stack_allocator& default_stack_allocator() noexcept;

/// Stacks of tasks (spawn attr owner >= 0) in their address slices, each with a guard page; the
/// default allocator for the others (allocator/slice.hpp must have reserved the slices).
stack_allocator& slice_stack_allocator() noexcept;

/// Installs the allocator used for stacks created from now on (nullptr restores the default).
/// Stacks are always released to the allocator that made them.
void set_stack_allocator(stack_allocator* a) noexcept;
stack_allocator& current_stack_allocator() noexcept;

/// Counters of the default allocator (for tests and the demo).
struct stack_stats {
    std::size_t guarded_live = 0;
    std::size_t unguarded_live = 0;
    std::size_t guard_budget = 0;
};
stack_stats default_stack_stats() noexcept;

/// Overrides the guard budget (number of guarded stacks alive at once); for tests.
void set_guard_budget(std::size_t n) noexcept;

std::size_t page_size() noexcept;

}  // namespace mpc::sched
