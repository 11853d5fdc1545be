/* access.c: what privatization costs per access (benchmarks/run privatize). The same source is
 * built privatized (mpc_cc's default: position-independent code, -Bsymbolic) and with
 * -fno-mpc-privatize (a position-independent executable, cc's default), and run on 1 rank.
 *
 *   global_read   sum of a global array, one element per iteration (ns per element)
 *   global_call   call of a function of another translation unit that increments a global
 *   static_local  a function with a static local counter (ns per call)
 *   tls           a function that increments a _Thread_local variable (ns per call)
 *
 * Timing as the other benchmarks: the iteration count is calibrated until one run lasts the
 * minimum time (20 ms; --quick 4 ms), then the median of 11 runs (--quick 3). Prints ROW lines
 * (benchmarks/lib.sh) with the variant given as argv[1]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ARRAY 4096
int g_array[N_ARRAY];
long g_acc;
extern long g_count;
void ext_bump(void);
_Thread_local long t_count;

__attribute__((noinline)) void tls_bump(void) { ++t_count; }

__attribute__((noinline)) long static_bump(void) {
    static long calls = 0;
    return ++calls;
}

__attribute__((noinline)) void k_global_read(long n) {
    long s = 0;
    for (long i = 0; i < n; ++i) {
        s += g_array[i & (N_ARRAY - 1)];
    }
    g_acc += s;
}

__attribute__((noinline)) void k_global_call(long n) {
    for (long i = 0; i < n; ++i) {
        ext_bump();
    }
}

__attribute__((noinline)) void k_static_local(long n) {
    for (long i = 0; i < n; ++i) {
        static_bump();
    }
}

__attribute__((noinline)) void k_tls(long n) {
    for (long i = 0; i < n; ++i) {
        tls_bump();
    }
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static void measure(const char* metric, void (*k)(long), const char* variant, double min_s, int reps,
                    const char* what) {
    long n = 1000;
    for (;;) { /* calibrate */
        double t0 = MPI_Wtime();
        k(n);
        double t = MPI_Wtime() - t0;
        if (t >= min_s) {
            break;
        }
        n = t > 0 ? (long)((double)n * (min_s / t) * 1.2) + 1 : n * 10;
    }
    double v[32];
    for (int r = 0; r < reps; ++r) {
        double t0 = MPI_Wtime();
        k(n);
        v[r] = (MPI_Wtime() - t0) * 1e9 / (double)n;
    }
    qsort(v, (size_t)reps, sizeof(double), cmp);
    printf("ROW\t%s\t1\tmpc\t%.4f\tns\t%.4f\t%.4f\t\"variant\": \"%s\"\t%s\n", metric, v[reps / 2], v[0],
           v[reps - 1], variant, what);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const char* variant = argc > 1 ? argv[1] : "?";
    int quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    double min_s = quick ? 0.004 : 0.02;
    int reps = quick ? 3 : 11;
    for (int i = 0; i < N_ARRAY; ++i) {
        g_array[i] = i;
    }
    measure("global_read", k_global_read, variant, min_s, reps, "sum of a global int array, per element");
    measure("global_call", k_global_call, variant, min_s, reps,
            "call of a function of another file that increments a global, per call");
    measure("static_local", k_static_local, variant, min_s, reps, "function incrementing its static local, per call");
    measure("tls", k_tls, variant, min_s, reps, "function incrementing a _Thread_local variable, per call");
    if (g_acc == 42 && g_count == 42 && t_count == 42) {
        printf("unlikely\n");
    }
    MPI_Finalize();
    return 0;
}
