/// \file
/// Internals of the shared-memory transport shared by shm.cpp and shm_io.cpp: the segment and
/// ring layout, the per-peer state.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "lib/spinlock.hpp"
#include "lib/status.hpp"
#include "network/shm.hpp"

namespace mpc::net {

namespace shm_detail {

constexpr std::size_t line = 64;
/// A message's first line: the envelope, the flag word, then 8 bytes (payload, or its length).
constexpr std::size_t flag_off = sizeof(envelope);
constexpr std::size_t data_off = flag_off + 8;
static_assert(data_off == 56);
/// The flag word: the message type in the top byte, the line's absolute position + 1 below.
constexpr int type_shift = 56;
constexpr std::uint64_t pos_mask = (std::uint64_t{1} << type_shift) - 1;
enum msg_type : std::uint64_t {
    t_eager = 1,  ///< payload at data_off (its length is the envelope's size)
    t_eager_len = 2,  ///< payload length (u64) at data_off, payload from the next line
    t_rts = 3,    ///< rendezvous request: buffer address at data_off, completion record at line + 0,
                  ///< then a u32: 1 when the sender helps copy (shared copy), else 0
    t_fin = 4,    ///< rendezvous done: completion record at data_off, status in envelope::size
    t_pad = 5,    ///< skip to the ring's end
    t_cts = 6,    ///< shared copy: the receiver opened its descriptor (data_off: index | generation << 32)
};

/// A shared copy of a large rendezvous message (shm.hpp, "Shared copies"), in the receiver's
/// segment: one area of `xfers_per_peer` per sending peer, taken by fetch() for one copy at a
/// time (as many as fetches run at once from that peer, not as many as messages in flight).
/// The receiver bumps the generation in `next`, fills the rest and sends a t_cts naming the
/// descriptor and the generation; both then claim chunks with a compare-and-swap that fails
/// once the generation changed, so a t_cts handled late (the copy ended, the descriptor maybe
/// reused) copies nothing; `done` counts copied chunks. The fields the sender reads are
/// atomics: a late sender may read them while the receiver rewrites them (a seqlock: it
/// reads them, then claims; a claim that succeeds saw the generation they belong to).
struct alignas(64) xfer {
    std::atomic<std::uint64_t> next{0};    ///< generation << 32 | next unclaimed chunk
    std::atomic<std::uint32_t> done{0};    ///< chunks copied (or failed)
    std::atomic<std::uint32_t> failed{0};  ///< a copy failed (the receiver reports it)
    std::atomic<std::uint32_t> chunks{0};
    std::atomic<std::uint32_t> chunk_bytes{0};
    std::atomic<std::uint64_t> src{0};  ///< the sender's buffer (its address space)
    std::atomic<std::uint64_t> len{0};
    std::atomic<std::uint64_t> dst{0};  ///< the receiver's buffer (its address space)
};
static_assert(sizeof(xfer) == line);
constexpr int xfers_per_peer = 32;

constexpr std::uint64_t seg_magic = 0x4d50'4353'4547'4d54ULL;
constexpr std::size_t header_bytes = 2 * line;

/// The first two lines of a segment.
struct seg_header {
    std::uint64_t magic = 0;
    std::uint64_t token = 0;
    std::uint32_t rings = 0;
    std::uint32_t slots = 0;
    /// 1 when the owner issues membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) between setting
    /// `sleeping` and re-checking its rings: a sender registered for it may then publish and read
    /// `sleeping` without a fence of its own (shm.hpp, "Sleep").
    std::uint32_t asym = 0;
    /// Set by arm() while the owner may sleep on its eventfd: a sender then signals it.
    alignas(line) std::atomic<std::uint32_t> sleeping{0};
};
static_assert(sizeof(seg_header) <= header_bytes);

inline std::atomic_ref<std::uint64_t> flag_of(std::byte* first_line) noexcept {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(first_line + flag_off));
}

/// Logs "what: errno's text" and returns errc::internal.
status sys_error(const char* what) noexcept;
/// Copies len bytes between this process's `local` and process pid's `remote` with CMA
/// (write: local -> remote); errc::internal with errno's text on failure.
status cma_copy(pid_t pid, void* local, const void* remote, std::size_t len, bool write) noexcept;
/// The chunk size of a shared copy of `len` bytes: about an eighth of the message, whole pages,
/// from 64 KiB to 256 KiB. Each chunk is one process_vm_readv/writev, whose fixed cost (the
/// call, pinning the other process's pages under its mmap lock) made 64 KiB chunks slower per
/// message than these (1 MiB: 0.97-1.33x the time of 128 KiB chunks; 4 MiB: 1.2x that of 256
/// KiB ones); eight chunks still leave both copiers about the same share (benchmarks/RESULTS.md,
/// "Between processes", "1 MiB bandwidth between two processes", 2026-11-23).
constexpr std::size_t split_chunk_bytes(std::size_t len) noexcept {
    constexpr std::size_t lo = 64 * 1024, hi = 256 * 1024, page = 4096;
    const std::size_t c = len / 8 / page * page;
    return c < lo ? lo : (c > hi ? hi : c);
}
static_assert(split_chunk_bytes(1) == 64 * 1024 && split_chunk_bytes(1 << 20) == 128 * 1024 &&
              split_chunk_bytes(4 << 20) == 256 * 1024);

}  // namespace shm_detail

/// A receive ring: the control line, then the slots.
struct shm_transport::ring {
    alignas(shm_detail::line) std::atomic<std::uint64_t> head{0};  ///< consumer position (receiver writes)
    std::atomic<std::uint32_t> waiting{0};  ///< the sender has queued sends: wake it after consuming
    std::byte* slot(std::uint64_t pos, std::uint32_t mask) noexcept {
        return reinterpret_cast<std::byte*>(this) + shm_detail::line + (pos & mask) * shm_detail::line;
    }
};
static_assert(sizeof(shm_transport::ring) == shm_detail::line);

/// A send waiting for ring space (or a fin).
struct shm_transport::queued {
    std::uint64_t type = 0;
    envelope env{};
    const void* data = nullptr;
    std::size_t len = 0;
    completion* c = nullptr;  ///< eager: run once written; rts: travels in the request
    std::uint64_t extra = 0;  ///< fin: the completion record it names; cts: descriptor | generation << 32
    std::uint32_t aux = 0;    ///< rts: 1 when the sender helps copy (shared copy), else 0
};

/// One connected peer process.
struct shm_transport::peer {
    int id = -1;
    pid_t pid = 0;
    int pidfd = -1;  ///< -1 without pidfd: liveness from /proc/<pid>/stat (start_time)
    unsigned long long start_time = 0;  ///< without pidfd: its start time (/proc/<pid>/stat) at connect()
    int efd = -1;  ///< our copy of its eventfd, or its wake-up pipe opened read-write
    std::byte* seg = nullptr;  ///< its segment
    std::size_t seg_bytes = 0;
    shm_detail::seg_header* hdr = nullptr;
    ring* tx = nullptr;  ///< our ring in its segment
    ring* rx = nullptr;  ///< its ring in our segment
    shm_detail::xfer* own_xfers = nullptr;   ///< descriptors of our fetches from it (our segment)
    shm_detail::xfer* peer_xfers = nullptr;  ///< descriptors of its fetches from us (its segment)
    std::atomic<std::uint32_t> xfer_free{~std::uint32_t{0}};  ///< free descriptors among own_xfers (bits)
    std::atomic<bool> failed{false};
    bool fence = true;  ///< notify() needs its fence (see seg_header::asym)
    // Sending side, under `lock`.
    spinlock lock;
    std::uint64_t tail = 0;
    std::uint64_t cached_head = 0;
    std::deque<queued> queue;
    std::atomic<bool> has_queue{false};
    /// Sends since the last message from this peer was handled (try_write's write-ahead; the
    /// receiving side resets it, racy increments are harmless).
    std::atomic<std::uint32_t> tx_streak{0};
    unsigned stalls = 0;
    // Receiving side, under the transport's progressing_ flag.
    std::atomic<std::uint64_t> rx_head{0};
};

}  // namespace mpc::net
