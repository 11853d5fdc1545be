#include "mpi_compat/coll/nbc.hpp"

#include <memory>
#include <new>

#include "lib/log.hpp"
#include "mpi_compat/coll/hier_nb.hpp"
#include "mpi_compat/coll/shm.hpp"
#include "mpi_compat/comm.hpp"
#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/match.hpp"

namespace mpc::mpi::coll::nbc {

job::~job() {
    for (const datatype* t : types_) {
        datatype::release(t);
    }
    if (comm_ != nullptr) {
        release_comm(comm_);
    }
}

void job::hold_comm(const comm* c) noexcept {
    if (comm_ == nullptr) {
        comm_ = const_cast<comm*>(c);  // the reference count is the object's lifetime, not its value
        retain_comm(comm_);
    }
}

bool job::hold_type(const datatype* t) noexcept {
    if (t == nullptr || t->is_predefined()) {
        return true;
    }
    try {
        types_.push_back(t);
    } catch (const std::bad_alloc&) {
        return false;
    }
    t->retain();
    return true;
}

namespace {

struct record {
    std::unique_ptr<job> j;
    task* self;
    request* r;
};

void body(void* p) noexcept {
    auto* rec = static_cast<record*>(p);
    if (sched::self() != nullptr) {
        sched::set_task(sched::self(), rec->self);  // current() is the rank in here
    }
    request* r = rec->r;
    int err = rec->j->run();
    delete rec;  // drops the job's references before the request completes
    if (err != job::completed_elsewhere) {
        set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, err);
        r->complete();
    }
}

/// A collective of coll.hpp's kinds: its args, run by execute().
class coll_job final : public job {
public:
    /// In the caller, in call order: a hierarchical call reserves its local sequence numbers.
    explicit coll_job(const args& a) noexcept : a_(a) { prepare_nonblocking(a_, &local_seq_); }
    int run() noexcept override { return execute(a_); }

    /// Holds what the user may free before completion; false when out of memory.
    bool hold_all() noexcept {
        hold_comm(a_.c);
        if (!hold_type(a_.stype) || !hold_type(a_.rtype) || !hold_type(a_.red_user_type)) {
            return false;
        }
        return a_.k != kind::alltoallw || hold_w_types();
    }

private:
    /// Alltoallw: its types are handles, one per peer; resolve and hold them now.
    bool hold_w_types() noexcept {
        std::size_t peers = a_.c->is_inter ? a_.c->remote_group(*a_.self).size() : static_cast<std::size_t>(a_.size);
        try {
            if (!a_.in_place) {
                stypes_.resize(peers);
            }
            rtypes_.resize(peers);
        } catch (const std::bad_alloc&) {
            return false;
        }
        for (std::size_t i = 0; i < peers; ++i) {
            if (!a_.in_place) {
                stypes_[i] = datatype_from_handle(a_.stypes[i]);
                if (!hold_type(stypes_[i])) {
                    return false;
                }
            }
            rtypes_[i] = datatype_from_handle(a_.rtypes[i]);
            if (!hold_type(rtypes_[i])) {
                return false;
            }
        }
        a_.stype_ptrs = a_.in_place ? nullptr : stypes_.data();
        a_.rtype_ptrs = rtypes_.data();
        return true;
    }

    args a_;
    std::uint64_t local_seq_ = 0;  ///< a_.local_seq points here (hierarchical calls)
    std::vector<const datatype*> stypes_;
    std::vector<const datatype*> rtypes_;
};

/// A small call that runs eagerly (shm::eager_runs, hier_nb::runs) whose slot still served an
/// older call when it was made: waits for the slot and arrives; the call's last member (in this
/// process, or the end of its between-process part) completes the request.
class eager_job final : public job {
public:
    eager_job(const args& a, const shm::eager_pos& p, request* r) noexcept : a_(a), p_(p), r_(r) {}
    /// Holds the communicator and the receive type (false when out of memory).
    bool hold_all() noexcept {
        hold_comm(a_.c);
        return hold_type(a_.rtype);
    }
    int run() noexcept override {
        shm::eager_arrive(a_, p_, r_);
        return completed_elsewhere;
    }

private:
    args a_;
    shm::eager_pos p_;
    request* r_;
};

/// A request for a non-blocking collective: a generalized request without callbacks, so that
/// Wait, Test and friends see its completion and its status (the error class of the
/// operation); MPI_Cancel does nothing to it.
request* new_request(task* self) noexcept {
    request* r = self->requests.alloc();
    if (r != nullptr) {
        r->kind = req_kind::generalized;
    }
    return r;
}

/// Starts j (owned from now on) in a thread of rank `self` that completes r.
int start_job(task* self, const char* name, std::unique_ptr<job> owned, request* r) noexcept {
    auto* rec = new (std::nothrow) record{std::move(owned), self, r};
    if (rec == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    sched::attr at;
    at.detached = true;
    at.name = name;
    // On the caller's VP, stealable: the caller that waits runs it itself (a switch) instead of
    // waking a sleeping VP and waiting for that thread to be scheduled (tens to hundreds of
    // microseconds on a loaded host, 1000x a small collective); an idle VP that is awake
    // steals it, so that it progresses while the caller computes.
    at.vp = sched::current_vp();
    at.stealable = true;
    // A VP that sleeps (it runs no rank, or its ranks wait) is woken to take it, so that the
    // operation progresses while its caller computes (docs/collectives.md, "Progress").
    at.offer = true;
    mpc::result<sched::ult*> u = sched::spawn(&body, rec, at);
    if (!u) {
        // No thread to run it in: run it now (it still completes: every member calls it).
        MPC_LOG(warn, mpi, "non-blocking %s runs blocking: %s", name, u.error().reason());
        body(rec);
    }
    return MPI_SUCCESS;
}

/// A small call completed by its last member to arrive (shm_nb.cpp; between processes, by the
/// end of its part between the processes' leaders, hier_nb.cpp): no thread unless its slot is
/// still busy. p: where the caller arrives.
[[gnu::always_inline]] inline int start_eager(const args& a, const shm::eager_pos& p, MPI_Request* req) noexcept {
    request* r = new_request(a.self);
    if (r == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    *req = request_pool::handle_of(r);
    if (shm::eager_try_arrive(a, p, r)) {
        return MPI_SUCCESS;
    }
    std::unique_ptr<eager_job> j(new (std::nothrow) eager_job(a, p, r));
    int err = j == nullptr || !j->hold_all() ? MPI_ERR_NO_MEM : start_job(a.self, kind_name(a.k), std::move(j), r);
    if (err != MPI_SUCCESS) {
        // Every member must arrive, or the others wait forever: arrive here, waiting (the
        // caller's request is not returned to it yet).
        shm::eager_arrive(a, p, r);
    }
    return MPI_SUCCESS;
}

}  // namespace

int start(task* self, const char* name, job* j, MPI_Request* req) noexcept {
    std::unique_ptr<job> owned(j);
    request* r = new_request(self);
    if (r == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    int err = start_job(self, name, std::move(owned), r);
    if (err != MPI_SUCCESS) {
        self->requests.release(r);
        return err;
    }
    *req = request_pool::handle_of(r);
    return MPI_SUCCESS;
}

int start(const args& a, MPI_Request* req) noexcept {
    if (shm::eager_runs(a)) {
        return start_eager(a, shm::eager_here(a), req);
    }
    if (hier_nb::runs(a)) {
        return start_eager(a, hier_nb::position(a), req);
    }
    auto* j = new (std::nothrow) coll_job(a);
    if (j == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    if (!j->hold_all()) {
        delete j;
        return MPI_ERR_NO_MEM;
    }
    return start(a.self, kind_name(a.k), j, req);
}

}  // namespace mpc::mpi::coll::nbc
