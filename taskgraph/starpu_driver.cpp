/// \file
/// StarPU's driver API (starpu_driver.h): CPU workers listed in starpu_conf::not_launched_drivers
/// run in threads of the application. The core (runtime.cpp, driver_*) starts no ULT for them;
/// these calls map a struct starpu_driver onto its worker (a CPU worker's cpu_id is its number,
/// as starpu_worker_get_devid answers) and StarPU's error convention (-EINVAL for any refusal,
/// the reason logged by the core).
#include <starpu.h>

#include <cerrno>

#include "lib/log.hpp"
#include "taskgraph/tg.hpp"

using namespace mpc::tg;

namespace {

/// d's worker, or -1 (logged) when d names none the application may run.
int worker_of(const starpu_driver* d, const char* call) noexcept {
    if (d == nullptr) {
        MPC_LOG(error, tg, "%s: NULL driver", call);
        return -1;
    }
    if (d->type != STARPU_CPU_WORKER) {
        MPC_LOG(error, tg, "%s: a driver of type %d; only CPU workers (STARPU_CPU_WORKER) exist", call,
                static_cast<int>(d->type));
        return -1;
    }
    if (!running()) {
        MPC_LOG(error, tg, "%s: StarPU is not initialised (or shut down)", call);
        return -1;
    }
    if (d->id.cpu_id >= static_cast<unsigned>(worker_count())) {
        MPC_LOG(error, tg, "%s: no CPU worker %u (workers 0..%d)", call, d->id.cpu_id, worker_count() - 1);
        return -1;
    }
    return static_cast<int>(d->id.cpu_id);
}

int rc(const mpc::status& st) noexcept { return st.ok() ? 0 : -EINVAL; }

}  // namespace

int starpu_driver_run(struct starpu_driver* d) {
    const int w = worker_of(d, "starpu_driver_run");
    return w < 0 ? -EINVAL : rc(driver_run(w));
}

void starpu_drivers_request_termination(void) { drivers_request_termination(); }

int starpu_driver_init(struct starpu_driver* d) {
    const int w = worker_of(d, "starpu_driver_init");
    return w < 0 ? -EINVAL : rc(driver_init(w));
}

int starpu_driver_run_once(struct starpu_driver* d) {
    const int w = worker_of(d, "starpu_driver_run_once");
    return w < 0 ? -EINVAL : rc(driver_run_once(w));
}

int starpu_driver_deinit(struct starpu_driver* d) {
    const int w = worker_of(d, "starpu_driver_deinit");
    return w < 0 ? -EINVAL : rc(driver_deinit(w));
}
