/// \file
/// Which sanitizer this translation unit is built with, for gcc (__SANITIZE_*__) and clang
/// (__has_feature): MPC_ASAN and MPC_TSAN are 1 in such builds, undefined otherwise.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define MPC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPC_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define MPC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MPC_TSAN 1
#endif
#endif
