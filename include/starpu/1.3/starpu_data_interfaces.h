/* StarPU 1.3 API on MPC: the variable, vector, matrix, block, CSR, BCSR and COO data interfaces, with
 * StarPU's layouts and accessor macros, and custom interfaces (struct starpu_data_interface_ops).
 * Codelets receive pointers to these structures in buffers[]. Only main memory exists (home
 * node STARPU_MAIN_RAM, or -1: the runtime allocates the memory), so dev_handle equals ptr. */
#ifndef MPC_STARPU_DATA_INTERFACES_H
#define MPC_STARPU_DATA_INTERFACES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
    STARPU_CSR_INTERFACE_ID = 3,
    STARPU_BCSR_INTERFACE_ID = 4,
    STARPU_VARIABLE_INTERFACE_ID = 5,
    STARPU_VOID_INTERFACE_ID = 6,
    STARPU_MULTIFORMAT_INTERFACE_ID = 7,
    STARPU_COO_INTERFACE_ID = 8,
    /** Custom interfaces number theirs from here (starpu_data_interface_get_next_id()). */
    STARPU_MAX_INTERFACE_ID = 9
};

enum starpu_data_interface_id starpu_data_get_interface_id(starpu_data_handle_t handle);

/* ---- custom interfaces ------------------------------------------------------------------------ */

/** Copy methods of an interface (StarPU's layout). With main memory only, starpu_data_cpy is
 * what calls them: ram_to_ram (node 0 to node 0), else any_to_any. */
struct starpu_data_copy_methods {
    int (*can_copy)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node,
                    unsigned handling_node);
    int (*ram_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*ram_to_cuda)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*ram_to_opencl)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*ram_to_mic)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*cuda_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*cuda_to_cuda)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*cuda_to_opencl)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*opencl_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*opencl_to_cuda)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*opencl_to_opencl)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*mic_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*ram_to_mpi_ms)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*mpi_ms_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*mpi_ms_to_mpi_ms)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    /* Asynchronous variants of GPU drivers that do not exist here (as in a StarPU without them). */
    int (*ram_to_cuda_async)();
    int (*cuda_to_ram_async)();
    int (*cuda_to_cuda_async)();
    int (*ram_to_opencl_async)();
    int (*opencl_to_ram_async)();
    int (*opencl_to_opencl_async)();
    int (*ram_to_mpi_ms_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node,
                               void *event);
    int (*mpi_ms_to_ram_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node,
                               void *event);
    int (*mpi_ms_to_mpi_ms_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node,
                                  void *event);
    int (*ram_to_mic_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*mic_to_ram_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
    int (*any_to_any)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node,
                      void *async_data);
};

struct starpu_multiformat_data_interface_ops;

/** An interface of the application's (StarPU's layout). MPC calls: register_data_handle
 * (mandatory; starpu_data_get_interface_on_node(handle, 0) is the interface codelets receive;
 * the disk nodes' interfaces are one scratch structure nobody reads), allocate_data_on_node and free_data_on_node (mandatory: scratch
 * buffers, redux copies, handles registered on node -1), get_size (or get_alloc_size: what an
 * allocation takes, for the memory limit), unregister_data_handle, pack_data and unpack_data
 * (starpu_data_pack/unpack), to_pointer or handle_to_pointer (starpu_data_get_local_ptr),
 * footprint (mixed into the data footprint of the tasks' performance models), copy_methods
 * (ram_to_ram, else any_to_any), compare (starpu_data_cpy) and alloc_compare, else compare
 * (whether a freed scratch buffer or redux copy of another handle of this interface may be
 * reused: without either, such buffers are freed, not cached). The others are accepted and not
 * called by the runtime (display, describe: for the program's own use; alloc_footprint,
 * get_mf_ops). The table must outlive the runtime (cached buffers are freed through it at
 * starpu_shutdown). */
struct starpu_data_interface_ops {
    void (*register_data_handle)(starpu_data_handle_t handle, unsigned home_node, void *data_interface);
    void (*unregister_data_handle)(starpu_data_handle_t handle);
    starpu_ssize_t (*allocate_data_on_node)(void *data_interface, unsigned node);
    void (*free_data_on_node)(void *data_interface, unsigned node);
    void (*init)(void *data_interface);
    const struct starpu_data_copy_methods *copy_methods;
    void *(*handle_to_pointer)(starpu_data_handle_t handle, unsigned node);
    void *(*to_pointer)(void *data_interface, unsigned node);
    int (*pointer_is_inside)(void *data_interface, unsigned node, void *ptr);
    size_t (*get_size)(starpu_data_handle_t handle);
    size_t (*get_alloc_size)(starpu_data_handle_t handle);
    uint32_t (*footprint)(starpu_data_handle_t handle);
    uint32_t (*alloc_footprint)(starpu_data_handle_t handle);
    int (*compare)(void *data_interface_a, void *data_interface_b);
    int (*alloc_compare)(void *data_interface_a, void *data_interface_b);
    void (*display)(starpu_data_handle_t handle, FILE *f);
    starpu_ssize_t (*describe)(void *data_interface, char *buf, size_t size);
    enum starpu_data_interface_id interfaceid;
    size_t interface_size;
    char is_multiformat;
    char dontcache;
    struct starpu_multiformat_data_interface_ops *(*get_mf_ops)(void *data_interface);
    int (*pack_data)(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count);
    int (*unpack_data)(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count);
    char *name;
};

/** Registers data of a custom interface: data_interface (ops->interface_size bytes, filled with
 * the application's pointers) is handed to ops->register_data_handle. home_node is
 * STARPU_MAIN_RAM, or -1 (the runtime allocates the memory with allocate_data_on_node).
 * ops->interfaceid must have been set with starpu_data_interface_get_next_id() (the program
 * stops with a message otherwise, as StarPU asserts). */
void starpu_data_register(starpu_data_handle_t *handleptr, int home_node, void *data_interface,
                          struct starpu_data_interface_ops *ops);
/** A new handle with the interface (shape) of handlesrc and memory of its own, allocated by
 * the runtime at the first use (contents undefined until written). */
void starpu_data_register_same(starpu_data_handle_t *handledst, starpu_data_handle_t handlesrc);
/** The handle's interface on a memory node (node 0: the one codelets receive; others: a
 * scratch structure nobody reads, for register_data_handle loops over STARPU_MAXNODES). */
void *starpu_data_get_interface_on_node(starpu_data_handle_t handle, unsigned memory_node);
/** A new id for a custom interface (STARPU_MAX_INTERFACE_ID, then up). */
int starpu_data_interface_get_next_id(void);
/** The ops of a handle: the application's table for a custom interface, else the built-in
 * interface's (below). */
struct starpu_data_interface_ops *starpu_data_get_interface_ops(starpu_data_handle_t handle);
/** The built-in interfaces' tables: interfaceid, interface_size, name, get_size, footprint (a hash
 * of the shape), compare (same shape), to_pointer, handle_to_pointer, pack_data / unpack_data,
 * describe and display as StarPU writes them. The variable, vector, matrix and block tables
 * also have register_data_handle (node 0), allocate_data_on_node / free_data_on_node (compact
 * memory on node 0) and copy_methods (ram_to_ram, any_to_any within node 0), for programs that
 * call them; starpu_data_register with one of these tables (or a copy with methods of the
 * program's own, as StarPU's tests make) registers the built-in interface, whose data the
 * runtime moves with its own methods. The other built-ins' registration and memory methods
 * are NULL (register such data with its starpu_*_data_register call). */
extern struct starpu_data_interface_ops starpu_interface_variable_ops;
extern struct starpu_data_interface_ops starpu_interface_vector_ops;
extern struct starpu_data_interface_ops starpu_interface_matrix_ops;
extern struct starpu_data_interface_ops starpu_interface_block_ops;
extern struct starpu_data_interface_ops starpu_interface_csr_ops;
extern struct starpu_data_interface_ops starpu_interface_bcsr_ops;
extern struct starpu_data_interface_ops starpu_interface_coo_ops;
extern struct starpu_data_interface_ops starpu_interface_void_ops;
/** Bytes of data the handle describes. */
size_t starpu_data_get_size(starpu_data_handle_t handle);
/** The data's pointer in main memory (custom interfaces: to_pointer or handle_to_pointer). */
void *starpu_data_get_local_ptr(starpu_data_handle_t handle);
void *starpu_data_handle_to_pointer(starpu_data_handle_t handle, unsigned node);
/** The registered handle whose data in main memory starts at ptr, or NULL. A partitioned
 * handle gives way to its children until it is unpartitioned; of two handles on one pointer,
 * the first registered answers (StarPU's rule). It scans the live handles. */
starpu_data_handle_t starpu_data_lookup(const void *ptr);
/** Whether ptr lies in the handle's data on node: 1 or 0 (every built-in interface answers),
 * -1 when a custom interface has no pointer_is_inside method; 0 when the data has no memory
 * on that node yet. */
int starpu_data_pointer_is_inside(starpu_data_handle_t handle, unsigned node, void *ptr);
/** 1 when the handle's data has memory on node (main memory, once made for a handle
 * registered with home node -1), else 0. */
unsigned starpu_data_test_if_allocated_on_node(starpu_data_handle_t handle, unsigned memory_node);
/** Packs the data into a new buffer (*ptr, *count bytes; free with starpu_free_flags(*ptr,
 * *count, 0)); with ptr NULL, only *count. Built-in dense interfaces, and custom interfaces with
 * pack_data. Returns 0, or -ENOSYS when the interface cannot pack. Take the data first (acquire)
 * when tasks may be writing it. */
int starpu_data_pack(starpu_data_handle_t handle, void **ptr, starpu_ssize_t *count);
/** Unpacks a buffer made by starpu_data_pack() into the data, and frees the buffer. */
int starpu_data_unpack(starpu_data_handle_t handle, void *ptr, size_t count);
/** Memory on a node for an interface's allocate_data_on_node (only STARPU_MAIN_RAM exists):
 * 0 when it cannot be had. */
uintptr_t starpu_malloc_on_node(unsigned dst_node, size_t size);
uintptr_t starpu_malloc_on_node_flags(unsigned dst_node, size_t size, int flags);
void starpu_free_on_node(unsigned dst_node, uintptr_t addr, size_t size);
void starpu_free_on_node_flags(unsigned dst_node, uintptr_t addr, size_t size, int flags);
/** The flags starpu_malloc_on_node() and starpu_free_on_node() use on node 0 (the only node
 * they allocate on): STARPU_MALLOC_PINNED by default. Unlike StarPU's default, without
 * STARPU_MALLOC_COUNT: the runtime already counts against the memory limit the handles it
 * allocates, a custom interface's allocate method included. */
void starpu_malloc_on_node_set_default_flags(unsigned node, int flags);

/** Copies for an interface's copy methods (any_to_any receives async_data, to be passed on):
 * size bytes from src + src_offset on src_node to dst + dst_offset on dst_node. Both nodes
 * must be STARPU_MAIN_RAM (the only node); the copy is done when the call returns (0). A bad
 * node is reported and gives -EINVAL. */
int starpu_interface_copy(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                          unsigned dst_node, size_t size, void *async_data);
/** numblocks blocks of blocksize bytes, ld_src (ld_dst) bytes apart; one copy when contiguous. */
int starpu_interface_copy2d(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                            unsigned dst_node, size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst,
                            void *async_data);
/** numblocks2 groups (ld2 apart) of numblocks1 blocks (ld1 apart). */
int starpu_interface_copy3d(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                            unsigned dst_node, size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
                            size_t numblocks2, size_t ld2_src, size_t ld2_dst, void *async_data);
/** numblocks3 groups (ld3 apart) of the 3-D shape above. */
int starpu_interface_copy4d(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
                            unsigned dst_node, size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
                            size_t numblocks2, size_t ld2_src, size_t ld2_dst, size_t numblocks3, size_t ld3_src,
                            size_t ld3_dst, void *async_data);
/** Around a driver's own asynchronous copy: *start gets the time (µs, starpu_timing_now). */
void starpu_interface_start_driver_copy_async(unsigned src_node, unsigned dst_node, double *start);
void starpu_interface_end_driver_copy_async(unsigned src_node, unsigned dst_node, double start);
/** Records a copy for traces: MPC's trace has no transfer events (one memory node), so nothing. */
void starpu_interface_data_copy(unsigned src_node, unsigned dst_node, size_t size);
/** STARPU_MAIN_RAM, or -1 when the handle was registered without memory (home node -1). */
int starpu_data_get_home_node(starpu_data_handle_t handle);
/** Bytes an allocation of the handle takes: the interface's get_alloc_size, else its size
 * (a vector or matrix registered with an allocsize: that). */
size_t starpu_data_get_alloc_size(starpu_data_handle_t handle);

/* ---- variable: one element of elemsize bytes ---------------------------------------------- */
struct starpu_variable_interface {
    enum starpu_data_interface_id id;
    uintptr_t ptr;
    uintptr_t dev_handle;
    size_t offset;
    size_t elemsize;
};

void starpu_variable_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, size_t size);
/** A handle with no data (the void interface): tasks that name it are ordered by its access
 * modes (a critical section, a dependency) and get a buffer pointer they must not use. */
void starpu_void_data_register(starpu_data_handle_t *handle);
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
/** A vector whose allocations take allocsize bytes (>= nx * elemsize); its allocsize. */
void starpu_vector_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx,
                                           size_t elemsize, size_t allocsize);
size_t starpu_vector_get_allocsize(starpu_data_handle_t handle);

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
/** A matrix whose allocations take allocsize bytes; its allocsize. */
void starpu_matrix_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld,
                                           uint32_t nx, uint32_t ny, size_t elemsize, size_t allocsize);
size_t starpu_matrix_get_allocsize(starpu_data_handle_t handle);
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

/* ---- CSR: compressed sparse rows ----------------------------------------------------------- */
struct starpu_csr_interface {
    enum starpu_data_interface_id id;
    uint32_t nnz;        /* non-zero values */
    uint32_t nrow;       /* rows */
    uintptr_t nzval;     /* the values */
    uint32_t *colind;    /* the column of each value */
    uint32_t *rowptr;    /* the index in nzval of each row's first value (nrow + 1 entries) */
    uint32_t firstentry; /* the base of the indices (0 or 1 usually) */
    size_t elemsize;
};

void starpu_csr_data_register(starpu_data_handle_t *handle, int home_node, uint32_t nnz, uint32_t nrow,
                              uintptr_t nzval, uint32_t *colind, uint32_t *rowptr, uint32_t firstentry,
                              size_t elemsize);
uint32_t starpu_csr_get_nnz(starpu_data_handle_t handle);
uint32_t starpu_csr_get_nrow(starpu_data_handle_t handle);
uint32_t starpu_csr_get_firstentry(starpu_data_handle_t handle);
uintptr_t starpu_csr_get_local_nzval(starpu_data_handle_t handle);
uint32_t *starpu_csr_get_local_colind(starpu_data_handle_t handle);
uint32_t *starpu_csr_get_local_rowptr(starpu_data_handle_t handle);
size_t starpu_csr_get_elemsize(starpu_data_handle_t handle);

#define STARPU_CSR_GET_NNZ(interface) (((struct starpu_csr_interface *)(interface))->nnz)
#define STARPU_CSR_GET_NROW(interface) (((struct starpu_csr_interface *)(interface))->nrow)
#define STARPU_CSR_GET_NZVAL(interface) (((struct starpu_csr_interface *)(interface))->nzval)
#define STARPU_CSR_GET_NZVAL_DEV_HANDLE(interface) (((struct starpu_csr_interface *)(interface))->nnz)
#define STARPU_CSR_GET_COLIND(interface) (((struct starpu_csr_interface *)(interface))->colind)
#define STARPU_CSR_GET_COLIND_DEV_HANDLE(interface) (((struct starpu_csr_interface *)(interface))->colind)
#define STARPU_CSR_GET_ROWPTR(interface) (((struct starpu_csr_interface *)(interface))->rowptr)
#define STARPU_CSR_GET_ROWPTR_DEV_HANDLE(interface) (((struct starpu_csr_interface *)(interface))->rowptr)
#define STARPU_CSR_GET_OFFSET 0
#define STARPU_CSR_GET_FIRSTENTRY(interface) (((struct starpu_csr_interface *)(interface))->firstentry)
#define STARPU_CSR_GET_ELEMSIZE(interface) (((struct starpu_csr_interface *)(interface))->elemsize)

/* ---- BCSR: compressed sparse rows of r x c blocks --------------------------------------------- */
struct starpu_bcsr_interface {
    enum starpu_data_interface_id id;
    uint32_t nnz;        /* non-zero blocks */
    uint32_t nrow;       /* rows of blocks */
    uintptr_t nzval;     /* the blocks' values: nnz blocks of r * c elements */
    uint32_t *colind;    /* the block column of each block */
    uint32_t *rowptr;    /* the index in nzval (in blocks) of each block row's first block (nrow + 1) */
    uint32_t firstentry; /* the base of the indices */
    uint32_t r;          /* rows of a block */
    uint32_t c;          /* columns of a block */
    size_t elemsize;
};

void starpu_bcsr_data_register(starpu_data_handle_t *handle, int home_node, uint32_t nnz, uint32_t nrow,
                               uintptr_t nzval, uint32_t *colind, uint32_t *rowptr, uint32_t firstentry, uint32_t r,
                               uint32_t c, size_t elemsize);
uint32_t starpu_bcsr_get_nnz(starpu_data_handle_t handle);
uint32_t starpu_bcsr_get_nrow(starpu_data_handle_t handle);
uint32_t starpu_bcsr_get_firstentry(starpu_data_handle_t handle);
uintptr_t starpu_bcsr_get_local_nzval(starpu_data_handle_t handle);
uint32_t *starpu_bcsr_get_local_colind(starpu_data_handle_t handle);
uint32_t *starpu_bcsr_get_local_rowptr(starpu_data_handle_t handle);
uint32_t starpu_bcsr_get_r(starpu_data_handle_t handle);
uint32_t starpu_bcsr_get_c(starpu_data_handle_t handle);
size_t starpu_bcsr_get_elemsize(starpu_data_handle_t handle);

#define STARPU_BCSR_GET_NNZ(interface) (((struct starpu_bcsr_interface *)(interface))->nnz)
#define STARPU_BCSR_GET_NROW(interface) (((struct starpu_bcsr_interface *)(interface))->nrow)
#define STARPU_BCSR_GET_NZVAL(interface) (((struct starpu_bcsr_interface *)(interface))->nzval)
/* As StarPU 1.3's (which reads nnz): no device handle exists here. */
#define STARPU_BCSR_GET_NZVAL_DEV_HANDLE(interface) (((struct starpu_bcsr_interface *)(interface))->nnz)
#define STARPU_BCSR_GET_COLIND(interface) (((struct starpu_bcsr_interface *)(interface))->colind)
#define STARPU_BCSR_GET_COLIND_DEV_HANDLE(interface) (((struct starpu_bcsr_interface *)(interface))->colind)
#define STARPU_BCSR_GET_ROWPTR(interface) (((struct starpu_bcsr_interface *)(interface))->rowptr)
#define STARPU_BCSR_GET_ROWPTR_DEV_HANDLE(interface) (((struct starpu_bcsr_interface *)(interface))->rowptr)
#define STARPU_BCSR_GET_FIRSTENTRY(interface) (((struct starpu_bcsr_interface *)(interface))->firstentry)
#define STARPU_BCSR_GET_R(interface) (((struct starpu_bcsr_interface *)(interface))->r)
#define STARPU_BCSR_GET_C(interface) (((struct starpu_bcsr_interface *)(interface))->c)
#define STARPU_BCSR_GET_ELEMSIZE(interface) (((struct starpu_bcsr_interface *)(interface))->elemsize)
#define STARPU_BCSR_GET_OFFSET 0

/* ---- COO: coordinate lists --------------------------------------------------------------------- */
struct starpu_coo_interface {
    enum starpu_data_interface_id id;
    uint32_t *columns; /* the column of each value */
    uint32_t *rows;    /* the row of each value */
    uintptr_t values;  /* the values */
    uint32_t nx;       /* columns of the matrix */
    uint32_t ny;       /* rows of the matrix */
    uint32_t n_values;
    size_t elemsize;
};

void starpu_coo_data_register(starpu_data_handle_t *handleptr, int home_node, uint32_t nx, uint32_t ny,
                              uint32_t n_values, uint32_t *columns, uint32_t *rows, uintptr_t values, size_t elemsize);

#define STARPU_COO_GET_COLUMNS(interface) (((struct starpu_coo_interface *)(interface))->columns)
#define STARPU_COO_GET_COLUMNS_DEV_HANDLE(interface) (((struct starpu_coo_interface *)(interface))->columns)
#define STARPU_COO_GET_ROWS(interface) (((struct starpu_coo_interface *)(interface))->rows)
#define STARPU_COO_GET_ROWS_DEV_HANDLE(interface) (((struct starpu_coo_interface *)(interface))->rows)
#define STARPU_COO_GET_VALUES(interface) (((struct starpu_coo_interface *)(interface))->values)
#define STARPU_COO_GET_VALUES_DEV_HANDLE(interface) (((struct starpu_coo_interface *)(interface))->values)
#define STARPU_COO_GET_OFFSET 0
#define STARPU_COO_GET_NX(interface) (((struct starpu_coo_interface *)(interface))->nx)
#define STARPU_COO_GET_NY(interface) (((struct starpu_coo_interface *)(interface))->ny)
#define STARPU_COO_GET_NVALUES(interface) (((struct starpu_coo_interface *)(interface))->n_values)
#define STARPU_COO_GET_ELEMSIZE(interface) (((struct starpu_coo_interface *)(interface))->elemsize)

/* ---- multiformat ------------------------------------------------------------------------------ */

struct starpu_codelet;

/** StarPU's multiformat interface (its layouts): data kept in one format per kind of device
 * (an array of structures on CPUs, a structure of arrays on a GPU...), converted by the
 * codelets given here when a device of another kind needs it. Only CPU workers exist here, so
 * the data is always in CPU format (nobjects elements of cpu_elemsize bytes) and no conversion
 * codelet ever runs; the other formats' fields are kept for the program. */
struct starpu_multiformat_data_interface_ops {
    size_t cpu_elemsize;
    size_t opencl_elemsize;
    struct starpu_codelet *cpu_to_opencl_cl;
    struct starpu_codelet *opencl_to_cpu_cl;
    size_t cuda_elemsize;
    struct starpu_codelet *cpu_to_cuda_cl;
    struct starpu_codelet *cuda_to_cpu_cl;
    size_t mic_elemsize;
    struct starpu_codelet *cpu_to_mic_cl;
    struct starpu_codelet *mic_to_cpu_cl;
};

struct starpu_multiformat_interface {
    enum starpu_data_interface_id id;
    void *cpu_ptr;
    void *cuda_ptr;
    void *opencl_ptr;
    void *mic_ptr;
    uint32_t nx;
    struct starpu_multiformat_data_interface_ops *ops;
};

/** Registers nobjects elements in CPU format at ptr (home STARPU_MAIN_RAM), or memory the
 * runtime makes at the first use (home -1); format_ops must outlive the handle. */
void starpu_multiformat_data_register(starpu_data_handle_t *handle, int home_node, void *ptr, uint32_t nobjects,
                                      struct starpu_multiformat_data_interface_ops *format_ops);

#define STARPU_MULTIFORMAT_GET_CPU_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->cpu_ptr)
#define STARPU_MULTIFORMAT_GET_CUDA_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->cuda_ptr)
#define STARPU_MULTIFORMAT_GET_OPENCL_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->opencl_ptr)
#define STARPU_MULTIFORMAT_GET_MIC_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->mic_ptr)
#define STARPU_MULTIFORMAT_GET_NX(interface) (((struct starpu_multiformat_interface *)(interface))->nx)

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DATA_INTERFACES_H */
