/**
 * \file mpc_libmark.c
 * libmpc_libmark.a: `mpc_cc -shared` links this marker into shared libraries it builds. A
 * privatized program refuses to run with such a library: only the program is copied per
 * rank, so the library's globals would be shared by the ranks (docs/privatization.md).
 */
__attribute__((visibility("default"), used)) const int mpc_library_built_with_mpc_cc = 1;
