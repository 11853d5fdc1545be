/// \file
/// StarPU's task bundles (starpu_task_bundle.h): a list of tasks, under its own lock, that the
/// model-based policies place for the bundle's expected length (modular.cpp's heft choice, through
/// set_bundle_length_hook). A task leaves its bundle when it is removed, cleaned or destroyed;
/// a closed bundle is freed once empty.

#include <starpu.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <mutex>
#include <new>
#include <vector>

#include "taskgraph/detail.hpp"
#include "taskgraph/starpu_glue.hpp"

struct mpc_starpu_task_bundle {
    std::mutex m;
    std::vector<starpu_task*> tasks;
    bool closed = false;
};

namespace mpc::tg::starpu {
namespace {

/// Whether a policy has placed t's current submission (it no longer counts in the bundle's
/// length, StarPU's `scheduled`).
bool placed(const starpu_task* t) noexcept {
    const auto* core = static_cast<const task*>(__atomic_load_n(&t->starpu_private, __ATOMIC_ACQUIRE));
    return core != nullptr && __atomic_load_n(&core->sched_worker, __ATOMIC_RELAXED) >= 0;
}

/// The length of b's tasks not placed yet (b->m held).
double length_locked(mpc_starpu_task_bundle* b, starpu_perfmodel_arch* arch, unsigned nimpl) noexcept {
    double sum = 0;
    for (starpu_task* t : b->tasks) {
        if (!placed(t)) {
            const double l = starpu_task_expected_length(t, arch, nimpl);
            if (l > 0) {  // uncalibrated (NaN) counts nothing, as in StarPU
                sum += l;
            }
        }
    }
    return sum;
}

double bundle_length(const void* bundle) noexcept {
    auto* b = static_cast<mpc_starpu_task_bundle*>(const_cast<void*>(bundle));
    std::lock_guard g(b->m);
    return length_locked(b, nullptr, 0);
}

}  // namespace

void leave_bundle(starpu_task* t) noexcept {
    if (t->bundle != nullptr) {
        starpu_task_bundle_remove(t->bundle, t);
    }
}

}  // namespace mpc::tg::starpu

extern "C" {

void starpu_task_bundle_create(starpu_task_bundle_t* bundle) {
    auto* b = new (std::nothrow) mpc_starpu_task_bundle;
    if (b == nullptr) {
        mpc::tg::starpu::fatal("starpu_task_bundle_create", "no memory for a bundle");
    }
    static std::once_flag hooked;
    std::call_once(hooked, [] { mpc::tg::set_bundle_length_hook(&mpc::tg::starpu::bundle_length); });
    *bundle = b;
}

int starpu_task_bundle_insert(starpu_task_bundle_t bundle, struct starpu_task* task) {
    if (bundle == nullptr || task == nullptr) {
        return -EINVAL;
    }
    std::lock_guard g(bundle->m);
    if (bundle->closed) {
        return -EPERM;
    }
    if (task->status != STARPU_TASK_INIT) {
        return -EINVAL;  // submitted already: too late to join
    }
    if (task->bundle != nullptr && task->bundle != bundle) {
        return -EINVAL;
    }
    try {
        bundle->tasks.push_back(task);
    } catch (...) {
        mpc::tg::starpu::fatal("starpu_task_bundle_insert", "no memory for a bundle entry");
    }
    task->bundle = bundle;
    return 0;
}

int starpu_task_bundle_remove(starpu_task_bundle_t bundle, struct starpu_task* task) {
    if (bundle == nullptr || task == nullptr) {
        return -ENOENT;
    }
    bool free_it = false;
    {
        std::lock_guard g(bundle->m);
        auto it = std::find(bundle->tasks.begin(), bundle->tasks.end(), task);
        if (it == bundle->tasks.end()) {
            return -ENOENT;
        }
        bundle->tasks.erase(it);
        task->bundle = nullptr;
        free_it = bundle->closed && bundle->tasks.empty();
    }
    if (free_it) {
        delete bundle;
    }
    return 0;
}

void starpu_task_bundle_close(starpu_task_bundle_t bundle) {
    if (bundle == nullptr) {
        return;
    }
    bool free_it = false;
    {
        std::lock_guard g(bundle->m);
        bundle->closed = true;
        free_it = bundle->tasks.empty();
    }
    if (free_it) {
        delete bundle;
    }
}

double starpu_task_bundle_expected_length(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch* arch,
                                          unsigned nimpl) {
    std::lock_guard g(bundle->m);
    return mpc::tg::starpu::length_locked(bundle, arch, nimpl);
}

double starpu_task_bundle_expected_energy(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch* arch,
                                          unsigned nimpl) {
    std::lock_guard g(bundle->m);
    double sum = 0;
    for (starpu_task* t : bundle->tasks) {
        const double e = starpu_task_expected_energy(t, arch, nimpl);
        if (e > 0) {
            sum += e;
        }
    }
    return sum;
}

double starpu_task_bundle_expected_data_transfer_time(starpu_task_bundle_t /*bundle*/, unsigned /*memory_node*/) {
    return 0.0;  // one memory node: nothing moves
}

}  // extern "C"
