/// \file
/// Layout-to-layout copy, pack, unpack, segments and element counts (copy.hpp).
#include "mpi_compat/datatype/copy.hpp"

#include <algorithm>
#include <cstring>

namespace mpc::mpi {
namespace {

// memcpy of n bytes with small sizes inlined (runs of derived types are often tiny): sizes from
// 4 to 16 are two overlapping fixed-size copies.
inline void copy_bytes(std::byte* dst, const std::byte* src, count_t n) noexcept {
    if (n >= 8 && n <= 16) {
        std::uint64_t a, b;
        std::memcpy(&a, src, 8);
        std::memcpy(&b, src + n - 8, 8);
        std::memcpy(dst, &a, 8);
        std::memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        std::uint32_t a, b;
        std::memcpy(&a, src, 4);
        std::memcpy(&b, src + n - 4, 4);
        std::memcpy(dst, &a, 4);
        std::memcpy(dst + n - 4, &b, 4);
    } else {
        std::memcpy(dst, src, std::size_t(n));
    }
}

// Copies k runs of `size` bytes: run j from src + j * sstride to dst + j * dstride. The common
// sizes get a loop of fixed-size copies.
template <count_t Size>
inline void strided_fixed(std::byte* dst, aint dstride, const std::byte* src, aint sstride, count_t k) noexcept {
    for (count_t j = 0; j < k; ++j) {
        std::memcpy(dst, src, Size);
        dst = at_offset(dst, dstride);
        src = at_offset(src, sstride);
    }
}

void strided_copy(std::byte* dst, aint dstride, const std::byte* src, aint sstride, count_t size, count_t k) noexcept {
    switch (size) {
        case 4:
            return strided_fixed<4>(dst, dstride, src, sstride, k);
        case 8:
            return strided_fixed<8>(dst, dstride, src, sstride, k);
        case 16:
            return strided_fixed<16>(dst, dstride, src, sstride, k);
        default:
            for (count_t j = 0; j < k; ++j) {
                copy_bytes(dst, src, size);
                dst = at_offset(dst, dstride);
                src = at_offset(src, sstride);
            }
    }
}

// If `runs` is at the start of several whole runs and `flat` offers room for at least two of
// them contiguously, copies as many runs as fit in one loop and returns the bytes moved; else 0.
// to_flat: from the runs into the flat side, else the other way.
count_t bulk(cursor& runs, std::byte* rbase, cursor& flat, std::byte* fbase, count_t left, bool to_flat) noexcept {
    const count_t avail_runs = runs.runs_left();
    if (avail_runs < 2) {
        return 0;
    }
    const count_t size = runs.run_size();
    const count_t k = std::min({avail_runs, flat.avail() / size, left / size});
    if (k < 2) {
        return 0;
    }
    std::byte* r = at_offset(rbase, runs.offset());
    std::byte* f = at_offset(fbase, flat.offset());
    if (to_flat) {
        strided_copy(f, size, r, runs.run_stride(), size, k);
    } else {
        strided_copy(r, runs.run_stride(), f, size, size, k);
    }
    runs.skip_runs(k);
    flat.advance(k * size);
    return k * size;
}

// If both cursors are at the start of several runs of the same size, copies as many as both
// have in one loop and returns the bytes moved; else 0.
count_t bulk_both(cursor& s, const std::byte* sbase, cursor& d, std::byte* dbase, count_t left) noexcept {
    const count_t size = s.run_size();
    const count_t k = std::min({s.runs_left(), d.runs_left(), left / size});
    if (k < 2 || d.run_size() != size) {
        return 0;
    }
    strided_copy(at_offset(dbase, d.offset()), d.run_stride(), at_offset(sbase, s.offset()), s.run_stride(), size, k);
    s.skip_runs(k);
    d.skip_runs(k);
    return k * size;
}

// Moves n bytes between two cursors' layouts.
count_t walk_both(cursor& s, const std::byte* sbase, cursor& d, std::byte* dbase, count_t n) noexcept {
    auto* sb = const_cast<std::byte*>(sbase);  // only read: bulk() copies into the flat side here
    count_t left = n;
    while (left > 0) {
        count_t m = bulk_both(s, sbase, d, dbase, left);
        if (m == 0) {
            m = bulk(s, sb, d, dbase, left, true);
        }
        if (m == 0) {
            m = bulk(d, dbase, s, sb, left, false);
        }
        if (m == 0) {
            m = std::min({s.avail(), d.avail(), left});
            copy_bytes(at_offset(dbase, d.offset()), at_offset(sbase, s.offset()), m);
            s.advance(m);
            d.advance(m);
        }
        left -= m;
    }
    return n;
}

// Packs n bytes of the cursor's layout into contiguous out.
void gather(cursor& c, const std::byte* base, std::byte* out, count_t n) noexcept {
    while (n > 0) {
        const count_t k = std::min(c.runs_left(), n / std::max<count_t>(c.avail(), 1));
        if (k >= 2) {
            const count_t size = c.run_size();
            strided_copy(out, size, at_offset(base, c.offset()), c.run_stride(), size, k);
            c.skip_runs(k);
            out += k * size;
            n -= k * size;
            continue;
        }
        const count_t m = std::min(c.avail(), n);
        copy_bytes(out, at_offset(base, c.offset()), m);
        c.advance(m);
        out += m;
        n -= m;
    }
}

// Unpacks n contiguous bytes into the cursor's layout.
void scatter(cursor& c, std::byte* base, const std::byte* in, count_t n) noexcept {
    while (n > 0) {
        const count_t k = std::min(c.runs_left(), n / std::max<count_t>(c.avail(), 1));
        if (k >= 2) {
            const count_t size = c.run_size();
            strided_copy(at_offset(base, c.offset()), c.run_stride(), in, size, size, k);
            c.skip_runs(k);
            in += k * size;
            n -= k * size;
            continue;
        }
        const count_t m = std::min(c.avail(), n);
        copy_bytes(at_offset(base, c.offset()), in, m);
        c.advance(m);
        in += m;
        n -= m;
    }
}

count_t stream_bytes(count_t count, const datatype& t) noexcept { return count > 0 ? count * t.size() : 0; }

}  // namespace

count_t packed_size(count_t count, const datatype& t) noexcept { return stream_bytes(count, t); }

count_t copy(const void* src, count_t scount, const datatype& stype, void* dst, count_t rcount, const datatype& rtype,
             count_t max_bytes) {
    const count_t n = std::min({stream_bytes(scount, stype), stream_bytes(rcount, rtype), max_bytes});
    if (n <= 0) {
        return 0;
    }
    const plan& sp = stype.layout();
    const plan& rp = rtype.layout();
    const auto* s = static_cast<const std::byte*>(src);
    auto* d = static_cast<std::byte*>(dst);
    if (sp.contiguous && rp.contiguous) {
        std::memcpy(at_offset(d, rp.dense_offset), at_offset(s, sp.dense_offset), std::size_t(n));
        return n;
    }
    cursor sc;
    cursor rc;
    sc.reset(sp, scount);
    rc.reset(rp, rcount);
    return walk_both(sc, s, rc, d, n);
}

status pack(const void* src, count_t count, const datatype& t, void* dst, count_t dst_size, count_t* position) {
    const count_t n = stream_bytes(count, t);
    if (*position < 0 || *position > dst_size || n > dst_size - *position) {
        return {errc::invalid_argument, "pack buffer too small"};
    }
    if (n > 0) {
        cursor c;
        c.reset(t.layout(), count);
        gather(c, static_cast<const std::byte*>(src), static_cast<std::byte*>(dst) + *position, n);
    }
    *position += n;
    return {};
}

status unpack(const void* src, count_t src_size, count_t* position, void* dst, count_t count, const datatype& t) {
    const count_t n = stream_bytes(count, t);
    if (*position < 0 || *position > src_size || n > src_size - *position) {
        return {errc::invalid_argument, "unpack input too short"};
    }
    if (n > 0) {
        cursor c;
        c.reset(t.layout(), count);
        scatter(c, static_cast<std::byte*>(dst), static_cast<const std::byte*>(src) + *position, n);
    }
    *position += n;
    return {};
}

// ---- segments ---------------------------------------------------------------------------------

void segment::reset(const void* buf, count_t count, const datatype& t) {
    buf_ = static_cast<std::byte*>(const_cast<void*>(buf));
    cur_.reset(t.layout(), count);
}

count_t segment::pack(void* dst, count_t max) noexcept {
    const count_t n = std::min(max, size() - position());
    gather(cur_, buf_, static_cast<std::byte*>(dst), n);
    return n;
}

count_t segment::unpack(const void* src, count_t len) noexcept {
    const count_t n = std::min(len, size() - position());
    scatter(cur_, buf_, static_cast<const std::byte*>(src), n);
    return n;
}

count_t copy(segment& from, segment& to, count_t max) noexcept {
    const count_t n = std::min({max, from.size() - from.position(), to.size() - to.position()});
    if (n <= 0) {
        return 0;
    }
    return walk_both(from.cur_, from.buf_, to.cur_, to.buf_, n);
}

// ---- element counts ---------------------------------------------------------------------------

count_t get_count(const datatype& t, count_t bytes) noexcept {
    if (t.size() == 0) {
        return 0;
    }
    return bytes % t.size() == 0 ? bytes / t.size() : -1;
}

count_t get_elements(const datatype& t, count_t bytes) {
    if (t.size() == 0 || bytes <= 0) {
        return 0;
    }
    const plan& p = t.typed_layout();
    count_t n = bytes / t.size() * p.basic_count;
    count_t r = bytes % t.size();
    cursor c;
    c.reset(p, 1);
    while (r > 0) {
        const count_t m = std::min(c.avail(), r);
        const count_t unit = basic(int(c.kind())).size;
        if (m % unit != 0) {
            return -1;
        }
        n += m / unit;
        r -= m;
        c.advance(m);
    }
    return n;
}

}  // namespace mpc::mpi
