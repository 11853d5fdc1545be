/// \file
/// Derived datatype constructors of MPI 3.1 section 4.1.2 (contiguous, vector, hvector, indexed,
/// hindexed, indexed_block, hindexed_block, struct), create_resized and dup. Each validates its
/// arguments, computes the bounds (bounds.hpp) and records the envelope and contents.
#include <new>

#include "mpi_compat/datatype/bounds.hpp"
#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi {
namespace {

using detail::bounds_acc;

const status bad_count{errc::invalid_argument, "negative count"};
const status bad_blocklength{errc::invalid_argument, "negative block length"};
const status bad_type{errc::invalid_argument, "null datatype"};
const status bad_array{errc::invalid_argument, "null array with a positive count"};
const status too_big{errc::invalid_argument, "datatype size or displacement overflows 64 bits"};

result<datatype*> make(datatype::definition& d, const bounds_acc& acc, bool pad = false) {
    if (acc.overflow()) {
        return too_big;
    }
    d.bounds = acc.result(pad);
    try {
        return datatype::create(std::move(d));
    } catch (const std::bad_alloc&) {
        return status{errc::no_memory, "allocating a datatype"};
    }
}

status check_common(int count, const datatype* old) {
    if (count < 0) {
        return bad_count;
    }
    if (old == nullptr) {
        return bad_type;
    }
    return {};
}

status check_lengths(int count, const int* blocklengths) {
    if (count > 0 && blocklengths == nullptr) {
        return bad_array;
    }
    for (int i = 0; i < count; ++i) {
        if (blocklengths[i] < 0) {
            return bad_blocklength;
        }
    }
    return {};
}

// Scales an element displacement to bytes, flagging overflow.
aint scaled(aint n, aint extent, bool& overflow) {
    aint r = 0;
    overflow |= __builtin_mul_overflow(n, extent, &r);
    return r;
}

// count blocks of bl copies of old, block i at i * stride bytes.
result<datatype*> make_vector(datatype::definition& d, int count, int bl, aint stride, const datatype* old) {
    bounds_acc acc;
    if (count > 0) {
        acc.add(*old, 0, bl, count);
        bool ovf = false;
        acc.add(*old, scaled(count - 1, stride, ovf), bl, 0);
        if (ovf) {
            return too_big;
        }
    }
    d.types = {old};
    return make(d, acc);
}

}  // namespace

result<datatype*> type_contiguous(int count, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    bounds_acc acc;
    acc.add(*old, 0, count);
    datatype::definition d;
    d.kind = combiner::contiguous;
    d.ints = {count};
    d.types = {old};
    return make(d, acc);
}

result<datatype*> type_vector(int count, int blocklength, int stride, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    if (blocklength < 0) {
        return bad_blocklength;
    }
    bool ovf = false;
    const aint bytes = scaled(stride, old->extent(), ovf);
    if (ovf) {
        return too_big;
    }
    datatype::definition d;
    d.kind = combiner::vector;
    d.ints = {count, blocklength, stride};
    return make_vector(d, count, blocklength, bytes, old);
}

result<datatype*> type_hvector(int count, int blocklength, aint stride, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    if (blocklength < 0) {
        return bad_blocklength;
    }
    datatype::definition d;
    d.kind = combiner::hvector;
    d.ints = {count, blocklength};
    d.aints = {stride};
    return make_vector(d, count, blocklength, stride, old);
}

result<datatype*> type_indexed(int count, const int* blocklengths, const int* displs, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    if (status st = check_lengths(count, blocklengths); !st) {
        return st;
    }
    if (count > 0 && displs == nullptr) {
        return bad_array;
    }
    bounds_acc acc;
    bool ovf = false;
    datatype::definition d;
    d.kind = combiner::indexed;
    d.ints.reserve(2 * std::size_t(count) + 1);
    d.ints.push_back(count);
    d.ints.insert(d.ints.end(), blocklengths, blocklengths + count);
    d.ints.insert(d.ints.end(), displs, displs + count);
    for (int i = 0; i < count; ++i) {
        acc.add(*old, scaled(displs[i], old->extent(), ovf), blocklengths[i]);
    }
    if (ovf) {
        return too_big;
    }
    d.types = {old};
    return make(d, acc);
}

result<datatype*> type_hindexed(int count, const int* blocklengths, const aint* displs, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    if (status st = check_lengths(count, blocklengths); !st) {
        return st;
    }
    if (count > 0 && displs == nullptr) {
        return bad_array;
    }
    bounds_acc acc;
    datatype::definition d;
    d.kind = combiner::hindexed;
    d.ints.reserve(std::size_t(count) + 1);
    d.ints.push_back(count);
    d.ints.insert(d.ints.end(), blocklengths, blocklengths + count);
    d.aints.assign(displs, displs + count);
    for (int i = 0; i < count; ++i) {
        acc.add(*old, displs[i], blocklengths[i]);
    }
    d.types = {old};
    return make(d, acc);
}

result<datatype*> type_indexed_block(int count, int blocklength, const int* displs, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    if (blocklength < 0) {
        return bad_blocklength;
    }
    if (count > 0 && displs == nullptr) {
        return bad_array;
    }
    bounds_acc acc;
    bool ovf = false;
    datatype::definition d;
    d.kind = combiner::indexed_block;
    d.ints.reserve(std::size_t(count) + 2);
    d.ints.push_back(count);
    d.ints.push_back(blocklength);
    d.ints.insert(d.ints.end(), displs, displs + count);
    for (int i = 0; i < count; ++i) {
        acc.add(*old, scaled(displs[i], old->extent(), ovf), blocklength);
    }
    if (ovf) {
        return too_big;
    }
    d.types = {old};
    return make(d, acc);
}

result<datatype*> type_hindexed_block(int count, int blocklength, const aint* displs, const datatype* old) {
    if (status st = check_common(count, old); !st) {
        return st;
    }
    if (blocklength < 0) {
        return bad_blocklength;
    }
    if (count > 0 && displs == nullptr) {
        return bad_array;
    }
    bounds_acc acc;
    datatype::definition d;
    d.kind = combiner::hindexed_block;
    d.ints = {count, blocklength};
    d.aints.assign(displs, displs + count);
    for (int i = 0; i < count; ++i) {
        acc.add(*old, displs[i], blocklength);
    }
    d.types = {old};
    return make(d, acc);
}

result<datatype*> type_struct(int count, const int* blocklengths, const aint* displs, const datatype* const* types) {
    if (count < 0) {
        return bad_count;
    }
    if (status st = check_lengths(count, blocklengths); !st) {
        return st;
    }
    if (count > 0 && (displs == nullptr || types == nullptr)) {
        return bad_array;
    }
    for (int i = 0; i < count; ++i) {
        if (types[i] == nullptr) {
            return bad_type;
        }
    }
    bounds_acc acc;
    datatype::definition d;
    d.kind = combiner::struct_;
    d.ints.reserve(std::size_t(count) + 1);
    d.ints.push_back(count);
    d.ints.insert(d.ints.end(), blocklengths, blocklengths + count);
    d.aints.assign(displs, displs + count);
    d.types.assign(types, types + count);
    for (int i = 0; i < count; ++i) {
        acc.add(*types[i], displs[i], blocklengths[i]);
    }
    return make(d, acc, true);
}

result<datatype*> type_resized(const datatype* old, aint lb, aint extent) {
    if (old == nullptr) {
        return bad_type;
    }
    aint ub = 0;
    if (__builtin_add_overflow(lb, extent, &ub)) {
        return too_big;
    }
    datatype::definition d;
    d.kind = combiner::resized;
    d.bounds = old->bounds();
    d.bounds.lb = lb;
    d.bounds.ub = ub;
    d.bounds.sticky_lb = true;
    d.bounds.sticky_ub = true;
    d.bounds.empty = false;
    d.aints = {lb, extent};
    d.types = {old};
    try {
        return datatype::create(std::move(d));
    } catch (const std::bad_alloc&) {
        return status{errc::no_memory, "allocating a datatype"};
    }
}

result<datatype*> type_dup(const datatype* old) {
    if (old == nullptr) {
        return bad_type;
    }
    datatype::definition d;
    d.kind = combiner::dup;
    d.bounds = old->bounds();
    d.types = {old};
    datatype* t = nullptr;
    try {
        t = datatype::create(std::move(d));
    } catch (const std::bad_alloc&) {
        return status{errc::no_memory, "allocating a datatype"};
    }
    if (old->is_committed()) {
        if (status st = t->commit(); !st) {
            datatype::release(t);
            return st;
        }
    }
    return t;
}

}  // namespace mpc::mpi
