#include "lib/sigsafe.hpp"

#include <unistd.h>

namespace mpc {

sig_line& sig_line::chr(char c) noexcept {
    if (len_ + 1 < sizeof(buf_)) {
        buf_[len_++] = c;
    }
    return *this;
}

sig_line& sig_line::str(const char* s) noexcept {
    if (s == nullptr) {
        s = "(null)";
    }
    while (*s != '\0') {
        chr(*s++);
    }
    return *this;
}

sig_line& sig_line::udec(unsigned long long v) noexcept {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        chr(tmp[--n]);
    }
    return *this;
}

sig_line& sig_line::dec(long long v) noexcept {
    if (v < 0) {
        chr('-');
        return udec(0ULL - static_cast<unsigned long long>(v));
    }
    return udec(static_cast<unsigned long long>(v));
}

sig_line& sig_line::hex(std::uintptr_t v) noexcept {
    static const char digits[] = "0123456789abcdef";
    char tmp[2 * sizeof(v)];
    int n = 0;
    do {
        tmp[n++] = digits[v & 0xf];
        v >>= 4;
    } while (v != 0);
    str("0x");
    while (n > 0) {
        chr(tmp[--n]);
    }
    return *this;
}

const char* sig_line::c_str() noexcept {
    buf_[len_] = '\0';
    return buf_;
}

void sig_line::emit(int fd) noexcept {
    if (len_ == 0 || buf_[len_ - 1] != '\n') {
        if (len_ + 1 >= sizeof(buf_)) {
            len_ = sizeof(buf_) - 2;
        }
        buf_[len_++] = '\n';
    }
    std::size_t off = 0;
    while (off < len_) {
        ssize_t w = ::write(fd, buf_ + off, len_ - off);
        if (w <= 0) {
            break;
        }
        off += static_cast<std::size_t>(w);
    }
}

}  // namespace mpc
