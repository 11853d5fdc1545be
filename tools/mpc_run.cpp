/// \file
/// mpc_run: runs an MPI program built with mpc_cc / mpc_cxx as N ranks (ULTs) of one process,
/// with the engine configured by flags.
///
/// Every flag becomes an MPC_* environment variable (the same knobs `--info` lists; `-n` sets
/// MPC_NRANKS), then the program is exec'd: it replaces mpc_run, so its exit status, signals and
/// stdio are its own. The program's start-up code (tools/mpc_start.c, linked by mpc_cc) reads
/// the variables and runs main once per rank. Flags are read up to the first argument that is not
/// a flag (or up to `--`); everything after it belongs to the program. A later flag overrides an
/// earlier one for the same knob.
///
/// Before exec, the program is checked (tools/program_check.hpp): an ELF must be built with
/// mpc_cc / mpc_cxx (it defines the start-up marker symbol); a program that links libmpc and
/// drives the engine itself (examples/ult_demo) runs too, but not with -n; a "#!" script is
/// trusted (it may wrap an MPI program).
///
/// Exit status: 0 for --help/--info, 2 for a usage error (one line on stderr naming it),
/// 127 when exec fails, otherwise the program's own (for an MPI program: the first non-zero
/// exit status of a rank, or the MPI_Abort code).

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
#include <string>
#include <vector>

#include "lib/config.hpp"
#include "lib/log.hpp"
#include "lib/topology.hpp"
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
    "usage: mpc_run [-n N] [FLAGS] [--] PROGRAM [ARGS...]\n"
    "       mpc_run --info | --help\n"
    "\n"
    "Runs PROGRAM, an MPI program built with mpc_cc or mpc_cxx, as N MPI ranks: N user-level\n"
    "threads of one process, each running PROGRAM's main. Each flag sets an MPC_* environment\n"
    "variable, then PROGRAM replaces mpc_run (exec). Flags stop at the first argument that is not\n"
    "a flag, or at '--'; later flags override earlier ones.\n"
    "\n"
    "  -n, -np N              number of MPI ranks, 1..1000000; default 1          -> MPC_NRANKS\n"
    "  -c, --vps N            number of virtual processors (kernel threads, one per core by\n"
    "                         default); 1..4096                                   -> MPC_VPS\n"
    "  --bind compact|scatter VP placement: compact fills cores in order, scatter spreads VPs\n"
    "                         round-robin over NUMA nodes                         -> MPC_BIND\n"
    "  --stack-size SIZE      default ULT stack size; bytes or with suffix k/m/g (powers of\n"
    "                         1024), at least 16k, e.g. 64k or 8M                -> MPC_STACK_SIZE\n"
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
    "Exit status: the first non-zero exit status of a rank, or the MPI_Abort code; 0 when every\n"
    "rank returns 0; 2 for a usage error; 127 if PROGRAM cannot be executed.\n"
    "Example: mpc_run -n 64 -c 4 --bind scatter ./heat 1000\n";

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

command_line parse(int argc, char** argv) {
    command_line cl;
    const std::vector<knob_info> knobs = list_knobs();
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        const char* v = nullptr;
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
        } else if (flag_value(argc, argv, i, "--mpc", &v)) {
            cl.settings.push_back(parse_mpc(v, knobs));
        } else if (flag_value(argc, argv, i, "-np", &v)) {
            cl.settings.push_back(parse_ranks("-np", v));
            cl.ranks = true;
        } else if (flag_value(argc, argv, i, "-n", &v)) {
            cl.settings.push_back(parse_ranks("-n", v));
            cl.ranks = true;
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

/// `kind` says what the program is (check_program), empty when there is none.
void print_configuration(const command_line& cl, int argc, char** argv, const std::string& kind) {
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
    if (cl.program > 0) {
        std::fprintf(stderr, "mpc_run: exec");
        for (int i = cl.program; i < argc; ++i) {
            std::fprintf(stderr, " %s", argv[i]);
        }
        std::fprintf(stderr, "\n");
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

}  // namespace

int main(int argc, char** argv) {
    command_line cl = parse(argc, argv);
    for (const setting& s : cl.settings) {
        if (::setenv(s.name.c_str(), s.value.c_str(), 1) != 0) {
            std::fprintf(stderr, "mpc_run: setenv %s: %s\n", s.name.c_str(), std::strerror(errno));
            return exit_usage;
        }
    }
    std::string kind;
    if (!cl.info && cl.program > 0) {
        kind = check_program(argv[cl.program], find_program(argv[cl.program]), cl.ranks);
    }
    if (cl.verbose) {
        print_configuration(cl, argc, argv, kind);
    }
    if (cl.info) {
        return print_info();
    }
    if (cl.program < 0) {
        usage_error("missing program to run");
    }
    std::fflush(nullptr);
    ::execvp(argv[cl.program], argv + cl.program);
    const int e = errno;
    std::fprintf(stderr, "mpc_run: cannot execute '%s': %s%s\n", argv[cl.program], std::strerror(e),
                 e == ENOENT ? " (its interpreter or dynamic loader is missing)" : "");
    return exit_exec_failed;
}
