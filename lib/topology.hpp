/// \file
/// Machine topology through hwloc: which cores this process may use, their NUMA nodes, and the
/// placement of virtual processors on them.
#pragma once

#include <string>
#include <vector>

#include "lib/status.hpp"

namespace mpc::topo {

enum class placement { compact = 0, scatter = 1 };

/// Where one VP runs: one PU (hardware thread) chosen among the process's allowed cores.
struct place {
    int pu = -1;     ///< OS index of the PU the thread is pinned to
    int core = -1;   ///< logical index of its core
    int numa = 0;    ///< OS index of the NUMA node holding the core (0 without NUMA)
    bool shared = false;  ///< another VP of this process already uses this PU (oversubscription)
};

struct summary {
    int allowed_pus = 0;
    int allowed_cores = 0;
    int numa_nodes = 0;  ///< NUMA nodes that hold at least one allowed core
};

/// Loads the topology once (thread-safe); later calls return the first outcome.
status load() noexcept;
/// Only after load() succeeded.
const summary& info() noexcept;

/// Places `nr_vps` VPs: one per allowed core first (compact: in core order; scatter:
/// round-robin over NUMA nodes), then on the remaining hardware threads, then wrapping around.
std::vector<place> plan(int nr_vps, placement policy);

/// The OS indexes of the allowed PUs of each allowed core, in core order (one entry per core).
std::vector<std::vector<int>> core_pus();

/// Splits the allowed cores between `count` processes for process `index`: its share is a
/// contiguous block of whole cores (count <= cores), or one core that it shares with its
/// neighbours (count > cores, spread evenly). The OS indexes of the share's PUs.
std::vector<int> process_share(int index, int count);

/// Pins the calling kernel thread to p.pu (HWLOC_CPUBIND_THREAD|STRICT falls back to plain).
status bind_this_thread(const place& p) noexcept;

/// The loaded hwloc topology (an hwloc_topology_t), or nullptr before load() succeeded.
void* hwloc_handle() noexcept;

/// NUMA node (OS index) of the PU the calling thread is running on now; 0 when unknown.
int current_numa() noexcept;

/// "2 cores (2 PUs) on 1 NUMA node" for logs and the demo.
std::string describe();

}  // namespace mpc::topo
