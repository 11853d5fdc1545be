/// \file
/// Moving typed data: layout-to-layout copy (the in-process single copy, DESIGN.md decision 5),
/// MPI_Pack / MPI_Unpack, segments for pipelined transfers, MPI_Get_elements / MPI_Get_count.
///
/// Every function works on the *packed byte stream* of (buffer, count, type): the type's data
/// bytes in typemap order, element after element. Copies stop at a byte limit, so a truncated
/// receive writes exactly that many bytes of the receive layout and nothing past it.
///
/// The types should be committed (MPI requires it for communication): the plans are compiled on
/// first use otherwise, which allocates and may throw std::bad_alloc. Cursors of plans nested more
/// than 8 loops deep allocate their stack once. Nothing here yields or blocks.
#pragma once

#include <cstdint>
#include <limits>

#include "mpi_compat/datatype/cursor.hpp"
#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi {

inline constexpr count_t no_limit = std::numeric_limits<count_t>::max();

/// Bytes of `count` elements of t packed (MPI_Pack_size; exact, not just a bound).
count_t packed_size(count_t count, const datatype& t) noexcept;

/// Copies the first min(scount * ssize, rcount * rsize, max_bytes) bytes of the packed stream of
/// (src, scount, stype) into the layout of (dst, rcount, rtype), walking both layouts at once with
/// no temporary buffer. Returns the number of bytes copied. The caller reports truncation when
/// scount * stype.size() > rcount * rtype.size().
count_t copy(const void* src, count_t scount, const datatype& stype, void* dst, count_t rcount, const datatype& rtype,
             count_t max_bytes = no_limit);

/// MPI_Pack: appends count elements of t at src to dst[*position, dst_size) and advances
/// *position. Writes nothing and returns errc::invalid_argument when they do not fit.
[[nodiscard]] status pack(const void* src, count_t count, const datatype& t, void* dst, count_t dst_size,
                          count_t* position);

/// MPI_Unpack: reads count elements of t from src[*position, src_size) into dst and advances
/// *position. Writes nothing and returns errc::invalid_argument when src holds too few bytes.
[[nodiscard]] status unpack(const void* src, count_t src_size, count_t* position, void* dst, count_t count,
                            const datatype& t);

/// A position in the packed stream of (buf, count, type), for transfers done in pieces (pipelined
/// rendezvous, network fragments). The type's plan must outlive the segment: hold a reference on
/// the type for as long. A segment used to unpack must have been given a writable buffer.
class segment {
public:
    segment() noexcept = default;
    segment(const void* buf, count_t count, const datatype& t) { reset(buf, count, t); }

    void reset(const void* buf, count_t count, const datatype& t);
    count_t size() const noexcept { return cur_.total(); }         ///< packed bytes in all
    count_t position() const noexcept { return cur_.position(); }  ///< packed bytes done
    bool done() const noexcept { return cur_.done(); }
    /// Moves to packed offset pos (e.g. the offset of a fragment that arrived out of order).
    void seek(count_t pos) noexcept { cur_.seek(pos); }

    /// Packs the next min(max, left) bytes into dst; returns how many.
    count_t pack(void* dst, count_t max) noexcept;
    /// Unpacks the next min(len, left) bytes from src into the buffer; returns how many.
    count_t unpack(const void* src, count_t len) noexcept;
    /// Copies the next min(max, from's left, to's left) bytes from one layout to the other.
    friend count_t copy(segment& from, segment& to, count_t max) noexcept;

private:
    std::byte* buf_ = nullptr;
    cursor cur_;
};

/// MPI_Get_elements: basic elements (a pair type counts two) in the first `bytes` bytes of a
/// stream of t, or -1 (MPI_UNDEFINED) when `bytes` ends inside a basic element.
count_t get_elements(const datatype& t, count_t bytes);

/// MPI_Get_count: whole elements of t in `bytes`, or -1 when `bytes` is not a multiple of the size
/// (0 for a type of size 0).
count_t get_count(const datatype& t, count_t bytes) noexcept;

// ---- external32 (external32.cpp) -----------------------------------------------------------------

/// MPI_Pack_external_size for "external32": bytes of count elements of t, or -1 when t holds a
/// type with no external32 form on this platform.
count_t external32_size(count_t count, const datatype& t);

/// MPI_Pack_external("external32"): big-endian, fixed sizes of MPI 3.1 table 13.2. Writes nothing
/// and returns errc::invalid_argument if the output does not fit; returns errc::invalid_argument
/// with reason "conversion" (after packing) if a value does not fit its external size (a long
/// beyond 32 bits, a wide char beyond 16 bits), errc::unsupported for a type it cannot convert.
[[nodiscard]] status pack_external32(const void* src, count_t count, const datatype& t, void* dst, count_t dst_size,
                                     count_t* position);

/// MPI_Unpack_external("external32").
[[nodiscard]] status unpack_external32(const void* src, count_t src_size, count_t* position, void* dst, count_t count,
                                       const datatype& t);

/// The reason string pack_external32 uses for a value out of range.
extern const char* const external32_conversion_reason;

}  // namespace mpc::mpi
