#include "lib/topology.hpp"

#include <hwloc.h>
#include <sched.h>

#include <algorithm>
#include <mutex>

#include "lib/log.hpp"
#include "lib/valgrind.hpp"

namespace mpc::topo {
namespace {

struct pu_info {
    int pu;
    int core;
    int numa;
    int rank_in_core;  // 0 for the first allowed hardware thread of the core
};

struct state {
    hwloc_topology_t topo = nullptr;
    summary sum;
    std::vector<pu_info> pus;  // allowed PUs in core order
    status st;
};

state& get() {
    static state s;
    return s;
}

int numa_of(hwloc_topology_t topo, unsigned pu_os) {
    hwloc_obj_t node = nullptr;
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)) != nullptr) {
        if (node->cpuset != nullptr && hwloc_bitmap_isset(node->cpuset, pu_os)) {
            return static_cast<int>(node->os_index);
        }
    }
    return 0;
}

status do_load(state& s) {
    if (hwloc_topology_init(&s.topo) != 0) {
        return status::from_errno("hwloc_topology_init");
    }
    if (running_on_valgrind()) {
        // hwloc's x86 (CPUID) backend refuses to run under Valgrind and says so on stderr in
        // every process; the Linux backend alone gives the same topology.
        hwloc_topology_set_components(s.topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
    }
    if (hwloc_topology_load(s.topo) != 0) {
        return status::from_errno("hwloc_topology_load");
    }
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(s.topo, allowed, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(s.topo));
    }
    std::vector<int> numa_seen;
    hwloc_obj_t core = nullptr;
    int ncores = 0;
    while ((core = hwloc_get_next_obj_by_type(s.topo, HWLOC_OBJ_CORE, core)) != nullptr) {
        int rank = 0;
        unsigned pu = 0;
        hwloc_bitmap_foreach_begin(pu, core->cpuset) {
            if (hwloc_bitmap_isset(allowed, pu)) {
                int numa = numa_of(s.topo, pu);
                s.pus.push_back({static_cast<int>(pu), static_cast<int>(core->logical_index), numa, rank++});
                if (std::find(numa_seen.begin(), numa_seen.end(), numa) == numa_seen.end()) {
                    numa_seen.push_back(numa);
                }
            }
        }
        hwloc_bitmap_foreach_end();
        ncores += rank > 0 ? 1 : 0;
    }
    if (s.pus.empty()) {  // no core objects (some VMs): use the PUs directly
        unsigned pu = 0;
        hwloc_bitmap_foreach_begin(pu, allowed) {
            s.pus.push_back({static_cast<int>(pu), static_cast<int>(pu), numa_of(s.topo, pu), 0});
            ++ncores;
        }
        hwloc_bitmap_foreach_end();
        numa_seen.push_back(0);
    }
    hwloc_bitmap_free(allowed);
    if (s.pus.empty()) {
        return {errc::system, "the process may not run on any processor"};
    }
    s.sum.allowed_pus = static_cast<int>(s.pus.size());
    s.sum.allowed_cores = ncores;
    s.sum.numa_nodes = static_cast<int>(numa_seen.size());
    return {};
}

}  // namespace

status load() noexcept {
    static std::once_flag once;
    state& s = get();
    std::call_once(once, [&s] {
        s.st = do_load(s);
        if (!s.st) {
            MPC_LOG(error, core, "cannot read the machine topology: %s", s.st.reason());
        }
    });
    return s.st;
}

const summary& info() noexcept { return get().sum; }

void* hwloc_handle() noexcept {
    if (!load().ok()) {
        return nullptr;
    }
    return get().topo;
}

std::vector<std::vector<int>> core_pus() {
    std::vector<std::vector<int>> out;
    int last = -1;
    for (const pu_info& p : get().pus) {  // in core order
        if (out.empty() || p.core != last) {
            out.emplace_back();
            last = p.core;
        }
        out.back().push_back(p.pu);
    }
    return out;
}

std::vector<int> process_share(int index, int count) {
    const std::vector<std::vector<int>> cores = core_pus();
    const auto c = static_cast<long long>(cores.size());
    std::vector<int> out;
    if (c == 0 || count <= 0 || index < 0 || index >= count) {
        return out;
    }
    long long first = static_cast<long long>(index) * c / count;
    long long end = static_cast<long long>(index + 1) * c / count;
    end = end > first ? end : first + 1;  // more processes than cores: one shared core each
    for (long long k = first; k < end; ++k) {
        const auto& pus = cores[static_cast<std::size_t>(k)];
        out.insert(out.end(), pus.begin(), pus.end());
    }
    return out;
}

std::vector<place> plan(int nr_vps, placement policy) {
    state& s = get();
    // Order: first hardware thread of every core, then the second ones, ...
    std::vector<pu_info> order = s.pus;
    std::stable_sort(order.begin(), order.end(),
                     [](const pu_info& a, const pu_info& b) { return a.rank_in_core < b.rank_in_core; });
    if (policy == placement::scatter) {
        // Within each hardware-thread rank, interleave NUMA nodes: node0, node1, node0, ...
        std::vector<pu_info> out;
        std::size_t i = 0;
        while (i < order.size()) {
            std::size_t j = i;
            while (j < order.size() && order[j].rank_in_core == order[i].rank_in_core) {
                ++j;
            }
            std::vector<pu_info> tier(order.begin() + static_cast<long>(i), order.begin() + static_cast<long>(j));
            std::stable_sort(tier.begin(), tier.end(), [](const pu_info& a, const pu_info& b) { return a.numa < b.numa; });
            std::vector<std::vector<pu_info>> by_node;
            for (const pu_info& p : tier) {
                if (by_node.empty() || by_node.back().front().numa != p.numa) {
                    by_node.emplace_back();
                }
                by_node.back().push_back(p);
            }
            for (std::size_t k = 0; out.size() < j; ++k) {
                for (auto& node : by_node) {
                    if (k < node.size()) {
                        out.push_back(node[k]);
                    }
                }
            }
            i = j;
        }
        order = std::move(out);
    }
    std::vector<place> res;
    res.reserve(static_cast<std::size_t>(nr_vps));
    for (int v = 0; v < nr_vps; ++v) {
        const pu_info& p = order[static_cast<std::size_t>(v) % order.size()];
        res.push_back({p.pu, p.core, p.numa, static_cast<std::size_t>(v) >= order.size()});
    }
    return res;
}

status bind_this_thread(const place& p) noexcept {
    state& s = get();
    if (s.topo == nullptr || p.pu < 0) {
        return {errc::not_initialized, "topology not loaded"};
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, static_cast<unsigned>(p.pu));
    int rc = hwloc_set_cpubind(s.topo, set, HWLOC_CPUBIND_THREAD);
    int e = errno;
    hwloc_bitmap_free(set);
    if (rc != 0) {
        return status::from_errno("hwloc_set_cpubind", e);
    }
    return {};
}

int current_numa() noexcept {
    state& s = get();
    int cpu = sched_getcpu();
    if (s.topo == nullptr || cpu < 0) {
        return 0;
    }
    return numa_of(s.topo, static_cast<unsigned>(cpu));
}

std::string describe() {
    const summary& m = get().sum;
    return std::to_string(m.allowed_cores) + " cores (" + std::to_string(m.allowed_pus) + " PUs) on " +
           std::to_string(m.numa_nodes) + " NUMA node" + (m.numa_nodes == 1 ? "" : "s");
}

}  // namespace mpc::topo
