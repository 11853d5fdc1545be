/// \file
/// The allocator's entry points below the interposed malloc family (malloc.cpp), and what the
/// scheduler tells it.
#pragma once

#include <cstddef>

namespace mpc::alloc {

class heap;

/// The heap of the task now running on the calling kernel thread (nullptr: none, the thread's
/// own heap serves it). Called by the scheduler at every switch; two thread-local stores.
void set_task_heap(heap* h) noexcept;
heap* task_heap() noexcept;
/// False when MPC_ALLOCATOR=system or in a sanitizer build: everything goes to glibc.
bool interposing() noexcept;

void* allocate(std::size_t n) noexcept;
void* allocate_aligned(std::size_t n, std::size_t align) noexcept;
/// calloc(n, size) with total = n * size (checked by the caller).
void* allocate_zeroed(std::size_t total, std::size_t n, std::size_t size) noexcept;
void release(void* p) noexcept;
void* reallocate(void* p, std::size_t n) noexcept;
std::size_t usable_size(void* p) noexcept;
/// malloc_trim(pad): the caller's heap returns its free pages to the kernel now; 1 if any.
int trim(std::size_t pad) noexcept;

}  // namespace mpc::alloc
