/* Prints the values of the StarPU constants and the interface layouts that MPC declares, so that
 * compare_constants.sh can compare them with Debian's StarPU 1.3 (built from this same file). */
#include <starpu.h>
#include <stddef.h>

int main(void)
{
	printf("STARPU_NONE %lld\n", (long long)(STARPU_NONE));
	printf("STARPU_R %lld\n", (long long)(STARPU_R));
	printf("STARPU_W %lld\n", (long long)(STARPU_W));
	printf("STARPU_RW %lld\n", (long long)(STARPU_RW));
	printf("STARPU_VALUE %lld\n", (long long)(STARPU_VALUE));
	printf("STARPU_CALLBACK %lld\n", (long long)(STARPU_CALLBACK));
	printf("STARPU_CALLBACK_WITH_ARG %lld\n", (long long)(STARPU_CALLBACK_WITH_ARG));
	printf("STARPU_CALLBACK_ARG %lld\n", (long long)(STARPU_CALLBACK_ARG));
	printf("STARPU_PRIORITY %lld\n", (long long)(STARPU_PRIORITY));
	printf("STARPU_TAG %lld\n", (long long)(STARPU_TAG));
	printf("STARPU_DATA_ARRAY %lld\n", (long long)(STARPU_DATA_ARRAY));
	printf("STARPU_DATA_MODE_ARRAY %lld\n", (long long)(STARPU_DATA_MODE_ARRAY));
	printf("STARPU_NAME %lld\n", (long long)(STARPU_NAME));
	printf("STARPU_CL_ARGS %lld\n", (long long)(STARPU_CL_ARGS));
	printf("STARPU_TASK_SYNCHRONOUS %lld\n", (long long)(STARPU_TASK_SYNCHRONOUS));
	printf("STARPU_NOWHERE %lld\n", (long long)(STARPU_NOWHERE));
	printf("STARPU_CPU %lld\n", (long long)(STARPU_CPU));
	printf("STARPU_CUDA %lld\n", (long long)(STARPU_CUDA));
	printf("STARPU_OPENCL %lld\n", (long long)(STARPU_OPENCL));
	printf("STARPU_MAIN_RAM %lld\n", (long long)(STARPU_MAIN_RAM));
	printf("STARPU_VARIABLE_NBUFFERS %lld\n", (long long)(STARPU_VARIABLE_NBUFFERS));
	printf("STARPU_SEQ %lld\n", (long long)(STARPU_SEQ));
	printf("STARPU_MALLOC_PINNED %lld\n", (long long)(STARPU_MALLOC_PINNED));
	printf("STARPU_CPU_WORKER %lld\n", (long long)(STARPU_CPU_WORKER));
	printf("STARPU_CUDA_WORKER %lld\n", (long long)(STARPU_CUDA_WORKER));
	printf("STARPU_OPENCL_WORKER %lld\n", (long long)(STARPU_OPENCL_WORKER));
	printf("STARPU_ANY_WORKER %lld\n", (long long)(STARPU_ANY_WORKER));
	printf("STARPU_UNKNOWN_INTERFACE_ID %lld\n", (long long)(STARPU_UNKNOWN_INTERFACE_ID));
	printf("STARPU_MATRIX_INTERFACE_ID %lld\n", (long long)(STARPU_MATRIX_INTERFACE_ID));
	printf("STARPU_BLOCK_INTERFACE_ID %lld\n", (long long)(STARPU_BLOCK_INTERFACE_ID));
	printf("STARPU_VECTOR_INTERFACE_ID %lld\n", (long long)(STARPU_VECTOR_INTERFACE_ID));
	printf("STARPU_VARIABLE_INTERFACE_ID %lld\n", (long long)(STARPU_VARIABLE_INTERFACE_ID));
	printf("STARPU_PERFMODEL_INVALID %lld\n", (long long)(STARPU_PERFMODEL_INVALID));
	printf("STARPU_PER_ARCH %lld\n", (long long)(STARPU_PER_ARCH));
	printf("STARPU_COMMON %lld\n", (long long)(STARPU_COMMON));
	printf("STARPU_HISTORY_BASED %lld\n", (long long)(STARPU_HISTORY_BASED));
	printf("STARPU_REGRESSION_BASED %lld\n", (long long)(STARPU_REGRESSION_BASED));
	printf("STARPU_NL_REGRESSION_BASED %lld\n", (long long)(STARPU_NL_REGRESSION_BASED));
	printf("STARPU_MULTIPLE_REGRESSION_BASED %lld\n", (long long)(STARPU_MULTIPLE_REGRESSION_BASED));
	printf("STARPU_DEFAULT_PRIO %lld\n", (long long)(STARPU_DEFAULT_PRIO));
	printf("STARPU_NMAXBUFS %lld\n", (long long)(STARPU_NMAXBUFS));
	printf("STARPU_MAXIMPLEMENTATIONS %lld\n", (long long)(STARPU_MAXIMPLEMENTATIONS));
	printf("STARPU_MAJOR_VERSION %lld\n", (long long)(STARPU_MAJOR_VERSION));
	printf("STARPU_MINOR_VERSION %lld\n", (long long)(STARPU_MINOR_VERSION));
	printf("offsetof(starpu_variable_interface, id) %zu\n", offsetof(struct starpu_variable_interface, id));
	printf("offsetof(starpu_variable_interface, ptr) %zu\n", offsetof(struct starpu_variable_interface, ptr));
	printf("offsetof(starpu_variable_interface, dev_handle) %zu\n", offsetof(struct starpu_variable_interface, dev_handle));
	printf("offsetof(starpu_variable_interface, offset) %zu\n", offsetof(struct starpu_variable_interface, offset));
	printf("offsetof(starpu_variable_interface, elemsize) %zu\n", offsetof(struct starpu_variable_interface, elemsize));
	printf("offsetof(starpu_vector_interface, id) %zu\n", offsetof(struct starpu_vector_interface, id));
	printf("offsetof(starpu_vector_interface, ptr) %zu\n", offsetof(struct starpu_vector_interface, ptr));
	printf("offsetof(starpu_vector_interface, dev_handle) %zu\n", offsetof(struct starpu_vector_interface, dev_handle));
	printf("offsetof(starpu_vector_interface, offset) %zu\n", offsetof(struct starpu_vector_interface, offset));
	printf("offsetof(starpu_vector_interface, nx) %zu\n", offsetof(struct starpu_vector_interface, nx));
	printf("offsetof(starpu_vector_interface, elemsize) %zu\n", offsetof(struct starpu_vector_interface, elemsize));
	printf("offsetof(starpu_vector_interface, slice_base) %zu\n", offsetof(struct starpu_vector_interface, slice_base));
	printf("offsetof(starpu_vector_interface, allocsize) %zu\n", offsetof(struct starpu_vector_interface, allocsize));
	printf("offsetof(starpu_matrix_interface, id) %zu\n", offsetof(struct starpu_matrix_interface, id));
	printf("offsetof(starpu_matrix_interface, ptr) %zu\n", offsetof(struct starpu_matrix_interface, ptr));
	printf("offsetof(starpu_matrix_interface, dev_handle) %zu\n", offsetof(struct starpu_matrix_interface, dev_handle));
	printf("offsetof(starpu_matrix_interface, offset) %zu\n", offsetof(struct starpu_matrix_interface, offset));
	printf("offsetof(starpu_matrix_interface, nx) %zu\n", offsetof(struct starpu_matrix_interface, nx));
	printf("offsetof(starpu_matrix_interface, ny) %zu\n", offsetof(struct starpu_matrix_interface, ny));
	printf("offsetof(starpu_matrix_interface, ld) %zu\n", offsetof(struct starpu_matrix_interface, ld));
	printf("offsetof(starpu_matrix_interface, elemsize) %zu\n", offsetof(struct starpu_matrix_interface, elemsize));
	printf("offsetof(starpu_matrix_interface, allocsize) %zu\n", offsetof(struct starpu_matrix_interface, allocsize));
	printf("offsetof(starpu_block_interface, id) %zu\n", offsetof(struct starpu_block_interface, id));
	printf("offsetof(starpu_block_interface, ptr) %zu\n", offsetof(struct starpu_block_interface, ptr));
	printf("offsetof(starpu_block_interface, dev_handle) %zu\n", offsetof(struct starpu_block_interface, dev_handle));
	printf("offsetof(starpu_block_interface, offset) %zu\n", offsetof(struct starpu_block_interface, offset));
	printf("offsetof(starpu_block_interface, nx) %zu\n", offsetof(struct starpu_block_interface, nx));
	printf("offsetof(starpu_block_interface, ny) %zu\n", offsetof(struct starpu_block_interface, ny));
	printf("offsetof(starpu_block_interface, nz) %zu\n", offsetof(struct starpu_block_interface, nz));
	printf("offsetof(starpu_block_interface, ldy) %zu\n", offsetof(struct starpu_block_interface, ldy));
	printf("offsetof(starpu_block_interface, ldz) %zu\n", offsetof(struct starpu_block_interface, ldz));
	printf("offsetof(starpu_block_interface, elemsize) %zu\n", offsetof(struct starpu_block_interface, elemsize));
	printf("sizeof(starpu_variable_interface) %zu\n", sizeof(struct starpu_variable_interface));
	printf("sizeof(starpu_vector_interface) %zu\n", sizeof(struct starpu_vector_interface));
	printf("sizeof(starpu_matrix_interface) %zu\n", sizeof(struct starpu_matrix_interface));
	printf("sizeof(starpu_block_interface) %zu\n", sizeof(struct starpu_block_interface));
	return 0;
}
