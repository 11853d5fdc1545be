/// \file
/// Execution traces and the shutdown summary of the task-graph runtime.
///
/// MPC_TG_TRACE=<file>: every executed task (worker, start, end, name, handles, predecessors)
/// and every dependency go to a Chrome trace (JSON object format: "traceEvents", complete
/// events "X" per task on one track per worker, flow events "s"/"f" for the dependencies between
/// executed tasks), readable by chrome://tracing and Perfetto; "mpcDependencies" lists every
/// dependency edge by task id, empty tasks and acquisitions included. Written at shutdown.
/// MPC_TG_SUMMARY=1 (or StarPU's STARPU_WORKER_STATS=1): at shutdown, per worker the tasks run
/// and the busy and idle time, and per codelet the count and mean duration, on stderr.
///
/// Recording is per worker (no lock on the task path); dependencies go to one locked list,
/// only while tracing.
#pragma once

#include <cstdint>

#include "taskgraph/detail.hpp"

namespace mpc::tg::detail {

/// Reads the options at init. `vps[i]` is worker i's VP. Returns whether tasks must be timed.
bool trace_start(int nworkers, const int* vps) noexcept;
/// t ran on `worker` from start to end (steady-clock ns).
void trace_task(const task* t, int worker, std::uint64_t start_ns, std::uint64_t end_ns) noexcept;
/// Stops (true) or resumes recording tasks in the trace (starpu_fxt_stop/start_profiling).
void trace_pause(bool paused) noexcept;
/// Whether a trace is being written (MPC_TG_TRACE).
bool trace_enabled() noexcept;
/// An instant event of the application's in the trace (starpu_fxt_trace_user_event*).
void trace_mark(const char* what) noexcept;
/// A handle's name (starpu_data_set_name), listed in the trace by its address.
void trace_name_data(const void* d, const char* name) noexcept;
/// At shutdown, once the workers have stopped: writes the trace file, prints the summary.
void trace_finish(const char* policy) noexcept;

}  // namespace mpc::tg::detail
