/// \file
/// The compiled copy plan of a datatype: a small program of strided byte runs and loops.
///
/// A *sequence* is a contiguous range of nodes executed in order. A node is either
/// - a **leaf**: `count` runs of `size` bytes, run k at `disp + k * stride`, or
/// - a **loop**: `count` passes over the body sequence [body_first, body_end), pass k with its
///   base at `disp + k * stride`.
/// Displacements are relative to the base of the enclosing pass; the root sequence describes one
/// element at offset 0, and element i of a buffer sits at i * extent. Bodies are shared (the
/// 10^6 blocks of an indexed type of structs all point at the struct's one sequence), so a plan is
/// never larger than the type's own description, and a count of 10^9 elements costs nothing: the
/// cursor iterates the element plan with the extent.
///
/// The compiler merges what it can: adjacent runs become one run; a loop over one run becomes a
/// strided leaf, and one whose stride equals its run length becomes one run; a loop over a single
/// node that continues that node's stride is folded into it; a loop of count 1 over a single node
/// is that node; consecutive nodes of the same shape (run length, or loop body) at a regular
/// distance become one strided node. So a vector whose stride equals its block length is one run,
/// and the regularly placed blocks of an indexed type of structs are one loop over the struct.
///
/// A *typed* plan keeps runs of different basic types apart (leaf.kind is the predefined index
/// of its basic type); it serves external32 conversion and MPI_Get_elements.
#pragma once

#include <cstdint>
#include <vector>

#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi {

struct plan_node {
    aint disp = 0;                 ///< offset of repetition 0 from the enclosing pass's base
    aint stride = 0;               ///< distance between repetitions
    count_t count = 0;             ///< repetitions (>= 1)
    count_t size = 0;              ///< leaf: bytes of one run; loop: packed bytes of one pass over the body
    std::uint32_t body_first = 0;  ///< loop: first node of the body
    std::uint32_t body_end = 0;    ///< loop: one past the last node of the body; leaf: == body_first
    std::uint32_t kind = 0;        ///< typed leaf: predefined index of its basic type; else 0

    bool is_leaf() const noexcept { return body_first == body_end; }
    /// Packed bytes of the whole node (all repetitions).
    count_t bytes() const noexcept { return count * size; }
};

/// One contiguous byte run of a flattened layout.
struct byte_run {
    aint offset;
    count_t length;
    bool operator==(const byte_run&) const = default;
};

/// A compiled datatype layout (immutable, shared by every user of the type).
class plan {
public:
    std::vector<plan_node> nodes;  ///< every sequence of the plan
    std::uint32_t root_first = 0;  ///< the root sequence: one element
    std::uint32_t root_end = 0;
    count_t size = 0;  ///< packed bytes of one element (the type's size)
    aint extent = 0;   ///< the type's extent
    int depth = 1;     ///< deepest loop nesting, the root included (the cursor's stack)
    bool typed = false;
    /// One element is one run (at `dense_offset`, `size` bytes long).
    bool dense = false;
    aint dense_offset = 0;
    /// Any count of consecutive elements is one run: dense and extent == size.
    bool contiguous = false;
    count_t basic_count = 0;  ///< typed plans: basic elements in one element
    count_t ext32_size = 0;   ///< typed plans: external32 bytes of one element (-1: unsupported)

    /// Number of runs of one element after merging (walks the plan; for tests and diagnostics),
    /// or -1 once more than `limit` runs were seen.
    count_t run_count(count_t limit) const;
};

/// Compiles the layout of one element of t. May throw std::bad_alloc.
std::unique_ptr<plan> compile_plan(const datatype& t, bool typed);

/// The merged byte runs of `count` elements of a type with plan p, at most max_runs of them
/// (for tests and diagnostics).
std::vector<byte_run> flatten(const plan& p, count_t count, std::size_t max_runs = SIZE_MAX);

}  // namespace mpc::mpi
