#include "mpi_compat/coll/nbc.hpp"

#include <new>

#include "lib/log.hpp"
#include "mpi_compat/match.hpp"

namespace mpc::mpi::coll::nbc {
namespace {

struct record {
    args a;
    request* r;
};

void body(void* p) noexcept {
    auto* rec = static_cast<record*>(p);
    if (sched::self() != nullptr) {
        sched::set_task(sched::self(), rec->a.self);  // current() is the rank in here
    }
    request* r = rec->r;
    int err = execute(rec->a);
    delete rec;
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, err);
    r->complete();
}

}  // namespace

int start(const args& a, MPI_Request* req) noexcept {
    request* r = a.self->requests.alloc();
    if (r == nullptr) {
        return MPI_ERR_NO_MEM;
    }
    // A generalized request without callbacks: Wait, Test and friends see its completion and
    // its status (the error class of the operation); MPI_Cancel does nothing to it.
    r->kind = req_kind::generalized;
    auto* rec = new (std::nothrow) record{a, r};
    if (rec == nullptr) {
        a.self->requests.release(r);
        return MPI_ERR_NO_MEM;
    }
    *req = request_pool::handle_of(r);
    sched::attr at;
    at.detached = true;
    at.name = kind_name(a.k);
    mpc::result<sched::ult*> u = sched::spawn(&body, rec, at);
    if (!u) {
        // No thread to run it in: run it now (it still completes: every member calls it).
        MPC_LOG(warn, mpi, "non-blocking %s runs blocking: %s", kind_name(a.k), u.error().reason());
        body(rec);
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::coll::nbc
