#include "mpi_compat/comm.hpp"

#include <algorithm>
#include <mutex>

#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
namespace {

struct comm_table {
    std::mutex lock;
    std::vector<comm*> slots;  ///< index -> comm (0: MPI_COMM_NULL, 1: WORLD, 2: SELF)
    std::vector<int> free_slots;
};

comm_table& table() {
    static comm_table t;
    return t;
}

std::atomic<std::uint32_t> next_context{16};  // 1..15 are reserved for predefined communicators

}  // namespace

int comm::rank_of(const task& t) const noexcept {
    if (is_self) {
        return 0;
    }
    if (is_world) {
        return t.world_rank;
    }
    auto it = std::lower_bound(rank_index.begin(), rank_index.end(), std::make_pair(t.world_rank, -1));
    if (it != rank_index.end() && it->first == t.world_rank) {
        return it->second;
    }
    if (is_inter) {
        it = std::lower_bound(remote_index.begin(), remote_index.end(), std::make_pair(t.world_rank, -1));
        if (it != remote_index.end() && it->first == t.world_rank) {
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
    rank_index.clear();
    if (is_world || is_self) {
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

comm* lookup_comm(MPI_Comm h) noexcept {
    if ((static_cast<unsigned>(h) >> 24) != MPC_HANDLE_KIND_COMM) {
        return nullptr;
    }
    auto idx = static_cast<std::size_t>(h & 0xffffff);
    comm_table& t = table();
    std::lock_guard<std::mutex> g(t.lock);
    return idx < t.slots.size() ? t.slots[idx] : nullptr;
}

MPI_Comm register_comm(comm* c) {
    comm_table& t = table();
    std::lock_guard<std::mutex> g(t.lock);
    std::size_t idx = 0;
    if (c->handle != MPI_COMM_NULL) {  // predefined: fixed index
        idx = static_cast<std::size_t>(c->handle & 0xffffff);
    } else if (!t.free_slots.empty()) {
        idx = static_cast<std::size_t>(t.free_slots.back());
        t.free_slots.pop_back();
    } else {
        idx = std::max<std::size_t>(t.slots.size(), 16);  // below 16: predefined
    }
    if (t.slots.size() <= idx) {
        t.slots.resize(idx + 1, nullptr);
    }
    t.slots[idx] = c;
    c->handle = MPC_HANDLE(MPC_HANDLE_KIND_COMM, static_cast<int>(idx));
    return c->handle;
}

void release_comm(comm* c) noexcept {
    if (c->predefined || c->members.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;
    }
    comm_table& t = table();
    {
        std::lock_guard<std::mutex> g(t.lock);
        auto idx = static_cast<std::size_t>(c->handle & 0xffffff);
        t.slots[idx] = nullptr;
        t.free_slots.push_back(static_cast<int>(idx));
    }
    delete c;
}

std::uint32_t new_context_pair() noexcept { return next_context.fetch_add(2, std::memory_order_relaxed); }

comm_local& local_of(task& t, const comm* c) { return t.comm_locals[c]; }

}  // namespace mpc::mpi
