/// \file
/// MPI datatypes: the `datatype` object (MPI semantics of size, bounds, extent, envelope and
/// contents), the predefined types and the derived-type constructors of MPI 3.1.
///
/// Design
/// ------
/// A datatype keeps exactly what MPI_Type_get_contents must return (the combiner, its integer,
/// address and datatype arguments) and its bounds, computed at construction (MPI lets a program
/// ask for the extent of an uncommitted type). Subarray and darray types also keep an equivalent
/// type built from the simpler constructors (`impl`), whose typemap they share.
///
/// Copying data never walks that tree: commit() compiles it into a `plan` (plan.hpp), a small
/// program of strided byte runs and loops with adjacent runs merged, which the copy engine
/// (copy.hpp) walks. Types are reference counted: a derived type holds a reference on each type
/// it was built from, and a communication in flight should hold one on its type (retain/release),
/// so that MPI_Type_free of a type in use is harmless. Predefined types are static and are never
/// freed. Nothing here yields or blocks except commit(), which may take a short lock.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "lib/spinlock.hpp"
#include "lib/status.hpp"

namespace mpc::mpi {

using aint = std::int64_t;     ///< an address-sized signed integer (MPI_Aint, MPI_Count)
using count_t = std::int64_t;  ///< byte and element counts

static_assert(sizeof(MPI_Aint) == sizeof(aint), "MPI_Aint must be 64-bit");

class plan;

/// How a type was made (MPI_COMBINER_*; the values are those of include/mpc/mpi_datatypes.h).
enum class combiner : int {
    named = 1,
    dup = 2,
    contiguous = 3,
    vector = 4,
    hvector = 6,
    indexed = 7,
    hindexed = 9,
    indexed_block = 10,
    hindexed_block = 11,
    struct_ = 13,
    subarray = 14,
    darray = 15,
    f90_real = 16,
    f90_complex = 17,
    f90_integer = 18,
    resized = 19,
};

/// Array storage orders (values of MPI_ORDER_C / MPI_ORDER_FORTRAN).
inline constexpr int order_c = 56;
inline constexpr int order_fortran = 57;
/// Darray distributions (values of MPI_DISTRIBUTE_*).
inline constexpr int distribute_block = 121;
inline constexpr int distribute_cyclic = 122;
inline constexpr int distribute_none = 123;
inline constexpr int distribute_dflt_darg = -49767;

/// Bounds and size of a type, computed by the constructors (MPI 3.1 section 4.1.6 and 4.1.7).
struct type_bounds {
    count_t size = 0;        ///< bytes of data in one element
    aint lb = 0;             ///< lower bound (explicit marker or lowest data byte)
    aint ub = 0;             ///< upper bound (explicit marker or end of data plus alignment padding)
    aint true_lb = 0;        ///< lowest data byte, markers ignored
    aint true_ub = 0;        ///< one past the highest data byte, markers ignored
    bool sticky_lb = false;  ///< lb comes from an MPI_LB marker or create_resized
    bool sticky_ub = false;  ///< ub comes from an MPI_UB marker or create_resized
    bool empty = true;       ///< the typemap has no entry at all (no data, no marker)
    int align = 1;           ///< largest alignment of the basic types it holds
};

/// An MPI datatype. Immutable after construction except for its name and its compiled plans.
class datatype {
public:
    /// What a constructor hands to create(): the envelope and contents plus the bounds.
    struct definition {
        combiner kind = combiner::named;
        type_bounds bounds;
        std::vector<int> ints;
        std::vector<aint> aints;
        std::vector<const datatype*> types;  ///< retained by the new type
        const datatype* impl = nullptr;      ///< equivalent layout (subarray, darray); retained
    };

    /// A new derived type with one reference, owned by the caller. May throw std::bad_alloc.
    static datatype* create(definition&& def);

    /// A type that MPI_Type_create_f90_real/_complex/_integer return: it stands for predefined
    /// type `base` (same layout, predefined_index() and name; committed; never freed, as MPI
    /// 3.1 section 17.2.5 wants) but reports combiner `kind` with `ints` ({p, r} or {r}) as its
    /// envelope and contents. The caller keeps it for the life of the process. May throw
    /// std::bad_alloc.
    static const datatype* create_f90(combiner kind, std::vector<int> ints, const datatype& base);

    datatype(const datatype&) = delete;
    datatype& operator=(const datatype&) = delete;

    // ---- MPI properties (valid from construction) ----
    count_t size() const noexcept { return b_.size; }
    aint lb() const noexcept { return b_.lb; }
    aint ub() const noexcept { return b_.ub; }
    aint extent() const noexcept { return b_.ub - b_.lb; }
    aint true_lb() const noexcept { return b_.true_lb; }
    aint true_ub() const noexcept { return b_.true_ub; }
    aint true_extent() const noexcept { return b_.true_ub - b_.true_lb; }
    const type_bounds& bounds() const noexcept { return b_; }
    combiner kind() const noexcept { return kind_; }
    /// A predefined type or an f90 type standing for one (create_f90): static, committed, never
    /// freed.
    bool is_predefined() const noexcept { return predefined_index_ != 0; }
    /// The index of a predefined type in mpi.h (MPI_INT is 8; for an f90 type, that of the type
    /// it stands for), or 0 for a derived type.
    int predefined_index() const noexcept { return predefined_index_; }
    bool is_committed() const noexcept { return committed_.load(std::memory_order_acquire); }

    // ---- envelope and contents (MPI_Type_get_envelope / MPI_Type_get_contents) ----
    std::span<const int> ints() const noexcept { return ints_; }
    std::span<const aint> aints() const noexcept { return aints_; }
    std::span<const datatype* const> types() const noexcept { return types_; }
    /// The equivalent type of a subarray or darray, else nullptr.
    const datatype* impl() const noexcept { return impl_; }

    // ---- name; thread-safe ----
    // MPI_Type_set_name / get_name use it for derived types; a predefined or f90 type keeps its
    // MPI name here, and the names ranks give it are kept per rank (type_attr.hpp).
    /// Sets the name, truncated to MPI_MAX_OBJECT_NAME - 1 characters.
    void set_name(const char* name) const noexcept;
    /// Copies the name (possibly empty) into buf, which holds MPI_MAX_OBJECT_NAME chars; returns its length.
    int get_name(char* buf) const noexcept;

    // ---- reference counting (no-ops on predefined types) ----
    void retain() const noexcept;
    /// Drops a reference; the type (and its references on its parts) goes away with the last one.
    static void release(const datatype* t) noexcept;

    // ---- compiled layout ----
    /// Compiles the copy plans now and marks the type committed (MPI_Type_commit).
    [[nodiscard]] status commit() const noexcept;
    /// The byte-run plan of one element, compiled on first use (thread-safe). May throw bad_alloc.
    const plan& layout() const;
    /// The plan whose runs are split by basic type (for external32 and MPI_Get_elements).
    const plan& typed_layout() const;
    /// True when `count` consecutive elements are one contiguous block of count * size() bytes
    /// starting at true_lb() (compiles the layout on first use, then one load).
    [[gnu::always_inline]] bool is_contiguous() const {
        std::int8_t c = contig_.load(std::memory_order_relaxed);  // a pure function of the type
        return c >= 0 ? c != 0 : compute_contiguous();
    }

private:
    friend struct predefined_table;
    datatype() = default;
    ~datatype();
    const plan& compile(std::atomic<const plan*>& slot, bool typed) const;
    [[gnu::cold, gnu::noinline]] bool compute_contiguous() const;

    type_bounds b_;
    combiner kind_ = combiner::named;
    int predefined_index_ = 0;
    std::vector<int> ints_;
    std::vector<aint> aints_;
    std::vector<const datatype*> types_;
    const datatype* impl_ = nullptr;

    mutable std::atomic<int> refs_{1};
    mutable std::atomic<bool> committed_{false};
    mutable std::atomic<const plan*> plan_{nullptr};
    mutable std::atomic<const plan*> typed_plan_{nullptr};
    mutable std::atomic<std::int8_t> contig_{-1};  ///< is_contiguous(): -1 not known yet
    mutable std::mutex compile_lock_;
    mutable spinlock name_lock_;
    mutable char name_[MPI_MAX_OBJECT_NAME] = {};
};

/// RAII reference to a datatype (retains on copy, releases on destruction).
class datatype_ref {
public:
    datatype_ref() noexcept = default;
    /// Adopts one reference already owned by the caller.
    explicit datatype_ref(const datatype* t) noexcept : t_(t) {}
    datatype_ref(const datatype_ref& o) noexcept : t_(o.t_) {
        if (t_) {
            t_->retain();
        }
    }
    datatype_ref(datatype_ref&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
    datatype_ref& operator=(datatype_ref o) noexcept {
        std::swap(t_, o.t_);
        return *this;
    }
    ~datatype_ref() { datatype::release(t_); }
    const datatype* get() const noexcept { return t_; }
    const datatype* operator->() const noexcept { return t_; }
    const datatype& operator*() const noexcept { return *t_; }
    explicit operator bool() const noexcept { return t_ != nullptr; }
    /// Gives up ownership without releasing.
    const datatype* detach() noexcept { return std::exchange(t_, nullptr); }

private:
    const datatype* t_ = nullptr;
};

// ---- predefined types (predefined.cpp) ----------------------------------------------------------

namespace detail {
/// The predefined types' array (predefined.cpp), published once built; never freed.
extern std::atomic<const datatype*> predefined_base;
/// Builds the array on first use (thread-safe) and returns it.
const datatype* init_predefined() noexcept;
/// Per predefined handle index, for the blocking point-to-point fast paths (p2p.hpp): the
/// type when it is one contiguous block starting at its address (true_lb 0, size > 0, no
/// pair types with holes, not MPI_LB/MPI_UB), nullptr otherwise or before the predefined
/// types are built. Hidden: libmpc reads it directly, without a GOT load.
[[gnu::visibility("hidden")]] extern std::atomic<const datatype*> fast_p2p_type[MPC_DATATYPE_PREDEFINED_COUNT];
}  // namespace detail

/// The type behind a handle when it is a predefined type in one contiguous block
/// (detail::fast_p2p_type), else nullptr, for any other handle, valid or not: the blocking fast
/// paths' type check (p2p.hpp, coll/api.cpp).
[[gnu::always_inline]] inline const datatype* fast_block_type(MPI_Datatype t) noexcept {
    const auto u = static_cast<unsigned>(t);
    const unsigned index = u & 0xffffffU;
    if ((u >> 24) != MPC_HANDLE_KIND_DATATYPE || index >= MPC_DATATYPE_PREDEFINED_COUNT) {
        return nullptr;
    }
    return detail::fast_p2p_type[index].load(std::memory_order_acquire);
}

/// The predefined type with handle index `index` (1 .. MPC_DATATYPE_PREDEFINED_COUNT-1), or
/// nullptr for 0 (MPI_DATATYPE_NULL) and out-of-range indices. Never freed. Inline: every
/// communication call resolves its datatype.
[[gnu::always_inline]] inline const datatype* predefined(int index) noexcept {
    if (index <= 0 || index >= MPC_DATATYPE_PREDEFINED_COUNT) {
        return nullptr;
    }
    const datatype* base = detail::predefined_base.load(std::memory_order_acquire);
    return (base != nullptr ? base : detail::init_predefined()) + index;
}

/// Facts about a basic (non-pair) predefined type, used by the copy engine.
struct basic_info {
    const char* name;  ///< "MPI_INT"
    int size;          ///< native bytes
    int ext_size;      ///< bytes in external32 (0: no external32 form, e.g. MPI_LB)
    int swap_unit;     ///< byte-swap unit (complex: the size of one part)
    char conv;         ///< 'i' signed int, 'u' unsigned/bytes, 'f' float, 'l' long double, 0 marker
    int typeclass;     ///< 1 real, 2 integer, 3 complex, 0 other
};
/// Facts about basic type `index`; index must be a predefined index.
const basic_info& basic(int index) noexcept;

/// Whether (buf, count, t) is a bad null buffer: null while data would be read or written at
/// the null address itself. MPI_BOTTOM (also null) with a type of absolute addresses (true
/// lower bound not 0, MPI_Get_address) is valid, as are empty data and count 0.
inline bool null_data(const void* buf, count_t count, const datatype& t) noexcept {
    return buf == nullptr && count > 0 && t.size() > 0 && t.true_lb() == 0;
}

// ---- constructors (constructors.cpp, subarray.cpp) ------------------------------------------------
// Each returns a new type with one reference (release it with datatype::release), or
// errc::invalid_argument (bad count, length, order, ... ; a null old type) or errc::no_memory.
// Counts and displacements follow MPI 3.1 chapter 4, negative strides and displacements included.

result<datatype*> type_contiguous(int count, const datatype* old);
result<datatype*> type_vector(int count, int blocklength, int stride, const datatype* old);
result<datatype*> type_hvector(int count, int blocklength, aint stride, const datatype* old);
result<datatype*> type_indexed(int count, const int* blocklengths, const int* displs, const datatype* old);
result<datatype*> type_hindexed(int count, const int* blocklengths, const aint* displs, const datatype* old);
result<datatype*> type_indexed_block(int count, int blocklength, const int* displs, const datatype* old);
result<datatype*> type_hindexed_block(int count, int blocklength, const aint* displs, const datatype* old);
result<datatype*> type_struct(int count, const int* blocklengths, const aint* displs, const datatype* const* types);
result<datatype*> type_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                                const datatype* old);
result<datatype*> type_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs, const int* dargs,
                              const int* psizes, int order, const datatype* old);
result<datatype*> type_resized(const datatype* old, aint lb, aint extent);
result<datatype*> type_dup(const datatype* old);

}  // namespace mpc::mpi
