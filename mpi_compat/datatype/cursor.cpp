/// \file
/// The plan cursor (cursor.hpp) and plan flattening for tests and diagnostics.
#include "mpi_compat/datatype/cursor.hpp"

#include <algorithm>
#include <utility>

namespace mpc::mpi {
namespace {

// The root sequence of p repeated `count` times as one leaf, if its runs continue from one
// element to the next: a single leaf of one run, or of runs whose stride the extent continues.
bool fold_root(const plan& p, count_t count, plan_node* out) noexcept {
    if (p.root_end - p.root_first != 1) {
        return false;
    }
    const plan_node& n = p.nodes[p.root_first];
    if (!n.is_leaf()) {
        return false;
    }
    *out = n;
    if (p.contiguous) {
        out->size = n.size * count;
        out->count = 1;
        out->stride = 0;
        return true;
    }
    if (n.count == 1) {
        out->count = count;
        out->stride = p.extent;
        return true;
    }
    if (p.extent == n.count * n.stride) {
        out->count = n.count * count;
        return true;
    }
    return false;
}

}  // namespace

cursor& cursor::operator=(cursor&& o) noexcept {
    if (this == &o) {
        return *this;
    }
    folded_ = o.folded_;
    nodes_ = o.nodes_ == &o.folded_ ? &folded_ : o.nodes_;
    root_first_ = o.root_first_;
    root_end_ = o.root_end_;
    root_count_ = o.root_count_;
    root_stride_ = o.root_stride_;
    root_size_ = o.root_size_;
    top_ = o.top_;
    leaf_ = o.leaf_ == &o.folded_ ? &folded_ : o.leaf_;
    run_ = o.run_;
    run_base_ = o.run_base_;
    off_ = o.off_;
    avail_ = o.avail_;
    pos_ = o.pos_;
    total_ = o.total_;
    heap_ = std::move(o.heap_);
    heap_cap_ = std::exchange(o.heap_cap_, 0);
    if (o.frames_ == o.inline_) {
        frames_ = inline_;
        std::copy(o.inline_, o.inline_ + inline_depth, inline_);
    } else {
        frames_ = heap_.get();
    }
    o.frames_ = o.inline_;
    o.total_ = o.pos_ = o.avail_ = 0;
    return *this;
}

void cursor::reset(const plan& p, count_t count) {
    if (p.depth > inline_depth && heap_cap_ < p.depth) {
        heap_ = std::make_unique<frame[]>(std::size_t(p.depth));
        heap_cap_ = p.depth;
    }
    frames_ = p.depth > inline_depth ? heap_.get() : inline_;
    total_ = count > 0 ? count * p.size : 0;
    pos_ = 0;
    avail_ = 0;
    leaf_ = nullptr;
    if (total_ == 0) {
        return;
    }
    if (fold_root(p, count, &folded_)) {
        nodes_ = &folded_;
        root_first_ = 0;
        root_end_ = 1;
        root_count_ = 1;
        root_stride_ = 0;
        root_size_ = total_;
    } else {
        nodes_ = p.nodes.data();
        root_first_ = p.root_first;
        root_end_ = p.root_end;
        root_count_ = count;
        root_stride_ = p.extent;
        root_size_ = p.size;
    }
    start_root(0);
    enter();
}

// Frame 0: pass `iter` over the root sequence, at its first node.
void cursor::start_root(count_t iter) noexcept {
    top_ = 0;
    frames_[0] = frame{root_first_, root_end_, root_first_, iter, root_count_, iter * root_stride_, root_stride_};
}

// Descends from the current node of the top frame to its first leaf.
void cursor::enter() noexcept {
    for (;;) {
        const frame& f = frames_[top_];
        const plan_node& n = nodes_[f.cur];
        if (n.is_leaf()) {
            leaf_ = &n;
            run_ = 0;
            run_base_ = f.ibase + n.disp;
            off_ = run_base_;
            avail_ = n.size;
            return;
        }
        const aint base = f.ibase + n.disp;
        frames_[++top_] = frame{n.body_first, n.body_end, n.body_first, 0, n.count, base, n.stride};
    }
}

// The current run is finished: next run of the leaf, next node, next pass, or up a level.
void cursor::next_run() noexcept {
    if (++run_ < leaf_->count) {
        run_base_ += leaf_->stride;
        off_ = run_base_;
        avail_ = leaf_->size;
        return;
    }
    for (;;) {
        frame& f = frames_[top_];
        if (++f.cur < f.end) {
            enter();
            return;
        }
        if (++f.iter < f.count) {
            f.ibase += f.stride;
            f.cur = f.first;
            enter();
            return;
        }
        if (top_ == 0) {
            avail_ = 0;
            return;
        }
        --top_;
    }
}

void cursor::skip_runs(count_t k) noexcept {
    pos_ += k * leaf_->size;
    if (run_ + k < leaf_->count) {
        run_ += k;
        run_base_ += k * leaf_->stride;
        off_ = run_base_;
        return;
    }
    run_ = leaf_->count - 1;
    avail_ = 0;
    if (pos_ < total_) {
        next_run();
    }
}

void cursor::seek(count_t pos) noexcept {
    if (pos >= total_) {
        pos_ = total_;
        avail_ = 0;
        return;
    }
    const count_t elem = pos / root_size_;
    count_t r = pos % root_size_;
    start_root(elem);
    for (;;) {
        frame& f = frames_[top_];
        std::uint32_t i = f.first;
        while (r >= nodes_[i].bytes()) {
            r -= nodes_[i].bytes();
            ++i;
        }
        f.cur = i;
        const plan_node& n = nodes_[i];
        const count_t k = r / n.size;
        r %= n.size;
        const aint base = f.ibase + n.disp + k * n.stride;
        if (n.is_leaf()) {
            leaf_ = &n;
            run_ = k;
            run_base_ = base;
            off_ = base + r;
            avail_ = n.size - r;
            break;
        }
        frames_[++top_] = frame{n.body_first, n.body_end, n.body_first, k, n.count, base, n.stride};
    }
    pos_ = pos;
}

std::vector<byte_run> flatten(const plan& p, count_t count, std::size_t max_runs) {
    std::vector<byte_run> runs;
    cursor c;
    c.reset(p, count);
    while (!c.done()) {
        if (!runs.empty() && runs.back().offset + runs.back().length == c.offset()) {
            runs.back().length += c.avail();
        } else {
            if (runs.size() == max_runs) {
                break;
            }
            runs.push_back({c.offset(), c.avail()});
        }
        c.advance(c.avail());
    }
    return runs;
}

count_t plan::run_count(count_t limit) const {
    const auto runs = flatten(*this, 1, std::size_t(limit) + 1);
    return count_t(runs.size()) > limit ? -1 : count_t(runs.size());
}

}  // namespace mpc::mpi
