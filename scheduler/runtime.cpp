/// \file
/// Start-up and shut-down of the engine, ULT creation and teardown, placement (level 1 of the
/// two-level scheduler), and the public API wrappers.

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <new>

#include "include/mpc.h"
#include "lib/config.hpp"
#include "lib/log.hpp"
#include "scheduler/detail.hpp"
#if MPC_ASAN
#include <sanitizer/asan_interface.h>
#endif

MPC_CONFIG_TABLE(sched, {
    {"MPC_VPS", ::mpc::config::knob_type::integer, "0", "number of virtual processors; 0: one per allowed core"},
    {"MPC_BIND", ::mpc::config::knob_type::choice, "compact",
     "placement of VPs on cores: compact (core order) or scatter (round-robin over NUMA nodes)", "compact|scatter"},
    {"MPC_STACK_SIZE", ::mpc::config::knob_type::size, "1M",
     "default ULT stack size (reserved, committed on touch); suffixes k, M, G"},
    {"MPC_SCHED_BIND", ::mpc::config::knob_type::boolean, "1", "pin each VP's thread to its core"},
    {"MPC_SCHED_SPIN_US", ::mpc::config::knob_type::integer, "50",
     "how long an idle VP polls and spins before it sleeps, in microseconds"},
    {"MPC_SCHED_YIELD", ::mpc::config::knob_type::boolean, "0",
     "idle VPs and waiting ranks give the core away (sched_yield) between polls instead of spinning on it, "
     "for processes that share cores with other busy processes; mpc_run -p sets it when there are more "
     "processes than cores"},
    {"MPC_SCHED_STEAL", ::mpc::config::knob_type::boolean, "1", "let idle VPs steal stealable ULTs"},
    {"MPC_SCHED_STACK_CACHE", ::mpc::config::knob_type::integer, "64",
     "finished ULT stacks of the default size kept per VP for reuse"},
    {"MPC_SCHED_DEADLOCK_TIMEOUT", ::mpc::config::knob_type::integer, "30",
     "seconds every VP must sit idle with ULTs blocked before a deadlock is reported; 0 disables"},
    {"MPC_SCHED_IO_THREADS", ::mpc::config::knob_type::integer, "4",
     "helper threads for work that blocks in the kernel (the task layer's reads back from disk, started at "
     "submission), so that the VPs run ULTs meanwhile; 0: that work blocks the VP that needs it"},
})

namespace mpc::sched {
namespace detail {
void ult_entry(boost::context::detail::transfer_t t) noexcept;
void yield_current() noexcept;
[[noreturn]] void exit_current() noexcept;
void sleep_current(std::uint64_t ns) noexcept;
void wait_until_current(bool (*cond)(void*), void* cond_arg, progress_fn poll, void* poll_arg) noexcept;
void move_current(vp* target) noexcept;

namespace {
runtime g_rt;
cpu_set_t g_caller_affinity;  // restored on the caller's thread by finalize()
bool g_caller_affinity_saved = false;

std::size_t log_prefix(char* buf, std::size_t cap) noexcept {
    vp* v = this_vp();
    if (v == nullptr) {
        return 0;
    }
    ult* u = v->current;
    int n = u != nullptr ? std::snprintf(buf, cap, "vp %d ult %llu%s%s", v->index, static_cast<unsigned long long>(u->id),
                                         u->name[0] ? " " : "", u->name)
                         : std::snprintf(buf, cap, "vp %d", v->index);
    return n < 0 ? 0 : std::min(static_cast<std::size_t>(n), cap - 1);
}

status read_options(const options& o, int* nvps, int* placement, std::size_t* stack, bool* bind) noexcept {
    auto vps = config::get_int("MPC_VPS");
    auto plc = config::get_choice("MPC_BIND");
    auto stk = config::get_size("MPC_STACK_SIZE");
    auto bnd = config::get_bool("MPC_SCHED_BIND");
    auto spin = config::get_int("MPC_SCHED_SPIN_US");
    auto steal = config::get_bool("MPC_SCHED_STEAL");
    auto yield = config::get_bool("MPC_SCHED_YIELD");
    auto cache = config::get_int("MPC_SCHED_STACK_CACHE");
    auto dl = config::get_int("MPC_SCHED_DEADLOCK_TIMEOUT");
    auto io = config::get_int("MPC_SCHED_IO_THREADS");
    if (!vps || !plc || !stk || !bnd || !spin || !steal || !yield || !cache || !dl || !io) {
        return {errc::invalid_argument, "malformed MPC_* configuration variable"};
    }
    if (*vps < 0 || *vps > max_vps || *spin < 0 || *cache < 0 || *dl < 0 || *io < 0 || *io > 256) {
        MPC_LOG(error, sched, "MPC_VPS must be in [0, 4096], MPC_SCHED_IO_THREADS in [0, 256]; MPC_SCHED_SPIN_US, "
                              "MPC_SCHED_STACK_CACHE and MPC_SCHED_DEADLOCK_TIMEOUT must not be negative");
        return {errc::invalid_argument, "configuration value out of range"};
    }
    *nvps = o.nr_vps > 0 ? o.nr_vps : static_cast<int>(*vps);
    *placement = o.placement >= 0 ? o.placement : *plc;
    *stack = o.stack_size != 0 ? o.stack_size : *stk;
    *bind = o.bind && *bnd;
    g_rt.spin_ns = static_cast<std::uint64_t>(*spin) * 1000;
    g_rt.steal = *steal;
    g_rt.yield_idle = *yield;
    g_rt.stack_cache_max = static_cast<std::size_t>(*cache);
    g_rt.deadlock_timeout_ns = static_cast<std::uint64_t>(*dl) * 1'000'000'000ULL;
    g_rt.io_threads = static_cast<int>(*io);
    if (o.nr_vps < 0 || *nvps > max_vps) {
        return {errc::invalid_argument, "number of VPs out of range"};
    }
    if (*stack < min_stack_size) {
        MPC_LOG(error, sched, "stack size %zu is below the 16 KiB minimum", *stack);
        return {errc::invalid_argument, "stack size below 16 KiB"};
    }
    return {};
}

void init_ctx_from_thread(exec_ctx& c) noexcept {
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        void* lo = nullptr;
        std::size_t sz = 0;
        pthread_attr_getstack(&a, &lo, &sz);
        c.stack_lo = lo;
        c.stack_size = sz;
        pthread_attr_destroy(&a);
    }
    c.tsan_fiber = tsan_current_fiber();
}

/// Chooses the VP of a new ULT: the requested one, else the least loaded (ties: the caller's).
vp* place_new(int wanted) noexcept {
    runtime& r = g_rt;
    if (wanted >= 0) {
        return &r.vps[wanted];
    }
    vp* me = this_vp();
    vp* best = me != nullptr ? me : &r.vps[0];
    std::int64_t best_load = best->homed.load(std::memory_order_relaxed);
    for (int i = 0; i < r.nr_vps; ++i) {
        std::int64_t l = r.vps[i].homed.load(std::memory_order_relaxed);
        if (l < best_load) {
            best = &r.vps[i];
            best_load = l;
        }
    }
    return best;
}

/// Whether a's stacks of no task are the default allocator's (mmap'd) ones, which the VPs'
/// stack caches hold: the default allocator, and the slices' (a stack of no task is not in a
/// slice). Without it every short-lived ULT of a rank's (a non-blocking collective's) cost an
/// mmap and a munmap with its TLB shootdown: 150-700 us per MPI_Iallreduce on a loaded host.
bool caches_stacks(const stack_allocator* a) noexcept {
    return a == &default_stack_allocator() || a == &slice_stack_allocator();
}

result<stack_region> take_stack(std::size_t size, int owner, stack_allocator** from) noexcept {
    vp* me = this_vp();
    stack_allocator& a = current_stack_allocator();
    if (me != nullptr && owner < 0 && size == g_rt.stack_size && !me->stack_cache.empty() && caches_stacks(&a)) {
        stack_region s = me->stack_cache.back();
        me->stack_cache.pop_back();
        *from = &a;
        return s;
    }
    *from = &a;
    return a.allocate(size, owner);
}

}  // namespace

bool caller_affinity(cpu_set_t* out) noexcept {
    if (!g_caller_affinity_saved) {
        return false;
    }
    *out = g_caller_affinity;
    return true;
}

runtime& rt() noexcept { return g_rt; }

void registry_add(vp* v, ult* u) noexcept {
    spin_guard g(v->registry_lock);
    u->registry = v;
    u->reg_prev = nullptr;
    u->reg_next = v->registry_head;
    if (v->registry_head != nullptr) {
        v->registry_head->reg_prev = u;
    }
    v->registry_head = u;
}

void registry_remove(ult* u) noexcept {
    vp* v = u->registry;
    spin_guard g(v->registry_lock);
    (u->reg_prev ? u->reg_prev->reg_next : v->registry_head) = u->reg_next;
    if (u->reg_next != nullptr) {
        u->reg_next->reg_prev = u->reg_prev;
    }
}

void free_ult(ult* u) noexcept {
    free_keys(u);
    tsan_free_fiber(u->ctx.tsan_fiber);
    vg_deregister_stack(u->ctx);
    stack_region s = u->stack;
    stack_allocator* a = u->stack_alloc;
    static_assert(std::is_trivially_destructible_v<ult>);
    u->magic = ult_magic_dead;  // best-effort detection of a second join while the stack is cached
    vp* me = this_vp();
    if (me != nullptr && s.owner < 0 && s.size == g_rt.stack_size && caches_stacks(a) &&
        me->stack_cache.size() < g_rt.stack_cache_max) {
        me->stack_cache.push_back(s);
        return;
    }
    a->release(s);
}

void on_ult_gone() noexcept {
    if (g_rt.live.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        spin_guard g(g_rt.done_lock);
        ult* p = g_rt.primary;
        if (p != nullptr && p->joiner == p) {  // finalize() is waiting (set under done_lock)
            p->joiner = nullptr;
            make_ready(p);
        }
    }
}

result<ult*> spawn_with_slot(ult_fn fn, std::size_t size, std::size_t align, void** slot, const attr& a,
                             void (*construct)(void*, void*), void* src) noexcept {
    runtime& r = g_rt;
    if (!r.running.load(std::memory_order_acquire)) {
        return status(errc::not_initialized, "spawn before mpc::sched::init()");
    }
    if (fn == nullptr || a.vp < -1 || a.vp >= r.nr_vps || align > 64 || size > 4096) {
        return status(errc::invalid_argument, "bad spawn arguments");
    }
    std::size_t ssize = a.stack_size != 0 ? a.stack_size : r.stack_size;
    if (ssize < min_stack_size) {
        return status(errc::invalid_argument, "stack size below 16 KiB");
    }
    stack_allocator* from = nullptr;
    auto st = take_stack(ssize, a.owner, &from);
    if (!st) {
        return st.error();
    }
#if MPC_ASAN
    // Frames that were live when the stack's previous ULT exited never returned: clear their
    // redzones so that they do not poison the new ULT's frames.
    ASAN_UNPOISON_MEMORY_REGION(st->lo, st->size);
#endif
    // Top of the stack: the ULT record, then the closure slot, then the usable stack.
    auto top = reinterpret_cast<std::uintptr_t>(st->lo) + st->size;
    std::uintptr_t rec = (top - sizeof(ult)) & ~std::uintptr_t{63};
    std::uintptr_t sp = rec;
    if (size != 0) {
        sp = (rec - size) & ~(std::uintptr_t{align < 16 ? 16 : align} - 1);
        *slot = reinterpret_cast<void*>(sp);
    }
    sp &= ~std::uintptr_t{63};
    ult* u = new (reinterpret_cast<void*>(rec)) ult();
    u->stack = *st;
    u->stack_alloc = from;
    std::size_t usable = sp - reinterpret_cast<std::uintptr_t>(st->lo);
    u->ctx.fctx = boost::context::detail::make_fcontext(reinterpret_cast<void*>(sp), usable, &ult_entry);
    u->ctx.stack_lo = st->lo;
    u->ctx.stack_size = usable;
    u->ctx.tsan_fiber = tsan_new_fiber();
    vg_register_stack(u->ctx, st->lo, st->size);
    u->fn = fn;
    u->arg = size != 0 ? *slot : src;  // without a slot, src is the argument itself
    if (construct != nullptr) {
        construct(*slot, src);
    }
    u->id = r.next_id.fetch_add(1, std::memory_order_relaxed);
    u->stealable = a.stealable;
    u->offered = a.offer && a.stealable;
    u->pinned = a.pinned && !a.stealable;
    u->detached = a.detached;
    u->heap = static_cast<alloc::heap*>(a.heap);
    if (a.name != nullptr) {
        std::strncpy(u->name, a.name, sizeof(u->name) - 1);
    }
    vp* home = place_new(a.vp);
    u->home.store(home, std::memory_order_relaxed);
    vp* me = this_vp();
    registry_add(me != nullptr ? me : home, u);
    r.live.fetch_add(1, std::memory_order_relaxed);
    home->homed.fetch_add(1, std::memory_order_relaxed);
    (me != nullptr ? me : home)->n_spawned.fetch_add(1, std::memory_order_relaxed);
    make_ready(u);
    return u;
}

}  // namespace detail

using namespace detail;

result<ult*> spawn(ult_fn fn, void* arg, const attr& a) noexcept {
    return spawn_with_slot(fn, 0, 16, nullptr, a, nullptr, arg);
}

status init(const options& opts) noexcept {
    runtime& r = g_rt;
    if (r.running.load()) {
        return {errc::already_initialized, "mpc::sched::init() called twice"};
    }
    if (const char* spec = config::raw("MPC_LOG_LEVEL"); spec != nullptr && !log_configure(spec)) {
        MPC_LOG(error, core, "MPC_LOG_LEVEL=\"%s\" is not valid (e.g. warn,sched:debug)", spec);
        return {errc::invalid_argument, "malformed MPC_LOG_LEVEL"};
    }
    config::warn_unknown_environment();
    int nvps = 0;
    int placement = 0;
    bool bind = true;
    std::size_t stack = 0;
    if (status s = read_options(opts, &nvps, &placement, &stack, &bind); !s) {
        return s;
    }
    if (status s = topo::load(); !s) {
        return s;
    }
    if (nvps == 0) {
        nvps = topo::info().allowed_cores;
    }
    std::vector<topo::place> places = topo::plan(nvps, static_cast<topo::placement>(placement));
    r.stack_size = stack;
    r.nr_vps = nvps;
    r.vps = new (std::nothrow) vp[static_cast<std::size_t>(nvps)];
    r.primary = new (std::nothrow) ult();
    if (r.vps == nullptr || r.primary == nullptr) {
        delete[] r.vps;
        delete r.primary;
        return {errc::no_memory, "VP records"};
    }
    r.stopping.store(false);
    r.live.store(0);
    r.deep_idle.store(0);
    r.asleep.store(0);
    for (int i = 0; i < nvps; ++i) {
        r.vps[i].index = i;
        r.vps[i].place = places[static_cast<std::size_t>(i)];
    }
    // The caller becomes the primary ULT of VP 0; VP 0's scheduler loop gets a stack of its own.
    vp* v0 = &r.vps[0];
    ult* p = r.primary;
    p->primary = true;
    p->pinned = true;
    p->home.store(v0, std::memory_order_relaxed);
    p->id = 0;
    p->state.store(ult_state::running);
    std::strncpy(p->name, "main", sizeof(p->name) - 1);
    init_ctx_from_thread(p->ctx);
    auto st = default_stack_allocator().allocate(256 * 1024, -1);
    if (!st) {
        delete[] r.vps;
        delete r.primary;
        return st.error();
    }
    r.vp0_sched_stack = *st;
    r.vp0_sched_alloc = &default_stack_allocator();
    void* top = static_cast<char*>(st->lo) + st->size;
    v0->sched_ctx.fctx = boost::context::detail::make_fcontext(top, st->size, &vp0_sched_entry);
    v0->sched_ctx.stack_lo = st->lo;
    v0->sched_ctx.stack_size = st->size;
    v0->sched_ctx.tsan_fiber = tsan_new_fiber();
    vg_register_stack(v0->sched_ctx, st->lo, st->size);
    v0->current = p;
    v0->running = &p->ctx;
    v0->homed.store(1);
    registry_add(v0, p);
    set_this_vp(v0);
    g_caller_affinity_saved = sched_getaffinity(0, sizeof(g_caller_affinity), &g_caller_affinity) == 0;
    if (bind) {
        if (status s = topo::bind_this_thread(v0->place); !s) {
            MPC_LOG(warn, sched, "cannot pin VP 0 to PU %d: %s", v0->place.pu, s.reason());
        }
    }
    set_log_prefix_fn(&log_prefix);
    install_fault_handlers();
    if (status s = setup_altstack(v0); !s) {
        MPC_LOG(warn, sched, "no alternate signal stack for VP 0: %s", s.reason());
    }
    r.running.store(true, std::memory_order_release);
    for (int i = 1; i < nvps; ++i) {
        vp* v = &r.vps[i];
        try {
            v->thread = std::thread([v, bind] {
                set_this_vp(v);
                if (bind) {
                    if (status s = topo::bind_this_thread(v->place); !s) {
                        MPC_LOG(warn, sched, "cannot pin VP %d to PU %d: %s", v->index, v->place.pu, s.reason());
                    }
                }
                if (status s = setup_altstack(v); !s) {
                    MPC_LOG(warn, sched, "no alternate signal stack for VP %d: %s", v->index, s.reason());
                }
                init_ctx_from_thread(v->sched_ctx);
                v->running = &v->sched_ctx;
                vp_loop(v);
                teardown_altstack(v);
                set_this_vp(nullptr);
            });
        } catch (...) {
            MPC_LOG(fatal, sched, "cannot start the thread of VP %d", i);
            std::abort();
        }
    }
    MPC_LOG(info, sched, "%d VPs on %s, stacks of %zu bytes", nvps, topo::describe().c_str(), stack);
    return {};
}

status finalize() noexcept {
    runtime& r = g_rt;
    if (!r.running.load()) {
        return {errc::not_initialized, "mpc::sched::finalize() without init()"};
    }
    vp* v = this_vp();
    if (v == nullptr || v->current != r.primary) {
        return {errc::invalid_argument, "mpc::sched::finalize() must be called by the primary ULT"};
    }
    // The primary ULT runs on the caller's original stack and must end on its original thread,
    // VP 0's, which finalize() turns back into a plain thread.
    if (v != &r.vps[0]) {
        move_current(&r.vps[0]);
    }
    // Wait for every other ULT to end. on_ult_gone() wakes us (joiner == self marks the wait).
    r.done_lock.lock();
    if (r.live.load(std::memory_order_acquire) > 0) {
        r.primary->joiner = r.primary;
        set_wait_reason("mpc::sched::finalize (waiting for the other ULTs to end)");
        park({post_op::unlock, r.primary, &r.done_lock, nullptr});
    } else {
        r.done_lock.unlock();
    }
    // Helper threads still in a job (blocking.cpp) may be waking a ULT that has already gone
    // on (and ended): they touch the VPs until their job's end is counted.
    while (r.blocking.load(std::memory_order_acquire) != 0) {
        ::sched_yield();
    }
    // seq_cst, not release: against a VP going to sleep (idle(): stores vp_sleeping, then reads
    // `stopping`) this is store `stopping`, then read its sleep word (wake_vp). With a release
    // store the read could pass it (x86 reorders a store with a later load): the VP read
    // `stopping` false, we read it awake, nobody woke it and the join below waited for ever
    // (a CI run hung after "coll_alltoallw: 1 ranks OK", once in thousands of exits).
    r.stopping.store(true, std::memory_order_seq_cst);
    for (int i = 1; i < r.nr_vps; ++i) {
        wake_vp(&r.vps[i]);
    }
    for (int i = 1; i < r.nr_vps; ++i) {
        // A VP may be asleep between our wake and its stop check; keep waking until it exits.
        while (r.vps[i].thread.joinable()) {
            wake_vp(&r.vps[i]);
            r.vps[i].thread.join();
        }
    }
    v = this_vp();
    remove_fault_handlers();
    teardown_altstack(v);
    tsan_free_fiber(v->sched_ctx.tsan_fiber);
    vg_deregister_stack(v->sched_ctx);
    r.vp0_sched_alloc->release(r.vp0_sched_stack);
    for (int i = 0; i < r.nr_vps; ++i) {
        for (const stack_region& s : r.vps[i].stack_cache) {
            default_stack_allocator().release(s);
        }
    }
    registry_remove(r.primary);
    free_keys(r.primary);
    set_log_prefix_fn(nullptr);
    set_this_vp(nullptr);
    if (g_caller_affinity_saved) {
        sched_setaffinity(0, sizeof(g_caller_affinity), &g_caller_affinity);
    }
    r.running.store(false, std::memory_order_release);
    delete[] r.vps;
    delete r.primary;
    r.vps = nullptr;
    r.primary = nullptr;
    r.nr_vps = 0;
    return {};
}

bool initialized() noexcept { return g_rt.running.load(std::memory_order_acquire); }
int nr_vps() noexcept { return initialized() ? g_rt.nr_vps : 0; }
int current_vp() noexcept {
    vp* v = this_vp();
    return v != nullptr ? v->index : -1;
}
std::size_t default_stack_size() noexcept { return g_rt.stack_size; }

topo::place vp_place(int i) noexcept {
    if (!initialized() || i < 0 || i >= g_rt.nr_vps) {
        return {};
    }
    return g_rt.vps[i].place;
}

vp_stats stats(int i) noexcept {
    vp_stats s;
    if (!initialized() || i < 0 || i >= g_rt.nr_vps) {
        return s;
    }
    const vp& v = g_rt.vps[i];
    s.switches = v.n_switches.load(std::memory_order_relaxed);
    s.spawned = v.n_spawned.load(std::memory_order_relaxed);
    s.remote_wakeups = v.n_remote.load(std::memory_order_relaxed);
    s.steals = v.n_steals.load(std::memory_order_relaxed);
    s.sleeps = v.n_sleeps.load(std::memory_order_relaxed);
    s.polls = v.n_polls.load(std::memory_order_relaxed);
    s.homed = v.homed.load(std::memory_order_relaxed);
    return s;
}

status join(ult* u) noexcept {
    if (!initialized()) {
        return {errc::not_initialized, "join() before init()"};
    }
    vp* v = this_vp();
    if (u == nullptr) {
        return {errc::invalid_argument, "join(nullptr)"};
    }
    if (u->magic != ult_magic_live) {
        return {errc::invalid_argument, "join() of a handle that is not a live ULT (joined already?)"};
    }
    if (v == nullptr || v->current == nullptr) {
        return {errc::not_in_ult, "join() outside a ULT"};
    }
    ult* me = v->current;
    if (u == me || u->primary) {
        return {errc::invalid_argument, "a ULT cannot join itself or the primary ULT"};
    }
    u->join_lock.lock();
    if (u->detached || u->joiner != nullptr) {
        u->join_lock.unlock();
        return {errc::busy, "ULT is detached or already being joined"};
    }
    if (!u->done) {
        u->joiner = me;
        set_wait_reason("mpc::sched::join");
        park({post_op::unlock, me, &u->join_lock, nullptr});
    } else {
        u->join_lock.unlock();
    }
    free_ult(u);
    return {};
}

status detach(ult* u) noexcept {
    if (!initialized()) {
        return {errc::not_initialized, "detach() before init()"};
    }
    if (u == nullptr || u->primary || u->magic != ult_magic_live) {
        return {errc::invalid_argument, "detach of a null, primary or dead ULT"};
    }
    u->join_lock.lock();
    if (u->detached || u->joiner != nullptr) {
        u->join_lock.unlock();
        return {errc::busy, "ULT is detached or being joined"};
    }
    if (u->done) {
        u->join_lock.unlock();
        free_ult(u);
        return {};
    }
    u->detached = true;
    u->join_lock.unlock();
    return {};
}

void yield() noexcept { yield_current(); }

void exit() noexcept {
    vp* v = this_vp();
    if (v == nullptr || v->current == nullptr || v->current->primary) {
        MPC_LOG(fatal, sched, "mpc::sched::exit() called outside a ULT or from the primary ULT");
        std::abort();
    }
    exit_current();
}

void sleep_for(std::chrono::nanoseconds d) noexcept {
    vp* v = this_vp();
    if (v == nullptr || v->current == nullptr) {
        return;
    }
    sleep_current(d.count() > 0 ? static_cast<std::uint64_t>(d.count()) : 0);
}

status move_to(int target) noexcept {
    if (!initialized()) {
        return {errc::not_initialized, "move_to() before init()"};
    }
    vp* v = this_vp();
    if (v == nullptr || v->current == nullptr) {
        return {errc::not_in_ult, "move_to() outside a ULT"};
    }
    if (target < 0 || target >= g_rt.nr_vps) {
        return {errc::invalid_argument, "move_to(): no such VP"};
    }
    move_current(&g_rt.vps[target]);
    return {};
}

ult* self() noexcept {
    vp* v = this_vp();
    return v != nullptr ? v->current : nullptr;
}
std::uint64_t id(const ult* u) noexcept { return u != nullptr ? u->id : 0; }
int vp_of(const ult* u) noexcept {
    const vp* h = u != nullptr ? u->home.load(std::memory_order_relaxed) : nullptr;
    return h != nullptr ? h->index : -1;
}
void set_name(ult* u, const char* n) noexcept {
    if (u != nullptr) {
        std::strncpy(u->name, n != nullptr ? n : "", sizeof(u->name) - 1);
        u->name[sizeof(u->name) - 1] = '\0';
    }
}
const char* name(const ult* u) noexcept { return u != nullptr ? u->name : ""; }

void set_task(ult* u, void* task) noexcept {
    if (u != nullptr) {
        u->task = task;
    }
}

void set_heap(ult* u, void* heap) noexcept {
    if (u != nullptr) {
        u->heap = static_cast<alloc::heap*>(heap);
    }
}

int numa_node_of(const ult* u) noexcept {
    const vp* h = u != nullptr ? u->home.load(std::memory_order_relaxed) : nullptr;
    return h != nullptr ? h->place.numa : 0;
}

void* current_task() noexcept {
    vp* v = this_vp();
    return v != nullptr && v->current != nullptr ? v->current->task : nullptr;
}

void** user_tls_slot() noexcept {
    vp* v = this_vp();
    return v != nullptr && v->current != nullptr ? &v->current->user_tls : nullptr;
}

int rebalance() noexcept {
    runtime& r = g_rt;
    if (!initialized()) {
        return 0;
    }
    std::int64_t total = 0;
    for (int i = 0; i < r.nr_vps; ++i) {
        total += r.vps[i].homed.load(std::memory_order_relaxed);
    }
    std::int64_t target = (total + r.nr_vps - 1) / r.nr_vps;
    int requested = 0;
    for (int i = 0; i < r.nr_vps; ++i) {
        std::int64_t excess = r.vps[i].homed.load(std::memory_order_relaxed) - target;
        r.vps[i].shed.store(excess > 0 ? excess : 0, std::memory_order_relaxed);
        if (excess > 0) {
            requested += static_cast<int>(excess);
            wake_vp(&r.vps[i]);
        }
    }
    MPC_LOG(debug, sched, "rebalance: %lld ULTs, target %lld per VP, %d moves requested",
            static_cast<long long>(total), static_cast<long long>(target), requested);
    return requested;
}

result<int> register_progress(progress_fn fn, void* arg) noexcept {
    if (fn == nullptr) {
        return status(errc::invalid_argument, "null progress function");
    }
    spin_guard g(g_rt.progress_lock);
    for (int i = 0; i < 16; ++i) {
        progress_slot& s = g_rt.progress[i];
        if (s.fn.load(std::memory_order_relaxed) == nullptr) {
            s.arg.store(arg, std::memory_order_relaxed);
            s.fn.store(fn, std::memory_order_release);  // publishes arg too
            g_rt.n_progress.fetch_add(1, std::memory_order_relaxed);
            return i;
        }
    }
    return status(errc::busy, "all 16 progress slots are taken");
}

status unregister_progress(int h) noexcept {
    spin_guard g(g_rt.progress_lock);
    if (h < 0 || h >= 16 || g_rt.progress[h].fn.load() == nullptr) {
        return {errc::invalid_argument, "no such progress function"};
    }
    g_rt.progress[h].fn.store(nullptr, std::memory_order_release);
    g_rt.n_progress.fetch_sub(1, std::memory_order_relaxed);
    return {};
}

void wait_until(bool (*cond)(void*), void* cond_arg, progress_fn poll, void* poll_arg) noexcept {
    vp* v = this_vp();
    if (cond == nullptr) {
        return;
    }
    if (v == nullptr || v->current == nullptr) {  // plain thread: poll and spin
        while (!(poll != nullptr ? (poll(poll_arg), cond(cond_arg)) : cond(cond_arg))) {
            cpu_relax();
        }
        return;
    }
    wait_until_current(cond, cond_arg, poll, poll_arg);
}

void set_external_events(bool on) noexcept { g_rt.external_events.store(on, std::memory_order_relaxed); }

void outside_wakers(int delta) noexcept { g_rt.outside_wakers.fetch_add(delta, std::memory_order_acq_rel); }

void set_all_asleep_hook(void (*fn)(void*) noexcept, void* arg) noexcept {
    g_rt.all_asleep_arg.store(arg, std::memory_order_relaxed);
    g_rt.all_asleep_fn.store(fn, std::memory_order_release);
}

bool all_vps_asleep() noexcept { return g_rt.asleep.load(std::memory_order_acquire) == g_rt.nr_vps; }

void notify_all_vps() noexcept {
    for (int i = 0; i < g_rt.nr_vps; ++i) {
        wake_vp(&g_rt.vps[i]);
    }
}

void set_wait_reason(const char* what) noexcept {
    vp* v = this_vp();
    if (v != nullptr && v->current != nullptr) {
        v->current->wait_reason = what;
    }
}

}  // namespace mpc::sched

// ---- C API of mpc.h --------------------------------------------------------------------------

extern "C" {
const char* MPC_Version(void) { return "0.1.0"; }
int MPC_Vp_count(void) { return mpc::sched::nr_vps(); }
int MPC_Vp_self(void) { return mpc::sched::current_vp(); }
void MPC_Yield(void) { mpc::sched::yield(); }
int MPC_Move_to_vp(int vp) {
    if (!mpc::sched::initialized()) {
        return MPC_ERR_NOT_INIT;
    }
    mpc::status s = mpc::sched::move_to(vp);
    if (s.ok()) {
        return MPC_SUCCESS;
    }
    return s.code() == mpc::errc::not_in_ult ? MPC_ERR_NOT_IN_ULT : MPC_ERR_ARG;
}
}
