/* StarPU 1.3 API on MPC: helper macros (assertions, return-value checks, attributes) and
 * timing. */
#ifndef MPC_STARPU_UTIL_H
#define MPC_STARPU_UTIL_H

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starpu_config.h"

#ifdef __GLIBC__
#include <execinfo.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** True when GCC (or a compiler that says it is GCC) is version maj.min or later. */
#if defined(__GNUC__) && defined(__GNUC_MINOR__)
#define STARPU_GNUC_PREREQ(maj, min) ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((maj) << 16) + (min))
#else
#define STARPU_GNUC_PREREQ(maj, min) 0
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
#define STARPU_ATTRIBUTE_INTERNAL __attribute__((visibility("internal")))
#define STARPU_ATTRIBUTE_PURE __attribute__((pure))
#define STARPU_ATTRIBUTE_FORMAT(type, string, first) __attribute__((format(type, string, first)))
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
#define STARPU_ATTRIBUTE_INTERNAL
#define STARPU_ATTRIBUTE_PURE
#define STARPU_ATTRIBUTE_FORMAT(type, string, first)
#endif

#if STARPU_GNUC_PREREQ(4, 3)
#define STARPU_ATTRIBUTE_ALLOC_SIZE(size) __attribute__((alloc_size(size)))
#define STARPU_ATTRIBUTE_CALLOC_SIZE(num, size) __attribute__((alloc_size(num, size)))
#else
#define STARPU_ATTRIBUTE_ALLOC_SIZE(size)
#define STARPU_ATTRIBUTE_CALLOC_SIZE(num, size)
#endif

/* inline where the language has it (C++, C99), the GNU spelling otherwise. */
#if defined(__cplusplus)
#define STARPU_INLINE inline
#else
#define STARPU_INLINE __inline__
#endif

/* A pointer value that no object has, for fields that must not be used any more (StarPU's
 * starpu_helper.h, which includes this file). */
#define STARPU_POISON_PTR ((void *)0xdeadbeef)

/* The cache line of the target, as StarPU sizes it (the largest when it does not know). */
#if defined(__i386__) || defined(__x86_64__)
#define STARPU_CACHELINE_SIZE 64
#elif defined(__ppc__) || defined(__ppc64__) || defined(__ia64__)
#define STARPU_CACHELINE_SIZE 128
#elif defined(__s390__) || defined(__s390x__)
#define STARPU_CACHELINE_SIZE 256
#else
#define STARPU_CACHELINE_SIZE 1024
#endif

/* The calling stack, at most STARPU_BACKTRACE_LENGTH frames, to the standard error (glibc's
 * backtrace(); nothing elsewhere). StarPU's aborts print it; MPC's print the place alone. */
#define STARPU_BACKTRACE_LENGTH 32
#ifdef __GLIBC__
#define STARPU_DUMP_BACKTRACE()                                                     \
    do {                                                                            \
        void *starpu_bt_frames_[STARPU_BACKTRACE_LENGTH];                           \
        int starpu_bt_n_ = backtrace(starpu_bt_frames_, STARPU_BACKTRACE_LENGTH);   \
        backtrace_symbols_fd(starpu_bt_frames_, starpu_bt_n_, 2);                   \
    } while (0)
#else
#define STARPU_DUMP_BACKTRACE() \
    do {                        \
    } while (0)
#endif

/* SimGrid's model-checker assertion: MPC does not run under SimGrid, it expands to nothing. */
#define STARPU_SIMGRID_ASSERT(x)

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

/* starpu_strerror_r(errnum, buf, buflen): errnum's text in buf (cut to buflen - 1 characters,
 * always ended by a NUL when buflen > 0), whichever strerror_r the C library declares in this
 * compilation (GNU's returns a string, POSIX's fills buf; strict ISO C has none: strerror's
 * text, copied). A statement, as StarPU's. */
static __inline__ void mpc_starpu_strerror_r_(int errnum, char *buf, size_t buflen) {
#if defined(__GLIBC__) && defined(__USE_GNU)
    const char *text = buflen > 0 ? strerror_r(errnum, buf, buflen) : buf;
#elif defined(__USE_XOPEN2K) || !defined(__GLIBC__)
    const char *text = buf;
    if (buflen > 0 && strerror_r(errnum, buf, buflen) != 0) {
        buf[buflen - 1] = '\0'; /* ERANGE: cut; EINVAL: the library's "Unknown error" text */
    }
#else
    const char *text = strerror(errnum);
#endif
    if (buflen > 0 && text != buf) {
        strncpy(buf, text, buflen - 1);
        buf[buflen - 1] = '\0';
    }
}
#define starpu_strerror_r(errnum, buf, buflen) mpc_starpu_strerror_r_((errnum), (buf), (buflen))

/** Microseconds since an arbitrary origin (monotonic clock). */
double starpu_timing_now(void);

/* StarPU's compare-and-exchange and exchange on 32-bit, long and 64-bit words: each gives the
 * value the word held before (the exchange happened when it equals old). StarPU writes them in
 * x86 assembly and marks them internal ("use the STARPU_* macros"); GCC's builtins here. */
static __inline__ unsigned _starpu_cmpxchg(unsigned *ptr, unsigned old, unsigned next) {
    return __sync_val_compare_and_swap(ptr, old, next);
}
static __inline__ unsigned _starpu_xchg(unsigned *ptr, unsigned next) {
    return __atomic_exchange_n(ptr, next, __ATOMIC_SEQ_CST);
}
static __inline__ uint32_t _starpu_cmpxchg32(uint32_t *ptr, uint32_t old, uint32_t next) {
    return __sync_val_compare_and_swap(ptr, old, next);
}
static __inline__ uint32_t _starpu_xchg32(uint32_t *ptr, uint32_t next) {
    return __atomic_exchange_n(ptr, next, __ATOMIC_SEQ_CST);
}
static __inline__ unsigned long _starpu_cmpxchgl(unsigned long *ptr, unsigned long old, unsigned long next) {
    return __sync_val_compare_and_swap(ptr, old, next);
}
static __inline__ unsigned long _starpu_xchgl(unsigned long *ptr, unsigned long next) {
    return __atomic_exchange_n(ptr, next, __ATOMIC_SEQ_CST);
}
static __inline__ uint64_t _starpu_cmpxchg64(uint64_t *ptr, uint64_t old, uint64_t next) {
    return __sync_val_compare_and_swap(ptr, old, next);
}
static __inline__ uint64_t _starpu_xchg64(uint64_t *ptr, uint64_t next) {
    return __atomic_exchange_n(ptr, next, __ATOMIC_SEQ_CST);
}
#define STARPU_HAVE_CMPXCHG
#define STARPU_HAVE_XCHG
#define STARPU_HAVE_CMPXCHG32
#define STARPU_HAVE_XCHG32
#define STARPU_HAVE_CMPXCHGL
#define STARPU_HAVE_XCHGL
#define STARPU_HAVE_CMPXCHG64
#define STARPU_HAVE_XCHG64

/* starpu_atomic_add*, starpu_atomic_or*: atomic read-modify-write giving the NEW value (both:
 * unlike STARPU_ATOMIC_OR, which gives the old one). StarPU defines them only where the __sync
 * builtins are missing (STARPU_ATOMIC_* then call them); they are always here. */
static __inline__ unsigned starpu_atomic_add(unsigned *ptr, unsigned value) {
    return __sync_add_and_fetch(ptr, value);
}
static __inline__ unsigned long starpu_atomic_addl(unsigned long *ptr, unsigned long value) {
    return __sync_add_and_fetch(ptr, value);
}
static __inline__ uint64_t starpu_atomic_add64(uint64_t *ptr, uint64_t value) {
    return __sync_add_and_fetch(ptr, value);
}
static __inline__ unsigned starpu_atomic_or(unsigned *ptr, unsigned value) {
    return __sync_or_and_fetch(ptr, value);
}
static __inline__ unsigned long starpu_atomic_orl(unsigned long *ptr, unsigned long value) {
    return __sync_or_and_fetch(ptr, value);
}
static __inline__ uint64_t starpu_atomic_or64(uint64_t *ptr, uint64_t value) {
    return __sync_or_and_fetch(ptr, value);
}

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
