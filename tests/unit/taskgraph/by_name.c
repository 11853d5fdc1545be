/* A StarPU program that includes StarPU's companion headers by their own names, before
 * <starpu.h>, as `pkg-config --cflags starpu-1.3` allows (-I<prefix>/include/starpu/1.3) and
 * StarPU's examples do; mpc_cc must find them too (mpc_cc_by_name.sh). It scales a vector
 * through its 4 parts (starpu_data_filters.h) and reads starpu_scheduler.h's table of
 * predefined policies, and prints "by_name: ... OK". */
#include <starpu_data_filters.h>
#include <starpu_data_interfaces.h>
#include <starpu_sched_component.h>
#include <starpu_scheduler.h>
#include <starpu_task_util.h>
#include <starpu.h>
#include <stdio.h>
#include <string.h>

#define N 1000
#define PARTS 4

static void scale(void* buffers[], void* cl_arg) {
    int factor;
    starpu_codelet_unpack_args(cl_arg, &factor);
    int* v = (int*)STARPU_VECTOR_GET_PTR(buffers[0]);
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i) {
        v[i] *= factor;
    }
}

static struct starpu_codelet scale_cl;  /* filled in main(): this file compiles as C++ too */

int main(void) {
    struct starpu_sched_policy** policies = starpu_sched_get_predefined_policies();
    if (policies == NULL || policies[0] == NULL) {
        fprintf(stderr, "by_name: no predefined policies\n");
        return 1;
    }
    scale_cl.cpu_funcs[0] = scale;
    scale_cl.nbuffers = 1;
    scale_cl.modes[0] = STARPU_RW;
    scale_cl.name = "scale";
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.sched_policy_name = "eager";
    if (starpu_init(&conf) != 0) {
        fprintf(stderr, "by_name: starpu_init failed\n");
        return 1;
    }
    static int v[N];
    for (int i = 0; i < N; ++i) {
        v[i] = i;
    }
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, N, sizeof v[0]);
    struct starpu_data_filter f;
    memset(&f, 0, sizeof f);
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = PARTS;
    starpu_data_partition(h, &f);
    for (int p = 0; p < PARTS; ++p) {
        int factor = 3;
        int ret = starpu_task_insert(&scale_cl, STARPU_RW, starpu_data_get_sub_data(h, 1, p), STARPU_VALUE, &factor,
                                     sizeof factor, 0);
        if (ret != 0) {
            fprintf(stderr, "by_name: starpu_task_insert: %d\n", ret);
            return 1;
        }
    }
    starpu_data_unpartition(h, STARPU_MAIN_RAM);
    starpu_data_unregister(h);
    starpu_shutdown();
    for (int i = 0; i < N; ++i) {
        if (v[i] != 3 * i) {
            fprintf(stderr, "by_name: v[%d] = %d, expected %d\n", i, v[i], 3 * i);
            return 1;
        }
    }
    printf("by_name: %d elements scaled through %d parts (first predefined policy: %s): OK\n", N, PARTS,
           policies[0]->policy_name);
    return 0;
}
