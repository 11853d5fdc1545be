/// \file
/// Internal: accumulation of size and bounds over the copies of the types a constructor places
/// (MPI 3.1 section 4.1.6: explicit lb/ub markers, from MPI_LB/MPI_UB or create_resized, are
/// "sticky" and win over data; without an upper marker, a struct's extent is padded to the largest
/// alignment of its basic types).
#pragma once

#include <algorithm>
#include <limits>

#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi::detail {

class bounds_acc {
public:
    /// Adds the bounds of `n` copies of t, copy k at disp + k * t.extent(), and reps * n * t.size()
    /// bytes of data (reps = 0: bounds only; the vector constructors add the first and the last
    /// block only, since bounds are linear in the block index).
    void add(const datatype& t, aint disp, count_t n, count_t reps = 1) noexcept {
        if (n <= 0 || t.bounds().empty) {
            return;
        }
        const type_bounds& c = t.bounds();
        aint last = 0;
        count_t bytes = 0;
        overflow_ |= __builtin_mul_overflow(n - 1, t.extent(), &last);
        overflow_ |= __builtin_add_overflow(last, disp, &last);
        overflow_ |= __builtin_mul_overflow(n, c.size, &bytes);
        overflow_ |= __builtin_mul_overflow(bytes, reps, &bytes);
        overflow_ |= __builtin_add_overflow(size_, bytes, &size_);
        const aint lo = std::min(disp, last);
        const aint hi = std::max(disp, last);
        empty_ = false;
        align_ = std::max(align_, c.align);
        if (c.sticky_lb) {
            slb_ = std::min(slb_, lo + c.lb);
            has_slb_ = true;
        } else if (c.size > 0) {
            lb_ = std::min(lb_, lo + c.lb);
        }
        if (c.sticky_ub) {
            sub_ = std::max(sub_, hi + c.ub);
            has_sub_ = true;
        } else if (c.size > 0) {
            ub_ = std::max(ub_, hi + c.ub);
        }
        if (c.size > 0) {
            tlb_ = std::min(tlb_, lo + c.true_lb);
            tub_ = std::max(tub_, hi + c.true_ub);
        }
    }

    /// True when a size or displacement did not fit in 64 bits.
    bool overflow() const noexcept { return overflow_; }

    /// The bounds of the new type; `pad` applies the struct alignment rule.
    type_bounds result(bool pad) const noexcept {
        type_bounds b;
        b.size = size_;
        b.empty = empty_;
        b.align = align_;
        b.sticky_lb = has_slb_;
        b.sticky_ub = has_sub_;
        const bool has_lb = has_slb_ || lb_ != max_;
        const bool has_ub = has_sub_ || ub_ != min_;
        aint lb = has_slb_ ? slb_ : lb_;
        aint ub = has_sub_ ? sub_ : ub_;
        if (!has_lb) {
            lb = has_ub ? ub : 0;
        }
        if (!has_ub) {
            ub = lb;
        }
        if (pad && !has_sub_ && size_ > 0 && align_ > 1) {
            const aint rem = (ub - lb) % align_;
            if (rem > 0) {
                ub += align_ - rem;
            }
        }
        b.lb = lb;
        b.ub = ub;
        if (size_ > 0) {
            b.true_lb = tlb_;
            b.true_ub = tub_;
        }
        return b;
    }

private:
    static constexpr aint max_ = std::numeric_limits<aint>::max();
    static constexpr aint min_ = std::numeric_limits<aint>::min();
    aint slb_ = max_, sub_ = min_, lb_ = max_, ub_ = min_, tlb_ = max_, tub_ = min_;
    bool has_slb_ = false, has_sub_ = false, empty_ = true, overflow_ = false;
    count_t size_ = 0;
    int align_ = 1;
};

}  // namespace mpc::mpi::detail
