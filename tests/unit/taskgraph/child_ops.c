/* Filters whose children have another interface than their parent (starpu_data_filter's
 * get_child_ops), written against StarPU 1.3's documented API; built against MPC here and by
 * user_sched.sh against MPC and Debian's StarPU.
 *  1. A BCSR matrix cut into its blocks by starpu_bcsr_filter_canonical_block (each child a
 *     dense matrix): a task per block scales it, then the matrix is unpartitioned (its values
 *     must be the scaled ones) and partitioned again with starpu_data_partition_plan/_submit
 *     for an SpMV (y = A x), one task per block on the block, its part of x and its part of y,
 *     compared with a serial SpMV of the same arrays; then unpartition_submit and clean.
 *  2. An application's filter that cuts a matrix into its rows as vector children
 *     (get_child_ops giving starpu_interface_vector_ops): a task per row scales it by its
 *     row number + 1, a task on the whole matrix after the unpartition sums it.
 * Prints "child_ops: ... on N workers ...: OK". */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 3   /* rows of a block */
#define C 2   /* columns of a block */
#define NBR 5 /* block rows */
#define NBC 4 /* block columns */

static int failures;
static double absval(double v) { return v < 0 ? -v : v; }
#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            fprintf(stderr, "child_ops: " __VA_ARGS__);                                                              \
            fprintf(stderr, "\n");                                                                                    \
            failures++;                                                                                               \
        }                                                                                                             \
    } while (0)

static void scale_block(void *buffers[], void *cl_arg) {
    double factor = *(double *)cl_arg;
    double *a = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
    unsigned nx = STARPU_MATRIX_GET_NX(buffers[0]), ny = STARPU_MATRIX_GET_NY(buffers[0]);
    unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
    for (unsigned i = 0; i < ny; i++)
        for (unsigned j = 0; j < nx; j++) a[i * ld + j] *= factor;
}

/* y_part += block * x_part (the block's rows are y's, its columns x's) */
static void spmv_block(void *buffers[], void *cl_arg) {
    (void)cl_arg;
    const double *a = (const double *)STARPU_MATRIX_GET_PTR(buffers[0]);
    unsigned nx = STARPU_MATRIX_GET_NX(buffers[0]), ny = STARPU_MATRIX_GET_NY(buffers[0]);
    unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
    const double *x = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    double *y = (double *)STARPU_VECTOR_GET_PTR(buffers[2]);
    if (STARPU_VECTOR_GET_NX(buffers[1]) != nx || STARPU_VECTOR_GET_NX(buffers[2]) != ny) abort();
    for (unsigned i = 0; i < ny; i++) {
        double s = 0;
        for (unsigned j = 0; j < nx; j++) s += a[i * ld + j] * x[j];
        y[i] += s;
    }
}

static void scale_row(void *buffers[], void *cl_arg) {
    double factor;
    starpu_codelet_unpack_args(cl_arg, &factor);
    double *v = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++) v[i] *= factor;
}

static void sum_matrix(void *buffers[], void *cl_arg) {
    const double *a = (const double *)STARPU_MATRIX_GET_PTR(buffers[0]);
    unsigned nx = STARPU_MATRIX_GET_NX(buffers[0]), ny = STARPU_MATRIX_GET_NY(buffers[0]);
    unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
    double s = 0;
    for (unsigned i = 0; i < ny; i++)
        for (unsigned j = 0; j < nx; j++) s += a[i * ld + j];
    *(double *)cl_arg = s;
}

static struct starpu_codelet scale_block_cl = {.cpu_funcs = {scale_block}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet spmv_cl = {
    .cpu_funcs = {spmv_block}, .nbuffers = 3, .modes = {STARPU_R, STARPU_R, STARPU_RW}};
static struct starpu_codelet scale_row_cl = {.cpu_funcs = {scale_row}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet sum_cl = {.cpu_funcs = {sum_matrix}, .nbuffers = 1, .modes = {STARPU_R}};

/* The application's filter: row `id` of a matrix (ny rows of nx contiguous elements) as a
 * vector. */
static void row_filter(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id,
                       unsigned nparts) {
    (void)f;
    (void)nparts;
    struct starpu_matrix_interface *m = (struct starpu_matrix_interface *)father_interface;
    struct starpu_vector_interface *v = (struct starpu_vector_interface *)child_interface;
    size_t bytes = (size_t)id * m->ld * m->elemsize;
    v->id = STARPU_VECTOR_INTERFACE_ID;
    v->nx = m->nx;
    v->elemsize = m->elemsize;
    v->allocsize = (size_t)m->nx * m->elemsize;
    v->dev_handle = m->dev_handle;
    v->offset = m->offset + bytes;
    if (m->ptr) v->ptr = m->ptr + bytes;
}
static struct starpu_data_interface_ops *row_ops(struct starpu_data_filter *f, unsigned id) {
    (void)f;
    (void)id;
    return &starpu_interface_vector_ops;
}
static unsigned row_count(struct starpu_data_filter *f, starpu_data_handle_t h) {
    (void)f;
    return starpu_matrix_get_ny(h);
}

static int submit(struct starpu_task *t) {
    int ret = starpu_task_submit(t);
    CHECK(ret == 0, "starpu_task_submit: %d", ret);
    return ret;
}

static void bcsr_part(void) {
    /* block (i, j) is there when (i + 2 j) % 3 != 1 */
    static uint32_t rowptr[NBR + 1], colind[NBR * NBC];
    static double nz[NBR * NBC * R * C], ref[NBR * NBC * R * C], x[NBC * C], y[NBR * R], yref[NBR * R];
    uint32_t nnz = 0;
    for (uint32_t i = 0; i < NBR; i++) {
        rowptr[i] = nnz;
        for (uint32_t j = 0; j < NBC; j++)
            if ((i + 2 * j) % 3 != 1) colind[nnz++] = j;
    }
    rowptr[NBR] = nnz;
    for (uint32_t k = 0; k < nnz * R * C; k++) nz[k] = ref[k] = 1 + (double)(k % 17) / 4;
    for (uint32_t k = 0; k < NBC * C; k++) x[k] = 1 + (double)k / 8;

    starpu_data_handle_t a, hx, hy;
    starpu_bcsr_data_register(&a, STARPU_MAIN_RAM, nnz, NBR, (uintptr_t)nz, colind, rowptr, 0, R, C, sizeof(double));
    struct starpu_data_filter f;
    memset(&f, 0, sizeof f);
    f.filter_func = starpu_bcsr_filter_canonical_block;
    f.get_nchildren = starpu_bcsr_filter_canonical_block_get_nchildren;
    f.get_child_ops = starpu_bcsr_filter_canonical_block_child_ops;

    /* 1. scale every block by its number + 1 through the children, synchronous partitioning */
    starpu_data_partition(a, &f);
    CHECK(starpu_data_get_nb_children(a) == (int)nnz, "%d children, expected %u", starpu_data_get_nb_children(a), nnz);
    static double factors[NBR * NBC];
    for (uint32_t k = 0; k < nnz; k++) {
        starpu_data_handle_t b = starpu_data_get_child(a, k);
        CHECK(starpu_data_get_interface_id(b) == STARPU_MATRIX_INTERFACE_ID, "child %u: interface %d", k,
              (int)starpu_data_get_interface_id(b));
        CHECK(starpu_matrix_get_nx(b) == C && starpu_matrix_get_ny(b) == R && starpu_matrix_get_local_ld(b) == C &&
                  starpu_matrix_get_elemsize(b) == sizeof(double),
              "child %u: %u x %u, ld %u", k, starpu_matrix_get_nx(b), starpu_matrix_get_ny(b),
              starpu_matrix_get_local_ld(b));
        CHECK(starpu_matrix_get_local_ptr(b) == (uintptr_t)&nz[k * R * C], "child %u: not at block %u's values", k, k);
        CHECK(starpu_data_get_size(b) == R * C * sizeof(double), "child %u: size %zu", k, starpu_data_get_size(b));
        factors[k] = k + 1;
        struct starpu_task *t = starpu_task_create();
        t->cl = &scale_block_cl;
        t->handles[0] = b;
        t->cl_arg = &factors[k];
        t->cl_arg_size = sizeof factors[k];
        submit(t);
    }
    starpu_data_unpartition(a, STARPU_MAIN_RAM);
    CHECK(starpu_data_get_nb_children(a) == 0, "children left after unpartition");
    for (uint32_t k = 0; k < nnz * R * C; k++) ref[k] *= k / (R * C) + 1;
    starpu_data_acquire(a, STARPU_R);
    for (uint32_t k = 0; k < nnz * R * C; k++) CHECK(nz[k] == ref[k], "value %u: %g, expected %g", k, nz[k], ref[k]);
    starpu_data_release(a);

    /* 2. SpMV through the blocks, asynchronous partitioning */
    starpu_vector_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)x, NBC * C, sizeof(double));
    starpu_vector_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)y, NBR * R, sizeof(double));
    struct starpu_data_filter fx, fy;
    memset(&fx, 0, sizeof fx);
    fx.filter_func = starpu_vector_filter_block;
    fx.nchildren = NBC;
    fy = fx;
    fy.nchildren = NBR;
    starpu_data_partition(hx, &fx);
    starpu_data_partition(hy, &fy);
    starpu_data_handle_t blocks[NBR * NBC];
    starpu_data_partition_plan(a, &f, blocks);
    starpu_data_partition_submit(a, nnz, blocks);
    for (uint32_t i = 0; i < NBR; i++)
        for (uint32_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
            CHECK(starpu_data_get_interface_id(blocks[k]) == STARPU_MATRIX_INTERFACE_ID, "planned child %u", k);
            struct starpu_task *t = starpu_task_create();
            t->cl = &spmv_cl;
            t->handles[0] = blocks[k];
            t->handles[1] = starpu_data_get_child(hx, colind[k]);
            t->handles[2] = starpu_data_get_child(hy, i);
            submit(t);
        }
    starpu_data_unpartition_submit(a, nnz, blocks, STARPU_MAIN_RAM);
    starpu_data_partition_clean(a, nnz, blocks);
    starpu_data_unpartition(hx, STARPU_MAIN_RAM);
    starpu_data_unpartition(hy, STARPU_MAIN_RAM);
    starpu_data_unregister(hx);
    starpu_data_unregister(hy);
    starpu_data_unregister(a);
    for (uint32_t i = 0; i < NBR; i++)
        for (uint32_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            for (uint32_t r = 0; r < R; r++)
                for (uint32_t c = 0; c < C; c++) yref[i * R + r] += ref[(k * R + r) * C + c] * x[colind[k] * C + c];
    for (uint32_t i = 0; i < NBR * R; i++)
        CHECK(absval(y[i] - yref[i]) <= 1e-12 * absval(yref[i]), "y[%u] = %.17g, expected %.17g", i, y[i], yref[i]);
    double sum = 0;
    for (uint32_t i = 0; i < NBR * R; i++) sum += y[i];
    printf("child_ops: spmv over %u blocks of %dx%d, sum(y) = %.6f\n", nnz, R, C, sum);
}

static void row_part(void) {
    enum { NX = 5, NY = 7, LD = 6 };
    static double m[LD * NY], expect[LD * NY];
    for (int k = 0; k < LD * NY; k++) m[k] = expect[k] = 1 + k % 5;
    starpu_data_handle_t h;
    starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)m, LD, NX, NY, sizeof(double));
    struct starpu_data_filter f;
    memset(&f, 0, sizeof f);
    f.filter_func = row_filter;
    f.get_nchildren = row_count;
    f.get_child_ops = row_ops;
    static double factors[NY];
    for (int round = 0; round < 2; round++) { /* partition, unpartition, and again */
        starpu_data_partition(h, &f);
        CHECK(starpu_data_get_nb_children(h) == NY, "%d row children", starpu_data_get_nb_children(h));
        for (int r = 0; r < NY; r++) {
            starpu_data_handle_t v = starpu_data_get_sub_data(h, 1, r);
            CHECK(starpu_data_get_interface_id(v) == STARPU_VECTOR_INTERFACE_ID, "row %d: interface %d", r,
                  (int)starpu_data_get_interface_id(v));
            CHECK(starpu_vector_get_nx(v) == NX && starpu_vector_get_local_ptr(v) == (uintptr_t)&m[r * LD],
                  "row %d: nx %u", r, starpu_vector_get_nx(v));
            factors[r] = r + 1;
            int ret = starpu_task_insert(&scale_row_cl, STARPU_RW, v, STARPU_VALUE, &factors[r], sizeof factors[r], 0);
            CHECK(ret == 0, "starpu_task_insert: %d", ret);
            for (int c = 0; c < NX; c++) expect[r * LD + c] *= factors[r];
        }
        starpu_data_unpartition(h, STARPU_MAIN_RAM);
    }
    double sum = -1;
    struct starpu_task *t = starpu_task_create();
    t->cl = &sum_cl;
    t->handles[0] = h;
    t->cl_arg = &sum;
    t->synchronous = 1;
    submit(t);
    starpu_data_unregister(h);
    double want = 0;
    for (int r = 0; r < NY; r++)
        for (int c = 0; c < NX; c++) {
            want += expect[r * LD + c];
            CHECK(m[r * LD + c] == expect[r * LD + c], "m[%d][%d] = %g, expected %g", r, c, m[r * LD + c],
                  expect[r * LD + c]);
        }
    for (int r = 0; r < NY; r++) CHECK(m[r * LD + NX] == 1 + (r * LD + NX) % 5, "the padding of row %d changed", r);
    CHECK(sum == want, "sum over the matrix after the unpartition: %g, expected %g", sum, want);
    printf("child_ops: %d rows as vectors, twice, sum = %.1f\n", NY, sum);
}

int main(void) {
    int ret = starpu_init(NULL);
    if (ret != 0) {
        fprintf(stderr, "child_ops: starpu_init: %d\n", ret);
        return 1;
    }
    unsigned workers = starpu_worker_get_count();
    bcsr_part();
    row_part();
    starpu_shutdown();
    if (failures != 0) {
        fprintf(stderr, "child_ops: %d checks failed\n", failures);
        return 1;
    }
    printf("child_ops: canonical BCSR blocks and matrix rows as vectors on %u workers (results as serial ones): OK\n",
           workers);
    return 0;
}
