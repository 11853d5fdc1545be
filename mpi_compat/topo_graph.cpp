/// \file
/// Graph and distributed graph topologies (MPI 3.1 sections 7.5.3, 7.5.4 and 7.5.5).
///
/// MPI_Dist_graph_create gathers every member's edges at rank 0 of the old communicator, which
/// sorts them into each rank's in- and out-lists (in the order: contributing rank, then the
/// order of its arguments) and sends each rank its own. MPI_Dist_graph_create_adjacent needs no
/// exchange. Reorder is ignored.

#include <memory>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"
#include "mpi_compat/info.hpp"
#include "mpi_compat/internal.hpp"
#include "mpi_compat/topo.hpp"

using namespace mpc::mpi;

namespace {

/// Checks the graph description of Graph_create and Graph_map.
int check_graph(const char* call, MPI_Comm h, int size, int nnodes, const int* index, const int* edges) noexcept {
    if (nnodes < 0 || nnodes > size) {
        return raise(h, MPI_ERR_ARG, call, "invalid nnodes %d (the communicator has %d ranks)", nnodes, size);
    }
    if (nnodes > 0 && index == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null index array");
    }
    for (int i = 0; i < nnodes; ++i) {
        if (index[i] < 0 || (i > 0 && index[i] < index[i - 1])) {
            return raise(h, MPI_ERR_ARG, call, "index[%d] = %d is negative or decreasing", i, index[i]);
        }
    }
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    if (nedges > 0 && edges == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null edges array");
    }
    for (int j = 0; j < nedges; ++j) {
        if (edges[j] < 0 || edges[j] >= nnodes) {
            return raise(h, MPI_ERR_ARG, call, "edges[%d] = %d is not a node (nnodes %d)", j, edges[j], nnodes);
        }
    }
    return MPI_SUCCESS;
}

/// Checks a list of n ranks of a communicator of `size` ranks and its weights (or MPI_UNWEIGHTED /
/// MPI_WEIGHTS_EMPTY).
int check_neighbors(const char* call, MPI_Comm h, int size, int n, const int* ranks, const int* weights,
                    const char* what) noexcept {
    if (n < 0) {
        return raise(h, MPI_ERR_ARG, call, "negative %s count %d", what, n);
    }
    if (n > 0 && ranks == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null %s array", what);
    }
    for (int i = 0; i < n; ++i) {
        if (ranks[i] < 0 || ranks[i] >= size) {
            return raise(h, MPI_ERR_RANK, call, "%s[%d] = %d is not a rank of the communicator (size %d)", what, i,
                         ranks[i], size);
        }
    }
    if (weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY) {
        if (weights == MPI_WEIGHTS_EMPTY && n > 0) {
            return raise(h, MPI_ERR_ARG, call, "MPI_WEIGHTS_EMPTY with %d %s", n, what);
        }
        return MPI_SUCCESS;
    }
    if (n > 0 && weights == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null %s weights", what);
    }
    for (int i = 0; i < n; ++i) {
        if (weights[i] < 0) {
            return raise(h, MPI_ERR_ARG, call, "negative %s weight %d", what, weights[i]);
        }
    }
    return MPI_SUCCESS;
}

void copy_out(const std::vector<int>& from, int max, int* to) {
    for (int i = 0; i < max && i < static_cast<int>(from.size()); ++i) {
        to[i] = from[static_cast<std::size_t>(i)];
    }
}

/// Sends a vector of ints (length first) on the collective context.
void send_ints(task& self, const comm& c, int dest, int tag, const std::vector<int>& v) {
    int n = static_cast<int>(v.size());
    coll_send(self, c, dest, tag, &n, sizeof(n));
    coll_send(self, c, dest, tag, v.data(), v.size() * sizeof(int));
}

std::vector<int> recv_ints(task& self, const comm& c, int source, int tag) {
    int n = 0;
    coll_recv(self, c, source, tag, &n, sizeof(n));
    std::vector<int> v(static_cast<std::size_t>(n));
    coll_recv(self, c, source, tag, v.data(), v.size() * sizeof(int));
    return v;
}

/// Rank 0 of `c`: turns the gathered edge lists ([weighted, (src, dst, w)...] per rank) into
/// each rank's [weighted, indegree, outdegree, sources, source weights, dests, dest weights]
/// (weighted: the rank's own flag).
std::vector<std::vector<int>> sort_edges(const std::vector<std::vector<int>>& all) {
    std::size_t n = all.size();
    std::vector<std::vector<int>> in(n);
    std::vector<std::vector<int>> out(n);
    for (const std::vector<int>& v : all) {
        for (std::size_t j = 1; j + 3 <= v.size(); j += 3) {
            auto s = static_cast<std::size_t>(v[j]);
            auto d = static_cast<std::size_t>(v[j + 1]);
            in[d].push_back(v[j]);
            in[d].push_back(v[j + 2]);
            out[s].push_back(v[j + 1]);
            out[s].push_back(v[j + 2]);
        }
    }
    std::vector<std::vector<int>> result(n);
    for (std::size_t r = 0; r < n; ++r) {
        std::vector<int>& m = result[r];
        int indeg = static_cast<int>(in[r].size() / 2);
        int outdeg = static_cast<int>(out[r].size() / 2);
        m = {all[r][0], indeg, outdeg};
        for (int p = 0; p < 2; ++p) {
            for (int i = 0; i < indeg; ++i) {
                m.push_back(in[r][static_cast<std::size_t>(2 * i + p)]);
            }
        }
        for (int p = 0; p < 2; ++p) {
            for (int i = 0; i < outdeg; ++i) {
                m.push_back(out[r][static_cast<std::size_t>(2 * i + p)]);
            }
        }
    }
    return result;
}

std::shared_ptr<const virtual_topology> dist_topology(const std::vector<int>& m) {
    auto t = std::make_shared<virtual_topology>();
    t->kind = MPI_DIST_GRAPH;
    t->weighted = m[0] != 0;
    auto indeg = static_cast<std::ptrdiff_t>(m[1]);
    auto outdeg = static_cast<std::ptrdiff_t>(m[2]);
    auto p = m.begin() + 3;
    t->sources.assign(p, p + indeg);
    t->source_weights.assign(p + indeg, p + 2 * indeg);
    p += 2 * indeg;
    t->dests.assign(p, p + outdeg);
    t->dest_weights.assign(p + outdeg, p + 2 * outdeg);
    return t;
}

}  // namespace

extern "C" {

int PMPI_Graph_create(MPI_Comm h, int nnodes, const int index[], const int edges[], int /*reorder*/,
                      MPI_Comm* newcomm) {
    comm_call k = enter_comm("MPI_Graph_create", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_graph("MPI_Graph_create", h, k.c->size(), nnodes, index, edges); e != MPI_SUCCESS) {
        return e;
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Graph_create", "null output pointer");
    }
    if (k.c->rank_of(*k.self) >= nnodes) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    auto t = std::make_shared<virtual_topology>();
    t->kind = MPI_GRAPH;
    t->index.assign(index, index + nnodes);
    t->edges.assign(edges, edges + index[nnodes - 1]);
    std::vector<int> members = members_of(*k.self, *k.c);
    members.resize(static_cast<std::size_t>(nnodes));
    *newcomm = make_comm(*k.self, *k.c, members, tag_make_comm, std::move(t));
    return MPI_SUCCESS;
}

int PMPI_Graph_map(MPI_Comm h, int nnodes, const int index[], const int edges[], int* newrank) {
    comm_call k = enter_comm("MPI_Graph_map", h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (int e = check_graph("MPI_Graph_map", h, k.c->size(), nnodes, index, edges); e != MPI_SUCCESS) {
        return e;
    }
    if (newrank == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Graph_map", "null output pointer");
    }
    int me = k.c->rank_of(*k.self);
    *newrank = me < nnodes ? me : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm h, int* nnodes, int* nedges) {
    topo_call k = enter_topo("MPI_Graphdims_get", h, MPI_GRAPH);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (nnodes == nullptr || nedges == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Graphdims_get", "null output pointer");
    }
    *nnodes = static_cast<int>(k.t->index.size());
    *nedges = static_cast<int>(k.t->edges.size());
    return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm h, int maxindex, int maxedges, int index[], int edges[]) {
    topo_call k = enter_topo("MPI_Graph_get", h, MPI_GRAPH);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == nullptr) || (maxedges > 0 && edges == nullptr)) {
        return raise(h, MPI_ERR_ARG, "MPI_Graph_get", "negative maxindex/maxedges or null array");
    }
    copy_out(k.t->index, maxindex, index);
    copy_out(k.t->edges, maxedges, edges);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm h, int rank, int* nneighbors) {
    topo_call k = enter_topo("MPI_Graph_neighbors_count", h, MPI_GRAPH);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int nnodes = static_cast<int>(k.t->index.size());
    if (rank < 0 || rank >= nnodes) {
        return raise(h, MPI_ERR_RANK, "MPI_Graph_neighbors_count", "invalid rank %d (%d nodes)", rank, nnodes);
    }
    if (nneighbors == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Graph_neighbors_count", "null output pointer");
    }
    auto r = static_cast<std::size_t>(rank);
    *nneighbors = k.t->index[r] - (rank > 0 ? k.t->index[r - 1] : 0);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm h, int rank, int maxneighbors, int neighbors[]) {
    topo_call k = enter_topo("MPI_Graph_neighbors", h, MPI_GRAPH);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int nnodes = static_cast<int>(k.t->index.size());
    if (rank < 0 || rank >= nnodes) {
        return raise(h, MPI_ERR_RANK, "MPI_Graph_neighbors", "invalid rank %d (%d nodes)", rank, nnodes);
    }
    if (maxneighbors < 0 || (maxneighbors > 0 && neighbors == nullptr)) {
        return raise(h, MPI_ERR_ARG, "MPI_Graph_neighbors", "negative maxneighbors or null array");
    }
    auto r = static_cast<std::size_t>(rank);
    int first = rank > 0 ? k.t->index[r - 1] : 0;
    for (int j = first, i = 0; j < k.t->index[r] && i < maxneighbors; ++j, ++i) {
        neighbors[i] = k.t->edges[static_cast<std::size_t>(j)];
    }
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm h, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                    int /*reorder*/, MPI_Comm* newcomm) {
    const char* call = "MPI_Dist_graph_create_adjacent";
    comm_call k = enter_comm(call, h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int size = k.c->size();
    if (int e = check_neighbors(call, h, size, indegree, sources, sourceweights, "sources"); e != MPI_SUCCESS) {
        return e;
    }
    if (int e = check_neighbors(call, h, size, outdegree, destinations, destweights, "destinations");
        e != MPI_SUCCESS) {
        return e;
    }
    if (info != MPI_INFO_NULL && !info_valid(info)) {
        return raise(h, MPI_ERR_INFO, call, "invalid info %#x", info);
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null output pointer");
    }
    auto t = std::make_shared<virtual_topology>();
    t->kind = MPI_DIST_GRAPH;
    t->weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    t->sources.assign(sources, sources + indegree);
    t->dests.assign(destinations, destinations + outdegree);
    bool sw = sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY;
    bool dw = destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
    t->source_weights.assign(static_cast<std::size_t>(indegree), 1);
    t->dest_weights.assign(static_cast<std::size_t>(outdegree), 1);
    for (int i = 0; sw && i < indegree; ++i) {
        t->source_weights[static_cast<std::size_t>(i)] = sourceweights[i];
    }
    for (int i = 0; dw && i < outdegree; ++i) {
        t->dest_weights[static_cast<std::size_t>(i)] = destweights[i];
    }
    *newcomm = make_comm(*k.self, *k.c, members_of(*k.self, *k.c), tag_make_comm, std::move(t));
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create(MPI_Comm h, int n, const int sources[], const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int /*reorder*/, MPI_Comm* newcomm) {
    const char* call = "MPI_Dist_graph_create";
    comm_call k = enter_comm(call, h);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    int size = k.c->size();
    if (int e = check_neighbors(call, h, size, n, sources, MPI_UNWEIGHTED, "sources"); e != MPI_SUCCESS) {
        return e;
    }
    if (n > 0 && degrees == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null degrees array");
    }
    long long total = 0;
    for (int i = 0; i < n; ++i) {
        if (degrees[i] < 0) {
            return raise(h, MPI_ERR_ARG, call, "degrees[%d] = %d is negative", i, degrees[i]);
        }
        total += degrees[i];
    }
    if (total > (1 << 28)) {
        return raise(h, MPI_ERR_ARG, call, "too many edges (%lld)", total);
    }
    if (int e = check_neighbors(call, h, size, static_cast<int>(total), destinations, weights, "destinations");
        e != MPI_SUCCESS) {
        return e;
    }
    if (info != MPI_INFO_NULL && !info_valid(info)) {
        return raise(h, MPI_ERR_INFO, call, "invalid info %#x", info);
    }
    if (newcomm == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null output pointer");
    }
    bool w = weights != MPI_UNWEIGHTED && weights != MPI_WEIGHTS_EMPTY;
    // Weighted or not is each rank's own answer (MPI 3.1 section 7.5.5: false when it passed
    // MPI_UNWEIGHTED; with no edges, MPI_WEIGHTS_EMPTY "or any arbitrary array" means weighted),
    // as in Open MPI and MPICH (MPICH's distgraph1).
    std::vector<int> mine{weights != MPI_UNWEIGHTED ? 1 : 0};
    for (int i = 0, j = 0; i < n; ++i) {
        for (int d = 0; d < degrees[i]; ++d, ++j) {
            mine.insert(mine.end(), {sources[i], destinations[j], w ? weights[j] : 1});
        }
    }
    std::vector<int> my_lists;
    int me = k.c->rank_of(*k.self);
    if (me == 0) {
        std::vector<std::vector<int>> all(static_cast<std::size_t>(size));
        all[0] = std::move(mine);
        for (int r = 1; r < size; ++r) {
            all[static_cast<std::size_t>(r)] = recv_ints(*k.self, *k.c, r, tag_topo_gather);
        }
        std::vector<std::vector<int>> lists = sort_edges(all);
        for (int r = 1; r < size; ++r) {
            send_ints(*k.self, *k.c, r, tag_topo_scatter, lists[static_cast<std::size_t>(r)]);
        }
        my_lists = std::move(lists[0]);
    } else {
        send_ints(*k.self, *k.c, 0, tag_topo_gather, mine);
        my_lists = recv_ints(*k.self, *k.c, 0, tag_topo_scatter);
    }
    *newcomm = make_comm(*k.self, *k.c, members_of(*k.self, *k.c), tag_make_comm, dist_topology(my_lists));
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm h, int* indegree, int* outdegree, int* weighted) {
    topo_call k = enter_topo("MPI_Dist_graph_neighbors_count", h, MPI_DIST_GRAPH);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    if (indegree == nullptr || outdegree == nullptr || weighted == nullptr) {
        return raise(h, MPI_ERR_ARG, "MPI_Dist_graph_neighbors_count", "null output pointer");
    }
    *indegree = static_cast<int>(k.t->sources.size());
    *outdegree = static_cast<int>(k.t->dests.size());
    *weighted = k.t->weighted ? 1 : 0;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm h, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[]) {
    const char* call = "MPI_Dist_graph_neighbors";
    topo_call k = enter_topo(call, h, MPI_DIST_GRAPH);
    if (k.err != MPI_SUCCESS) {
        return k.err;
    }
    const virtual_topology& t = *k.t;
    int indeg = static_cast<int>(t.sources.size());
    int outdeg = static_cast<int>(t.dests.size());
    if (maxindegree < indeg || maxoutdegree < outdeg) {
        return raise(h, MPI_ERR_ARG, call, "maxindegree %d / maxoutdegree %d below the degrees %d / %d", maxindegree,
                     maxoutdegree, indeg, outdeg);
    }
    if ((indeg > 0 && sources == nullptr) || (outdeg > 0 && destinations == nullptr)) {
        return raise(h, MPI_ERR_ARG, call, "null sources or destinations array");
    }
    copy_out(t.sources, indeg, sources);
    copy_out(t.dests, outdeg, destinations);
    if (t.weighted) {
        if (sourceweights != MPI_UNWEIGHTED && sourceweights != nullptr) {
            copy_out(t.source_weights, indeg, sourceweights);
        }
        if (destweights != MPI_UNWEIGHTED && destweights != nullptr) {
            copy_out(t.dest_weights, outdeg, destweights);
        }
    }
    return MPI_SUCCESS;
}

int MPI_Graph_create(MPI_Comm, int, const int[], const int[], int, MPI_Comm*) MPC_WEAK(MPI_Graph_create);
int MPI_Graph_map(MPI_Comm, int, const int[], const int[], int*) MPC_WEAK(MPI_Graph_map);
int MPI_Graphdims_get(MPI_Comm, int*, int*) MPC_WEAK(MPI_Graphdims_get);
int MPI_Graph_get(MPI_Comm, int, int, int[], int[]) MPC_WEAK(MPI_Graph_get);
int MPI_Graph_neighbors_count(MPI_Comm, int, int*) MPC_WEAK(MPI_Graph_neighbors_count);
int MPI_Graph_neighbors(MPI_Comm, int, int, int[]) MPC_WEAK(MPI_Graph_neighbors);
int MPI_Dist_graph_create_adjacent(MPI_Comm, int, const int[], const int[], int, const int[], const int[], MPI_Info,
                                   int, MPI_Comm*) MPC_WEAK(MPI_Dist_graph_create_adjacent);
int MPI_Dist_graph_create(MPI_Comm, int, const int[], const int[], const int[], const int[], MPI_Info, int,
                          MPI_Comm*) MPC_WEAK(MPI_Dist_graph_create);
int MPI_Dist_graph_neighbors_count(MPI_Comm, int*, int*, int*) MPC_WEAK(MPI_Dist_graph_neighbors_count);
int MPI_Dist_graph_neighbors(MPI_Comm, int, int[], int[], int, int[], int[]) MPC_WEAK(MPI_Dist_graph_neighbors);
}
