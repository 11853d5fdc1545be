// Run once per process under a PMIx server (ctest: `srun --mpi=pmix -O -n 3`, label slurm):
// the bootstrap the environment chooses must be PMIx's, and its all-gathers and barriers must
// give every process the same blobs in process order. Prints one line per process; exits 1 on
// the first wrong byte.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "network/bootstrap.hpp"

using mpc::net::blob;

// LeakSanitizer (ASan builds): libpmix keeps a few strings of its own (PMIx_Init's runtime, a
// value loaded while connecting) past PMIx_Finalize; not ours to free.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpmix.so\n"; }

namespace {
blob blob_of(int i, int r) {
    std::size_t n = (static_cast<std::size_t>(i) * 131 + static_cast<std::size_t>(r) * 977) % 3000;
    if ((i + r) % 4 == 0) {
        n = 0;  // empty blobs too
    }
    blob b(n);
    for (std::size_t k = 0; k < n; ++k) {
        b[k] = static_cast<std::byte>((k + static_cast<std::size_t>(i) * 7 + static_cast<std::size_t>(r) * 3) & 0xff);
    }
    return b;
}
int fail(const char* what) {
    std::fprintf(stderr, "bootstrap_pmix_check: FAILED: %s\n", what);
    return 1;
}
}  // namespace

int main() {
    auto b = mpc::net::bootstrap_from_env();
    if (!b) {
        return fail(b.error().reason());
    }
    mpc::net::bootstrap& bs = *b.value();
    if (std::strcmp(bs.name(), "pmix") != 0) {
        return fail("the environment did not choose PMIx (PMIX_RANK unset?)");
    }
    const char* env_rank = std::getenv("PMIX_RANK");
    if (env_rank == nullptr || std::atoi(env_rank) != bs.index()) {
        return fail("the index is not the PMIx rank");
    }
    for (int r = 0; r < 10; ++r) {
        std::vector<blob> all;
        if (!bs.allgather(blob_of(bs.index(), r), all) || all.size() != static_cast<std::size_t>(bs.count())) {
            return fail("all-gather");
        }
        for (int i = 0; i < bs.count(); ++i) {
            if (all[static_cast<std::size_t>(i)] != blob_of(i, r)) {
                return fail("a blob differs");
            }
        }
        if (!bs.barrier()) {
            return fail("barrier");
        }
    }
    if (!bs.finalize()) {
        return fail("finalize");
    }
    std::printf("bootstrap_pmix_check: process %d of %d: 10 all-gathers and barriers ok\n", bs.index(), bs.count());
    return 0;
}
