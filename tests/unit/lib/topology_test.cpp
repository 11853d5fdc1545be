// Machine topology and VP placement (lib/topology.hpp).
#include "lib/topology.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace mpc;
using mpc::topo::placement;

/// The CPUs this process may run on, as the kernel says.
std::set<int> affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::set<int> out;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &set)) {
                out.insert(c);
            }
        }
    }
    return out;
}

class Topology : public ::testing::Test {
protected:
    void SetUp() override {
        status st = topo::load();
        ASSERT_TRUE(st.ok()) << st.reason();
    }
};

TEST_F(Topology, LoadIsIdempotent) {
    EXPECT_TRUE(topo::load().ok());
    EXPECT_TRUE(topo::load().ok());
}

TEST_F(Topology, InfoIsSane) {
    const topo::summary& s = topo::info();
    EXPECT_GE(s.allowed_cores, 1);
    EXPECT_GE(s.allowed_pus, s.allowed_cores);
    EXPECT_GE(s.numa_nodes, 1);
    EXPECT_LE(s.numa_nodes, s.allowed_cores);
    const std::set<int> cpus = affinity_cpus();
    ASSERT_FALSE(cpus.empty());
    EXPECT_EQ(static_cast<std::size_t>(s.allowed_pus), cpus.size())
        << "allowed PUs must be the process's affinity mask";
    const std::string d = topo::describe();
    EXPECT_NE(d.find(std::to_string(s.allowed_cores) + " core"), std::string::npos) << d;
}

struct plan_case {
    const char* what;  // "1", "cores", "2cores+1"
    placement policy;
};

class TopologyPlan : public Topology, public ::testing::WithParamInterface<plan_case> {
protected:
    int vps_for(const char* what) const {
        const topo::summary& s = topo::info();
        std::string w = what;
        if (w == "1") {
            return 1;
        }
        if (w == "cores") {
            return s.allowed_cores;
        }
        if (w == "pus") {
            return s.allowed_pus;
        }
        return 2 * s.allowed_cores + 1;
    }
};

TEST_P(TopologyPlan, PlacesAreValid) {
    const topo::summary& s = topo::info();
    const int n = vps_for(GetParam().what);
    const std::vector<topo::place> p = topo::plan(n, GetParam().policy);
    ASSERT_EQ(p.size(), static_cast<std::size_t>(n));
    const std::set<int> cpus = affinity_cpus();

    std::set<int> cores_seen;
    std::set<int> pus_seen;
    for (int i = 0; i < n; ++i) {
        const topo::place& pl = p[static_cast<std::size_t>(i)];
        SCOPED_TRACE("VP " + std::to_string(i) + " pu " + std::to_string(pl.pu) + " core " + std::to_string(pl.core));
        EXPECT_GE(pl.pu, 0);
        EXPECT_EQ(cpus.count(pl.pu), 1u) << "placed on a PU outside the affinity mask";
        EXPECT_GE(pl.core, 0);
        EXPECT_GE(pl.numa, 0);
        if (i < s.allowed_cores) {
            EXPECT_TRUE(cores_seen.insert(pl.core).second) << "the first allowed_cores VPs must use distinct cores";
        }
        if (i < s.allowed_pus) {
            EXPECT_TRUE(pus_seen.insert(pl.pu).second) << "a PU is reused before every PU has a VP";
            EXPECT_FALSE(pl.shared) << "shared set although free PUs remain";
        } else {
            EXPECT_TRUE(pl.shared) << "wrapped beyond the allowed PUs but not marked shared";
            EXPECT_EQ(pus_seen.count(pl.pu), 1u);
        }
    }
    if (n >= s.allowed_cores) {
        EXPECT_EQ(cores_seen.size(), static_cast<std::size_t>(s.allowed_cores));
    }
}

TEST_P(TopologyPlan, WrapsInTheSameOrder) {
    const topo::summary& s = topo::info();
    const int n = vps_for(GetParam().what);
    const std::vector<topo::place> p = topo::plan(n, GetParam().policy);
    ASSERT_EQ(p.size(), static_cast<std::size_t>(n));
    for (int i = s.allowed_pus; i < n; ++i) {
        EXPECT_EQ(p[static_cast<std::size_t>(i)].pu, p[static_cast<std::size_t>(i - s.allowed_pus)].pu) << "VP " << i;
    }
    // A plan is a prefix of any longer plan with the same policy.
    const std::vector<topo::place> longer = topo::plan(n + 3, GetParam().policy);
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(longer[static_cast<std::size_t>(i)].pu, p[static_cast<std::size_t>(i)].pu) << "VP " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Lib, TopologyPlan,
                         ::testing::Values(plan_case{"1", placement::compact}, plan_case{"1", placement::scatter},
                                           plan_case{"cores", placement::compact},
                                           plan_case{"cores", placement::scatter},
                                           plan_case{"pus", placement::compact}, plan_case{"pus", placement::scatter},
                                           plan_case{"2cores+1", placement::compact},
                                           plan_case{"2cores+1", placement::scatter}),
                         [](const auto& pinfo) {
                             std::string n = pinfo.param.what;
                             for (char& c : n) {
                                 if (c == '+') {
                                     c = 'p';
                                 }
                             }
                             return n + (pinfo.param.policy == placement::compact ? "_compact" : "_scatter");
                         });

TEST_F(Topology, PlanZeroIsEmpty) {
    EXPECT_TRUE(topo::plan(0, placement::compact).empty());
    EXPECT_TRUE(topo::plan(0, placement::scatter).empty());
}

TEST_F(Topology, BindThisThreadPinsIt) {
    const std::vector<topo::place> p = topo::plan(topo::info().allowed_pus, placement::compact);
    const topo::place target = p.back();
    status st;
    int cpu_after = -2;
    int numa_after = -2;
    std::thread t([&] {
        st = topo::bind_this_thread(target);
        cpu_after = sched_getcpu();
        numa_after = topo::current_numa();
    });
    t.join();
    ASSERT_TRUE(st.ok()) << st.reason();
    EXPECT_EQ(cpu_after, target.pu);
    EXPECT_EQ(numa_after, target.numa);
}

TEST_F(Topology, BindRejectsInvalidPlace) {
    topo::place bad;  // pu = -1
    status st;
    std::thread t([&] { st = topo::bind_this_thread(bad); });
    t.join();
    EXPECT_FALSE(st.ok());
}

TEST_F(Topology, CorePusCoverTheAffinityMask) {
    const std::vector<std::vector<int>> cores = topo::core_pus();
    ASSERT_EQ(cores.size(), static_cast<std::size_t>(topo::info().allowed_cores));
    std::set<int> all;
    for (const auto& pus : cores) {
        EXPECT_FALSE(pus.empty());
        for (int pu : pus) {
            EXPECT_TRUE(all.insert(pu).second) << "PU " << pu << " in two cores";
        }
    }
    EXPECT_EQ(all, affinity_cpus());
}

/// Process shares: for every process count up to 3x the cores, the shares are non-empty, made
/// of whole cores, disjoint while there are enough cores, cover every core, and at most one
/// core apart in size; beyond the core count each process gets one core, spread evenly.
TEST_F(Topology, ProcessSharesSplitTheCores) {
    const std::vector<std::vector<int>> cores = topo::core_pus();
    const int c = static_cast<int>(cores.size());
    std::map<int, int> core_of;
    for (int k = 0; k < c; ++k) {
        for (int pu : cores[static_cast<std::size_t>(k)]) {
            core_of[pu] = k;
        }
    }
    for (int count = 1; count <= 3 * c; ++count) {
        SCOPED_TRACE("processes " + std::to_string(count));
        std::vector<int> uses(static_cast<std::size_t>(c), 0);
        std::size_t smallest = SIZE_MAX, largest = 0;
        for (int i = 0; i < count; ++i) {
            const std::vector<int> share = topo::process_share(i, count);
            ASSERT_FALSE(share.empty());
            std::set<int> share_cores;
            for (int pu : share) {
                ASSERT_EQ(core_of.count(pu), 1u) << "PU " << pu << " is not allowed";
                share_cores.insert(core_of[pu]);
            }
            std::size_t pus_in_share_cores = 0;
            for (int k : share_cores) {
                pus_in_share_cores += cores[static_cast<std::size_t>(k)].size();
                ++uses[static_cast<std::size_t>(k)];
            }
            EXPECT_EQ(share.size(), pus_in_share_cores) << "a share must hold whole cores";
            smallest = std::min(smallest, share_cores.size());
            largest = std::max(largest, share_cores.size());
        }
        EXPECT_LE(largest - smallest, 1u);
        for (int k = 0; k < c; ++k) {
            EXPECT_GE(uses[static_cast<std::size_t>(k)], 1) << "core " << k << " unused";
            if (count <= c) {
                EXPECT_EQ(uses[static_cast<std::size_t>(k)], 1) << "core " << k << " shared with enough cores";
            } else {
                EXPECT_LE(uses[static_cast<std::size_t>(k)], (count + c - 1) / c) << "core " << k << " overloaded";
            }
        }
    }
    EXPECT_TRUE(topo::process_share(0, 0).empty());
    EXPECT_TRUE(topo::process_share(2, 2).empty());
    EXPECT_TRUE(topo::process_share(-1, 2).empty());
}

}  // namespace
