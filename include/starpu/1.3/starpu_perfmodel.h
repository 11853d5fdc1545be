/* StarPU 1.3 API on MPC: performance models.
 *
 * A codelet's model (starpu_codelet::model) is calibrated from measured runs and consulted by
 * the model-based policies (dm, dmda, dmdas). Types: STARPU_HISTORY_BASED (mean per data
 * footprint), STARPU_REGRESSION_BASED (a*size^b), STARPU_NL_REGRESSION_BASED (a*size^b+c),
 * STARPU_COMMON (cost_function) and STARPU_PER_ARCH (arch_cost_function). Models are stored
 * in MPC's own text format (not StarPU's files), in MPC_TG_PERFMODEL_DIR, else
 * STARPU_PERF_MODEL_DIR, else $STARPU_HOME/.starpu/sampling/codelets/mpc; calibration follows
 * STARPU_CALIBRATE (0, 1, 2). STARPU_MULTIPLE_REGRESSION_BASED is accepted and answers as a
 * history-based model. The structure has StarPU 1.3's fields in StarPU's order. */
#ifndef MPC_STARPU_PERFMODEL_H
#define MPC_STARPU_PERFMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "starpu_config.h"
#include "starpu_worker.h"

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;

enum starpu_perfmodel_type {
    STARPU_PERFMODEL_INVALID = 0,
    STARPU_PER_ARCH,
    STARPU_COMMON,
    STARPU_HISTORY_BASED,
    STARPU_REGRESSION_BASED,
    STARPU_NL_REGRESSION_BASED,
    STARPU_MULTIPLE_REGRESSION_BASED
};

/** A device of an architecture (every worker is one CPU core on MPC). */
struct starpu_perfmodel_device {
    enum starpu_worker_archtype type;
    int devid;
    int ncores;
};

/** An architecture: the devices a worker drives. */
struct starpu_perfmodel_arch {
    int ndevices;
    struct starpu_perfmodel_device *devices;
};

/** Private state of a model (MPC's record). */
typedef struct _starpu_perfmodel_state *starpu_perfmodel_state_t;

struct starpu_perfmodel {
    enum starpu_perfmodel_type type;
    /** STARPU_COMMON: expected duration in µs. */
    double (*cost_function)(struct starpu_task *, unsigned nimpl);
    /** STARPU_PER_ARCH: expected duration in µs on the architecture. */
    double (*arch_cost_function)(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned nimpl);
    /** Regressions (and history): the size of the task's problem; default: the bytes of its data. */
    size_t (*size_base)(struct starpu_task *, unsigned nimpl);
    /** History: the key of the task's entry; default: starpu_task_data_footprint(). */
    uint32_t (*footprint)(struct starpu_task *);
    /** Name of the model: its file, and its identity across codelets. */
    const char *symbol;
    unsigned is_loaded;
    unsigned benchmarking;
    unsigned is_init;
    void (*parameters)(struct starpu_task *task, double *parameters);
    const char **parameters_names;
    unsigned nparameters;
    unsigned **combinations;
    unsigned ncombinations;
    starpu_perfmodel_state_t state;
};

/** Prepares a model (done automatically at the first submission of a task using it). */
void starpu_perfmodel_init(struct starpu_perfmodel *model);
/** Loads model `symbol` from the model directory into `model` (whose type may be 0: the
 * file's type is taken). 0; 1 when no stored model has that name (as StarPU 1.3); -EINVAL for
 * a malformed file, reported (StarPU stops the program there). */
int starpu_perfmodel_load_symbol(const char *symbol, struct starpu_perfmodel *model);
/** Loads the model stored in `filename` (same rules). */
int starpu_perfmodel_load_file(const char *filename, struct starpu_perfmodel *model);
int starpu_perfmodel_unload_model(struct starpu_perfmodel *model);

typedef double (*starpu_perfmodel_per_arch_cost_function)(struct starpu_task *task, struct starpu_perfmodel_arch *arch,
                                                          unsigned nimpl);
typedef size_t (*starpu_perfmodel_per_arch_size_base)(struct starpu_task *task, struct starpu_perfmodel_arch *arch,
                                                      unsigned nimpl);
/** The cost function (size base) of implementation impl on one combination of devices, given
 * after func as (enum starpu_worker_archtype type, int devid, int ncores) triples ended by -1.
 * A STARPU_PER_ARCH model without arch_cost_function answers with the function of the CPU
 * workers' combination (STARPU_CPU_WORKER, 0, 1); a size base of that combination replaces
 * the model's size_base for them. Other combinations are accepted and unused (no other
 * workers exist).
 * Returns 0, -EINVAL for a bad list. */
int starpu_perfmodel_set_per_devices_cost_function(struct starpu_perfmodel *model, int impl,
                                                   starpu_perfmodel_per_arch_cost_function func, ...);
int starpu_perfmodel_set_per_devices_size_base(struct starpu_perfmodel *model, int impl,
                                               starpu_perfmodel_per_arch_size_base func, ...);

/** A regression's state (StarPU's layout; the runtime keeps its own, this one is not filled). */
struct starpu_perfmodel_regression_model {
    double sumlny;
    double sumlnx;
    double sumlnx2;
    unsigned long minx;
    unsigned long maxx;
    double sumlnxlny;
    double alpha;
    double beta;
    unsigned valid;
    double a;
    double b;
    double c;
    unsigned nl_valid;
    unsigned nsample;
    double *coeff;
    unsigned ncoeff;
    unsigned multi_valid;
};

struct starpu_perfmodel_history_table;
struct starpu_perfmodel_history_list;

/** One implementation's functions on one combination of devices (StarPU's layout). A program may
 * set cost_function and size_base in the record starpu_perfmodel_get_model_per_devices or
 * _per_arch gives, as with starpu_perfmodel_set_per_devices_*; the other fields are StarPU's
 * private ones (NULL / zero here: the runtime keeps its history elsewhere). */
struct starpu_perfmodel_per_arch {
    starpu_perfmodel_per_arch_cost_function cost_function;
    starpu_perfmodel_per_arch_size_base size_base;
    struct starpu_perfmodel_history_table *history;
    struct starpu_perfmodel_history_list *list;
    struct starpu_perfmodel_regression_model regression;
    char debug_path[256];
};
/** The record of implementation impl on the combination of devices given as (type, devid,
 * ncores) triples ended by -1 (kept with the model); NULL for a bad list. */
struct starpu_perfmodel_per_arch *starpu_perfmodel_get_model_per_devices(struct starpu_perfmodel *model, int impl, ...);
struct starpu_perfmodel_per_arch *starpu_perfmodel_get_model_per_arch(struct starpu_perfmodel *model,
                                                                      struct starpu_perfmodel_arch *arch, unsigned impl);

/** A model for codelets that do nothing (StarPU's dummy schedulers' examples): STARPU_PER_ARCH,
 * every task predicted at 0.000001 us, StarPU's value. */
extern struct starpu_perfmodel starpu_perfmodel_nop;
/** The file of model `symbol`. */
void starpu_perfmodel_get_model_path(const char *symbol, char *path, size_t maxlen);
/** Forgets the models' data (they are read again on next use). */
void starpu_perfmodel_free_sampling(void);
/** Adds a measurement (µs) for the task on `arch`, as if it had run there. */
void starpu_perfmodel_update_history(struct starpu_perfmodel *model, struct starpu_task *task,
                                     struct starpu_perfmodel_arch *arch, unsigned cpuid, unsigned nimpl,
                                     double measured);
/** The expected duration of a history-based model's entry `footprint`, NaN when uncalibrated. */
double starpu_perfmodel_history_based_expected_perf(struct starpu_perfmodel *model,
                                                    struct starpu_perfmodel_arch *arch, uint32_t footprint);
/** The architecture of a worker (sched_ctx_id is ignored: one context). */
struct starpu_perfmodel_arch *starpu_worker_get_perf_archtype(int workerid, unsigned sched_ctx_id);
/** Tools (what starpu_perfmodel_display and _plot use). The model directory
 * ("directory: <dir>"); the models stored there for this host ("file: <symbol>" each; 1 when
 * the directory cannot be read); one architecture's data (the fitted a, b, c of a regression,
 * then "# hash size flops mean (us) dev (us) n" and one line per history entry, or only
 * entry *footprint; with parameter "a", "b" or "c" just that value); every architecture's
 * ("performance model for cpu_impl<k>" before each; arch NULL, "cpu" or "cpu_impl<k>"); the
 * estimations of one footprint on each architecture; the debug file's path (MPC writes none:
 * MPC_TG_TRACE records every run); the model as StarPU's XML. starpu_perfmodel_initialize
 * does nothing (models are read on first use, with or without starpu_init). */
void starpu_perfmodel_initialize(void);
void starpu_perfmodel_directory(FILE *output);
int starpu_perfmodel_list(FILE *output);
void starpu_perfmodel_print(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, unsigned nimpl,
                            char *parameter, uint32_t *footprint, FILE *output);
int starpu_perfmodel_print_all(struct starpu_perfmodel *model, char *arch, char *parameter, uint32_t *footprint,
                               FILE *output);
int starpu_perfmodel_print_estimations(struct starpu_perfmodel *model, uint32_t footprint, FILE *output);
void starpu_perfmodel_debugfilepath(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, char *path,
                                    size_t maxlen, unsigned nimpl);
void starpu_perfmodel_dump_xml(FILE *output, struct starpu_perfmodel *model);
/** Combinations of devices: 0 is the CPU workers' (STARPU_CPU_WORKER, any devid, 1 core);
 * others a program adds are numbered from 1 and used by no worker. get: the number of one, or
 * -1; add: get, else a new one (-EINVAL for no device); fetch: its architecture, or NULL;
 * list_combs: those a model has data for. */
int starpu_perfmodel_get_narch_combs(void);
int starpu_perfmodel_arch_comb_add(int ndevices, struct starpu_perfmodel_device *devices);
int starpu_perfmodel_arch_comb_get(int ndevices, struct starpu_perfmodel_device *devices);
struct starpu_perfmodel_arch *starpu_perfmodel_arch_comb_fetch(int comb);
int starpu_perfmodel_list_combs(FILE *output, struct starpu_perfmodel *model);
/** "cpu" and the like. */
char *starpu_perfmodel_get_archtype_name(enum starpu_worker_archtype archtype);
void starpu_perfmodel_get_arch_name(struct starpu_perfmodel_arch *arch, char *archname, size_t maxlen,
                                    unsigned nimpl);

/** Between memory nodes (only node 0 exists): bandwidth 0 and latency 0 from a node to itself,
 * as StarPU's bus model gives; NaN for nodes that do not exist. transfer_predict: 0 µs for
 * the same node. */
double starpu_transfer_bandwidth(unsigned src_node, unsigned dst_node);
double starpu_transfer_latency(unsigned src_node, unsigned dst_node);
double starpu_transfer_predict(unsigned src_node, unsigned dst_node, size_t size);
/** The bus model as StarPU prints it: one node (main memory) with workers, so a 1 x 1 matrix,
 * no GPU affinity, no calibration files. */
void starpu_bus_print_bandwidth(FILE *f);
void starpu_bus_print_affinity(FILE *f);
void starpu_bus_print_filenames(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_PERFMODEL_H */
