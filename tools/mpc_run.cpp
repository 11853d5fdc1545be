/// \file
/// mpc_run: runs an MPI program built with mpc_cc / mpc_cxx as N ranks (ULTs) of one process,
/// or of P processes (-p), with the engine configured by flags.
///
/// Every flag becomes an MPC_* environment variable (the same knobs `--info` lists; `-n` sets
/// MPC_NRANKS), then the program is exec'd: it replaces mpc_run, so its exit status, signals and
/// stdio are its own. The program's start-up code (tools/mpc_start.c, linked by mpc_cc) reads
/// the variables and runs main once per rank. Flags are read up to the first argument that is not
/// a flag (or up to `--`); everything after it belongs to the program. A later flag overrides an
/// earlier one for the same knob.
///
/// Several processes (docs/architecture.md, "Network: bootstrap of multi-process jobs"):
/// - `-p P` (P > 1): mpc_run stays, as the job's launcher: net::supervisor forks P processes
///   from the main thread, each exec's the program with the same variables (MPC_NRANKS is the
///   job's total N) plus MPC_BOOTSTRAP_FD (its socket to mpc_run, kept across exec),
///   MPC_PROC_INDEX and MPC_PROC_COUNT; each process runs its block of ranks (net::layout). The
///   supervisor serves their bootstrap and ends the job when one fails: mpc_run prints its one
///   line and exits with the job's status. `-p 1` (the default) is the plain exec above.
/// - `-N NODES` inside a Slurm allocation: mpc_run re-executes itself as
///   `srun --mpi=pmix -N NODES -n P [--overcommit] mpc_run FLAGS-without-N PROGRAM ARGS`
///   (P from -p, else NODES). Under a PMIx server (PMIX_RANK set, as in each of those tasks)
///   mpc_run always execs the program directly: -p and -N do not launch anything there, the
///   bootstrap is PMIx's.
///
/// Before exec, the program is checked (tools/program_check.hpp): an ELF must be built with
/// mpc_cc / mpc_cxx (it defines the start-up marker symbol); a program that links libmpc and
/// drives the engine itself (examples/ult_demo) runs too, but not with -n; a "#!" script is
/// trusted (it may wrap an MPI program).
///
/// Exit status: 0 for --help/--info, 2 for a usage error (one line on stderr naming it),
/// 127 when exec fails, otherwise the program's own (for an MPI program: the first non-zero
/// exit status of a rank, or the MPI_Abort code); with -p the job's status from the supervisor
/// (0, the first non-zero exit status, 128 + a signal, or the MPI_Abort code).

#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "lib/topology.hpp"
#include "network/layout.hpp"
#include "network/supervisor.hpp"
#include "scheduler/sched.hpp"
#include "tools/program_check.hpp"

namespace {

constexpr int exit_usage = 2;
constexpr int exit_exec_failed = 127;
// The engine's limits, checked here so that a bad flag fails before the program starts.
constexpr std::int64_t max_vps = mpc::sched::max_vps;
constexpr std::size_t min_stack_size = mpc::sched::min_stack_size;
constexpr std::int64_t max_ranks = 1000000;

const char usage_text[] =
    "usage: mpc_run [-n N] [-p P] [-N NODES] [FLAGS] [--] PROGRAM [ARGS...]\n"
    "       mpc_run --info | --help\n"
    "\n"
    "Runs PROGRAM, an MPI program built with mpc_cc or mpc_cxx, as N MPI ranks: N user-level\n"
    "threads of one process, each running PROGRAM's main. Each flag sets an MPC_* environment\n"
    "variable, then PROGRAM replaces mpc_run (exec). Flags stop at the first argument that is not\n"
    "a flag, or at '--'; later flags override earlier ones.\n"
    "\n"
    "  -n, -np N              number of MPI ranks, 1..1000000; default 1          -> MPC_NRANKS\n"
    "  -p, --procs P          run the N ranks in P processes, 1..N; default 1. With P > 1,\n"
    "                         mpc_run starts P copies of PROGRAM and stays as their launcher;\n"
    "                         each runs a block of N/P ranks (the first N mod P one more) and\n"
    "                         sees MPC_NRANKS=N, MPC_PROC_INDEX, MPC_PROC_COUNT=P and\n"
    "                         MPC_BOOTSTRAP_FD. Each process runs on its share of the allowed\n"
    "                         cores (whole cores, split evenly; one each, shared, when P is\n"
    "                         larger; no split with MPC_SCHED_BIND=0). If one fails (signal,\n"
    "                         non-zero exit, MPI_Abort) the others are ended and one line names it\n"
    "  -N, --nodes NODES      inside a Slurm allocation: run on NODES nodes through\n"
    "                         'srun --mpi=pmix -N NODES -n P', P processes in all (-p, default\n"
    "                         NODES); each runs mpc_run with the other flags\n"
    "  -c, --vps N            number of virtual processors (kernel threads, one per core by\n"
    "                         default); 1..4096                                   -> MPC_VPS\n"
    "  --bind compact|scatter VP placement: compact fills cores in order, scatter spreads VPs\n"
    "                         round-robin over NUMA nodes                         -> MPC_BIND\n"
    "  --stack-size SIZE      default ULT stack size; bytes or with suffix k/m/g (powers of\n"
    "                         1024), at least 16k, e.g. 64k or 8M                -> MPC_STACK_SIZE\n"
    "  --wrap 'CMD [ARGS]'    start each process as CMD ARGS PROGRAM... (words split at\n"
    "                         blanks): a tool such as perf stat, numactl or\n"
    "                         'ip netns exec NS'; with -p it sees MPC_PROC_INDEX\n"
    "  --mpc NAME=VALUE       sets any knob; NAME with or without the MPC_ prefix, any case,\n"
    "                         '-' read as '_' (--mpc log-level=info -> MPC_LOG_LEVEL=info)\n"
    "  -v, --verbose          print the resulting configuration and the command to stderr\n"
    "  --info                 print every configuration knob (name, type, default, current\n"
    "                         value, meaning) and the machine topology, then exit\n"
    "  -h, --help             print this help, then exit\n"
    "\n"
    "Flags accept their value as the next argument or, for long flags, after '='\n"
    "(--bind=scatter); short flags also take it attached (-c4).\n"
    "\n"
    "PROGRAM must be built with mpc_cc/mpc_cxx (its start-up code runs main once per rank);\n"
    "other executables are refused, except programs that link libmpc and drive the engine\n"
    "themselves (no -n), and '#!' scripts, which are trusted to run an MPI program.\n"
    "\n"
    "Under a PMIx server (PMIX_RANK set: srun --mpi=pmix, prterun) PROGRAM is exec'd directly,\n"
    "whatever -p and -N say: the server started the processes.\n"
    "\n"
    "Exit status: the first non-zero exit status of a rank (with -p: of a process, 128 + n for\n"
    "a process killed by signal n), or the MPI_Abort code; 0 when every rank returns 0; 2 for a\n"
    "usage error; 127 if PROGRAM cannot be executed.\n"
    "Examples: mpc_run -n 64 -c 4 --bind scatter ./heat 1000\n"
    "          mpc_run -n 64 -p 4 ./heat 1000      (4 processes of 16 ranks)\n";

/// Prints "mpc_run: <message><suffix>" as one line on stderr and exits with status 2.
[[noreturn]] void vfail(const char* suffix, const char* fmt, std::va_list ap) {
    std::fputs("mpc_run: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputs(suffix, stderr);
    std::exit(exit_usage);
}

[[noreturn, gnu::format(printf, 1, 2)]] void fail(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    vfail("\n", fmt, ap);
}

/// fail() for a malformed command line: the line also points to --help.
[[noreturn, gnu::format(printf, 1, 2)]] void usage_error(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    vfail(" (see mpc_run --help)\n", fmt, ap);
}

// ---- knob metadata --------------------------------------------------------------------------

struct knob_info {
    std::string name;
    std::string type;     // "int", "size", "bool", "string", "choice"
    std::string choices;  // "a|b|c" for choice knobs
};

/// Every declared knob with its type and choices, from the configuration tables.
std::vector<knob_info> list_knobs() {
    static const char* const type_names[] = {"int", "size", "bool", "string", "choice"};
    std::vector<knob_info> out;
    for (const mpc::config::knob* k : mpc::config::all_knobs()) {
        out.push_back({k->env, type_names[static_cast<int>(k->type)], k->choices != nullptr ? k->choices : ""});
    }
    return out;
}

const knob_info* find_knob(const std::vector<knob_info>& knobs, const std::string& name) {
    for (const knob_info& k : knobs) {
        if (k.name == name) {
            return &k;
        }
    }
    return nullptr;
}

bool is_choice(const std::string& choices, const std::string& value) {
    std::size_t start = 0;
    for (;;) {
        std::size_t bar = choices.find('|', start);
        if (choices.compare(start, bar == std::string::npos ? std::string::npos : bar - start, value) == 0) {
            return true;
        }
        if (bar == std::string::npos) {
            return false;
        }
        start = bar + 1;
    }
}

/// Checks `value` against the knob's declared type; the message says what was expected, or is
/// null when the value is fine (or the type unknown).
const char* check_value(const knob_info* k, const std::string& value) {
    if (k == nullptr) {
        return nullptr;
    }
    std::int64_t i = 0;
    std::size_t s = 0;
    bool b = false;
    if (k->type == "int" && !mpc::config::parse_int(value.c_str(), &i)) {
        return "an integer";
    }
    if (k->type == "size" && !mpc::config::parse_size(value.c_str(), &s)) {
        return "a size such as 65536, 64k or 8M";
    }
    if (k->type == "bool" && !mpc::config::parse_bool(value.c_str(), &b)) {
        return "one of 1/0, true/false, yes/no, on/off";
    }
    if (k->type == "choice" && !k->choices.empty() && !is_choice(k->choices, value)) {
        return k->choices.c_str();
    }
    if (k->name == "MPC_LOG_LEVEL" && !mpc::log_configure(value.c_str())) {
        return "a log spec such as warn or warn,sched:debug";
    }
    return nullptr;
}

// ---- flags ----------------------------------------------------------------------------------

struct setting {
    std::string name;
    std::string value;
    std::string origin;  // the flag that set it, for -v
};

struct command_line {
    std::vector<setting> settings;
    bool verbose = false;
    bool info = false;
    bool ranks = false;  // -n given
    int program = -1;    // index of PROGRAM in argv, -1 if none
    int procs = 1;       // -p (checked against N once N is known)
    std::string procs_flag;  // "-p 5" as given, empty: no -p
    int nodes = 0;       // -N, 0: not given
    std::string nodes_flag;
    std::vector<bool> drop;  // per argv index: part of a -N flag (left out when re-executing under srun)
    std::vector<std::string> wrap;  // --wrap's words, run in front of PROGRAM
};

/// If argv[i] is flag `name` ("-c" or "--bind"), stores its value (next argument; for long
/// flags also "--bind=x"; for short flags also "-c4"), advances i past it and returns true.
bool flag_value(int argc, char** argv, int& i, const char* name, const char** value) {
    const std::size_t n = std::strlen(name);
    const char* arg = argv[i];
    if (std::strncmp(arg, name, n) != 0) {
        return false;
    }
    const char* rest = arg + n;
    const bool is_long = name[1] == '-';
    if (*rest == '\0') {
        if (i + 1 >= argc) {
            usage_error("%s needs a value", name);
        }
        *value = argv[++i];
        return true;
    }
    if (is_long && *rest != '=') {
        return false;  // a longer flag that shares the prefix
    }
    *value = is_long ? rest + 1 : rest;
    return true;
}

/// "vps" / "Stack-Size" / "MPC_VPS" -> "MPC_VPS" / "MPC_STACK_SIZE" / "MPC_VPS".
std::string knob_name(std::string name) {
    for (char& c : name) {
        c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return name.rfind("MPC_", 0) == 0 ? name : "MPC_" + name;
}

setting parse_mpc(const char* arg, const std::vector<knob_info>& knobs) {
    const char* eq = std::strchr(arg, '=');
    if (eq == nullptr || eq == arg) {
        usage_error("--mpc expects NAME=VALUE, got '%s'", arg);
    }
    std::string name = knob_name(std::string(arg, eq));
    std::string value = eq + 1;
    if (mpc::config::raw(name.c_str()) == nullptr) {
        fail("unknown configuration knob '%s' in --mpc %s (mpc_run --info lists them)", name.c_str(), arg);
    }
    if (value.empty()) {
        fail("--mpc %s: empty value for %s", arg, name.c_str());
    }
    if (const char* expected = check_value(find_knob(knobs, name), value)) {
        fail("--mpc %s: bad value '%s' for %s: expected %s", arg, value.c_str(), name.c_str(), expected);
    }
    return {name, value, std::string("--mpc ") + arg};
}

setting parse_vps(const char* flag, const char* v) {
    std::int64_t n = 0;
    if (!mpc::config::parse_int(v, &n) || n < 1 || n > max_vps) {
        fail("%s '%s': the number of VPs must be an integer from 1 to %lld", flag, v, static_cast<long long>(max_vps));
    }
    return {"MPC_VPS", v, std::string(flag) + " " + v};
}

setting parse_ranks(const char* flag, const char* v) {
    std::int64_t n = 0;
    if (!mpc::config::parse_int(v, &n) || n < 1 || n > max_ranks) {
        fail("%s '%s': the number of MPI ranks must be an integer from 1 to %lld", flag, v,
             static_cast<long long>(max_ranks));
    }
    return {"MPC_NRANKS", v, std::string(flag) + " " + v};
}

/// -p / -N: a count from 1 to max_ranks (the bound against N is checked once N is known).
int parse_count(const char* flag, const char* v, const char* what) {
    std::int64_t n = 0;
    if (!mpc::config::parse_int(v, &n) || n < 1 || n > max_ranks) {
        fail("%s '%s': the number of %s must be an integer from 1 to the number of MPI ranks (-n)", flag, v, what);
    }
    return static_cast<int>(n);
}

setting parse_bind(const char* v) {
    if (std::strcmp(v, "compact") != 0 && std::strcmp(v, "scatter") != 0) {
        fail("--bind '%s': expected compact or scatter", v);
    }
    return {"MPC_BIND", v, std::string("--bind ") + v};
}

setting parse_stack_size(const char* v) {
    std::size_t n = 0;
    if (!mpc::config::parse_size(v, &n)) {
        fail("--stack-size '%s': expected a size such as 65536, 64k or 8M", v);
    }
    if (n < min_stack_size) {
        fail("--stack-size '%s': the minimum is %zuk", v, min_stack_size / 1024);
    }
    return {"MPC_STACK_SIZE", v, std::string("--stack-size ") + v};
}

/// "perf  stat" -> {"perf", "stat"}: words separated by blanks (no quoting).
std::vector<std::string> split_words(const char* s) {
    std::vector<std::string> out;
    while (*s != '\0') {
        while (*s == ' ' || *s == '\t') {
            ++s;
        }
        const char* start = s;
        while (*s != '\0' && *s != ' ' && *s != '\t') {
            ++s;
        }
        if (s != start) {
            out.emplace_back(start, s);
        }
    }
    return out;
}

command_line parse(int argc, char** argv) {
    command_line cl;
    cl.drop.assign(static_cast<std::size_t>(argc), false);
    const std::vector<knob_info> knobs = list_knobs();
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        const char* v = nullptr;
        const int first = i;
        if (std::strcmp(arg, "--") == 0) {
            cl.program = i + 1 < argc ? i + 1 : -1;
            return cl;
        }
        if (arg[0] != '-' || arg[1] == '\0') {  // PROGRAM ("-" alone is not a flag either)
            cl.program = i;
            return cl;
        }
        if (std::strcmp(arg, "-h") == 0 || std::strcmp(arg, "--help") == 0) {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else if (std::strcmp(arg, "-v") == 0 || std::strcmp(arg, "--verbose") == 0) {
            cl.verbose = true;
        } else if (std::strcmp(arg, "--info") == 0) {
            cl.info = true;
        } else if (flag_value(argc, argv, i, "-c", &v)) {
            cl.settings.push_back(parse_vps("-c", v));
        } else if (flag_value(argc, argv, i, "--vps", &v)) {
            cl.settings.push_back(parse_vps("--vps", v));
        } else if (flag_value(argc, argv, i, "--bind", &v)) {
            cl.settings.push_back(parse_bind(v));
        } else if (flag_value(argc, argv, i, "--stack-size", &v)) {
            cl.settings.push_back(parse_stack_size(v));
        } else if (flag_value(argc, argv, i, "--wrap", &v)) {
            cl.wrap = split_words(v);
            if (cl.wrap.empty()) {
                usage_error("--wrap needs a command");
            }
        } else if (flag_value(argc, argv, i, "--mpc", &v)) {
            cl.settings.push_back(parse_mpc(v, knobs));
        } else if (flag_value(argc, argv, i, "-np", &v)) {
            cl.settings.push_back(parse_ranks("-np", v));
            cl.ranks = true;
        } else if (flag_value(argc, argv, i, "-n", &v)) {
            cl.settings.push_back(parse_ranks("-n", v));
            cl.ranks = true;
        } else if (flag_value(argc, argv, i, "--procs", &v) || flag_value(argc, argv, i, "-p", &v)) {
            const char* flag = argv[first][1] == '-' ? "--procs" : "-p";
            cl.procs = parse_count(flag, v, "processes");
            cl.procs_flag = std::string(flag) + " " + v;
        } else if (flag_value(argc, argv, i, "--nodes", &v) || flag_value(argc, argv, i, "-N", &v)) {
            const char* flag = argv[first][1] == '-' ? "--nodes" : "-N";
            cl.nodes = parse_count(flag, v, "nodes");
            cl.nodes_flag = std::string(flag) + " " + v;
            for (int j = first; j <= i; ++j) {
                cl.drop[static_cast<std::size_t>(j)] = true;
            }
        } else {
            usage_error("unknown flag '%s'", arg);
        }
    }
    return cl;
}

// ---- program --------------------------------------------------------------------------------

/// Null when `path` is an executable regular file, else why not.
const char* not_runnable(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return errno == ENOENT ? "no such file" : std::strerror(errno);
    }
    if (S_ISDIR(st.st_mode)) {
        return "is a directory";
    }
    if (::access(path.c_str(), X_OK) != 0) {
        return "is not executable";
    }
    return nullptr;
}

/// Finds PROGRAM the way execvp() will look for it and returns its path; exits 2 if not found.
std::string find_program(const char* prog) {
    if (std::strchr(prog, '/') != nullptr) {
        if (const char* why = not_runnable(prog)) {
            fail("cannot run program '%s': %s", prog, why);
        }
        return prog;
    }
    const char* env_path = std::getenv("PATH");
    std::string path = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    for (;;) {
        std::size_t colon = path.find(':', start);
        std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + prog;
        if (not_runnable(candidate) == nullptr) {
            return candidate;
        }
        if (colon == std::string::npos) {
            break;
        }
        start = colon + 1;
    }
    if (not_runnable(prog) == nullptr) {
        fail("program '%s' not found in PATH (did you mean ./%s?)", prog, prog);
    }
    fail("program '%s' not found in PATH", prog);
}

/// Refuses PROGRAM (exit 2) unless it can run as MPI ranks (see the file comment); returns a
/// line for -v saying what it is.
std::string check_program(const char* prog, const std::string& path, bool ranks_given) {
    using mpc::tools::program_kind;
    const mpc::tools::program_info info = mpc::tools::inspect_program(path, MPC_LIBMPC_SONAME);
    switch (info.kind) {
        case program_kind::mpi:
            return "an MPI program built with mpc_cc/mpc_cxx";
        case program_kind::script:
            return "a script (" + info.detail +
                   "), run without checking that it starts an MPI program built with mpc_cc";
        case program_kind::engine:
            if (!ranks_given) {
                return "a program that links libmpc and runs the engine itself (not an MPI program: MPC_NRANKS unused)";
            }
            break;
        case program_kind::other:
            break;
    }
    fail("%s was not built with mpc_cc/mpc_cxx (MPI programs must link MPC's mpi.h and start-up code)", prog);
}

// ---- output ---------------------------------------------------------------------------------

/// `kind` says what the program is (check_program), empty when there is none; `launch` how it
/// is started ("exec ./prog 1", "3 processes (...), each: exec ./prog 1"), empty when it is not.
void print_configuration(const command_line& cl, char** argv, const std::string& kind, const std::string& launch) {
    std::fprintf(stderr, "mpc_run: configuration\n");
    const std::vector<knob_info> knobs = list_knobs();
    int width = 0;
    for (const knob_info& k : knobs) {
        width = std::max(width, static_cast<int>(k.name.size()));
    }
    for (const knob_info& k : knobs) {
        const char* v = mpc::config::raw(k.name.c_str());
        const char* env = std::getenv(k.name.c_str());
        const setting* from = nullptr;
        for (const setting& s : cl.settings) {
            from = s.name == k.name ? &s : from;
        }
        const char* origin = (env && *env) ? "environment" : "default";
        if (from != nullptr) {
            origin = from->origin.c_str();
        }
        std::fprintf(stderr, "  %-*s = %-10s (%s)\n", width, k.name.c_str(), (v && *v) ? v : "\"\"", origin);
    }
    mpc::config::warn_unknown_environment();
    if (cl.program > 0 && !kind.empty()) {
        std::fprintf(stderr, "mpc_run: %s is %s\n", argv[cl.program], kind.c_str());
    }
    if (!launch.empty()) {
        std::fprintf(stderr, "mpc_run: %s\n", launch.c_str());
    }
}

/// The knobs, then the topology and where VPs would be placed with the current settings.
int print_info() {
    std::printf("MPC configuration knobs (set as environment variables or with mpc_run flags)\n");
    mpc::config::print_info(stdout);
    std::printf("\ntopology\n");
    mpc::status st = mpc::topo::load();
    if (!st) {
        std::printf("  not available: %s%s%s\n", st.reason(), st.sys_errno() ? ": " : "",
                    st.sys_errno() ? std::strerror(st.sys_errno()) : "");
        return 0;
    }
    std::printf("  %s\n", mpc::topo::describe().c_str());
    std::int64_t vps = 0;
    const char* vps_raw = mpc::config::raw("MPC_VPS");
    if (vps_raw == nullptr || !mpc::config::parse_int(vps_raw, &vps) || vps < 1) {
        vps = mpc::topo::info().allowed_cores;
    }
    const char* bind = mpc::config::raw("MPC_BIND");
    const bool scatter = bind != nullptr && std::strcmp(bind, "scatter") == 0;
    std::printf("  placement of %lld VP(s), %s:\n", static_cast<long long>(vps), scatter ? "scatter" : "compact");
    const auto plan =
        mpc::topo::plan(static_cast<int>(vps), scatter ? mpc::topo::placement::scatter : mpc::topo::placement::compact);
    for (std::size_t i = 0; i < plan.size(); ++i) {
        std::printf("    VP %-3zu PU %-3d core %-3d NUMA %d%s\n", i, plan[i].pu, plan[i].core, plan[i].numa,
                    plan[i].shared ? "  (shares its PU)" : "");
    }
    return 0;
}

// ---- launch ---------------------------------------------------------------------------------

/// "a b c": the words of a command, for -v.
std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        out += (out.empty() ? "" : " ") + w;
    }
    return out;
}

/// The job's number of ranks N: MPC_NRANKS as the flags left it (-n, --mpc nranks=, the
/// environment, else the default 1); `from` says where it came from, for messages.
int job_ranks(const command_line& cl, std::string& from) {
    const char* raw = mpc::config::raw("MPC_NRANKS");
    std::int64_t n = 0;
    if (raw == nullptr || !mpc::config::parse_int(raw, &n) || n < 1 || n > max_ranks) {
        fail("MPC_NRANKS='%s' in the environment: the number of MPI ranks must be an integer from 1 to %lld",
             raw != nullptr ? raw : "", static_cast<long long>(max_ranks));
    }
    const char* env = std::getenv("MPC_NRANKS");
    from = env != nullptr && *env != '\0' ? std::string("MPC_NRANKS=") + env : "the default of 1 rank; see -n";
    for (const setting& s : cl.settings) {
        from = s.name == "MPC_NRANKS" ? s.origin : from;
    }
    return static_cast<int>(n);
}

/// The srun command that runs mpc_run itself on `nodes` nodes, `procs` tasks in all, with the
/// same arguments minus -N (every task sees PMIX_RANK and execs the program).
std::vector<std::string> srun_command(const command_line& cl, int argc, char** argv, int procs) {
    std::vector<std::string> cmd = {"srun", "--mpi=pmix", "-N", std::to_string(cl.nodes), "-n", std::to_string(procs)};
    if (procs > cl.nodes) {
        cmd.emplace_back("--overcommit");  // several processes per node: Slurm counts a CPU per task
    }
    char self[PATH_MAX];
    const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
    cmd.emplace_back(len > 0 ? std::string(self, static_cast<std::size_t>(len)) : std::string(argv[0]));
    for (int i = 1; i < argc; ++i) {
        if (i >= cl.program || !cl.drop[static_cast<std::size_t>(i)]) {
            cmd.emplace_back(argv[i]);
        }
    }
    return cmd;
}

[[noreturn]] void exec_failed(const char* prog) {
    const int e = errno;
    std::fprintf(stderr, "mpc_run: cannot execute '%s': %s%s\n", prog, std::strerror(e),
                 e == ENOENT ? " (its interpreter or dynamic loader is missing)" : "");
    std::exit(exit_exec_failed);
}

/// "3 processes (ranks 0-3, 4-6, 7-9), each: exec" for -v (the first few processes only).
std::string describe_processes(const mpc::net::layout& lay) {
    std::string d = std::to_string(lay.processes()) + " processes (ranks ";
    for (int p = 0; p < lay.processes(); ++p) {
        if (p == 8 && lay.processes() > 9) {
            d += ", ...";
            break;
        }
        const int first = lay.first_rank(p), n = lay.rank_count(p);
        d += p > 0 ? ", " : "";
        d += std::to_string(first);
        if (n > 1) {  // piece by piece: GCC 12's -Wrestrict misfires on "x" + std::string in Release
            d += '-';
            d += std::to_string(first + n - 1);
        }
    }
    return d + "), each: exec";
}

/// The CPUs each of `procs` processes may use: its share of mpc_run's allowed cores
/// (topo::process_share), so that the processes' VPs, each pinned inside its own process's
/// mask, do not all pile onto the first cores. Empty (no restriction) when VPs are not pinned
/// (MPC_SCHED_BIND=0) or the topology cannot be read.
std::vector<cpu_set_t> process_cpus(int procs, bool verbose) {
    std::vector<cpu_set_t> out;
    bool bind = true;
    if (const char* raw = mpc::config::raw("MPC_SCHED_BIND"); raw != nullptr && !mpc::config::parse_bool(raw, &bind)) {
        bind = true;  // the processes report the bad value themselves
    }
    if (!bind || !mpc::topo::load()) {
        return out;
    }
    for (int p = 0; p < procs; ++p) {
        cpu_set_t set;
        CPU_ZERO(&set);
        std::string list;
        for (int pu : mpc::topo::process_share(p, procs)) {
            if (pu >= 0 && pu < CPU_SETSIZE) {
                CPU_SET(pu, &set);
                list += list.empty() ? "" : ",";  // two appends: see describe_processes
                list += std::to_string(pu);
            }
        }
        if (CPU_COUNT(&set) == 0) {
            return {};
        }
        if (verbose && (p < 8 || p == procs - 1)) {
            std::fprintf(stderr, "mpc_run: process %d runs on CPUs %s\n", p, list.c_str());
        }
        out.push_back(set);
    }
    return out;
}

/// mpc_run -p P (P > 1): forks the P processes through the supervisor, each exec'ing PROGRAM
/// with MPC_BOOTSTRAP_FD, MPC_PROC_INDEX and MPC_PROC_COUNT added to the environment and
/// restricted to its share of the cores (process_cpus), serves them until they have all ended
/// and returns the job's exit status.
int run_processes(char** prog_argv, const mpc::net::layout& lay, bool verbose) {
    const int procs = lay.processes();
    const std::vector<cpu_set_t> cpus = process_cpus(procs, verbose);
    mpc::net::supervisor::options opt;
    opt.count = procs;
    for (int p = 0; p < procs; ++p) {
        opt.first_rank.push_back(lay.first_rank(p));
        opt.rank_count.push_back(lay.rank_count(p));
    }
    // Each process's environment, built here so that the child only fills in two slots before it
    // execs: the current one (MPC_NRANKS is the job's N) without stale bootstrap variables, plus
    // MPC_PROC_COUNT, then MPC_PROC_INDEX and MPC_BOOTSTRAP_FD (the child's socket, known there).
    if (::setenv("MPC_PROC_COUNT", std::to_string(procs).c_str(), 1) != 0 || ::unsetenv("MPC_PROC_INDEX") != 0 ||
        ::unsetenv("MPC_BOOTSTRAP_FD") != 0) {
        std::fprintf(stderr, "mpc_run: setenv: %s\n", std::strerror(errno));
        return exit_usage;
    }
    // More processes than cores: processes share cores, and one that spins while idle takes the
    // core from one that has work (long runs of small collectives ran 10x slower): idle VPs and
    // waiting ranks then yield the core between polls.
    if (std::getenv("MPC_SCHED_YIELD") == nullptr && mpc::topo::load() &&
        procs > static_cast<int>(mpc::topo::core_pus().size()) && ::setenv("MPC_SCHED_YIELD", "1", 1) != 0) {
        std::fprintf(stderr, "mpc_run: setenv: %s\n", std::strerror(errno));
        return exit_usage;
    }
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) {
        env.push_back(*e);
    }
    const std::size_t slot = env.size();
    env.resize(slot + 3, nullptr);  // MPC_PROC_INDEX=, MPC_BOOTSTRAP_FD=, the terminating null
    std::vector<std::string> index_vars;
    for (int p = 0; p < procs; ++p) {
        index_vars.push_back("MPC_PROC_INDEX=" + std::to_string(p));
    }
    // Runs in each child after fork (mpc_run has one thread): no allocation, exec or _exit.
    auto child = [&](int index, int fd) {  // fd survives the exec (supervisor::child_main)
        if (!cpus.empty() && ::sched_setaffinity(0, sizeof(cpu_set_t), &cpus[static_cast<std::size_t>(index)]) != 0) {
            std::fprintf(stderr, "mpc_run: process %d: sched_setaffinity: %s (it runs on every allowed CPU)\n", index,
                         std::strerror(errno));
        }
        char fd_var[48];
        std::snprintf(fd_var, sizeof fd_var, "MPC_BOOTSTRAP_FD=%d", fd);
        env[slot] = index_vars[static_cast<std::size_t>(index)].data();
        env[slot + 1] = fd_var;
        ::execvpe(prog_argv[0], prog_argv, env.data());
        const int e = errno;
        std::fprintf(stderr, "mpc_run: process %d: cannot execute '%s': %s\n", index, prog_argv[0], std::strerror(e));
        ::_exit(exit_exec_failed);
    };
    std::fflush(nullptr);  // nothing buffered is written twice by the children
    auto sup = mpc::net::supervisor::start(opt, child);
    if (!sup) {
        const mpc::status& st = sup.error();
        std::fprintf(stderr, "mpc_run: cannot start %d processes: %s%s%s\n", procs, st.reason(),
                     st.sys_errno() != 0 ? ": " : "", st.sys_errno() != 0 ? std::strerror(st.sys_errno()) : "");
        return exit_exec_failed;
    }
    std::string message;
    const int status = sup->run(message);
    if (!message.empty()) {
        std::fprintf(stderr, "mpc_run: %s\n", message.c_str());
    }
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    command_line cl = parse(argc, argv);
    for (const setting& s : cl.settings) {
        if (::setenv(s.name.c_str(), s.value.c_str(), 1) != 0) {
            std::fprintf(stderr, "mpc_run: setenv %s: %s\n", s.name.c_str(), std::strerror(errno));
            return exit_usage;
        }
    }
    // How the job starts: under a PMIx server (a task of srun --mpi=pmix, ours included) the
    // server made the processes: exec, whatever -p and -N say. Else -N goes through srun, -p > 1
    // through the supervisor, and the rest is the plain exec.
    const bool under_pmix = std::getenv("PMIX_RANK") != nullptr;
    const bool use_srun = !under_pmix && cl.nodes > 0;
    int procs = cl.procs;
    int nranks = 1;
    if (!cl.info && !under_pmix && (use_srun || !cl.procs_flag.empty())) {
        if (use_srun) {
            const char* job = std::getenv("SLURM_JOB_ID");
            if (job == nullptr || *job == '\0') {
                fail("-N needs a Slurm allocation (SLURM_JOB_ID is not set)");
            }
        }
        std::string from;
        nranks = job_ranks(cl, from);
        if (use_srun && cl.procs_flag.empty()) {
            procs = cl.nodes;
            if (procs > nranks) {
                fail("%s: more nodes than MPI ranks (%s); each process needs at least one rank", cl.nodes_flag.c_str(),
                     from.c_str());
            }
        }
        if (procs > nranks) {
            fail("%s: more processes than MPI ranks (%s); each process needs at least one rank", cl.procs_flag.c_str(),
                 from.c_str());
        }
        if (use_srun && procs < cl.nodes) {
            fail("%s with %s: fewer processes than nodes", cl.procs_flag.c_str(), cl.nodes_flag.c_str());
        }
    }
    std::string kind;
    if (!cl.info && cl.program > 0) {
        kind = check_program(argv[cl.program], find_program(argv[cl.program]), cl.ranks);
    }
    const bool use_supervisor = !cl.info && !under_pmix && !use_srun && procs > 1;
    std::optional<mpc::net::layout> lay;
    if (use_supervisor) {
        auto l = mpc::net::layout::make(nranks, procs);
        if (!l) {
            fail("%s: %s", cl.procs_flag.c_str(), l.error().reason());  // checked above
        }
        lay = *l;
    }
    if (cl.verbose) {
        std::string launch;
        if (cl.program > 0) {
            std::vector<std::string> prog = cl.wrap;
            prog.insert(prog.end(), argv + cl.program, argv + argc);
            if (use_srun) {
                launch = "exec " + join(srun_command(cl, argc, argv, procs));
            } else if (use_supervisor) {
                launch = describe_processes(*lay) + " " + join(prog);
            } else {
                launch = "exec " + join(prog);
            }
        }
        print_configuration(cl, argv, kind, launch);
    }
    if (cl.info) {
        return print_info();
    }
    if (cl.program < 0) {
        usage_error("missing program to run");
    }
    // What each process execs: --wrap's words, then PROGRAM and its arguments.
    std::vector<char*> command;
    for (std::string& w : cl.wrap) {
        command.push_back(w.data());
    }
    command.insert(command.end(), argv + cl.program, argv + argc);
    command.push_back(nullptr);
    if (use_supervisor) {
        return run_processes(command.data(), *lay, cl.verbose);
    }
    std::fflush(nullptr);
    if (use_srun) {
        std::vector<std::string> cmd = srun_command(cl, argc, argv, procs);
        std::vector<char*> words;
        for (std::string& w : cmd) {
            words.push_back(w.data());
        }
        words.push_back(nullptr);
        ::execvp(words[0], words.data());
        exec_failed(words[0]);
    }
    ::execvp(command[0], command.data());
    exec_failed(command[0]);
}
