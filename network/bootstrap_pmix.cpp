/// \file
/// The bootstrap under a resource manager: PMIx (OpenPMIx 4, Debian's libpmix), as started by
/// `srun --mpi=pmix`, prterun or any PMIx server. The process index is the PMIx rank, the count
/// the job size; an all-gather is a Put of each blob under a key of its round, a Commit and a
/// Fence that collects the data, then one Get per process; a barrier is a Fence without data.
/// Tested under a one-node Slurm (scripts/slurm-up.sh, ctest label `slurm`).

#include <pmix.h>

#include <cstdio>
#include <cstring>
#include <new>

#include "lib/log.hpp"
#include "network/bootstrap.hpp"

namespace mpc::net {

namespace {

class pmix_bootstrap final : public bootstrap {
public:
    ~pmix_bootstrap() override {
        if (initialized_) {
            PMIx_Finalize(nullptr, 0);
        }
    }

    status init() noexcept {
        pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
        if (rc != PMIX_SUCCESS) {
            MPC_LOG(error, net, "PMIx_Init failed: %s", PMIx_Error_string(rc));
            return {errc::system, "bootstrap: PMIx_Init failed (is a PMIx server running? srun --mpi=pmix)"};
        }
        initialized_ = true;
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me_.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t* v = nullptr;
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v);
        if (rc != PMIX_SUCCESS || v == nullptr || v->type != PMIX_UINT32) {
            MPC_LOG(error, net, "PMIx_Get(PMIX_JOB_SIZE) failed: %s", PMIx_Error_string(rc));
            if (v != nullptr) {
                PMIX_VALUE_RELEASE(v);
            }
            return {errc::system, "bootstrap: PMIx does not give the job size"};
        }
        count_ = static_cast<int>(v->data.uint32);
        PMIX_VALUE_RELEASE(v);
        index_ = static_cast<int>(me_.rank);
        if (index_ < 0 || index_ >= count_) {
            return {errc::internal, "bootstrap: PMIx gave a rank outside the job"};
        }
        return {};
    }

    int index() const noexcept override { return index_; }
    int count() const noexcept override { return count_; }
    const char* name() const noexcept override { return "pmix"; }

    status allgather(std::span<const std::byte> mine, std::vector<blob>& all) noexcept override {
        char key[PMIX_MAX_KEYLEN + 1];
        std::snprintf(key, sizeof key, "mpc.ag.%u", round_++);
        // One leading byte: an empty blob is still a non-empty byte object.
        std::vector<char> data;
        try {
            data.resize(mine.size() + 1);
        } catch (const std::bad_alloc&) {
            return {errc::no_memory, "bootstrap: no memory for the all-gather"};
        }
        data[0] = 1;
        if (!mine.empty()) {
            std::memcpy(data.data() + 1, mine.data(), mine.size());
        }
        pmix_value_t val;
        PMIX_VALUE_CONSTRUCT(&val);
        val.type = PMIX_BYTE_OBJECT;
        val.data.bo.bytes = data.data();
        val.data.bo.size = data.size();
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);  // copies the value
        val.data.bo.bytes = nullptr;                           // not ours to free through PMIx
        val.data.bo.size = 0;
        if (rc == PMIX_SUCCESS) {
            rc = PMIx_Commit();
        }
        if (rc == PMIX_SUCCESS) {
            rc = fence(true);
        }
        if (rc != PMIX_SUCCESS) {
            MPC_LOG(error, net, "PMIx all-gather (Put/Commit/Fence) failed: %s", PMIx_Error_string(rc));
            return {errc::system, "bootstrap: the PMIx all-gather failed"};
        }
        std::vector<blob> out;
        try {
            out.resize(static_cast<std::size_t>(count_));
            for (int r = 0; r < count_; ++r) {
                pmix_proc_t peer;
                PMIX_LOAD_PROCID(&peer, me_.nspace, static_cast<pmix_rank_t>(r));
                pmix_value_t* v = nullptr;
                rc = PMIx_Get(&peer, key, nullptr, 0, &v);
                if (rc != PMIX_SUCCESS || v == nullptr || v->type != PMIX_BYTE_OBJECT || v->data.bo.size == 0) {
                    MPC_LOG(error, net, "PMIx_Get of process %d's blob failed: %s", r, PMIx_Error_string(rc));
                    if (v != nullptr) {
                        PMIX_VALUE_RELEASE(v);
                    }
                    return {errc::system, "bootstrap: a process's blob is missing from PMIx"};
                }
                const auto* b = reinterpret_cast<const std::byte*>(v->data.bo.bytes);
                out[static_cast<std::size_t>(r)].assign(b + 1, b + v->data.bo.size);
                PMIX_VALUE_RELEASE(v);
            }
        } catch (const std::bad_alloc&) {
            return {errc::no_memory, "bootstrap: no memory for the all-gather"};
        }
        all = std::move(out);
        return {};
    }

    status barrier() noexcept override {
        pmix_status_t rc = fence(false);
        if (rc != PMIX_SUCCESS) {
            MPC_LOG(error, net, "PMIx_Fence failed: %s", PMIx_Error_string(rc));
            return {errc::system, "bootstrap: the PMIx barrier failed"};
        }
        return {};
    }

    void abort(int code, const char* why) noexcept override {
        PMIx_Abort(code, why != nullptr ? why : "", nullptr, 0);
    }

    status finalize() noexcept override {
        if (initialized_) {
            initialized_ = false;
            pmix_status_t rc = PMIx_Finalize(nullptr, 0);
            if (rc != PMIX_SUCCESS) {
                MPC_LOG(error, net, "PMIx_Finalize failed: %s", PMIx_Error_string(rc));
                return {errc::system, "bootstrap: PMIx_Finalize failed"};
            }
        }
        return {};
    }

private:
    pmix_status_t fence(bool collect) noexcept {
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me_.nspace, PMIX_RANK_WILDCARD);
        if (!collect) {
            return PMIx_Fence(&wild, 1, nullptr, 0);
        }
        pmix_info_t info;
        bool yes = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        pmix_status_t rc = PMIx_Fence(&wild, 1, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        return rc;
    }

    pmix_proc_t me_{};
    bool initialized_ = false;
    int index_ = 0;
    int count_ = 1;
    unsigned round_ = 0;
};

}  // namespace

result<std::unique_ptr<bootstrap>> connect_pmix_bootstrap() noexcept {
    auto b = std::unique_ptr<pmix_bootstrap>(new (std::nothrow) pmix_bootstrap());
    if (b == nullptr) {
        return status{errc::no_memory, "bootstrap: no memory"};
    }
    if (status st = b->init(); !st) {
        return st;
    }
    return std::unique_ptr<bootstrap>(std::move(b));
}

}  // namespace mpc::net
