/**
 * \file mpc_start.c
 * Start-up code of MPI programs built with mpc_cc / mpc_cxx (libmpc_start.a).
 *
 * How main() becomes one ULT per rank: the C run-time's `_start` (crt1.o) calls
 * `__libc_start_main(main, argc, argv, ...)`. This file defines `__libc_start_main` in the
 * executable itself, so the static linker binds `_start`'s call to it rather than to glibc's.
 * It finds glibc's own with dlsym(RTLD_NEXT) and calls it with `mpc_start_main` in place of
 * `main`: glibc then initialises as usual (constructors of the program run once, on the initial
 * thread), calls `mpc_start_main`, which hands the real `main` to `mpc_mpi_launch()` (libmpc): it
 * starts the engine, runs `main` once per rank as a ULT, joins them and returns the job's exit
 * status, which glibc passes to exit() (destructors and atexit handlers run once).
 *
 * The archive is linked with --whole-archive (mpc_cc, mpc_add_mpi_test). A plain archive would
 * do as well: `_start` leaves `__libc_start_main` undefined until libc.so, which the compiler
 * driver always puts last, so the linker pulls this object in on its own; FindMPI-based builds
 * rely on that, since CMake moves link flags such as --whole-archive away from the libraries.
 *
 * `mpc_program_built_with_mpc_cc` marks the executable (mpc_run refuses programs without it);
 * mpc_cc links with --export-dynamic, so it is in .dynsym even after `strip`.
 *
 * Not supported: static executables (-static, -static-pie): glibc's own definition would clash.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

typedef int (*mpc_main_fn)(int, char**, char**);
typedef int (*mpc_libc_start_main_fn)(mpc_main_fn main, int argc, char** argv, void (*init)(void), void (*fini)(void),
                                      void (*rtld_fini)(void), void* stack_end);

/* Implemented by libmpc (mpi_compat): runs main once per rank, returns the job's exit status. */
extern int mpc_mpi_launch(mpc_main_fn main_fn, int argc, char** argv, char** envp);

/* The marker mpc_run looks for in the executable's symbol tables. */
__attribute__((visibility("default"), used)) int mpc_program_built_with_mpc_cc = 1;

static mpc_main_fn mpc_user_main;

static int mpc_start_main(int argc, char** argv, char** envp) {
    return mpc_mpi_launch(mpc_user_main, argc, argv, envp);
}

static void mpc_start_fail(const char* what) {
    static const char prefix[] = "mpc: fatal: start-up: cannot find glibc's __libc_start_main: ";
    ssize_t r = write(2, prefix, sizeof prefix - 1);
    r = write(2, what, strlen(what));
    r = write(2, "\n", 1);
    (void)r;
    _exit(127);
}

__attribute__((visibility("default"))) int __libc_start_main(mpc_main_fn main_fn, int argc, char** argv,
                                                             void (*init)(void), void (*fini)(void),
                                                             void (*rtld_fini)(void), void* stack_end) {
    mpc_libc_start_main_fn real = (mpc_libc_start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    if (real == NULL) {
        const char* err = dlerror();
        mpc_start_fail(err != NULL ? err : "not found");
    }
    mpc_user_main = main_fn;
    return real(mpc_start_main, argc, argv, init, fini, rtld_fini, stack_end);
}
