#include <starpu.h>
#include <stdio.h>
/* Prints what the built-in interfaces' ops tables (starpu_data_get_interface_ops) say of one
 * handle of each kind: id, interface size, name, size, describe, display, whether to_pointer
 * finds the data, whether the table is the exported starpu_interface_*_ops, and what
 * starpu_data_pointer_is_inside says of each element of the array and of the index arrays,
 * so that compare_filters.sh can compare MPC with Debian's StarPU 1.3. */
static double v[60];
static uint32_t col[4] = {0, 1, 2, 0}, row[4] = {0, 2, 3, 4}, rows[4] = {0, 0, 1, 2};
static void inside(starpu_data_handle_t h) {
	printf(" inside=");
	for (int k = 0; k < 60; ++k) printf("%c", "-01"[starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &v[k]) + 1]);
	printf(" %d%d%d%d", starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &col[3]),
	       starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &row[0]), starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &rows[3]),
	       starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM));
}
static void show(starpu_data_handle_t h, struct starpu_data_interface_ops *expected, void *data, int display) {
	struct starpu_data_interface_ops *o = starpu_data_get_interface_ops(h);
	void *i = starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM);
	char buf[64] = "";
	if (o->describe) o->describe(i, buf, sizeof buf);
	/* COO's size: StarPU 1.3.10 says nx * ny * elemsize (dense), MPC the bytes of its arrays */
	printf("%s id=%d isize=%zu size=%zu exported=%d ptr=%d describe=%s display=", o->name, (int)o->interfaceid,
	       o->interface_size, o->interfaceid == STARPU_COO_INTERFACE_ID ? 0 : o->get_size(h), o == expected, o->to_pointer ? o->to_pointer(i, STARPU_MAIN_RAM) == data : -1, buf);
	fflush(stdout);
	if (display && o->display) o->display(h, stdout); /* StarPU 1.3.10's block display crashes: not called for it */
	inside(h);
	printf("\n");
	starpu_data_unregister(h);
}
int main(void) {
	starpu_data_handle_t h;
	if (starpu_init(NULL)) return 1;
	starpu_variable_data_register(&h, 0, (uintptr_t)v, 8); show(h, &starpu_interface_variable_ops, v, 1);
	starpu_vector_data_register(&h, 0, (uintptr_t)v, 13, 8); show(h, &starpu_interface_vector_ops, v, 1);
	starpu_matrix_data_register(&h, 0, (uintptr_t)v, 7, 5, 3, 8); show(h, &starpu_interface_matrix_ops, v, 1);
	starpu_block_data_register(&h, 0, (uintptr_t)v, 4, 16, 3, 4, 2, 4); show(h, &starpu_interface_block_ops, v, 0);
	starpu_csr_data_register(&h, 0, 4, 3, (uintptr_t)v, col, row, 0, 8); show(h, &starpu_interface_csr_ops, v, 1);
	starpu_bcsr_data_register(&h, 0, 4, 3, (uintptr_t)v, col, row, 0, 2, 3, 8); show(h, &starpu_interface_bcsr_ops, v, 1);
	starpu_coo_data_register(&h, 0, 3, 5, 4, col, rows, (uintptr_t)v, 8); show(h, &starpu_interface_coo_ops, v, 1);
	starpu_void_data_register(&h);
	printf("void id=%d size=%zu", (int)starpu_data_get_interface_id(h), starpu_data_get_size(h));
	inside(h);
	printf("\n");
	starpu_data_unregister(h);
	starpu_vector_data_register(&h, -1, 0, 13, 8); /* memory made at the first use */
	printf("lazy vector allocated=%u inside=%d\n", starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM),
	       starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, v));
	starpu_data_unregister(h);
	starpu_shutdown();
	return 0;
}
