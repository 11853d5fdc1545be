/* StarPU 1.3 API on MPC: hashes (StarPU's starpu_hash.h). CRC32C (Castagnoli polynomial
 * 0x1EDC6F41), most significant bit first, without initial or final inversion: the values
 * StarPU computes, so footprints written with them match StarPU's. */
#ifndef MPC_STARPU_HASH_H
#define MPC_STARPU_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The CRC of n bytes at input, continuing inputcrc. */
uint32_t starpu_hash_crc32c_be_n(const void *input, size_t n, uint32_t inputcrc);
/** The CRC of the 4 bytes of input as they lie in memory, continuing inputcrc. */
uint32_t starpu_hash_crc32c_be(uint32_t input, uint32_t inputcrc);
/** The CRC of the characters of str (not its terminating 0), continuing inputcrc. */
uint32_t starpu_hash_crc32c_string(const char *str, uint32_t inputcrc);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_HASH_H */
