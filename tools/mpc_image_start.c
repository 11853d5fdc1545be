/**
 * \file mpc_image_start.c
 * Start-up code of privatized MPI programs (libmpc_image.a; mpc_cc's default, see
 * docs/privatization.md).
 *
 * mpc_cc links such a program as an executable shared object: position-independent code
 * linked with -shared -Bsymbolic, an .interp section (below) so that the kernel starts it
 * with the dynamic linker like any executable, and `mpc_image_entry` as its entry point.
 *
 * When it runs, the dynamic linker maps it once (the "host" copy) with its libraries and
 * jumps to mpc_image_entry. The host copy's own code never runs: its constructors are
 * switched off (the entry sets DT_INIT_ARRAYSZ and DT_FINI_ARRAYSZ of its dynamic section to
 * 0 before glibc's __libc_start_main would call them), and its main is not called. Instead
 * mpc_mpi_launch_image() (libmpc) maps one private copy of the program per MPI rank, runs that
 * copy's constructors, main and destructors in the rank's user-level thread, so every rank
 * has its own globals, statics and thread-locals.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* The dynamic linker: a shared object with this section is executable. */
__attribute__((section(".interp"), used)) static const char mpc_interp[] = "/lib64/ld-linux-x86-64.so.2";

/* Markers mpc_run looks for: an MPI program built with mpc_cc, privatized. */
__attribute__((visibility("default"), used)) int mpc_program_built_with_mpc_cc = 1;
__attribute__((visibility("default"), used)) int mpc_program_privatized = 1;

/* libmpc: runs a private copy of this program per rank; returns the job's exit status. */
extern int mpc_mpi_launch_image(int argc, char** argv, char** envp);

extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

__attribute__((visibility("hidden"), used)) int mpc_image_host_main(int argc, char** argv, char** envp) {
    return mpc_mpi_launch_image(argc, argv, envp);
}

static int relro_of_main(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size;
    uintptr_t* range = (uintptr_t*)data;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            range[0] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            range[1] = range[0] + info->dlpi_phdr[i].p_memsz;
        }
    }
    return 1; /* the first object is the program itself */
}

static void mpc_image_fail(const char* what) {
    static const char prefix[] = "mpc: fatal: start-up of the privatized program: ";
    ssize_t r = write(2, prefix, sizeof prefix - 1);
    for (const char* p = what; *p != '\0'; ++p) {
        r = write(2, p, 1);
    }
    r = write(2, "\n", 1);
    (void)r;
    _exit(127);
}

/* Called by mpc_image_entry before __libc_start_main: the host copy's constructors and
 * destructors must not run (each rank runs those of its own copy). */
__attribute__((visibility("hidden"), used)) void mpc_image_neutralize_host(void) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    size_t n = 0;
    while (_DYNAMIC[n].d_tag != DT_NULL) {
        ++n;
    }
    uintptr_t lo = (uintptr_t)_DYNAMIC & ~(page - 1);
    uintptr_t hi = ((uintptr_t)(_DYNAMIC + n + 1) + page - 1) & ~(page - 1);
    uintptr_t relro[2] = {0, 0};
    dl_iterate_phdr(relro_of_main, relro);
    if (mprotect((void*)lo, hi - lo, PROT_READ | PROT_WRITE) != 0) {
        mpc_image_fail("cannot make the dynamic section writable");
    }
    for (size_t i = 0; i < n; ++i) {
        if (_DYNAMIC[i].d_tag == DT_INIT_ARRAYSZ || _DYNAMIC[i].d_tag == DT_FINI_ARRAYSZ ||
            _DYNAMIC[i].d_tag == DT_PREINIT_ARRAYSZ) {
            _DYNAMIC[i].d_un.d_val = 0;
        }
    }
    /* Back to read-only where the dynamic linker had made it so (RELRO). */
    uintptr_t rlo = relro[0] & ~(page - 1), rhi = relro[1] & ~(page - 1);
    if (rhi > rlo && lo >= rlo && hi <= rhi) {
        if (mprotect((void*)lo, hi - lo, PROT_READ) != 0) {
            mpc_image_fail("cannot protect the dynamic section again");
        }
    }
}

/* The entry point, as crt1.o's _start, plus the call above. */
__asm__(".text\n"
        ".globl mpc_image_entry\n"
        ".type mpc_image_entry, @function\n"
        "mpc_image_entry:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined rip\n"
        "  xorl %ebp, %ebp\n"
        "  movq %rdx, %r12\n" /* rtld_fini */
        "  movq %rsp, %r13\n" /* argc, argv..., envp..., auxv */
        "  andq $-16, %rsp\n"
        "  call mpc_image_neutralize_host\n"
        "  movq %r12, %r9\n"
        "  movq (%r13), %rsi\n"
        "  leaq 8(%r13), %rdx\n"
        "  xorl %r8d, %r8d\n"
        "  xorl %ecx, %ecx\n"
        "  pushq %rax\n"
        "  pushq %rsp\n"
        "  leaq mpc_image_host_main(%rip), %rdi\n"
        "  call *__libc_start_main@GOTPCREL(%rip)\n"
        "  hlt\n"
        "  .cfi_endproc\n"
        ".size mpc_image_entry, .-mpc_image_entry\n");
