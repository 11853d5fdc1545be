/// \file
/// Async-signal-safe line formatting for fault handlers and fatal errors: no malloc, no stdio,
/// no locks; one write(2) per line so that lines of different threads do not interleave.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpc {

class sig_line {
public:
    sig_line& str(const char* s) noexcept;
    sig_line& dec(long long v) noexcept;
    sig_line& udec(unsigned long long v) noexcept;
    sig_line& hex(std::uintptr_t v) noexcept;  ///< "0x..." form
    sig_line& chr(char c) noexcept;
    /// Writes the line (with a trailing newline) to fd with one write(2).
    void emit(int fd = 2) noexcept;
    const char* c_str() noexcept;

private:
    char buf_[512];
    std::size_t len_ = 0;
};

}  // namespace mpc
