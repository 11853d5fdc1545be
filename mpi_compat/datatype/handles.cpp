/// \file
/// The datatype handle table (handles.hpp): 2^24 indices in lazily allocated chunks of 1024 slots
/// that are never freed, so that a lookup needs no lock.
#include "mpi_compat/datatype/handles.hpp"

#include <atomic>
#include <deque>
#include <new>

#include "lib/spinlock.hpp"

namespace mpc::mpi {
namespace {

constexpr int chunk_bits = 10;
constexpr int chunk_size = 1 << chunk_bits;
constexpr int max_index = 1 << 24;
constexpr int max_chunks = max_index / chunk_size;
/// Freed indices wait in the FIFO until this many are queued before one is reused.
constexpr std::size_t reuse_after = 1024;

struct chunk {
    std::atomic<const datatype*> slot[chunk_size];
};

struct table {
    std::atomic<chunk*> chunks[max_chunks] = {};
    spinlock lock;
    std::deque<int> freed;                     // under lock
    int next = MPC_DATATYPE_PREDEFINED_COUNT;  // under lock
    std::atomic<std::size_t> live{0};
};

table& tbl() {
    static table* const t = new table;  // leaked: handles may be used by static destructors
    return *t;
}

std::atomic<const datatype*>* slot_of(int index) noexcept {
    chunk* c = tbl().chunks[index >> chunk_bits].load(std::memory_order_acquire);
    return c ? &c->slot[index & (chunk_size - 1)] : nullptr;
}

// An unused index with its chunk allocated, or -1 (under the lock).
int take_index(table& t) noexcept {
    if (t.freed.size() > reuse_after) {
        const int i = t.freed.front();
        t.freed.pop_front();
        return i;
    }
    if (t.next >= max_index) {
        if (t.freed.empty()) {
            return -1;
        }
        const int i = t.freed.front();
        t.freed.pop_front();
        return i;
    }
    const int i = t.next;
    std::atomic<chunk*>& c = t.chunks[i >> chunk_bits];
    if (c.load(std::memory_order_relaxed) == nullptr) {
        auto* fresh = new (std::nothrow) chunk();
        if (fresh == nullptr) {
            return -1;
        }
        c.store(fresh, std::memory_order_release);
    }
    ++t.next;
    return i;
}

}  // namespace

const datatype* derived_from_handle(int index) noexcept {
    std::atomic<const datatype*>* s = slot_of(index);
    return s ? s->load(std::memory_order_acquire) : nullptr;
}

result<MPI_Datatype> datatype_handle_add(const datatype* t) noexcept {
    table& tb = tbl();
    int index;
    {
        spin_guard g(tb.lock);
        index = take_index(tb);
    }
    if (index < 0) {
        return status{errc::no_memory, "datatype handle table full"};
    }
    slot_of(index)->store(t, std::memory_order_release);
    if (!t->is_predefined()) {
        tb.live.fetch_add(1, std::memory_order_relaxed);
    }
    return MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, index);
}

status datatype_handle_free(MPI_Datatype h) noexcept {
    const auto u = static_cast<unsigned>(h);
    const int index = int(u & 0xffffff);
    if ((u >> 24) != MPC_HANDLE_KIND_DATATYPE || index < MPC_DATATYPE_PREDEFINED_COUNT) {
        return {errc::invalid_argument, "not a derived datatype handle"};
    }
    std::atomic<const datatype*>* s = slot_of(index);
    const datatype* t = s ? s->load(std::memory_order_acquire) : nullptr;
    if (t != nullptr && t->is_predefined()) {
        return {errc::invalid_argument, "an f90 datatype handle cannot be freed"};
    }
    if (t == nullptr || !s->compare_exchange_strong(t, nullptr, std::memory_order_acq_rel)) {
        return {errc::invalid_argument, "freed or unknown datatype handle"};
    }
    table& tb = tbl();
    try {
        spin_guard g(tb.lock);
        tb.freed.push_back(index);
    } catch (const std::bad_alloc&) {
        // The index is lost for reuse; the table is large enough for that.
    }
    tb.live.fetch_sub(1, std::memory_order_relaxed);
    datatype::release(t);
    return {};
}

std::size_t datatype_handles_live() noexcept { return tbl().live.load(std::memory_order_relaxed); }

}  // namespace mpc::mpi
