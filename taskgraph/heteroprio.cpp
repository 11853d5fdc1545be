/// \file
/// heteroprio: buckets of ready tasks, each architecture taking them in its own order
/// (heteroprio.hpp for the configuration and the paper).

#include "taskgraph/heteroprio.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/detail.hpp"
#include "taskgraph/modular.hpp"

namespace mpc::tg {

const char* heteroprio_config::arch_name(int a) noexcept {
    static const char* const names[max_archs] = {"CPU", "CUDA", "OpenCL", "MIC", "MPI_MS"};
    return a >= 0 && a < max_archs ? names[a] : "?";
}

bool heteroprio_config::check(int nworkers, char* why, std::size_t len) const noexcept {
    int per_arch[max_archs] = {};
    for (int w = 0; w < nworkers && w < max_workers; ++w) {
        ++per_arch[worker_arch[w] % max_archs];
    }
    for (int a = 0; a < max_archs; ++a) {
        const char* an = arch_name(a);
        if (per_arch[a] > 0 && nprios[a] == 0) {
            std::snprintf(why, len, "the %s workers take no bucket: starpu_heteroprio_set_nb_prios(%s) was not called", an,
                          an);
            return false;
        }
        bool reached[max_buckets] = {};
        for (int i = 0; i < nprios[a]; ++i) {
            const int b = mapping[a][i];
            if ((archs[b] & (1u << a)) == 0) {  // only when never mapped: set_mapping marks its bucket
                std::snprintf(why, len,
                              "priority %d of %s has no bucket: starpu_heteroprio_set_mapping(%s, %d, bucket) was not "
                              "called, and bucket 0 is not %s's",
                              i, an, an, i, an);
                return false;
            }
            if (!(slow[b][a] >= 0)) {
                std::snprintf(why, len, "bucket %d: slow factor of %s %g is not >= 0", b, an, double(slow[b][a]));
                return false;
            }
            reached[b] = true;
        }
        for (int b = 0; b < max_buckets; ++b) {
            if ((archs[b] & (1u << a)) != 0 && !reached[b]) {
                int src = 0;
                while (src < max_buckets && !(mapped[a][src] && mapping[a][src] == b)) {
                    ++src;
                }
                std::snprintf(why, len,
                              "bucket %d is given to %s by starpu_heteroprio_set_mapping(%s, %d, %d), but %s walks only "
                              "its first %d priorities (starpu_heteroprio_set_nb_prios)",
                              b, an, an, src, b, an, nprios[a]);
                return false;
            }
        }
    }
    return true;
}

namespace modular {
namespace {

/// The default: one bucket per priority level, CPUs (every worker) take the highest first. The
/// policy's fast path, as it was before the configured buckets existed.
class heteroprio_levels final : public component {
public:
    int push(task* t) noexcept override {
        int b = std::clamp(t->priority, min_priority, max_priority) - min_priority;
        spin_guard g(lock_);
        buckets_[b].push_back(t);
        size_.fetch_add(1, std::memory_order_relaxed);
        return -1;
    }
    task* pull(int /*worker*/) noexcept override {
        if (size_.load(std::memory_order_relaxed) == 0) {
            return nullptr;
        }
        spin_guard g(lock_);
        for (int b = nlevels - 1; b >= 0; --b) {
            if (task* t = buckets_[b].pop_front(); t != nullptr) {
                size_.fetch_sub(1, std::memory_order_relaxed);
                return t;
            }
        }
        return nullptr;
    }
    bool can_pull(int /*worker*/) const noexcept override { return size_.load(std::memory_order_relaxed) != 0; }

private:
    static constexpr int nlevels = max_priority - min_priority + 1;
    spinlock lock_;
    sched::detail::fifo<task> buckets_[nlevels];
    std::atomic<long> size_{0};
};

/// Buckets set up by the application (heteroprio_config): a task's priority is its bucket, each
/// architecture walks its own list of buckets.
class heteroprio_buckets final : public component {
public:
    heteroprio_buckets(int nworkers, const heteroprio_config& c)
        : arch_of_(static_cast<std::size_t>(nworkers), 0), order_(heteroprio_config::max_archs) {
        for (int w = 0; w < nworkers; ++w) {
            arch_of_[static_cast<std::size_t>(w)] = c.worker_arch[w] % heteroprio_config::max_archs;
            ++per_arch_[arch_of_[static_cast<std::size_t>(w)]];
        }
        for (int a = 0; a < heteroprio_config::max_archs; ++a) {
            for (int i = 0; i < c.nprios[a]; ++i) {
                const int b = c.mapping[a][i];
                order_[static_cast<std::size_t>(a)].push_back(b);
                buckets_[b].taken |= per_arch_[a] > 0;
            }
        }
        for (int b = 0; b < heteroprio_config::max_buckets; ++b) {
            buckets_[b].faster = c.faster[b];
            std::copy(c.slow[b], c.slow[b] + heteroprio_config::max_archs, buckets_[b].slow);
        }
    }

    int push(task* t) noexcept override {
        const int b = t->priority;
        if (b < 0 || b >= heteroprio_config::max_buckets || !buckets_[b].taken) {
            no_bucket(t);
        }
        spin_guard g(lock_);
        buckets_[b].q.push_back(t);
        ++buckets_[b].n;
        size_.fetch_add(1, std::memory_order_relaxed);
        return -1;
    }

    task* pull(int worker) noexcept override {
        if (size_.load(std::memory_order_relaxed) == 0) {
            return nullptr;
        }
        const int a = arch_of_[static_cast<std::size_t>(worker)];
        spin_guard g(lock_);
        for (int b : order_[static_cast<std::size_t>(a)]) {
            bucket& k = buckets_[b];
            if (k.n != 0 && may_take(k, a)) {
                task* t = k.q.pop_front();
                --k.n;
                size_.fetch_sub(1, std::memory_order_relaxed);
                return t;
            }
        }
        return nullptr;
    }

    bool can_pull(int /*worker*/) const noexcept override { return size_.load(std::memory_order_relaxed) != 0; }

private:
    struct bucket {
        sched::detail::fifo<task> q;
        long n = 0;          ///< under lock_
        bool taken = false;  ///< an architecture with workers walks it
        int faster = 0;      ///< 0 (the CPUs): none, as in StarPU
        float slow[heteroprio_config::max_archs] = {};
    };

    /// StarPU's rule: a slower architecture takes from a bucket only while the bucket holds at
    /// least `slow factor` tasks per worker of its faster architecture.
    bool may_take(const bucket& k, int a) const noexcept {
        if (k.faster == 0 || k.faster == a || per_arch_[k.faster] == 0) {
            return true;
        }
        return static_cast<float>(k.n) / static_cast<float>(per_arch_[k.faster]) >= k.slow[a];
    }

    [[noreturn]] static void no_bucket(const task* t) noexcept {
        MPC_LOG(fatal, tg,
                "heteroprio: task %s has priority %d, which is no bucket any worker takes (priorities are bucket "
                "numbers, 0 to %d, given to an architecture with starpu_heteroprio_set_mapping)",
                t->name != nullptr ? t->name : "(unnamed)", t->priority, heteroprio_config::max_buckets - 1);
        std::abort();
    }

    spinlock lock_;
    bucket buckets_[heteroprio_config::max_buckets];
    std::vector<int> arch_of_;
    std::vector<std::vector<int>> order_;  ///< per architecture: buckets in the order taken
    int per_arch_[heteroprio_config::max_archs] = {};
    std::atomic<long> size_{0};
};

}  // namespace
}  // namespace modular

std::unique_ptr<policy> make_heteroprio(const policy_context& ctx) {
    std::vector<std::unique_ptr<modular::component>> parts;
    if (ctx.heteroprio != nullptr) {
        parts.push_back(std::make_unique<modular::heteroprio_buckets>(ctx.nworkers, *ctx.heteroprio));
    } else {
        parts.push_back(std::make_unique<modular::heteroprio_levels>());
    }
    modular::component* root = parts.back().get();
    std::vector<modular::component*> leaves(static_cast<std::size_t>(ctx.nworkers), root);
    return std::make_unique<modular::tree_policy>(std::move(parts), root, std::move(leaves), false);
}

}  // namespace mpc::tg
