/// \file
/// Start-up of an MPI job in this process: mpc_mpi_launch_image() is called by the start-up code
/// of privatized programs (tools/mpc_image_start.c, mpc_cc's default), mpc_mpi_launch() by that
/// of programs built with -fno-mpc-privatize (tools/mpc_start.c), instead of main. Both start
/// the engine, create MPI_COMM_WORLD, run main once per rank, each as a ULT named "rank N" (a
/// privatized program: the main of the rank's own copy of the program, mpi_compat/privatize.hpp),
/// and return the job's exit status: the first non-zero status of a rank, in rank order.

#include <sys/resource.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lib/config.hpp"
#include "allocator/heap.hpp"
#include "allocator/malloc.hpp"
#include "lib/log.hpp"
#include "mpi_compat/errors.hpp"
#include "scheduler/stack.hpp"
#include "mpi_compat/privatize.hpp"
#include "mpi_compat/remote.hpp"
#include "mpi_compat/runtime.hpp"

MPC_CONFIG_TABLE(mpi, {
    {"MPC_NRANKS", ::mpc::config::knob_type::integer, "1",
     "number of MPI ranks of this process (set by mpc_run -n)"},
    {"MPC_MPI_EAGER_LIMIT", ::mpc::config::knob_type::size, "16k",
     "in-process messages up to this size are buffered when no receive is posted (larger: rendezvous)"},
    {"MPC_MPI_WAIT_SPIN_US", ::mpc::config::knob_type::integer, "20",
     "a rank waiting for a request busy-waits this long, while its VP has nothing else to run, before it parks"},
    {"MPC_NODE_NAME", ::mpc::config::knob_type::string, "",
     "this process's node name (MPI_Get_processor_name; processes with one name and boot share MPI_COMM_TYPE_SHARED); "
     "default: the host name"},
})

namespace mpc::mpi {
namespace {
world_state g_world;

using main_fn_t = int (*)(int, char**, char**);

struct rank_args {
    task* t;
    main_fn_t main_fn;
    int argc;
    char** argv;
    char** envp;
};

/// Each rank gets its own argv array (main may modify it), pointing to the same strings.
char** copy_argv(int argc, char** argv) {
    auto** v = static_cast<char**>(std::calloc(static_cast<std::size_t>(argc) + 1, sizeof(char*)));
    if (v != nullptr) {
        for (int i = 0; i < argc; ++i) {
            v[i] = argv[i];
        }
    }
    return v;
}

void rank_main(void* p) noexcept {
    auto* a = static_cast<rank_args*>(p);
    a->t->ult = sched::self();
    sched::set_task(a->t->ult, a->t);
    task* t = a->t;
    try {
        if (a->main_fn != nullptr) {
            t->exit_code = a->main_fn(a->argc, a->argv, a->envp);
        } else if (std::string err; !priv::run_rank(t->world_rank, a->argc, a->argv, a->envp, t->exit_code, err)) {
            std::fprintf(stderr, "mpc: rank %d: cannot load its copy of the program: %s\n", t->world_rank, err.c_str());
            end_job(1);
        }
    } catch (...) {
        sched::detail::report_uncaught_exception();  // one line naming the rank, then the job ends
    }
    // As mpirun does: a rank that fails, or leaves MPI without MPI_Finalize, ends the job
    // (the other ranks would otherwise wait for it forever).
    if (t->exit_code != 0) {
        std::fprintf(stderr, "mpc: rank %d exited with status %d: ending the job\n", t->world_rank, t->exit_code);
        end_job(t->exit_code);
    }
    if (t->initialized && !t->finalized) {
        std::fprintf(stderr, "mpc: rank %d returned from main without calling MPI_Finalize: ending the job\n",
                     t->world_rank);
        end_job(1);
    }
}

double now_seconds() noexcept {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

world_state& world() noexcept { return g_world; }

double wtime() noexcept { return now_seconds() - g_world.wtime_origin; }

namespace {

/// The stack of a rank's ULT, which runs the program's main(): what main() gets in a process
/// of its own, the soft RLIMIT_STACK (`ulimit -s`, 8 MiB by default; 8 MiB when unlimited; at
/// most 1 GiB), reserved and committed on touch like every ULT stack. MPC_STACK_SIZE, when
/// set (mpc_run --stack-size), is the size of every ULT stack, ranks included: 0 is returned.
std::size_t rank_stack_size() noexcept {
    if (std::getenv("MPC_STACK_SIZE") != nullptr) {
        return 0;
    }
    constexpr std::size_t unlimited = std::size_t{8} << 20;
    constexpr std::size_t most = std::size_t{1} << 30;
    rlimit rl{};
    if (::getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        return unlimited;
    }
    std::size_t s = static_cast<std::size_t>(rl.rlim_cur);
    s = s < sched::min_stack_size ? sched::min_stack_size : (s > most ? most : s);
    constexpr std::size_t page = 4096;
    return (s + page - 1) / page * page;
}

/// Every MPC_* variable that is set must hold a valid value (README: a malformed value is an
/// error, never silently replaced by the default), the MPI layer's too, which are otherwise
/// read only when first needed. Prints one line per bad variable; false if any.
bool configuration_valid() {
    static const char* const type_names[] = {"an integer", "a size (suffixes k/M/G/T)", "a boolean (0/1)",
                                             "a string", "one of"};
    bool ok = true;
    for (const config::knob* k : config::all_knobs()) {
        const char* v = config::raw(k->env);
        if (v != nullptr && !config::validate(*k, v)) {
            bool choice = k->type == config::knob_type::choice;
            std::fprintf(stderr, "mpc: %s=\"%s\" is not valid: expected %s%s%s\n", k->env, v,
                         type_names[static_cast<int>(k->type)], choice ? " " : "", choice ? k->choices : "");
            ok = false;
        }
    }
    return ok;
}

int launch(main_fn_t main_fn, int argc, char** argv, char** envp) {
    if (!configuration_valid()) {
        return 2;
    }
    auto n = config::get_int("MPC_NRANKS");
    if (!n || *n < 1 || *n > 1'000'000) {
        std::fprintf(stderr, "mpc: MPC_NRANKS must be an integer from 1 to 1000000\n");
        return 2;
    }
    world_state& w = g_world;
    w.size = static_cast<int>(*n);
    // The log level now (sched::init sets it again), so that the start-up of the transport logs.
    if (const char* spec = config::raw("MPC_LOG_LEVEL"); spec != nullptr) {
        log_configure(spec);  // validated by configuration_valid()
    }
    // Several processes (mpc_run -p, srun --mpi=pmix): this one runs its block of the ranks.
    if (!remote::start(w.size, &w.first_local, &w.nlocal)) {
        return 2;
    }
    if (status s = sched::init(); !s) {
        std::fprintf(stderr, "mpc: cannot start the runtime: %s\n", s.reason());
        return 2;
    }

    // MPI_Wtime counts from the start of this process, or, with several processes, from the
    // machine's monotonic clock origin (the same in every process of a node, so that times
    // taken by ranks of different processes compare, as within one process).
    w.wtime_origin = w.nlocal == w.size ? now_seconds() : 0.0;
    w.world.handle = MPI_COMM_WORLD;
    w.world.context = 1;
    w.world.is_world = true;
    w.world.predefined = true;
    w.world.world_of.resize(static_cast<std::size_t>(w.size));
    for (int i = 0; i < w.size; ++i) {
        w.world.world_of[static_cast<std::size_t>(i)] = i;
    }
    w.world.index_ranks();  // local_only, world_order
    w.self.handle = MPI_COMM_SELF;
    w.self.context = 3;
    w.self.is_self = true;
    w.self.predefined = true;
    register_comm(&w.world);
    register_comm(&w.self);
    std::vector<rank_args> args(static_cast<std::size_t>(w.size));
    std::vector<sched::ult*> ults(static_cast<std::size_t>(w.size));
    w.tasks.resize(static_cast<std::size_t>(w.size));
    const int first = w.first_local;
    const int end = w.first_local + w.nlocal;
    for (int i = first; i < end; ++i) {
        auto t = std::make_unique<task>();
        t->world_rank = i;
        t->comm_locals[&w.world].name = "MPI_COMM_WORLD";
        t->comm_locals[&w.self].name = "MPI_COMM_SELF";
        args[static_cast<std::size_t>(i)] = {t.get(), main_fn, argc, copy_argv(argc, argv), envp};
        w.tasks[static_cast<std::size_t>(i)] = std::move(t);
    }
    // Messages from other processes may arrive from now on: the engines of this process's
    // ranks exist.
    if (!remote::start_progress()) {
        end_job(2);
    }
    // Every rank allocates from a heap in its own address slice (DESIGN.md decision 2), unless
    // the allocator is off (MPC_ALLOCATOR=system, sanitizer builds).
    bool slices = alloc::interposing();
    if (slices) {
        if (status st = alloc::reserve_space_from_config(w.size); !st) {
            std::fprintf(stderr, "mpc: cannot reserve the address slices of %d ranks: %s\n", w.size, st.reason());
            end_job(2);
        }
        sched::set_stack_allocator(&sched::slice_stack_allocator());  // rank stacks in their slices
    }
    char name[32];
    for (int i = first; i < end; ++i) {
        std::snprintf(name, sizeof(name), "rank %d", i);
        sched::attr a;
        a.name = name;
        a.stack_size = rank_stack_size();
        a.owner = slices ? i : -1;  // the stack comes from the rank's slice
        alloc::slice* sl = nullptr;
        if (slices) {
            sl = alloc::slice_of(i);
            a.heap = sl != nullptr ? alloc::heap::create_in(*sl) : nullptr;
            if (a.heap == nullptr) {
                std::fprintf(stderr, "mpc: cannot create the heap of rank %d in its address slice\n", i);
                end_job(2);
            }
        }
        auto u = sched::spawn(&rank_main, &args[static_cast<std::size_t>(i)], a);
        if (!u) {
            std::fprintf(stderr, "mpc: cannot create rank %d: %s\n", i, u.error().reason());
            end_job(2);
        }
        if (sl != nullptr) {
            // Pages come from the NUMA node of the rank's VP (best effort: a kernel without
            // NUMA support refuses, and nothing is lost).
            (void)sl->bind(sched::numa_node_of(*u));
        }
        ults[static_cast<std::size_t>(i)] = *u;
        w.tasks[static_cast<std::size_t>(i)]->spawned.store(*u, std::memory_order_relaxed);
    }
    w.launched.store(true, std::memory_order_release);
    int status = 0;
    for (int i = first; i < end; ++i) {
        sched::join(ults[static_cast<std::size_t>(i)]).ignore();
        int code = w.tasks[static_cast<std::size_t>(i)]->exit_code;
        if (status == 0 && code != 0) {
            status = code;
        }
        std::free(args[static_cast<std::size_t>(i)].argv);
    }
    remote::finish();  // every process has returned (several processes only)
    sched::finalize().ignore();
    remote::close();
    return status;
}
}  // namespace

extern "C" int mpc_mpi_launch(int (*main_fn)(int, char**, char**), int argc, char** argv, char** envp) {
    return launch(main_fn, argc, argv, envp);
}

extern "C" int mpc_mpi_launch_image(int argc, char** argv, char** envp) {
    if (std::string err; !priv::open_program(err)) {
        std::fprintf(stderr, "mpc: cannot run %s with one copy of its globals per rank: %s\n",
                     argc > 0 ? argv[0] : "the program", err.c_str());
        return 2;
    }
    return launch(nullptr, argc, argv, envp);
}

}  // namespace mpc::mpi
