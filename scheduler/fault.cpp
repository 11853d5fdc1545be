/// \file
/// Fault reporting. A SIGSEGV, SIGBUS, SIGILL or SIGFPE is handled on a per-VP alternate
/// signal stack (the faulting stack may be the overflowed one); the handler prints one line
/// naming the ULT, the fault and the address, then ends the process with status 128+signal.
/// Only async-signal-safe calls are made (sig_line, write, _exit).

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>

#include "lib/log.hpp"
#include "lib/sigsafe.hpp"
#include "scheduler/detail.hpp"

namespace mpc::sched::detail {
namespace {

constexpr int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
struct sigaction old_actions[4];
bool installed = false;

void describe_ult(sig_line& l, const ult* u, const vp* v) noexcept {
    if (u == nullptr) {
        l.str("the scheduler of VP ").dec(v != nullptr ? v->index : -1);
        return;
    }
    l.str(u->primary ? "the primary ULT" : "ULT ").str("");
    if (!u->primary) {
        l.udec(u->id);
    }
    if (u->name[0] != '\0') {
        l.str(" \"").str(u->name).str("\"");
    }
    if (v != nullptr) {
        l.str(" on VP ").dec(v->index);
    }
}

const char* signal_text(int sig, int code) noexcept {
    switch (sig) {
        case SIGSEGV: return code == SEGV_ACCERR ? "segmentation fault (invalid permissions)"
                                                 : "segmentation fault (address not mapped)";
        case SIGBUS: return "bus error";
        case SIGILL: return "illegal instruction";
        case SIGFPE: return "floating-point exception";
        default: return "fatal signal";
    }
}

void on_fault(int sig, siginfo_t* si, void* /*uctx*/) noexcept {
    vp* v = this_vp();
    ult* u = v != nullptr ? v->current : nullptr;
    auto addr = reinterpret_cast<std::uintptr_t>(si->si_addr);
    sig_line l;
    l.str("mpc: fatal: ");
    describe_ult(l, u, v);
    bool overflow = false;
    if (u != nullptr && (sig == SIGSEGV || sig == SIGBUS) && !u->primary) {
        auto lo = reinterpret_cast<std::uintptr_t>(u->stack.lo);
        auto glo = reinterpret_cast<std::uintptr_t>(u->stack.guard_lo);
        // The guard page, or just below the stack (a large frame can jump over one page).
        overflow = (glo != 0 && addr >= glo && addr < lo) || (addr < lo && lo - addr <= 64 * 1024);
    }
    if (overflow) {
        l.str(": stack overflow: access at ").hex(addr).str(" below the stack [").hex(
            reinterpret_cast<std::uintptr_t>(u->stack.lo));
        l.str(", ").hex(reinterpret_cast<std::uintptr_t>(u->stack.lo) + u->stack.size).str(") of ");
        l.udec(u->stack.size / 1024).str(" KiB (raise MPC_STACK_SIZE)");
    } else {
        l.str(": ").str(signal_text(sig, si->si_code)).str(" at address ").hex(addr);
    }
    l.emit(2);
    _exit(128 + sig);
}

}  // namespace

void install_fault_handlers() noexcept {
    if (installed) {
        return;
    }
    struct sigaction sa = {};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; ++i) {
        sigaction(fault_signals[i], &sa, &old_actions[i]);
    }
    installed = true;
}

void remove_fault_handlers() noexcept {
    if (!installed) {
        return;
    }
    for (int i = 0; i < 4; ++i) {
        sigaction(fault_signals[i], &old_actions[i], nullptr);
    }
    installed = false;
}

status setup_altstack(vp* v) noexcept {
    const std::size_t size = 64 * 1024;
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return status::from_errno("mmap of an alternate signal stack");
    }
    stack_t ss = {};
    ss.ss_sp = m;
    ss.ss_size = size;
    if (sigaltstack(&ss, nullptr) != 0) {
        int e = errno;
        ::munmap(m, size);
        return status::from_errno("sigaltstack", e);
    }
    v->altstack = m;
    v->altstack_size = size;
    return {};
}

void teardown_altstack(vp* v) noexcept {
    if (v == nullptr || v->altstack == nullptr) {
        return;
    }
    stack_t ss = {};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    ::munmap(v->altstack, v->altstack_size);
    v->altstack = nullptr;
}

void fatal_stack_overflow(const ult* u) noexcept {
    sig_line l;
    l.str("mpc: fatal: ");
    describe_ult(l, u, this_vp());
    l.str(": stack overflow: the canary at the bottom of its stack [").hex(reinterpret_cast<std::uintptr_t>(u->stack.lo));
    l.str(", ").hex(reinterpret_cast<std::uintptr_t>(u->stack.lo) + u->stack.size).str(") of ");
    l.udec(u->stack.size / 1024).str(" KiB was overwritten (raise MPC_STACK_SIZE)");
    l.emit(2);
    _exit(128 + SIGSEGV);
}

void report_deadlock() noexcept {
    runtime& r = rt();
    sig_line head;
    head.str("mpc: fatal: deadlock: every VP is idle and ").dec(r.live.load() + 1).str(
        " ULTs (the primary included) are blocked with nothing left that could wake them; blocked ULTs:");
    head.emit(2);
    int shown = 0;
    for (int i = 0; i < r.nr_vps; ++i) {
        vp* v = &r.vps[i];
        v->registry_lock.lock();
        for (ult* u = v->registry_head; u != nullptr; u = u->reg_next) {
            if (u->state.load() != ult_state::blocked) {
                continue;
            }
            if (++shown > 32) {
                break;
            }
            sig_line l;
            l.str("mpc:   ");
            describe_ult(l, u, u->home.load(std::memory_order_relaxed));
            l.str(" blocked in ").str(u->wait_reason != nullptr ? u->wait_reason : "(unknown)");
            l.emit(2);
        }
        v->registry_lock.unlock();
    }
    _exit(3);
}

}  // namespace mpc::sched::detail

namespace mpc::sched::detail {
void report_uncaught_exception() noexcept {
    const char* what = "(not a std::exception)";
    try {
        throw;
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    vp* v = this_vp();
    sig_line l;
    l.str("mpc: fatal: ");
    describe_ult(l, v != nullptr ? v->current : nullptr, v);
    l.str(": uncaught C++ exception: ").str(what);
    l.emit(2);
    _exit(1);
}
}  // namespace mpc::sched::detail
