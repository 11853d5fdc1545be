/* StarPU 1.3 API on MPC: the variable, vector, matrix and block data interfaces, with StarPU's
 * layouts and accessor macros. Codelets receive pointers to these structures in buffers[].
 * Only main memory exists (home node STARPU_MAIN_RAM), so dev_handle equals ptr and offset is 0. */
#ifndef MPC_STARPU_DATA_INTERFACES_H
#define MPC_STARPU_DATA_INTERFACES_H

#include <stddef.h>
#include <stdint.h>

#include "starpu_data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* StarPU's identifiers for the interfaces implemented here. */
enum starpu_data_interface_id {
    STARPU_UNKNOWN_INTERFACE_ID = -1,
    STARPU_MATRIX_INTERFACE_ID = 0,
    STARPU_BLOCK_INTERFACE_ID = 1,
    STARPU_VECTOR_INTERFACE_ID = 2,
    STARPU_VARIABLE_INTERFACE_ID = 5
};

enum starpu_data_interface_id starpu_data_get_interface_id(starpu_data_handle_t handle);

/* ---- variable: one element of elemsize bytes ---------------------------------------------- */
struct starpu_variable_interface {
    enum starpu_data_interface_id id;
    uintptr_t ptr;
    uintptr_t dev_handle;
    size_t offset;
    size_t elemsize;
};

void starpu_variable_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, size_t size);
size_t starpu_variable_get_elemsize(starpu_data_handle_t handle);
uintptr_t starpu_variable_get_local_ptr(starpu_data_handle_t handle);

#define STARPU_VARIABLE_GET_PTR(interface) (((struct starpu_variable_interface *)(interface))->ptr)
#define STARPU_VARIABLE_GET_OFFSET(interface) (((struct starpu_variable_interface *)(interface))->offset)
#define STARPU_VARIABLE_GET_ELEMSIZE(interface) (((struct starpu_variable_interface *)(interface))->elemsize)
#define STARPU_VARIABLE_GET_DEV_HANDLE(interface) (((struct starpu_variable_interface *)(interface))->ptr)

/* ---- vector: nx elements of elemsize bytes, contiguous ------------------------------------ */
struct starpu_vector_interface {
    enum starpu_data_interface_id id;
    uintptr_t ptr;
    uintptr_t dev_handle;
    size_t offset;
    uint32_t nx;
    size_t elemsize;
    uint32_t slice_base;
    size_t allocsize;
};

void starpu_vector_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx,
                                 size_t elemsize);
uint32_t starpu_vector_get_nx(starpu_data_handle_t handle);
size_t starpu_vector_get_elemsize(starpu_data_handle_t handle);
uintptr_t starpu_vector_get_local_ptr(starpu_data_handle_t handle);

#define STARPU_VECTOR_GET_PTR(interface) (((struct starpu_vector_interface *)(interface))->ptr)
#define STARPU_VECTOR_GET_DEV_HANDLE(interface) (((struct starpu_vector_interface *)(interface))->dev_handle)
#define STARPU_VECTOR_GET_OFFSET(interface) (((struct starpu_vector_interface *)(interface))->offset)
#define STARPU_VECTOR_GET_NX(interface) (((struct starpu_vector_interface *)(interface))->nx)
#define STARPU_VECTOR_GET_ELEMSIZE(interface) (((struct starpu_vector_interface *)(interface))->elemsize)
#define STARPU_VECTOR_GET_ALLOCSIZE(interface) (((struct starpu_vector_interface *)(interface))->allocsize)
#define STARPU_VECTOR_GET_SLICE_BASE(interface) (((struct starpu_vector_interface *)(interface))->slice_base)

/* ---- matrix: ny rows of nx elements, rows ld elements apart ------------------------------- */
struct starpu_matrix_interface {
    enum starpu_data_interface_id id;
    uintptr_t ptr;
    uintptr_t dev_handle;
    size_t offset;
    uint32_t nx;
    uint32_t ny;
    uint32_t ld;
    size_t elemsize;
    size_t allocsize;
};

void starpu_matrix_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld,
                                 uint32_t nx, uint32_t ny, size_t elemsize);
uint32_t starpu_matrix_get_nx(starpu_data_handle_t handle);
uint32_t starpu_matrix_get_ny(starpu_data_handle_t handle);
uint32_t starpu_matrix_get_local_ld(starpu_data_handle_t handle);
uintptr_t starpu_matrix_get_local_ptr(starpu_data_handle_t handle);
size_t starpu_matrix_get_elemsize(starpu_data_handle_t handle);

#define STARPU_MATRIX_GET_PTR(interface) (((struct starpu_matrix_interface *)(interface))->ptr)
#define STARPU_MATRIX_GET_DEV_HANDLE(interface) (((struct starpu_matrix_interface *)(interface))->dev_handle)
#define STARPU_MATRIX_GET_OFFSET(interface) (((struct starpu_matrix_interface *)(interface))->offset)
#define STARPU_MATRIX_GET_NX(interface) (((struct starpu_matrix_interface *)(interface))->nx)
#define STARPU_MATRIX_GET_NY(interface) (((struct starpu_matrix_interface *)(interface))->ny)
#define STARPU_MATRIX_GET_LD(interface) (((struct starpu_matrix_interface *)(interface))->ld)
#define STARPU_MATRIX_GET_ELEMSIZE(interface) (((struct starpu_matrix_interface *)(interface))->elemsize)
#define STARPU_MATRIX_GET_ALLOCSIZE(interface) (((struct starpu_matrix_interface *)(interface))->allocsize)

/* ---- block: nz planes of ny rows of nx elements; rows ldy, planes ldz elements apart --------- */
struct starpu_block_interface {
    enum starpu_data_interface_id id;
    uintptr_t ptr;
    uintptr_t dev_handle;
    size_t offset;
    uint32_t nx;
    uint32_t ny;
    uint32_t nz;
    uint32_t ldy;
    uint32_t ldz;
    size_t elemsize;
};

void starpu_block_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ldy,
                                uint32_t ldz, uint32_t nx, uint32_t ny, uint32_t nz, size_t elemsize);
uint32_t starpu_block_get_nx(starpu_data_handle_t handle);
uint32_t starpu_block_get_ny(starpu_data_handle_t handle);
uint32_t starpu_block_get_nz(starpu_data_handle_t handle);
uint32_t starpu_block_get_local_ldy(starpu_data_handle_t handle);
uint32_t starpu_block_get_local_ldz(starpu_data_handle_t handle);
uintptr_t starpu_block_get_local_ptr(starpu_data_handle_t handle);
size_t starpu_block_get_elemsize(starpu_data_handle_t handle);

#define STARPU_BLOCK_GET_PTR(interface) (((struct starpu_block_interface *)(interface))->ptr)
#define STARPU_BLOCK_GET_DEV_HANDLE(interface) (((struct starpu_block_interface *)(interface))->dev_handle)
#define STARPU_BLOCK_GET_OFFSET(interface) (((struct starpu_block_interface *)(interface))->offset)
#define STARPU_BLOCK_GET_NX(interface) (((struct starpu_block_interface *)(interface))->nx)
#define STARPU_BLOCK_GET_NY(interface) (((struct starpu_block_interface *)(interface))->ny)
#define STARPU_BLOCK_GET_NZ(interface) (((struct starpu_block_interface *)(interface))->nz)
#define STARPU_BLOCK_GET_LDY(interface) (((struct starpu_block_interface *)(interface))->ldy)
#define STARPU_BLOCK_GET_LDZ(interface) (((struct starpu_block_interface *)(interface))->ldz)
#define STARPU_BLOCK_GET_ELEMSIZE(interface) (((struct starpu_block_interface *)(interface))->elemsize)

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DATA_INTERFACES_H */
