// Brute-force reference for the datatype engine tests: a type description tree of our own, its
// typemap expanded entry by entry (the MPI definition, no merging, no plans), random trees, and
// byte-by-byte copies driven by the expanded typemaps.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mpi_compat/datatype/datatype.hpp"

namespace dtref {

using mpc::mpi::aint;
using mpc::mpi::datatype;

constexpr int lb_mark = -1;
constexpr int ub_mark = -2;

/// One typemap entry: a basic type (predefined index, pairs split) or a marker.
struct entry {
    aint disp;
    int kind;
    int size;
};

/// A typemap with its bounds.
struct typemap {
    std::vector<entry> entries;
    aint lb = 0;
    aint ub = 0;
    int align = 1;
    bool has_lb = false, has_ub = false;  // explicit markers
    bool has_data = false;
    aint extent() const { return ub - lb; }
};

inline int idx(MPI_Datatype h) { return h & 0xffffff; }

template <class A, class B>
struct pr {
    A a;
    B b;
};

// Components (offset, kind, size) and C size/alignment of the predefined types the tests use.
inline typemap basic_typemap(int index) {
    typemap m;
    auto one = [&](int kind, int size, int align) {
        m.entries.push_back({0, kind, size});
        m.ub = size;
        m.align = align;
        m.has_data = true;
    };
    auto two = [&](int ka, int sa, aint ob, int kb, int sb, int size, int align) {
        m.entries.push_back({0, ka, sa});
        m.entries.push_back({ob, kb, sb});
        m.ub = size;
        m.align = align;
        m.has_data = true;
    };
#define PAIR(A, B, KA, KB)                                                                      \
    two(idx(KA), int(sizeof(A)), aint(offsetof(pr<A MPC_COMMA B>, b)), idx(KB), int(sizeof(B)), \
        int(sizeof(pr<A MPC_COMMA B>)), int(alignof(pr<A MPC_COMMA B>)))
#define MPC_COMMA ,
    if (index == idx(MPI_CHAR) || index == idx(MPI_BYTE)) {
        one(index, 1, 1);
    } else if (index == idx(MPI_SHORT)) {
        one(index, sizeof(short), alignof(short));
    } else if (index == idx(MPI_INT)) {
        one(index, sizeof(int), alignof(int));
    } else if (index == idx(MPI_LONG)) {
        one(index, sizeof(long), alignof(long));
    } else if (index == idx(MPI_FLOAT)) {
        one(index, sizeof(float), alignof(float));
    } else if (index == idx(MPI_DOUBLE)) {
        one(index, sizeof(double), alignof(double));
    } else if (index == idx(MPI_LONG_DOUBLE)) {
        one(index, sizeof(long double), alignof(long double));
    } else if (index == idx(MPI_C_DOUBLE_COMPLEX)) {
        one(index, sizeof(std::complex<double>), alignof(std::complex<double>));
    } else if (index == idx(MPI_FLOAT_INT)) {
        PAIR(float, int, MPI_FLOAT, MPI_INT);
    } else if (index == idx(MPI_DOUBLE_INT)) {
        PAIR(double, int, MPI_DOUBLE, MPI_INT);
    } else if (index == idx(MPI_SHORT_INT)) {
        PAIR(short, int, MPI_SHORT, MPI_INT);
    } else if (index == idx(MPI_LONG_DOUBLE_INT)) {
        PAIR(long double, int, MPI_LONG_DOUBLE, MPI_INT);
    } else if (index == idx(MPI_LB)) {
        m.entries.push_back({0, lb_mark, 0});
        m.has_lb = true;
    } else if (index == idx(MPI_UB)) {
        m.entries.push_back({0, ub_mark, 0});
        m.has_ub = true;
    }
#undef PAIR
#undef MPC_COMMA
    return m;
}

/// A type description: what the engine is asked to build, in our own terms.
struct desc {
    enum kind_t {
        basic,
        contiguous,
        vector,
        hvector,
        indexed,
        hindexed,
        indexed_block,
        hindexed_block,
        struct_,
        resized,
        dup
    } kind = basic;
    int predefined = 0;
    int count = 0;
    int blocklength = 0;
    aint stride = 0;  // vector: elements; hvector: bytes
    std::vector<int> blocklengths;
    std::vector<aint> displs;  // indexed, indexed_block: elements; h*, struct: bytes
    std::vector<std::shared_ptr<desc>> children;
    aint lb = 0, extent = 0;  // resized
};
using desc_ptr = std::shared_ptr<desc>;

// Appends copy `m` of a child at displacement d to the accumulating map.
struct builder {
    typemap out;
    aint min_lb = INT64_MAX, max_ub = INT64_MIN, mark_lb = INT64_MAX, mark_ub = INT64_MIN;
    void place(const typemap& m, aint d) {
        if (m.entries.empty()) {
            return;
        }
        for (const entry& e : m.entries) {
            out.entries.push_back({e.disp + d, e.kind, e.size});
            if (e.kind == lb_mark) {
                mark_lb = std::min(mark_lb, e.disp + d);
            }
            if (e.kind == ub_mark) {
                mark_ub = std::max(mark_ub, e.disp + d);
            }
        }
        out.align = std::max(out.align, m.align);
        if (m.has_data && !m.has_lb) {
            min_lb = std::min(min_lb, m.lb + d);
        }
        if (m.has_data && !m.has_ub) {
            max_ub = std::max(max_ub, m.ub + d);
        }
        out.has_data |= m.has_data;
    }
    typemap finish(bool pad) {
        out.has_lb = mark_lb != INT64_MAX;
        out.has_ub = mark_ub != INT64_MIN;
        out.lb = out.has_lb ? mark_lb : (min_lb != INT64_MAX ? min_lb : 0);
        out.ub = out.has_ub ? mark_ub : (max_ub != INT64_MIN ? max_ub : out.lb);
        if (!out.has_lb && min_lb == INT64_MAX && out.has_ub) {
            out.lb = out.ub;
        }
        if (pad && !out.has_ub && out.has_data && out.align > 1) {
            const aint rem = (out.ub - out.lb) % out.align;
            if (rem > 0) {  // no padding for a negative extent
                out.ub += out.align - rem;
            }
        }
        return out;
    }
};

inline typemap expand(const desc& d) {
    if (d.kind == desc::basic) {
        return basic_typemap(d.predefined);
    }
    if (d.kind == desc::dup) {
        return expand(*d.children[0]);
    }
    builder b;
    if (d.kind == desc::resized) {
        typemap c = expand(*d.children[0]);
        for (const entry& e : c.entries) {
            if (e.kind >= 0) {
                b.out.entries.push_back(e);
            }
        }
        b.out.entries.push_back({d.lb, lb_mark, 0});
        b.out.entries.push_back({d.lb + d.extent, ub_mark, 0});
        b.out.align = c.align;
        b.out.has_data = c.has_data;
        b.mark_lb = d.lb;
        b.mark_ub = d.lb + d.extent;
        return b.finish(false);
    }
    std::vector<typemap> kids;
    for (const auto& c : d.children) {
        kids.push_back(expand(*c));
    }
    const aint ext = kids[0].extent();
    auto blocks = [&](const typemap& m, aint start, int n) {
        for (int k = 0; k < n; ++k) {
            b.place(m, start + k * m.extent());
        }
    };
    switch (d.kind) {
        case desc::contiguous:
            blocks(kids[0], 0, d.count);
            break;
        case desc::vector:
        case desc::hvector:
            for (int i = 0; i < d.count; ++i) {
                blocks(kids[0], i * (d.kind == desc::vector ? d.stride * ext : d.stride), d.blocklength);
            }
            break;
        case desc::indexed:
        case desc::hindexed:
            for (int i = 0; i < d.count; ++i) {
                blocks(kids[0], d.kind == desc::indexed ? d.displs[i] * ext : d.displs[i], d.blocklengths[i]);
            }
            break;
        case desc::indexed_block:
        case desc::hindexed_block:
            for (int i = 0; i < d.count; ++i) {
                blocks(kids[0], d.kind == desc::indexed_block ? d.displs[i] * ext : d.displs[i], d.blocklength);
            }
            break;
        case desc::struct_:
            for (int i = 0; i < d.count; ++i) {
                blocks(kids[i], d.displs[i], d.blocklengths[i]);
            }
            break;
        default:
            break;
    }
    return b.finish(d.kind == desc::struct_);
}

/// Builds the engine's type for d (one reference owned by the caller), or nullptr.
inline datatype* build(const desc& d) {
    using namespace mpc::mpi;
    std::vector<datatype*> kids;
    for (const auto& c : d.children) {
        kids.push_back(build(*c));
    }
    const datatype* k0 = kids.empty() ? nullptr : kids[0];
    std::vector<int> di(d.displs.begin(), d.displs.end());
    datatype* out = nullptr;
    auto take = [&](mpc::result<datatype*>&& r) { out = r ? *r : nullptr; };
    switch (d.kind) {
        case desc::basic:
            return const_cast<datatype*>(predefined(d.predefined));
        case desc::contiguous:
            take(type_contiguous(d.count, k0));
            break;
        case desc::vector:
            take(type_vector(d.count, d.blocklength, int(d.stride), k0));
            break;
        case desc::hvector:
            take(type_hvector(d.count, d.blocklength, d.stride, k0));
            break;
        case desc::indexed:
            take(type_indexed(d.count, d.blocklengths.data(), di.data(), k0));
            break;
        case desc::hindexed:
            take(type_hindexed(d.count, d.blocklengths.data(), d.displs.data(), k0));
            break;
        case desc::indexed_block:
            take(type_indexed_block(d.count, d.blocklength, di.data(), k0));
            break;
        case desc::hindexed_block:
            take(type_hindexed_block(d.count, d.blocklength, d.displs.data(), k0));
            break;
        case desc::struct_: {
            std::vector<const datatype*> ts(kids.begin(), kids.end());
            take(type_struct(d.count, d.blocklengths.data(), d.displs.data(), ts.data()));
            break;
        }
        case desc::resized:
            take(type_resized(k0, d.lb, d.extent));
            break;
        case desc::dup:
            take(type_dup(k0));
            break;
    }
    for (datatype* k : kids) {
        datatype::release(k);
    }
    return out;
}

/// Random type trees of bounded depth and size.
class generator {
public:
    explicit generator(unsigned seed) : rng_(seed) {}
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    std::mt19937& rng() { return rng_; }

    /// Leaves exclude long double (whose padding bytes external32 does not keep) when asked.
    bool allow_long_double = true;

    desc_ptr leaf(bool markers) {
        static const MPI_Datatype basics[] = {MPI_CHAR,      MPI_SHORT,           MPI_INT,       MPI_DOUBLE,
                                              MPI_FLOAT_INT, MPI_DOUBLE_INT,      MPI_SHORT_INT, MPI_C_DOUBLE_COMPLEX,
                                              MPI_BYTE,      MPI_LONG_DOUBLE_INT, MPI_LB,        MPI_UB};
        auto d = std::make_shared<desc>();
        const int last = allow_long_double ? 9 : 8;
        const int pick = markers && uniform(0, 1) == 0 ? uniform(10, 11) : uniform(0, last);
        d->predefined = idx(basics[pick]);
        return d;
    }

    /// 0 .. hi, 0 only one time in eight (empty blocks are legal but make dull types).
    int small(int hi) { return uniform(0, 7) == 0 ? 0 : uniform(1, hi); }

    desc_ptr tree(int depth) {
        if (depth == 0 || uniform(0, 4) == 0) {
            return leaf(false);
        }
        auto d = std::make_shared<desc>();
        d->kind = desc::kind_t(uniform(1, 10));
        const int n = small(3);
        d->count = d->kind == desc::contiguous ? small(4) : n;
        d->blocklength = small(3);
        d->stride = d->kind == desc::vector ? uniform(-4, 4) : uniform(-64, 64);
        for (int i = 0; i < n; ++i) {
            d->blocklengths.push_back(small(3));
            d->displs.push_back(d->kind == desc::indexed || d->kind == desc::indexed_block ? uniform(-6, 6)
                                                                                           : uniform(-80, 80));
        }
        if (d->kind == desc::struct_) {
            for (int i = 0; i < n; ++i) {
                d->children.push_back(uniform(0, 5) == 0 ? leaf(true) : tree(depth - 1));
            }
            if (n == 0) {
                d->children.push_back(leaf(false));  // unused, keeps children[0] valid
            }
        } else {
            d->children.push_back(tree(depth - 1));
        }
        d->lb = uniform(-32, 32);
        d->extent = uniform(0, 96);
        return d;
    }

private:
    std::mt19937 rng_;
};

/// The byte offsets, in packed-stream order, of `count` elements of m.
inline std::vector<aint> stream_offsets(const typemap& m, long count) {
    std::vector<aint> offs;
    for (long i = 0; i < count; ++i) {
        for (const entry& e : m.entries) {
            for (int b = 0; b < e.size; ++b) {
                offs.push_back(i * m.extent() + e.disp + b);
            }
        }
    }
    return offs;
}

/// A buffer that covers a set of offsets with guard bytes on both sides; `base` is offset 0.
struct span_buffer {
    std::vector<unsigned char> bytes;
    aint origin = 0;  // index of offset 0 in bytes
    static constexpr aint guard = 64;

    explicit span_buffer(const std::vector<aint>& offs, unsigned char fill) {
        aint lo = 0, hi = 0;
        for (aint o : offs) {
            lo = std::min(lo, o);
            hi = std::max(hi, o + 1);
        }
        origin = guard - lo;
        bytes.assign(std::size_t(hi - lo + 2 * guard), fill);
    }
    unsigned char* base() { return bytes.data() + origin; }
    unsigned char& at(aint off) { return bytes[std::size_t(origin + off)]; }
};

}  // namespace dtref
