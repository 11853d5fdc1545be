#include <starpu.h>
#include <stdio.h>
/* Prints the parts (sizes, element offsets) that the standard filters make of a vector, a
 * matrix and a 3-D block, so that compare_filters.sh can compare MPC with Debian's StarPU 1.3. */
static void show(starpu_data_handle_t h, const char *what, int kind, uintptr_t base, size_t es) {
	for (int i = 0; i < starpu_data_get_nb_children(h); i++) {
		starpu_data_handle_t c = starpu_data_get_child(h, i);
		if (kind == 0) printf("%s %d nx=%u off=%zu\n", what, i, starpu_vector_get_nx(c), (starpu_vector_get_local_ptr(c) - base) / es);
		if (kind == 1) printf("%s %d nx=%u ny=%u off=%zu\n", what, i, starpu_matrix_get_nx(c), starpu_matrix_get_ny(c), (starpu_matrix_get_local_ptr(c) - base) / es);
		if (kind == 2) printf("%s %d %u %u %u off=%zu\n", what, i, starpu_block_get_nx(c), starpu_block_get_ny(c), starpu_block_get_nz(c), (starpu_block_get_local_ptr(c) - base) / es);
	}
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
}
int main(void) {
	if (starpu_init(NULL)) return 1;
	static double v[23], m[13 * 7]; static float b[5 * 6 * 7];
	starpu_data_handle_t hv, hm, hb;
	starpu_vector_data_register(&hv, 0, (uintptr_t)v, 23, 8);
	starpu_matrix_data_register(&hm, 0, (uintptr_t)m, 13, 11, 7, 8);
	starpu_block_data_register(&hb, 0, (uintptr_t)b, 5, 30, 5, 6, 7, 4);
	struct starpu_data_filter f = {.filter_func = starpu_vector_filter_block, .nchildren = 4};
	starpu_data_partition(hv, &f); show(hv, "vblock", 0, (uintptr_t)v, 8);
	f.filter_func = starpu_vector_filter_block_shadow; f.filter_arg_ptr = (void *)(uintptr_t)2;
	starpu_data_partition(hv, &f); show(hv, "vshadow", 0, (uintptr_t)v, 8);
	uint32_t l[] = {3, 0, 10, 5}; f.filter_func = starpu_vector_filter_list; f.filter_arg_ptr = l;
	starpu_data_partition(hv, &f); show(hv, "vlist", 0, (uintptr_t)v, 8);
	f.nchildren = 3; f.filter_arg_ptr = (void *)(uintptr_t)1;
	void (*mf[])(void *, void *, struct starpu_data_filter *, unsigned, unsigned) = {starpu_matrix_filter_block, starpu_matrix_filter_vertical_block, starpu_matrix_filter_block_shadow, starpu_matrix_filter_vertical_block_shadow};
	for (int k = 0; k < 4; k++) { f.filter_func = mf[k]; starpu_data_partition(hm, &f); show(hm, "m", 1, (uintptr_t)m, 8); }
	void (*bf[])(void *, void *, struct starpu_data_filter *, unsigned, unsigned) = {starpu_block_filter_block, starpu_block_filter_vertical_block, starpu_block_filter_depth_block, starpu_block_filter_block_shadow, starpu_block_filter_vertical_block_shadow, starpu_block_filter_depth_block_shadow};
	f.nchildren = 2;
	for (int k = 0; k < 6; k++) { f.filter_func = bf[k]; starpu_data_partition(hb, &f); show(hb, "b", 2, (uintptr_t)b, 4); }
	f.filter_func = starpu_vector_filter_divide_in_2; f.nchildren = 2;
	for (unsigned first = 0; first <= 22; first += 11) { f.filter_arg = first; starpu_data_partition(hv, &f); show(hv, "vhalf", 0, (uintptr_t)v, 8); }
	/* CSR: 7 rows with 0..3 entries; BCSR: 5 block rows of 2 x 3 blocks */
	static uint32_t rowptr[] = {0, 2, 2, 5, 6, 9, 10, 12}, colind[12];
	static double nz[12 * 6];
	starpu_data_handle_t hc, hbc;
	starpu_csr_data_register(&hc, 0, 12, 7, (uintptr_t)nz, colind, rowptr, 0, 8);
	f.filter_func = starpu_csr_filter_vertical_block;
	for (unsigned n = 2; n <= 4; n++) {
		f.nchildren = n; starpu_data_partition(hc, &f);
		for (int i = 0; i < starpu_data_get_nb_children(hc); i++) {
			starpu_data_handle_t c = starpu_data_get_child(hc, i);
			printf("csr %u %d nnz=%u nrow=%u first=%u row=%td col=%td val=%zu\n", n, i, starpu_csr_get_nnz(c), starpu_csr_get_nrow(c), starpu_csr_get_firstentry(c), starpu_csr_get_local_rowptr(c) - rowptr, starpu_csr_get_local_colind(c) - colind, (starpu_csr_get_local_nzval(c) - (uintptr_t)nz) / 8);
		}
		starpu_data_unpartition(hc, STARPU_MAIN_RAM);
	}
	starpu_bcsr_data_register(&hbc, 0, 10, 5, (uintptr_t)nz, colind, rowptr, 0, 2, 3, 8);
	f.filter_func = starpu_bcsr_filter_vertical_block;
	for (unsigned n = 2; n <= 3; n++) {
		f.nchildren = n; starpu_data_partition(hbc, &f);
		for (int i = 0; i < starpu_data_get_nb_children(hbc); i++) {
			starpu_data_handle_t c = starpu_data_get_child(hbc, i);
			printf("bcsr %u %d nnz=%u nrow=%u first=%u row=%td col=%td val=%zu r=%u c=%u\n", n, i, starpu_bcsr_get_nnz(c), starpu_bcsr_get_nrow(c), starpu_bcsr_get_firstentry(c), starpu_bcsr_get_local_rowptr(c) - rowptr, starpu_bcsr_get_local_colind(c) - colind, (starpu_bcsr_get_local_nzval(c) - (uintptr_t)nz) / 8, starpu_bcsr_get_r(c), starpu_bcsr_get_c(c));
		}
		starpu_data_unpartition(hbc, STARPU_MAIN_RAM);
	}
	/* BCSR into its blocks (dense matrices, get_child_ops), and a child of the vertical cut
	 * into its own: where each block's values are */
	struct starpu_data_filter fc = {.filter_func = starpu_bcsr_filter_canonical_block, .get_nchildren = starpu_bcsr_filter_canonical_block_get_nchildren, .get_child_ops = starpu_bcsr_filter_canonical_block_child_ops};
	starpu_data_partition(hbc, &fc);
	for (int i = 0; i < starpu_data_get_nb_children(hbc); i++) {
		starpu_data_handle_t c = starpu_data_get_child(hbc, i);
		printf("bcsr-block %d id=%d nx=%u ny=%u ld=%u es=%zu size=%zu val=%zu\n", i, (int)starpu_data_get_interface_id(c), starpu_matrix_get_nx(c), starpu_matrix_get_ny(c), starpu_matrix_get_local_ld(c), starpu_matrix_get_elemsize(c), starpu_data_get_size(c), (starpu_matrix_get_local_ptr(c) - (uintptr_t)nz) / 8);
	}
	starpu_data_unpartition(hbc, STARPU_MAIN_RAM);
	starpu_data_unregister(hc); starpu_data_unregister(hbc);
	starpu_data_unregister(hv); starpu_data_unregister(hm); starpu_data_unregister(hb);
	starpu_shutdown(); return 0;
}
