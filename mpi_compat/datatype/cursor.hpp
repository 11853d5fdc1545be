/// \file
/// A position in the packed byte stream of `count` elements laid out by a plan: the current
/// contiguous piece of memory (offset from the buffer, bytes left in it) and how to move on.
/// Walking two cursors at once copies layout to layout with no temporary buffer (copy.hpp).
///
/// The cursor holds a stack of loop frames, as deep as the plan's nesting; up to 8 levels live
/// inside the object, deeper plans allocate once in reset(). When one element is a single
/// strided leaf that the next element continues (MPI_DOUBLE_INT, a vector resized to its
/// stride, ...) or the whole stream is one run, the elements are folded into one leaf, so that
/// consecutive runs of all elements can be copied in one tight loop (runs_left / skip_runs).
/// Never yields or blocks.
#pragma once

#include <cstdint>
#include <memory>

#include "mpi_compat/datatype/plan.hpp"

namespace mpc::mpi {

/// base + off computed on integers: base may be MPI_BOTTOM (null) with absolute offsets.
template <class B>
inline B* at_offset(B* base, aint off) noexcept {
    return reinterpret_cast<B*>(reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(off));
}

class cursor {
public:
    cursor() noexcept = default;
    cursor(const cursor&) = delete;
    cursor& operator=(const cursor&) = delete;
    cursor(cursor&& o) noexcept { *this = std::move(o); }
    cursor& operator=(cursor&& o) noexcept;

    /// Starts at packed offset 0 of `count` elements of a type whose plan is p (p must outlive
    /// the cursor). May throw std::bad_alloc for plans nested deeper than 8 loops.
    void reset(const plan& p, count_t count);

    count_t total() const noexcept { return total_; }   ///< packed bytes of all elements
    count_t position() const noexcept { return pos_; }  ///< packed bytes already passed
    bool done() const noexcept { return pos_ >= total_; }
    aint offset() const noexcept { return off_; }      ///< buffer offset of the current piece
    count_t avail() const noexcept { return avail_; }  ///< bytes left in the current piece
    /// Basic type (predefined index) of the current piece, for typed plans.
    std::uint32_t kind() const noexcept { return leaf_ ? leaf_->kind : 0; }

    /// Moves n bytes forward, 0 < n <= avail().
    void advance(count_t n) noexcept {
        pos_ += n;
        off_ += n;
        avail_ -= n;
        if (avail_ == 0 && pos_ < total_) {
            next_run();
        }
    }
    /// Moves to packed offset pos (clamped to total()). O(depth x sequence length).
    void seek(count_t pos) noexcept;

    // ---- bulk access to the runs of the current leaf ----
    /// Whole runs left in the current leaf, the current one included, if the position is at the
    /// start of a run; 0 inside a run or at the end.
    count_t runs_left() const noexcept { return avail_ > 0 && avail_ == leaf_->size ? leaf_->count - run_ : 0; }
    count_t run_size() const noexcept { return leaf_->size; }   ///< bytes of each run of the leaf
    aint run_stride() const noexcept { return leaf_->stride; }  ///< distance between its runs
    /// Moves past k whole runs, 0 < k <= runs_left().
    void skip_runs(count_t k) noexcept;

private:
    struct frame {
        std::uint32_t first, end, cur;
        count_t iter, count;
        aint ibase;  ///< base offset of the current pass
        aint stride;
    };
    static constexpr int inline_depth = 8;

    void enter() noexcept;
    void next_run() noexcept;
    void start_root(count_t iter) noexcept;

    const plan_node* nodes_ = nullptr;
    std::uint32_t root_first_ = 0, root_end_ = 0;
    count_t root_count_ = 0;  ///< passes over the root sequence (elements, or 1 when folded)
    aint root_stride_ = 0;
    count_t root_size_ = 0;  ///< packed bytes of one pass
    plan_node folded_;       ///< the whole stream as one leaf, when foldable
    frame* frames_ = inline_;
    int top_ = 0;
    const plan_node* leaf_ = nullptr;
    count_t run_ = 0;
    aint run_base_ = 0;
    aint off_ = 0;
    count_t avail_ = 0;
    count_t pos_ = 0;
    count_t total_ = 0;
    frame inline_[inline_depth];
    std::unique_ptr<frame[]> heap_;
    int heap_cap_ = 0;
};

}  // namespace mpc::mpi
