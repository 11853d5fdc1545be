/// \file
/// Only in libmpc_malloc.so, which links the C++ runtime pieces it needs statically: our own
/// terminate handler, so that the linker does not pull libstdc++'s verbose one and, with it,
/// the whole C++ demangler (about 60 KiB of code that a preloaded program would map for
/// nothing). std::terminate() can only be reached from this library through a broken
/// exception (an allocator bug); the message says so and the process aborts.
#include <unistd.h>

#include <cstdlib>

namespace __gnu_cxx {
void __verbose_terminate_handler();
void __verbose_terminate_handler() {
    static const char msg[] = "mpc: fatal: std::terminate() called inside libmpc_malloc.so\n";
    (void)!::write(2, msg, sizeof msg - 1);
    std::abort();
}
}  // namespace __gnu_cxx
