/// \file
/// StarPU 1.3 API: heteroprio's configuration calls (starpu_heteroprio.h). starpu_init() hands
/// the core a setup function (config::heteroprio_setup) when starpu_conf::sched_policy_init is
/// set; the core calls it while heteroprio starts, and it runs the application's callback with
/// the configuration being filled in reach of the starpu_heteroprio_set_* calls.

#include <starpu.h>
#include <starpu_heteroprio.h>

#include <atomic>
#include <cmath>
#include <cstdio>

#include "lib/log.hpp"
#include "taskgraph/heteroprio.hpp"
#include "taskgraph/starpu_glue.hpp"

namespace mpc::tg::starpu {
namespace {

static_assert(STARPU_HETEROPRIO_MAX_PRIO == heteroprio_config::max_buckets);
static_assert(STARPU_NB_TYPES == heteroprio_config::max_archs);

std::atomic<void (*)(unsigned)> g_user_init{nullptr};  ///< starpu_conf::sched_policy_init
std::atomic<heteroprio_config*> g_building{nullptr};    ///< set while the callback runs
std::atomic<int> g_building_workers{0};

/// The configuration being set up; stops the program when there is none or the call is bad.
heteroprio_config& building(const char* call, unsigned ctx, int arch) noexcept {
    heteroprio_config* c = g_building.load(std::memory_order_acquire);
    char why[160];
    if (c == nullptr) {
        fatal(call,
              "called outside the heteroprio policy's initialisation (starpu_conf::sched_policy_init, under "
              "STARPU_SCHED=heteroprio)");
    }
    if (ctx != 0) {
        std::snprintf(why, sizeof why, "scheduling context %u does not exist (there is one context, 0)", ctx);
        fatal(call, why);
    }
    if (arch < 0 || arch >= STARPU_NB_TYPES) {
        std::snprintf(why, sizeof why, "architecture index %d is not one of STARPU_CPU_IDX .. STARPU_MPI_MS_IDX", arch);
        fatal(call, why);
    }
    return *c;
}

void check_bucket(const char* call, const char* what, unsigned b) noexcept {
    if (b >= STARPU_HETEROPRIO_MAX_PRIO) {
        char why[160];
        std::snprintf(why, sizeof why, "%s %u is not below STARPU_HETEROPRIO_MAX_PRIO (%d)", what, b,
                      STARPU_HETEROPRIO_MAX_PRIO);
        fatal(call, why);
    }
}

}  // namespace

void heteroprio_setup(heteroprio_config* c, int nworkers) noexcept {
    void (*user)(unsigned) = g_user_init.load(std::memory_order_acquire);
    g_building_workers.store(nworkers, std::memory_order_relaxed);
    g_building.store(c, std::memory_order_release);
    user(0);
    g_building.store(nullptr, std::memory_order_release);
    g_building_workers.store(0, std::memory_order_relaxed);
}

void set_policy_init(void (*init)(unsigned)) noexcept { g_user_init.store(init, std::memory_order_release); }

void (*policy_init_of_ctx0() noexcept)(unsigned) { return g_user_init.load(std::memory_order_acquire); }

int heteroprio_setup_workers() noexcept { return g_building_workers.load(std::memory_order_relaxed); }

}  // namespace mpc::tg::starpu

using namespace mpc::tg;
namespace sp = mpc::tg::starpu;

extern "C" {

void starpu_heteroprio_set_nb_prios(unsigned sched_ctx_id, enum starpu_heteroprio_types arch, unsigned max_prio) {
    const char* call = "starpu_heteroprio_set_nb_prios";
    heteroprio_config& c = sp::building(call, sched_ctx_id, arch);
    sp::check_bucket(call, "the number of priorities", max_prio);
    c.nprios[arch] = static_cast<int>(max_prio);
}

void starpu_heteroprio_set_mapping(unsigned sched_ctx_id, enum starpu_heteroprio_types arch, unsigned source_prio,
                                   unsigned dest_bucket_id) {
    const char* call = "starpu_heteroprio_set_mapping";
    heteroprio_config& c = sp::building(call, sched_ctx_id, arch);
    sp::check_bucket(call, "priority", source_prio);
    sp::check_bucket(call, "bucket", dest_bucket_id);
    c.mapping[arch][source_prio] = static_cast<std::uint8_t>(dest_bucket_id);
    c.mapped[arch][source_prio] = true;
    c.archs[dest_bucket_id] |= 1u << arch;
}

void starpu_heteroprio_set_faster_arch(unsigned sched_ctx_id, enum starpu_heteroprio_types arch, unsigned bucket_id) {
    const char* call = "starpu_heteroprio_set_faster_arch";
    heteroprio_config& c = sp::building(call, sched_ctx_id, arch);
    sp::check_bucket(call, "bucket", bucket_id);
    c.faster[bucket_id] = static_cast<std::uint8_t>(arch);
    c.slow[bucket_id][arch] = 0;
}

void starpu_heteroprio_set_arch_slow_factor(unsigned sched_ctx_id, enum starpu_heteroprio_types arch,
                                            unsigned bucket_id, float slow_factor) {
    const char* call = "starpu_heteroprio_set_arch_slow_factor";
    heteroprio_config& c = sp::building(call, sched_ctx_id, arch);
    sp::check_bucket(call, "bucket", bucket_id);
    if (!(slow_factor >= 0) || std::isinf(slow_factor)) {
        char why[96];
        std::snprintf(why, sizeof why, "slow factor %g is not a finite number >= 0", double(slow_factor));
        sp::fatal(call, why);
    }
    c.slow[bucket_id][arch] = slow_factor;
}


}  // extern "C"
