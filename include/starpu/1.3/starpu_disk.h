/* StarPU 1.3 API on MPC's task-graph runtime: out-of-core storage (disk memory nodes).
 *
 * A disk registered with starpu_disk_register() is a memory node (1, 2, ... in registration
 * order; STARPU_DISK_RAM for starpu_node_get_kind). Two uses, as in StarPU:
 *  - Eviction: when the memory limit (STARPU_LIMIT_CPU_MEM and its NUMA forms) is reached, the
 *    runtime writes the main-memory copies of idle handles whose memory it made (registered on
 *    node -1, or on a disk) to a disk, least recently used first, and frees them; the next task
 *    or acquisition naming such a handle reads it back. Handles the application gave memory
 *    for are never evicted (their memory is the application's), nor partitioned handles and
 *    their children, handles with reduction methods, or handles whose ooc flag is off
 *    (starpu_data_set_ooc_flag).
 *  - Home on disk: a variable, vector, matrix or block registered on a disk node with the
 *    object of starpu_disk_open() as its pointer lives in that object; tasks get a
 *    main-memory copy read from it, and unregistering writes a modified copy back.
 * Transfers go through the interface's pack/unpack (starpu_data_pack), so custom interfaces
 * with pack_data/unpack_data can be evicted too; a custom interface cannot have its home on a
 * disk (starpu_data_register stops the program with a message). Transfers are synchronous:
 * the asynchronous methods of the ops are not called (the built-in backends leave them NULL).
 * Backends: stdio, unistd and unistd with O_DIRECT (on a file system without O_DIRECT, such as
 * tmpfs, the same files without it). HDF5 and LevelDB backends are not provided
 * (STARPU_HAVE_HDF5 / STARPU_HAVE_LEVELDB stay undefined), nor copies between two disks
 * (a disk-to-disk acquisition holds the main-memory copy). STARPU_DISK_SWAP (a directory),
 * STARPU_DISK_SWAP_BACKEND (unistd, unistd_o_direct, stdio) and STARPU_DISK_SWAP_SIZE (MiB)
 * register a swap disk at starpu_init, as in StarPU. */
#ifndef MPC_STARPU_DISK_H
#define MPC_STARPU_DISK_H

#include <sys/types.h>

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The methods of a disk backend, StarPU 1.3's layout. */
struct starpu_disk_ops {
    /* Connects the disk at `parameter` (the built-in backends: a directory, made if missing)
     * of `size` bytes; returns the base handed to every other method, or NULL. */
    void *(*plug)(void *parameter, starpu_ssize_t size);
    void (*unplug)(void *base);
    /* Checks (and, in StarPU, measures) the disk; returns 1 when it can be used. */
    int (*bandwidth)(unsigned node, void *base);
    /* A new object of `size` bytes, or NULL. */
    void *(*alloc)(void *base, size_t size);
    void (*free)(void *base, void *obj, size_t size);
    /* An existing object at `pos` (the built-in backends: a file name in the directory). */
    void *(*open)(void *base, void *pos, size_t size);
    void (*close)(void *base, void *obj, size_t size);
    /* Returns the bytes read. */
    int (*read)(void *base, void *obj, void *buf, off_t offset, size_t size);
    /* Returns 0 on success. */
    int (*write)(void *base, void *obj, const void *buf, off_t offset, size_t size);
    /* The whole object in a new buffer (starpu_malloc_flags) and its size; optional. */
    int (*full_read)(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node);
    /* Writes `size` bytes at offset 0 and truncates the object to them; optional. */
    int (*full_write)(void *base, void *obj, void *ptr, size_t size);
    /* Asynchronous methods: accepted, never called (transfers are synchronous). */
    void *(*async_write)(void *base, void *obj, void *buf, off_t offset, size_t size);
    void *(*async_read)(void *base, void *obj, void *buf, off_t offset, size_t size);
    void *(*async_full_read)(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node);
    void *(*async_full_write)(void *base, void *obj, void *ptr, size_t size);
    void *(*copy)(void *base_src, void *obj_src, off_t offset_src, void *base_dst, void *obj_dst, off_t offset_dst,
                  size_t size);
    void (*wait_request)(void *async_channel);
    int (*test_request)(void *async_channel);
    void (*free_request)(void *async_channel);
};

/* One file per object in the directory given to plug: with stdio (FILE *), with read/write,
 * and with read/write on O_DIRECT descriptors (aligned transfers; others through a plain
 * descriptor on the same file). */
extern struct starpu_disk_ops starpu_disk_stdio_ops;
extern struct starpu_disk_ops starpu_disk_unistd_ops;
extern struct starpu_disk_ops starpu_disk_unistd_o_direct_ops;

/* Registers a disk of `size` bytes (at least STARPU_DISK_SIZE_MIN; negative: no limit) after
 * starpu_init; returns its memory node, -ENOENT when the backend cannot use `parameter` (plug
 * or bandwidth fails), -EINVAL for a bad argument or when STARPU_MAXNODES - 1 disks exist.
 * The disks go at starpu_shutdown. */
int starpu_disk_register(struct starpu_disk_ops *func, void *parameter, starpu_ssize_t size);
/* The backend's object at `pos` on disk `node` (NULL, logged, on a bad node). */
void *starpu_disk_open(unsigned node, void *pos, size_t size);
void starpu_disk_close(unsigned node, void *obj, size_t size);

#define STARPU_DISK_SIZE_MIN (16 * 1024 * 1024)

/* The node of the swap disk STARPU_DISK_SWAP registered at starpu_init, else -1. Eviction
 * goes to it first, then to the other disks. */
extern int starpu_disk_swap_node;

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_DISK_H */
