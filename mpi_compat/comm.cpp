#include "mpi_compat/comm.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "mpi_compat/coll/coll.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
namespace {

/// Registration and release of handles take the mutex; lookups (comm.hpp) take no lock.
using detail::comm_chunk_bits;
using detail::comm_chunk_size;
using detail::comm_chunks;

struct comm_table {
    std::mutex lock;
    std::size_t next_index = 16;  ///< below 16: predefined (0: MPI_COMM_NULL, 1: WORLD, 2: SELF)
    std::vector<std::size_t> free_slots;
    /// Registered communicators made by adopt_comm() and adopt_intercomm(), by context (released
    /// with them).
    std::unordered_map<std::uint32_t, comm*> by_context;
};

/// The slot of index idx, created if needed (table mutex held).
std::atomic<comm*>* slot_locked(comm_table& t, std::size_t idx) {
    (void)t;  // the chunks are global (comm_chunks); t.lock is held
    std::atomic<comm*>* chunk = comm_chunks[idx >> comm_chunk_bits].load(std::memory_order_relaxed);
    if (chunk == nullptr) {
        chunk = new std::atomic<comm*>[comm_chunk_size];
        for (std::size_t i = 0; i < comm_chunk_size; ++i) {
            chunk[i].store(nullptr, std::memory_order_relaxed);
        }
        comm_chunks[idx >> comm_chunk_bits].store(chunk, std::memory_order_release);
    }
    return &chunk[idx & (comm_chunk_size - 1)];
}

comm_table& table() {
    static comm_table t;
    return t;
}

MPI_Comm register_locked(comm_table& t, comm* c);

std::atomic<std::uint32_t> next_context{0};  // contexts 1..15 are reserved for predefined communicators

}  // namespace

std::atomic<std::atomic<comm*>*> detail::comm_chunks[detail::comm_max_chunks] = {};

comm::~comm() { coll::destroy_state(*this); }

int comm::rank_of(const task& t) const noexcept { return rank_of_world(t.world_rank); }

int comm::rank_of_world(int wr) const noexcept {
    if (is_self) {
        return 0;
    }
    if (world_order) {
        return wr;
    }
    auto it = std::lower_bound(rank_index.begin(), rank_index.end(), std::make_pair(wr, -1));
    if (it != rank_index.end() && it->first == wr) {
        return it->second;
    }
    if (is_inter) {
        it = std::lower_bound(remote_index.begin(), remote_index.end(), std::make_pair(wr, -1));
        if (it != remote_index.end() && it->first == wr) {
            return it->second;
        }
    }
    return MPI_UNDEFINED;
}

bool comm::in_group_a(const task& t) const noexcept {
    if (!is_inter) {
        return true;
    }
    auto it = std::lower_bound(rank_index.begin(), rank_index.end(), std::make_pair(t.world_rank, -1));
    return it != rank_index.end() && it->first == t.world_rank;
}

int comm::world_rank(const task& caller, int rank) const noexcept {
    if (is_self) {
        return caller.world_rank;
    }
    return remote_group_or_self(caller)[static_cast<std::size_t>(rank)];
}

void comm::index_ranks() {
    const world_state& w = world();
    local_only = true;
    for (int wr : world_of) {
        local_only = local_only && is_local(w, wr);
    }
    for (int wr : remote_of) {
        local_only = local_only && is_local(w, wr);
    }
    rank_index.clear();
    world_order = !is_self && !is_inter && static_cast<int>(world_of.size()) == w.size;
    for (std::size_t i = 0; world_order && i < world_of.size(); ++i) {
        world_order = world_of[i] == static_cast<int>(i);
    }
    fast_size = world_order ? static_cast<int>(world_of.size()) : 0;
    if (world_order || is_self) {  // rank_of_world() needs no index
        return;
    }
    rank_index.reserve(world_of.size());
    for (std::size_t i = 0; i < world_of.size(); ++i) {
        rank_index.emplace_back(world_of[i], static_cast<int>(i));
    }
    std::sort(rank_index.begin(), rank_index.end());
    remote_index.clear();
    for (std::size_t i = 0; i < remote_of.size(); ++i) {
        remote_index.emplace_back(remote_of[i], static_cast<int>(i));
    }
    std::sort(remote_index.begin(), remote_index.end());
}

MPI_Comm register_comm(comm* c) {
    comm_table& t = table();
    std::lock_guard<std::mutex> g(t.lock);
    return register_locked(t, c);
}

namespace {
MPI_Comm register_locked(comm_table& t, comm* c) {
    std::size_t idx = 0;
    if (c->handle != MPI_COMM_NULL) {  // predefined: fixed index
        idx = static_cast<std::size_t>(c->handle & 0xffffff);
    } else if (!t.free_slots.empty()) {
        idx = t.free_slots.back();
        t.free_slots.pop_back();
    } else {
        idx = t.next_index++;
    }
    c->handle = MPC_HANDLE(MPC_HANDLE_KIND_COMM, static_cast<int>(idx));
    slot_locked(t, idx)->store(c, std::memory_order_release);
    c->handle = MPC_HANDLE(MPC_HANDLE_KIND_COMM, static_cast<int>(idx));
    return c->handle;
}
}  // namespace

void release_comm(comm* c) noexcept {
    if (c->predefined || c->members.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;
    }
    comm_table& t = table();
    {
        std::lock_guard<std::mutex> g(t.lock);
        auto idx = static_cast<std::size_t>(c->handle & 0xffffff);
        slot_locked(t, idx)->store(nullptr, std::memory_order_release);
        t.free_slots.push_back(idx);
        if (auto it = t.by_context.find(c->context); it != t.by_context.end() && it->second == c) {
            t.by_context.erase(it);
        }
    }
    delete c;
}

void retain_comm(comm* c) noexcept {
    if (!c->predefined) {
        c->members.fetch_add(1, std::memory_order_relaxed);
    }
}

std::uint32_t new_context_pair() noexcept {
    const world_state& w = world();
    const auto k = next_context.fetch_add(1, std::memory_order_relaxed);
    return 16 + 2 * (k * static_cast<std::uint32_t>(w.nprocs) + static_cast<std::uint32_t>(w.proc_index));
}

namespace {
/// This process's registered communicator of `context`: the one a member here adopted already,
/// or the one make() builds (make sets everything but the reference count).
template <class Make>
MPI_Comm adopt(std::uint32_t context, Make make) {
    comm_table& t = table();
    {
        std::lock_guard<std::mutex> g(t.lock);
        auto it = t.by_context.find(context);
        if (it != t.by_context.end()) {
            return it->second->handle;
        }
    }
    comm* c = make();
    c->context = context;
    const world_state& w = world();
    int here = 0;
    for (int wr : c->world_of) {
        here += is_local(w, wr) ? 1 : 0;
    }
    for (int wr : c->remote_of) {
        here += is_local(w, wr) ? 1 : 0;
    }
    c->members.store(here, std::memory_order_relaxed);
    c->index_ranks();
    std::lock_guard<std::mutex> g(t.lock);
    auto [it, fresh] = t.by_context.emplace(context, c);
    if (!fresh) {  // another member here adopted it meanwhile
        delete c;
        return it->second->handle;
    }
    return register_locked(t, c);
}
}  // namespace

MPI_Comm adopt_comm(std::uint32_t context, const std::vector<int>& members) {
    return adopt(context, [&] {
        auto* c = new comm();
        c->world_of = members;
        return c;
    });
}

MPI_Comm adopt_intercomm(std::uint32_t context, std::uint32_t views, const std::vector<int>& a,
                         const std::vector<int>& b) {
    return adopt(context, [&] {
        auto* c = new comm();
        c->is_inter = true;
        c->world_of = a;
        c->remote_of = b;
        for (int g = 0; g < 2; ++g) {
            auto v = std::make_unique<comm>();
            v->world_of = g == 0 ? a : b;
            v->context = views;
            v->index_ranks();
            c->group_view[g] = std::move(v);
        }
        return c;
    });
}

comm_local& local_of(task& t, const comm* c) {
    spin_guard g(t.comm_locals_lock);
    return t.comm_locals[c];
}

void drop_local(task& t, const comm* c) noexcept {
    spin_guard g(t.comm_locals_lock);
    t.comm_locals.erase(c);
}

}  // namespace mpc::mpi
