/* starpu_conf and the calls around starpu_init whose answers must be StarPU's (built and run
 * with MPC's and with Debian's StarPU by compare_filters.sh, which compares the output, with
 * STARPU_NCPU=1): every non-pointer field after starpu_conf_init, without and with the
 * variables StarPU reads there; reserve_ncpus, explicit bindings, the global context's
 * priorities, the asynchronous-copy flags, pause and resume. */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int all_zero(const unsigned *a) {
    for (int i = 0; i < STARPU_NMAXWORKERS; ++i) {
        if (a[i] != 0) {
            return 0;
        }
    }
    return 1;
}

static void print_conf(const char *what) {
    struct starpu_conf c;
    memset(&c, 0x5a, sizeof c); /* starpu_conf_init must set every field */
    int rc = starpu_conf_init(&c);
    printf("%s: rc %d magic %d will_use_mpi %d precedence %d\n", what, rc, c.magic, c.will_use_mpi,
           c.precedence_over_environment_variables);
    printf("%s: sched_policy_name %s sched_policy %s sched_policy_init %s\n", what,
           c.sched_policy_name ? c.sched_policy_name : "NULL", c.sched_policy ? "set" : "NULL",
           c.sched_policy_init ? "set" : "NULL");
    printf("%s: ncpus %d reserve_ncpus %d ncuda %d nopencl %d nmic %d nmpi_ms %d\n", what, c.ncpus, c.reserve_ncpus,
           c.ncuda, c.nopencl, c.nmic, c.nmpi_ms);
    printf("%s: explicit bindid %u (zero %d) cuda %u (zero %d) opencl %u (zero %d) mic %u (zero %d) mpi_ms %u (zero %d)\n",
           what, c.use_explicit_workers_bindid, all_zero(c.workers_bindid), c.use_explicit_workers_cuda_gpuid,
           all_zero(c.workers_cuda_gpuid), c.use_explicit_workers_opencl_gpuid, all_zero(c.workers_opencl_gpuid),
           c.use_explicit_workers_mic_deviceid, all_zero(c.workers_mic_deviceid),
           c.use_explicit_workers_mpi_ms_deviceid, all_zero(c.workers_mpi_ms_deviceid));
    printf("%s: bus_calibrate %d calibrate %d single_combined_worker %d mic_sink_program_path %s\n", what,
           c.bus_calibrate, c.calibrate, c.single_combined_worker,
           c.mic_sink_program_path ? c.mic_sink_program_path : "NULL");
    printf("%s: disable_asynchronous copy %d cuda %d opencl %d mic %d mpi_ms %d\n", what, c.disable_asynchronous_copy,
           c.disable_asynchronous_cuda_copy, c.disable_asynchronous_opencl_copy, c.disable_asynchronous_mic_copy,
           c.disable_asynchronous_mpi_ms_copy);
    printf("%s: cuda_opengl_interoperability %s %u not_launched_drivers %s %u\n", what,
           c.cuda_opengl_interoperability ? "set" : "NULL", c.n_cuda_opengl_interoperability,
           c.not_launched_drivers ? "set" : "NULL", c.n_not_launched_drivers);
    printf("%s: trace_buffer_size %llu priorities %d %d catch_signals %d backoff %u %u\n", what,
           (unsigned long long)c.trace_buffer_size, c.global_sched_ctx_min_priority, c.global_sched_ctx_max_priority,
           c.catch_signals, c.driver_spinning_backoff_min, c.driver_spinning_backoff_max);
#ifdef STARPU_WORKER_CALLBACKS
    if (c.callback_worker_going_to_sleep != NULL || c.callback_worker_waking_up != NULL) {
        printf("%s: worker callbacks set by starpu_conf_init\n", what);
    }
#endif
}

static const char *vars[][2] = {
    {"STARPU_NCPU", "3"},           {"STARPU_RESERVE_NCPU", "1"},         {"STARPU_NCUDA", "0"},
    {"STARPU_NMIC", "0"},           {"STARPU_NMPI_MS", "0"},              {"STARPU_CALIBRATE", "2"},
    {"STARPU_BUS_CALIBRATE", "1"},  {"STARPU_SINGLE_COMBINED_WORKER", "1"}, {"STARPU_MIC_PROGRAM_PATH", "/sink"},
    {"STARPU_DISABLE_ASYNCHRONOUS_COPY", "1"}, {"STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY", "1"},
    {"STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY", "1"}, {"STARPU_DISABLE_ASYNCHRONOUS_MIC_COPY", "1"},
    {"STARPU_DISABLE_ASYNCHRONOUS_MPI_MS_COPY", "1"}, {"STARPU_TRACE_BUFFER_SIZE", "16"},
    {"STARPU_MIN_PRIO", "2"},       {"STARPU_MAX_PRIO", "7"},             {"STARPU_CATCH_SIGNALS", "0"},
    {"STARPU_BACKOFF_MIN", "4"},    {"STARPU_BACKOFF_MAX", "8"},
};
#define NVARS (sizeof vars / sizeof vars[0])

static int ran;
static void count(void *buffers[], void *arg) {
    (void)buffers;
    (void)arg;
    __atomic_add_fetch(&ran, 1, __ATOMIC_SEQ_CST);
}
static struct starpu_codelet count_cl = {.cpu_funcs = {count}, .nbuffers = 0, .name = "count"};

static void sleep_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void priorities(struct starpu_conf *c);

/* starpu_init with the defaults changed by f; prints its return code and, when it started, the
 * workers' bindings. */
static void init_with(const char *what, void (*f)(struct starpu_conf *)) {
    struct starpu_conf c;
    starpu_conf_init(&c);
    f(&c);
    int rc = starpu_init(&c);
    printf("%s: starpu_init %d", what, rc);
    if (rc == 0) {
        printf(" workers %u bindids", starpu_worker_get_count());
        for (unsigned i = 0; i < starpu_worker_get_count(); ++i) {
            printf(" %d", starpu_worker_get_bindid((int)i));
        }
        if (f == priorities) { /* the policies' own ranges differ: MPC's eager has StarPU's -5..5 */
            printf(" priorities %d %d ctx %d %d", starpu_sched_get_min_priority(), starpu_sched_get_max_priority(),
                   starpu_sched_ctx_get_min_priority(0), starpu_sched_ctx_get_max_priority(0));
        }
        printf(" async %d %d %d %d %d", starpu_asynchronous_copy_disabled(), starpu_asynchronous_cuda_copy_disabled(),
               starpu_asynchronous_opencl_copy_disabled(), starpu_asynchronous_mic_copy_disabled(),
               starpu_asynchronous_mpi_ms_copy_disabled());
        starpu_shutdown();
    }
    printf("\n");
}

static void nothing_changed(struct starpu_conf *c) { (void)c; }
static void reserve_all(struct starpu_conf *c) { c->reserve_ncpus = 1; }
static void bind_0(struct starpu_conf *c) {
    c->use_explicit_workers_bindid = 1;
    c->workers_bindid[0] = 0;
}
static void bind_1(struct starpu_conf *c) {
    c->use_explicit_workers_bindid = 1;
    c->workers_bindid[0] = 1;
}
static void priorities(struct starpu_conf *c) {
    c->global_sched_ctx_min_priority = -2;
    c->global_sched_ctx_max_priority = 3;
}
static void async_flags(struct starpu_conf *c) {
    c->disable_asynchronous_copy = 1;
    c->disable_asynchronous_mic_copy = 1;
}
static void unused_fields(struct starpu_conf *c) {
    c->will_use_mpi = 1;
    c->bus_calibrate = 1;
    c->single_combined_worker = 1;
    c->use_explicit_workers_cuda_gpuid = 1;
    c->workers_cuda_gpuid[0] = 3;
    c->trace_buffer_size = 1 << 20;
    c->catch_signals = 0;
    c->driver_spinning_backoff_min = 2;
    c->driver_spinning_backoff_max = 4;
}

int main(void) {
    /* compare_filters.sh gives Debian's StarPU STARPU_NOPENCL=0 (no OpenCL probing): the same here. */
    setenv("STARPU_NOPENCL", "0", 1);
    print_conf("defaults");
    for (size_t i = 0; i < NVARS; ++i) {
        setenv(vars[i][0], vars[i][1], 1);
    }
    print_conf("environment");
    unsetenv("STARPU_NCPU");
    setenv("STARPU_NCPUS", "2", 1); /* StarPU's older name */
    print_conf("STARPU_NCPUS");
    for (size_t i = 0; i < NVARS; ++i) {
        unsetenv(vars[i][0]);
    }
    unsetenv("STARPU_NCPUS");
    setenv("STARPU_NCPU", "1", 1);

    printf("before starpu_init: async %d mic %d\n", starpu_asynchronous_copy_disabled(),
           starpu_asynchronous_mic_copy_disabled());
    init_with("defaults", nothing_changed);
    init_with("reserve_ncpus 1 of 1", reserve_all);
    init_with("workers_bindid 0", bind_0);
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        init_with("workers_bindid 1", bind_1);
    } else {
        printf("workers_bindid 1: skipped\n");
    }
    init_with("priorities -2 3", priorities);
    init_with("asynchronous copies", async_flags);
    printf("after starpu_shutdown: async %d mic %d\n", starpu_asynchronous_copy_disabled(),
           starpu_asynchronous_mic_copy_disabled());
    init_with("fields without effect", unused_fields);

    /* Pause: a task submitted while paused waits for the last resume. */
    if (starpu_init(NULL) != 0) {
        return 1;
    }
    /* (starpu_mic_device_get_count is declared by StarPU 1.3.10 but missing from its library.) */
    printf("mic workers %u mpi_ms workers %u\n", starpu_mic_worker_get_count(), starpu_mpi_ms_worker_get_count());
    starpu_pause();
    starpu_pause();
    if (starpu_task_insert(&count_cl, 0) != 0) {
        return 1;
    }
    sleep_ms(50);
    printf("paused twice: ran %d\n", __atomic_load_n(&ran, __ATOMIC_SEQ_CST));
    starpu_resume();
    sleep_ms(50);
    printf("resumed once: ran %d\n", __atomic_load_n(&ran, __ATOMIC_SEQ_CST));
    starpu_resume();
    starpu_task_wait_for_all();
    printf("resumed twice: ran %d\n", __atomic_load_n(&ran, __ATOMIC_SEQ_CST));
    starpu_shutdown();
    return 0;
}
