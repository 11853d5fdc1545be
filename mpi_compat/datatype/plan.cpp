/// \file
/// The plan compiler: datatype description -> sequences of strided runs and loops (plan.hpp).
#include "mpi_compat/datatype/plan.hpp"

#include <algorithm>
#include <unordered_map>

#include "mpi_compat/datatype/predefined.hpp"

namespace mpc::mpi {
namespace {

/// A compiled sequence: its node range in the pool and its totals.
struct seq_info {
    std::uint32_t first = 0;
    std::uint32_t end = 0;
    count_t size = 0;    ///< packed bytes
    int depth = 0;       ///< loop nesting below this sequence
    count_t nbasic = 0;  ///< typed: basic elements
    count_t ext32 = 0;   ///< typed: external32 bytes
    std::uint32_t length() const noexcept { return end - first; }
};

class compiler {
public:
    explicit compiler(bool typed) : typed_(typed) {}
    seq_info compile(const datatype& t);
    std::vector<plan_node> pool;

private:
    struct builder {
        std::vector<plan_node> nodes;
        seq_info info;
    };
    seq_info compile_uncached(const datatype& t);
    void add_named(builder& b, const datatype& t) const;
    void add_leaf(builder& b, aint disp, count_t len, std::uint32_t kind) const;
    void add_loop(builder& b, aint disp, count_t count, aint stride, const seq_info& body) const;
    void add_vector(builder& b, count_t count, count_t bl, aint stride, const datatype& old);
    static void append(builder& b, plan_node n);
    seq_info finish(builder& b);

    bool typed_;
    std::unordered_map<const datatype*, seq_info> memo_;
};

// A leaf whose runs touch end to end is one run.
plan_node normalized(plan_node n) {
    if (n.count > 1 && n.stride == n.size) {
        n.size *= n.count;
        n.count = 1;
    }
    if (n.count == 1) {
        n.stride = 0;
    }
    return n;
}

// Appends n to the sequence, merging it into the previous node when it continues it: a run
// right after a run grows it; a node of the same shape (run length, or loop body) at the next
// stride turns the previous node into (or extends) a strided repetition.
void compiler::append(builder& b, plan_node n) {
    if (!b.nodes.empty() && n.count == 1) {
        plan_node& p = b.nodes.back();
        if (p.is_leaf() && n.is_leaf() && p.kind == n.kind && p.count == 1 && p.disp + p.size == n.disp) {
            p.size += n.size;
            return;
        }
        const bool same =
            p.size == n.size && p.kind == n.kind && p.body_first == n.body_first && p.body_end == n.body_end;
        if (same && p.count == 1) {
            p.stride = n.disp - p.disp;
            p.count = 2;
            return;
        }
        if (same && n.disp == p.disp + p.count * p.stride) {
            ++p.count;
            return;
        }
    }
    b.nodes.push_back(n);
}

void compiler::add_leaf(builder& b, aint disp, count_t len, std::uint32_t kind) const {
    if (len <= 0) {
        return;
    }
    plan_node n;
    n.disp = disp;
    n.count = 1;
    n.size = len;
    n.kind = typed_ ? kind : 0;
    b.info.size += len;
    if (typed_) {
        const basic_info& bi = basic(int(kind));
        b.info.nbasic += len / bi.size;
        b.info.ext32 += len / bi.size * bi.ext_size;
    }
    append(b, n);
}

// Adds `count` passes over `body`, pass k at disp + k * stride, folding what can be folded.
void compiler::add_loop(builder& b, aint disp, count_t count, aint stride, const seq_info& body) const {
    if (count <= 0 || body.size == 0) {
        return;
    }
    b.info.size += count * body.size;
    b.info.nbasic += count * body.nbasic;
    b.info.ext32 += count * body.ext32;
    if (body.length() == 1) {
        plan_node n = pool[body.first];
        n.disp += disp;
        b.info.depth = std::max(b.info.depth, body.depth);
        if (count == 1) {
            append(b, n);
            return;
        }
        if (n.count == 1 || stride == n.count * n.stride) {
            n.stride = n.count == 1 ? stride : n.stride;
            n.count *= count;
            if (n.is_leaf()) {
                n = normalized(n);
            }
            append(b, n);
            return;
        }
    }
    plan_node loop;
    loop.disp = disp;
    loop.stride = stride;
    loop.count = count;
    loop.size = body.size;
    loop.body_first = body.first;
    loop.body_end = body.end;
    b.info.depth = std::max(b.info.depth, body.depth + 1);
    append(b, loop);
}

seq_info compiler::finish(builder& b) {
    b.info.first = std::uint32_t(pool.size());
    pool.insert(pool.end(), b.nodes.begin(), b.nodes.end());
    b.info.end = std::uint32_t(pool.size());
    return b.info;
}

void compiler::add_named(builder& b, const datatype& t) const {
    const predefined_entry& e = predefined_entry_of(t.predefined_index());
    for (int i = 0; i < e.ncomp; ++i) {
        const int kind = e.comp[i].kind;
        add_leaf(b, e.comp[i].offset, basic(kind).size, std::uint32_t(kind));
    }
}

// `count` blocks of `bl` elements of old, block i at i * stride bytes.
void compiler::add_vector(builder& b, count_t count, count_t bl, aint stride, const datatype& old) {
    const seq_info body = compile(old);
    if (count == 1) {
        add_loop(b, 0, bl, old.extent(), body);
        return;
    }
    builder block;
    add_loop(block, 0, bl, old.extent(), body);
    const seq_info inner = finish(block);
    add_loop(b, 0, count, stride, inner);
}

seq_info compiler::compile(const datatype& t) {
    auto it = memo_.find(&t);
    if (it != memo_.end()) {
        return it->second;
    }
    const seq_info info = compile_uncached(t);
    memo_.emplace(&t, info);
    return info;
}

seq_info compiler::compile_uncached(const datatype& t) {
    builder b;
    const auto ints = t.ints();
    const auto aints = t.aints();
    const auto types = t.types();
    switch (t.kind()) {
        case combiner::named:
        case combiner::f90_real:
        case combiner::f90_complex:
        case combiner::f90_integer:
            add_named(b, t);
            break;
        case combiner::dup:
        case combiner::resized:
            return compile(*types[0]);
        case combiner::subarray:
        case combiner::darray:
            return compile(*t.impl());
        case combiner::contiguous:
            add_loop(b, 0, ints[0], types[0]->extent(), compile(*types[0]));
            break;
        case combiner::vector:
            add_vector(b, ints[0], ints[1], aint(ints[2]) * types[0]->extent(), *types[0]);
            break;
        case combiner::hvector:
            add_vector(b, ints[0], ints[1], aints[0], *types[0]);
            break;
        case combiner::indexed: {
            const seq_info body = compile(*types[0]);
            const int n = ints[0];
            for (int i = 0; i < n; ++i) {
                add_loop(b, aint(ints[1 + n + i]) * types[0]->extent(), ints[1 + i], types[0]->extent(), body);
            }
            break;
        }
        case combiner::hindexed: {
            const seq_info body = compile(*types[0]);
            for (int i = 0; i < ints[0]; ++i) {
                add_loop(b, aints[i], ints[1 + i], types[0]->extent(), body);
            }
            break;
        }
        case combiner::indexed_block: {
            const seq_info body = compile(*types[0]);
            for (int i = 0; i < ints[0]; ++i) {
                add_loop(b, aint(ints[2 + i]) * types[0]->extent(), ints[1], types[0]->extent(), body);
            }
            break;
        }
        case combiner::hindexed_block: {
            const seq_info body = compile(*types[0]);
            for (int i = 0; i < ints[0]; ++i) {
                add_loop(b, aints[i], ints[1], types[0]->extent(), body);
            }
            break;
        }
        case combiner::struct_:
            for (int i = 0; i < ints[0]; ++i) {
                add_loop(b, aints[i], ints[1 + i], types[i]->extent(), compile(*types[i]));
            }
            break;
    }
    return finish(b);
}

}  // namespace

std::unique_ptr<plan> compile_plan(const datatype& t, bool typed) {
    compiler c(typed);
    const seq_info root = c.compile(t);
    auto p = std::make_unique<plan>();
    p->nodes = std::move(c.pool);
    p->root_first = root.first;
    p->root_end = root.end;
    p->size = root.size;
    p->extent = t.extent();
    p->depth = root.depth + 1;
    p->typed = typed;
    if (root.length() == 1 && p->nodes[root.first].is_leaf() && p->nodes[root.first].count == 1) {
        p->dense = true;
        p->dense_offset = p->nodes[root.first].disp;
    }
    p->contiguous = p->dense && p->extent == p->size;
    p->basic_count = typed ? root.nbasic : 0;
    p->ext32_size = typed ? root.ext32 : 0;
    return p;
}

}  // namespace mpc::mpi
