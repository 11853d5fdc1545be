/// \file
/// "external32" (MPI 3.1 section 13.5.2): big-endian two's complement integers and IEEE floats,
/// with the fixed sizes of table 13.2. Most types only change byte order; MPI_LONG and
/// MPI_UNSIGNED_LONG shrink to 4 bytes and MPI_WCHAR to 2 (values that do not fit are reported),
/// and MPI_LONG_DOUBLE becomes IEEE binary128 (converted from the x87 80-bit format where that is
/// the native long double). The typed plan splits the layout into runs of one basic type each.
#include <bit>
#include <cfloat>
#include <cstring>

#include "mpi_compat/datatype/copy.hpp"

namespace mpc::mpi {

const char* const external32_conversion_reason = "conversion: value does not fit its external32 size";

namespace {

constexpr bool little = std::endian::native == std::endian::little;

std::uint64_t load_be(const std::byte* p, int n) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
        v = (v << 8) | std::uint64_t(p[i]);
    }
    return v;
}

void store_be(std::byte* p, int n, std::uint64_t v) noexcept {
    for (int i = n - 1; i >= 0; --i) {
        p[i] = std::byte(v & 0xff);
        v >>= 8;
    }
}

std::uint64_t load_native(const std::byte* p, int n) noexcept {
    std::uint64_t v = 0;
    if constexpr (little) {
        for (int i = n - 1; i >= 0; --i) {
            v = (v << 8) | std::uint64_t(p[i]);
        }
    } else {
        v = load_be(p, n);
    }
    return v;
}

void store_native(std::byte* p, int n, std::uint64_t v) noexcept {
    if constexpr (little) {
        for (int i = 0; i < n; ++i) {
            p[i] = std::byte(v & 0xff);
            v >>= 8;
        }
    } else {
        store_be(p, n, v);
    }
}

// Copies one unit, reversing its bytes on little-endian hosts.
void swap_unit(std::byte* out, const std::byte* in, int n) noexcept {
    for (int i = 0; i < n; ++i) {
        out[i] = little ? in[n - 1 - i] : in[i];
    }
}

constexpr bool x87 = LDBL_MANT_DIG == 64;
constexpr bool quad = LDBL_MANT_DIG == 113;

// Native long double -> big-endian binary128.
void ld_to_ext(std::byte* out, const std::byte* in) noexcept {
    if constexpr (x87) {
        const std::uint64_t mant = load_native(in, 8);
        const std::uint64_t sign_exp = load_native(in + 8, 2);
        const std::uint64_t frac = mant & 0x7fffffffffffffffULL;
        store_be(out, 8, (sign_exp << 48) | (frac >> 15));
        store_be(out + 8, 8, (frac & 0x7fff) << 49);
    } else {
        swap_unit(out, in, 16);
    }
}

// Big-endian binary128 -> native long double (x87: the 49 lowest fraction bits are dropped).
void ld_from_ext(std::byte* out, const std::byte* in) noexcept {
    if constexpr (x87) {
        const std::uint64_t hi = load_be(in, 8);
        const std::uint64_t lo = load_be(in + 8, 8);
        const std::uint64_t sign_exp = hi >> 48;
        const std::uint64_t integer = (sign_exp & 0x7fff) != 0 ? 1ULL << 63 : 0;
        const std::uint64_t mant = integer | ((hi & 0xffffffffffffULL) << 15) | (lo >> 49);
        std::memset(out, 0, sizeof(long double));
        store_native(out, 8, mant);
        store_native(out + 8, 2, sign_exp);
    } else {
        swap_unit(out, in, 16);
    }
}

bool fits(std::uint64_t v, char conv, int from, int to) noexcept {
    if (conv == 'i') {
        const int shift = 64 - 8 * from;
        const auto s = std::int64_t(v << shift) >> shift;  // sign-extended native value
        const std::int64_t lim = std::int64_t(1) << (8 * to - 1);
        return s >= -lim && s < lim;
    }
    return (v >> (8 * to)) == 0;
}

// Converts `items` values of basic type b; returns false if one did not fit.
bool to_ext(const basic_info& b, const std::byte* in, std::byte* out, count_t items) noexcept {
    bool ok = true;
    const int units = b.size / b.swap_unit;
    for (count_t i = 0; i < items; ++i, in += b.size) {
        if (b.conv == 'l') {
            for (int u = 0; u < units; ++u) {
                ld_to_ext(out, in + u * b.swap_unit);
                out += 16;
            }
        } else if (b.size == b.ext_size) {
            for (int u = 0; u < units; ++u) {
                swap_unit(out, in + u * b.swap_unit, b.swap_unit);
                out += b.swap_unit;
            }
        } else {
            const std::uint64_t v = load_native(in, b.size);
            ok &= fits(v, b.conv, b.size, b.ext_size);
            store_be(out, b.ext_size, v);
            out += b.ext_size;
        }
    }
    return ok;
}

void from_ext(const basic_info& b, const std::byte* in, std::byte* out, count_t items) noexcept {
    const int units = b.size / b.swap_unit;
    for (count_t i = 0; i < items; ++i, out += b.size) {
        if (b.conv == 'l') {
            for (int u = 0; u < units; ++u) {
                ld_from_ext(out + u * b.swap_unit, in);
                in += 16;
            }
        } else if (b.size == b.ext_size) {
            for (int u = 0; u < units; ++u) {
                swap_unit(out + u * b.swap_unit, in, b.swap_unit);
                in += b.swap_unit;
            }
        } else {
            std::uint64_t v = load_be(in, b.ext_size);
            const int shift = 64 - 8 * b.ext_size;
            if (b.conv == 'i') {
                v = std::uint64_t(std::int64_t(v << shift) >> shift);
            }
            store_native(out, b.size, v);
            in += b.ext_size;
        }
    }
}

bool supported() noexcept { return x87 || quad; }

bool has_long_double(const plan& p) {
    for (const plan_node& n : p.nodes) {
        if (n.is_leaf() && basic(int(n.kind)).conv == 'l') {
            return true;
        }
    }
    return false;
}

}  // namespace

count_t external32_size(count_t count, const datatype& t) {
    if (!supported() && has_long_double(t.typed_layout())) {
        return -1;
    }
    return count > 0 ? count * t.typed_layout().ext32_size : 0;
}

status pack_external32(const void* src, count_t count, const datatype& t, void* dst, count_t dst_size,
                       count_t* position) {
    const count_t n = external32_size(count, t);
    if (n < 0) {
        return {errc::unsupported, "long double has no external32 conversion on this platform"};
    }
    if (*position < 0 || *position > dst_size || n > dst_size - *position) {
        return {errc::invalid_argument, "pack buffer too small"};
    }
    const auto* in = static_cast<const std::byte*>(src);
    std::byte* out = static_cast<std::byte*>(dst) + *position;
    bool ok = true;
    if (n > 0) {
        cursor c;
        c.reset(t.typed_layout(), count);
        while (!c.done()) {
            const basic_info& b = basic(int(c.kind()));
            const count_t items = c.avail() / b.size;
            ok &= to_ext(b, at_offset(in, c.offset()), out, items);
            out += items * b.ext_size;
            c.advance(c.avail());
        }
    }
    if (!ok) {
        return {errc::invalid_argument, external32_conversion_reason};
    }
    *position += n;
    return {};
}

status unpack_external32(const void* src, count_t src_size, count_t* position, void* dst, count_t count,
                         const datatype& t) {
    const count_t n = external32_size(count, t);
    if (n < 0) {
        return {errc::unsupported, "long double has no external32 conversion on this platform"};
    }
    if (*position < 0 || *position > src_size || n > src_size - *position) {
        return {errc::invalid_argument, "unpack input too short"};
    }
    const std::byte* in = static_cast<const std::byte*>(src) + *position;
    auto* out = static_cast<std::byte*>(dst);
    if (n > 0) {
        cursor c;
        c.reset(t.typed_layout(), count);
        while (!c.done()) {
            const basic_info& b = basic(int(c.kind()));
            const count_t items = c.avail() / b.size;
            from_ext(b, in, at_offset(out, c.offset()), items);
            in += items * b.ext_size;
            c.advance(c.avail());
        }
    }
    *position += n;
    return {};
}

}  // namespace mpc::mpi
