/// \file
/// Performance models: expected task durations learned from measured runs, per model (a name,
/// StarPU's `symbol`), per architecture, and per footprint (history) or per size (regressions).
///
/// - history: the mean of the runs with the same footprint (a hash of the data's sizes, or the
///   application's footprint function).
/// - regression: a * size^b, fitted by least squares on log(time) against log(size) over every
///   run (StarPU's STARPU_REGRESSION_BASED); needs runs of two sizes at least.
/// - nl_regression: a * size^b + c (STARPU_NL_REGRESSION_BASED), fitted on the per-size means:
///   for each b of a search over [0.05, 4], a and c by linear least squares, the best b kept.
///   A regression without enough data answers from the history.
///
/// Calibration (STARPU_CALIBRATE, or MPC_TG_CALIBRATE): 0 (default) measures a task only while
/// its entry has fewer than calibrate_minimum runs (an uncalibrated model calibrates itself,
/// as in StarPU); 1 measures every run; 2 drops what was stored and measures every run.
///
/// Storage: one text file per model, `<dir>/<symbol>.<host>.mpc`, where <dir> is
/// MPC_TG_PERFMODEL_DIR, else STARPU_PERF_MODEL_DIR, else $STARPU_HOME/.starpu/sampling/codelets/mpc,
/// else $HOME/.starpu/sampling/codelets/mpc (not StarPU's own files: their format differs). A
/// model is read on first use and written at shutdown when it changed. A file that cannot be
/// read or parsed is reported once (a warning naming the file and the line) and ignored: the
/// model starts empty and the file is overwritten at the next save.
///
/// Format (text, one record per line; '#' starts a comment):
///   mpc-perfmodel 1
///   symbol <name>
///   type history|regression|nl_regression
///   arch <name>
///   entry <footprint, 8 hex digits> <size> <nsamples> <sum of µs> <sum of µs²>
///   reg <n> <Σ ln size> <Σ ln t> <Σ (ln size)²> <Σ ln size · ln t>
///   end
/// (arch ... end repeated per architecture).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/status.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg {

enum class model_type { history, regression, nl_regression };

/// Runs an entry needs before it is calibrated (StarPU's STARPU_CALIBRATE_MINIMUM).
inline constexpr unsigned calibrate_minimum = 10;
/// Architectures known to the models; every worker is a CPU for now.
inline constexpr int arch_cpu = 0;
const char* arch_name(int arch) noexcept;

/// The model named `symbol` (created on first use; records live until the process ends, so a
/// pointer stays valid). nullptr for a null or empty symbol. A model named again with another
/// type keeps its first type (logged).
perfmodel* model_get(const char* symbol, model_type type) noexcept;
const char* model_symbol(const perfmodel* m) noexcept;
model_type model_kind(const perfmodel* m) noexcept;

/// Expected duration in µs for footprint/size on `arch`; NaN when the model cannot tell yet
/// (fewer than calibrate_minimum runs for a history entry, no usable regression).
double model_expected_us(perfmodel* m, int arch, std::uint32_t footprint, std::size_t size) noexcept;
/// Adds one measured run: kept according to the calibration level, or always with `always`
/// (a measurement the application gives).
void model_record(perfmodel* m, int arch, std::uint32_t footprint, std::size_t size, double us,
                  bool always = false) noexcept;
/// Runs recorded for an entry (history).
unsigned model_samples(perfmodel* m, int arch, std::uint32_t footprint) noexcept;

/// One history entry: its footprint, size, runs, mean and standard deviation (µs), and the sums.
struct model_entry {
    std::uint32_t footprint;
    std::size_t size;
    unsigned n;
    double mean_us;
    double stddev_us;
    double sum;
    double sum2;
};
/// The history entries of m on `arch` (loaded if needed), in footprint order.
std::vector<model_entry> model_entries(perfmodel* m, int arch);
/// The fitted regression of m on `arch`: a * size^b (+ c for nl_regression; c = 0 otherwise);
/// false when m is no regression or not fitted yet.
bool model_fit(perfmodel* m, int arch, double* a, double* b, double* c) noexcept;
/// The symbols of the models stored for this host in model_dir(), sorted, into *out; false
/// when the directory cannot be read.
bool model_stored(std::vector<std::string>* out);

/// The directory the models are stored in (see above), without a trailing slash.
std::string model_dir();
/// The file of model `symbol`.
std::string model_path(const char* symbol);
/// Writes every changed model (at shutdown). Errors are logged; returns the first.
status model_save_all() noexcept;
/// Sets the calibration level (0, 1, 2) from a configuration (-1: none): MPC_TG_CALIBRATE,
/// else STARPU_CALIBRATE, wins over it unless over_env. Holds until model_unload_all().
void model_set_calibrate(int level, bool over_env) noexcept;
/// The calibration level in force (read from the environment on first use).
int model_calibrate_level() noexcept;
/// Forgets every model's data (they are read again from disk on next use); re-reads the
/// calibration level from the environment.
void model_unload_all() noexcept;
/// Reads a model file into m (replacing m's data; on failure m is left empty).
/// errc::invalid_argument for a malformed file, errc::system (sys_errno() ENOENT when it does
/// not exist) when it cannot be read; *why receives the details (the line for a parse error).
status model_load_file(perfmodel* m, const char* path, std::string* why) noexcept;

/// Footprint of a task's data when the application gives none: a CRC-style hash of each
/// buffer's interface kind and dimensions; *size receives the bytes the task accesses.
std::uint32_t data_footprint(data* const* handles, int n, std::size_t* size) noexcept;

/// What the runtime's policies use: t's expected duration on `worker` from its model or cost
/// (µs), NaN when uncalibrated, 0 without a model.
double task_expected_us(const task* t, int worker) noexcept;

}  // namespace mpc::tg
