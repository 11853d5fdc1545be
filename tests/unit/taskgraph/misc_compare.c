/* Small calls of the StarPU API whose answers must be StarPU's (built and run with MPC's and
 * with Debian's StarPU by compare_filters.sh, which compares the output): CRC32C hashes, the
 * environment helpers, task names, worker and memory-node queries, buses, profiling's status
 * and time conversions, worker lists. */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void nothing(void *buffers[], void *arg) {
    (void)buffers;
    (void)arg;
}

int main(void) {
    const char text[] = "MPC and StarPU";
    uint32_t words[3] = {0x12345678u, 0, 0xffffffffu};
    printf("crc32c_be_n %u\n", starpu_hash_crc32c_be_n(text, sizeof text, 0));
    printf("crc32c_be_n words %u\n", starpu_hash_crc32c_be_n(words, sizeof words, 42));
    printf("crc32c_be %u %u\n", starpu_hash_crc32c_be(0x12345678u, 0), starpu_hash_crc32c_be(7, 0xdeadbeefu));
    printf("crc32c_string %u %u\n", starpu_hash_crc32c_string(text, 0), starpu_hash_crc32c_string("", 99));

    const char *choices[] = {"eager", "Prio", "dmda", NULL};
    setenv("MPC_TEST_CHOICE", "PRIO", 1);
    printf("env_string %d %d\n", starpu_get_env_string_var_default("MPC_TEST_CHOICE", choices, -1),
           starpu_get_env_string_var_default("MPC_TEST_UNSET", choices, 7));
    const char *sizes[] = {"12", " 3 M", "512B", "2k", "1G", ""};
    for (int i = 0; i < 6; ++i) {
        setenv("MPC_TEST_SIZE", sizes[i], 1);
        printf("env_size '%s' %d\n", sizes[i], starpu_get_env_size_default("MPC_TEST_SIZE", -5));
    }
    printf("env_size unset %d\n", starpu_get_env_size_default("MPC_TEST_UNSET", 33));

    if (starpu_init(NULL) != 0) {
        return 1;
    }
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = nothing;
    cl.name = "cl_name";
    struct starpu_perfmodel model;
    memset(&model, 0, sizeof model);
    model.type = STARPU_HISTORY_BASED;
    model.symbol = "model_symbol";
    struct starpu_task *t = starpu_task_create();
    printf("task names %s %s\n", starpu_task_get_name(t) ? "set" : "(null)", starpu_task_get_model_name(t) ? "set" : "(null)");
    t->cl = &cl;
    printf("task names %s %s\n", starpu_task_get_name(t), starpu_task_get_model_name(t));
    cl.model = &model;
    printf("task names %s %s\n", starpu_task_get_name(t), starpu_task_get_model_name(t));
    t->name = "task_name";
    printf("task names %s %s\n", starpu_task_get_name(t), starpu_task_get_model_name(t));
    printf("task names of none %p\n", (void *)starpu_task_get_name(NULL));
    t->destroy = 0;
    starpu_task_destroy(t);

    int ids[4];
    unsigned nids = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, 4);
    printf("ids_by_type %u %d\n", nids, ids[0]);
    printf("ids_by_type cuda %u\n", starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 4));
    printf("by_type %d %d %d\n", starpu_worker_get_by_type(STARPU_CPU_WORKER, 0),
           starpu_worker_get_by_type(STARPU_CPU_WORKER, 1), starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0));
    printf("by_devid %d devid %d\n", starpu_worker_get_by_devid(STARPU_CPU_WORKER, 0), starpu_worker_get_devid(0));
    printf("type strings %s %s %s\n", starpu_worker_get_type_as_string(STARPU_CPU_WORKER),
           starpu_worker_get_type_as_string(STARPU_CUDA_WORKER), starpu_worker_get_type_as_string(STARPU_ANY_WORKER));
    char name[32];
    starpu_memory_node_get_name(STARPU_MAIN_RAM, name, sizeof name);
    printf("memory nodes %u kind %d name %s local %u\n", starpu_memory_nodes_get_count(),
           (int)starpu_node_get_kind(STARPU_MAIN_RAM), name, starpu_worker_get_local_memory_node());
    printf("numa %d devid %d %d\n", starpu_memory_nodes_get_numa_count(), starpu_memory_node_get_devid(STARPU_MAIN_RAM),
           starpu_memory_nodes_numa_devid_to_id(0));
    /* Without a limit StarPU reports the node's memory: its size differs between hwloc's view
     * and the system's, so only the relation is compared. */
    starpu_ssize_t total = starpu_memory_get_total(STARPU_MAIN_RAM);
    starpu_ssize_t avail = starpu_memory_get_available(STARPU_MAIN_RAM);
    printf("memory total > 0 %d, available <= total %d\n", total > 0, avail <= total);
    printf("buses %d\n", starpu_bus_get_count());
    int before = starpu_profiling_status_get();
    int previous = starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    printf("profiling %d %d %d\n", before, previous, starpu_profiling_status_get());
    starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
    struct timespec a = {5, 250000000}, b = {2, 750000000};
    printf("timespec us %.1f delay %.1f\n", starpu_timing_timespec_to_us(&a), starpu_timing_timespec_delay_us(&b, &a));

    struct starpu_worker_collection co = starpu_worker_list;
    co.init(&co);
    int a0 = co.add(&co, 0);
    int a3 = co.add(&co, 3);
    int again = co.add(&co, 0);
    printf("list add %d %d %d\n", a0, a3, again);
    int r1 = co.remove(&co, 1);
    int r0 = co.remove(&co, 0);
    printf("list remove %d %d n %u\n", r1, r0, co.nworkers);
    struct starpu_sched_ctx_iterator it;
    co.init_iterator(&co, &it);
    while (co.has_next(&co, &it)) {
        printf("list next %d\n", co.get_next(&co, &it));
    }
    co.deinit(&co);
    printf("async copies disabled %d\n", starpu_asynchronous_copy_disabled());
    starpu_shutdown();
    return 0;
}
