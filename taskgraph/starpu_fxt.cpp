/// \file
/// StarPU 1.3 C API: trace controls (starpu_fxt.h) over MPC's Chrome/Perfetto trace.
#include <starpu.h>
#include <starpu_fxt.h>

#include <cstdio>

#include "taskgraph/trace.hpp"

extern "C" {

void starpu_fxt_autostart_profiling(int autostart) {
    mpc::tg::detail::trace_pause(autostart == 0);  // kept across starpu_init: the trace's state
}

void starpu_fxt_start_profiling(void) { mpc::tg::detail::trace_pause(false); }
void starpu_fxt_stop_profiling(void) { mpc::tg::detail::trace_pause(true); }
int starpu_fxt_is_enabled(void) { return mpc::tg::detail::trace_enabled() ? 1 : 0; }

void starpu_fxt_trace_user_event(unsigned long code) {
    char name[48];
    std::snprintf(name, sizeof name, "user event %lu", code);
    mpc::tg::detail::trace_mark(name);
}

void starpu_fxt_trace_user_event_string(const char* s) { mpc::tg::detail::trace_mark(s); }

}  // extern "C"
