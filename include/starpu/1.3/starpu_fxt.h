/* StarPU 1.3 API on MPC: the trace controls a program calls (taskgraph/starpu_fxt.cpp). MPC's
 * traces are Chrome/Perfetto JSON files (MPC_TG_TRACE=file, docs/taskgraph.md "Traces"), not
 * FxT: these calls act on that trace. StarPU's FxT tools (starpu_fxt_options,
 * starpu_fxt_generate_trace, starpu_fxt_write_data_trace) are not provided. */
#ifndef MPC_STARPU_FXT_H
#define MPC_STARPU_FXT_H

#ifdef __cplusplus
extern "C" {
#endif

/** 0: the trace records nothing until starpu_fxt_start_profiling (call before starpu_init). */
void starpu_fxt_autostart_profiling(int autostart);
/** Resume / stop recording tasks in the trace. */
void starpu_fxt_start_profiling(void);
void starpu_fxt_stop_profiling(void);
/** 1 when a trace is written (MPC_TG_TRACE is set). */
int starpu_fxt_is_enabled(void);
/** An instant event in the trace, named by the code or the string. */
void starpu_fxt_trace_user_event(unsigned long code);
void starpu_fxt_trace_user_event_string(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_FXT_H */
