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

/// The policy's one component: the buckets, shared by every worker (each worker's leaf is it).
class heteroprio_root final : public component {
public:
    /// c == nullptr: one bucket per priority level, CPUs highest first.
    heteroprio_root(int nworkers, const heteroprio_config* c)
        : configured_(c != nullptr),
          buckets_(static_cast<std::size_t>(c != nullptr ? heteroprio_config::max_buckets : nlevels)),
          arch_of_(static_cast<std::size_t>(nworkers), 0),
          order_(heteroprio_config::max_archs) {
        if (c == nullptr) {
            for (int b = nlevels - 1; b >= 0; --b) {
                order_[0].push_back(b);
            }
            return;
        }
        for (int w = 0; w < nworkers; ++w) {
            arch_of_[static_cast<std::size_t>(w)] = c->worker_arch[w] % heteroprio_config::max_archs;
            ++per_arch_[arch_of_[static_cast<std::size_t>(w)]];
        }
        for (int a = 0; a < heteroprio_config::max_archs; ++a) {
            for (int i = 0; i < c->nprios[a]; ++i) {
                const int b = c->mapping[a][i];
                order_[static_cast<std::size_t>(a)].push_back(b);
                buckets_[static_cast<std::size_t>(b)].taken |= per_arch_[a] > 0;
            }
        }
        for (int b = 0; b < heteroprio_config::max_buckets; ++b) {
            bucket& k = buckets_[static_cast<std::size_t>(b)];
            k.faster = c->faster[b];
            std::copy(c->slow[b], c->slow[b] + heteroprio_config::max_archs, k.slow);
        }
    }

    int push(task* t) noexcept override {
        int b = 0;
        if (!configured_) {
            b = std::clamp(t->priority, min_priority, max_priority) - min_priority;
        } else {
            b = t->priority;
            if (b < 0 || b >= heteroprio_config::max_buckets || !buckets_[static_cast<std::size_t>(b)].taken) {
                no_bucket(t);
            }
        }
        bucket& k = buckets_[static_cast<std::size_t>(b)];
        spin_guard g(lock_);
        k.q.push_back(t);
        ++k.n;
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
            bucket& k = buckets_[static_cast<std::size_t>(b)];
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
    static constexpr int nlevels = max_priority - min_priority + 1;

    struct bucket {
        sched::detail::fifo<task> q;
        long n = 0;          ///< under lock_
        bool taken = false;  ///< configured: an architecture with workers walks it
        int faster = 0;
        float slow[heteroprio_config::max_archs] = {};
    };

    /// StarPU's rule: a slower architecture takes from a bucket only while the bucket holds at
    /// least `slow factor` tasks per worker of its fastest architecture.
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

    const bool configured_;
    spinlock lock_;
    std::vector<bucket> buckets_;
    std::vector<int> arch_of_;
    std::vector<std::vector<int>> order_;  ///< per architecture: buckets in the order taken
    int per_arch_[heteroprio_config::max_archs] = {};
    std::atomic<long> size_{0};
};

}  // namespace
}  // namespace modular

std::unique_ptr<policy> make_heteroprio(const policy_context& ctx) {
    std::vector<std::unique_ptr<modular::component>> parts;
    parts.push_back(std::make_unique<modular::heteroprio_root>(ctx.nworkers, ctx.heteroprio));
    modular::component* root = parts.back().get();
    std::vector<modular::component*> leaves(static_cast<std::size_t>(ctx.nworkers), root);
    return std::make_unique<modular::tree_policy>(std::move(parts), root, std::move(leaves), false);
}

}  // namespace mpc::tg
