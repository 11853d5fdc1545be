/// \file
/// Group bindings: MPI_Comm_group and the MPI_Group_* calls (MPI 3.1 section 6.3). Errors that
/// are not tied to a communicator go to MPI_COMM_WORLD's handler (raise with MPI_COMM_NULL).

#include "mpi_compat/group.hpp"

#include <algorithm>
#include <mutex>
#include <new>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"

namespace mpc::mpi {

using group_ptr = std::shared_ptr<const group>;

namespace {

struct group_table {
    std::mutex lock;
    std::vector<group_ptr> slots;  ///< index -> group (0: MPI_GROUP_NULL, 1: MPI_GROUP_EMPTY)
    std::vector<int> free_slots;
    group_table() : slots{nullptr, std::make_shared<const group>(std::vector<int>{})} {}
};

group_table& table() {
    static group_table t;
    return t;
}

constexpr int empty_index = MPI_GROUP_EMPTY & 0xffffff;

}  // namespace

group::group(std::vector<int> members) : world_of(std::move(members)) {
    rank_index.reserve(world_of.size());
    for (std::size_t i = 0; i < world_of.size(); ++i) {
        rank_index.emplace_back(world_of[i], static_cast<int>(i));
    }
    std::sort(rank_index.begin(), rank_index.end());
}

int group::rank_of_world(int w) const noexcept {
    auto it = std::lower_bound(rank_index.begin(), rank_index.end(), std::make_pair(w, -1));
    return it != rank_index.end() && it->first == w ? it->second : MPI_UNDEFINED;
}

group_ptr lookup_group(MPI_Group h) noexcept {
    if ((static_cast<unsigned>(h) >> 24) != MPC_HANDLE_KIND_GROUP) {
        return nullptr;
    }
    auto idx = static_cast<std::size_t>(h & 0xffffff);
    group_table& t = table();
    std::lock_guard<std::mutex> g(t.lock);
    return idx < t.slots.size() ? t.slots[idx] : nullptr;
}

MPI_Group register_group(std::vector<int> members) noexcept {
    if (members.empty()) {
        return MPI_GROUP_EMPTY;
    }
    try {
        auto p = std::make_shared<const group>(std::move(members));
        group_table& t = table();
        std::lock_guard<std::mutex> g(t.lock);
        std::size_t idx = 0;
        if (!t.free_slots.empty()) {
            idx = static_cast<std::size_t>(t.free_slots.back());
            t.free_slots.pop_back();
        } else {
            idx = t.slots.size();
            t.slots.emplace_back();
        }
        t.slots[idx] = std::move(p);
        return MPC_HANDLE(MPC_HANDLE_KIND_GROUP, static_cast<int>(idx));
    } catch (const std::bad_alloc&) {
        return MPI_GROUP_NULL;
    }
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

namespace {

/// Resolves a group argument; raises MPI_ERR_GROUP for an invalid one.
int get_group(const char* call, MPI_Group h, group_ptr& out) noexcept {
    out = lookup_group(h);
    return out != nullptr ? MPI_SUCCESS : raise(MPI_COMM_NULL, MPI_ERR_GROUP, call, "invalid group %#x", h);
}

/// Gives `members` a handle in *out (checked non-null by the caller).
int publish(const char* call, std::vector<int> members, MPI_Group* out) noexcept {
    MPI_Group h = register_group(std::move(members));
    if (h == MPI_GROUP_NULL) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "out of memory");
    }
    *out = h;
    return MPI_SUCCESS;
}

/// Checks a list of n distinct ranks of g; marks them in `picked` (size g.size()).
int check_rank_list(const char* call, const group& g, int n, const int* ranks, std::vector<char>& picked) noexcept {
    if (n < 0 || n > g.size()) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "invalid count %d (the group has %d ranks)", n, g.size());
    }
    if (n > 0 && ranks == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "null rank array");
    }
    picked.assign(static_cast<std::size_t>(g.size()), 0);
    for (int i = 0; i < n; ++i) {
        int r = ranks[i];
        if (r < 0 || r >= g.size()) {
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "ranks[%d] = %d is not a rank of the group (size %d)", i,
                         r, g.size());
        }
        if (picked[static_cast<std::size_t>(r)] != 0) {
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "rank %d is given twice", r);
        }
        picked[static_cast<std::size_t>(r)] = 1;
    }
    return MPI_SUCCESS;
}

/// Expands n (first, last, stride) triplets into group ranks, in order; checks them.
int expand_ranges(const char* call, const group& g, int n, int ranges[][3], std::vector<int>& out,
                  std::vector<char>& picked) noexcept {
    if (n < 0) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative count %d", n);
    }
    if (n > 0 && ranges == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "null range array");
    }
    picked.assign(static_cast<std::size_t>(g.size()), 0);
    out.clear();
    for (int i = 0; i < n; ++i) {
        int first = ranges[i][0];
        int last = ranges[i][1];
        int stride = ranges[i][2];
        if (stride == 0) {
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "range %d has stride 0", i);
        }
        if (first < 0 || first >= g.size() || last < 0 || last >= g.size()) {
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "range %d (%d, %d, %d) leaves the group (size %d)", i,
                         first, last, stride, g.size());
        }
        if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "range %d (%d, %d, %d) does not reach its end", i, first,
                         last, stride);
        }
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (picked[static_cast<std::size_t>(r)] != 0) {
                return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "rank %ld is given twice", r);
            }
            picked[static_cast<std::size_t>(r)] = 1;
            out.push_back(static_cast<int>(r));
        }
    }
    return MPI_SUCCESS;
}

enum class set_op { union_, intersection, difference };

int combine(const char* call, MPI_Group h1, MPI_Group h2, MPI_Group* out, set_op op) noexcept {
    group_ptr a;
    group_ptr b;
    if (int e = get_group(call, h1, a); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = get_group(call, h2, b); e != MPI_SUCCESS) {
        return e;
    }
    if (out == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "null output pointer");
    }
    std::vector<int> m;
    switch (op) {
        case set_op::union_:
            m = a->world_of;
            for (int w : b->world_of) {
                if (a->rank_of_world(w) == MPI_UNDEFINED) {
                    m.push_back(w);
                }
            }
            break;
        case set_op::intersection:
        case set_op::difference:
            for (int w : a->world_of) {
                bool in_b = b->rank_of_world(w) != MPI_UNDEFINED;
                if (in_b == (op == set_op::intersection)) {
                    m.push_back(w);
                }
            }
            break;
    }
    return publish(call, std::move(m), out);
}

}  // namespace

extern "C" {

int PMPI_Comm_group(MPI_Comm h, MPI_Group* out) {
    comm_call k = enter_comm("MPI_Comm_group", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (out == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Comm_group", "null output pointer");
    }
    MPI_Group g = register_group(members_of(*k.self, *k.c));
    if (g == MPI_GROUP_NULL) {
        return raise(h, MPI_ERR_NO_MEM, "MPI_Comm_group", "out of memory");
    }
    *out = g;
    return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group h, int* size) {
    group_ptr g;
    if (int e = get_group("MPI_Group_size", h, g); e != MPI_SUCCESS) {
        return e;
    }
    if (size == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_size", "null output pointer");
    }
    *size = g->size();
    return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group h, int* rank) {
    group_ptr g;
    if (int e = get_group("MPI_Group_rank", h, g); e != MPI_SUCCESS) {
        return e;
    }
    task* self = current();
    if (rank == nullptr || self == nullptr) {
        return raise(MPI_COMM_NULL, rank == nullptr ? MPI_ERR_ARG : MPI_ERR_OTHER, "MPI_Group_rank",
                     rank == nullptr ? "null output pointer" : "called outside an MPI rank");
    }
    *rank = g->rank_of_world(self->world_rank);
    return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group h, int n, const int ranks[], MPI_Group* out) {
    group_ptr g;
    std::vector<char> picked;
    if (int e = get_group("MPI_Group_incl", h, g); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = check_rank_list("MPI_Group_incl", *g, n, ranks, picked); e != MPI_SUCCESS) {
        return e;
    }
    if (out == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_incl", "null output pointer");
    }
    std::vector<int> m(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        m[static_cast<std::size_t>(i)] = g->world_of[static_cast<std::size_t>(ranks[i])];
    }
    return publish("MPI_Group_incl", std::move(m), out);
}

int PMPI_Group_excl(MPI_Group h, int n, const int ranks[], MPI_Group* out) {
    group_ptr g;
    std::vector<char> picked;
    if (int e = get_group("MPI_Group_excl", h, g); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = check_rank_list("MPI_Group_excl", *g, n, ranks, picked); e != MPI_SUCCESS) {
        return e;
    }
    if (out == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_excl", "null output pointer");
    }
    std::vector<int> m;
    for (int r = 0; r < g->size(); ++r) {
        if (picked[static_cast<std::size_t>(r)] == 0) {
            m.push_back(g->world_of[static_cast<std::size_t>(r)]);
        }
    }
    return publish("MPI_Group_excl", std::move(m), out);
}

int PMPI_Group_range_incl(MPI_Group h, int n, int ranges[][3], MPI_Group* out) {
    group_ptr g;
    std::vector<int> sel;
    std::vector<char> picked;
    if (int e = get_group("MPI_Group_range_incl", h, g); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = expand_ranges("MPI_Group_range_incl", *g, n, ranges, sel, picked); e != MPI_SUCCESS) {
        return e;
    }
    if (out == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_range_incl", "null output pointer");
    }
    for (int& r : sel) {
        r = g->world_of[static_cast<std::size_t>(r)];
    }
    return publish("MPI_Group_range_incl", std::move(sel), out);
}

int PMPI_Group_range_excl(MPI_Group h, int n, int ranges[][3], MPI_Group* out) {
    group_ptr g;
    std::vector<int> sel;
    std::vector<char> picked;
    if (int e = get_group("MPI_Group_range_excl", h, g); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = expand_ranges("MPI_Group_range_excl", *g, n, ranges, sel, picked); e != MPI_SUCCESS) {
        return e;
    }
    if (out == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_range_excl", "null output pointer");
    }
    std::vector<int> m;
    for (int r = 0; r < g->size(); ++r) {
        if (picked[static_cast<std::size_t>(r)] == 0) {
            m.push_back(g->world_of[static_cast<std::size_t>(r)]);
        }
    }
    return publish("MPI_Group_range_excl", std::move(m), out);
}

int PMPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group* out) {
    return combine("MPI_Group_union", a, b, out, set_op::union_);
}

int PMPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group* out) {
    return combine("MPI_Group_intersection", a, b, out, set_op::intersection);
}

int PMPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group* out) {
    return combine("MPI_Group_difference", a, b, out, set_op::difference);
}

int PMPI_Group_translate_ranks(MPI_Group h1, int n, const int ranks1[], MPI_Group h2, int ranks2[]) {
    group_ptr a;
    group_ptr b;
    if (int e = get_group("MPI_Group_translate_ranks", h1, a); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = get_group("MPI_Group_translate_ranks", h2, b); e != MPI_SUCCESS) {
        return e;
    }
    if (n < 0 || (n > 0 && (ranks1 == nullptr || ranks2 == nullptr))) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks",
                     n < 0 ? "negative count" : "null rank array");
    }
    for (int i = 0; i < n; ++i) {
        int r = ranks1[i];
        if (r != MPI_PROC_NULL && (r < 0 || r >= a->size())) {
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                         "ranks1[%d] = %d is not a rank of group1 (size %d)", i, r, a->size());
        }
    }
    for (int i = 0; i < n; ++i) {
        int r = ranks1[i];
        ranks2[i] = r == MPI_PROC_NULL ? MPI_PROC_NULL : b->rank_of_world(a->world_of[static_cast<std::size_t>(r)]);
    }
    return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group h1, MPI_Group h2, int* result) {
    group_ptr a;
    group_ptr b;
    if (int e = get_group("MPI_Group_compare", h1, a); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = get_group("MPI_Group_compare", h2, b); e != MPI_SUCCESS) {
        return e;
    }
    if (result == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_compare", "null result pointer");
    }
    if (a->world_of == b->world_of) {
        *result = MPI_IDENT;
    } else if (a->size() == b->size() &&
               std::equal(a->rank_index.begin(), a->rank_index.end(), b->rank_index.begin(),
                          [](const auto& x, const auto& y) { return x.first == y.first; })) {
        *result = MPI_SIMILAR;
    } else {
        *result = MPI_UNEQUAL;
    }
    return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group* h) {
    if (h == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_free", "null group pointer");
    }
    group_ptr g;
    if (int e = get_group("MPI_Group_free", *h, g); e != MPI_SUCCESS) {
        return e;
    }
    auto idx = static_cast<std::size_t>(*h & 0xffffff);
    if (idx != static_cast<std::size_t>(empty_index)) {  // freeing MPI_GROUP_EMPTY is allowed, a no-op
        group_table& t = table();
        std::lock_guard<std::mutex> lk(t.lock);
        if (t.slots[idx] == g) {
            t.slots[idx] = nullptr;
            t.free_slots.push_back(static_cast<int>(idx));
        }
    }
    *h = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm, MPI_Group*) MPC_WEAK(MPI_Comm_group);
int MPI_Group_size(MPI_Group, int*) MPC_WEAK(MPI_Group_size);
int MPI_Group_rank(MPI_Group, int*) MPC_WEAK(MPI_Group_rank);
int MPI_Group_incl(MPI_Group, int, const int[], MPI_Group*) MPC_WEAK(MPI_Group_incl);
int MPI_Group_excl(MPI_Group, int, const int[], MPI_Group*) MPC_WEAK(MPI_Group_excl);
int MPI_Group_range_incl(MPI_Group, int, int[][3], MPI_Group*) MPC_WEAK(MPI_Group_range_incl);
int MPI_Group_range_excl(MPI_Group, int, int[][3], MPI_Group*) MPC_WEAK(MPI_Group_range_excl);
int MPI_Group_union(MPI_Group, MPI_Group, MPI_Group*) MPC_WEAK(MPI_Group_union);
int MPI_Group_intersection(MPI_Group, MPI_Group, MPI_Group*) MPC_WEAK(MPI_Group_intersection);
int MPI_Group_difference(MPI_Group, MPI_Group, MPI_Group*) MPC_WEAK(MPI_Group_difference);
int MPI_Group_translate_ranks(MPI_Group, int, const int[], MPI_Group, int[]) MPC_WEAK(MPI_Group_translate_ranks);
int MPI_Group_compare(MPI_Group, MPI_Group, int*) MPC_WEAK(MPI_Group_compare);
int MPI_Group_free(MPI_Group*) MPC_WEAK(MPI_Group_free);
}
