/* StarPU's data features on MPC's task-graph runtime, in a program that builds unchanged against
 * StarPU 1.3 (examples/taskgraph/starpu_compat.sh builds it with both):
 *  - a dot product: vectors cut with starpu_vector_filter_block, contributions in STARPU_REDUX
 *    mode into one variable with init/reduction codelets;
 *  - a STARPU_SCRATCH buffer registered on node -1;
 *  - STARPU_RW|STARPU_COMMUTE accumulations, then a reader;
 *  - tiles of a matrix with two filters (starpu_data_map_filters, starpu_data_get_sub_data);
 *  - a CSR sparse matrix-vector product;
 *  - a custom data interface (two arrays) registered with starpu_data_register;
 *  - STARPU_EXECUTE_ON_WORKER and starpu_data_acquire_cb.
 * Prints "data_access: ...: OK" when every result is right. */
#include <starpu.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define PARTS 10
static int failures = 0;

#define CHECK(cond, ...)                    \
	do {                                    \
		if (!(cond)) {                      \
			fprintf(stderr, __VA_ARGS__);   \
			fprintf(stderr, "\n");          \
			failures++;                     \
		}                                   \
	} while (0)

/* ---- dot product with REDUX ------------------------------------------------------------- */
static void dot_kernel(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	const double *x = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const double *y = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	double *dot = (double *)STARPU_VARIABLE_GET_PTR(buffers[2]);
	double s = 0;
	for (unsigned i = 0; i < n; i++)
		s += x[i] * y[i];
	*dot += s;
}
static void dot_init(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 0;
}
static void dot_redux(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(double *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}
static struct starpu_codelet dot_cl = {.cpu_funcs = {dot_kernel}, .nbuffers = 3,
	.modes = {STARPU_R, STARPU_R, STARPU_REDUX}, .name = "dot"};
static struct starpu_codelet init_cl = {.cpu_funcs = {dot_init}, .nbuffers = 1, .modes = {STARPU_W}, .name = "init"};
static struct starpu_codelet redux_cl = {.cpu_funcs = {dot_redux}, .nbuffers = 2,
	.modes = {STARPU_RW, STARPU_R}, .name = "redux"};

static void dot_product(void)
{
	static double x[N], y[N];
	double dot = 0, expect = 0;
	for (int i = 0; i < N; i++) {
		x[i] = i * 0.5;
		y[i] = (i % 7) - 3;
		expect += x[i] * y[i];
	}
	starpu_data_handle_t hx, hy, hd;
	starpu_vector_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)x, N, sizeof(x[0]));
	starpu_vector_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)y, N, sizeof(y[0]));
	starpu_variable_data_register(&hd, STARPU_MAIN_RAM, (uintptr_t)&dot, sizeof(dot));
	starpu_data_set_reduction_methods(hd, &redux_cl, &init_cl);
	struct starpu_data_filter f = {.filter_func = starpu_vector_filter_block, .nchildren = PARTS};
	starpu_data_partition(hx, &f);
	starpu_data_partition(hy, &f);
	for (int round = 0; round < 2; round++)
		for (unsigned p = 0; p < PARTS; p++) {
			int ret = starpu_task_insert(&dot_cl, STARPU_R, starpu_data_get_sub_data(hx, 1, p), STARPU_R,
						     starpu_data_get_sub_data(hy, 1, p), STARPU_REDUX, hd, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
		}
	starpu_data_unpartition(hx, STARPU_MAIN_RAM);
	starpu_data_unpartition(hy, STARPU_MAIN_RAM);
	starpu_data_acquire(hd, STARPU_R);
	CHECK(fabs(dot - 2 * expect) < 1e-9 * fabs(expect), "dot: %g, expected %g", dot, 2 * expect);
	starpu_data_release(hd);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	starpu_data_unregister(hd);
}

/* ---- scratch buffer --------------------------------------------------------------------- */
static void scan_kernel(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	double *v = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	double *tmp = (double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	double s = 0;
	for (unsigned i = 0; i < n; i++) {
		s += v[i];
		tmp[i] = s; /* the scratch buffer: contents undefined on entry */
	}
	memcpy(v, tmp, n * sizeof(v[0]));
}
static struct starpu_codelet scan_cl = {.cpu_funcs = {scan_kernel}, .nbuffers = 2,
	.modes = {STARPU_RW, STARPU_SCRATCH}, .name = "scan"};

static void scratch(void)
{
	static double v[N];
	for (int i = 0; i < N; i++)
		v[i] = 1;
	starpu_data_handle_t hv, htmp;
	starpu_vector_data_register(&hv, STARPU_MAIN_RAM, (uintptr_t)v, N, sizeof(v[0]));
	starpu_vector_data_register(&htmp, -1, 0, N, sizeof(v[0]));
	for (int k = 0; k < 2; k++) {
		int ret = starpu_task_insert(&scan_cl, STARPU_RW, hv, STARPU_SCRATCH, htmp, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
	starpu_data_unregister(hv);
	starpu_data_unregister(htmp);
	/* twice a prefix sum of ones: v[i] = (i + 1)(i + 2) / 2 */
	CHECK(v[N - 1] == (double)N * (N + 1) / 2, "scan: v[N-1] = %g", v[N - 1]);
	CHECK(v[9] == 55, "scan: v[9] = %g", v[9]);
}

/* ---- commute accumulations --------------------------------------------------------------- */
static void add_kernel(void *buffers[], void *cl_arg)
{
	long k;
	starpu_codelet_unpack_args(cl_arg, &k);
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += k;
}
static struct starpu_codelet add_cl = {.cpu_funcs = {add_kernel}, .nbuffers = 1,
	.modes = {STARPU_RW | STARPU_COMMUTE}, .name = "add"};
static void scale_kernel(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) *= 10;
}
static struct starpu_codelet scale_cl = {.cpu_funcs = {scale_kernel}, .nbuffers = 1, .modes = {STARPU_RW},
	.name = "scale"};

static void commute(void)
{
	long acc = 1;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&acc, sizeof(acc));
	for (long k = 1; k <= 100; k++) {
		int ret = starpu_task_insert(&add_cl, STARPU_RW | STARPU_COMMUTE, h, STARPU_VALUE, &k, sizeof(k), 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
		if (k == 50) { /* a plain RW access between two commute groups */
			ret = starpu_task_insert(&scale_cl, STARPU_RW, h, 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
		}
	}
	starpu_data_unregister(h);
	CHECK(acc == (1 + 50 * 51 / 2) * 10 + (5050 - 50 * 51 / 2), "commute: %ld", acc);
}

/* ---- tiles -------------------------------------------------------------------------------- */
#define M 8
static void tile_kernel(void *buffers[], void *cl_arg)
{
	int v;
	starpu_codelet_unpack_args(cl_arg, &v);
	double *a = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	unsigned nx = STARPU_MATRIX_GET_NX(buffers[0]), ny = STARPU_MATRIX_GET_NY(buffers[0]);
	unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
	for (unsigned j = 0; j < ny; j++)
		for (unsigned i = 0; i < nx; i++)
			a[j * ld + i] += v;
}
static struct starpu_codelet tile_cl = {.cpu_funcs = {tile_kernel}, .nbuffers = 1, .modes = {STARPU_RW},
	.name = "tile"};

static void tiles(void)
{
	static double a[M * M];
	starpu_data_handle_t ha;
	starpu_matrix_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)a, M, M, M, sizeof(a[0]));
	struct starpu_data_filter fx = {.filter_func = starpu_matrix_filter_block, .nchildren = 2};
	struct starpu_data_filter fy = {.filter_func = starpu_matrix_filter_vertical_block, .nchildren = 4};
	starpu_data_map_filters(ha, 2, &fx, &fy);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++) {
			int v = 1 + i + 2 * j;
			int ret = starpu_task_insert(&tile_cl, STARPU_RW, starpu_data_get_sub_data(ha, 2, i, j), STARPU_VALUE,
						     &v, sizeof(v), 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
		}
	starpu_data_unpartition(ha, STARPU_MAIN_RAM);
	starpu_data_unregister(ha);
	int bad = 0;
	for (int r = 0; r < M; r++)     /* row r: tile (column block) i = c / 4, row block j = r / 2 */
		for (int c = 0; c < M; c++)
			bad += a[r * M + c] != 1 + c / 4 + 2 * (r / 2);
	CHECK(bad == 0, "tiles: %d wrong elements", bad);
}

/* ---- CSR ----------------------------------------------------------------------------------- */
static void spmv_kernel(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	const double *val = (const double *)STARPU_CSR_GET_NZVAL(buffers[0]);
	const uint32_t *col = STARPU_CSR_GET_COLIND(buffers[0]);
	const uint32_t *row = STARPU_CSR_GET_ROWPTR(buffers[0]);
	uint32_t nrow = STARPU_CSR_GET_NROW(buffers[0]), first = STARPU_CSR_GET_FIRSTENTRY(buffers[0]);
	const double *x = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	double *y = (double *)STARPU_VECTOR_GET_PTR(buffers[2]);
	for (uint32_t r = 0; r < nrow; r++) {
		double s = 0;
		for (uint32_t k = row[r] - first; k < row[r + 1] - first; k++)
			s += val[k] * x[col[k] - first];
		y[r] = s;
	}
}
static struct starpu_codelet spmv_cl = {.cpu_funcs = {spmv_kernel}, .nbuffers = 3,
	.modes = {STARPU_R, STARPU_R, STARPU_W}, .name = "spmv"};

static void csr(void)
{
	/* tridiagonal (-1 2 -1), 100 rows */
	enum { R = 100 };
	static double val[3 * R], x[R], y[R];
	static uint32_t col[3 * R], row[R + 1];
	uint32_t nnz = 0;
	for (uint32_t r = 0; r < R; r++) {
		row[r] = nnz;
		for (int d = -1; d <= 1; d++)
			if ((int)r + d >= 0 && (int)r + d < R) {
				val[nnz] = d == 0 ? 2 : -1;
				col[nnz++] = r + d;
			}
		x[r] = r;
	}
	row[R] = nnz;
	starpu_data_handle_t ha, hx, hy;
	starpu_csr_data_register(&ha, STARPU_MAIN_RAM, nnz, R, (uintptr_t)val, col, row, 0, sizeof(val[0]));
	starpu_vector_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)x, R, sizeof(x[0]));
	starpu_vector_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)y, R, sizeof(y[0]));
	CHECK(starpu_csr_get_nnz(ha) == nnz && starpu_csr_get_nrow(ha) == R, "csr: getters");
	int ret = starpu_task_insert(&spmv_cl, STARPU_R, ha, STARPU_R, hx, STARPU_W, hy, 0);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	starpu_data_unregister(ha);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	/* (A x)_r = 2r - (r-1) - (r+1) = 0 inside; -1 at row 0... row 0: 2*0 - 1 = -1; last: 2(R-1) - (R-2) = R */
	CHECK(y[0] == -1 && y[50] == 0 && y[R - 1] == R, "csr: y[0]=%g y[50]=%g y[R-1]=%g", y[0], y[50], y[R - 1]);
}

/* ---- custom interface: two arrays of n doubles ------------------------------------------- */
struct pair_interface {
	double *a;
	double *b;
	uint32_t n;
};
static void pair_register(starpu_data_handle_t handle, unsigned home_node, void *data_interface)
{
	struct pair_interface *in = (struct pair_interface *)data_interface;
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		struct pair_interface *local = (struct pair_interface *)starpu_data_get_interface_on_node(handle, node);
		local->n = in->n;
		local->a = node == home_node ? in->a : NULL;
		local->b = node == home_node ? in->b : NULL;
	}
}
static starpu_ssize_t pair_allocate(void *data_interface, unsigned node)
{
	struct pair_interface *p = (struct pair_interface *)data_interface;
	size_t bytes = p->n * sizeof(double);
	p->a = (double *)starpu_malloc_on_node(node, bytes);
	p->b = (double *)starpu_malloc_on_node(node, bytes);
	if (!p->a || !p->b)
		return -ENOMEM;
	return 2 * bytes;
}
static void pair_free(void *data_interface, unsigned node)
{
	struct pair_interface *p = (struct pair_interface *)data_interface;
	starpu_free_on_node(node, (uintptr_t)p->a, p->n * sizeof(double));
	starpu_free_on_node(node, (uintptr_t)p->b, p->n * sizeof(double));
}
static size_t pair_size(starpu_data_handle_t handle)
{
	struct pair_interface *p = (struct pair_interface *)starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM);
	return 2 * p->n * sizeof(double);
}
static uint32_t pair_footprint(starpu_data_handle_t handle)
{
	return ((struct pair_interface *)starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM))->n;
}
static int pair_copy(void *src, unsigned src_node, void *dst, unsigned dst_node)
{
	(void)src_node;
	(void)dst_node;
	struct pair_interface *s = (struct pair_interface *)src, *d = (struct pair_interface *)dst;
	memcpy(d->a, s->a, s->n * sizeof(double));
	memcpy(d->b, s->b, s->n * sizeof(double));
	return 0;
}
static int pair_compare(void *x, void *y)
{
	return ((struct pair_interface *)x)->n == ((struct pair_interface *)y)->n;
}
static const struct starpu_data_copy_methods pair_copy_methods = {.ram_to_ram = pair_copy};
static struct starpu_data_interface_ops pair_ops = {
	.register_data_handle = pair_register,
	.allocate_data_on_node = pair_allocate,
	.free_data_on_node = pair_free,
	.copy_methods = &pair_copy_methods,
	.get_size = pair_size,
	.footprint = pair_footprint,
	.compare = pair_compare,
	.interfaceid = STARPU_UNKNOWN_INTERFACE_ID,
	.interface_size = sizeof(struct pair_interface),
	.name = "pair",
};
static void pair_kernel(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	struct pair_interface *p = (struct pair_interface *)buffers[0];
	struct pair_interface *t = (struct pair_interface *)buffers[1]; /* scratch, same shape */
	for (uint32_t i = 0; i < p->n; i++) {
		t->a[i] = p->a[i] + p->b[i];
		t->b[i] = p->a[i] - p->b[i];
	}
	for (uint32_t i = 0; i < p->n; i++) {
		p->a[i] = t->a[i];
		p->b[i] = t->b[i];
	}
}
static struct starpu_codelet pair_cl = {.cpu_funcs = {pair_kernel}, .nbuffers = 2,
	.modes = {STARPU_RW, STARPU_SCRATCH}, .name = "pair"};

static void custom(void)
{
	enum { K = 64 };
	static double a[K], b[K];
	for (int i = 0; i < K; i++) {
		a[i] = i;
		b[i] = 1;
	}
	if (pair_ops.interfaceid == STARPU_UNKNOWN_INTERFACE_ID)
		pair_ops.interfaceid = (enum starpu_data_interface_id)starpu_data_interface_get_next_id();
	struct pair_interface in = {a, b, K};
	starpu_data_handle_t h, tmp;
	starpu_data_register(&h, STARPU_MAIN_RAM, &in, &pair_ops);
	struct pair_interface none = {NULL, NULL, K};
	starpu_data_register(&tmp, -1, &none, &pair_ops);
	CHECK(starpu_data_get_size(h) == 2 * K * sizeof(double), "custom: size %zu", starpu_data_get_size(h));
	CHECK(starpu_data_get_interface_id(h) >= STARPU_MAX_INTERFACE_ID, "custom: id %d",
	      (int)starpu_data_get_interface_id(h));
	int ret = starpu_task_insert(&pair_cl, STARPU_RW, h, STARPU_SCRATCH, tmp, 0);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	starpu_data_unregister(h);
	starpu_data_unregister(tmp);
	/* (a, b) -> (a + b, a - b) */
	CHECK(a[10] == 11 && b[10] == 9, "custom: a[10]=%g b[10]=%g", a[10], b[10]);
}

/* ---- a task on a given worker; acquire with a callback ----------------------------------- */
static void where_kernel(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) = starpu_worker_get_id();
}
static struct starpu_codelet where_cl = {.cpu_funcs = {where_kernel}, .nbuffers = 1, .modes = {STARPU_W},
	.name = "where"};

struct acq {
	starpu_data_handle_t h;
	int *value;
	int seen;
};
static void acquired(void *arg)
{
	struct acq *s = (struct acq *)arg;
	s->seen = *s->value;
	starpu_data_release(s->h);
}

static void worker_and_acquire_cb(void)
{
	int w = -1;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&w, sizeof(w));
	int target = (int)starpu_worker_get_count() - 1;
	int ret = starpu_task_insert(&where_cl, STARPU_W, h, STARPU_EXECUTE_ON_WORKER, target, 0);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	struct acq s = {h, &w, -2};
	ret = starpu_data_acquire_cb(h, STARPU_R, acquired, &s);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_data_acquire_cb");
	ret = starpu_data_acquire(h, STARPU_W); /* after the callback's release */
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_data_acquire");
	CHECK(s.seen == target, "execute on worker %d: ran on %d", target, s.seen);
	starpu_data_release(h);
	starpu_data_unregister(h);
}

int main(void)
{
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	dot_product();
	scratch();
	commute();
	tiles();
	csr();
	custom();
	worker_and_acquire_cb();
	starpu_shutdown();
	if (failures != 0) {
		printf("data_access: %d checks failed\n", failures);
		return 1;
	}
	printf("data_access: redux, scratch, commute, tiles, csr, custom interface, worker, acquire_cb: OK\n");
	return 0;
}
