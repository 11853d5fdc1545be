/* StarPU 1.3 API on MPC: helper macros (assertions, return-value checks, attributes) and
 * timing. */
#ifndef MPC_STARPU_UTIL_H
#define MPC_STARPU_UTIL_H

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STARPU_LIKELY(expr) (__builtin_expect(!!(expr), 1))
#define STARPU_UNLIKELY(expr) (__builtin_expect(!!(expr), 0))
#define STARPU_ATTRIBUTE_UNUSED __attribute__((unused))
#define STARPU_ATTRIBUTE_NORETURN __attribute__((noreturn))
#define STARPU_ATTRIBUTE_MALLOC __attribute__((malloc))
#define STARPU_ATTRIBUTE_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#define STARPU_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#define STARPU_ATTRIBUTE_ALIGNED(size) __attribute__((aligned(size)))
#define STARPU_DEPRECATED __attribute__((deprecated))
#else
#define STARPU_LIKELY(expr) (expr)
#define STARPU_UNLIKELY(expr) (expr)
#define STARPU_ATTRIBUTE_UNUSED
#define STARPU_ATTRIBUTE_NORETURN
#define STARPU_ATTRIBUTE_MALLOC
#define STARPU_ATTRIBUTE_WARN_UNUSED_RESULT
#define STARPU_WARN_UNUSED_RESULT
#define STARPU_ATTRIBUTE_ALIGNED(size)
#define STARPU_DEPRECATED
#endif

#define STARPU_MIN(a, b) ((a) < (b) ? (a) : (b))
#define STARPU_MAX(a, b) ((a) < (b) ? (b) : (a))

/* The message arguments are a printf format and its values. They are taken as "..." (not as
 * "msg, ...") so that a call with a format alone is valid ISO C99 (-pedantic). */

/* Aborts with the place of the failure, as StarPU does. */
#define STARPU_ABORT()                                                                   \
    do {                                                                                 \
        fprintf(stderr, "[starpu][abort][%s()@%s:%d]\n", __func__, __FILE__, __LINE__); \
        abort();                                                                         \
    } while (0)

#define STARPU_ABORT_MSG(...)                                                          \
    do {                                                                               \
        fprintf(stderr, "[starpu][abort][%s()@%s:%d] ", __func__, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                                  \
        fputc('\n', stderr);                                                           \
        abort();                                                                       \
    } while (0)

#ifdef STARPU_NO_ASSERT
#define STARPU_ASSERT(x) \
    do {                 \
        if (0) {         \
            (void)(x);   \
        }                \
    } while (0)
#define STARPU_ASSERT_MSG(x, ...) \
    do {                          \
        if (0) {                  \
            (void)(x);            \
        }                         \
    } while (0)
#else
#define STARPU_ASSERT(x)                          \
    do {                                          \
        if (STARPU_UNLIKELY(!(x))) {              \
            STARPU_ABORT_MSG("assertion %s", #x); \
        }                                         \
    } while (0)
#define STARPU_ASSERT_MSG(x, ...)                                                \
    do {                                                                         \
        if (STARPU_UNLIKELY(!(x))) {                                             \
            fprintf(stderr, "[starpu][%s][assert failure] ", __func__);          \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            STARPU_ABORT_MSG("assertion %s", #x);                                \
        }                                                                        \
    } while (0)
#endif

/* Aborts with the error's text when err (0 or a negative errno value) is not 0. */
#define STARPU_CHECK_RETURN_VALUE(err, ...)                                                                \
    do {                                                                                                   \
        int starpu_check_err_ = (err);                                                                     \
        if (STARPU_UNLIKELY(starpu_check_err_ != 0)) {                                                     \
            fprintf(stderr, "[starpu] Unexpected value: <%d:%s> returned for ", starpu_check_err_,        \
                    strerror(-starpu_check_err_));                                                         \
            fprintf(stderr, __VA_ARGS__);                                                                  \
            fputc('\n', stderr);                                                                           \
            STARPU_ABORT();                                                                                \
        }                                                                                                  \
    } while (0)
#define STARPU_CHECK_RETURN_VALUE_IS(err, value, ...)                                                      \
    do {                                                                                                   \
        int starpu_check_err_ = (err);                                                                     \
        if (STARPU_UNLIKELY(starpu_check_err_ != (value))) {                                               \
            fprintf(stderr, "[starpu] Unexpected value: <%d != %d:%s> returned for ", starpu_check_err_,  \
                    (int)(value), strerror(-starpu_check_err_));                                           \
            fprintf(stderr, __VA_ARGS__);                                                                  \
            fputc('\n', stderr);                                                                           \
            STARPU_ABORT();                                                                                \
        }                                                                                                  \
    } while (0)

/** Microseconds since an arbitrary origin (monotonic clock). */
double starpu_timing_now(void);

/* Atomic operations and barriers of StarPU's starpu_util.h (GCC builtins, full barriers). The
 * ADD forms give the new value, OR the old one, as StarPU's. */
#define STARPU_ATOMIC_ADD(ptr, value) (__sync_fetch_and_add((ptr), (value)) + (value))
#define STARPU_ATOMIC_ADDL(ptr, value) STARPU_ATOMIC_ADD(ptr, value)
#define STARPU_ATOMIC_ADD64(ptr, value) STARPU_ATOMIC_ADD(ptr, value)
#define STARPU_ATOMIC_OR(ptr, value) (__sync_fetch_and_or((ptr), (value)))
#define STARPU_ATOMIC_ORL(ptr, value) STARPU_ATOMIC_OR(ptr, value)
#define STARPU_ATOMIC_OR64(ptr, value) STARPU_ATOMIC_OR(ptr, value)
#define STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value) (__sync_bool_compare_and_swap((ptr), (old), (value)))
#define STARPU_BOOL_COMPARE_AND_SWAP32(ptr, old, value) STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_BOOL_COMPARE_AND_SWAP64(ptr, old, value) STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_BOOL_COMPARE_AND_SWAP_PTR(ptr, old, value) STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value) (__sync_val_compare_and_swap((ptr), (old), (value)))
#define STARPU_VAL_COMPARE_AND_SWAP32(ptr, old, value) STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_VAL_COMPARE_AND_SWAP64(ptr, old, value) STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_VAL_COMPARE_AND_SWAP_PTR(ptr, old, value) STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_VAL_EXCHANGE(ptr, value) (__atomic_exchange_n((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_VAL_EXCHANGEL(ptr, value) STARPU_VAL_EXCHANGE(ptr, value)
#define STARPU_VAL_EXCHANGE32(ptr, value) STARPU_VAL_EXCHANGE(ptr, value)
#define STARPU_VAL_EXCHANGE64(ptr, value) STARPU_VAL_EXCHANGE(ptr, value)
#define STARPU_TEST_AND_SET(ptr, value) (__sync_lock_test_and_set((ptr), (value)))
#define STARPU_RELEASE(ptr) (__sync_lock_release((ptr)))
#define STARPU_SYNCHRONIZE() __sync_synchronize()
#define STARPU_RMB() __sync_synchronize()
#define STARPU_WMB() __sync_synchronize()

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_UTIL_H */
