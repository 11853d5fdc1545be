/// \file
/// Scheduler benchmark, physical bounds (impl "limit"):
///  - yield: a bare Boost.Context fcontext switch between two stacks (jump_fcontext ping-pong,
///    no scheduler at all): what one user-level switch costs at least;
///  - wakeup, 2 cores: two threads pinned on two cores spinning on one shared atomic word
///    (a cache-line transfer per one-way hand-off, no sleeping): what a cross-VP wake-up
///    costs at least.
#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/harness.hpp"

namespace bctx = boost::context::detail;
using mpc_bench::config;
using mpc_bench::now_ns;

namespace {

// ---- bare fcontext switch ----------------------------------------------------------------------

void bounce(bctx::transfer_t t) {
    for (;;) {
        t = bctx::jump_fcontext(t.fctx, nullptr);  // straight back to the caller
    }
}

double fcontext_run(std::uint64_t iters) {
    constexpr std::size_t stack_size = 64 * 1024;
    static char* stack = static_cast<char*>(std::aligned_alloc(64, stack_size));
    bctx::fcontext_t other = bctx::make_fcontext(stack + stack_size, stack_size, &bounce);
    other = bctx::jump_fcontext(other, nullptr).fctx;  // first entry
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < iters; ++i) {
        other = bctx::jump_fcontext(other, nullptr).fctx;  // two switches: there and back
    }
    return static_cast<double>(now_ns() - t0);  // the bouncing context is simply abandoned
}

// ---- cross-core atomic hand-off ----------------------------------------------------------------

double atomic_pingpong_run(std::uint64_t iters) {
    const auto [c0, c1] = mpc_bench::two_cores();
    alignas(64) std::atomic<std::uint64_t> word{0};  // odd: pong's turn, even: ping's turn
    std::uint64_t t0 = 0;
    std::uint64_t t1 = 0;
    std::thread pong([&, c = c1] {
        mpc_bench::pin_to_cpu(c);
        for (std::uint64_t i = 0; i < iters + 64; ++i) {
            while (word.load(std::memory_order_acquire) != 2 * i + 1) {
                mpc_bench::cpu_pause();
            }
            word.store(2 * i + 2, std::memory_order_release);
        }
    });
    std::thread ping([&, c = c0] {
        mpc_bench::pin_to_cpu(c);
        for (std::uint64_t i = 0; i < iters + 64; ++i) {
            if (i == 64) {
                t0 = now_ns();
            }
            word.store(2 * i + 1, std::memory_order_release);
            while (word.load(std::memory_order_acquire) != 2 * i + 2) {
                mpc_bench::cpu_pause();
            }
        }
        t1 = now_ns();
    });
    ping.join();
    pong.join();
    return static_cast<double>(t1 - t0);
}

}  // namespace

int main(int argc, char** argv) {
    const config c = mpc_bench::parse_args(argc, argv);
    const auto [c0, c1] = mpc_bench::two_cores();
    mpc_bench::pin_to_cpu(c0);
    if (mpc_bench::selected(c, "yield")) {
        mpc_bench::emit("yield", 1, "limit", mpc_bench::measure(c, &fcontext_run, 2.0), "ns",
                        "\"primitive\": \"jump_fcontext\"", "bare Boost.Context jump_fcontext, no scheduler, per switch");
    }
    if (mpc_bench::selected(c, "wakeup") && c0 != c1) {
        mpc_bench::emit("wakeup", 2, "limit", mpc_bench::measure(c, &atomic_pingpong_run, 2.0), "ns",
                        "\"primitive\": \"atomic spin\"",
                        "atomic word ping-pong, 2 spinning threads on 2 cores, per one-way hand-off");
    }
    return 0;
}
