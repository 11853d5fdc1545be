// One process of an `mpc_run -n N -p P` job, for the launcher tests (tests/launcher/check.sh):
// checks what mpc_run put in its environment, connects the bootstrap the environment names
// (mpc_run's own: MPC_BOOTSTRAP_FD), all-gathers every process's view of the job, then
// barrier and finalize, and prints one line:
//
//   process I of P: ranks F-L of N, bootstrap local
//
// (its block of ranks from net::layout). It does not run MPI ranks itself, so it does not
// depend on the MPI layer's multi-process start-up.
//
//   launcher_proc [--exit I CODE | --kill I | --abort I CODE]
//     --exit I CODE   process I exits with CODE after the all-gather, without finalizing
//     --kill I        process I kills itself with SIGKILL after the all-gather
//     --abort I CODE  process I asks the launcher to abort the job with CODE
// The other processes then fail in the barrier (the launcher ends the job) and exit 1.
//
// Exit status 0 when all went well; 1 with a line "launcher_proc: FAILED: ..." otherwise.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "network/bootstrap.hpp"
#include "network/layout.hpp"

// mpc_run starts only MPI programs (tools/program_check.hpp): this one stands in for the
// start-up code of an MPI program built with mpc_cc, which defines this marker.
extern "C" {
__attribute__((visibility("default"), used)) int mpc_program_built_with_mpc_cc = 1;
}

namespace {

int fail(const char* what, const char* detail = "") {
    std::fprintf(stderr, "launcher_proc: FAILED: %s%s%s\n", what, *detail != '\0' ? ": " : "", detail);
    return 1;
}

/// An integer environment variable, or -1 when unset or malformed.
int env_int(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return -1;
    }
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    return *end == '\0' && n >= 0 && n < 100000000 ? static_cast<int>(n) : -1;
}

mpc::net::blob to_blob(const std::string& s) {
    mpc::net::blob b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

/// What process `index` says about the job: identical in every process but for the index.
std::string view(int index, int count, int nranks) {
    return std::to_string(index) + "/" + std::to_string(count) + "/" + std::to_string(nranks);
}

}  // namespace

int main(int argc, char** argv) {
    const int index = env_int("MPC_PROC_INDEX");
    const int count = env_int("MPC_PROC_COUNT");
    const int nranks = env_int("MPC_NRANKS");
    if (index < 0 || count < 1 || index >= count || nranks < count || env_int("MPC_BOOTSTRAP_FD") < 0) {
        return fail("MPC_PROC_INDEX, MPC_PROC_COUNT, MPC_NRANKS or MPC_BOOTSTRAP_FD is missing or wrong");
    }
    int exit_at = -1, exit_code = 0, kill_at = -1, abort_at = -1, abort_code = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--exit") == 0 && i + 2 < argc) {
            exit_at = std::atoi(argv[i + 1]);
            exit_code = std::atoi(argv[i + 2]);
            i += 2;
        } else if (std::strcmp(argv[i], "--kill") == 0 && i + 1 < argc) {
            kill_at = std::atoi(argv[++i]);
        } else if (std::strcmp(argv[i], "--abort") == 0 && i + 2 < argc) {
            abort_at = std::atoi(argv[i + 1]);
            abort_code = std::atoi(argv[i + 2]);
            i += 2;
        } else {
            return fail("bad argument", argv[i]);
        }
    }

    auto b = mpc::net::bootstrap_from_env();
    if (!b) {
        return fail("bootstrap_from_env", b.error().reason());
    }
    mpc::net::bootstrap& bs = *b.value();
    if (std::strcmp(bs.name(), "local") != 0 || bs.index() != index || bs.count() != count) {
        return fail("the bootstrap is not mpc_run's, or its index/count differ from the environment");
    }
    std::vector<mpc::net::blob> all;
    if (!bs.allgather(to_blob(view(index, count, nranks)), all) || all.size() != static_cast<std::size_t>(count)) {
        return fail("all-gather");
    }
    for (int i = 0; i < count; ++i) {
        if (all[static_cast<std::size_t>(i)] != to_blob(view(i, count, nranks))) {
            return fail("process views differ (MPC_NRANKS or MPC_PROC_COUNT not the same everywhere?)");
        }
    }
    if (index == exit_at) {
        std::fflush(nullptr);
        ::_exit(exit_code);
    }
    if (index == kill_at) {
        ::raise(SIGKILL);
    }
    if (index == abort_at) {
        bs.abort(abort_code, "launcher_proc was asked to abort");
        return fail("abort returned");
    }
    if (!bs.barrier()) {
        return fail("barrier");
    }
    auto lay = mpc::net::layout::make(nranks, count);
    if (!lay) {
        return fail("layout", lay.error().reason());
    }
    const int first = lay->first_rank(index), last = first + lay->rank_count(index) - 1;
    std::printf("process %d of %d: ranks %d-%d of %d, bootstrap %s\n", index, count, first, last, nranks, bs.name());
    std::fflush(stdout);
    if (!bs.finalize()) {
        return fail("finalize");
    }
    return 0;
}
