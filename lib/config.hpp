/// \file
/// Configuration knobs. Every knob is declared once, in a table of the layer that owns it, and
/// that one declaration serves the environment (MPC_<NAME>), `mpc_run --mpc name=value` (which
/// sets the variable) and `mpc_run --info` (which prints the tables).
///
/// Values are read from the environment when asked for; a malformed value is an error the caller
/// reports (it is never silently replaced by the default).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "lib/status.hpp"

namespace mpc::config {

enum class knob_type { integer, size, boolean, string, choice };

/// One configuration knob. `env` is the variable name (MPC_...); `choices` is a '|'-separated
/// list for knob_type::choice.
struct knob {
    const char* env;
    knob_type type;
    const char* def;
    const char* doc;
    const char* choices = nullptr;
};

/// Registers a layer's table; call from a static initializer (see MPC_CONFIG_TABLE).
void register_table(const char* layer, std::span<const knob> knobs) noexcept;

/// The declaration of a knob, or nullptr when no table declares `env`.
const knob* lookup(const char* env) noexcept;

/// Every declared knob, in registration order (tables are static: the pointers stay valid).
std::vector<const knob*> all_knobs();

/// Checks `value` against the knob's type (and choices); false with a logged reason if bad.
bool validate(const knob& k, const char* value) noexcept;

/// The raw text of a knob: the environment's, else the default. Unknown names return nullptr.
const char* raw(const char* env) noexcept;

result<std::int64_t> get_int(const char* env) noexcept;
/// Sizes accept suffixes k, m, g, t (powers of 1024) and an optional trailing 'b'/'B'.
result<std::size_t> get_size(const char* env) noexcept;
result<bool> get_bool(const char* env) noexcept;
/// For choice knobs: the index of the value within the choices list.
result<int> get_choice(const char* env) noexcept;

/// Parsers used by the getters, exposed for tests and for mpc_run's flag checks.
bool parse_size(const char* s, std::size_t* out) noexcept;
bool parse_int(const char* s, std::int64_t* out) noexcept;
bool parse_bool(const char* s, bool* out) noexcept;

/// Warns (once per name) about MPC_* variables that no table declares. Returns how many.
int warn_unknown_environment() noexcept;

/// Prints every knob: name, type, default, current value, doc.
void print_info(std::FILE* out) noexcept;

namespace detail {
struct registrar {
    registrar(const char* layer, std::span<const knob> knobs) noexcept { register_table(layer, knobs); }
};
}  // namespace detail

}  // namespace mpc::config

/// Declares and registers a layer's table: MPC_CONFIG_TABLE(sched, { {...}, {...} });
#define MPC_CONFIG_TABLE(layer, ...)                                                         \
    namespace {                                                                              \
    const ::mpc::config::knob mpc_knobs_##layer[] = __VA_ARGS__;                             \
    const ::mpc::config::detail::registrar mpc_knobs_reg_##layer{#layer, mpc_knobs_##layer}; \
    }
